// SPDX-License-Identifier: MIT
/*
 * The symbolizer against real binaries of this machine and the binutils
 * tools that read them: readelf (symbol tables), c++filt (demangling),
 * objdump (PLT labels), addr2line (lines and inline chains), objcopy /
 * strip / xz (separate debug files and MiniDebugInfo built here).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "symbols/internal.h"
#include "test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static const char *prog_path(const char *name)
{
	static char buf[4][1024];
	static int k;
	const char *b = getenv("SFP_BUILD");
	char *p = buf[k++ & 3];

	char rel[1024];

	/* Absolute: some tests hand it to shell commands run elsewhere. */
	snprintf(rel, sizeof(rel), "%s/tests/progs/%s", b && *b ? b : "build",
		 name);
	if (!realpath(rel, p))
		snprintf(p, sizeof(buf[0]), "%s", rel);
	return p;
}

static __attribute__((unused)) const char *tmpdir(void)
{
	static char dir[600];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/symbols", test_tmp_dir());
		mkdir(dir, 0700);
	}
	return dir;
}

static __attribute__((unused)) bool have_tool(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static __attribute__((unused)) int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "  command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* libc's own definition (not a sanitizer's interceptor of the name). */
static void *libc_sym(const char *name)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);
	return p;
}

static struct sfp_symbolizer *new_symbolizer(const char *const *dirs,
					     bool demangle)
{
	struct sfp_symbolizer *s = NULL;
	SFP_OPTS(sfp_symbolizer_opts, o, .debug_dirs = dirs,
		 .no_demangle = !demangle);

	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
		return NULL;
	return s;
}

/* FUNC symbols of readelf -sW: address -> every name at that address. */
struct rsym {
	uint64_t addr;
	uint64_t size;
	char name[512];
};

static int read_readelf(const char *path, const char *flag, struct rsym **out)
{
	char cmd[1200], line[1024];
	struct rsym *v = *out;
	size_t n = 0, cap = 0;
	FILE *f;

	/* Appends to *out (n counted from a NULL-terminated end marker). */
	if (v)
		for (; v[n].name[0]; n++)
			;
	cap = n;

	snprintf(cmd, sizeof(cmd), "readelf -W %s '%s' 2>/dev/null", flag, path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char type[32], bind[32], vis[32], ndx[32], name[512];
		unsigned long long value, size;
		unsigned int num;
		char *at;

		if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s %511s", &num,
			   &value, &size, type, bind, vis, ndx, name) != 8)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) ||
		    !strcmp(ndx, "UND") || !value)
			continue;
		at = strchr(name, '@');	/* version suffix of .dynsym names */
		if (at)
			*at = 0;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n].addr = value;
		v[n].size = size;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		n++;
	}
	pclose(f);
	v = realloc(v, (n + 1) * sizeof(*v));
	v[n].name[0] = 0;
	*out = v;
	return (int)n;
}

/*
 * Is name among readelf's names at addr?  readelf prints versions of
 * .dynsym names as name@VER, which the test strips; .symtab names may
 * contain the same text literally (.symver), so compare before the '@'.
 */
static bool rsym_has(const struct rsym *v, int n, uint64_t addr,
		     const char *name)
{
	size_t len = strcspn(name, "@");

	for (int i = 0; i < n && v[i].name[0]; i++)
		if (v[i].addr == addr && strlen(v[i].name) == len &&
		    !strncmp(v[i].name, name, len))
			return true;
	return false;
}

/* The separate debug file of path by its build-id, per readelf -n. */
static bool debug_file_of(const char *path, char *out, size_t len)
{
	char cmd[1200], id[256] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'",
		 path);
	f = popen(cmd, "r");
	if (!f)
		return false;
	if (!fgets(id, sizeof(id), f))
		id[0] = 0;
	pclose(f);
	id[strcspn(id, "\n")] = 0;
	if (strlen(id) < 4)
		return false;
	snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	return access(out, R_OK) == 0;
}

/*
 * Every FUNC symbol of readelf FLAG resolves to itself or an alias of it
 * (an alias from any table of the file or of its debug file).
 */
static void check_against_readelf(const char *path, const char *flag,
				  int min_syms)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbolizer_dso *d;
	struct rsym *v = NULL, *all = NULL;
	char dbg[1024];
	int n, i, bad = 0;

	if (!s)
		return;
	n = read_readelf(path, flag, &v);
	if (!ASSERT_GE(n, min_syms))
		goto out;
	read_readelf(path, "-s", &all);
	if (debug_file_of(path, dbg, sizeof(dbg)))
		read_readelf(dbg, "-s", &all);
	if (!ASSERT_OK(sfp_symbolizer__get_dso(s, -1, path, NULL, 0, &d)))
		goto out;
	for (i = 0; i < n; i++) {
		struct sfp_symbol sym;
		uint64_t probe = v[i].addr + (v[i].size ? v[i].size - 1 : 0);

		/* Both the first and last byte belong to the symbol. */
		if (sfp_symbolizer_dso__find(d, v[i].addr, &sym) ||
		    sym.start != v[i].addr ||
		    !rsym_has(all, INT32_MAX, sym.start, sym.raw_name) ||
		    (v[i].size && sym.size != v[i].size &&
		     sym.size < v[i].size)) {
			if (bad++ < 5)
				fprintf(stderr, "  %s: %s at %#" PRIx64 " -> %s\n",
					path, v[i].name, v[i].addr,
					sfp_symbolizer_dso__find(d, v[i].addr,
								 &sym) ?
					"(none)" : sym.raw_name);
			continue;
		}
		if (sfp_symbolizer_dso__find(d, probe, &sym) ||
		    sym.start != v[i].addr) {
			if (bad++ < 5)
				fprintf(stderr, "  %s: last byte of %s missed\n",
					path, v[i].name);
		}
	}
	ASSERT_EQ(bad, 0);
out:
	free(v);
	free(all);
	sfp_symbolizer__free(&s);
}

TEST(symbols_prog_symtab_vs_readelf)
{
	check_against_readelf(prog_path("symprog"), "-s", 5);
}

TEST(symbols_libc_dynsym_vs_readelf)
{
	check_against_readelf(LIBC, "--dyn-syms", 1000);
}

/* Aliases: perf's choice (sized, non-weak, global, fewer '_', longer). */
TEST(symbols_alias_choice)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbol a, b;
	struct rsym *v = NULL;
	int n, i;
	uint64_t global = 0, weak = 0;

	if (!s)
		return;
	n = read_readelf(prog_path("symprog"), "-s", &v);
	for (i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "sp_global"))
			global = v[i].addr;
		if (!strcmp(v[i].name, "sp_weak"))
			weak = v[i].addr;
	}
	if (ASSERT_NE(global, 0) &&
	    ASSERT_OK(sfp_symbolizer__dso(s, prog_path("symprog"), NULL, 0,
					  global, &a))) {
		/* sp_global and sp_alias: same binding, longer name wins. */
		ASSERT_STREQ(a.name, "sp_global");
		ASSERT_TRUE(a.flags & SFP_SYM_GLOBAL);
	}
	if (ASSERT_NE(weak, 0) &&
	    ASSERT_OK(sfp_symbolizer__dso(s, prog_path("symprog"), NULL, 0,
					  weak, &b))) {
		ASSERT_STREQ(b.name, "sp_weak");
		ASSERT_TRUE(b.flags & SFP_SYM_WEAK);
	}
	/* libc: printf has the alias _IO_printf; perf shows printf. */
	{
		void *p = libc_sym("printf");
		Dl_info info;

		if (ASSERT_NOT_NULL(p) && dladdr(p, &info) &&
		    ASSERT_OK(sfp_symbolizer__dso(s, LIBC, NULL, 0,
						  (uint64_t)((char *)p -
							     (char *)info.dli_fbase),
						  &a)))
			ASSERT_STREQ(a.name, "printf");
	}
	free(v);
	sfp_symbolizer__free(&s);
}

/*
 * A symbolizer that gives back the pages of the files it read (the
 * agent's): names stay right, and valid, after each release.
 */
TEST(symbols_release_pages_names_stay)
{
	SFP_OPTS(sfp_symbolizer_opts, o, .no_cache = true,
		 .flags = SFP_SYMBOLIZER_RELEASE_PAGES);
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbol a, b;
	void *p = libc_sym("printf");
	Dl_info info;
	uint64_t off;
	char name[64];

	if (!ASSERT_NOT_NULL(p) || !ASSERT_TRUE(dladdr(p, &info)) ||
	    !ASSERT_OK(sfp_symbolizer__new(&o, &s)))
		return;
	off = (uint64_t)((char *)p - (char *)info.dli_fbase);
	if (ASSERT_OK(sfp_symbolizer__dso(s, LIBC, NULL, 0, off, &a))) {
		ASSERT_STREQ(a.name, "printf");
		snprintf(name, sizeof(name), "%s", a.name);
		/* the table is made: libc's file is mapped, and given back */
		ASSERT_TRUE(sfp_symbolizer__release_pages(s) > 0);
		ASSERT_STREQ(a.name, name);	/* the old pointer still reads */
		if (ASSERT_OK(sfp_symbolizer__dso(s, LIBC, NULL, 0, off, &b)))
			ASSERT_STREQ(b.name, "printf");
	}
	sfp_symbolizer__free(&s);
}

/* The string pool keeps every string whole across its growing chunks, a
 * string longer than a chunk included, and a pool of a few names costs
 * little (it started at 64 KiB, for each table: the agent paid it for
 * every file it symbolized). */
TEST(symbols_strpool_chunks)
{
	static char big[100000];
	struct sfp_strpool pool = { 0 };
	const char *got[3000];
	char want[64];
	struct mallinfo2 before, after;
	size_t i;

	before = mallinfo2();
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "name_%zu", i);
		got[i] = sfp_strpool_add(&pool, want, strlen(want));
		if (!ASSERT_NOT_NULL(got[i]))
			goto out;
	}
	after = mallinfo2();
	/* (ASan's allocator leaves glibc's counters alone: 0 there) */
	ASSERT_TRUE(after.uordblks - before.uordblks < 4096);
	memset(big, 'x', sizeof(big) - 1);
	for (i = 3; i < 3000; i++) {
		if (i == 1500) {
			got[i] = sfp_strpool_add(&pool, big, sizeof(big) - 1);
		} else {
			snprintf(want, sizeof(want), "name_%zu_%.*s", i,
				 (int)(i % 40), "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
			got[i] = sfp_strpool_add(&pool, want, strlen(want));
		}
		if (!ASSERT_NOT_NULL(got[i]))
			goto out;
	}
	for (i = 0; i < 3000; i++) {
		if (i == 1500) {
			ASSERT_EQ(strlen(got[i]), sizeof(big) - 1);
			ASSERT_TRUE(!memcmp(got[i], big, sizeof(big) - 1));
			continue;
		}
		if (i < 3)
			snprintf(want, sizeof(want), "name_%zu", i);
		else
			snprintf(want, sizeof(want), "name_%zu_%.*s", i,
				 (int)(i % 40), "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
		if (!ASSERT_STREQ(got[i], want))
			break;
	}
out:
	sfp_strpool_free(&pool);
}

TEST(symbols_errors)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, true);
	struct sfp_symbolizer_dso *d = NULL;
	struct sfp_symbol sym;
	struct {
		struct sfp_symbolizer_opts o;
		char tail[16];
	} big;
	struct sfp_symbolizer *s2 = NULL;
	const uint8_t bogus_id[20] = { 1, 2, 3 };

	if (!s)
		return;
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "/nonexistent/lib.so", NULL,
					   0, &d), -ENOENT);
	ASSERT_TRUE(d == NULL);
	/* Cached failure answers the same. */
	ASSERT_ERR(sfp_symbolizer__dso(s, "/nonexistent/lib.so", NULL, 0, 0,
				       &sym), -ENOENT);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "/etc/passwd", NULL, 0, &d),
		   -ENOEXEC);
	/* A build-id that matches neither the file nor any debug dir. */
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, LIBC, bogus_id,
					   sizeof(bogus_id), &d), -ENOENT);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, LIBC, NULL, 65, &d), -EINVAL);
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, -1, LIBC, NULL, 0, &d))) {
		ASSERT_ERR(sfp_symbolizer_dso__find(d, 0, &sym), -ENOENT);
		ASSERT_ERR(sfp_symbolizer_dso__find(d, UINT64_MAX, &sym),
			   -ENOENT);
		uint64_t va;
		ASSERT_ERR(sfp_symbolizer_dso__vaddr(d, 0x1000, 0, 0x10, &va),
			   -ENOENT);
		ASSERT_ERR(sfp_symbolizer_dso__vaddr(d, 0x1000, 1ull << 40,
						     0x1000, &va), -ENOENT);
	}
	ASSERT_ERR(sfp_symbolizer__jit(s, 0, 0x1000, &sym), -EINVAL);
	/* Opts with unknown non-zero bytes are refused. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail[3] = 1;
	ASSERT_ERR(sfp_symbolizer__new(&big.o, &s2), -EINVAL);
	ASSERT_TRUE(s2 == NULL);
	big.tail[3] = 0;
	if (ASSERT_OK(sfp_symbolizer__new(&big.o, &s2)))
		sfp_symbolizer__free(&s2);
	ASSERT_TRUE(s2 == NULL);
	sfp_symbolizer__free(&s);
	sfp_symbolizer__free(&s);	/* idempotent */
}

/* vaddr(): our own libc mapping from /proc/self/maps, then a lookup. */
TEST(symbols_runtime_to_vaddr)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	void *fn = libc_sym("qsort");
	char line[1024], path[512];
	bool done = false;
	FILE *f;

	if (!s || !ASSERT_NOT_NULL(fn))
		goto out;
	f = fopen("/proc/self/maps", "r");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, pgoff;
		char perms[8];
		uint64_t va;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %511s", &lo, &hi,
			   perms, &pgoff, path) != 5)
			continue;
		if ((uintptr_t)fn < lo || (uintptr_t)fn >= hi)
			continue;
		if (!ASSERT_OK(sfp_symbolizer__get_dso(s, getpid(), path, NULL,
						       0, &d)) ||
		    !ASSERT_OK(sfp_symbolizer_dso__vaddr(d, lo, pgoff,
							 (uintptr_t)fn, &va)) ||
		    !ASSERT_OK(sfp_symbolizer_dso__find(d, va + 3, &sym)))
			break;
		ASSERT_STREQ(sym.name, "qsort");
		ASSERT_EQ(sym.offset, 3);
		/* Looked up through /proc/PID/root. */
		ASSERT_TRUE(!strncmp(sfp_symbolizer_dso__path(d), "/proc/", 6));
		done = true;
	}
	fclose(f);
	ASSERT_TRUE(done);
out:
	sfp_symbolizer__free(&s);
}

/* Demangled names of a g++ program equal c++filt's. */
TEST(symbols_cxx_demangle_vs_cxxfilt)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	char exe[700], cmd[2048], line[4096];
	struct rsym *v = NULL;
	int n, i, checked = 0, bad = 0;
	FILE *f;

	if (!have_tool("g++") || !have_tool("c++filt")) {
		test_skip("g++ or c++filt missing");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/cxxprog", tmpdir());
	if (!ASSERT_EQ(sh("g++ -O1 -g -o '%s' '%s/symbols/cxxprog.cc'", exe,
			  test_data_dir()), 0))
		return;
	s = new_symbolizer(NULL, true);
	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0, &d)))
		goto out;
	n = read_readelf(exe, "-s", &v);
	/* One c++filt run over all names, answers in the same order. */
	snprintf(cmd, sizeof(cmd), "%s/names.txt", tmpdir());
	f = fopen(cmd, "w");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", v[i].name);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "c++filt < '%s/names.txt'", tmpdir());
	f = popen(cmd, "r");
	for (i = 0; f && i < n && fgets(line, sizeof(line), f); i++) {
		struct sfp_symbol sym;

		line[strcspn(line, "\n")] = 0;
		if (strncmp(v[i].name, "_Z", 2))
			continue;
		if (sfp_symbolizer_dso__find(d, v[i].addr, &sym) ||
		    strcmp(sym.raw_name, v[i].name))
			continue;	/* an alias was chosen: compared elsewhere */
		checked++;
		if (strcmp(sym.name, line) && bad++ < 5)
			fprintf(stderr, "  %s: ours \"%s\", c++filt \"%s\"\n",
				v[i].name, sym.name, line);
	}
	if (f)
		pclose(f);
	ASSERT_GE(checked, 10);
	ASSERT_EQ(bad, 0);
	/* The program's own names are among them. */
	{
		char *dm = sfp_demangle("_ZNK6sfp_ns6Widget4frobEi");

		if (ASSERT_NOT_NULL(dm))
			ASSERT_STREQ(dm, "sfp_ns::Widget::frob(int) const");
		free(dm);
		ASSERT_TRUE(sfp_demangle("main") == NULL);
	}
	/* perf's style, without parameters: c++filt -p. */
	{
		struct sfp_symbolizer *s2 = NULL;
		SFP_OPTS(sfp_symbolizer_opts, o, .demangle_no_params = true);
		int checked2 = 0, bad2 = 0;

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s2)) ||
		    !ASSERT_OK(sfp_symbolizer__get_dso(s2, -1, exe, NULL, 0, &d))) {
			sfp_symbolizer__free(&s2);
			goto out;
		}
		snprintf(cmd, sizeof(cmd), "c++filt -p < '%s/names.txt'", tmpdir());
		f = popen(cmd, "r");
		for (i = 0; f && i < n && fgets(line, sizeof(line), f); i++) {
			struct sfp_symbol sym;

			line[strcspn(line, "\n")] = 0;
			if (strncmp(v[i].name, "_Z", 2) ||
			    sfp_symbolizer_dso__find(d, v[i].addr, &sym) ||
			    strcmp(sym.raw_name, v[i].name))
				continue;
			checked2++;
			if (strcmp(sym.name, line) && bad2++ < 5)
				fprintf(stderr, "  -p %s: ours \"%s\", c++filt \"%s\"\n",
					v[i].name, sym.name, line);
		}
		if (f)
			pclose(f);
		ASSERT_GE(checked2, 10);
		ASSERT_EQ(bad2, 0);
		sfp_symbolizer__free(&s2);
	}
out:
	free(v);
	sfp_symbolizer__free(&s);
}

/*
 * Rust v0 and legacy mangling, checked against c++filt.  c++filt runs
 * libiberty in verbose mode, which keeps crate disambiguators
 * ("[ca63f166dbe9294]"), legacy hashes ("::h0123...") and the types of
 * const generic arguments ("<10: usize>"); like perf and rustc's own {:#}
 * output we drop them, so those are removed from c++filt's answer before
 * comparing.
 */
static void drop_rust_hashes(char *s)
{
	char *p = s;

	/* "[ca63f166dbe9294]": a crate disambiguator (hex only). */
	while ((p = strchr(p, '[')) != NULL) {
		size_t n = strspn(p + 1, "0123456789abcdef");

		if (n && p[1 + n] == ']')
			memmove(p, p + n + 2, strlen(p + n + 2) + 1);
		else
			p++;
	}
	/* Const generic arguments: verbose mode adds their type ("10: usize"). */
	p = s;
	while ((p = strstr(p, ": ")) != NULL) {
		size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789");

		if (n && (p[2 + n] == '>' || p[2 + n] == ','))
			memmove(p, p + 2 + n, strlen(p + 2 + n) + 1);
		else
			p += 2;
	}
	p = strstr(s, "::h");
	if (p && strlen(p) == 3 + 16 &&
	    strspn(p + 3, "0123456789abcdef") == 16)
		*p = 0;
}

TEST(symbols_rust_demangle)
{
	static const char *const names[] = {
		"_RNvCs15kBYyAo9fc_7mycrate7example",
		"_ZN4core3fmt9Formatter3pad17h0123456789abcdefE",
	};
	char cmd[512], line[512];

	if (!have_tool("c++filt")) {
		test_skip("c++filt missing");
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *dm = sfp_demangle(names[i]);
		FILE *f;

		snprintf(cmd, sizeof(cmd), "c++filt '%s'", names[i]);
		f = popen(cmd, "r");
		if (!ASSERT_NOT_NULL(f) || !fgets(line, sizeof(line), f))
			line[0] = 0;
		if (f)
			pclose(f);
		line[strcspn(line, "\n")] = 0;
		drop_rust_hashes(line);
		if (ASSERT_NOT_NULL(dm))
			ASSERT_STREQ(dm, line);
		free(dm);
	}
}

/* func@plt names at the addresses objdump labels <func@plt>. */
static void check_plt(const char *path, int min)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbolizer_dso *d;
	char cmd[1200], line[1024];
	int checked = 0, bad = 0;
	FILE *f;

	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, path, NULL, 0, &d)))
		goto out;
	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char label[512];
		struct sfp_symbol sym;

		if (sscanf(line, "%llx <%511[^>]>:", &addr, label) != 2 ||
		    !strstr(label, "@plt") || strstr(label, "@plt-0x") ||
		    strstr(label, "@plt+0x"))
			continue;	/* PLT0 ("first@plt-0x10") */
		checked++;
		if (sfp_symbolizer_dso__find(d, addr, &sym) ||
		    strcmp(sym.name, label) || sym.start != addr ||
		    !(sym.flags & SFP_SYM_PLT)) {
			if (bad++ < 5)
				fprintf(stderr, "  %s: %#llx <%s> -> %s\n", path,
					addr, label,
					sfp_symbolizer_dso__find(d, addr, &sym) ?
					"(none)" : sym.name);
		}
	}
	pclose(f);
	ASSERT_GE(checked, min);
	ASSERT_EQ(bad, 0);
out:
	sfp_symbolizer__free(&s);
}

TEST(symbols_plt_vs_objdump_prog)
{
	check_plt(prog_path("symprog"), 4);
}

TEST(symbols_plt_vs_objdump_libc)
{
	check_plt(LIBC, 5);
}

TEST(symbols_plt_vs_objdump_libstdcxx)
{
	if (access("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", R_OK)) {
		test_skip("no libstdc++.so.6");
		return;
	}
	check_plt("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 100);
}

/* Address of any symbol (labels too) per nm, or 0. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[900], line[600], nm[512];
	unsigned long long a, r = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*c %511s", &a, nm) == 2 && !strcmp(nm, name))
			r = a;
	if (f)
		pclose(f);
	return r;
}

/*
 * Untyped labels in code are functions for perf (elf_sym__is_label():
 * STT_NOTYPE, not hidden or internal, in a section named *text*): ld.so's
 * `_start` and `_dl_start_user` are such labels, and perf names the
 * loader's entry frames after them.  A hidden label is not one, nor a
 * label in data, nor the linker's markers past the end of the code.
 */
TEST(symbols_code_labels)
{
	char src[700], exe[700];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	uint64_t start, user, hid, f, dlab;
	FILE *fp;

	snprintf(src, sizeof(src), "%s/labels.s", tmpdir());
	snprintf(exe, sizeof(exe), "%s/labels", tmpdir());
	fp = fopen(src, "w");
	if (!ASSERT_NOT_NULL(fp))
		return;
	fputs(".text\n.globl _start\n_start:\n nop\n nop\n"
	      "entry_user:\n nop\n call f\n"
	      ".globl hid\n.hidden hid\nhid:\n nop\n nop\n ret\n"
	      ".type f,@function\nf:\n nop\n ret\n.size f,.-f\n"
	      ".section .rodata\ndlab:\n .byte 1\n", fp);
	fclose(fp);
	if (sh("as -o '%s.o' '%s' && ld -o '%s' '%s.o' 2>/dev/null", exe, src,
	       exe, exe)) {
		test_skip("as/ld cannot build the test program");
		return;
	}
	start = nm_addr(exe, "_start");
	user = nm_addr(exe, "entry_user");
	hid = nm_addr(exe, "hid");
	f = nm_addr(exe, "f");
	dlab = nm_addr(exe, "dlab");
	if (!ASSERT_TRUE(start && user && hid && f && dlab))
		return;
	s = new_symbolizer(NULL, false);
	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0, &d)))
		goto out;
	if (ASSERT_OK(sfp_symbolizer_dso__find(d, start + 1, &sym))) {
		ASSERT_STREQ(sym.name, "_start");
		ASSERT_EQ(sym.offset, 1);
		ASSERT_EQ(sym.size, user - start);	/* up to the next label */
	}
	/* the hidden label does not cut entry_user short */
	if (ASSERT_OK(sfp_symbolizer_dso__find(d, hid + 1, &sym))) {
		ASSERT_STREQ(sym.name, "entry_user");
		ASSERT_EQ(sym.offset, hid + 1 - user);
	}
	if (ASSERT_OK(sfp_symbolizer_dso__find(d, f, &sym)))
		ASSERT_STREQ(sym.name, "f");
	/* a data label names nothing */
	if (!sfp_symbolizer_dso__find(d, dlab, &sym))
		ASSERT_TRUE(strcmp(sym.name, "dlab") != 0);
	/* _start, entry_user, f: not hid, dlab, __bss_start, _edata, _end */
	ASSERT_EQ(sfp_symbolizer_dso__num_symbols(d), 3);
out:
	sfp_symbolizer__free(&s);
}

/*
 * The lazy-binding header of .plt is named ".plt" (objdump's section
 * label; perf 6.3+), not the size-less `_init` stretched over it (perf
 * 6.1's "_init+0x26") and not [unknown]; the stubs after it keep objdump's
 * names.  With .plt.sec (IBT) the header symbol covers all of .plt.
 */
static void check_plt_header(const char *exe, bool ibt)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	char cmd[900], line[600], name[64];
	unsigned long long plt = 0, pltsize = 0, a, sz;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", exe);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ']');

		if (p && sscanf(p + 1, " %63s %*s %llx %*x %llx", name, &a, &sz) == 3 &&
		    !strcmp(name, ".plt")) {
			plt = a;
			pltsize = sz;
		}
	}
	if (f)
		pclose(f);
	if (!ASSERT_TRUE(plt && pltsize > 16) || !s ||
	    !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0, &d)))
		goto out;
	if (ASSERT_OK(sfp_symbolizer_dso__find(d, plt + 6, &sym))) {
		ASSERT_STREQ(sym.name, ".plt");
		ASSERT_EQ(sym.offset, 6);
		ASSERT_EQ(sym.start, plt);
		ASSERT_EQ(sym.size, ibt ? pltsize : 16);
	}
	if (!ibt && ASSERT_OK(sfp_symbolizer_dso__find(d, plt + 16, &sym))) {
		size_t n = strlen(sym.name);

		ASSERT_TRUE(n > 4 && !strcmp(sym.name + n - 4, "@plt"));
	}
out:
	sfp_symbolizer__free(&s);
}

TEST(symbols_plt_header)
{
	char src[700], exe[700], exe2[700];

	snprintf(src, sizeof(src), "%s/plthdr.c", tmpdir());
	snprintf(exe, sizeof(exe), "%s/plthdr", tmpdir());
	snprintf(exe2, sizeof(exe2), "%s/plthdr-ibt", tmpdir());
	if (sh("printf '#include <stdio.h>\\n#include <stdlib.h>\\n"
	       "int main(void) { puts(\"x\"); return rand() & 1; }\\n' > '%s'",
	       src) ||
	    sh("cc -O1 -Wl,-z,lazy -o '%s' '%s' 2>/dev/null", exe, src)) {
		test_skip("cc cannot build the test program");
		return;
	}
	check_plt_header(exe, false);
	/* perf 6.1 names the header after _init: the reason for the rule */
	if (!sh("cc -O1 -fcf-protection=full -Wl,-z,lazy,-z,ibtplt -o '%s' '%s' 2>/dev/null",
		exe2, src) &&
	    !sh("readelf -SW '%s' | grep -q '\\.plt\\.sec'", exe2))
		check_plt_header(exe2, true);
}

/* Address of a symbol per readelf, or 0. */
static uint64_t readelf_addr(const char *path, const char *name)
{
	struct rsym *v = NULL;
	uint64_t a = 0;
	int n = read_readelf(path, "-s", &v);

	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			a = v[i].addr;
	free(v);
	return a;
}

/* Name at addr in path with these debug dirs, or NULL (static buffer). */
static const char *name_at(const char *path, const char *const *dirs,
			   uint64_t addr, char *dbg, size_t dbglen)
{
	static char name[512];
	struct sfp_symbolizer *s = new_symbolizer(dirs, false);
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	const char *r = NULL;

	if (dbg)
		dbg[0] = 0;
	if (s && !sfp_symbolizer__get_dso(s, -1, path, NULL, 0, &d) &&
	    !sfp_symbolizer_dso__find(d, addr, &sym)) {
		snprintf(name, sizeof(name), "%s", sym.name);
		r = name;
		if (dbg)
			snprintf(dbg, dbglen, "%s",
				 sfp_symbolizer_dso__debug_path(d));
	}
	sfp_symbolizer__free(&s);
	return r;
}

/*
 * MiniDebugInfo made with the Fedora recipe: local function symbols that
 * .dynsym lacks go into an xz-compressed ELF in .gnu_debugdata of the
 * stripped binary.
 */
TEST(symbols_minidebuginfo)
{
	const char *const nodirs[] = { "/nonexistent", NULL };
	const char *prog = prog_path("symprog");
	const char *t = tmpdir();
	uint64_t leaf = readelf_addr(prog, "sp_static_leaf");
	const char *nm;

	if (!have_tool("xz") || !have_tool("objcopy")) {
		test_skip("xz or objcopy missing");
		return;
	}
	if (!ASSERT_NE(leaf, 0))
		return;
	if (!ASSERT_EQ(sh("set -e; cd '%s'; cp '%s' mini; "
			  "nm -D mini --format=posix --defined-only | awk '{print $1}' | sort > dynsyms; "
			  "nm mini --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' | sort > funcsyms; "
			  "comm -13 dynsyms funcsyms > keep_symbols; "
			  "objcopy --only-keep-debug mini mini.dbg; "
			  "objcopy -S --remove-section .gdb_index --remove-section .comment "
			  "--keep-symbols=keep_symbols mini.dbg mini_debuginfo; "
			  "rm -f mini_debuginfo.xz; xz mini_debuginfo; "
			  "strip --strip-all -R .comment mini; cp mini stripped; "
			  "objcopy --add-section .gnu_debugdata=mini_debuginfo.xz mini",
			  t, prog), 0))
		return;
	char path[700], stripped[700];

	snprintf(path, sizeof(path), "%s/mini", t);
	snprintf(stripped, sizeof(stripped), "%s/stripped", t);
	/* Without the section the local name is gone ... */
	ASSERT_TRUE(name_at(stripped, nodirs, leaf, NULL, 0) == NULL);
	/* ... with it, it is back. */
	nm = name_at(path, nodirs, leaf, NULL, 0);
	if (ASSERT_NOT_NULL(nm))
		ASSERT_STREQ(nm, "sp_static_leaf");
	/* A corrupt .gnu_debugdata is ignored, not fatal. */
	if (ASSERT_EQ(sh("set -e; cd '%s'; head -c 100 mini_debuginfo.xz > bad.xz; "
			 "cp stripped badmini; "
			 "objcopy --add-section .gnu_debugdata=bad.xz badmini", t), 0)) {
		snprintf(path, sizeof(path), "%s/badmini", t);
		ASSERT_TRUE(name_at(path, nodirs, leaf, NULL, 0) == NULL);
		uint64_t mainaddr = readelf_addr(prog, "main");
		/* main is not in .dynsym of a non-exported executable either */
		(void)mainaddr;
	}
}

/* Separate debug files: debuglink (3 places) and build-id. */
TEST(symbols_debug_files)
{
	const char *prog = prog_path("symprog");
	const char *t = tmpdir();
	uint64_t leaf = readelf_addr(prog, "sp_static_leaf");
	char dirbuf[700], path[700], dbg[1500], want[1500];
	const char *dirs[] = { dirbuf, NULL };
	const char *nm;

	if (!ASSERT_NE(leaf, 0))
		return;
	snprintf(dirbuf, sizeof(dirbuf), "%s/dbgroot", t);
	if (!ASSERT_EQ(sh("set -e; cd '%s'; rm -rf dl dbgroot bid; mkdir -p dl/.debug bid dbgroot; "
			  "objcopy --only-keep-debug '%s' prog.debug; "
			  "strip --strip-all '%s' -o dl/prog; "
			  "objcopy --add-gnu-debuglink=prog.debug dl/prog; "
			  "strip --strip-all '%s' -o bid/prog",
			  t, prog, prog, prog), 0))
		return;
	snprintf(path, sizeof(path), "%s/dl/prog", t);
	/* No debug file anywhere yet. */
	ASSERT_TRUE(name_at(path, dirs, leaf, NULL, 0) == NULL);

	/* 1. Next to the file. */
	sh("cp '%s/prog.debug' '%s/dl/prog.debug'", t, t);
	nm = name_at(path, dirs, leaf, dbg, sizeof(dbg));
	snprintf(want, sizeof(want), "%s/dl/prog.debug", t);
	if (ASSERT_NOT_NULL(nm)) {
		ASSERT_STREQ(nm, "sp_static_leaf");
		ASSERT_STREQ(dbg, want);
	}
	/* 2. In .debug/. */
	sh("mv '%s/dl/prog.debug' '%s/dl/.debug/prog.debug'", t, t);
	nm = name_at(path, dirs, leaf, dbg, sizeof(dbg));
	snprintf(want, sizeof(want), "%s/dl/.debug/prog.debug", t);
	if (ASSERT_NOT_NULL(nm)) {
		ASSERT_STREQ(nm, "sp_static_leaf");
		ASSERT_STREQ(dbg, want);
	}
	/* 3. Under DEBUGDIR/<dir of the file>/. */
	sh("mkdir -p '%s/dbgroot%s/dl' && mv '%s/dl/.debug/prog.debug' '%s/dbgroot%s/dl/'",
	   t, t, t, t, t);
	nm = name_at(path, dirs, leaf, dbg, sizeof(dbg));
	snprintf(want, sizeof(want), "%s/dbgroot%s/dl/prog.debug", t, t);
	if (ASSERT_NOT_NULL(nm)) {
		ASSERT_STREQ(nm, "sp_static_leaf");
		ASSERT_STREQ(dbg, want);
	}
	/* A debuglink target of another program is rejected (build-id). */
	sh("rm -f '%s/dbgroot%s/dl/prog.debug'; objcopy --only-keep-debug '%s/cxxprog' '%s/dl/prog.debug' 2>/dev/null || cp /bin/true '%s/dl/prog.debug'",
	   t, t, t, t, t);
	ASSERT_TRUE(name_at(path, dirs, leaf, NULL, 0) == NULL);

	/* 4. By build-id, no debuglink at all. */
	if (ASSERT_EQ(sh("set -e; cd '%s'; id=$(readelf -n bid/prog | sed -n 's/.*Build ID: //p'); "
			 "d=dbgroot/.build-id/$(echo $id | cut -c1-2); mkdir -p $d; "
			 "cp prog.debug $d/$(echo $id | cut -c3-).debug", t), 0)) {
		snprintf(path, sizeof(path), "%s/bid/prog", t);
		nm = name_at(path, dirs, leaf, dbg, sizeof(dbg));
		if (ASSERT_NOT_NULL(nm)) {
			ASSERT_STREQ(nm, "sp_static_leaf");
			ASSERT_TRUE(strstr(dbg, "/dbgroot/.build-id/") != NULL);
		}
		/* opts.no_debug_files: the stripped file's own tables only. */
		{
			struct sfp_symbolizer *s = NULL;
			struct sfp_symbolizer_dso *d;
			struct sfp_symbol sym;
			SFP_OPTS(sfp_symbolizer_opts, o, .debug_dirs = dirs,
				 .no_debug_files = true);

			if (ASSERT_OK(sfp_symbolizer__new(&o, &s)) &&
			    ASSERT_OK(sfp_symbolizer__get_dso(s, -1, path, NULL, 0,
							      &d)))
				ASSERT_ERR(sfp_symbolizer_dso__find(d, leaf, &sym),
					   -ENOENT);
			sfp_symbolizer__free(&s);
		}
	}
}

/* The running kernel's kallsyms, checked against the file itself. */
TEST(symbols_kallsyms_live)
{
	static const char *const known[] = { "do_sys_openat2", "schedule",
					     "vfs_read" };
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	char line[512];
	int found = 0;
	FILE *f;

	if (!s)
		return;
	f = fopen("/proc/kallsyms", "r");
	if (!f) {
		test_skip("no /proc/kallsyms");
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		struct sfp_symbol sym;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strcmp(name, known[i]))
				continue;
			if (!addr) {
				test_skip("kallsyms addresses hidden");
				fclose(f);
				goto out;
			}
			found++;
			if (ASSERT_OK(sfp_symbolizer__kernel(s, addr + 1, &sym))) {
				ASSERT_STREQ(sym.name, name);
				ASSERT_EQ(sym.offset, 1);
				ASSERT_EQ(sym.start, addr);
				ASSERT_STREQ(sym.dso, "[kernel.kallsyms]");
				ASSERT_TRUE(sym.flags & SFP_SYM_KERNEL);
				ASSERT_GE(sym.size, 2);
			}
		}
	}
	fclose(f);
	ASSERT_GE(found, 2);
	{
		struct sfp_symbol sym;

		/* User-space addresses are not kernel text. */
		ASSERT_ERR(sfp_symbolizer__kernel(s, 0x400000, &sym), -ENOENT);
	}
out:
	sfp_symbolizer__free(&s);
}

/* The fixture kallsyms + modules: types, module bounds, guessed sizes. */
TEST(symbols_kallsyms_fixture)
{
	char ks[700], mods[700];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbol sym;

	snprintf(ks, sizeof(ks), "%s/symbols/kallsyms.txt", test_data_dir());
	snprintf(mods, sizeof(mods), "%s/symbols/modules.txt", test_data_dir());
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .kallsyms_path = ks,
			 .modules_path = mods);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			return;
	}
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffff81000150, &sym))) {
		ASSERT_STREQ(sym.name, "core_local");
		/* Data symbols (D) do not end text symbols: up to core_weak. */
		ASSERT_EQ(sym.size, 0x200);
		ASSERT_FALSE(sym.flags & SFP_SYM_GLOBAL);
	}
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffff81000300, &sym))) {
		ASSERT_STREQ(sym.name, "core_weak");
		ASSERT_TRUE(sym.flags & SFP_SYM_WEAK);
		ASSERT_EQ(sym.size, 0x100);	/* up to _etext */
	}
	/* The last symbol of moda runs to the module's end (8192 bytes). */
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffffc0002fff, &sym))) {
		ASSERT_STREQ(sym.name, "mod_a_last");
		ASSERT_STREQ(sym.dso, "[moda]");
		ASSERT_EQ(sym.start + sym.size, 0xffffffffc0003000ull);
	}
	ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffffc0003000, &sym), -ENOENT);
	/* No module entry for [bpf]: one page. */
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffffc0100fff, &sym)))
		ASSERT_STREQ(sym.dso, "[bpf]");
	ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffffc0101000, &sym), -ENOENT);
	/* Not in modules.txt: runs to its module's next symbol, ... */
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffffc0204fff, &sym))) {
		ASSERT_STREQ(sym.name, "nomod_a");
		ASSERT_EQ(sym.size, 0x5000);
	}
	/* ... and the module's last symbol gets a page. */
	if (ASSERT_OK(sfp_symbolizer__kernel(s, 0xffffffffc0205fff, &sym)))
		ASSERT_STREQ(sym.name, "nomod_b");
	ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffffc0206000, &sym), -ENOENT);
	/* The [bpf] symbol before nomod_a did not run into it. */
	ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffffc01fffff, &sym), -ENOENT);
	ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffff80000000, &sym), -ENOENT);
	sfp_symbolizer__free(&s);

	/* An unreadable kallsyms: -ENOENT, every time. */
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .kallsyms_path = "/nonexistent");

		if (ASSERT_OK(sfp_symbolizer__new(&o, &s))) {
			ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffff81000150,
							  &sym), -ENOENT);
			ASSERT_ERR(sfp_symbolizer__kernel(s, 0xffffffff81000150,
							  &sym), -ENOENT);
		}
		sfp_symbolizer__free(&s);
	}
}

/* perf-PID.map: lookups, growth while running, bad lines, no file. */
TEST(symbols_perf_map)
{
	char dir[700], path[800];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbol sym;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/maps", tmpdir());
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f))
		return;
	fprintf(f, "7f0000001000 40 LazyCompile:~foo bar.js:1\n"
		   "0x7f0000002000 0x20 Interpreter::entry\n"
		   "garbage line\n"
		   "7f0000003000 10 _ZN3jit4stubEv\n");
	fclose(f);
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			return;
	}
	if (ASSERT_OK(sfp_symbolizer__jit(s, 4242, 0x7f000000103f, &sym))) {
		ASSERT_STREQ(sym.name, "LazyCompile:~foo bar.js:1");
		ASSERT_EQ(sym.offset, 0x3f);
		ASSERT_STREQ(sym.dso, path);
		ASSERT_TRUE(sym.flags & SFP_SYM_JIT);
	}
	ASSERT_ERR(sfp_symbolizer__jit(s, 4242, 0x7f0000001040, &sym), -ENOENT);
	if (ASSERT_OK(sfp_symbolizer__jit(s, 4242, 0x7f0000002000, &sym)))
		ASSERT_STREQ(sym.name, "Interpreter::entry");
	if (ASSERT_OK(sfp_symbolizer__jit(s, 4242, 0x7f0000003001, &sym))) {
		ASSERT_STREQ(sym.name, "jit::stub()");
		ASSERT_STREQ(sym.raw_name, "_ZN3jit4stubEv");
	}
	/* The JIT appends; a miss re-reads the grown file. */
	ASSERT_ERR(sfp_symbolizer__jit(s, 4242, 0x7f0000004000, &sym), -ENOENT);
	f = fopen(path, "a");
	if (ASSERT_NOT_NULL(f)) {
		fprintf(f, "7f0000004000 100 later_fn\n");
		fclose(f);
		if (ASSERT_OK(sfp_symbolizer__jit(s, 4242, 0x7f0000004080, &sym)))
			ASSERT_STREQ(sym.name, "later_fn");
	}
	/* Code replaced at the same address: the newer entry wins. */
	sfp_symbolizer__free(&s);
	f = fopen(path, "a");
	if (ASSERT_NOT_NULL(f)) {
		fprintf(f, "7f0000001000 40 LazyCompile:*foo bar.js:1\n");
		fclose(f);
	}
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (ASSERT_OK(sfp_symbolizer__new(&o, &s)) &&
		    ASSERT_OK(sfp_symbolizer__jit(s, 4242, 0x7f0000001000, &sym)))
			ASSERT_STREQ(sym.name, "LazyCompile:*foo bar.js:1");
	}
	ASSERT_ERR(sfp_symbolizer__jit(s, 4243, 0x7f0000001000, &sym), -ENOENT);
	sfp_symbolizer__free(&s);
}

/* Write text as dir/perf-PID.map; false on failure. */
static bool write_perf_map(const char *dir, int pid, const char *text)
{
	char path[800];
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return !fclose(f);
}

/* The name perf-map entries give addr, or NULL (-ENOENT). */
static const char *jit_name(struct sfp_symbolizer *s, int pid, uint64_t addr,
			    uint64_t *off)
{
	static struct sfp_symbol sym;

	if (sfp_symbolizer__jit(s, pid, addr, &sym))
		return NULL;
	*off = sym.offset;
	return sym.raw_name;
}

/*
 * Overlapping perf-map entries (a JIT rewrote code): the newest entry
 * covering an address names it, and an older entry keeps naming what no
 * newer one covers.
 */
TEST(symbols_perf_map_overlaps)
{
	static const struct {
		uint64_t addr;
		const char *name;	/* NULL: no entry covers it */
		uint64_t off;
	} want[] = {
		/* a newer, shorter entry inside an older one */
		{ 0x1000, "old_A", 0 },
		{ 0x1050, "new_B", 0x10 },
		{ 0x105f, "new_B", 0x1f },
		{ 0x1060, "old_A", 0x60 },	/* past B's end: still A */
		{ 0x10ff, "old_A", 0xff },
		{ 0x1100, NULL, 0 },
		/* a newer entry starting below an older one */
		{ 0x1f80, "new_D", 0 },
		{ 0x2010, "new_D", 0x90 },	/* D is newer than C */
		{ 0x2040, "old_C", 0x40 },
		/* same start, newer shorter */
		{ 0x3010, "new_F", 0x10 },
		{ 0x3080, "old_E", 0x80 },
		/* three layers */
		{ 0x4050, "l1", 0x50 },
		{ 0x4150, "l2", 0x50 },
		{ 0x41c0, "l3", 0x40 },
		{ 0x4250, "l2", 0x150 },
		{ 0x4350, "l1", 0x350 },
		/* an older entry inside a newer one is hidden by it */
		{ 0x5020, "new_H", 0x20 },
		/* size 0: its start only */
		{ 0x6000, "zero", 0 },
		{ 0x6001, NULL, 0 },
	};
	char dir[700];
	struct sfp_symbolizer *s = NULL;
	size_t i;

	snprintf(dir, sizeof(dir), "%s/maps-overlap", tmpdir());
	mkdir(dir, 0700);
	if (!ASSERT_TRUE(write_perf_map(dir, 4244,
			"1000 100 old_A\n"
			"1040 20 new_B\n"
			"2000 100 old_C\n"
			"1f80 c0 new_D\n"
			"3000 100 old_E\n"
			"3000 20 new_F\n"
			"4000 400 l1\n"
			"4100 200 l2\n"
			"4180 80 l3\n"
			"5010 20 old_G\n"
			"5000 100 new_H\n"
			"6000 0 zero\n")))
		return;
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			return;
	}
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		uint64_t off = 0;
		const char *n = jit_name(s, 4244, want[i].addr, &off);

		if (!want[i].name) {
			if (n)
				sfp_test_fail_at(__FILE__, __LINE__, "%#" PRIx64 ": %s, want none", want[i].addr, n);
			continue;
		}
		if (!n || strcmp(n, want[i].name) || off != want[i].off)
			sfp_test_fail_at(__FILE__, __LINE__, "%#" PRIx64 ": %s+%#" PRIx64 ", want %s+%#" PRIx64,
			      want[i].addr, n ? n : "(none)", off,
			      want[i].name, want[i].off);
	}
	sfp_symbolizer__free(&s);
}

struct map_ent {
	uint64_t start, size;
	char name[512];
};

/* The newest entry of e[0..n) covering addr (brute force), or -1. */
static long newest_covering(const struct map_ent *e, size_t n, uint64_t addr)
{
	size_t i;

	for (i = n; i-- > 0;)
		if (addr >= e[i].start &&
		    addr - e[i].start < (e[i].size ? e[i].size : 1))
			return (long)i;
	return -1;
}

/*
 * A real map written by node --perf-basic-prof-only-functions whose code
 * the garbage collector freed and V8 replaced (tests/data/symbols/README):
 * every entry's start, middle, last byte and the byte after it are named
 * as a brute-force reading of the file names them.
 */
TEST(symbols_perf_map_node_real)
{
	char src[800], dir[700], line[1024];
	struct map_ent *e = calloc(4096, sizeof(*e));
	struct sfp_symbolizer *s = NULL;
	size_t n = 0, i, checked = 0, layered = 0;
	FILE *f;

	snprintf(src, sizeof(src), "%s/symbols/node-churn.perf.map",
		 test_data_dir());
	snprintf(dir, sizeof(dir), "%s/maps-node", tmpdir());
	mkdir(dir, 0700);
	f = fopen(src, "r");
	if (!ASSERT_NOT_NULL(e) || !ASSERT_NOT_NULL(f)) {
		free(e);
		return;
	}
	while (n < 4096 && fgets(line, sizeof(line), f)) {
		int k = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &e[n].start,
			   &e[n].size, &k) == 2 && k) {
			snprintf(e[n].name, sizeof(e[n].name), "%s", line + k);
			n++;
		}
	}
	fclose(f);
	ASSERT_TRUE(n > 700);
	{
		char cmd[2000];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/perf-4245.map'", src, dir);
		ASSERT_EQ(system(cmd), 0);
	}
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s))) {
			free(e);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		uint64_t sz = e[i].size ? e[i].size : 1;
		uint64_t probe[4] = { e[i].start, e[i].start + sz / 2,
				      e[i].start + sz - 1, e[i].start + sz };
		size_t k;

		for (k = 0; k < 4; k++) {
			long w = newest_covering(e, n, probe[k]);
			uint64_t off = 0;
			const char *got = jit_name(s, 4245, probe[k], &off);

			checked++;
			if (w >= 0 && (size_t)w != i && k < 3)
				layered++;
			if (w < 0 ? got != NULL
				  : !got || strcmp(got, e[w].name) ||
					    off != probe[k] - e[w].start)
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%#" PRIx64 ": %s+%#" PRIx64
						 ", want %s+%#" PRIx64,
						 probe[k], got ? got : "(none)",
						 off, w < 0 ? "(none)" : e[w].name,
						 w < 0 ? 0 : probe[k] - e[w].start);
		}
	}
	/* the file does hold addresses a later entry took over */
	ASSERT_TRUE(layered > 100);
	ASSERT_TRUE(checked == 4 * n);
	sfp_symbolizer__free(&s);
	free(e);
}

/* One addr2line answer: function and file:line per frame. */
struct a2l_frame {
	char func[2048];
	char file[2048];
	unsigned int line;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * Names for one function may differ as aliases: the symbol-table names at
 * one address (readelf's, in aliases; NULL: exact names only).
 */
static const struct rsym *a2l_aliases;
/* When set, addresses that differ are collected here, not printed. */
static uint64_t *a2l_bad;
static int a2l_nbad;

static bool same_function(struct sfp_symbolizer_dso *d, uint64_t addr,
			  const char *ours, const char *theirs)
{
	struct sfp_symbol sym;

	if (!ours || !strcmp(ours, theirs))
		return true;
	return a2l_aliases && !sfp_symbolizer_dso__find(d, addr, &sym) &&
	       rsym_has(a2l_aliases, INT32_MAX, sym.start, ours) &&
	       rsym_has(a2l_aliases, INT32_MAX, sym.start, theirs);
}

/* Our chain for addr equals addr2line's (fr[0..nf)): names, files, lines. */
static bool same_chain(struct sfp_symbolizer_dso *d, uint64_t addr,
		       const struct a2l_frame *fr, int nf)
{
	struct sfp_inline_frame ours[64];
	int k = sfp_symbolizer_dso__inlines(d, addr, ours, 64);
	bool ok = k == nf;

	/*
	 * A NULL name means DWARF has no function there (assembly); the
	 * tools then print a symbol-table name, compared by other tests.
	 */
	for (int j = 0; ok && j < nf; j++)
		ok = ours[j].line == fr[j].line &&
		     (nf == 1 ? same_function(d, addr, ours[j].name, fr[j].func) :
		      (!ours[j].name || !strcmp(ours[j].name, fr[j].func))) &&
		     ours[j].file &&
		     !strcmp(base_name(ours[j].file), base_name(fr[j].file)) &&
		     ours[j].inlined == (j + 1 < nf);
	if (!ok && a2l_bad) {
		a2l_bad[a2l_nbad++] = addr;
		return false;
	}
	if (!ok)
		fprintf(stderr, "  %#" PRIx64 ": addr2line %d frames (%s %s:%u), "
			"ours %d (%s %s:%u)\n", addr, nf, fr[0].func, fr[0].file,
			fr[0].line, k, k > 0 ? ours[0].name : "-",
			k > 0 && ours[0].file ? ours[0].file : "-",
			k > 0 ? ours[0].line : 0);
	return ok;
}

/*
 * Run `TOOL -a -f -i -C` (addr2line or eu-addr2line) once over all addrs
 * and compare each address's chain with ours.  Return: addresses compared
 * (the tool knew a line for them); *bad counts differences.
 */
static int compare_addr2line(struct sfp_symbolizer_dso *d, const char *tool,
			     const char *path, const uint64_t *addrs, int n,
			     int *bad)
{
	char cmd[1600], line[2048], in[700];
	static struct a2l_frame fr[64];
	int nf = 0, idx = -1, compared = 0;
	bool want_file = false;
	FILE *f;

	snprintf(in, sizeof(in), "%s/a2l.in", tmpdir());
	f = fopen(in, "w");
	if (!f)
		return 0;
	for (int i = 0; i < n; i++)
		fprintf(f, "%#" PRIx64 "\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -a -f -i -C -e '%s' < '%s'", tool, path,
		 in);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || (!want_file && !strncmp(line, "0x", 2))) {
			if (idx >= 0 && idx < n && nf > 0 && fr[0].line) {
				compared++;
				if (!same_chain(d, addrs[idx], fr, nf))
					(*bad)++;
			}
			if (eof)
				break;
			idx++;
			nf = 0;
			continue;
		}
		line[strcspn(line, "\n")] = 0;
		if (!want_file) {
			/* eu-addr2line: "f inlined at FILE:L:C in g". */
			char *inl = strstr(line, " inlined at ");

			if (inl)
				*inl = 0;
			if (nf < 64)
				snprintf(fr[nf].func, sizeof(fr[nf].func), "%s",
					 line);
			want_file = true;
			continue;
		}
		want_file = false;
		if (nf >= 64)
			continue;
		{
			char *disc = strstr(line, " (discriminator");
			char *colon;

			if (disc)
				*disc = 0;
			colon = strrchr(line, ':');
			fr[nf].line = 0;
			if (colon) {
				char *prev;

				*colon = 0;
				fr[nf].line = (unsigned int)strtoul(colon + 1,
								    NULL, 10);
				/* FILE:LINE:COL (eu-addr2line): drop COL. */
				prev = strrchr(line, ':');
				if (prev && prev[1] &&
				    strspn(prev + 1, "0123456789") ==
				    strlen(prev + 1)) {
					*prev = 0;
					fr[nf].line = (unsigned int)strtoul(
						prev + 1, NULL, 10);
				}
			}
			snprintf(fr[nf].file, sizeof(fr[nf].file), "%s", line);
			nf++;
		}
	}
	pclose(f);
	return compared;
}

/* Every instruction byte of symprog's functions: lines and inline chains. */
TEST(symbols_srclines_vs_addr2line)
{
	const char *prog = prog_path("symprog");
	static const char *const funcs[] = { "sp_global", "sp_static_leaf",
					     "sp_weak", "main" };
	struct sfp_symbolizer *s = new_symbolizer(NULL, true);
	struct sfp_symbolizer_dso *d;
	struct rsym *v = NULL;
	uint64_t *addrs = NULL;
	int n, na = 0, bad = 0, compared, inlined = 0;

	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, prog, NULL, 0, &d)))
		goto out;
	n = read_readelf(prog, "-s", &v);
	addrs = calloc(65536, sizeof(*addrs));
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(funcs) / sizeof(funcs[0]); k++) {
			if (strcmp(v[i].name, funcs[k]))
				continue;
			for (uint64_t a = v[i].addr;
			     a < v[i].addr + v[i].size && na < 65536; a++)
				addrs[na++] = a;
		}
	}
	if (!ASSERT_GE(na, 40))
		goto out;
	for (int i = 0; i < na; i++) {
		struct sfp_inline_frame fr[8];

		if (sfp_symbolizer_dso__inlines(d, addrs[i], fr, 8) > 2)
			inlined++;
	}
	/* sp_middle -> sp_inner are always_inline inside sp_global. */
	ASSERT_GE(inlined, 1);
	compared = compare_addr2line(d, "addr2line", prog, addrs, na, &bad);
	ASSERT_GE(compared, na / 2);
	ASSERT_EQ(bad, 0);
	/* With opts->srclines the symbol carries the innermost line. */
	{
		struct sfp_symbolizer *s2 = NULL;
		struct sfp_symbolizer_dso *d2;
		struct sfp_symbol sym;
		struct sfp_inline_frame fr;
		SFP_OPTS(sfp_symbolizer_opts, o, .srclines = true);

		if (ASSERT_OK(sfp_symbolizer__new(&o, &s2)) &&
		    ASSERT_OK(sfp_symbolizer__get_dso(s2, -1, prog, NULL, 0, &d2)) &&
		    ASSERT_OK(sfp_symbolizer_dso__find(d2, addrs[0], &sym)) &&
		    ASSERT_GE(sfp_symbolizer_dso__inlines(d2, addrs[0], &fr, 1), 1)) {
			ASSERT_STREQ(sym.file, fr.file);
			ASSERT_EQ(sym.line, fr.line);
			ASSERT_STREQ(base_name(sym.file), "symprog.c");
		}
		sfp_symbolizer__free(&s2);
	}
out:
	free(addrs);
	free(v);
	sfp_symbolizer__free(&s);
}

/* libc through its build-id debug file (libc6-dbg), sampled addresses. */
TEST(symbols_srclines_libc_vs_addr2line)
{
	struct sfp_symbolizer *s = new_symbolizer(NULL, true);
	struct sfp_symbolizer_dso *d;
	struct rsym *v = NULL;
	uint64_t addrs[400];
	char dbg[1024];
	int n, na = 0, bad = 0, compared;

	if (!debug_file_of(LIBC, dbg, sizeof(dbg))) {
		test_skip("no libc debug file (libc6-dbg)");
		goto out;
	}
	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, LIBC, NULL, 0, &d)))
		goto out;
	ASSERT_STREQ(sfp_symbolizer_dso__debug_path(d), dbg);
	n = read_readelf(LIBC, "--dyn-syms", &v);
	for (int i = 0; i < n && na < 400; i += 7)
		if (v[i].size > 8)
			addrs[na++] = v[i].addr + v[i].size / 2;
	/*
	 * The peer is eu-addr2line here: binutils 2.40 addr2line names the
	 * wrong file for libc's DWARF 5 lines that come from #included .c
	 * files (gdb agrees with libdw: "../nss/getXXent_r.c" where
	 * addr2line says "./inet/getaliasent_r.c").
	 */
	if (!have_tool("eu-addr2line")) {
		test_skip("eu-addr2line missing");
		goto out;
	}
	/*
	 * Assembly functions: gas describes them with the symbol it saw
	 * (__GI_mincore, like binutils addr2line says), eu-addr2line prints
	 * a symbol-table alias (mincore): both name one address.
	 */
	{
		struct rsym *all = NULL;

		read_readelf(dbg, "-s", &all);
		read_readelf(LIBC, "-s", &all);
		a2l_aliases = all;
		compared = compare_addr2line(d, "eu-addr2line", dbg, addrs, na,
					     &bad);
		a2l_aliases = NULL;
		free(all);
	}
	ASSERT_GE(compared, na / 2);
	ASSERT_EQ(bad, 0);
out:
	free(v);
	sfp_symbolizer__free(&s);
}

/*
 * Containers: a process in its own mount namespace sees a file that we do
 * not; the symbolizer finds it through /proc/PID/root.
 */
TEST(symbols_container_proc_root)
{
	const char *prog = prog_path("symprog");
	char mnt[700], maps[700], nsdbg[700], inner[800], script[12000];
	char buf[16] = "";
	uint64_t leaf = readelf_addr(prog, "sp_static_leaf");
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	int fds[2];
	pid_t pid;

	if (!have_tool("unshare") || geteuid() != 0) {
		test_skip("needs root and unshare(1)");
		return;
	}
	snprintf(mnt, sizeof(mnt), "%s/nsroot", tmpdir());
	mkdir(mnt, 0700);
	snprintf(maps, sizeof(maps), "%s/nsmaps", tmpdir());
	mkdir(maps, 0700);
	snprintf(nsdbg, sizeof(nsdbg), "%s/nsdebug", tmpdir());
	mkdir(nsdbg, 0700);
	snprintf(inner, sizeof(inner), "%s/prog-in-ns", mnt);
	/*
	 * Its JIT map and a stripped binary whose debug file sits in the
	 * container's debug directory live only in its namespace too.
	 */
	snprintf(script, sizeof(script),
		 "mount -t tmpfs sfp-ns '%s' && cp '%s' '%s' && "
		 "strip --strip-all '%s' -o '%s/stripped' && "
		 "mount -t tmpfs sfp-ns2 '%s' && "
		 "echo '7f0000001000 40 ns_jit_fn' > '%s/perf-'$$'.map' && "
		 "mount -t tmpfs sfp-ns3 '%s' && "
		 "id=$(readelf -n '%s' | sed -n 's/.*Build ID: //p') && "
		 "mkdir -p '%s'/.build-id/$(echo $id | cut -c1-2) && "
		 "objcopy --only-keep-debug '%s' '%s'/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
		 "echo ready && exec sleep 60", mnt, prog, inner, prog, mnt, maps,
		 maps, nsdbg, prog, nsdbg, prog, nsdbg);
	if (!ASSERT_EQ(pipe(fds), 0))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		/* unshare execs in place: the pid stays the namespaced one. */
		execlp("unshare", "unshare", "-m", "--propagation", "private",
		       "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (!ASSERT_GE(pid, 1) || read(fds[0], buf, sizeof(buf) - 1) < 5 ||
	    strncmp(buf, "ready", 5)) {
		test_skip("cannot make a mount namespace here");
		goto out;
	}
	ASSERT_NE(access(inner, F_OK), 0);	/* not visible to us */
	s = new_symbolizer(NULL, false);
	if (!s)
		goto out;
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, inner, NULL, 0, &d), -ENOENT);
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, pid, inner, NULL, 0, &d)) &&
	    ASSERT_OK(sfp_symbolizer_dso__find(d, leaf, &sym))) {
		char want[900];

		snprintf(want, sizeof(want), "/proc/%d/root%s", (int)pid, inner);
		ASSERT_STREQ(sfp_symbolizer_dso__path(d), want);
		ASSERT_STREQ(sym.name, "sp_static_leaf");
		ASSERT_STREQ(sym.dso, inner);	/* the caller's name */
	}
	/* The same through opts->pid. */
	sfp_symbolizer__free(&s);
	{
		const char *dirs[] = { nsdbg, NULL };
		SFP_OPTS(sfp_symbolizer_opts, o, .pid = pid, .perf_map_dir = maps,
			 .debug_dirs = dirs);
		char stripped[800];

		if (ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			ASSERT_OK(sfp_symbolizer__dso(s, inner, NULL, 0, leaf, &sym));
		/* perf-PID.map through /proc/PID/root. */
		if (s && ASSERT_OK(sfp_symbolizer__jit(s, pid, 0x7f0000001010,
						       &sym))) {
			char want[900];

			snprintf(want, sizeof(want), "/proc/%d/root%s/perf-%d.map",
				 (int)pid, maps, (int)pid);
			ASSERT_STREQ(sym.name, "ns_jit_fn");
			ASSERT_STREQ(sym.dso, want);
		}
		/* The debug file inside the container, by build-id. */
		snprintf(stripped, sizeof(stripped), "%s/stripped", mnt);
		if (s && ASSERT_OK(sfp_symbolizer__get_dso(s, 0, stripped, NULL, 0,
							   &d)) &&
		    ASSERT_OK(sfp_symbolizer_dso__find(d, leaf, &sym))) {
			char want[900];

			ASSERT_STREQ(sym.name, "sp_static_leaf");
			snprintf(want, sizeof(want), "/proc/%d/root%s/.build-id/",
				 (int)pid, nsdbg);
			ASSERT_TRUE(!strncmp(sfp_symbolizer_dso__debug_path(d),
					     want, strlen(want)));
		}
	}
out:
	sfp_symbolizer__free(&s);
	close(fds[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Build-id of a file, from readelf -n, as bytes.  Return: length. */
static size_t build_id_of(const char *path, uint8_t *id, size_t max)
{
	char cmd[1200], hex[256] = "";
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (!fgets(hex, sizeof(hex), f))
		hex[0] = 0;
	pclose(f);
	for (; n < max && hex[2 * n] && hex[2 * n + 1] != 0 &&
	       hex[2 * n] != '\n'; n++) {
		unsigned int b;

		if (sscanf(hex + 2 * n, "%2x", &b) != 1)
			break;
		id[n] = (uint8_t)b;
	}
	return n;
}

/* DSOs matched by build-id when the recorded path leads nowhere. */
TEST(symbols_build_id_index)
{
	const char *prog = prog_path("symprog");
	const char *t = tmpdir();
	char dirbuf[700], copy[800];
	const char *dirs[] = { dirbuf, NULL };
	uint8_t id[64];
	size_t idlen = build_id_of(prog, id, sizeof(id));
	uint64_t leaf = readelf_addr(prog, "sp_static_leaf");
	struct sfp_symbolizer *s;
	struct sfp_symbolizer_dso *d, *d2;
	struct sfp_symbol sym;

	if (!ASSERT_EQ(idlen, 20))
		return;
	snprintf(dirbuf, sizeof(dirbuf), "%s/bidx", t);
	snprintf(copy, sizeof(copy), "%s/bidx-copy", t);
	if (!ASSERT_EQ(sh("set -e; cd '%s'; rm -rf bidx; cp '%s' bidx-copy; "
			  "id=$(readelf -n bidx-copy | sed -n 's/.*Build ID: //p'); "
			  "mkdir -p bidx/.build-id/$(echo $id | cut -c1-2); "
			  "ln -s ../../../bidx-copy bidx/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)",
			  t, prog), 0))
		return;
	s = new_symbolizer(dirs, false);
	if (!s)
		return;
	/* The recorded path is gone; the build-id finds the file. */
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, -1, "/gone/old/symprog", id,
					      idlen, &d)) &&
	    ASSERT_OK(sfp_symbolizer_dso__find(d, leaf, &sym))) {
		ASSERT_STREQ(sym.name, "sp_static_leaf");
		ASSERT_STREQ(sym.dso, "/gone/old/symprog");
		ASSERT_TRUE(strstr(sfp_symbolizer_dso__path(d), "/bidx/.build-id/") != NULL);
	}
	/* Another path to a file with this build-id shares the tables. */
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, -1, prog, NULL, 0, &d2))) {
		ASSERT_STREQ(sfp_symbolizer_dso__path(d2),
			     sfp_symbolizer_dso__path(d));
		ASSERT_EQ(sfp_symbolizer_dso__num_symbols(d2),
			  sfp_symbolizer_dso__num_symbols(d));
	}
	/*
	 * Only the debug file is left (no link to the binary): symbols still
	 * resolve, and runtime addresses map as for the real binary.
	 */
	sfp_symbolizer__free(&s);
	if (ASSERT_EQ(sh("set -e; cd '%s'; l=$(ls bidx/.build-id/*/*); "
			 "objcopy --only-keep-debug bidx-copy \"$l.debug\"; rm \"$l\"",
			 t), 0) && (s = new_symbolizer(dirs, false)) != NULL) {
		struct sfp_symbolizer *h = new_symbolizer(NULL, false);
		struct sfp_symbolizer_dso *real;
		uint64_t va1, va2;

		if (ASSERT_OK(sfp_symbolizer__get_dso(s, -1, "/gone/old/symprog", id,
						      idlen, &d)) &&
		    ASSERT_TRUE(strstr(sfp_symbolizer_dso__path(d), ".debug") != NULL) &&
		    h && ASSERT_OK(sfp_symbolizer__get_dso(h, -1, prog, NULL, 0,
							   &real))) {
			/* The text mapping of a PIE: pgoff 0x1000 at 0x555555555000. */
			ASSERT_OK(sfp_symbolizer_dso__vaddr(real, 0x555555555000ull,
							    0x1000,
							    0x555555555000ull + leaf - 0x1000,
							    &va1));
			ASSERT_OK(sfp_symbolizer_dso__vaddr(d, 0x555555555000ull,
							    0x1000,
							    0x555555555000ull + leaf - 0x1000,
							    &va2));
			ASSERT_EQ(va1, leaf);
			ASSERT_EQ(va2, va1);
			if (ASSERT_OK(sfp_symbolizer_dso__find(d, va2, &sym)))
				ASSERT_STREQ(sym.name, "sp_static_leaf");
		}
		sfp_symbolizer__free(&h);
	}
	/* perf's build-id cache layout: .build-id/xx/rest/{elf,debug}. */
	sfp_symbolizer__free(&s);
	{
		char pc[800];
		const char *pdirs[] = { pc, NULL };

		snprintf(pc, sizeof(pc), "%s/pcache", t);
		if (ASSERT_EQ(sh("set -e; cd '%s'; rm -rf pcache; "
				 "id=$(readelf -n bidx-copy | sed -n 's/.*Build ID: //p'); "
				 "d=pcache/sym/$id; mkdir -p $d pcache/.build-id/$(echo $id | cut -c1-2); "
				 "cp bidx-copy $d/elf; "
				 "ln -s ../../sym/$id pcache/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)",
				 t), 0) &&
		    (s = new_symbolizer(pdirs, false)) != NULL &&
		    ASSERT_OK(sfp_symbolizer__get_dso(s, -1, "/gone/again/symprog",
						      id, idlen, &d))) {
			const char *p = sfp_symbolizer_dso__path(d);

			ASSERT_STREQ(p + strlen(p) - 4, "/elf");
			if (ASSERT_OK(sfp_symbolizer_dso__find(d, leaf, &sym)))
				ASSERT_STREQ(sym.name, "sp_static_leaf");
		}
	}
	/* The file at the path has another build-id: not used. */
	id[0] ^= 0xff;
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, prog, id, idlen, &d), -ENOENT);
	sfp_symbolizer__free(&s);
}

/* A function without a size runs to the next function (or section end). */
TEST(symbols_size_guess)
{
	const char *prog = prog_path("symprog");
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct rsym *v = NULL;
	struct sfp_symbol sym;
	uint64_t start = 0, next = UINT64_MAX, text_end = 0;
	char cmd[1200], line[512];
	int n;
	FILE *f;

	if (!s)
		return;
	n = read_readelf(prog, "-s", &v);
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, "sp_asm_nosize")) {
			start = v[i].addr;
			ASSERT_EQ(v[i].size, 0);
		}
	for (int i = 0; i < n; i++)
		if (v[i].addr > start && v[i].addr < next)
			next = v[i].addr;
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", prog);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long addr, off, size;

		if (sscanf(line, " [%*d] .text PROGBITS %llx %llx %llx", &addr,
			   &off, &size) == 3)
			text_end = addr + size;
	}
	if (f)
		pclose(f);
	if (!ASSERT_NE(start, 0) || !ASSERT_NE(text_end, 0))
		goto out;
	if (next > text_end)
		next = text_end;
	if (ASSERT_OK(sfp_symbolizer__dso(s, prog, NULL, 0, start + 2, &sym))) {
		ASSERT_STREQ(sym.name, "sp_asm_nosize");
		ASSERT_EQ(sym.size, next - start);
		ASSERT_TRUE(sym.flags & SFP_SYM_SIZE_GUESSED);
	}
	if (ASSERT_OK(sfp_symbolizer__dso(s, prog, NULL, 0, next - 1, &sym)))
		ASSERT_STREQ(sym.name, "sp_asm_nosize");
	if (ASSERT_OK(sfp_symbolizer__dso(s, prog, NULL, 0, next, &sym)))
		ASSERT_NE(strcmp(sym.name, "sp_asm_nosize"), 0);
out:
	free(v);
	sfp_symbolizer__free(&s);
}

/* "[vdso]": our own vDSO, dumped to a file for readelf to compare. */
TEST(symbols_vdso)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	struct rsym *v = NULL;
	char path[700];
	uint64_t size, shoff;
	uint16_t shnum, shentsize;
	int n, checked = 0;
	FILE *f;

	if (!base) {
		test_skip("no vDSO");
		return;
	}
	memcpy(&shoff, base + 0x28, 8);		/* Elf64_Ehdr.e_shoff */
	memcpy(&shentsize, base + 0x3a, 2);
	memcpy(&shnum, base + 0x3c, 2);
	size = shoff + (uint64_t)shnum * shentsize;
	snprintf(path, sizeof(path), "%s/vdso.so", tmpdir());
	f = fopen(path, "wb");
	if (!ASSERT_NOT_NULL(f))
		return;
	fwrite(base, 1, size, f);
	fclose(f);
	n = read_readelf(path, "--dyn-syms", &v);
	s = new_symbolizer(NULL, false);
	if (!ASSERT_GE(n, 3) || !s ||
	    !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, "[vdso]", NULL, 0, &d)))
		goto out;
	for (int i = 0; i < n; i++) {
		if (!ASSERT_OK(sfp_symbolizer_dso__find(d, v[i].addr, &sym)))
			continue;
		ASSERT_TRUE(rsym_has(v, n, sym.start, sym.raw_name));
		ASSERT_EQ(sym.start, v[i].addr);
		checked++;
	}
	ASSERT_GE(checked, 3);
	{
		uint8_t id[64];
		size_t idlen = build_id_of(path, id, sizeof(id));

		if (idlen) {
			ASSERT_OK(sfp_symbolizer__get_dso(s, -1, "[vdso]", id, idlen,
							  &d));
			id[0] ^= 1;
			ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "[vdso]", id,
							   idlen, &d), -ENOENT);
		}
	}
out:
	free(v);
	sfp_symbolizer__free(&s);
}

/* One mapping from a PERF_RECORD_MMAP2 line of perf script. */
struct pmap {
	int pid;
	uint64_t start, len, pgoff;
	char path[512];
};

/*
 * Names agree with perf: record a real workload with `perf record`, and
 * for every sample that `perf script` names (kernel and user), our
 * symbol and offset must be the same.
 */
TEST(symbols_vs_perf_script)
{
	char data[700], cmd[2400], line[2048];
	struct sfp_symbolizer *s = NULL;
	struct pmap *maps = NULL;
	size_t nmaps = 0, cap = 0;
	int compared = 0, kernel = 0, bad = 0, unnamed_ours = 0, ruled = 0;
	FILE *f;

	if (!have_tool("perf")) {
		test_skip("perf missing");
		return;
	}
	snprintf(data, sizeof(data), "%s/perf.data", tmpdir());
	if (sh("perf record -q -e cpu-clock -F 4000 -o '%s' -- sh -c "
	       "'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; "
	       "ls -lR /usr/lib /usr/share/doc > /dev/null 2>&1; "
	       "sort -R /usr/share/dict/words > /dev/null 2>&1 || "
	       "sort /etc/services > /dev/null' > /dev/null 2>&1", data)) {
		test_skip("perf record does not work here");
		return;
	}
	s = new_symbolizer(NULL, true);
	if (!s)
		return;
	snprintf(cmd, sizeof(cmd),
		 "perf script -i '%s' -F pid,ip,sym,symoff,dso --show-mmap-events 2>/dev/null",
		 data);
	f = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, len, pgoff, ip, off;
		char perms[8], path[512], sym[1024], dso[512];
		struct sfp_symbol ours;
		int pid, tid, err;
		bool plt_rule;
		char *p;

		p = strstr(line, "PERF_RECORD_MMAP2 ");
		if (p) {
			if (sscanf(p, "PERF_RECORD_MMAP2 %d/%d: [%llx(%llx) @ %llx %*s %*s %*[^]]]: %7s %511s",
				   &pid, &tid, &start, &len, &pgoff, perms, path) != 7 ||
			    perms[2] != 'x')
				continue;
			if (nmaps == cap) {
				cap = cap ? cap * 2 : 64;
				maps = realloc(maps, cap * sizeof(*maps));
			}
			maps[nmaps].pid = pid;
			maps[nmaps].start = start;
			maps[nmaps].len = len;
			maps[nmaps].pgoff = pgoff;
			snprintf(maps[nmaps].path, sizeof(maps[0].path), "%s", path);
			nmaps++;
			continue;
		}
		if (strstr(line, "PERF_RECORD_"))
			continue;
		/* "PID IP SYM+0xOFF (DSO)"; SYM may contain spaces (C++). */
		{
			int at = 0;

			if (sscanf(line, " %d %llx %n", &pid, &ip, &at) != 2 || !at)
				continue;
			p = strrchr(line, '(');
			if (!p || p < line + at ||
			    sscanf(p, "(%511[^)])", dso) != 1)
				continue;
			snprintf(sym, sizeof(sym), "%.*s",
				 (int)(p - (line + at)), line + at);
			sym[strcspn(sym, "\n")] = 0;
			while (*sym && sym[strlen(sym) - 1] == ' ')
				sym[strlen(sym) - 1] = 0;
		}
		/*
		 * perf 6.1 names PLT stubs by relocation order, which is off
		 * when IRELATIVE slots are mixed in (libc: "@plt" with no
		 * name, or a neighbour's), leaves .plt.got stubs unnamed and
		 * stretches _init over the PLT header; objdump is the
		 * reference there (symbols_plt_vs_objdump_*,
		 * symbols_plt_header, docs/perf-names.md): ours must be a PLT
		 * name.  Any other [unknown] of perf's must be none of ours.
		 */
		plt_rule = strstr(sym, "@plt+") || !strncmp(sym, "_init+", 6);
		if (!strncmp(sym, "[unknown]", 9)) {
			plt_rule = true;
			off = 0;
		} else {
			p = strrchr(sym, '+');
			if (!p || sscanf(p, "+0x%llx", &off) != 1)
				continue;
			*p = 0;
		}
		if (ip >= 0xffff800000000000ull) {
			err = sfp_symbolizer__kernel(s, ip, &ours);
			kernel++;
		} else {
			const struct pmap *m = NULL;
			struct sfp_symbolizer_dso *d;
			uint64_t va;

			for (size_t i = nmaps; i-- > 0;)
				if (maps[i].pid == pid && ip >= maps[i].start &&
				    ip - maps[i].start < maps[i].len) {
					m = &maps[i];
					break;
				}
			if (!m)
				continue;
			err = sfp_symbolizer__get_dso(s, -1, m->path, NULL, 0, &d);
			if (!err)
				err = sfp_symbolizer_dso__vaddr(d, m->start, m->pgoff,
								ip, &va);
			if (!err)
				err = sfp_symbolizer_dso__find(d, va, &ours);
		}
		compared++;
		if (plt_rule && strcmp(sym, "[unknown]") && !err &&
		    !strcmp(ours.name, sym) && ours.offset == off)
			continue;	/* the same after all */
		if (plt_rule) {
			size_t nl = err ? 0 : strlen(ours.name);

			if (!strcmp(sym, "[unknown]") && err)
				continue;	/* both unnamed */
			if (!err && ((nl > 4 && !strcmp(ours.name + nl - 4, "@plt")) ||
				     !strcmp(ours.name, ".plt"))) {
				ruled++;
				continue;
			}
		}
		if (err) {
			unnamed_ours++;
			if (bad++ < 8)
				fprintf(stderr, "  %#llx perf %s+%#llx (%s), ours: none (%d)\n",
					ip, sym, off, dso, err);
			continue;
		}
		if (strcmp(ours.name, sym) || ours.offset != off) {
			if (bad++ < 8)
				fprintf(stderr, "  %#llx perf %s+%#llx (%s), ours %s+%#" PRIx64 "\n",
					ip, sym, off, dso, ours.name, ours.offset);
		}
	}
	pclose(f);
	fprintf(stderr, "  perf script: %d samples compared (%d kernel), %d differ, %d by the PLT rules\n",
		compared, kernel, bad, ruled);
	ASSERT_GE(compared, 50);
	ASSERT_EQ(bad, 0);
out:
	free(maps);
	sfp_symbolizer__free(&s);
}

/* C++ at -O2 (templates, STL inlined): lines and inline chains. */
TEST(symbols_srclines_cxx_vs_addr2line)
{
	char exe[700];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct rsym *v = NULL;
	uint64_t *addrs = NULL;
	int n, na = 0, bad = 0, compared, deep = 0;

	if (!have_tool("g++")) {
		test_skip("g++ missing");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/cxxprog-O2", tmpdir());
	if (!ASSERT_EQ(sh("g++ -O2 -g -o '%s' '%s/symbols/cxxprog.cc'", exe,
			  test_data_dir()), 0))
		return;
	s = new_symbolizer(NULL, true);
	if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0, &d)))
		goto out;
	n = read_readelf(exe, "-s", &v);
	addrs = calloc(200000, sizeof(*addrs));
	/* Every byte of every function of the program itself. */
	for (int i = 0; i < n; i++) {
		if (!v[i].size || strstr(v[i].name, "@plt"))
			continue;
		for (uint64_t a = v[i].addr; a < v[i].addr + v[i].size &&
		     na < 200000; a++)
			addrs[na++] = a;
	}
	for (int i = 0; i < na; i++) {
		struct sfp_inline_frame fr[16];

		if (sfp_symbolizer_dso__inlines(d, addrs[i], fr, 16) > 2)
			deep++;
	}
	ASSERT_GE(deep, 10);	/* STL code inlines deeply at -O2 */
	/*
	 * binutils names an inlined lambda after its caller ("main" where
	 * DWARF says "operator()"); what binutils disputes must then agree
	 * with eu-addr2line.
	 */
	a2l_bad = calloc(na, sizeof(*a2l_bad));
	a2l_nbad = 0;
	compared = compare_addr2line(d, "addr2line", exe, addrs, na, &bad);
	ASSERT_GE(compared, na / 2);
	{
		uint64_t *disputed = a2l_bad;
		int nd = a2l_nbad, bad2 = 0, again;

		a2l_bad = NULL;
		fprintf(stderr, "  %d of %d addresses differ from addr2line; "
			"checking them with eu-addr2line\n", nd, compared);
		ASSERT_TRUE(nd <= compared / 20);
		if (nd && have_tool("eu-addr2line")) {
			again = compare_addr2line(d, "eu-addr2line", exe, disputed,
						  nd, &bad2);
			ASSERT_EQ(again, nd);
			ASSERT_EQ(bad2, 0);
		} else {
			ASSERT_EQ(nd, 0);
		}
		free(disputed);
	}
out:
	free(addrs);
	free(v);
	sfp_symbolizer__free(&s);
}

/* A real Rust binary, both manglings: every Rust symbol vs c++filt. */
TEST(symbols_rust_binary)
{
	/* Legacy is rustc's default; asking for it needs -Z flags. */
	static const char *const modes[] = { "legacy", "v0" };
	static const char *const flags[] = { "", "-C symbol-mangling-version=v0" };
	int checked = 0, bad = 0;

	if (!have_tool("rustc") || !have_tool("c++filt")) {
		test_skip("rustc or c++filt missing");
		return;
	}
	for (size_t m = 0; m < 2; m++) {
		char exe[700], line[4096], cmd[2048];
		struct sfp_symbolizer *s = NULL;
		struct sfp_symbolizer_dso *d;
		struct rsym *v = NULL;
		int n;
		FILE *f;

		snprintf(exe, sizeof(exe), "%s/rust-%s", tmpdir(), modes[m]);
		if (!ASSERT_EQ(sh("rustc -O %s -o '%s' '%s/symbols/rustprog.rs' "
				  "2>/dev/null", flags[m], exe, test_data_dir()), 0))
			return;
		s = new_symbolizer(NULL, true);
		n = read_readelf(exe, "-s", &v);
		if (!s || !ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0,
							     &d)))
			goto next;
		snprintf(cmd, sizeof(cmd), "%s/rnames.txt", tmpdir());
		f = fopen(cmd, "w");
		for (int i = 0; f && i < n; i++)
			fprintf(f, "%s\n", v[i].name);
		if (f)
			fclose(f);
		snprintf(cmd, sizeof(cmd), "c++filt < '%s/rnames.txt'", tmpdir());
		f = popen(cmd, "r");
		for (int i = 0; f && i < n && fgets(line, sizeof(line), f); i++) {
			struct sfp_symbol sym;
			bool rust = !strncmp(v[i].name, "_R", 2) ||
				    (!strncmp(v[i].name, "_ZN", 3) &&
				     strstr(v[i].name, "17h"));

			line[strcspn(line, "\n")] = 0;
			if (!rust || sfp_symbolizer_dso__find(d, v[i].addr, &sym) ||
			    strcmp(sym.raw_name, v[i].name))
				continue;
			drop_rust_hashes(line);
			checked++;
			if (strcmp(sym.name, line) && bad++ < 5)
				fprintf(stderr, "  %s: ours \"%s\", c++filt \"%s\"\n",
					v[i].name, sym.name, line);
		}
		if (f)
			pclose(f);
next:
		free(v);
		sfp_symbolizer__free(&s);
	}
	ASSERT_GE(checked, 20);
	ASSERT_EQ(bad, 0);
}

/* Corrupt files: exact errors, a warning naming the file, no crash. */
static char last_warning[512];

static void keep_warning(enum sfp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == SFP_LOG_WARN)
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

TEST(symbols_corrupt_elf)
{
	const char *prog = prog_path("symprog");
	char trunc[700], badlink[700];
	struct sfp_symbolizer *s = new_symbolizer(NULL, false);
	struct sfp_symbolizer_dso *d;
	struct rsym *v = NULL;
	sfp_log_fn old;
	int err;

	if (!s)
		return;
	snprintf(trunc, sizeof(trunc), "%s/truncated", tmpdir());
	snprintf(badlink, sizeof(badlink), "%s/badlink", tmpdir());
	/* Cut inside the ELF header: not an ELF file any more. */
	if (ASSERT_EQ(sh("head -c 40 '%s' > '%s'", prog, trunc), 0))
		ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, trunc, NULL, 0, &d),
			   -ENOEXEC);
	/*
	 * .symtab's sh_link (its string table) pointed past the section
	 * table: the symbols cannot be named, the DSO is refused as corrupt
	 * and the warning names file and section.
	 */
	read_readelf(prog, "-s", &v);
	if (!have_tool("python3"))
		test_skip("python3 missing (used to patch the section header)");
	else if (ASSERT_EQ(sh("set -e; cp '%s' '%s'; "
			 "python3 - '%s' <<'PY'\n"
			 "import struct, sys\n"
			 "p = sys.argv[1]\n"
			 "b = bytearray(open(p, 'rb').read())\n"
			 "shoff, = struct.unpack_from('<Q', b, 0x28)\n"
			 "shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)\n"
			 "for i in range(shnum):\n"
			 "    o = shoff + i * shentsize\n"
			 "    if struct.unpack_from('<I', b, o + 4)[0] == 2:\n"
			 "        struct.pack_into('<I', b, o + 40, 0xffff)\n"
			 "open(p, 'wb').write(b)\n"
			 "PY", prog, badlink, badlink), 0)) {
		old = sfp_set_log(keep_warning, NULL);
		last_warning[0] = 0;
		err = sfp_symbolizer__get_dso(s, -1, badlink, NULL, 0, &d);
		sfp_set_log(old, NULL);
		ASSERT_ERR(err, -EBADMSG);
		ASSERT_TRUE(strstr(last_warning, badlink) != NULL);
		ASSERT_TRUE(strstr(last_warning, ".symtab") != NULL);
		/* Cached: the same answer without a second parse. */
		ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, badlink, NULL, 0, &d),
			   -EBADMSG);
	}
	free(v);
	sfp_symbolizer__free(&s);
}

/* Paths from untrusted input that are not regular files: no hang. */
TEST(symbols_special_files)
{
	char fifo[800], dir[700];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;

	snprintf(dir, sizeof(dir), "%s/fifomaps", tmpdir());
	mkdir(dir, 0700);
	snprintf(fifo, sizeof(fifo), "%s/perf-777.map", dir);
	unlink(fifo);
	if (!ASSERT_EQ(mkfifo(fifo, 0600), 0))
		return;
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			return;
	}
	/* A FIFO planted as a perf map (open would block for a writer). */
	ASSERT_ERR(sfp_symbolizer__jit(s, 777, 0x1000, &sym), -EINVAL);
	/* ... or named as a DSO; devices and directories likewise. */
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, fifo, NULL, 0, &d), -ENOEXEC);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "/dev/zero", NULL, 0, &d),
		   -ENOEXEC);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "/usr", NULL, 0, &d),
		   -ENOEXEC);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "[heap]", NULL, 0, &d),
		   -ENOENT);
	ASSERT_ERR(sfp_symbolizer__get_dso(s, -1, "//anon", NULL, 0, &d),
		   -ENOENT);
	sfp_symbolizer__free(&s);
	unlink(fifo);
}

/* ELFCLASS32 symbol tables (i386 objects made with as --32 / ld). */
TEST(symbols_elf32)
{
	char src[700], exe[700];
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	FILE *f;

	snprintf(src, sizeof(src), "%s/t32.s", tmpdir());
	snprintf(exe, sizeof(exe), "%s/t32", tmpdir());
	f = fopen(src, "w");
	if (!ASSERT_NOT_NULL(f))
		return;
	fputs(".text\n.globl _start\n.type _start,@function\n_start:\n"
	      " call f32\n ret\n.size _start,.-_start\n"
	      ".type f32,@function\nf32:\n nop\n nop\n ret\n.size f32,.-f32\n"
	      ".globl g32\n.type g32,@function\ng32:\n ret\n", f);
	fclose(f);
	if (sh("as --32 -o '%s.o' '%s' && ld -m elf_i386 -o '%s' '%s.o' 2>/dev/null",
	       exe, src, exe, exe)) {
		test_skip("no i386 support in binutils");
		return;
	}
	check_against_readelf(exe, "-s", 3);
	s = new_symbolizer(NULL, false);
	if (s && ASSERT_OK(sfp_symbolizer__get_dso(s, -1, exe, NULL, 0, &d))) {
		uint64_t f32 = readelf_addr(exe, "f32");

		if (ASSERT_OK(sfp_symbolizer_dso__find(d, f32 + 2, &sym))) {
			ASSERT_STREQ(sym.name, "f32");
			ASSERT_EQ(sym.size, 3);
			ASSERT_EQ(sym.offset, 2);
		}
		ASSERT_EQ(sfp_symbolizer_dso__num_symbols(d), 3);
	}
	sfp_symbolizer__free(&s);
}

/*
 * Two paths to one file share its tables: the entry of the second path
 * finds the first by the file's build-id (an agent keys each process's
 * libc apart).  Over more files than the build-id index's first size, so
 * that its growth is crossed too.
 */
TEST(symbols_same_file_by_build_id)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_opts o = { .sz = sizeof(o) };
	struct sfp_symbolizer_dso *first[160], *d;
	char paths[160][256], link_path[512];
	size_t n = 0, i, shared = 0;
	struct dirent *de;
	DIR *dir;

	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
		return;
	dir = opendir("/usr/lib/x86_64-linux-gnu");
	while (dir && n < 160 && (de = readdir(dir))) {
		size_t len = strlen(de->d_name);

		if (len < 4 || strcmp(de->d_name + len - 3, ".so") ||
		    len > 200)
			continue;
		snprintf(paths[n], sizeof(paths[n]),
			 "/usr/lib/x86_64-linux-gnu/%s", de->d_name);
		/* symlinked names of one file: the first entry loads it */
		if (!sfp_symbolizer__get_dso(s, -1, paths[n], NULL, 0, &d) &&
		    !d->same && d->file_id_len)
			first[n++] = d;
	}
	if (dir)
		closedir(dir);
	if (n < 140) {
		test_skip("only %zu shared libraries with symbols here", n);
		goto out;
	}
	/* past 128 entries the index outgrows its first 256 slots */
	ASSERT_TRUE(s->owner_index.cap > 256);
	for (i = 0; i < n; i++) {
		snprintf(link_path, sizeof(link_path), "%s/same-%zu.so",
			 test_tmp_dir(), i);
		unlink(link_path);
		if (!ASSERT_OK(symlink(paths[i], link_path)))
			break;
		if (ASSERT_OK(sfp_symbolizer__get_dso(s, -1, link_path, NULL,
						      0, &d)) &&
		    ASSERT_TRUE(d != first[i]) && ASSERT_TRUE(d->same == first[i]))
			shared++;
		unlink(link_path);
	}
	ASSERT_EQ(shared, n);
out:
	sfp_symbolizer__free(&s);
}

/*
 * forget_pids(): the entries of processes gone that hold no table of
 * their own (sharing one by build-id, failed look-ups) and their perf
 * maps go; the owner of a table stays, and so does everything of the
 * processes not named.
 */
TEST(symbols_forget_pids)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *own = NULL, *d = NULL;
	struct sfp_symbol sym;
	char exe[PATH_MAX], dir[700], map[800];
	ssize_t len;
	size_t before;
	pid_t child;
	int pid;
	FILE *f;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!ASSERT_TRUE(len > 0))
		return;
	exe[len] = 0;
	snprintf(dir, sizeof(dir), "%s/forget-maps", tmpdir());
	mkdir(dir, 0700);
	child = fork();
	if (!ASSERT_TRUE(child >= 0))
		return;
	if (!child) {
		pause();
		_exit(0);
	}
	pid = (int)child;
	snprintf(map, sizeof(map), "%s/perf-%d.map", dir, pid);
	f = fopen(map, "w");
	if (f) {
		fprintf(f, "7f0000001000 40 jitted\n");
		fclose(f);
	}
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .perf_map_dir = dir);

		if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			goto out;
	}
	/* the table's owner: this process; the child shares it */
	if (!ASSERT_OK(sfp_symbolizer__get_dso(s, getpid(), exe, NULL, 0, &own)) ||
	    !ASSERT_TRUE(own->same == NULL) ||
	    !ASSERT_OK(sfp_symbolizer__get_dso(s, pid, exe, NULL, 0, &d)) ||
	    !ASSERT_TRUE(d->same == own))
		goto out;
	ASSERT_TRUE(sfp_symbolizer__get_dso(s, pid, "/nonexistent/lib.so", NULL,
					    0, &d) < 0);
	ASSERT_OK(sfp_symbolizer__jit(s, pid, 0x7f0000001010, &sym));
	before = s->ndsos;

	/* another pid: nothing goes */
	{
		int other = pid + 1;

		ASSERT_EQ(sfp_symbolizer__forget_pids(s, &other, 1), 0);
	}
	/* the owner's pid: the owner stays */
	pid = (int)getpid();
	ASSERT_EQ(sfp_symbolizer__forget_pids(s, &pid, 1), 0);
	pid = (int)child;
	/* the child's: its shared entry, its failure and its perf map */
	ASSERT_EQ(sfp_symbolizer__forget_pids(s, &pid, 1), 3);
	ASSERT_EQ(s->ndsos, before - 2);
	ASSERT_TRUE(s->jit == NULL);
	/* the owner still answers, and the child's path is found again */
	ASSERT_TRUE(sfp_symbolizer_dso__path(own) != NULL);
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, pid, exe, NULL, 0, &d)))
		ASSERT_TRUE(d->same == own);
	ASSERT_EQ(s->ndsos, before - 1);
out:
	sfp_symbolizer__free(&s);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	unlink(map);
}
