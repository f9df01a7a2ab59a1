// SPDX-License-Identifier: MIT
/*
 * Go function tables (gopclntab.c) on real Go binaries of this machine:
 *  - Debian's Go compiler (stripped, Go 1.19 layout): every function of
 *    the table is read, and names a spread of addresses (starts, middles,
 *    last bytes) as `go tool addr2line` does on the same binary, directly
 *    and through the symbolizer; the ELF entry point is the runtime's
 *    `_rt0_amd64_linux` (readelf's e_entry, the Go runtime's name);
 *  - a Go 1.20+ binary when the machine has one (Go 1.20's layout can not
 *    be built here: Debian 12 has Go 1.19 only): read whole, its entry
 *    point named;
 *  - a Go program built here (go build): its .symtab and its table agree,
 *    and .symtab names win where it has them;
 *  - damaged copies of the compiler's table: a bad header is refused
 *    with -EBADMSG, a damaged entry skipped and counted, an older layout
 *    refused with -ENOTSUP, every truncation survived.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "elf/elf.h"
#include "elf/gopclntab.h"
#include "symbols/internal.h"
#include "test.h"

#define GO_COMPILE "/usr/lib/go-1.19/pkg/tool/linux_amd64/compile"
/* A Go 1.24 binary of the Google Cloud CLI, where installed. */
#define GO_NEW "/usr/lib/google-cloud-sdk/bin/gcloud-crc32c"

static uint64_t entry_point(struct sfp_elf *e)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(sfp_elf_handle(e), &eh))
		return 0;
	return eh.e_entry;
}

/* The compiler's table read into t (finished). */
static bool load(const char *path, struct sfp_elf **e, struct sfp_symtab *t,
		 struct sfp_gopclntab_stats *st)
{
	int n;

	memset(t, 0, sizeof(*t));
	*e = NULL;
	if (!ASSERT_EQ(sfp_elf_open(path, e), 0))
		return false;
	n = sfp_gopclntab_load(t, *e, st);
	if (!ASSERT_TRUE(n > 0))
		return false;
	sfp_symtab_finish(t);
	return true;
}

TEST(gopclntab_compiler_whole)
{
	struct sfp_gopclntab_stats st;
	struct sfp_symtab t;
	struct sfp_elf *e;
	struct sfp_sym *s;
	size_t i;

	if (!load(GO_COMPILE, &e, &t, &st))
		goto out;
	ASSERT_EQ(st.version, 118);
	ASSERT_EQ(st.bad, 0);
	ASSERT_EQ(st.added, st.nfunc);
	ASSERT_TRUE(st.nfunc > 10000);
	ASSERT_FALSE(st.text_guessed);
	/* functions follow each other: the table leaves no hole */
	for (i = 0; i + 1 < t.nr; i++)
		if (!ASSERT_EQ(t.syms[i].start + t.syms[i].size,
			       t.syms[i + 1].start))
			break;
	s = sfp_symtab_find(&t, entry_point(e));
	if (ASSERT_TRUE(s != NULL))
		ASSERT_TRUE(!strcmp(s->name, "_rt0_amd64_linux"));
out:
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
}

/* go tool addr2line's names of addrs[0..n) into names (malloc()ed). */
static bool addr2line(const char *bin, const uint64_t *addrs, size_t n,
		      char **names)
{
	char cmd[512], in[64], line[4096];
	FILE *f, *p;
	size_t i;
	bool ok = true;

	snprintf(in, sizeof(in), "%s/go-addrs", test_tmp_dir());
	f = fopen(in, "w");
	if (!ASSERT_TRUE(f != NULL))
		return false;
	for (i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "go tool addr2line '%s' < '%s'", bin, in);
	p = popen(cmd, "r");
	if (!ASSERT_TRUE(p != NULL))
		return false;
	for (i = 0; i < n; i++) {
		/* name, then file:line */
		if (!fgets(line, sizeof(line), p)) {
			ok = false;
			break;
		}
		line[strcspn(line, "\n")] = 0;
		names[i] = strdup(line);
		if (!fgets(line, sizeof(line), p)) {
			ok = false;
			break;
		}
	}
	if (pclose(p) != 0)
		ok = false;
	return ASSERT_TRUE(ok);
}

TEST(gopclntab_compiler_equals_addr2line)
{
	struct sfp_symbolizer *sz = NULL;
	struct sfp_symtab t;
	struct sfp_elf *e;
	uint64_t *addrs = NULL;
	char **names = NULL;
	size_t i, n = 0, step, bad = 0, badsz = 0;

	if (!load(GO_COMPILE, &e, &t, NULL))
		goto out;
	/* about 300 functions spread over the table, each at 3 places */
	step = t.nr / 300 + 1;
	addrs = calloc(3 * (t.nr / step + 1), sizeof(*addrs));
	names = calloc(3 * (t.nr / step + 1), sizeof(*names));
	if (!ASSERT_TRUE(addrs && names))
		goto out;
	for (i = 0; i < t.nr; i += step) {
		addrs[n++] = t.syms[i].start;
		addrs[n++] = t.syms[i].start + t.syms[i].size / 2;
		addrs[n++] = t.syms[i].start + t.syms[i].size - 1;
	}
	if (!addr2line(GO_COMPILE, addrs, n, names))
		goto out;
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .no_cache = true);

		if (!ASSERT_EQ(sfp_symbolizer__new(&o, &sz), 0))
			goto out;
	}
	for (i = 0; i < n; i++) {
		struct sfp_sym *s = sfp_symtab_find(&t, addrs[i]);
		struct sfp_symbol sym;

		if (!s || !names[i] || strcmp(s->name, names[i])) {
			if (!bad++)
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%#" PRIx64 ": table %s, addr2line %s",
						 addrs[i], s ? s->name : "(none)",
						 names[i] ? names[i] : "(none)");
		}
		if (sfp_symbolizer__dso(sz, GO_COMPILE, NULL, 0, addrs[i],
					&sym) ||
		    !names[i] || strcmp(sym.name, names[i])) {
			if (!badsz++)
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%#" PRIx64 ": symbolizer differs from addr2line %s",
						 addrs[i],
						 names[i] ? names[i] : "(none)");
		}
	}
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(badsz, 0);
	ASSERT_TRUE(n >= 600);
out:
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(addrs);
	sfp_symbolizer__free(&sz);
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
}

TEST(gopclntab_go120_layout)
{
	struct sfp_gopclntab_stats st;
	struct sfp_symtab t;
	struct sfp_elf *e;
	struct sfp_sym *s;

	if (access(GO_NEW, R_OK)) {
		test_skip("no Go 1.20+ binary here (%s)", GO_NEW);
		return;
	}
	if (!load(GO_NEW, &e, &t, &st))
		goto out;
	ASSERT_EQ(st.version, 120);
	ASSERT_EQ(st.bad, 0);
	ASSERT_EQ(st.added, st.nfunc);
	s = sfp_symtab_find(&t, entry_point(e));
	if (ASSERT_TRUE(s != NULL))
		ASSERT_TRUE(!strcmp(s->name, "_rt0_amd64_linux"));
	ASSERT_TRUE(sfp_symtab_find(&t, 0) == NULL);
out:
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
}

/* The compiler's table copied out, to damage. */
static uint8_t *table_copy(size_t *size)
{
	const uint8_t *data;
	struct sfp_elf *e = NULL;
	uint8_t *copy = NULL;
	uint64_t off;
	bool swap;

	if (!ASSERT_EQ(sfp_elf_open(GO_COMPILE, &e), 0))
		return NULL;
	if (ASSERT_EQ(sfp_gotab_find(e, &data, size, &off, &swap), 0) &&
	    (copy = malloc(*size)))
		memcpy(copy, data, *size);
	sfp_elf_close(&e);
	return copy;
}

static int parse(const uint8_t *d, size_t n, struct sfp_gopclntab_stats *st)
{
	struct sfp_symtab t = { 0 };
	int r = sfp_gopclntab_parse(&t, d, n, false, 0x401000, "test", 0, st);

	sfp_symtab_finish(&t);
	sfp_symtab_free(&t);
	return r;
}

TEST(gopclntab_damaged)
{
	struct sfp_gopclntab_stats st, ref;
	uint8_t *d, *m;
	size_t n, cut;
	uint32_t funcoff, u;
	uint64_t pcln;

	d = table_copy(&n);
	if (!d)
		return;
	m = malloc(n);
	if (!ASSERT_TRUE(m != NULL))
		goto out;
	if (!ASSERT_TRUE(parse(d, n, &ref) > 0))
		goto out;
	/* bad magic, pointer size, padding; the old layout */
	memcpy(m, d, n);
	m[0] = 0x12;	/* (0xf1 would be the 1.20 magic: the same names) */
	ASSERT_EQ(parse(m, n, &st), -EBADMSG);
	memcpy(m, d, n);
	m[7] = 3;
	ASSERT_EQ(parse(m, n, &st), -EBADMSG);
	memcpy(m, d, n);
	m[4] = 1;
	ASSERT_EQ(parse(m, n, &st), -EBADMSG);
	memcpy(m, d, n);
	u = 0xfffffffb;
	memcpy(m, &u, 4);
	ASSERT_EQ(parse(m, n, &st), -ENOTSUP);
	/* a function count past the table; a function table offset past it */
	memcpy(m, d, n);
	memset(m + 8, 0x7f, 4);
	ASSERT_EQ(parse(m, n, &st), -EBADMSG);
	memcpy(m, d, n);
	memset(m + 8 + 7 * 8, 0x7f, 8);
	ASSERT_EQ(parse(m, n, &st), -EBADMSG);
	/* function 5's record: its name offset negative, then its entry
	 * not the function table's */
	memcpy(&pcln, d + 8 + 7 * 8, 8);
	memcpy(&funcoff, d + pcln + 5 * 8 + 4, 4);
	memcpy(m, d, n);
	u = 0x80000000u;
	memcpy(m + pcln + funcoff + 4, &u, 4);
	ASSERT_EQ(parse(m, n, &st), (int)ref.added - 1);
	ASSERT_EQ(st.bad, 1);
	memcpy(m, d, n);
	m[pcln + funcoff] ^= 0x10;
	ASSERT_EQ(parse(m, n, &st), (int)ref.added - 1);
	ASSERT_EQ(st.bad, 1);
	/* the function table out of order at 7 */
	memcpy(m, d, n);
	memset(m + pcln + 8 * 8, 0xff, 4);
	ASSERT_TRUE(parse(m, n, &st) < (int)ref.added);
	ASSERT_TRUE(st.bad >= 1);
	/* every truncation: an error or fewer functions, never a crash */
	for (cut = 0; cut < n; cut += n / 97 + 1) {
		int r = parse(d, cut, &st);

		if (!ASSERT_TRUE(r == -EBADMSG || (r >= 0 &&
						   r <= (int)ref.added)))
			break;
	}
out:
	free(m);
	free(d);
}

/*
 * A Go program built here, unstripped (its .symtab) and stripped by
 * objcopy (same addresses): the function table names every function as
 * .symtab does, at the same start (but for go_renamed()); the symbolizer
 * takes .symtab's symbols where it has them (so the renamed ones come out
 * as .symtab names them, as perf does) and the table's where it is
 * stripped (as go tool addr2line does).
 */
static const char go_prog[] =
	"package main\n"
	"import (\"fmt\"; \"os\")\n"
	"type T struct{ n int }\n"
	"//go:noinline\n"
	"func (t *T) Work(k int) int { s := 0; for i := 0; i < k; i++ { s += i * t.n }; return s }\n"
	"func main() { t := &T{n: len(os.Args)}; fmt.Println(t.Work(1000)) }\n";

static bool build_go(char *bin, size_t n, char *stripped, size_t sn)
{
	char src[512], cmd[4096];
	FILE *f;

	snprintf(src, sizeof(src), "%s/prog.go", test_tmp_dir());
	snprintf(bin, n, "%s/prog", test_tmp_dir());
	snprintf(stripped, sn, "%s/prog-stripped", test_tmp_dir());
	f = fopen(src, "w");
	if (!ASSERT_TRUE(f != NULL))
		return false;
	fputs(go_prog, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && GOCACHE='%s/gocache' GOFLAGS= GO111MODULE=off go build -o '%s' '%s' && objcopy --strip-all '%s' '%s'",
		 test_tmp_dir(), test_tmp_dir(), bin, src, bin, stripped);
	return ASSERT_EQ(system(cmd), 0);
}

/*
 * Go's linker names a few functions differently in .symtab and in the
 * function table: assembly functions get ".abi0" in .symtab
 * ("internal/cpu.cpuid.abi0"), and array lengths in generated names are
 * "[...]" in the table ("type..eq.[5]T" is "type..eq.[...]T").
 */
static bool go_renamed(const char *symtab, const char *table)
{
	while (*table) {
		if (!strncmp(table, "[...]", 5) && *symtab == '[') {
			const char *p = symtab + 1;

			while (*p >= '0' && *p <= '9')
				p++;
			if (p > symtab + 1 && *p == ']') {
				symtab = p + 1;
				table += 5;
				continue;
			}
		}
		if (*symtab++ != *table++)
			return false;
	}
	return !*symtab || !strcmp(symtab, ".abi0");
}

TEST(gopclntab_agrees_with_symtab)
{
	char bin[512], stripped[512];
	struct sfp_symbolizer *sz = NULL;
	struct sfp_symtab elf = { 0 }, go = { 0 };
	struct sfp_elf *e = NULL;
	size_t i, differ = 0, checked = 0, renamed = 0;

	if (!build_go(bin, sizeof(bin), stripped, sizeof(stripped)))
		return;
	if (!ASSERT_EQ(sfp_elf_open(bin, &e), 0) ||
	    !ASSERT_TRUE(sfp_symtab_load_elf(&elf, e, SFP_LOAD_SYMTAB) > 0) ||
	    !ASSERT_TRUE(sfp_gopclntab_load(&go, e, NULL) > 1000))
		goto out;
	sfp_symtab_finish(&elf);
	sfp_symtab_finish(&go);
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .no_cache = true);

		if (!ASSERT_EQ(sfp_symbolizer__new(&o, &sz), 0))
			goto out;
	}
	for (i = 0; i < go.nr; i++) {
		const struct sfp_sym *g = &go.syms[i];
		struct sfp_sym *s = sfp_symtab_find(&elf, g->start);
		struct sfp_symbol a, b;

		if (!s || s->start != g->start ||
		    (strcmp(s->name, g->name) && !go_renamed(s->name, g->name))) {
			if (!differ++)
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%#" PRIx64 ": .symtab %s, table %s",
						 g->start, s ? s->name : "(none)",
						 g->name);
			continue;
		}
		renamed += !!strcmp(s->name, g->name);
		/* unstripped: .symtab's symbol (so .symtab's name where Go
		 * renamed it); stripped: the table's */
		if (!ASSERT_EQ(sfp_symbolizer__dso(sz, bin, NULL, 0, g->start,
						   &a), 0) ||
		    !ASSERT_EQ(sfp_symbolizer__dso(sz, stripped, NULL, 0,
						   g->start, &b), 0))
			break;
		if (!ASSERT_EQ(a.size, s->size) ||
		    !ASSERT_EQ(b.size, g->size) ||
		    !ASSERT_TRUE(!strcmp(a.name, s->name)) ||
		    !ASSERT_TRUE(!strcmp(b.name, g->name)))
			break;
		checked++;
	}
	ASSERT_EQ(differ, 0);
	ASSERT_EQ(checked, go.nr);
	/* some names tell the two sources apart, most are the same */
	ASSERT_TRUE(renamed > 0 && renamed < go.nr / 4);
out:
	sfp_symbolizer__free(&sz);
	sfp_symtab_free(&elf);
	sfp_symtab_free(&go);
	sfp_elf_close(&e);
}
