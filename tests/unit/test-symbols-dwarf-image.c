// SPDX-License-Identifier: MIT
/*
 * The decompressed DWARF image (src/symbols/dwarf-image.c) against the
 * uncompressed DWARF it stands for.  tests/progs/report-inline.c is built
 * with -g (gcc writes the sections uncompressed), and binutils' objcopy
 * compresses copies with zlib and with zstd.  For each copy:
 *
 *  - every section the image carries equals, byte for byte, the one gcc
 *    wrote, and is not marked compressed; every wanted .debug_* section
 *    is there, the location lists are not;
 *  - the inline chains (names, files, lines, columns) at every address of
 *    the program's .text equal those read from the uncompressed file;
 *  - a copy whose compressed .debug_info is damaged gets -EBADMSG from
 *    the image, and sfp_dwarf_open() still returns without a crash.
 *
 * With libc6-dbg installed, libc's real (zlib-compressed) debug file is
 * checked against objcopy --decompress-debug-sections the same way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "symbols/internal.h"
#include "inline-compare.h"
#include "profile-test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* The sections the image is meant to carry. */
static bool wanted(const char *name)
{
	return !strncmp(name, ".debug_", 7) && strcmp(name, ".debug_loc") &&
	       strcmp(name, ".debug_loclists") &&
	       strcmp(name, ".debug_macro") && strcmp(name, ".debug_frame") &&
	       strncmp(name, ".debug_pub", 10) &&
	       strncmp(name, ".debug_gnu_pub", 14) &&
	       strcmp(name, ".debug_names");
}

/*
 * Every section of the image equals the reference's same-named one (the
 * reference holds them uncompressed), and every wanted section of the
 * reference is in the image.  Returns the number compared.
 */
static int compare_sections(const char *ref_path, const void *image,
			    size_t size)
{
	struct sfp_elf *ref = NULL, *img = NULL;
	size_t i, found = 0, wanted_n = 0;
	int compared = 0;

	if (!ASSERT_OK(sfp_elf_open(ref_path, &ref)) ||
	    !ASSERT_OK(sfp_elf_open_mem(image, size, "image", &img)))
		goto out;
	for (i = 1; i < sfp_elf_num_sections(img); i++) {
		struct sfp_elf_section a, b;
		const uint8_t *da, *db;
		size_t la, lb;

		if (!ASSERT_OK(sfp_elf_section(img, i, &a)))
			break;
		if (!strcmp(a.name, ".shstrtab"))
			continue;
		ASSERT_TRUE(wanted(a.name));
		ASSERT_FALSE(a.flags & SHF_COMPRESSED);
		if (!ASSERT_OK(sfp_elf_find_section(ref, a.name, 0, &b)) ||
		    !ASSERT_OK(sfp_elf_section_data(img, &a, &da, &la)) ||
		    !ASSERT_OK(sfp_elf_section_data(ref, &b, &db, &lb)))
			continue;
		if (!ASSERT_EQ(la, lb) || !ASSERT_TRUE(!memcmp(da, db, la)))
			fprintf(stderr, "  section %s differs\n", a.name);
		compared++;
	}
	for (i = 1; i < sfp_elf_num_sections(ref); i++) {
		struct sfp_elf_section b, a;

		if (sfp_elf_section(ref, i, &b) || !wanted(b.name))
			continue;
		wanted_n++;
		found += !sfp_elf_find_section(img, b.name, 0, &a);
	}
	ASSERT_EQ(found, wanted_n);
out:
	sfp_elf_close(&img);
	sfp_elf_close(&ref);
	return compared;
}

/* Inline chains of both files at every address of [lo, hi). */
static void compare_inlines(const char *plain, const char *packed,
			    uint64_t lo, uint64_t hi)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_elf *ea = NULL, *eb = NULL;
	struct sfp_dwarf *da = NULL, *db = NULL;
	int with_chain = 0, bad = 0;

	if (!ASSERT_OK(sfp_symbolizer__new(NULL, &s)) ||
	    !ASSERT_OK(sfp_elf_open(plain, &ea)) ||
	    !ASSERT_OK(sfp_elf_open(packed, &eb)) ||
	    !ASSERT_OK(sfp_dwarf_open(ea, NULL, &da)) ||
	    !ASSERT_OK(sfp_dwarf_open(eb, NULL, &db)))
		goto out;
	bad = ic_mismatches(s, da, db, lo, hi, &with_chain);
	ASSERT_EQ(bad, 0);
	/* report-inline's hot and warm are inlined into main */
	ASSERT_GE(with_chain, 1);
out:
	sfp_dwarf_free(&da);
	sfp_dwarf_free(&db);
	sfp_elf_close(&ea);
	sfp_elf_close(&eb);
	sfp_symbolizer__free(&s);
}

static bool text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section t;
	bool ok;

	if (sfp_elf_open(path, &e))
		return false;
	ok = !sfp_elf_find_section(e, ".text", 0, &t);
	*lo = t.addr;
	*hi = t.addr + t.size;
	sfp_elf_close(&e);
	return ok;
}

/* The image of path: 0 / -errno from sfp_dwarf_image. */
static int image_of(const char *path, void **image, size_t *size)
{
	struct sfp_elf *e = NULL;
	int err;

	*image = NULL;
	if ((err = sfp_elf_open(path, &e)))
		return err;
	err = sfp_dwarf_image(e, image, size);
	sfp_elf_close(&e);
	return err;
}

static bool build(char *plain, size_t n)
{
	pt_tmp(plain, n, "dwimg-plain");
	return pt_sh("cc -O2 -g -o '%s' tests/progs/report-inline.c 2>/dev/null",
		  plain);
}

static void check_kind(const char *kind)
{
	char plain[512], packed[512];
	uint64_t lo, hi;
	size_t size = 0;
	void *img = NULL;

	if (!ASSERT_TRUE(build(plain, sizeof(plain))))
		return;
	pt_tmp(packed, sizeof(packed), kind);
	if (!ASSERT_TRUE(pt_sh("objcopy --compress-debug-sections=%s '%s' '%s'",
			    kind, plain, packed)))
		return;
	/* gcc's own output has nothing compressed: nothing to gain */
	ASSERT_ERR(image_of(plain, &img, &size), -ENOENT);
	if (!ASSERT_OK(image_of(packed, &img, &size)))
		return;
	ASSERT_GE(compare_sections(plain, img, size), 5);
	free(img);
	if (ASSERT_TRUE(text_range(plain, &lo, &hi)))
		compare_inlines(plain, packed, lo, hi);
}

TEST(dwarf_image_zlib)
{
	check_kind("zlib");
}

TEST(dwarf_image_zstd)
{
	check_kind("zstd");
}

/*
 * objcopy leaves a section uncompressed when compressing would not shrink
 * it: a two-line program's DWARF comes out with .debug_info compressed
 * and the rest stored, so the image copies some sections and inflates
 * others.
 */
TEST(dwarf_image_mixed)
{
	char src[512], plain[512], packed[512];
	struct sfp_elf *e = NULL;
	size_t i, stored = 0, packed_n = 0, size = 0;
	void *img = NULL;

	pt_tmp(src, sizeof(src), "dwimg-small.c");
	pt_tmp(plain, sizeof(plain), "dwimg-small");
	pt_tmp(packed, sizeof(packed), "dwimg-small-zlib");
	if (!ASSERT_TRUE(pt_sh("printf 'int main(void)\\n{\\n\\treturn 0;\\n}\\n' > '%s' && "
			    "cc -g -o '%s' '%s' && "
			    "objcopy --compress-debug-sections=zlib '%s' '%s'",
			    src, plain, src, plain, packed)) ||
	    !ASSERT_OK(sfp_elf_open(packed, &e)))
		return;
	for (i = 1; i < sfp_elf_num_sections(e); i++) {
		struct sfp_elf_section sec;

		if (sfp_elf_section(e, i, &sec) || !wanted(sec.name))
			continue;
		if (sec.flags & SHF_COMPRESSED)
			packed_n++;
		else
			stored++;
	}
	sfp_elf_close(&e);
	ASSERT_GE(packed_n, 1);
	ASSERT_GE(stored, 1);
	if (!ASSERT_OK(image_of(packed, &img, &size)))
		return;
	ASSERT_EQ(compare_sections(plain, img, size), (int)(packed_n + stored));
	free(img);
}

/* Damage the middle of the compressed .debug_info of a zlib copy. */
TEST(dwarf_image_bad_data)
{
	char plain[512], packed[512];
	struct sfp_elf *e = NULL;
	struct sfp_elf_section sec;
	struct sfp_dwarf *dw = NULL;
	size_t size;
	void *img = NULL;
	FILE *f;

	if (!ASSERT_TRUE(build(plain, sizeof(plain))))
		return;
	pt_tmp(packed, sizeof(packed), "dwimg-bad");
	if (!ASSERT_TRUE(pt_sh("objcopy --compress-debug-sections=zlib '%s' '%s'",
			    plain, packed)))
		return;
	if (!ASSERT_OK(sfp_elf_open(packed, &e)) ||
	    !ASSERT_OK(sfp_elf_find_section(e, ".debug_info", 0, &sec)))
		goto out;
	ASSERT_TRUE(sec.flags & SHF_COMPRESSED);
	sfp_elf_close(&e);
	f = fopen(packed, "r+b");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	/* past the 24-byte Chdr and the 2-byte zlib header */
	fseek(f, (long)(sec.offset + 24 + 2 + (sec.size - 26) / 2), SEEK_SET);
	fwrite("\xff\xff\xff\xff\xff\xff\xff\xff", 1, 8, f);
	fclose(f);
	ASSERT_ERR(image_of(packed, &img, &size), -EBADMSG);
	ASSERT_TRUE(img == NULL);
	if (!ASSERT_OK(sfp_elf_open(packed, &e)))
		goto out;
	/* libdw then judges the file itself: an error, or DWARF it reads */
	if (!sfp_dwarf_open(e, NULL, &dw))
		sfp_dwarf_free(&dw);
out:
	sfp_elf_close(&e);
}

/* A real Debian debug file: libc6-dbg's, compressed by Debian's build. */
TEST(dwarf_image_libc_debug_file)
{
	char dbg[1024], dec[512], cmd[2048], id[128];
	size_t size = 0;
	void *img = NULL;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -n %s 2>/dev/null | awk '/Build ID/ {print $3}'", LIBC);
	p = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(p))
		return;
	if (!fgets(cmd, sizeof(cmd), p) || strlen(cmd) < 8) {
		pclose(p);
		test_skip("no build-id on %s", LIBC);
		return;
	}
	pclose(p);
	cmd[strcspn(cmd, "\n")] = 0;
	snprintf(id, sizeof(id), "%s", cmd);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 id, id + 2);
	if (access(dbg, R_OK)) {
		test_skip("no libc debug file (libc6-dbg)");
		return;
	}
	pt_tmp(dec, sizeof(dec), "libc-debug-decompressed");
	if (!ASSERT_TRUE(pt_sh("objcopy --decompress-debug-sections '%s' '%s'",
			    dbg, dec)))
		return;
	if (!ASSERT_OK(image_of(dbg, &img, &size)))
		return;
	ASSERT_GE(compare_sections(dec, img, size), 5);
	free(img);
}
