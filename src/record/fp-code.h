/* SPDX-License-Identifier: MIT */
/*
 * Is a program frame-pointer code?  `record --call-graph auto` lets the
 * kernel defer (it walks frame pointers only) for such code and unwinds
 * with SFrame otherwise.
 */
#ifndef SFP_RECORD_FP_CODE_H
#define SFP_RECORD_FP_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/internal.h"

struct sfp_fp_code {
	uint32_t funcs;		/* functions with a frame (two rows or more;
				   PLT blocks left out) */
	uint32_t fp_funcs;	/* of these, with a row whose CFA is FP-based */
	bool fp_code;		/* fp_funcs are at least half of funcs */
};

/*
 * Classify the ELF at path from its SFrame table (its own .sframe, else
 * one built from .eh_frame, through the cache): a function is FP-based
 * when, past its prologue, some row computes the CFA from the frame
 * pointer (push %rbp; mov %rsp,%rbp gives "CFA = rbp + 16"); code built
 * without frame pointers has such rows only where a function needs a
 * frame pointer anyway (alloca, variable-length arrays, realigned stacks).
 *
 * Return: 0 and *out filled; -ENOENT no table and no CFI; other errors
 * as sfp_sframe__open_elf_table().
 */
SFP_HIDDEN int sfp_fp_code__classify(const char *path, struct sfp_fp_code *out);

#endif /* SFP_RECORD_FP_CODE_H */
