// SPDX-License-Identifier: MIT
/*
 * Frame-pointer code or not, judged from the program's unwind table: the
 * share of its functions whose CFA, after the prologue, is based on the
 * frame pointer.  The table is the one the unwinders use (own .sframe or
 * built from .eh_frame), so the answer costs nothing more than what the
 * recording would build anyway, and the cache makes it cheap the next
 * time.
 */
#include <errno.h>
#include <string.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "record/fp-code.h"

/* Functions of one table are capped by the SFrame decoder already; this
 * bounds the rows looked at per function, which are enough to pass any
 * prologue. */
#define FP_CODE_MAX_ROWS 64u

static bool func_is_fp_based(const struct sfp_sframe *sf, uint32_t idx,
			     uint32_t nr_rows)
{
	struct sfp_sframe_row row;
	uint32_t r;

	if (nr_rows > FP_CODE_MAX_ROWS)
		nr_rows = FP_CODE_MAX_ROWS;
	for (r = 0; r < nr_rows; r++) {
		if (sfp_sframe__row(sf, idx, r, &row))
			return false;
		if (row.cfa.kind == SFP_LOC_REG &&
		    row.cfa.reg == SFP_DWARF_AMD64_FP)
			return true;
	}
	return false;
}

int sfp_fp_code__classify(const char *path, struct sfp_fp_code *out)
{
	SFP_OPTS(sfp_table_opts, to);
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	struct sfp_sframe_func fn;
	uint32_t i, n;
	int err;

	memset(out, 0, sizeof(*out));
	err = sfp_sframe__open_elf_table(path, &to, &sf);
	if (err)
		return err;
	sfp_sframe__info(sf, &info);
	if (info.abi != SFP_SFRAME_ABI_AMD64_LE) {
		/* The FP register number and prologue are x86-64's. */
		sfp_sframe__free(&sf);
		return -EOPNOTSUPP;
	}
	n = sfp_sframe__num_funcs(sf);
	for (i = 0; i < n; i++) {
		/* One row: the function never moves its CFA (a leaf without
		 * a frame, _start, a PLT stub), as in either kind of code;
		 * gcc omits the frame pointer in leaves even when asked to
		 * keep it (-momit-leaf-frame-pointer is its x86-64 default). */
		if (sfp_sframe__func(sf, i, &fn) || fn.num_rows < 2 ||
		    fn.pc_type == SFP_SFRAME_PC_MASK)
			continue;
		out->funcs++;
		if (func_is_fp_based(sf, i, fn.num_rows))
			out->fp_funcs++;
	}
	out->fp_code = out->funcs && out->fp_funcs * 2 >= out->funcs;
	sfp_sframe__free(&sf);
	return 0;
}
