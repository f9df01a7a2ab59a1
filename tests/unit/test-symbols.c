// SPDX-License-Identifier: MIT
/*
 * The symbolizer against real binaries of this machine and the binutils
 * tools that read them: readelf (symbol tables), c++filt (demangling),
 * objdump (PLT labels), addr2line (lines and inline chains), objcopy /
 * strip / xz (separate debug files and MiniDebugInfo built here).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/symbols.h>

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
out:
	free(v);
	sfp_symbolizer__free(&s);
}

/*
 * Rust v0 and legacy mangling, checked against c++filt.  c++filt runs
 * libiberty in verbose mode, which keeps crate disambiguators
 * ("[ca63f166dbe9294]") and legacy hashes ("::h0123..."); like perf and
 * rustc's own {:#} output we drop them, so those are removed from
 * c++filt's answer before comparing.
 */
static void drop_rust_hashes(char *s)
{
	char *p;

	while ((p = strchr(s, '[')) != NULL) {
		char *e = strchr(p, ']');

		if (!e)
			break;
		memmove(p, e + 1, strlen(e + 1) + 1);
	}
	p = strstr(s, "::h");
	if (p && strlen(p) == 3 + 16)
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
		    !strstr(label, "@plt") || label[0] == '*' ||
		    strstr(label, "-0x") || strstr(label, "+0x"))
			continue;	/* *ABS*+0x...@plt (IRELATIVE), PLT0 */
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
	}
}
