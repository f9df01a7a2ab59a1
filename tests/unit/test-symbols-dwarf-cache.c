// SPDX-License-Identifier: MIT
/*
 * The on-disk cache of decompressed DWARF images (src/symbols/
 * dwarf-cache.c).  tests/progs/report-inline.c is built with -g and
 * compressed with binutils' objcopy, as in test-symbols-dwarf-image.c:
 *
 *  - an image stored and loaded again is the image, byte for byte, and
 *    DWARF opened through the cache gives the same inline chains at every
 *    address of .text as the uncompressed file;
 *  - an entry is refused and removed when the file it came from changed
 *    (mtime), when it is damaged (one byte) or cut short; a symbolic link
 *    in its place is not followed and not removed;
 *  - the budget: a new entry evicts the least recently used ones, no
 *    more than needed, never another kind of file, and an image over a
 *    quarter of the budget is not kept;
 *  - the symbolizer writes under <cache_dir>/dwarf, and nothing when
 *    no_cache is set.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "elf/elf.h"
#include "symbols/internal.h"
#include "inline-compare.h"
#include "profile-test.h"

/* common/filecache.c's trailer after every payload */
#define TRAILER 160

/* A zlib-compressed copy of report-inline and its uncompressed original. */
static bool make_pair(const char *tag, char *plain, char *packed, size_t n)
{
	char name[64];

	snprintf(name, sizeof(name), "dwc-%s-plain", tag);
	pt_tmp(plain, n, name);
	snprintf(name, sizeof(name), "dwc-%s-zlib", tag);
	pt_tmp(packed, n, name);
	return pt_sh("cc -O2 -g -o '%s' tests/progs/report-inline.c 2>/dev/null && "
		     "objcopy --compress-debug-sections=zlib '%s' '%s'",
		     plain, plain, packed);
}

/* An empty cache directory of this test's own. */
static char *cache_dir(const char *tag, char *buf, size_t n)
{
	return pt_cache_dir("dwc", tag, buf, n);
}

/* The one *.dwarf entry of dir: its path in buf, false if none or more. */
static bool the_entry(const char *dir, char *buf, size_t n)
{
	char cmd[1024], line[256], more[256];
	FILE *p;
	bool ok;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep '\\.dwarf$'", dir);
	p = popen(cmd, "r");
	if (!p)
		return false;
	ok = fgets(line, sizeof(line), p) && !fgets(more, sizeof(more), p);
	pclose(p);
	if (!ok)
		return false;
	line[strcspn(line, "\n")] = 0;
	return (size_t)snprintf(buf, n, "%s/%s", dir, line) < n;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* Build the image of packed and store it in c; false on failure. */
static bool store_image(const struct sfp_dwarf_cache *c, const char *packed,
			void **img, size_t *size)
{
	struct sfp_elf *e = NULL;
	bool ok;

	if (!ASSERT_OK(sfp_elf_open(packed, &e)))
		return false;
	ok = ASSERT_OK(sfp_dwarf_image(e, img, size));
	if (ok)
		sfp_dwarf_cache_store(c, e, *img, *size, NULL, 0);
	sfp_elf_close(&e);
	return ok;
}

static size_t extra_size;	/* of the last load() */

static int load(const struct sfp_dwarf_cache *c, const char *packed,
		void **img, size_t *size)
{
	struct sfp_elf *e = NULL;
	const void *extra;
	int err;

	*img = NULL;
	if ((err = sfp_elf_open(packed, &e)))
		return err;
	err = sfp_dwarf_cache_load(c, e, img, size, &extra, &extra_size);
	sfp_elf_close(&e);
	return err;
}

/* Inline chains at every .text address: plain file vs packed via cache. */
static void compare_inlines(const char *plain, const char *packed,
			    const struct sfp_dwarf_cache *c)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_elf *ea = NULL, *eb = NULL;
	struct sfp_dwarf *da = NULL, *db = NULL;
	struct sfp_elf_section t;
	int with_chain = 0, bad = 0;

	if (!ASSERT_OK(sfp_symbolizer__new(NULL, &s)) ||
	    !ASSERT_OK(sfp_elf_open(plain, &ea)) ||
	    !ASSERT_OK(sfp_elf_open(packed, &eb)) ||
	    !ASSERT_OK(sfp_elf_find_section(ea, ".text", 0, &t)) ||
	    !ASSERT_OK(sfp_dwarf_open(ea, NULL, &da)) ||
	    !ASSERT_OK(sfp_dwarf_open(eb, c, &db)))
		goto out;
	bad = ic_mismatches(s, da, db, t.addr, t.addr + t.size, &with_chain);
	ASSERT_EQ(bad, 0);
	ASSERT_GE(with_chain, 1);
out:
	sfp_dwarf_free(&da);
	sfp_dwarf_free(&db);
	sfp_elf_close(&ea);
	sfp_elf_close(&eb);
	sfp_symbolizer__free(&s);
}

TEST(dwarf_cache_round_trip)
{
	char plain[512], packed[512], dir[512], entry[1024];
	struct sfp_dwarf_cache c = { .dir = cache_dir("rt", dir, sizeof(dir)) };
	void *img = NULL, *got = NULL;
	size_t size = 0, gsize = 0;

	if (!ASSERT_TRUE(make_pair("rt", plain, packed, sizeof(plain))))
		return;
	ASSERT_ERR(load(&c, packed, &got, &gsize), -ENOENT);
	if (!store_image(&c, packed, &img, &size))
		return;
	ASSERT_TRUE(the_entry(dir, entry, sizeof(entry)));
	if (ASSERT_OK(load(&c, packed, &got, &gsize)) &&
	    ASSERT_EQ(gsize, size))
		ASSERT_TRUE(!memcmp(got, img, size));
	ASSERT_EQ(extra_size, 0);
	sfp_dwarf_cache_unmap(got, gsize, extra_size);
	free(img);
	/* the original has no compressed DWARF: no image, no entry */
	{
		struct sfp_elf *e = NULL;

		const void *x;
		size_t xn;

		if (ASSERT_OK(sfp_elf_open(plain, &e)))
			ASSERT_ERR(sfp_dwarf_cache_load(&c, e, &got, &gsize,
							&x, &xn),
				   -ENOENT);
		sfp_elf_close(&e);
	}
	compare_inlines(plain, packed, &c);
}

/* sfp_dwarf_open() with a cache: stores on a miss, reads on a hit. */
TEST(dwarf_cache_open_stores_then_reads)
{
	char plain[512], packed[512], dir[512], entry[1024];
	struct sfp_dwarf_cache c = { .dir = cache_dir("open", dir, sizeof(dir)) };
	struct stat st1, st2;

	if (!ASSERT_TRUE(make_pair("open", plain, packed, sizeof(plain))))
		return;
	compare_inlines(plain, packed, &c);	/* the miss: stores */
	if (!ASSERT_TRUE(the_entry(dir, entry, sizeof(entry))) ||
	    !ASSERT_OK(stat(entry, &st1)))
		return;
	/* with the CU index beside the image */
	{
		void *got = NULL;
		size_t gsize = 0;

		if (ASSERT_OK(load(&c, packed, &got, &gsize))) {
			ASSERT_GE(extra_size, 24 + 8 + 20);
			ASSERT_EQ((size_t)st1.st_size, gsize + extra_size + TRAILER);
		}
		sfp_dwarf_cache_unmap(got, gsize, extra_size);
	}
	/* an hour back, so that a hit's refresh shows */
	pt_sh("touch -d '1 hour ago' '%s'", entry);
	compare_inlines(plain, packed, &c);	/* the hit */
	if (ASSERT_OK(stat(entry, &st2)))
		ASSERT_TRUE(st2.st_mtime >= st1.st_mtime);
	ASSERT_EQ((long long)st2.st_ino, (long long)st1.st_ino);
}

TEST(dwarf_cache_refuses_stale_damaged_short)
{
	char plain[512], packed[512], dir[512], entry[1024];
	struct sfp_dwarf_cache c = { .dir = cache_dir("bad", dir, sizeof(dir)) };
	void *img = NULL, *got = NULL;
	size_t size = 0, gsize = 0;
	struct stat st;

	if (!ASSERT_TRUE(make_pair("bad", plain, packed, sizeof(plain))) ||
	    !store_image(&c, packed, &img, &size) ||
	    !ASSERT_TRUE(the_entry(dir, entry, sizeof(entry))))
		goto out;

	/* the file it came from was touched: another file for all we know */
	pt_sh("touch -d '2 hours ago' '%s'", packed);
	ASSERT_ERR(load(&c, packed, &got, &gsize), -EBADMSG);
	ASSERT_FALSE(exists(entry));
	ASSERT_TRUE(got == NULL);

	/* one byte of the image flipped */
	free(img);
	img = NULL;
	if (!store_image(&c, packed, &img, &size) ||
	    !ASSERT_TRUE(the_entry(dir, entry, sizeof(entry))))
		goto out;
	ASSERT_TRUE(pt_sh("printf '\\377' | dd of='%s' bs=1 seek=%zu conv=notrunc 2>/dev/null",
			  entry, size / 2));
	ASSERT_ERR(load(&c, packed, &got, &gsize), -EBADMSG);
	ASSERT_FALSE(exists(entry));

	/* cut short, down to less than the trailer */
	ASSERT_FALSE(the_entry(dir, entry, sizeof(entry)));
	free(img);
	img = NULL;
	if (!store_image(&c, packed, &img, &size) ||
	    !ASSERT_TRUE(the_entry(dir, entry, sizeof(entry))))
		goto out;
	ASSERT_OK(truncate(entry, 100));
	ASSERT_ERR(load(&c, packed, &got, &gsize), -EBADMSG);
	ASSERT_FALSE(exists(entry));

	/* and sfp_dwarf_open() after all of it still reads the DWARF */
	compare_inlines(plain, packed, &c);
	ASSERT_TRUE(the_entry(dir, entry, sizeof(entry)));
	ASSERT_OK(stat(entry, &st));
	ASSERT_GE((size_t)st.st_size, size + TRAILER + 24);	/* + the CU index */
out:
	free(img);
}

/*
 * What passes the CRC is still read like untrusted bytes: a stored CU
 * index that does not make an index (garbage, then a range naming a CU
 * past the end) is dropped and the index built from the DWARF, and an
 * image libdw cannot open is made again; either way the entry is then
 * stored again, right.
 */
static void check_replaced(const struct sfp_dwarf_cache *c, const char *packed,
			   const void *img, size_t size, size_t good_extra)
{
	void *got = NULL;
	size_t gsize = 0;

	if (ASSERT_OK(load(c, packed, &got, &gsize)) &&
	    ASSERT_EQ(gsize, size)) {
		ASSERT_TRUE(!memcmp(got, img, size));
		ASSERT_EQ(extra_size, good_extra);
	}
	sfp_dwarf_cache_unmap(got, gsize, extra_size);
}

TEST(dwarf_cache_bad_entries_rebuilt)
{
	char plain[512], packed[512], dir[512];
	struct sfp_dwarf_cache c = { .dir = cache_dir("idx", dir, sizeof(dir)) };
	struct sfp_elf *e = NULL;
	void *img = NULL, *got = NULL;
	size_t size = 0, gsize = 0, good_extra;
	uint8_t bad[24 + 8 + 20] = { 0 };
	uint32_t hdr[2] = { 0x58495543u, 1 };
	uint64_t counts[2] = { 1, 1 }, lo = 0x1000, hi = 0x2000, off = 11;
	uint32_t cu = 1;	/* of 1 */

	if (!ASSERT_TRUE(make_pair("idx", plain, packed, sizeof(plain))) ||
	    !ASSERT_OK(sfp_elf_open(packed, &e)) ||
	    !ASSERT_OK(sfp_dwarf_image(e, &img, &size)))
		goto out;
	/* the entry a miss makes: the good index's size */
	compare_inlines(plain, packed, &c);
	if (!ASSERT_OK(load(&c, packed, &got, &gsize)))
		goto out;
	good_extra = extra_size;
	sfp_dwarf_cache_unmap(got, gsize, extra_size);
	ASSERT_GE(good_extra, 24 + 8 + 20);

	sfp_dwarf_cache_store(&c, e, img, size, "garbage", 7);
	compare_inlines(plain, packed, &c);
	check_replaced(&c, packed, img, size, good_extra);

	memcpy(bad, hdr, 8);
	memcpy(bad + 8, counts, 16);
	memcpy(bad + 24, &off, 8);
	memcpy(bad + 32, &lo, 8);
	memcpy(bad + 40, &hi, 8);
	memcpy(bad + 48, &cu, 4);
	sfp_dwarf_cache_store(&c, e, img, size, bad, sizeof(bad));
	compare_inlines(plain, packed, &c);
	check_replaced(&c, packed, img, size, good_extra);

	/* an image that is no ELF at all */
	sfp_dwarf_cache_store(&c, e, "not an ELF image", 16, NULL, 0);
	compare_inlines(plain, packed, &c);
	check_replaced(&c, packed, img, size, good_extra);
out:
	free(img);
	sfp_elf_close(&e);
}

TEST(dwarf_cache_link_not_followed)
{
	char plain[512], packed[512], dir[512], entry[1024], real[1100];
	struct sfp_dwarf_cache c = { .dir = cache_dir("link", dir, sizeof(dir)) };
	void *img = NULL, *got = NULL;
	size_t size = 0, gsize = 0;

	if (!ASSERT_TRUE(make_pair("link", plain, packed, sizeof(plain))) ||
	    !store_image(&c, packed, &img, &size) ||
	    !ASSERT_TRUE(the_entry(dir, entry, sizeof(entry))))
		goto out;
	snprintf(real, sizeof(real), "%s.real", entry);
	ASSERT_OK(rename(entry, real));
	ASSERT_OK(symlink(real, entry));
	ASSERT_ERR(load(&c, packed, &got, &gsize), -EPERM);
	ASSERT_TRUE(exists(entry));
	ASSERT_TRUE(exists(real));
out:
	free(img);
}

/*
 * The cache root planted as a link to another directory: nothing is
 * written through it, and nothing read.
 */
TEST(dwarf_cache_root_link_not_followed)
{
	char plain[512], packed[512], root[512], victim[512], sub[600];
	void *img = NULL, *got = NULL;
	size_t size = 0, gsize = 0;
	struct sfp_dwarf_cache c = { .dir = sub };

	if (!ASSERT_TRUE(make_pair("rootlink", plain, packed, sizeof(plain))))
		return;
	pt_tmp(root, sizeof(root), "dwc-rootlink-root");
	pt_tmp(victim, sizeof(victim), "dwc-rootlink-victim");
	pt_sh("rm -rf '%s' '%s' && mkdir -m 700 '%s' && ln -s '%s' '%s'",
	      root, victim, victim, victim, root);
	snprintf(sub, sizeof(sub), "%s/dwarf", root);
	if (!store_image(&c, packed, &img, &size))
		return;
	ASSERT_TRUE(pt_sh("test -z \"$(ls -A '%s')\"", victim));
	/* an entry put there by hand is not read through the link either */
	pt_sh("mkdir -m 700 '%s/dwarf'", victim);
	{
		struct sfp_dwarf_cache real = { .dir = (char *)pt_fmt("%s/dwarf",
								       victim) };
		char real_dir[600];

		snprintf(real_dir, sizeof(real_dir), "%s", real.dir);
		real.dir = real_dir;
		store_image(&real, packed, &got, &gsize);
		free(got);
		got = NULL;
		ASSERT_OK(load(&real, packed, &got, &gsize));
		sfp_dwarf_cache_unmap(got, gsize, extra_size);
	}
	ASSERT_ERR(load(&c, packed, &got, &gsize), -EPERM);
	free(img);
}

/* A file of size bytes named name in dir, last used age seconds ago. */
static void fake_entry(const char *dir, const char *name, size_t size,
		       int age)
{
	pt_sh("head -c %zu /dev/zero > '%s/%s' && touch -d '%d seconds ago' '%s/%s'",
	      size, dir, name, age, dir, name);
}

TEST(dwarf_cache_budget)
{
	char plain[512], packed[512], dir[512], path[1024];
	struct sfp_dwarf_cache c = { .dir = cache_dir("budget", dir, sizeof(dir)) };
	void *img = NULL;
	size_t size = 0, n;
	struct sfp_elf *e = NULL;

	if (!ASSERT_TRUE(make_pair("budget", plain, packed, sizeof(plain))) ||
	    !ASSERT_OK(sfp_elf_open(packed, &e)) ||
	    !ASSERT_OK(sfp_dwarf_image(e, &img, &size)))
		goto out;
	n = size + TRAILER;		/* the entry's size */
	/*
	 * Budget 4n: three older entries of n + 1 bytes make 4n + 3 with the
	 * new one, so exactly the oldest must go.  A file of another kind,
	 * however old, stays.
	 */
	c.budget = 4 * n;
	fake_entry(dir, "aa-1.dwarf", n + 1, 300);
	fake_entry(dir, "bb-1.dwarf", n + 1, 900);
	fake_entry(dir, "cc-1.dwarf", n + 1, 600);
	fake_entry(dir, "notes.txt", 10 * n, 5000);
	sfp_dwarf_cache_store(&c, e, img, size, NULL, 0);
	snprintf(path, sizeof(path), "%s/bb-1.dwarf", dir);
	ASSERT_FALSE(exists(path));
	snprintf(path, sizeof(path), "%s/aa-1.dwarf", dir);
	ASSERT_TRUE(exists(path));
	snprintf(path, sizeof(path), "%s/cc-1.dwarf", dir);
	ASSERT_TRUE(exists(path));
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	ASSERT_TRUE(exists(path));

	/* over a quarter of the budget: not kept, nothing evicted */
	cache_dir("budget", dir, sizeof(dir));
	fake_entry(dir, "aa-1.dwarf", n, 300);
	c.budget = 4 * n - 4;
	sfp_dwarf_cache_store(&c, e, img, size, NULL, 0);
	if (ASSERT_TRUE(the_entry(dir, path, sizeof(path))))
		ASSERT_NOT_NULL(strstr(path, "/aa-1.dwarf"));
out:
	free(img);
	sfp_elf_close(&e);
}

/* Through the public API: opts.cache_dir and opts.no_cache. */
static void inlines_of(const char *packed, const struct sfp_symbolizer_opts *o)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d = NULL;
	struct sfp_inline_frame f[8];
	struct sfp_elf_section t;
	struct sfp_elf *e = NULL;

	if (!ASSERT_OK(sfp_symbolizer__new(o, &s)) ||
	    !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, packed, NULL, 0, &d)) ||
	    !ASSERT_OK(sfp_elf_open(packed, &e)) ||
	    !ASSERT_OK(sfp_elf_find_section(e, ".text", 0, &t)))
		goto out;
	ASSERT_GE(sfp_symbolizer_dso__inlines(d, t.addr, f, 8), 0);
out:
	sfp_elf_close(&e);
	sfp_symbolizer__free(&s);
}

TEST(dwarf_cache_symbolizer_opts)
{
	char plain[512], packed[512], dir[512], sub[600], entry[1024];
	SFP_OPTS(sfp_symbolizer_opts, o, .no_debug_files = true);

	if (!ASSERT_TRUE(make_pair("opts", plain, packed, sizeof(plain))))
		return;
	o.cache_dir = cache_dir("opts", dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/dwarf", dir);
	o.no_cache = true;
	inlines_of(packed, &o);
	ASSERT_FALSE(exists(sub));
	o.no_cache = false;
	inlines_of(packed, &o);
	ASSERT_TRUE(the_entry(sub, entry, sizeof(entry)));
}
