// SPDX-License-Identifier: MIT
/*
 * Equivalence with GNU as --gsframe: compile the CFI corpus
 * (tests/data/cfi/corpus.c + corpus-asm.S) with this machine's gcc and
 * `-Wa,--gsframe` in several variants (and clang -fno-integrated-as, whose
 * directives GNU as assembles), then check that for every function
 * gas (binutils 2.40: SFrame v1) emitted, the table sfprof builds from the
 * same executable's .eh_frame has the same start PCs, CFA base and offset
 * and FP rule.  ld's PLT entries are compared the same way, except for
 * IBT PLTs, where ld 2.40 writes the non-IBT rows (see src/cfi/plt.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "gas-compare.h"
#include "test.h"

/*
 * Functions where gas 2.40 is known to be wrong, so sfprof differs on
 * purpose.  Each entry says why.
 */
static const struct gas_bug gas_bugs[] = {
	/* .cfi_def_cfa_register %r11: gas 2.40 records "sp+8" (it takes any
	 * register that is not FP for SP); 2.41+ skips the FDE.  sfprof
	 * skips it in v2 and writes r11+8 in a v3 flexible FDE. */
	{ "asm_cfa_r11", "CFA in r11 recorded as SP" },
};

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
	    mf.pc_type != gf.pc_type || mf.num_rows != gf.num_rows) {
		fprintf(stderr,
			"  [%s] %s: gas start 0x%llx size %u type %u rows %u; "
			"sfprof 0x%llx %u %u %u\n",
			variant, name, (unsigned long long)gf.start, gf.size,
			gf.pc_type, gf.num_rows, (unsigned long long)mf.start,
			mf.size, mf.pc_type, mf.num_rows);
		return false;
	}
	for (uint32_t r = 0; r < gf.num_rows; r++) {
		sfp_sframe__row(gas, gi, r, &gr);
		sfp_sframe__row(mine, hit.func_idx, r, &mr);
		if (gr.start != mr.start || !same_loc(&gr.cfa, &mr.cfa) ||
		    !same_loc(&gr.fp, &mr.fp)) {
			fprintf(stderr,
				"  [%s] %s row %u: gas @0x%llx cfa %u/r%u%+d fp %u%+d; "
				"sfprof @0x%llx cfa %u/r%u%+d fp %u%+d\n",
				variant, name, r, (unsigned long long)gr.start,
				gr.cfa.kind, gr.cfa.reg, gr.cfa.offset,
				gr.fp.kind, gr.fp.offset,
				(unsigned long long)mr.start, mr.cfa.kind,
				mr.cfa.reg, mr.cfa.offset, mr.fp.kind,
				mr.fp.offset);
			return false;
		}
	}
	return true;
}

/*
 * Our v3 output differs from gas 2.40 by design where v3 can say more: a
 * flexible FDE, or an RA-undefined (outermost) row, which 2.40 ignores.
 */
static bool v3_only_form(const struct sfp_sframe *mine, uint64_t start)
{
	struct sfp_sframe_row hit, r;
	struct sfp_sframe_func f;

	if (sfp_sframe__find(mine, start, &hit) ||
	    sfp_sframe__func(mine, hit.func_idx, &f))
		return false;
	if (f.fde_type == SFP_SFRAME_FDE_FLEX)
		return true;
	for (uint32_t i = 0; i < f.num_rows; i++)
		if (!sfp_sframe__row(mine, hit.func_idx, i, &r) &&
		    (r.flags & SFP_ROW_RA_UNDEFINED))
			return true;
	return false;
}

static int run_variant(const char *flags, bool ibt, uint8_t version,
		       int *compared)
{
	char exe[1024], cmd[4096];
	struct sfp_sframe *gas = NULL, *mine = NULL;
	struct sfp_build_stats st = { .sz = sizeof(st) };
	SFP_OPTS(sfp_build_opts, bo, .version = version);
	char label[300];
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0;
	int bad = 0, n = 0;
	static int seq;

	snprintf(exe, sizeof(exe), "%s/corpus-%d", test_tmp_dir(), seq++);
	snprintf(cmd, sizeof(cmd),
		 "%s -Wa,--gsframe -o '%s' '%s/cfi/corpus.c' "
		 "'%s/cfi/corpus-asm.S' 2>/dev/null",
		 flags, exe, test_data_dir(), test_data_dir());
	if (system(cmd)) {
		fprintf(stderr, "  cannot build with: %s\n", flags);
		return -1;
	}
	/* The program must still run. */
	snprintf(cmd, sizeof(cmd), "'%s' > /dev/null", exe);
	if (!ASSERT_EQ(system(cmd), 0))
		return -1;
	load_syms("nm", exe);
	snprintf(label, sizeof(label), "%s, v%u", flags, version);
	if (!ASSERT_OK(sfp_sframe__open_file(exe, NULL, &gas)))
		return -1;
	if (!ASSERT_OK(sfp_sframe__build_from_elf(exe, &bo, &sec, &size, &addr,
						  &st)))
		goto out;
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = addr);
	if (!ASSERT_OK(sfp_sframe__open_mem(sec, size, &so, &mine)))
		goto out;
	for (uint32_t i = 0; i < sfp_sframe__num_funcs(gas); i++) {
		struct sfp_sframe_func gf;
		const char *why;

		sfp_sframe__func(gas, i, &gf);
		why = gas_known_bug(gas_bugs, ARRAY_SIZE(gas_bugs),
				    sym_at(gf.start));
		if (ibt && gf.pc_type == SFP_SFRAME_PC_MASK)
			continue;	/* ld 2.40's IBT PLT rows are wrong */
		if (ibt && sym_at(gf.start)[0] == '?')
			continue;	/* ... and its .plt.sec FDEs too */
		if (why) {
			/* We must differ (v2: no FDE, v3: a flexible one):
			 * a match would mean the bug list is stale. */
			struct sfp_sframe_row hit;

			if (version < 3)
				ASSERT_ERR(sfp_sframe__find(mine, gf.start, &hit),
					   -ENOENT);
			else
				ASSERT_TRUE(v3_only_form(mine, gf.start));
			continue;
		}
		if (version >= 3 && v3_only_form(mine, gf.start))
			continue;
		if (compare_func(gas, i, mine, label))
			n++;
		else
			bad++;
	}
	*compared += n;
	fprintf(stderr, "  [%s] %d functions equal, %d differ\n", label, n,
		bad);
out:
	free(sec);
	sfp_sframe__free(&gas);
	sfp_sframe__free(&mine);
	return bad;
}

TEST(cfi_rows_equal_gas_gsframe)
{
	static const struct {
		const char *flags;
		bool ibt;
	} variants[] = {
		{ "gcc -O2", false },
		{ "gcc -O2 -fno-omit-frame-pointer", false },
		{ "gcc -O2 -mstackrealign", false },
		{ "gcc -O2 -fexceptions -fasynchronous-unwind-tables", false },
		{ "gcc -Os", false },
		{ "gcc -O0", false },
		{ "gcc -O3 -fno-omit-frame-pointer -mstackrealign", false },
		{ "gcc -O2 -fcf-protection -Wl,-z,ibtplt", true },
		/* clang's CFI directives, assembled by GNU as */
		{ "clang -O2 -fno-integrated-as -w", false },
		{ "clang -O0 -fno-integrated-as -w", false },
	};
	int compared = 0, bad = 0;

	if (system("echo 'nop' | as --gsframe -o /dev/null - 2>/dev/null")) {
		test_skip("this assembler has no --gsframe");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(variants); i++) {
		for (uint8_t v = 2; v <= 3; v++) {
			int r = run_variant(variants[i].flags, variants[i].ibt,
					    v, &compared);

			if (!ASSERT_GE(r, 0) || !ASSERT_EQ(r, 0))
				bad++;
		}
	}
	ASSERT_EQ(bad, 0);
	/* ≥ 25 functions per variant and version on average. */
	ASSERT_GE(compared, 2 * 25 * (int)ARRAY_SIZE(variants));
}
