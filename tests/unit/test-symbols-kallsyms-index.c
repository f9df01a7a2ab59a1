// SPDX-License-Identifier: MIT
/*
 * The lazy kallsyms index against the full parse: for every symbol of
 * the full table (and around it, and at every address the text names),
 * both must answer the same symbol with the same name, start, size,
 * module and flags, or both nothing.  Inputs: the fixture, synthetic texts
 * for the corner cases (aliases, modules with and without extents, lines
 * the fast path does not take), the running kernel's kallsyms and perf's
 * cached copies.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/filecache.h"
#include "symbols/kallsyms.h"
#include "test.h"

static char *dup_mem(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static bool same_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

/* Compare the two at addr; false (and a failure) when they differ. */
static bool probe(struct sfp_symtab *full, struct sfp_kallsyms_index *k,
		  uint64_t addr)
{
	struct sfp_sym *a = sfp_symtab_find(full, addr), *b;
	struct sfp_symtab *tab;

	b = sfp_kallsyms_index__find(k, addr, &tab);
	if (!a || !b) {
		if (a != b)
			sfp_test_fail_at(__FILE__, __LINE__,
					 "at %#" PRIx64 ": full %s, index %s",
					 addr, a ? a->name : "(none)",
					 b ? b->name : "(none)");
		return !a && !b;
	}
	if (a->start != b->start || a->size != b->size ||
	    a->flags != b->flags || strcmp(a->name, b->name) ||
	    !same_str(a->dso, b->dso)) {
		sfp_test_fail_at(__FILE__, __LINE__,
				 "at %#" PRIx64 ": full %s %#" PRIx64 "+%#" PRIx64
				 " %s flags %#x, index %s %#" PRIx64 "+%#" PRIx64
				 " %s flags %#x", addr, a->name, a->start,
				 a->size, a->dso ? a->dso : "-", a->flags,
				 b->name, b->start, b->size,
				 b->dso ? b->dso : "-", b->flags);
		return false;
	}
	return true;
}

/* Where compare_at() keeps the index of a file (NULL: nowhere). */
static const char *cmp_cache;

/*
 * Both views of (ks, mods); the number of symbols compared, or -1 on a
 * difference, -2 when the index declined (-EAGAIN).  With paths, the
 * index comes from those files (kallsyms mapped, and let go behind its
 * scans: every look-up reads its lines back), else from copies in memory.
 */
static long compare_at(const char *ks, size_t kslen, const char *mods,
		       size_t modslen, const char *ks_path,
		       const char *mods_path)
{
	struct sfp_symtab full = { 0 };
	struct sfp_kallsyms_index *k = NULL;
	const char *p, *end = ks + kslen;
	long n = 0;
	size_t i;
	int err;

	if (ks_path) {
		err = sfp_kallsyms_index__open(ks_path, mods_path, cmp_cache,
					       &k);
	} else {
		char *kb = dup_mem(ks, kslen);
		char *mb = mods ? dup_mem(mods, modslen) : NULL;

		if (!ASSERT_TRUE(kb && (!mods || mb)))
			return -1;
		err = sfp_kallsyms_index__new(kb, kslen, mb, modslen, &k);
		if (err) {
			free(kb);
			free(mb);
		}
	}
	if (err)
		return err == -EAGAIN ? -2 : -1;
	if (sfp_kallsyms_parse(&full, ks, kslen, mods, modslen) < 0) {
		sfp_kallsyms_index__free(&k);
		return -1;
	}
	sfp_symtab_finish(&full);
	sfp_kallsyms_fixup(&full);
	for (i = 0; i < full.nr && n >= 0; i++) {
		const struct sfp_sym *s = &full.syms[i];
		uint64_t a = s->start;

		if (!probe(&full, k, a) || !probe(&full, k, a - 1) ||
		    !probe(&full, k, a + 1) ||
		    !probe(&full, k, a + s->size / 2) ||
		    !probe(&full, k, a + s->size - 1) ||
		    !probe(&full, k, a + s->size))
			n = -1;
		else
			n++;
	}
	/* the pages given back, as the agent does every 2 s: the look-ups
	 * below read them again */
	sfp_kallsyms_index__release_pages(k);
	/* every address the text names, text symbol or not */
	for (p = ks; p < end && n >= 0;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		uint64_t a = strtoull(p, NULL, 16);

		if (!probe(&full, k, a))
			n = -1;
		p = eol ? eol + 1 : end;
	}
	if (n >= 0 && (!probe(&full, k, 0) || !probe(&full, k, UINT64_MAX)))
		n = -1;
	sfp_symtab_free(&full);
	sfp_kallsyms_index__free(&k);
	return n;
}

static long compare(const char *ks, size_t kslen, const char *mods,
		    size_t modslen)
{
	return compare_at(ks, kslen, mods, modslen, NULL, NULL);
}

static long compare_str(const char *ks, const char *mods)
{
	return compare(ks, strlen(ks), mods, mods ? strlen(mods) : 0);
}

static bool read_whole(const char *path, char **buf, size_t *len)
{
	return !sfp_read_file(path, 256u << 20, buf, len);
}

TEST(kallsyms_index_fixture)
{
	char ks[700], ms[700], *kb, *mb;
	size_t kl, ml;

	snprintf(ks, sizeof(ks), "%s/symbols/kallsyms.txt", test_data_dir());
	snprintf(ms, sizeof(ms), "%s/symbols/modules.txt", test_data_dir());
	if (!ASSERT_TRUE(read_whole(ks, &kb, &kl)) ||
	    !ASSERT_TRUE(read_whole(ms, &mb, &ml)))
		return;
	ASSERT_GE(compare(kb, kl, mb, ml), 8);
	ASSERT_GE(compare(kb, kl, NULL, 0), 8);	/* no module list */
	free(kb);
	free(mb);
}

/* The corner cases, by hand. */
TEST(kallsyms_index_synthetic)
{
	/* aliases of every type mix, data between text, an empty name, a
	 * name with a tab but no name, non-text lines in forms the index
	 * does not take (uppercase, 0x: read by the general parser, one of
	 * them the last _etext), module runs split by another module, a
	 * module missing from the list, a symbol outside its module's
	 * extent */
	static const char ks[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000010 t a1\n"
		"ffffffff81000010 T a2\n"
		"ffffffff81000010 w a3\n"
		"ffffffff81000020 D data\n"
		"ffffffff81000030 W b\n"
		"ffffffff81000040 t \n"
		"ffffffff81000048 t \t[mm]\n"
		"FFFFFFFF81000050 D upper\n"
		"0xffffffff81000060 d prefixed\n"
		"ffffffff81000070 T c\n"
		"ffffffff81000070 t c_alias\n"
		"garbage line\n"
		"ffffffff81000100 T _etext\n"
		"ffffffff81001000 T _etext\n"
		"0xffffffff81002000 D _etext\n"
		"0000000000000000 t hidden\n"
		"ffffffffc0000000 t m1\t[ma]\n"
		"ffffffffc0000100 t m2\t[ma]\n"
		"ffffffffc0000200 t x1\t[mb]\n"
		"ffffffffc0000300 t m3\t[ma]\n"
		"ffffffffc0010000 t far\t[ma]\n"
		"ffffffffc0020000 t n1\t[nolist]\n"
		"ffffffffc0020000 T n1b\t[nolist]\n"
		"ffffffffc0029000 t n2\t[nolist]\n"
		"ffffffffc0100000 t lone\t[bpf]\n"
		"ffffffffc0200000 t nobracket\tmc\n";
	static const char mods[] =
		"ma 4096 0 - Live 0xffffffffc0000000\n"
		"mb 256 0 - Live 0xffffffffc0000200\n"
		"broken line\n";

	ASSERT_GE(compare_str(ks, mods), 15);
	ASSERT_GE(compare_str(ks, NULL), 15);
	/* without a trailing newline */
	ASSERT_GE(compare(ks, sizeof(ks) - 2, mods, sizeof(mods) - 1), 15);
}

/*
 * Text symbols out of address order, as a live kallsyms lists BPF
 * programs and trampolines after the modules: the index sorts them in,
 * aliases across the runs included (the last in the file wins, as in the
 * full parse), and answers as the full parse does.
 */
TEST(kallsyms_index_unsorted)
{
	static const char ks[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000010 t a1\n"
		"ffffffff81000040 T b\n"
		"ffffffff81001000 T _etext\n"
		"ffffffffc0000000 t m1\t[ma]\n"
		"ffffffffc0000100 t m2\t[ma]\n"
		"ffffffffc0030000 t tramp\t[__builtin__ftrace]\n"
		"ffffffffc0027708 t bpf_prog_1_walk\t[bpf]\n"
		"ffffffffc0026848 t bpf_prog_2_sample\t[bpf]\n"
		"ffffffffc0027708 t bpf_prog_3_alias\t[bpf]\n"
		"ffffffff81000010 t a1_late\n"
		"ffffffffc0000080 t m1_late\t[ma]\n"
		"ffffffffc0026848 t bpf_prog_4_sample\t[bpf]\n";
	static const char mods[] = "ma 4096 0 - Live 0xffffffffc0000000\n";
	static const char reversed[] =
		"ffffffff81000300 T d\n"
		"ffffffff81000200 T c\n"
		"ffffffff81000200 t c2\n"
		"ffffffff81000100 T b\n"
		"ffffffff81000000 T a\n";

	ASSERT_GE(compare_str(ks, mods), 9);
	ASSERT_GE(compare_str(ks, NULL), 9);
	ASSERT_GE(compare_str(reversed, NULL), 4);
}

TEST(kallsyms_index_declines)
{
	struct sfp_kallsyms_index *k = NULL;
	/* a text symbol not in the kernel's "%016lx" form */
	static const char upper[] =
		"ffffffff81000000 T a\n"
		"FFFFFFFF81000100 T b\n";
	static const char prefixed[] =
		"ffffffff81000000 T a\n"
		"0xffffffff81000100 t b\n";
	static const char short_addr[] =
		"81000000 T a\n";
	static const char no_text[] =
		"ffffffff81000100 D b\n"
		"0000000000000000 T hidden\n";

	ASSERT_EQ(compare_str(upper, NULL), -2);
	ASSERT_EQ(compare_str(prefixed, NULL), -2);
	ASSERT_EQ(compare_str(short_addr, NULL), -2);
	/* no text symbols: the full parse (it says why) */
	ASSERT_EQ(compare_str(no_text, NULL), -2);
	ASSERT_EQ(compare_str("", NULL), -2);
	{
		char *b = dup_mem(upper, sizeof(upper) - 1);

		/* declined: the buffer stays the caller's */
		ASSERT_ERR(sfp_kallsyms_index__new(b, sizeof(upper) - 1,
						   NULL, 0, &k), -EAGAIN);
		ASSERT_TRUE(k == NULL);
		free(b);
	}
	sfp_kallsyms_index__free(&k);	/* NULL: nothing */
}

/* Does some line of the text (NUL-terminated by sfp_read_file) start
 * with a non-zero address? */
static bool has_address(const char *ks, size_t len)
{
	const char *p = ks, *end = ks + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (strtoull(p, NULL, 16))
			return true;
		p = eol ? eol + 1 : end;
	}
	return false;
}

TEST(kallsyms_index_live)
{
	char *kb, *mb = NULL;
	size_t kl, ml = 0;
	long n;

	if (!read_whole("/proc/kallsyms", &kb, &kl)) {
		test_skip("no /proc/kallsyms");
		return;
	}
	if (!read_whole("/proc/modules", &mb, &ml))
		mb = NULL;
	/* kptr_restrict shows every address as zeros: nothing to index
	 * (decided from the file, not from what the index answers) */
	if (!has_address(kb, kl)) {
		free(kb);
		free(mb);
		test_skip("kallsyms addresses hidden (kptr_restrict)");
		return;
	}
	n = compare(kb, kl, mb, ml);
	free(kb);
	free(mb);
	ASSERT_GE(n, 1000);
}

/* perf's copies (~/.debug/[kernel.kallsyms]/<build-id>/kallsyms). */
TEST(kallsyms_index_perf_cache)
{
	const char *home = getenv("HOME");
	char dir[4096], path[4400], *kb, *mb = NULL;
	struct dirent *de;
	size_t kl, ml = 0;
	int seen = 0;
	DIR *d;

	if (!home) {
		test_skip("no HOME");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/.debug/[kernel.kallsyms]", home);
	d = opendir(dir);
	if (!d) {
		test_skip("no perf build-id cache of kallsyms");
		return;
	}
	if (!read_whole("/proc/modules", &mb, &ml))
		mb = NULL;
	while ((de = readdir(d)) && seen < 3) {
		long n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/kallsyms", dir, de->d_name);
		if (!read_whole(path, &kb, &kl))
			continue;
		n = compare(kb, kl, mb, ml);
		free(kb);
		if (n != -2)
			ASSERT_GE(n, 1000);
		seen++;
	}
	closedir(d);
	free(mb);
	if (!seen)
		test_skip("no cached kallsyms");
}

/* From a path: the fixture file is mapped; errors are the caller's cue to
 * fall back (and report). */
TEST(kallsyms_index_open)
{
	struct sfp_kallsyms_index *k = NULL;
	struct sfp_symtab *tab;
	struct sfp_sym *s;
	char ks[700], ms[700];

	snprintf(ks, sizeof(ks), "%s/symbols/kallsyms.txt", test_data_dir());
	snprintf(ms, sizeof(ms), "%s/symbols/modules.txt", test_data_dir());
	if (!ASSERT_OK(sfp_kallsyms_index__open(ks, ms, NULL, &k)))
		return;
	s = sfp_kallsyms_index__find(k, 0xffffffff81000150, &tab);
	if (ASSERT_NOT_NULL(s)) {
		ASSERT_STREQ(s->name, "core_local");
		ASSERT_EQ(s->size, 0x200);
		ASSERT_TRUE(s->dso == NULL);
	}
	s = sfp_kallsyms_index__find(k, 0xffffffffc0002fff, &tab);
	if (ASSERT_NOT_NULL(s)) {
		ASSERT_STREQ(s->name, "mod_a_last");
		ASSERT_STREQ(s->dso, "[moda]");
		ASSERT_EQ(s->start + s->size, 0xffffffffc0003000ull);
	}
	/* the same symbol again: the same (materialized once) entry */
	ASSERT_TRUE(sfp_kallsyms_index__find(k, 0xffffffffc0002000, &tab) == s);
	/* a regular file is mapped: its pages given back, read again */
	ASSERT_TRUE(sfp_kallsyms_index__release_pages(k) > 0);
	s = sfp_kallsyms_index__find(k, 0xffffffff81000150, &tab);
	if (ASSERT_NOT_NULL(s))
		ASSERT_STREQ(s->name, "core_local");
	s = sfp_kallsyms_index__find(k, 0xffffffffc0002fff, &tab);
	ASSERT_TRUE(sfp_kallsyms_index__find(k, 0xffffffffc0003000, &tab) == NULL);
	ASSERT_TRUE(sfp_kallsyms_index__find(k, 0x1000, &tab) == NULL);
	sfp_kallsyms_index__free(&k);
	ASSERT_TRUE(k == NULL);
	/* no module list: still an index */
	if (ASSERT_OK(sfp_kallsyms_index__open(ks, "/nonexistent", NULL, &k)))
		sfp_kallsyms_index__free(&k);
	ASSERT_ERR(sfp_kallsyms_index__open("/nonexistent", ms, NULL, &k), -ENOENT);
	ASSERT_ERR(sfp_kallsyms_index__open(test_data_dir(), ms, NULL, &k), -EAGAIN);
	ASSERT_TRUE(k == NULL);
}

/*
 * Resident kB of this process's mappings whose path is pat (or, with
 * within, holds pat: an unlinked file shows as "dir/#ino (deleted)"),
 * from smaps; -1 if none.
 */
static long resident_kb_match(const char *pat, bool within)
{
	char line[8192];
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *path;
		size_t pl = strlen(pat), ll;

		if (nl)
			*nl = 0;
		ll = strlen(line);
		path = strchr(line, '/');
		/* a mapping's first line ends with its path */
		if (path && strchr(line, '-') < strchr(line, ' ') &&
		    (within ? strstr(path, pat) == path
			    : ll >= pl && !strcmp(line + ll - pl, pat))) {
			in = true;
			if (kb < 0)
				kb = 0;
			continue;
		}
		if (in && !strncmp(line, "Rss:", 4))
			kb += strtol(line + 4, NULL, 10);
		if (!strncmp(line, "VmFlags:", 8))	/* a mapping's last */
			in = false;
	}
	fclose(f);
	return kb;
}

static long resident_kb(const char *path)
{
	return resident_kb_match(path, false);
}

/*
 * The running kernel's kallsyms from a file, as perf's cached copy is
 * read: mapped, and let go a megabyte at a time behind the index's scans
 * (kallsyms is ~5 MiB here, so pages are dropped in every pass) and
 * whole after them.  Every look-up must still answer as the full parse.
 * Its module part, written last, is out of address order, so the sort
 * pass runs too.
 */
TEST(kallsyms_index_mapped_and_dropped)
{
	char *kb, *mb = NULL, path[4096], mpath[4096];
	size_t kl, ml = 0;
	FILE *f;
	long n;

	if (!read_whole("/proc/kallsyms", &kb, &kl) || !has_address(kb, kl)) {
		free(kb);
		test_skip("no /proc/kallsyms with addresses");
		return;
	}
	snprintf(path, sizeof(path), "%s/kallsyms-mapped.txt", test_tmp_dir());
	snprintf(mpath, sizeof(mpath), "%s/modules-mapped.txt", test_tmp_dir());
	if (read_whole("/proc/modules", &mb, &ml) &&
	    ASSERT_NOT_NULL(f = fopen(mpath, "w"))) {
		ASSERT_EQ(fwrite(mb, 1, ml, f), ml);
		fclose(f);
	}
	if (!ASSERT_NOT_NULL(f = fopen(path, "w")))
		goto out;
	ASSERT_EQ(fwrite(kb, 1, kl, f), kl);
	fclose(f);
	/* big enough that the scans drop pages behind them */
	ASSERT_GE(kl, 3u << 20);
	/* built, the index keeps almost nothing of the file resident */
	{
		struct sfp_kallsyms_index *k = NULL;
		long kb_res;

		if (ASSERT_OK(sfp_kallsyms_index__open(path, mb ? mpath : NULL,
						       NULL, &k))) {
			kb_res = resident_kb(path);
			ASSERT_GE(kb_res, 0);
			ASSERT_TRUE(kb_res < 256);
			sfp_kallsyms_index__free(&k);
		}
	}
	n = compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL);
	ASSERT_GE(n, 1000);
	unlink(path);
	unlink(mpath);
out:
	free(kb);
	free(mb);
}

/* Rss of the mappings of unlinked files in dir (O_TMPFILE: "dir/#ino"),
 * or -1 when there is none. */
static long resident_kb_tmp(const char *dir)
{
	char pat[4200];

	snprintf(pat, sizeof(pat), "%s/#", dir);
	return resident_kb_match(pat, true);
}

/*
 * /proc/kallsyms itself (size 0, not mappable) with a cache directory:
 * its text is copied into an unlinked file there and mapped, so that an
 * agent does not keep its 5-8 MiB resident on the heap.  The mapping is
 * there with almost nothing resident after the index's scans, and
 * look-ups of core kernel symbols (which no module or BPF program loaded
 * meanwhile moves) answer as the text says.
 */
TEST(kallsyms_index_proc_copied_out)
{
	static const char *const names[] = { "schedule", "do_syscall_64",
					     "vfs_read", "ksys_write" };
	struct sfp_kallsyms_index *k = NULL;
	char *kb = NULL, dir[4096];
	size_t kl, i, found = 0;
	long res;

	if (!read_whole("/proc/kallsyms", &kb, &kl) || !has_address(kb, kl)) {
		free(kb);
		test_skip("no /proc/kallsyms with addresses");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/ksyms-proc", test_tmp_dir());
	if (!ASSERT_OK(sfp_kallsyms_index__open("/proc/kallsyms",
						"/proc/modules", dir, &k)))
		goto out;
	res = resident_kb_tmp(dir);
	ASSERT_GE(res, 0);		/* mapped from the copy */
	/* and almost none of it resident, where the heap copy was all */
	if (!ASSERT_TRUE(res < 256))
		printf("  %ld KB of %zu resident\n", res, kl / 1024);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		char pat[80], *p;
		struct sfp_symtab *tab;
		struct sfp_sym *sym;
		uint64_t a;

		snprintf(pat, sizeof(pat), " T %s\n", names[i]);
		p = memmem(kb, kl, pat, strlen(pat));
		if (!p)
			continue;
		while (p > kb && p[-1] != '\n')
			p--;
		a = strtoull(p, NULL, 16);
		sym = sfp_kallsyms_index__find(k, a, &tab);
		if (ASSERT_NOT_NULL(sym) && ASSERT_STREQ(sym->name, names[i]))
			found++;
	}
	ASSERT_GE(found, 2);
	sfp_kallsyms_index__free(&k);
out:
	free(kb);
}

/* NUL bytes in a module name end it, as they end the full parse's
 * pooled copy (found by fuzz-symbols: the index compared the bytes) */
TEST(kallsyms_index_nul_in_names)
{
	static const char ks[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T _etext\n"
		"ffffffffc0020000 t n1\t[ab\0\0zz]\n"
		"ffffffffc0029000 t n2\t[ab\0yy]\n"
		"ffffffffc0039000 t n3\t[ab]\n"
		"ffffffffc0049000 t n\0a\t[cd\0]\n"
		"ffffffffc0059000 t n5\t[cd]\n";

	ASSERT_GE(compare(ks, sizeof(ks) - 1, NULL, 0), 5);
}

/* The one entry named *.ksyms in dir: its name in buf. */
static bool ksyms_entry(const char *dir, char *buf, size_t n)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return false;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l > 6 && !strcmp(de->d_name + l - 6, ".ksyms") &&
		    found++ == 0)
			snprintf(buf, n, "%s", de->d_name);
	}
	closedir(d);
	return found == 1;
}

/*
 * The index of a file kept in the cache: the first open stores it, the
 * next ones read it back, and either way every look-up answers as the
 * full parse -- also after the file changed (a new entry), and when an
 * entry that passes its CRC holds offsets past the file's end (refused,
 * the file indexed again).  The fixture and the running kernel's
 * kallsyms (mapped, its module part out of order).
 */
static void cached_round(const char *tag, const char *kb, size_t kl,
			 const char *mb, size_t ml)
{
	char dir[600], path[600], mpath[600], name[256], bad[32 + 4 + 8];
	struct sfp_fc_entry ent;
	struct sfp_fc_src src;
	struct stat st;
	uint32_t hdr[2] = { 0x5849534bu, 1 }, off;
	uint64_t nums[3] = { 1, 0, 1 }, coarse = 0;
	long n1, n2;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/ksyms-cache-%s", test_tmp_dir(), tag);
	snprintf(path, sizeof(path), "%s/ksyms-cache-%s.txt", test_tmp_dir(),
		 tag);
	snprintf(mpath, sizeof(mpath), "%s/ksyms-cache-%s.mod", test_tmp_dir(),
		 tag);
	if (!ASSERT_NOT_NULL(f = fopen(path, "w")))
		return;
	ASSERT_EQ(fwrite(kb, 1, kl, f), kl);
	fclose(f);
	if (mb && ASSERT_NOT_NULL(f = fopen(mpath, "w"))) {
		ASSERT_EQ(fwrite(mb, 1, ml, f), ml);
		fclose(f);
	}
	cmp_cache = dir;
	n1 = compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL);
	ASSERT_GE(n1, 5);
	if (!ASSERT_TRUE(ksyms_entry(dir, name, sizeof(name))))
		goto out;
	n2 = compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL);
	ASSERT_EQ(n2, n1);

	/* a valid entry, but its offset is past the end of the file */
	if (!ASSERT_OK(stat(path, &st)))
		goto out;
	off = (uint32_t)kl;
	memcpy(bad, hdr, 8);
	memcpy(bad + 8, nums, 24);
	memcpy(bad + 32, &off, 4);
	sfp_fc_src_init(&src, "KSYMS", 1, &st, NULL, 0);
	sfp_fc_store(dir, name, ".ksyms", &src, bad, 36, &coarse, 8, 1u << 30);
	if (ASSERT_OK(sfp_fc_load(dir, name, &src, &ent)))
		sfp_fc_unmap(&ent);
	ASSERT_EQ(compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL), n1);

	/* the file changes (its mtime): the old entry goes, a new one comes */
	{
		struct timespec t[2] = { { st.st_atime, 0 },
					 { st.st_mtime - 3600, 0 } };

		ASSERT_OK(utimensat(AT_FDCWD, path, t, 0));
	}
	ASSERT_EQ(compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL), n1);
	ASSERT_TRUE(ksyms_entry(dir, name, sizeof(name)));
	ASSERT_EQ(compare_at(kb, kl, mb, ml, path, mb ? mpath : NULL), n1);
out:
	cmp_cache = NULL;
	unlink(path);
	unlink(mpath);
}

TEST(kallsyms_index_cached)
{
	char *kb = NULL, *mb = NULL, ks[700], ms[700];
	size_t kl, ml = 0;

	snprintf(ks, sizeof(ks), "%s/symbols/kallsyms.txt", test_data_dir());
	snprintf(ms, sizeof(ms), "%s/symbols/modules.txt", test_data_dir());
	if (ASSERT_TRUE(read_whole(ks, &kb, &kl)) &&
	    ASSERT_TRUE(read_whole(ms, &mb, &ml)))
		cached_round("fixture", kb, kl, mb, ml);
	free(kb);
	free(mb);
	kb = mb = NULL;
	if (!read_whole("/proc/kallsyms", &kb, &kl) || !has_address(kb, kl)) {
		free(kb);
		test_skip("no /proc/kallsyms with addresses");
		return;
	}
	if (!read_whole("/proc/modules", &mb, &ml)) {
		free(mb);
		mb = NULL;
		ml = 0;
	}
	cached_round("live", kb, kl, mb, ml);
	free(kb);
	free(mb);
	/* /proc/kallsyms itself is read, not mapped: indexed, never kept */
	{
		struct sfp_kallsyms_index *k = NULL;
		char dir[600], name[256];

		snprintf(dir, sizeof(dir), "%s/ksyms-cache-proc", test_tmp_dir());
		if (ASSERT_OK(sfp_kallsyms_index__open("/proc/kallsyms", NULL,
						       dir, &k)))
			ASSERT_NOT_NULL(k);
		sfp_kallsyms_index__free(&k);
		ASSERT_FALSE(ksyms_entry(dir, name, sizeof(name)));
	}
}
