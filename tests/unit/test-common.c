// SPDX-License-Identifier: MIT
/* The shared helpers: cursor bounds, LEB128, options checks, errors. */
#include <errno.h>

#include "common/cursor.h"
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
