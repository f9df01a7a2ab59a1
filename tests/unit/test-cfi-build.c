// SPDX-License-Identifier: MIT
/*
 * ELF → SFrame: real libraries (every emitted row against the CFI it came
 * from), the v3-only forms on the hand-written corpus, PLT stubs, .debug_frame
 * (in the file, next to it by debuglink, under .build-id), the vDSO, the
 * table cache and the error paths.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "cfi/cfi.h"
#include "cfi/convert.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"
#include "test.h"

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int build_open(const char *path, uint8_t version,
		      struct sfp_build_stats *st, struct sfp_sframe **sf)
{
	SFP_OPTS(sfp_build_opts, bo, .version = version, .go_pclntab = true);
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0;
	int err;

	st->sz = sizeof(*st);
	err = sfp_sframe__build_from_elf(path, &bo, &sec, &size, &addr, st);
	if (!err) {
		SFP_OPTS(sfp_sframe_opts, so, .section_addr = addr);
		err = sfp_sframe__open_mem(sec, size, &so, sf);
	}
	free(sec);
	return err;
}

/*
 * Every row of every default FDE of libc, looked up through the decoded
 * table, equals the CFI interpretation at that PC.
 */
TEST(cfi_build_libc_rows_match_cfi)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct sfp_build_stats st;
	struct sfp_sframe *sf = NULL;
	struct sfp_elf *e = NULL;
	struct sfp_elf_section s;
	struct cfi_rows rows = { 0 };
	struct cfi_iter it;
	struct cfi_fde fde;
	const uint8_t *d;
	size_t n;
	long checked = 0;
	int bad = 0;

	if (!ASSERT_OK(build_open(libc, 3, &st, &sf)))
		return;
	ASSERT_GE(st.fdes, 1000);
	ASSERT_GE(st.emitted * 100ull, st.fdes * 95ull);
	ASSERT_GE(st.plt_fdes, 2);
	ASSERT_TRUE(st.sources & SFP_CFI_SRC_EH_FRAME);
	ASSERT_GE(st.covered_bytes * 100, st.text_bytes * 90);
	ASSERT_GE(st.text_bytes, st.covered_bytes);

	if (!ASSERT_OK(sfp_elf_open(libc, &e)) ||
	    !ASSERT_OK(sfp_elf_find_section(e, ".eh_frame", 0, &s)) ||
	    !ASSERT_OK(sfp_elf_section_data(e, &s, &d, &n)))
		goto out;
	struct cfi_section cs = { .data = d, .size = n, .vaddr = s.addr,
				  .kind = CFI_EH_FRAME, .addr_size = 8,
				  .name = libc };
	cfi_iter_init(&it, &cs);
	while (cfi_iter_next(&it, &fde) == 1 && bad < 5) {
		if (cfi_run(&cs, &fde, &cfi_amd64_track, &rows))
			continue;
		for (size_t i = 0; i < rows.n; i++) {
			const struct cfi_row *r = &rows.rows[i];
			struct sfp_sframe_row sr;

			if (r->cfa.kind != CFI_CFA_REG ||
			    (r->cfa.reg != 7 && r->cfa.reg != 6) ||
			    r->regs[0].kind != CFI_RULE_NONE ||
			    r->regs[2].kind != CFI_RULE_OFFSET ||
			    r->regs[2].off != -8)
				continue;	/* not a default-FDE row */
			if (sfp_sframe__find(sf, r->start, &sr)) {
				/* PLT-replaced or overlapping FDEs only */
				continue;
			}
			if (sr.flags & (SFP_ROW_FLEX | SFP_ROW_PCMASK))
				continue;
			checked++;
			if (!ASSERT_EQ(sr.cfa.reg, r->cfa.reg) ||
			    !ASSERT_EQ(sr.cfa.offset, r->cfa.off) ||
			    !ASSERT_EQ(sr.ra.offset, -8)) {
				bad++;
				break;
			}
			if (r->regs[1].kind == CFI_RULE_OFFSET) {
				if (!ASSERT_EQ(sr.fp.kind, SFP_LOC_CFA_DEREF) ||
				    !ASSERT_EQ(sr.fp.offset, r->regs[1].off))
					bad++;
			} else if (!ASSERT_EQ(sr.fp.kind, SFP_LOC_NONE)) {
				bad++;
			}
		}
	}
	ASSERT_GE(checked, 10000);
out:
	cfi_rows_free(&rows);
	sfp_elf_close(&e);
	sfp_sframe__free(&sf);
}

static const char *corpus(void)
{
	static char exe[1024];

	if (exe[0])
		return exe;
	snprintf(exe, sizeof(exe), "%s/cfi-build-corpus", test_tmp_dir());
	if (run("gcc -O2 -Wa,--gsframe -o '%s' '%s/cfi/corpus.c' "
		"'%s/cfi/corpus-asm.S' 2>/dev/null || "
		"gcc -O2 -o '%s' '%s/cfi/corpus.c' '%s/cfi/corpus-asm.S'",
		exe, test_data_dir(), test_data_dir(), exe, test_data_dir(),
		test_data_dir())) {
		exe[0] = 0;
		return NULL;
	}
	return exe;
}

static uint64_t sym_addr(const char *exe, const char *name)
{
	char cmd[1200], line[256];
	unsigned long long a = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s' | grep ' %s$'", exe, name);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (!fgets(line, sizeof(line), p) || sscanf(line, "%llx", &a) != 1)
		a = 0;
	pclose(p);
	return a;
}

/* Index of the function starting at pc, or -1. */
static int func_at(const struct sfp_sframe *sf, uint64_t pc,
		   struct sfp_sframe_func *f)
{
	for (uint32_t i = 0; i < sfp_sframe__num_funcs(sf); i++)
		if (!sfp_sframe__func(sf, i, f) && f->start == pc)
			return (int)i;
	return -1;
}

/* Does some row of the function at pc satisfy pred? */
#define ANY_ROW(sf, idx, f, r, cond)                                         \
	({                                                                   \
		bool found_ = false;                                         \
		for (uint32_t k_ = 0; k_ < (f).num_rows && !found_; k_++) {  \
			sfp_sframe__row(sf, idx, k_, &(r));                  \
			found_ = (cond);                                     \
		}                                                            \
		found_;                                                      \
	})

TEST(cfi_build_v3_flexible_forms)
{
	const char *exe = corpus();
	struct sfp_build_stats st2, st3;
	struct sfp_sframe *v2 = NULL, *v3 = NULL;
	struct sfp_sframe_func f;
	struct sfp_sframe_row r;
	int i;

	if (!ASSERT_NOT_NULL(exe))
		return;
	if (!ASSERT_OK(build_open(exe, 2, &st2, &v2)) ||
	    !ASSERT_OK(build_open(exe, 3, &st3, &v3)))
		goto out;
	ASSERT_GE(st3.flex, 4);
	ASSERT_EQ(st2.flex, 0);
	ASSERT_GE(st2.skipped[SFP_CFI_SKIP_CFA_REG], 2);	/* drap, r11 */
	ASSERT_GE(st2.skipped[SFP_CFI_SKIP_RA_RULE], 1);	/* ra in rdi */
	ASSERT_GE(st2.skipped[SFP_CFI_SKIP_FP_RULE], 1);	/* fp in r12 */
	ASSERT_GE(st2.skipped[SFP_CFI_SKIP_SIGNAL], 1);
	ASSERT_GE(st3.emitted, st2.emitted + 5);

	/* DRAP: CFA = r10+0, then *(rbp-8) with rbp saved at *(rbp+0). */
	i = func_at(v3, sym_addr(exe, "asm_drap"), &f);
	if (ASSERT_GE(i, 0)) {
		ASSERT_EQ(f.fde_type, SFP_SFRAME_FDE_FLEX);
		ASSERT_TRUE(ANY_ROW(v3, i, f, r, r.cfa.kind == SFP_LOC_REG &&
						     r.cfa.reg == 10 &&
						     r.cfa.offset == 0));
		ASSERT_TRUE(ANY_ROW(v3, i, f, r,
				    r.cfa.kind == SFP_LOC_REG_DEREF &&
					    r.cfa.reg == 6 &&
					    r.cfa.offset == -8 &&
					    r.fp.kind == SFP_LOC_REG_DEREF &&
					    r.fp.reg == 6 && r.fp.offset == 0 &&
					    r.ra.kind == SFP_LOC_CFA_DEREF &&
					    r.ra.offset == -8));
	}
	ASSERT_EQ(func_at(v2, sym_addr(exe, "asm_drap"), &f), -1);
	/* The same, as gcc -O2 writes it for a VLA beside aligned locals. */
	i = func_at(v3, sym_addr(exe, "drap_vla"), &f);
	if (ASSERT_GE(i, 0)) {
		ASSERT_EQ(f.fde_type, SFP_SFRAME_FDE_FLEX);
		ASSERT_TRUE(ANY_ROW(v3, i, f, r,
				    r.cfa.kind == SFP_LOC_REG_DEREF &&
					    r.cfa.reg == 6 &&
					    r.cfa.offset == -8));
	}
	ASSERT_EQ(func_at(v2, sym_addr(exe, "drap_vla"), &f), -1);
	i = func_at(v3, sym_addr(exe, "asm_ra_in_reg"), &f);
	if (ASSERT_GE(i, 0))
		ASSERT_TRUE(ANY_ROW(v3, i, f, r, r.ra.kind == SFP_LOC_REG &&
						     r.ra.reg == 5));
	i = func_at(v3, sym_addr(exe, "asm_fp_in_reg"), &f);
	if (ASSERT_GE(i, 0))
		ASSERT_TRUE(ANY_ROW(v3, i, f, r, r.fp.kind == SFP_LOC_REG &&
						     r.fp.reg == 12));
	i = func_at(v3, sym_addr(exe, "asm_cfa_r11"), &f);
	if (ASSERT_GE(i, 0))
		ASSERT_TRUE(ANY_ROW(v3, i, f, r, r.cfa.kind == SFP_LOC_REG &&
						     r.cfa.reg == 11 &&
						     r.cfa.offset == 8));
	i = func_at(v3, sym_addr(exe, "asm_outermost"), &f);
	if (ASSERT_GE(i, 0))
		ASSERT_TRUE(ANY_ROW(v3, i, f, r,
				    (r.flags & SFP_ROW_RA_UNDEFINED) != 0));
	/* In v2 the outermost marker is dropped (as gas < 2.46 does). */
	i = func_at(v2, sym_addr(exe, "asm_outermost"), &f);
	if (ASSERT_GE(i, 0))
		ASSERT_FALSE(ANY_ROW(v2, i, f, r,
				     (r.flags & SFP_ROW_RA_UNDEFINED) != 0));
	i = func_at(v3, sym_addr(exe, "asm_sigtramp"), &f);
	if (ASSERT_GE(i, 0)) {
		ASSERT_TRUE(f.signal);
		ASSERT_EQ(f.num_rows, 0);
	}
out:
	sfp_sframe__free(&v2);
	sfp_sframe__free(&v3);
}

TEST(cfi_plt_stubs)
{
	/* PLT0 + two lazy entries, as ld writes them (libc on this box). */
	static const uint8_t lazy[48] = {
		0xff, 0x35, 1, 2, 3, 4, 0xff, 0x25, 1, 2, 3, 4, 0x0f, 0x1f, 0x40, 0,
		0xff, 0x25, 1, 2, 3, 4, 0x68, 0, 0, 0, 0, 0xe9, 0xe0, 0xff, 0xff, 0xff,
		0xff, 0x25, 1, 2, 3, 4, 0x68, 1, 0, 0, 0, 0xe9, 0xd0, 0xff, 0xff, 0xff,
	};
	/* IBT PLT (-z ibtplt): endbr64; push; jmp PLT0; xchg. */
	static const uint8_t ibt[32] = {
		0xff, 0x35, 1, 2, 3, 4, 0xf2, 0xff, 0x25, 1, 2, 3, 4, 0x0f, 0x1f, 0,
		0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xf2, 0xe9, 0xe2, 0xff,
		0xff, 0xff, 0x90,
	};
	static const uint8_t sec[32] = {
		0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 1, 2, 3, 4, 0x0f, 0x1f, 0x44, 0, 0,
		0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 1, 2, 3, 4, 0x0f, 0x1f, 0x44, 0, 0,
	};
	static const uint8_t got8[16] = {
		0xff, 0x25, 1, 2, 3, 4, 0x66, 0x90, 0xff, 0x25, 1, 2, 3, 4, 0x66, 0x90,
	};
	static const uint8_t junk[16] = { 0x48, 0x89, 0xe5 };
	struct cfi_plt_func pf[CFI_PLT_MAX_FUNCS];

	if (ASSERT_EQ(cfi_plt_amd64(".plt", 0x1000, lazy, sizeof(lazy), pf), 2)) {
		ASSERT_EQ(pf[0].fn.start, 0x1000);
		ASSERT_EQ(pf[0].fn.size, 16);
		ASSERT_EQ(pf[0].fn.pc_type, SFP_SFRAME_PC_INC);
		ASSERT_EQ(pf[0].nrows, 2);
		ASSERT_EQ(pf[0].rows[0].cfa.offset, 16);
		ASSERT_EQ(pf[0].rows[1].start, 6);
		ASSERT_EQ(pf[0].rows[1].cfa.offset, 24);
		ASSERT_EQ(pf[1].fn.start, 0x1010);
		ASSERT_EQ(pf[1].fn.size, 32);
		ASSERT_EQ(pf[1].fn.pc_type, SFP_SFRAME_PC_MASK);
		ASSERT_EQ(pf[1].fn.rep_size, 16);
		ASSERT_EQ(pf[1].nrows, 2);
		ASSERT_EQ(pf[1].rows[0].cfa.offset, 8);
		ASSERT_EQ(pf[1].rows[1].start, 11);
		ASSERT_EQ(pf[1].rows[1].cfa.offset, 16);
	}
	if (ASSERT_EQ(cfi_plt_amd64(".plt", 0x1000, ibt, sizeof(ibt), pf), 2)) {
		ASSERT_EQ(pf[1].rows[1].start, 9);
		ASSERT_EQ(pf[1].rows[1].cfa.offset, 16);
	}
	if (ASSERT_EQ(cfi_plt_amd64(".plt.sec", 0x2000, sec, sizeof(sec), pf), 1)) {
		ASSERT_EQ(pf[0].fn.rep_size, 16);
		ASSERT_EQ(pf[0].nrows, 1);
		ASSERT_EQ(pf[0].rows[0].cfa.offset, 8);
	}
	if (ASSERT_EQ(cfi_plt_amd64(".plt.got", 0x3000, got8, sizeof(got8), pf), 1)) {
		ASSERT_EQ(pf[0].fn.rep_size, 8);
		ASSERT_EQ(pf[0].nrows, 1);
	}
	ASSERT_EQ(cfi_plt_amd64(".plt", 0x1000, junk, sizeof(junk), pf), 0);
	ASSERT_EQ(cfi_plt_amd64(".plt.got", 0x1000, junk, sizeof(junk), pf), 0);
	ASSERT_EQ(cfi_plt_amd64(".text", 0x1000, lazy, sizeof(lazy), pf), 0);
	/* an entry that differs from the first: refuse */
	uint8_t mixed[48];
	memcpy(mixed, lazy, sizeof(mixed));
	mixed[38] = 0x90;
	ASSERT_EQ(cfi_plt_amd64(".plt", 0x1000, mixed, sizeof(mixed), pf), 0);
}

TEST(cfi_build_debug_frame_sources)
{
	char src[1024], exe[1024], dbg[1100], bid[1024];
	struct sfp_build_stats st;
	struct sfp_sframe *sf = NULL;

	snprintf(src, sizeof(src), "%s/cfi/corpus.c", test_data_dir());
	snprintf(exe, sizeof(exe), "%s/cfi-dbgframe", test_tmp_dir());
	/* Only .debug_frame: no unwind tables, -g. */
	if (!ASSERT_EQ(run("gcc -O2 -g -fno-asynchronous-unwind-tables "
			   "-fno-unwind-tables -o '%s' '%s'",
			   exe, src), 0))
		return;
	if (ASSERT_OK(build_open(exe, 3, &st, &sf))) {
		ASSERT_TRUE(st.sources & SFP_CFI_SRC_DEBUG_FRAME);
		ASSERT_GE(st.emitted, 25);
	}
	sfp_sframe__free(&sf);

	/* Moved to a separate file found through .gnu_debuglink. */
	snprintf(dbg, sizeof(dbg), "%s.debug", exe);
	if (!ASSERT_EQ(run("cd '%s' && objcopy --only-keep-debug cfi-dbgframe "
			   "cfi-dbgframe.debug && strip -g cfi-dbgframe && "
			   "objcopy --add-gnu-debuglink=cfi-dbgframe.debug "
			   "cfi-dbgframe", test_tmp_dir()), 0))
		return;
	if (ASSERT_OK(build_open(exe, 3, &st, &sf))) {
		ASSERT_TRUE(st.sources & SFP_CFI_SRC_DEBUG_FILE);
		ASSERT_GE(st.emitted, 25);
	}
	sfp_sframe__free(&sf);

	/* Found by build-id under debug_dir/.build-id/xx/yyyy.debug. */
	{
		struct sfp_elf *e = NULL;
		const uint8_t *id;
		size_t len, o;
		SFP_OPTS(sfp_build_opts, bo, .debug_dir = test_tmp_dir());
		void *sec = NULL;
		size_t size;
		uint64_t addr;

		if (!ASSERT_OK(sfp_elf_open(exe, &e)) ||
		    !ASSERT_OK(sfp_elf_build_id(e, &id, &len))) {
			sfp_elf_close(&e);
			return;
		}
		o = (size_t)snprintf(bid, sizeof(bid), "%s/.build-id/%02x",
				     test_tmp_dir(), id[0]);
		mkdir(test_tmp_dir(), 0700);
		ASSERT_EQ(run("mkdir -p '%s'", bid), 0);
		o += (size_t)snprintf(bid + o, sizeof(bid) - o, "/");
		for (size_t i = 1; i < len; i++)
			o += (size_t)snprintf(bid + o, sizeof(bid) - o, "%02x",
					      id[i]);
		if (o + 7 > sizeof(bid))
			return;
		memcpy(bid + o, ".debug", 7);
		sfp_elf_close(&e);
		ASSERT_EQ(run("mv '%s' '%s' && objcopy --remove-section "
			      ".gnu_debuglink '%s'", dbg, bid, exe), 0);
		st.sz = sizeof(st);
		if (ASSERT_OK(sfp_sframe__build_from_elf(exe, &bo, &sec, &size,
							 &addr, &st))) {
			ASSERT_TRUE(st.sources & SFP_CFI_SRC_DEBUG_FILE);
			ASSERT_GE(st.emitted, 25);
		}
		free(sec);
		/* Without the debug file: only the crt files' .eh_frame. */
		unlink(bid);
		st.sz = sizeof(st);
		if (ASSERT_OK(sfp_sframe__build_from_elf(exe, &bo, &sec, &size,
							 &addr, &st))) {
			ASSERT_EQ(st.sources, SFP_CFI_SRC_EH_FRAME);
			ASSERT_TRUE(st.emitted < 5);
		}
		free(sec);
	}
}

TEST(cfi_build_errors)
{
	char path[1024];
	void *sec = NULL;
	size_t size;
	uint64_t addr;
	FILE *f;
	SFP_OPTS(sfp_build_opts, bad_ver, .version = 4);
	struct sfp_build_stats st = { .sz = sizeof(st) };

	ASSERT_ERR(sfp_sframe__build_from_elf("/nonexistent", NULL, &sec, &size,
					      &addr, NULL), -ENOENT);
	snprintf(path, sizeof(path), "%s/not-elf", test_tmp_dir());
	f = fopen(path, "w");
	if (f) {
		fputs("#!/bin/sh\nexit 0\n", f);
		fclose(f);
	}
	ASSERT_ERR(sfp_sframe__build_from_elf(path, NULL, &sec, &size, &addr,
					      NULL), -EBADMSG);
	ASSERT_ERR(sfp_sframe__build_from_elf("/bin/true", &bad_ver, &sec,
					      &size, &addr, &st), -EOPNOTSUPP);
	ASSERT_ERR(sfp_sframe__build_from_elf(NULL, NULL, &sec, &size, &addr,
					      NULL), -EINVAL);
	/* Another machine: patch e_machine of a copy to RISC-V (243). */
	snprintf(path, sizeof(path), "%s/other-machine", test_tmp_dir());
	if (ASSERT_EQ(run("cp /bin/true '%s' && printf '\\363\\000' | "
			  "dd of='%s' bs=1 seek=18 conv=notrunc 2>/dev/null",
			  path, path), 0)) {
		memset(&st, 0xa5, sizeof(st));
		st.sz = sizeof(st);
		ASSERT_ERR(sfp_sframe__build_from_elf(path, NULL, &sec, &size,
						      &addr, &st),
			   -EOPNOTSUPP);
		ASSERT_EQ(st.fdes, 0);	/* counts zeroed on early errors */
		ASSERT_EQ(st.text_bytes, 0);
	}
	/* Relocatable objects: addresses unresolved, refused. */
	snprintf(path, sizeof(path), "%s/obj.o", test_tmp_dir());
	if (ASSERT_EQ(run("gcc -c -O2 -o '%s' '%s/cfi/corpus.c'", path,
			  test_data_dir()), 0))
		ASSERT_ERR(sfp_sframe__build_from_elf(path, NULL, &sec, &size,
						      &addr, NULL),
			   -EOPNOTSUPP);
	ASSERT_STREQ(sfp_cfi_skip__str(SFP_CFI_SKIP_CFA_EXPR), "cfa-expression");
	ASSERT_STREQ(sfp_cfi_skip__str(SFP_CFI_SKIP__COUNT), "unknown");
}

/* The vDSO, from this process's memory. */
TEST(cfi_vdso_table)
{
	const uint8_t *vdso = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct sfp_sframe *sf = NULL;
	SFP_OPTS(sfp_table_opts, to, .no_cache = true);
	Elf64_Ehdr eh;
	size_t size;

	if (!vdso) {
		test_skip("no vDSO");
		return;
	}
	memcpy(&eh, vdso, sizeof(eh));
	size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (!ASSERT_OK(sfp_sframe__open_elf_table_mem(vdso, size, "[vdso]", &to,
						      &sf)))
		return;
	ASSERT_GE(sfp_sframe__num_funcs(sf), 3);
	sfp_sframe__free(&sf);
}

static int count_entries(const struct sfp_sframe_cache_entry *e, void *ctx)
{
	int *n = ctx;

	if (e->valid)
		n[0]++;
	else
		n[1]++;
	return 0;
}

TEST(cfi_table_cache)
{
	char dir[1024], ent[2048];
	const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
	SFP_OPTS(sfp_table_opts, to);
	struct sfp_sframe *a = NULL, *b = NULL;
	struct sfp_sframe_info ia, ib;
	struct stat st;
	int counts[2] = { 0, 0 };
	FILE *p;

	snprintf(dir, sizeof(dir), "%s/cache-test/sub", test_tmp_dir());
	run("rm -rf '%s/cache-test'", test_tmp_dir());
	to.cache_dir = dir;
	if (!ASSERT_OK(sfp_sframe__open_elf_table(libm, &to, &a)))
		return;
	if (ASSERT_OK(stat(dir, &st)))
		ASSERT_EQ(st.st_mode & 0777, 0700);
	ASSERT_OK(sfp_sframe_cache__list(&to, count_entries, counts));
	ASSERT_EQ(counts[0], 1);
	ASSERT_EQ(counts[1], 0);

	/* The second open reads the entry: same table. */
	if (ASSERT_OK(sfp_sframe__open_elf_table(libm, &to, &b))) {
		sfp_sframe__info(a, &ia);
		sfp_sframe__info(b, &ib);
		ASSERT_EQ(ia.num_fdes, ib.num_fdes);
		ASSERT_EQ(ia.num_fres, ib.num_fres);
		ASSERT_EQ(ia.section_addr, ib.section_addr);
		ASSERT_EQ(ia.version, 3);
	}
	sfp_sframe__free(&b);

	/* Corrupt the entry's section: detected, removed, rebuilt. */
	snprintf(ent, sizeof(ent), "ls '%s'/*.sframe", dir);
	p = popen(ent, "r");
	if (ASSERT_NOT_NULL(p)) {
		if (ASSERT_NOT_NULL(fgets(ent, sizeof(ent), p)))
			ent[strcspn(ent, "\n")] = 0;
		pclose(p);
	}
	ASSERT_EQ(run("printf '\\377\\377\\377\\377' | dd of='%s' bs=1 "
		      "seek=140 conv=notrunc 2>/dev/null", ent), 0);
	counts[0] = counts[1] = 0;
	ASSERT_OK(sfp_sframe_cache__list(&to, count_entries, counts));
	ASSERT_EQ(counts[1], 1);
	if (ASSERT_OK(sfp_sframe__open_elf_table(libm, &to, &b))) {
		sfp_sframe__info(b, &ib);
		ASSERT_EQ(ia.num_fres, ib.num_fres);
	}
	sfp_sframe__free(&b);
	counts[0] = counts[1] = 0;
	ASSERT_OK(sfp_sframe_cache__list(&to, count_entries, counts));
	ASSERT_EQ(counts[0], 1);
	ASSERT_EQ(counts[1], 0);

	/* v2 tables are separate entries. */
	to.version = 2;
	if (ASSERT_OK(sfp_sframe__open_elf_table(libm, &to, &b))) {
		sfp_sframe__info(b, &ib);
		ASSERT_EQ(ib.version, 2);
	}
	sfp_sframe__free(&b);
	ASSERT_EQ(sfp_sframe_cache__clear(&to), 2);
	ASSERT_EQ(sfp_sframe_cache__clear(&to), 0);

	/* An object with its own .sframe: that one, not a built one. */
	const char *exe = corpus();
	if (exe && ASSERT_OK(sfp_sframe__open_elf_table(exe, &to, &b))) {
		sfp_sframe__info(b, &ib);
		ASSERT_EQ(ib.version, 1);	/* gas 2.40 */
		ASSERT_EQ(sfp_sframe_cache__clear(&to), 0);
	}
	sfp_sframe__free(&b);

	/* A cache directory writable by others is not used, nor listed
	 * or cleared (its files could be anyone's). */
	chmod(dir, 0777);
	to.version = 3;
	if (ASSERT_OK(sfp_sframe__open_elf_table(libm, &to, &b))) {
		snprintf(ent, sizeof(ent), "ls '%s' | grep -c 'sframe$'", dir);
		p = popen(ent, "r");
		if (ASSERT_TRUE(p)) {
			int n = -1;

			ASSERT_EQ(fscanf(p, "%d", &n), 1);
			ASSERT_EQ(n, 0);
			pclose(p);
		}
		ASSERT_ERR(sfp_sframe_cache__clear(&to), -EPERM);
		ASSERT_ERR(sfp_sframe_cache__list(&to, count_entries, counts),
			   -EPERM);
	}
	sfp_sframe__free(&b);
	chmod(dir, 0700);
	sfp_sframe__free(&a);
	ASSERT_ERR(sfp_sframe__open_elf_table("/nonexistent", &to, &a), -ENOENT);
}

/* No section headers at all: .eh_frame through PT_GNU_EH_FRAME. */
TEST(cfi_build_without_section_headers)
{
	char path[1024];
	struct sfp_build_stats a, b;
	struct sfp_sframe *sa = NULL, *sb = NULL;

	snprintf(path, sizeof(path), "%s/noshdr", test_tmp_dir());
	/* e_shoff (0x28, 8 bytes), e_shnum (0x3c) and e_shstrndx (0x3e). */
	if (!ASSERT_EQ(run("cp /bin/ls '%s' && "
			   "printf '\\0\\0\\0\\0\\0\\0\\0\\0' | dd of='%s' bs=1 seek=40 conv=notrunc 2>/dev/null && "
			   "printf '\\0\\0\\0\\0' | dd of='%s' bs=1 seek=60 conv=notrunc 2>/dev/null",
			   path, path, path), 0))
		return;
	if (!ASSERT_OK(build_open("/bin/ls", 3, &a, &sa)) ||
	    !ASSERT_OK(build_open(path, 3, &b, &sb)))
		goto out;
	ASSERT_EQ(b.sources, SFP_CFI_SRC_EH_FRAME);
	ASSERT_EQ(b.fdes, a.fdes);
	/* Without section names there are no PLT FDEs; the PLT's own CFI
	 * FDEs are then converted or skipped instead of replaced. */
	ASSERT_EQ(b.plt_fdes, 0);
	ASSERT_GE(b.emitted, a.emitted);
	ASSERT_GE(b.text_bytes, a.text_bytes);
out:
	sfp_sframe__free(&sa);
	sfp_sframe__free(&sb);
}

/*
 * FDEs that overlap: each function goes to the encoder as soon as it is
 * converted, so the losers must leave it again.  The first one added of
 * the lowest start wins; the section holds it alone, with its own rows,
 * and its header counts none of the losers' rows.
 */
TEST(cfi_build_overlapping_fdes)
{
	char src[1024], so[1024];
	struct sfp_build_stats st;
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	struct sfp_sframe_func fn;
	struct sfp_sframe_row row;

	snprintf(src, sizeof(src), "%s/cfi/overlap.S", test_data_dir());
	snprintf(so, sizeof(so), "%s/cfi-overlap.so", test_tmp_dir());
	if (!ASSERT_EQ(run("gcc -shared -nostdlib -Wl,--no-eh-frame-hdr "
			   "-o '%s' '%s'", so, src), 0))
		return;
	if (!ASSERT_OK(build_open(so, 3, &st, &sf)))
		return;
	ASSERT_EQ(st.fdes, 3);
	ASSERT_EQ(st.emitted, 1);
	ASSERT_EQ(st.skipped[SFP_CFI_SKIP_OVERLAP], 2);
	ASSERT_EQ(st.rows, 2);
	ASSERT_OK(sfp_sframe__validate(sf));
	sfp_sframe__info(sf, &info);
	ASSERT_EQ(info.num_fdes, 1);
	ASSERT_EQ(info.num_fres, 2);
	if (ASSERT_OK(sfp_sframe__func(sf, 0, &fn))) {
		ASSERT_EQ(fn.size, 64);
		ASSERT_EQ(fn.num_rows, 2);
	}
	/* the winner's rows: CFA sp+8, then sp+16 after the push */
	if (ASSERT_OK(sfp_sframe__find(sf, fn.start + 20, &row)))
		ASSERT_EQ(row.cfa.offset, 16);
	if (ASSERT_OK(sfp_sframe__find(sf, fn.start, &row)))
		ASSERT_EQ(row.cfa.offset, 8);
	sfp_sframe__free(&sf);
}

/* Objects without a build-id are cached under a content hash. */
TEST(cfi_table_cache_content_hash)
{
	char dir[1024], exe[1024], cmd[2200], line[512];
	SFP_OPTS(sfp_table_opts, to);
	struct sfp_sframe *sf = NULL;
	FILE *p;
	bool hashed = false;

	snprintf(dir, sizeof(dir), "%s/cache-hash", test_tmp_dir());
	snprintf(exe, sizeof(exe), "%s/no-build-id", test_tmp_dir());
	run("rm -rf '%s'", dir);
	if (!ASSERT_EQ(run("gcc -O2 -Wl,--build-id=none -o '%s' '%s/cfi/corpus.c'",
			   exe, test_data_dir()), 0))
		return;
	to.cache_dir = dir;
	if (!ASSERT_OK(sfp_sframe__open_elf_table(exe, &to, &sf)))
		return;
	sfp_sframe__free(&sf);
	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	p = popen(cmd, "r");
	if (ASSERT_NOT_NULL(p)) {
		while (fgets(line, sizeof(line), p))
			if (line[0] == 'h' && strstr(line, "-v3.sframe"))
				hashed = true;
		pclose(p);
	}
	ASSERT_TRUE(hashed);
	/* A changed file is a different key: the old entry stays unused. */
	ASSERT_EQ(run("printf 'x' >> '%s'", exe), 0);
	if (ASSERT_OK(sfp_sframe__open_elf_table(exe, &to, &sf)))
		ASSERT_EQ(sfp_sframe_cache__clear(&to), 2);
	sfp_sframe__free(&sf);
}

/* Table files record the section address and the ELF's build-id. */
TEST(cfi_build_table_file)
{
	char out[1024];
	struct sfp_build_stats st = { .sz = sizeof(st) };
	struct sfp_sframe *sf = NULL, *ref = NULL;
	struct sfp_sframe_info i1, i2;
	struct sfp_elf *e = NULL;
	const uint8_t *id;
	size_t idlen;
	uint8_t hdr[104];
	FILE *f;

	snprintf(out, sizeof(out), "%s/ls.sframe", test_tmp_dir());
	if (!ASSERT_OK(sfp_sframe__build_table_file("/bin/ls", out, NULL, &st)))
		return;
	ASSERT_GE(st.emitted, 100);
	if (!ASSERT_OK(sfp_sframe__open_file(out, NULL, &sf)) ||
	    !ASSERT_OK(build_open("/bin/ls", 3, &st, &ref)))
		goto out;
	sfp_sframe__info(sf, &i1);
	sfp_sframe__info(ref, &i2);
	ASSERT_EQ(i1.section_addr, i2.section_addr);
	ASSERT_EQ(i1.num_fres, i2.num_fres);
	/* docs/sframe-file.md: build-id length at 36, bytes at 40. */
	f = fopen(out, "rb");
	if (ASSERT_NOT_NULL(f)) {
		ASSERT_EQ(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
		fclose(f);
		if (ASSERT_OK(sfp_elf_open("/bin/ls", &e)) &&
		    ASSERT_OK(sfp_elf_build_id(e, &id, &idlen))) {
			ASSERT_EQ(hdr[36], idlen);
			ASSERT_TRUE(!memcmp(hdr + 40, id, idlen));
		}
	}
	ASSERT_ERR(sfp_sframe__build_table_file("/bin/ls", NULL, NULL, NULL),
		   -EINVAL);
	ASSERT_ERR(sfp_sframe__build_table_file("/nonexistent", out, NULL,
						NULL), -ENOENT);
out:
	sfp_elf_close(&e);
	sfp_sframe__free(&sf);
	sfp_sframe__free(&ref);
}

/* --- Go code: rows from the function table's SP deltas (cfi/go.c). --- */

#define GO_COMPILE "/usr/lib/go-1.19/pkg/tool/linux_amd64/compile"
/* A Go 1.24 binary of the Google Cloud CLI, where installed: its
 * prologues push %rbp, the compiler's (1.19) store it after a sub. */
#define GO_NEW "/usr/lib/google-cloud-sdk/bin/gcloud-crc32c"

struct go_check {
	long entries, subs, movs, pushes, bad;
};

static bool row_cfa(const struct sfp_sframe *sf, uint64_t pc, int32_t cfa,
		    int fp_off)
{
	struct sfp_sframe_row r;

	if (sfp_sframe__find(sf, pc, &r))
		return false;
	if (r.cfa.kind != SFP_LOC_REG || r.cfa.reg != SFP_DWARF_AMD64_SP ||
	    r.cfa.offset != cfa)
		return false;
	return fp_off ? r.fp.kind == SFP_LOC_CFA_DEREF && r.fp.offset == fp_off
		      : r.fp.kind == SFP_LOC_NONE;
}

/*
 * objdump's disassembly of [lo, hi) of path against the table: at every
 * function entry the CFA is SP+8 with FP untouched; after the first
 * instruction that moves SP -- a sub $N (Go <= 1.20) or a push %rbp
 * (1.21+) -- the CFA is SP+8+N (SP+16), and FP is at CFA-16 from the
 * instruction after the store of %rbp (after the push).
 */
static void go_vs_objdump(const struct sfp_sframe *sf, const char *path,
			  uint64_t lo, uint64_t hi, struct go_check *c)
{
	char cmd[512], line[512], mn[32], ops[128];
	uint64_t a, entry = 0, pend_sub = 0, pend_mov = 0, pend_push = 0;
	long n_sub = 0;
	bool seen = true;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --start-address=%#llx --stop-address=%#llx %s",
		 (unsigned long long)lo, (unsigned long long)hi, path);
	p = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(p))
		return;
	while (fgets(line, sizeof(line), p)) {
		struct sfp_sframe_row r;
		struct sfp_sframe_func fn;

		ops[0] = 0;
		if (sscanf(line, " %" SCNx64 ":\t%31s %127[^\n]", &a, mn, ops) < 2)
			continue;
		/* the instruction after a checked one: its row */
		if (pend_sub && !row_cfa(sf, a, (int32_t)(8 + n_sub), 0) &&
		    !pend_mov) {
			if (c->bad++ < 5)
				fprintf(stderr, "%s: %#llx: CFA not sp+%ld after sub\n",
					path, (unsigned long long)a, 8 + n_sub);
		}
		if (pend_mov && !row_cfa(sf, a, (int32_t)(8 + n_sub), -16)) {
			if (c->bad++ < 5)
				fprintf(stderr, "%s: %#llx: FP not at c-16 after the store\n",
					path, (unsigned long long)a);
		}
		if (pend_push && !row_cfa(sf, a, 16, -16)) {
			if (c->bad++ < 5)
				fprintf(stderr, "%s: %#llx: not sp+16, c-16 after push %%rbp\n",
					path, (unsigned long long)a);
		}
		c->movs += pend_mov != 0;
		c->pushes += pend_push != 0;
		pend_mov = pend_push = 0;
		/* the store of %rbp right after the sub: not saved yet at it */
		if (pend_sub && !strcmp(mn, "mov") &&
		    !strncmp(ops, "%rbp,", 5) && strstr(ops, "(%rsp)") &&
		    strtoll(ops + 5, NULL, 16) == n_sub - 8) {
			if (!row_cfa(sf, a, (int32_t)(8 + n_sub), 0) &&
			    c->bad++ < 5)
				fprintf(stderr, "%s: %#llx: FP saved before its store\n",
					path, (unsigned long long)a);
			pend_mov = a;
		}
		c->subs += pend_sub != 0;
		pend_sub = 0;
		if (!sfp_sframe__find(sf, a, &r) &&
		    !sfp_sframe__func(sf, r.func_idx, &fn) && fn.start == a &&
		    !(r.flags & SFP_ROW_RA_UNDEFINED)) {
			entry = a;
			seen = false;
			c->entries++;
			if (!row_cfa(sf, a, 8, 0) && c->bad++ < 5)
				fprintf(stderr, "%s: %#llx: entry not sp+8\n",
					path, (unsigned long long)a);
		}
		if (seen || !entry)
			continue;
		if (!strcmp(mn, "sub") && !strncmp(ops, "$0x", 3) &&
		    strstr(ops, ",%rsp")) {
			n_sub = strtol(ops + 1, NULL, 16);
			pend_sub = a;
			seen = true;
		} else if (!strcmp(mn, "push") && !strcmp(ops, "%rbp")) {
			pend_push = a;
			seen = true;
		} else if (!strcmp(mn, "push") || !strcmp(mn, "pop") ||
			   !strcmp(mn, "call") || !strncmp(mn, "ret", 3) ||
			   !strcmp(mn, "jmp") ||
			   (strstr(ops, ",%rsp") && strcmp(mn, "cmp") &&
			    strcmp(mn, "test"))) {
			seen = true;	/* SP moved otherwise: not checked */
		}
	}
	pclose(p);
}

static void go_text(const char *path, uint64_t *lo, uint64_t *hi)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section s;

	*lo = *hi = 0;
	if (!sfp_elf_open(path, &e) && !sfp_elf_find_section(e, ".text", 0, &s)) {
		*lo = s.addr;
		*hi = s.addr + s.size;
	}
	sfp_elf_close(&e);
}

static void go_check_binary(const char *path, bool pushes)
{
	struct sfp_build_stats st;
	struct sfp_sframe *sf = NULL;
	struct go_check c = { 0 };
	uint64_t lo, hi, span = 0x20000, at[3];
	size_t i;

	if (!ASSERT_OK(build_open(path, 3, &st, &sf)))
		return;
	ASSERT_TRUE(st.sources & SFP_CFI_SRC_GOPCLNTAB);
	ASSERT_EQ(st.emitted, 0);
	ASSERT_GE(st.go_fdes, 1000);
	ASSERT_GE(st.covered_bytes * 100, st.text_bytes * 95);
	go_text(path, &lo, &hi);
	if (!ASSERT_TRUE(hi > lo + 3 * span))
		goto out;
	at[0] = lo;
	at[1] = lo + ((hi - lo) / 2 & ~(uint64_t)15);
	at[2] = hi - span;
	for (i = 0; i < 3; i++)
		go_vs_objdump(sf, path, at[i], at[i] + span, &c);
	fprintf(stderr, "%s: %ld entries, %ld subs, %ld stores, %ld pushes checked against objdump, %ld wrong\n",
		path, c.entries, c.subs, c.movs, c.pushes, c.bad);
	ASSERT_EQ(c.bad, 0);
	ASSERT_GE(c.entries, 200);
	if (pushes) {
		ASSERT_GE(c.pushes, 100);
	} else {
		ASSERT_GE(c.subs, 100);
		ASSERT_GE(c.movs, 100);
	}
out:
	sfp_sframe__free(&sf);
}

TEST(cfi_build_go_prologues_vs_objdump)
{
	if (access(GO_COMPILE, R_OK)) {
		test_skip("%s not installed (golang-1.19-go)", GO_COMPILE);
		return;
	}
	go_check_binary(GO_COMPILE, false);
	if (!access(GO_NEW, R_OK))
		go_check_binary(GO_NEW, true);
}

/*
 * The runtime's own marks: the outermost functions (goexit, mstart,
 * rt0_go) end a walk in SFrame v3 and have no FDE in v2; the stack
 * switchers (systemstack, morestack, mcall) have none, so that the walk
 * takes the frame-pointer step there.
 */
TEST(cfi_build_go_runtime_marks)
{
	static const char *const top[] = { "runtime.goexit", "runtime.mstart",
					    "runtime.rt0_go" };
	static const char *const sw[] = { "runtime.systemstack",
					   "runtime.morestack", "runtime.mcall" };
	struct sfp_build_stats st;
	struct sfp_sframe *sf3 = NULL, *sf2 = NULL;
	struct sfp_elf *e = NULL;
	struct sfp_gotab t;
	struct sfp_gofunc f;
	struct sfp_sframe_row r;
	uint64_t i, off;
	int found = 0;
	size_t k;

	if (access(GO_COMPILE, R_OK)) {
		test_skip("%s not installed (golang-1.19-go)", GO_COMPILE);
		return;
	}
	if (!ASSERT_OK(build_open(GO_COMPILE, 3, &st, &sf3)) ||
	    !ASSERT_OK(build_open(GO_COMPILE, 2, &st, &sf2)) ||
	    !ASSERT_OK(sfp_elf_open(GO_COMPILE, &e)) ||
	    !ASSERT_OK(sfp_gotab_load(e, &t, &off)))
		goto out;
	for (i = 0; i < t.nfunc; i++) {
		if (sfp_gotab_func(&t, i, &f))
			continue;
		for (k = 0; k < ARRAY_SIZE(top); k++) {
			if (strcmp(f.name, top[k]))
				continue;
			found++;
			ASSERT_TRUE(f.flag & SFP_GOFUNC_TOPFRAME);
			if (ASSERT_OK(sfp_sframe__find(sf3, f.entry + 1, &r)))
				ASSERT_TRUE(r.flags & SFP_ROW_RA_UNDEFINED);
			ASSERT_ERR(sfp_sframe__find(sf2, f.entry + 1, &r),
				   -ENOENT);
		}
		for (k = 0; k < ARRAY_SIZE(sw); k++) {
			if (strcmp(f.name, sw[k]))
				continue;
			found++;
			ASSERT_TRUE(f.flag & SFP_GOFUNC_SPWRITE);
			ASSERT_ERR(sfp_sframe__find(sf3, f.entry, &r), -ENOENT);
		}
	}
	ASSERT_EQ(found, 6);
	{
		/* off by default: the unwinder's tables leave Go code to
		 * frame pointers (docs/cfi.md) */
		SFP_OPTS(sfp_build_opts, plain);
		void *sec = NULL;
		size_t size = 0;
		uint64_t addr = 0;

		ASSERT_ERR(sfp_sframe__build_from_elf(GO_COMPILE, &plain, &sec,
						      &size, &addr, NULL),
			   -ENOENT);
		free(sec);
	}
out:
	sfp_elf_close(&e);
	sfp_sframe__free(&sf3);
	sfp_sframe__free(&sf2);
}
