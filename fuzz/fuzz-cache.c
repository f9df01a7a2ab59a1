// SPDX-License-Identifier: MIT
/*
 * Fuzz what the symbolizer reads back from sfprof's cache directory
 * (common/filecache.c entries): the CRC keeps out damage, not a hostile
 * or buggy writer, so every payload that passes it is still parsed as
 * untrusted.  The input's first byte picks the payload, the rest is it:
 *
 *   0  the CU index stored beside a DWARF image (src/symbols/dwarf.c),
 *      with the real image of a zlib-compressed ELF;
 *   1  the DWARF image itself (elf_memory() and libdw on it);
 *   2  the kallsyms index (src/symbols/kallsyms.c) of a small kallsyms
 *      file: offsets and header, then the coarse addresses (the split
 *      at the second byte).
 *   3  a packed symbol table (src/symbols/symtab-packed.c): head and
 *      symbols, then names (the split at the second byte, in symbols).
 *
 * Kinds 0-2 are written as a well-formed entry for their source --
 * trailer and CRC right -- and then read through the normal path, with
 * look-ups; kind 3 is handed to the unpacker in a private mapping, as a
 * load leaves it (its entry's name and trailer are the filecache's).
 * The compressed ELF is fuzz/corpus/symbols/elf-dwarf-zlib
 * ($SFP_FUZZ_CACHE_ELF to point elsewhere); runs start in the project's
 * root.  With $SFP_FUZZ_CACHE_SEEDS set to a directory, the first run
 * also writes there one input of each kind made from the real entries
 * (how fuzz/corpus/cache/seed-* were made).
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/filecache.h"
#include "elf/elf.h"
#include "symbols/internal.h"
#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ksyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T start_kernel\n"
	"ffffffff81000200 t helper\n"
	"ffffffff81000200 T helper_alias\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 T _etext\n"
	"ffffffffc0000000 t mod_fn\t[moda]\n"
	"ffffffffc0000100 t mod_fn2\t[moda]\n";

static struct {
	bool ready;
	char root[512], dwarf_dir[600], ksyms_dir[600];
	char elf_path[600], ksyms_path[600], ksyms_name[256];
	struct sfp_elf *elf;
	void *image;
	size_t image_size;
	struct sfp_fc_src ksyms_src;
	struct sfp_symbolizer *sym;
} fx;

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	sfp_elf_close(&fx.elf);
	free(fx.image);
	sfp_symbolizer__free(&fx.sym);
	if (fx.root[0])
		nftw(fx.root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "fuzz-cache: %s\n", what);
	abort();
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	if (!in || !out)
		die("cannot copy the source ELF (run from the project's root, or set SFP_FUZZ_CACHE_ELF)");
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			die("cannot write a copy");
	fclose(in);
	fclose(out);
}

/* The one entry named *suffix in dir. */
static bool only_entry(const char *dir, const char *suffix, char *buf,
		       size_t n)
{
	size_t sl = strlen(suffix);
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return false;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l > sl && !strcmp(de->d_name + l - sl, suffix) &&
		    found++ == 0)
			snprintf(buf, n, "%s", de->d_name);
	}
	closedir(d);
	return found == 1;
}

/* The payload of entry path: its two parts (the trailer says). */
static void write_seed(const char *dir, const char *name, uint8_t kind,
		       const char *path, bool with_split)
{
	char out[700];
	uint8_t *b = NULL;
	uint64_t part[2];
	long len = 0;
	FILE *f = fopen(path, "rb");

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 160 ||
	    fseek(f, 0, SEEK_SET) || !(b = malloc((size_t)len)) ||
	    fread(b, 1, (size_t)len, f) != (size_t)len)
		die("cannot read a cache entry for a seed");
	fclose(f);
	memcpy(part, b + len - 160 + 24, sizeof(part));
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	f = fopen(out, "wb");
	if (!f)
		die("cannot write a seed");
	fputc(kind, f);
	if (with_split)		/* ksyms_round()'s split: n, part 0 = 32 + 4n */
		fputc((int)((part[0] - 32) / 4), f);
	if (kind == 0)		/* the CU index only */
		fwrite(b + part[0], 1, part[1], f);
	else if (kind == 1)	/* the image only */
		fwrite(b, 1, part[0], f);
	else
		fwrite(b, 1, part[0] + part[1], f);
	fclose(f);
	free(b);
}

/* The packed table of the source ELF's symbols (its count must fit the
 * split byte). */
static void write_symtab_seed(const char *dir)
{
	struct sfp_symtab t = { 0 };
	char out[700];
	void *p0, *p1;
	size_t n0, n1;
	FILE *f;

	if (sfp_symtab_load_elf(&t, fx.elf, SFP_LOAD_SYMTAB) <= 0)
		die("the source ELF has no symbols");
	sfp_symtab_finish(&t);
	if (t.nr > 255 || sfp_symtab_pack(&t, &p0, &n0, &p1, &n1))
		die("cannot pack the source's symbols");
	snprintf(out, sizeof(out), "%s/seed-symtab", dir);
	f = fopen(out, "wb");
	if (!f)
		die("cannot write a seed");
	fputc(3, f);
	fputc((int)t.nr, f);
	fwrite(p0, 1, n0, f);
	fwrite(p1, 1, n1, f);
	fclose(f);
	free(p0);
	free(p1);
	sfp_symtab_free(&t);
}

static void write_seeds(const char *dir)
{
	struct sfp_dwarf_cache c = { .dir = fx.dwarf_dir };
	struct sfp_dwarf *dw = NULL;
	char name[256], path[1200];

	if (sfp_dwarf_open(fx.elf, &c, &dw))
		die("cannot open the source's DWARF");
	sfp_dwarf_free(&dw);
	if (!only_entry(fx.dwarf_dir, ".dwarf", name, sizeof(name)))
		die("no DWARF cache entry was written");
	snprintf(path, sizeof(path), "%s/%s", fx.dwarf_dir, name);
	write_seed(dir, "seed-dwarf-index", 0, path, false);
	write_seed(dir, "seed-dwarf-image", 1, path, false);
	snprintf(path, sizeof(path), "%s/%s", fx.ksyms_dir, fx.ksyms_name);
	write_seed(dir, "seed-kallsyms-index", 2, path, true);
	write_symtab_seed(dir);
}

static void setup(void)
{
	const char *tmp = getenv("SFP_TEST_TMP"), *src;
	struct sfp_kallsyms_index *k = NULL;
	struct stat st;
	FILE *f;

	snprintf(fx.root, sizeof(fx.root), "%s/fuzz-cache-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx.root))
		die("mkdtemp");
	atexit(cleanup);
	snprintf(fx.dwarf_dir, sizeof(fx.dwarf_dir), "%s/dwarf", fx.root);
	snprintf(fx.ksyms_dir, sizeof(fx.ksyms_dir), "%s/kallsyms", fx.root);

	src = getenv("SFP_FUZZ_CACHE_ELF");
	snprintf(fx.elf_path, sizeof(fx.elf_path), "%s/src.elf", fx.root);
	copy_file(src && *src ? src : "fuzz/corpus/symbols/elf-dwarf-zlib",
		  fx.elf_path);
	if (sfp_elf_open(fx.elf_path, &fx.elf) ||
	    sfp_dwarf_image(fx.elf, &fx.image, &fx.image_size))
		die("the source ELF has no compressed DWARF to make an image of");

	snprintf(fx.ksyms_path, sizeof(fx.ksyms_path), "%s/kallsyms.txt",
		 fx.root);
	f = fopen(fx.ksyms_path, "w");
	if (!f || fwrite(ksyms_text, 1, sizeof(ksyms_text) - 1, f) !=
			  sizeof(ksyms_text) - 1)
		die("cannot write the kallsyms file");
	fclose(f);
	/* the real entry first: its name is the one a load looks for */
	if (sfp_kallsyms_index__open(fx.ksyms_path, NULL, fx.ksyms_dir, &k))
		die("cannot index the kallsyms file");
	sfp_kallsyms_index__free(&k);
	if (!only_entry(fx.ksyms_dir, ".ksyms", fx.ksyms_name,
			sizeof(fx.ksyms_name)) ||
	    stat(fx.ksyms_path, &st))
		die("no kallsyms cache entry was written");
	/* what kallsyms.c ties its entries to (kind, generation) */
	sfp_fc_src_init(&fx.ksyms_src, "KSYMS", 1, &st, NULL, 0);
	if (sfp_symbolizer__new(NULL, &fx.sym))
		die("symbolizer");
	src = getenv("SFP_FUZZ_CACHE_SEEDS");
	if (src && *src)
		write_seeds(src);
	fx.ready = true;
}

static void dwarf_round(const void *image, size_t image_size,
			const void *extra, size_t extra_size)
{
	struct sfp_dwarf_cache c = { .dir = fx.dwarf_dir, .budget = 1u << 30 };
	struct sfp_inline_frame fr[8];
	struct sfp_dwarf *dw = NULL;

	sfp_dwarf_cache_store(&c, fx.elf, image, image_size, extra,
			      extra_size);
	if (sfp_dwarf_open(fx.elf, &c, &dw))
		return;
	for (uint64_t a = 0; a < 0x3000; a += 7)
		(void)sfp_dwarf_inlines(fx.sym, dw, a, fr, 8);
	sfp_dwarf_free(&dw);
}

static void ksyms_round(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = {
		0, 0xffffffff81000000, 0xffffffff81000150, 0xffffffff81000200,
		0xffffffff81000401, 0xffffffffc0000050, 0xffffffffc0000100,
		0xffffffffc0001000, UINT64_MAX,
	};
	struct sfp_kallsyms_index *k = NULL;
	struct sfp_symtab *tab;
	size_t split;

	if (!size)
		return;
	split = (size_t)data[0] * 4 + 32;
	data++;
	size--;
	if (split > size)
		split = size;
	if (!split)
		return;	/* an empty first part is never stored */
	sfp_fc_store(fx.ksyms_dir, fx.ksyms_name, ".ksyms", &fx.ksyms_src,
		     data, split, data + split, size - split, 1u << 30);
	if (sfp_kallsyms_index__open(fx.ksyms_path, NULL, fx.ksyms_dir, &k))
		return;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		(void)sfp_kallsyms_index__find(k, probes[i], &tab);
	sfp_kallsyms_index__free(&k);
}

static void symtab_round(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = {
		0, 1, 0x1000, 0x1001, 0x10000, 0x401000, 0xffffffff,
		0x7fffffffffffffff, UINT64_MAX,
	};
	struct sfp_symtab t = { 0 };
	size_t split;
	void *map;

	if (!size)
		return;
	split = (size_t)data[0] * 24 + 16;
	data++;
	size--;
	if (split > size)
		split = size;
	if (!size)
		return;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return;
	memcpy(map, data, size);
	if (sfp_symtab_unpack(&t, map, split, size - split)) {
		munmap(map, size);
		return;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct sfp_sym *s = sfp_symtab_find(&t, probes[i]);

		if (s && strlen(s->name) > size)
			abort();
	}
	for (size_t i = 0; i < t.nr; i += 1 + t.nr / 64)
		(void)sfp_symtab_find(&t, t.psyms[i].start + 1);
	sfp_symtab_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fx.ready)
		setup();
	if (!size || size > (1u << 20))
		return 0;
	switch (data[0] % 4) {
	case 0:
		dwarf_round(fx.image, fx.image_size, data + 1, size - 1);
		break;
	case 1:
		if (size > 1)
			dwarf_round(data + 1, size - 1, NULL, 0);
		break;
	case 2:
		ksyms_round(data + 1, size - 1);
		break;
	default:
		symtab_round(data + 1, size - 1);
		break;
	}
	return 0;
}
