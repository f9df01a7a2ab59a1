// SPDX-License-Identifier: MIT
/* The shared helpers: cursor bounds, LEB128, options checks, errors. */
#include <errno.h>

#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cursor.h"
#include "common/fileid.h"
#include "common/gzip.h"
#include "common/internal.h"
#include "test.h"

TEST(cursor_bounds)
{
	const uint8_t buf[] = { 1, 2, 3, 4, 5 };
	struct sfp_cursor c;
	uint32_t v32 = 0;
	uint16_t v16 = 0;
	uint8_t v8 = 0;

	sfp_cursor_init(&c, buf, sizeof(buf), false);
	ASSERT_OK(sfp_cursor_u32(&c, &v32));
	ASSERT_EQ(v32, 0x04030201);
	ASSERT_ERR(sfp_cursor_u16(&c, &v16), -EBADMSG);
	ASSERT_EQ(sfp_cursor_off(&c), 4);	/* a failed read does not move */
	ASSERT_OK(sfp_cursor_u8(&c, &v8));
	ASSERT_EQ(v8, 5);
	ASSERT_ERR(sfp_cursor_u8(&c, &v8), -EBADMSG);
	ASSERT_ERR(sfp_cursor_seek(&c, 6), -EBADMSG);
	ASSERT_OK(sfp_cursor_seek(&c, 5));
}

TEST(cursor_swap)
{
	const uint8_t buf[] = { 0xde, 0xe2, 0, 0, 0, 1 };
	struct sfp_cursor c;
	uint16_t m = 0;
	uint32_t v = 0;

	sfp_cursor_init(&c, buf, sizeof(buf), true);
	ASSERT_OK(sfp_cursor_u16(&c, &m));
	ASSERT_EQ(m, 0xdee2);
	ASSERT_OK(sfp_cursor_u32(&c, &v));
	ASSERT_EQ(v, 1);
}

TEST(cursor_leb128)
{
	const uint8_t u[] = { 0xe5, 0x8e, 0x26 };		/* 624485 */
	const uint8_t s[] = { 0xc0, 0xbb, 0x78 };		/* -123456 */
	const uint8_t bad[] = { 0x80, 0x80 };			/* runs off */
	const uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0xff, 0xff, 0xff, 0x7f };	/* > 64 bits */
	struct sfp_cursor c;
	uint64_t uv = 0;
	int64_t sv = 0;

	sfp_cursor_init(&c, u, sizeof(u), false);
	ASSERT_OK(sfp_cursor_uleb(&c, &uv));
	ASSERT_EQ(uv, 624485);
	sfp_cursor_init(&c, s, sizeof(s), false);
	ASSERT_OK(sfp_cursor_sleb(&c, &sv));
	ASSERT_EQ(sv, -123456);
	sfp_cursor_init(&c, bad, sizeof(bad), false);
	ASSERT_ERR(sfp_cursor_uleb(&c, &uv), -EBADMSG);
	sfp_cursor_init(&c, big, sizeof(big), false);
	ASSERT_ERR(sfp_cursor_uleb(&c, &uv), -EBADMSG);
}

struct demo_opts {
	size_t sz;
	int a;
	long b;
	size_t :0;
};
#define demo_opts__last_field b

TEST(opts_size_versioning)
{
	struct {
		struct demo_opts o;
		long newer;	/* a field a newer caller knows */
	} big = { { .sz = sizeof(big) }, 0 };
	SFP_OPTS(demo_opts, o, .a = 3);

	ASSERT_TRUE(SFP_OPTS_VALID(&o, demo_opts));
	ASSERT_EQ(SFP_OPTS_GET(&o, demo_opts, a, 7), 3);
	ASSERT_TRUE(SFP_OPTS_VALID(&big.o, demo_opts));
	big.newer = 1;
	ASSERT_FALSE(SFP_OPTS_VALID(&big.o, demo_opts));
	o.sz = offsetof(struct demo_opts, b);	/* an older, shorter caller */
	ASSERT_EQ(SFP_OPTS_GET(&o, demo_opts, b, 42), 42);
	ASSERT_EQ(SFP_OPTS_GET((struct demo_opts *)NULL, demo_opts, a, 9), 9);
}

TEST(strerror_meanings)
{
	ASSERT_STREQ(sfp_strerror(-EBADMSG), "corrupt input");
	ASSERT_STREQ(sfp_strerror(-ENOENT),
		     "no entry (no information for this address, or not found)");
	ASSERT_NOT_NULL(sfp_strerror(-12345));
}

/* The identity of a mapped file (common/fileid.h): build-ids decide when
 * both have one, paths never do then; without build-ids the path with
 * the kernel's (dev, ino) and the mount namespace. */
TEST(file_id_rule)
{
	struct sfp_file_id a = { .path = "/srv/app/server" };
	struct sfp_file_id b = { .path = "/srv/app/server" };
	struct sfp_file_id c = { .path = "/opt/other/name" };
	char buf[SFP_FILE_ID_SHORT];

	/* no build-ids, nothing else known: the path decides */
	ASSERT_TRUE(sfp_file_id_same(&a, &b));
	ASSERT_FALSE(sfp_file_id_same(&a, &c));
	/* two containers' files at one path: other inode or namespace */
	a.dev = b.dev = 0x801;
	a.ino = 100;
	b.ino = 200;
	ASSERT_FALSE(sfp_file_id_same(&a, &b));
	b.ino = 100;
	ASSERT_TRUE(sfp_file_id_same(&a, &b));
	a.mntns = 4026531841u;
	b.mntns = 4026532999u;
	ASSERT_FALSE(sfp_file_id_same(&a, &b));
	b.mntns = a.mntns;
	ASSERT_TRUE(sfp_file_id_same(&a, &b));
	ASSERT_EQ(sfp_file_id_hash(&a), sfp_file_id_hash(&b));
	/* "not known" matches only "not known" */
	b.dev = 0;
	ASSERT_FALSE(sfp_file_id_same(&a, &b));
	b.dev = a.dev;
	/* one build-id known, the other not: not the same */
	a.build_id_len = 20;
	memset(a.build_id, 0xab, 20);
	ASSERT_FALSE(sfp_file_id_same(&a, &b));
	ASSERT_FALSE(sfp_file_id_same(&b, &a));
	/* equal build-ids at different paths, inodes, namespaces: one file */
	c.build_id_len = 20;
	memset(c.build_id, 0xab, 20);
	c.ino = 7;
	ASSERT_TRUE(sfp_file_id_same(&a, &c));
	ASSERT_EQ(sfp_file_id_hash(&a), sfp_file_id_hash(&c));
	/* the same path and inode with other build-ids: two files */
	b.build_id_len = 20;
	memset(b.build_id, 0xab, 20);
	b.build_id[19] = 0xac;
	ASSERT_FALSE(sfp_file_id_same(&a, &b));
	/* a 20-byte and an 8-byte id sharing a prefix differ */
	c.build_id_len = 8;
	ASSERT_FALSE(sfp_file_id_same(&a, &c));
	/* the short forms outputs print */
	a.build_id[0] = 0x3f;
	a.build_id[1] = 0x2a;
	ASSERT_STREQ(sfp_file_id_short(&a, buf, sizeof(buf)), "3f2aabab");
	a.build_id_len = 0;
	a.dev = makedev(8, 1);
	a.ino = 0x4a2f;
	ASSERT_STREQ(sfp_file_id_short(&a, buf, sizeof(buf)), "inode 8:1:4a2f");
	a.dev = a.ino = 0;
	ASSERT_STREQ(sfp_file_id_short(&a, buf, sizeof(buf)), "");
	/* our own mount namespace is readable; a pid that cannot exist not */
	ASSERT_TRUE(sfp_proc_mntns(getpid()) != 0);
	ASSERT_EQ(sfp_proc_mntns(-5), 0);
}

/*
 * gzip both ways, and what sfp_gunzip() must refuse: a member cut short,
 * bytes that are not gzip, and one that unpacks past the caller's limit
 * (a 64 KiB run of zeros, limited to 1000 bytes, stops at the limit).
 */
TEST(gzip_round_trip_and_limits)
{
	static unsigned char zeros[65536];
	const char text[] = "sfprof gzip round trip, sfprof gzip round trip";
	void *gz = NULL, *back = NULL;
	size_t gz_len = 0, back_len = 0;

	if (!ASSERT_OK(sfp_gzip(text, sizeof(text), &gz, &gz_len)))
		return;
	ASSERT_TRUE(sfp_is_gzip(gz, gz_len));
	ASSERT_FALSE(sfp_is_gzip(text, sizeof(text)));
	if (ASSERT_OK(sfp_gunzip(gz, gz_len, 1 << 20, &back, &back_len))) {
		ASSERT_EQ(back_len, sizeof(text));
		ASSERT_TRUE(!memcmp(back, text, sizeof(text)));
	}
	free(back);
	back = NULL;
	ASSERT_EQ(sfp_gunzip(gz, gz_len - 9, 1 << 20, &back, &back_len),
		  -EBADMSG);
	ASSERT_TRUE(back == NULL);
	ASSERT_EQ(sfp_gunzip(text, sizeof(text), 1 << 20, &back, &back_len),
		  -EBADMSG);
	/* exactly at the limit is fine; one byte under it is a bomb */
	ASSERT_OK(sfp_gunzip(gz, gz_len, sizeof(text), &back, &back_len));
	free(back);
	back = NULL;
	ASSERT_EQ(sfp_gunzip(gz, gz_len, sizeof(text) - 1, &back, &back_len),
		  -EFBIG);
	free(gz);
	gz = NULL;
	if (!ASSERT_OK(sfp_gzip(zeros, sizeof(zeros), &gz, &gz_len)))
		return;
	ASSERT_TRUE(gz_len < 1000);
	ASSERT_EQ(sfp_gunzip(gz, gz_len, 1000, &back, &back_len), -EFBIG);
	ASSERT_TRUE(back == NULL);
	free(gz);
}
