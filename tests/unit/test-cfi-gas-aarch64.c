// SPDX-License-Identifier: MIT
/*
 * Equivalence with GNU as --gsframe on AArch64, on this (any) host:
 * compile the CFI corpus (tests/data/cfi/corpus.c + corpus-aarch64.S) with
 * Debian's cross gcc (aarch64-linux-gnu-gcc 12, binutils 2.40, which emits
 * AArch64 SFrame v1) and `-Wa,--gsframe` in several variants, run the
 * program under qemu-aarch64, then check that for every function gas
 * emitted, the table sfprof builds from the same executable's .eh_frame
 * (v2 and v3) has the same start PCs and sizes, and per row the same start,
 * CFA base and offset, RA and FP rules, mangled-RA (PAC) bit, and the
 * function's PAuth key.  The cross toolchain and qemu come from
 * mk/deps.sh; their absence is a failure, not a skip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "gas-compare.h"
#include "test.h"

#define CROSS "aarch64-linux-gnu-"
#define QEMU "qemu-aarch64 -L /usr/aarch64-linux-gnu"

/* Functions where gas 2.40 is wrong, so sfprof differs on purpose. */
static const struct gas_bug gas_bugs[] = {
	/* gas 2.40 takes any CFA register that is not FP for SP (2.41+
	 * skips the FDE, as sfprof does). */
	{ "a64_cfa_x9", "CFA in x9 recorded as SP" },
	/* An FP saved without the RA: 2.40 writes the FP offset as the
	 * only word after the CFA, which readers take for the RA; 2.41+
	 * skips the FDE ("FP without RA on stack"), as sfprof does. */
	{ "a64_fp_no_ra", "FP offset written as the RA word" },
};

static void print_row(const char *who, const struct sfp_sframe_row *r)
{
	fprintf(stderr, "    %s @0x%llx cfa %u/r%u%+d ra %u%+d fp %u%+d%s\n",
		who, (unsigned long long)r->start, r->cfa.kind, r->cfa.reg,
		r->cfa.offset, r->ra.kind, r->ra.offset, r->fp.kind,
		r->fp.offset, (r->flags & SFP_ROW_MANGLED_RA) ? " [s]" : "");
}

/* Compare gas's function gi with ours.  Return true when equal. */
static bool compare_func(const struct sfp_sframe *gas, uint32_t gi,
			 const struct sfp_sframe *mine, const char *variant)
{
	struct sfp_sframe_func gf, mf;
	struct sfp_sframe_row gr, mr, hit;
	const char *name;

	sfp_sframe__func(gas, gi, &gf);
	name = sym_at(gf.start);
	if (sfp_sframe__find(mine, gf.start, &hit)) {
		fprintf(stderr, "  [%s] %s @0x%llx: gas has an FDE, sfprof none\n",
			variant, name, (unsigned long long)gf.start);
		return false;
	}
	sfp_sframe__func(mine, hit.func_idx, &mf);
	if (mf.start != gf.start || mf.size != gf.size ||
	    mf.pc_type != gf.pc_type || mf.num_rows != gf.num_rows ||
	    mf.pauth_key != gf.pauth_key) {
		fprintf(stderr,
			"  [%s] %s: gas start 0x%llx size %u type %u rows %u key %u; "
			"sfprof 0x%llx %u %u %u %u\n",
			variant, name, (unsigned long long)gf.start, gf.size,
			gf.pc_type, gf.num_rows, gf.pauth_key,
			(unsigned long long)mf.start, mf.size, mf.pc_type,
			mf.num_rows, mf.pauth_key);
		return false;
	}
	for (uint32_t r = 0; r < gf.num_rows; r++) {
		sfp_sframe__row(gas, gi, r, &gr);
		sfp_sframe__row(mine, hit.func_idx, r, &mr);
		if (gr.start != mr.start || !same_loc(&gr.cfa, &mr.cfa) ||
		    !same_loc(&gr.ra, &mr.ra) || !same_loc(&gr.fp, &mr.fp) ||
		    (gr.flags & SFP_ROW_MANGLED_RA) !=
			    (mr.flags & SFP_ROW_MANGLED_RA)) {
			fprintf(stderr, "  [%s] %s row %u differs:\n", variant,
				name, r);
			print_row("gas   ", &gr);
			print_row("sfprof", &mr);
			return false;
		}
	}
	return true;
}

/* v3 only: the outermost-frame (RA undefined) row gas 2.40 ignores. */
static bool v3_only_form(const struct sfp_sframe *mine, uint64_t start)
{
	struct sfp_sframe_row hit, r;
	struct sfp_sframe_func f;

	if (sfp_sframe__find(mine, start, &hit) ||
	    sfp_sframe__func(mine, hit.func_idx, &f))
		return false;
	for (uint32_t i = 0; i < f.num_rows; i++)
		if (!sfp_sframe__row(mine, hit.func_idx, i, &r) &&
		    (r.flags & SFP_ROW_RA_UNDEFINED))
			return true;
	return false;
}

static int run_variant(const char *flags, int *compared, int *signed_rows)
{
	char exe[1024], cmd[4096];
	struct sfp_sframe *gas = NULL, *mine = NULL;
	int bad = 0, built = -1;
	static int seq;

	snprintf(exe, sizeof(exe), "%s/corpus-a64-%d", test_tmp_dir(), seq++);
	snprintf(cmd, sizeof(cmd),
		 CROSS "gcc %s -w -Wa,--gsframe -o '%s' '%s/cfi/corpus.c' "
		 "'%s/cfi/corpus-aarch64.S'",
		 flags, exe, test_data_dir(), test_data_dir());
	if (system(cmd)) {
		fprintf(stderr, "  cannot build with: %s\n", flags);
		return -1;
	}
	/* The program must still run (a broken build would prove little). */
	snprintf(cmd, sizeof(cmd), QEMU " '%s' > /dev/null", exe);
	if (!ASSERT_EQ(system(cmd), 0))
		return -1;
	load_syms(CROSS "nm", exe);
	if (!ASSERT_OK(sfp_sframe__open_file(exe, NULL, &gas)))
		return -1;
	for (uint8_t version = 2; version <= 3; version++) {
		struct sfp_build_stats st = { .sz = sizeof(st) };
		SFP_OPTS(sfp_build_opts, bo, .version = version);
		char label[300];
		void *sec = NULL;
		size_t size = 0;
		uint64_t addr = 0;
		int n = 0, vbad = 0;

		snprintf(label, sizeof(label), "%s, v%u", flags, version);
		if (!ASSERT_OK(sfp_sframe__build_from_elf(exe, &bo, &sec, &size,
							  &addr, &st)))
			goto fail;
		SFP_OPTS(sfp_sframe_opts, so, .section_addr = addr);
		if (!ASSERT_OK(sfp_sframe__open_mem(sec, size, &so, &mine))) {
			free(sec);
			goto fail;
		}
		for (uint32_t i = 0; i < sfp_sframe__num_funcs(gas); i++) {
			struct sfp_sframe_func gf;
			struct sfp_sframe_row hit, gr;

			sfp_sframe__func(gas, i, &gf);
			if (gas_known_bug(gas_bugs, ARRAY_SIZE(gas_bugs),
					  sym_at(gf.start))) {
				/* We must differ (no FDE): a match would mean
				 * the bug list is stale. */
				if (!ASSERT_ERR(sfp_sframe__find(mine, gf.start,
								 &hit),
						-ENOENT))
					vbad++;
				continue;
			}
			if (version >= 3 && v3_only_form(mine, gf.start))
				continue;
			if (!compare_func(gas, i, mine, label)) {
				vbad++;
				continue;
			}
			n++;
			for (uint32_t r = 0; r < gf.num_rows; r++)
				if (!sfp_sframe__row(gas, i, r, &gr) &&
				    (gr.flags & SFP_ROW_MANGLED_RA))
					(*signed_rows)++;
		}
		*compared += n;
		bad += vbad;
		fprintf(stderr, "  [%s] %d functions equal, %d differ\n", label,
			n, vbad);
		free(sec);
		sfp_sframe__free(&mine);
	}
	built = bad;
fail:
	sfp_sframe__free(&gas);
	sfp_sframe__free(&mine);
	return built;
}

TEST(cfi_aarch64_rows_equal_gas_gsframe)
{
	static const char *const variants[] = {
		"-O2",
		"-O0",
		"-O2 -fno-omit-frame-pointer",
		"-O0 -fno-omit-frame-pointer",
		"-Os",
		"-O3 -fno-omit-frame-pointer",
		"-O2 -mbranch-protection=pac-ret+leaf",
		"-O2 -mbranch-protection=pac-ret+leaf+b-key",
		"-O0 -fno-omit-frame-pointer -mbranch-protection=pac-ret+leaf",
		"-O2 -mbranch-protection=standard",
		"-O2 -fexceptions -fasynchronous-unwind-tables",
	};
	int compared = 0, bad = 0, signed_rows = 0;

	/* Installed by mk/deps.sh: missing tools are a failure. */
	if (!ASSERT_EQ(system(CROSS "gcc --version > /dev/null 2>&1"), 0) ||
	    !ASSERT_EQ(system("echo nop | " CROSS
			      "as --gsframe -o /dev/null - 2>/dev/null"), 0) ||
	    !ASSERT_EQ(system("qemu-aarch64 --version > /dev/null 2>&1"), 0))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(variants); i++) {
		int r = run_variant(variants[i], &compared, &signed_rows);

		if (!ASSERT_GE(r, 0) || !ASSERT_EQ(r, 0))
			bad++;
	}
	ASSERT_EQ(bad, 0);
	/* ≥ 30 functions per variant and version on average, and the
	 * pac-ret variants really had signed rows to compare. */
	ASSERT_GE(compared, 2 * 30 * (int)ARRAY_SIZE(variants));
	ASSERT_GE(signed_rows, 100);
}

/* The corpus's hand-written shapes, one by one, as sfprof must see them. */
TEST(cfi_aarch64_skips_and_forms)
{
	char exe[1024], cmd[4096];
	struct sfp_build_stats st = { .sz = sizeof(st) };
	SFP_OPTS(sfp_build_opts, bo, .version = 3);
	struct sfp_sframe *mine = NULL;
	struct sfp_sframe_row hit;
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0;
	static const char *const skipped[] = { "a64_fp_no_ra", "a64_ra_in_reg",
					       "a64_cfa_x9" };

	snprintf(exe, sizeof(exe), "%s/corpus-a64-forms", test_tmp_dir());
	snprintf(cmd, sizeof(cmd),
		 CROSS "gcc -O2 -w -o '%s' '%s/cfi/corpus.c' "
		 "'%s/cfi/corpus-aarch64.S'",
		 exe, test_data_dir(), test_data_dir());
	if (!ASSERT_EQ(system(cmd), 0))
		return;
	load_syms(CROSS "nm", exe);
	if (!ASSERT_OK(sfp_sframe__build_from_elf(exe, &bo, &sec, &size, &addr,
						  &st)))
		return;
	ASSERT_EQ(st.skipped[SFP_CFI_SKIP_FP_RULE], 1);
	ASSERT_EQ(st.skipped[SFP_CFI_SKIP_RA_RULE], 1);
	ASSERT_EQ(st.skipped[SFP_CFI_SKIP_CFA_REG], 1);
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = addr);
	if (!ASSERT_OK(sfp_sframe__open_mem(sec, size, &so, &mine)))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(skipped); i++) {
		uint64_t a = 0;

		for (size_t j = 0; j < nsyms; j++)
			if (!strcmp(syms[j].name, skipped[i]))
				a = syms[j].addr;
		if (ASSERT_NE(a, 0))
			ASSERT_ERR(sfp_sframe__find(mine, a, &hit), -ENOENT);
	}
out:
	free(sec);
	sfp_sframe__free(&mine);
}

/*
 * The PLT FDEs (ld writes none for AArch64) against objdump's disassembly
 * of the same .plt: they cover the section exactly, PLT0's second row
 * starts right after its `stp x16, x30, [sp, #-16]!` (CFA sp+16, RA at
 * c-8), the entries are CFA = sp with the RA in LR, and a TLSDESC
 * trampoline has its sp+16 row after `stp x2, x3`.
 */
static uint64_t objdump_after(const char *file, const char *pattern,
			      uint64_t *sec_lo, uint64_t *sec_hi)
{
	char cmd[1400], line[512];
	unsigned long long a = 0, off, size;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 CROSS "readelf -SW '%s' | sed -n 's/.*\\] \\.plt  *PROGBITS *//p'",
		 file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (!fgets(line, sizeof(line), p) ||
	    sscanf(line, "%llx %llx %llx", &a, &off, &size) != 3)
		a = size = 0;
	pclose(p);
	*sec_lo = a;
	*sec_hi = a + size;
	snprintf(cmd, sizeof(cmd), CROSS "objdump -d -j .plt '%s'", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, pattern) && sscanf(line, " %llx:", &a) == 1 &&
		    !found)
			found = a + 4;
	pclose(p);
	return found;
}

static void check_plt(const char *file, bool want_tls)
{
	SFP_OPTS(sfp_build_opts, bo, .version = 3);
	struct sfp_build_stats st = { .sz = sizeof(st) };
	struct sfp_sframe *mine = NULL;
	struct sfp_sframe_row hit, r;
	struct sfp_sframe_func f;
	uint64_t lo, hi, lo2, hi2, after_stp, after_tls, addr = 0;
	void *sec = NULL;
	size_t size = 0;

	after_stp = objdump_after(file, "stp\tx16, x30, [sp, #-16]!", &lo, &hi);
	after_tls = objdump_after(file, "stp\tx2, x3, [sp, #-16]!", &lo2, &hi2);
	if (!ASSERT_NE(after_stp, 0) || !ASSERT_TRUE(hi > lo + 32))
		return;
	ASSERT_EQ(after_tls != 0, want_tls);
	if (!ASSERT_OK(sfp_sframe__build_from_elf(file, &bo, &sec, &size,
						  &addr, &st)))
		return;
	ASSERT_EQ(st.plt_fdes, want_tls ? 3u : 2u);
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = addr);
	if (!ASSERT_OK(sfp_sframe__open_mem(sec, size, &so, &mine)))
		goto out;
	/* PLT0 */
	if (ASSERT_OK(sfp_sframe__find(mine, lo, &hit))) {
		sfp_sframe__func(mine, hit.func_idx, &f);
		ASSERT_EQ(f.start, lo);
		ASSERT_EQ(f.size, 32u);
		ASSERT_EQ(hit.cfa.offset, 0);
		ASSERT_EQ(hit.ra.kind, SFP_LOC_NONE);
		if (ASSERT_OK(sfp_sframe__find(mine, after_stp, &r))) {
			ASSERT_EQ(r.start, after_stp);
			ASSERT_EQ(r.cfa.reg, SFP_DWARF_AARCH64_SP);
			ASSERT_EQ(r.cfa.offset, 16);
			ASSERT_EQ(r.ra.kind, SFP_LOC_CFA_DEREF);
			ASSERT_EQ(r.ra.offset, -8);
		}
	}
	/* The entries, up to the end or the TLSDESC trampoline. */
	if (ASSERT_OK(sfp_sframe__find(mine, lo + 32, &hit))) {
		sfp_sframe__func(mine, hit.func_idx, &f);
		ASSERT_EQ(f.start, lo + 32);
		/* The trampoline is the last 32 bytes. */
		ASSERT_EQ(f.start + f.size, want_tls ? hi - 32 : hi);
		ASSERT_EQ(f.num_rows, 1u);
		ASSERT_EQ(hit.cfa.offset, 0);
		ASSERT_EQ(hit.ra.kind, SFP_LOC_NONE);
	}
	if (want_tls && ASSERT_OK(sfp_sframe__find(mine, after_tls, &r))) {
		sfp_sframe__func(mine, r.func_idx, &f);
		ASSERT_EQ(f.start + f.size, hi);
		ASSERT_EQ(r.start, after_tls);
		ASSERT_EQ(r.cfa.offset, 16);
		ASSERT_EQ(r.ra.kind, SFP_LOC_NONE);
	}
	/* Nothing past the section from the PLT. */
	if (!sfp_sframe__find(mine, hi, &hit)) {
		sfp_sframe__func(mine, hit.func_idx, &f);
		ASSERT_GE(f.start, hi);
	}
out:
	free(sec);
	sfp_sframe__free(&mine);
}

TEST(cfi_aarch64_plt_stubs)
{
	static const char *const links[] = {
		"",
		"-mbranch-protection=standard -Wl,-z,force-bti",
		"-Wl,-z,pac-plt",
		("-shared -fPIC -mbranch-protection=standard "
		 "-Wl,-z,force-bti,-z,pac-plt"),
	};
	char exe[1024], cmd[4096];

	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(exe, sizeof(exe), "%s/plt-a64-%zu", test_tmp_dir(), i);
		snprintf(cmd, sizeof(cmd),
			 CROSS "gcc -O2 -w %s -o '%s' '%s/cfi/corpus.c' 2>/dev/null",
			 links[i], exe, test_data_dir());
		if (ASSERT_EQ(system(cmd), 0))
			check_plt(exe, false);
	}
	/* Debian's arm64 libstdc++ has the lazy TLSDESC trampoline. */
	check_plt("/usr/aarch64-linux-gnu/lib/libstdc++.so.6", true);
}
