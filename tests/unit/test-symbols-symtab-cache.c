// SPDX-License-Identifier: MIT
/*
 * Finished symbol tables kept in the cache (symtab-cache.c) and looked up
 * in their packed form (symtab-packed.c): on this machine's libc (its
 * debug file's .symtab when libc6-dbg is installed, .dynsym otherwise)
 * every lookup through the cache answers as the table built from the ELF
 * files does; damaged packed data is refused; an entry is tied to the
 * debug file that was used; a table whose making warned is not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "elf/elf.h"
#include "symbols/internal.h"
#include "profile-test.h"

#if defined(__x86_64__)
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#elif defined(__aarch64__)
#define LIBC "/lib/aarch64-linux-gnu/libc.so.6"
#endif

/* An empty cache directory of this test's own. */
static char *cache_dir(const char *tag, char *buf, size_t n)
{
	return pt_cache_dir("stc", tag, buf, n);
}

/* The number of *.syms entries under dir/symtab. */
static int entries(const char *dir)
{
	char cmd[1024], line[64];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "ls '%s/symtab' 2>/dev/null | grep -c '\\.syms$'", dir);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		n = atoi(line);
	pclose(p);
	return n;
}

/* libc's table built from its ELF files, as the symbolizer makes it. */
static bool built_table(struct sfp_symtab *t, struct sfp_elf **e)
{
	*e = NULL;
	memset(t, 0, sizeof(*t));
	if (!ASSERT_OK(sfp_elf_open(LIBC, e)))
		return false;
	if (!ASSERT_TRUE(sfp_symtab_load_elf(t, *e, SFP_LOAD_DYNSYM) > 0) ||
	    !ASSERT_TRUE(sfp_symtab_load_plt(t, *e) >= 0))
		return false;
	sfp_symtab_finish(t);
	return true;
}

/* t packed into a fresh private mapping, as a cache load leaves it. */
static void *packed_map(const struct sfp_symtab *t, size_t *n0, size_t *n1)
{
	void *p0, *p1, *map;

	if (!ASSERT_OK(sfp_symtab_pack(t, &p0, n0, &p1, n1)))
		return NULL;
	map = mmap(NULL, *n0 + *n1, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ASSERT_TRUE(map != MAP_FAILED)) {
		memcpy(map, p0, *n0);
		memcpy((char *)map + *n0, p1, *n1);
	} else {
		map = NULL;
	}
	free(p0);
	free(p1);
	return map;
}

/* Both tables answer alike at, inside, just past and between symbols. */
static size_t mismatches(struct sfp_symtab *a, struct sfp_symtab *b)
{
	size_t i, bad = 0, nr = a->nr;
	const uint64_t delta[] = { 0, 1, 7 };

	for (i = 0; i < nr; i++) {
		uint64_t s = a->syms[i].start, z = a->syms[i].size;
		uint64_t at[] = { s, s + z / 2, s + (z ? z - 1 : 0), s + z,
				  s + z + delta[i % 3], s - 1 };

		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			struct sfp_sym *x = sfp_symtab_find(a, at[k]);
			struct sfp_sym *y = sfp_symtab_find(b, at[k]);

			if (!x != !y ||
			    (x && (x->start != y->start || x->size != y->size ||
				   x->flags != y->flags ||
				   strcmp(x->name, y->name))))
				bad++;
		}
	}
	return bad;
}

TEST(symtab_packed_answers_as_built)
{
	struct sfp_symtab t, p = { 0 };
	struct sfp_elf *e;
	size_t n0, n1;
	void *map;

	if (built_table(&t, &e) && (map = packed_map(&t, &n0, &n1))) {
		if (ASSERT_OK(sfp_symtab_unpack(&p, map, n0, n1))) {
			ASSERT_EQ(p.nr, t.nr);
			ASSERT_EQ(mismatches(&t, &p), 0);
			/* one symbol made per packed entry, however often asked */
			ASSERT_TRUE(sfp_symtab_find(&p, t.syms[0].start) ==
				    sfp_symtab_find(&p, t.syms[0].start));
			ASSERT_TRUE(p.mat_n <= p.nr);
		} else {
			munmap(map, n0 + n1);
		}
	}
	sfp_symtab_free(&p);
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
}

/* Unpack a damaged copy: -EBADMSG and the mapping left to the caller. */
static void refused(const struct sfp_symtab *t, const char *what,
		    void (*damage)(void *map, size_t *n0, size_t *n1))
{
	struct sfp_symtab p = { 0 };
	size_t n0, n1;
	void *map = packed_map(t, &n0, &n1);
	size_t len = n0 + n1;

	if (!map)
		return;
	damage(map, &n0, &n1);
	if (!ASSERT_EQ(sfp_symtab_unpack(&p, map, n0, n1), -EBADMSG))
		fprintf(stderr, "  accepted: %s\n", what);
	ASSERT_TRUE(p.psyms == NULL && p.nr == 0);
	munmap(map, len);
}

/* entry i of part 0 */
static uint32_t *entry_u32(void *map, size_t i, size_t word)
{
	return (uint32_t *)((char *)map + 16 + 24 * i + 4 * word);
}

static void bad_magic(void *m, size_t *n0, size_t *n1)
{
	(void)n0, (void)n1;
	((uint8_t *)m)[0] ^= 1;
}

static void bad_version(void *m, size_t *n0, size_t *n1)
{
	(void)n0, (void)n1;
	((uint8_t *)m)[4] = 9;
}

static void bad_count(void *m, size_t *n0, size_t *n1)
{
	(void)n0, (void)n1;
	((uint8_t *)m)[8] += 1;
}

static void short_part0(void *m, size_t *n0, size_t *n1)
{
	(void)m;
	*n0 -= 24;
	*n1 += 24;
}

static void name_outside(void *m, size_t *n0, size_t *n1)
{
	(void)n0;
	*entry_u32(m, 3, 4) = (uint32_t)*n1;
}

static void unsorted(void *m, size_t *n0, size_t *n1)
{
	uint64_t s;

	(void)n0, (void)n1;
	memcpy(&s, entry_u32(m, 1, 0), 8);
	memcpy(entry_u32(m, 2, 0), &s, 8);
}

static void unterminated(void *m, size_t *n0, size_t *n1)
{
	((char *)m)[*n0 + *n1 - 1] = 'x';
}

static void tiny(void *m, size_t *n0, size_t *n1)
{
	(void)m;
	*n1 += *n0 - 8;
	*n0 = 8;
}

TEST(symtab_packed_damage_refused)
{
	struct sfp_symtab t;
	struct sfp_elf *e;

	if (built_table(&t, &e) && ASSERT_TRUE(t.nr > 4)) {
		refused(&t, "magic", bad_magic);
		refused(&t, "version", bad_version);
		refused(&t, "count", bad_count);
		refused(&t, "part sizes", short_part0);
		refused(&t, "name offset", name_outside);
		refused(&t, "order", unsorted);
		refused(&t, "last name unterminated", unterminated);
		refused(&t, "head cut", tiny);
	}
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
}

/* Every 97th byte of libc's text looked up through s's libc. */
static bool has_debug;	/* of the last lookups() */

static bool lookups(struct sfp_symbolizer *s, char *out, size_t n,
		    bool *packed)
{
	struct sfp_symbolizer_dso *d;
	size_t at = 0;

	if (!ASSERT_OK(sfp_symbolizer__get_dso(s, 0, LIBC, NULL, 0, &d)))
		return false;
	d = d->same ? d->same : d;
	*packed = d->tab.psyms != NULL;
	has_debug = d->debug != NULL;
	out[0] = 0;
	for (uint64_t a = 0x20000; a < 0x1a0000 && at + 128 < n; a += 97) {
		struct sfp_symbol sym;

		if (!sfp_symbolizer_dso__find(d, a, &sym))
			at += (size_t)snprintf(out + at, n - at, "%s+%llx;",
					       sym.name,
					       (unsigned long long)sym.offset);
	}
	return true;
}

static char first[1 << 20], second[1 << 20], none[1 << 20];

TEST(symtab_cache_second_run_reads_it)
{
	char dir[512];
	SFP_OPTS(sfp_symbolizer_opts, o);
	struct sfp_symbolizer *s = NULL;
	bool packed = true;

	o.cache_dir = cache_dir("runs", dir, sizeof(dir));
	o.no_cache = true;
	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !lookups(s, none, sizeof(none), &packed))
		goto out;
	ASSERT_FALSE(packed);
	ASSERT_EQ(entries(dir), 0);
	sfp_symbolizer__free(&s);

	o.no_cache = false;
	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !lookups(s, first, sizeof(first), &packed))
		goto out;
	ASSERT_FALSE(packed);		/* made, then stored */
	ASSERT_EQ(entries(dir), 1);
	sfp_symbolizer__free(&s);

	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !lookups(s, second, sizeof(second), &packed))
		goto out;
	ASSERT_TRUE(packed);		/* read back */
	ASSERT_TRUE(strlen(none) > 1000);
	ASSERT_STREQ(first, none);
	ASSERT_STREQ(second, none);
out:
	sfp_symbolizer__free(&s);
}

TEST(symtab_cache_entry_per_debug_file)
{
	char dir[512];
	SFP_OPTS(sfp_symbolizer_opts, o);
	struct sfp_symbolizer *s = NULL;
	bool packed;
	int want;

	o.cache_dir = cache_dir("debug", dir, sizeof(dir));
	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !lookups(s, first, sizeof(first), &packed))
		goto out;
	/* with a separate debug file (libc6-dbg), a table without it is
	 * another entry; with none, it is the same table and entry */
	want = has_debug ? 2 : 1;
	sfp_symbolizer__free(&s);
	o.no_debug_files = true;
	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !lookups(s, second, sizeof(second), &packed))
		goto out;
	ASSERT_EQ(packed, want == 1);
	ASSERT_EQ(entries(dir), want);
out:
	sfp_symbolizer__free(&s);
}

/* A copy of report-inline whose first defined function symbol's name
 * lies outside the string table. */
static bool bad_names_copy(char *path, size_t n)
{
	struct sfp_elf_section sec;
	struct sfp_elf *e = NULL;
	uint32_t bad = 0xfffffff0u;
	uint8_t ent[24];
	size_t i;
	bool ok = false;
	int fd;

	pt_tmp(path, n, "stc-badname");
	if (!ASSERT_TRUE(pt_sh("cc -O2 -o '%s' tests/progs/report-inline.c",
			       path)) ||
	    !ASSERT_OK(sfp_elf_open(path, &e)) ||
	    !ASSERT_OK(sfp_elf_find_section(e, NULL, SHT_SYMTAB, &sec)))
		goto out;
	fd = open(path, O_RDWR);
	if (!ASSERT_TRUE(fd >= 0))
		goto out;
	for (i = 1; (i + 1) * 24 <= sec.size; i++) {
		uint64_t value;

		if (pread(fd, ent, 24, (off_t)(sec.offset + i * 24)) != 24)
			break;
		memcpy(&value, ent + 8, 8);
		if ((ent[4] & 0xf) == STT_FUNC && value) {
			ok = ASSERT_EQ(pwrite(fd, &bad, 4,
					      (off_t)(sec.offset + i * 24)), 4);
			break;
		}
	}
	close(fd);
	ASSERT_TRUE(ok);
out:
	sfp_elf_close(&e);
	return ok;
}

TEST(symtab_cache_not_kept_when_making_warned)
{
	char dir[512], path[512];
	SFP_OPTS(sfp_symbolizer_opts, o);
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	unsigned long before = sfp_log_warnings();

	o.cache_dir = cache_dir("warned", dir, sizeof(dir));
	if (!bad_names_copy(path, sizeof(path)) ||
	    !ASSERT_OK(sfp_symbolizer__new(&o, &s)) ||
	    !ASSERT_OK(sfp_symbolizer__get_dso(s, 0, path, NULL, 0, &d)))
		goto out;
	ASSERT_TRUE(sfp_log_warnings() > before);	/* it did warn */
	ASSERT_TRUE(sfp_symbolizer_dso__num_symbols(d) > 5);
	ASSERT_EQ(entries(dir), 0);
	/* the same file whole is kept */
	sfp_symbolizer__free(&s);
	if (ASSERT_OK(sfp_symbolizer__new(&o, &s)) &&
	    ASSERT_OK(sfp_symbolizer__get_dso(s, 0, LIBC, NULL, 0, &d)))
		ASSERT_EQ(entries(dir), 1);
out:
	sfp_symbolizer__free(&s);
}
