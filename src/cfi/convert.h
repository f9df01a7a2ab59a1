/* SPDX-License-Identifier: MIT */
/* CFI rows → SFrame rows, and ld-style PLT FDEs.  Internal. */
#ifndef SFP_CFI_CONVERT_H
#define SFP_CFI_CONVERT_H

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "cfi/cfi.h"

static inline bool cfi_fits_i32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static inline bool cfi_same_loc(const struct sfp_loc *a,
				const struct sfp_loc *b)
{
	return a->kind == b->kind && a->flags == b->flags && a->reg == b->reg &&
	       a->offset == b->offset;
}

/* SP, FP, RA: the registers an AMD64 conversion needs tracked. */
SFP_HIDDEN extern const struct cfi_track cfi_amd64_track;

/*
 * Convert the rows of one FDE (from cfi_run with cfi_amd64_track) into at
 * most rows->n SFrame rows in out, starts relative to the function.
 * *flex says a v3 flexible FDE is needed.
 * Return: 0; -EOPNOTSUPP with *why when the FDE cannot be expressed in
 * this version.
 */
SFP_HIDDEN int cfi_convert_amd64(const struct cfi_fde *fde,
				 const struct cfi_rows *rows, uint8_t version,
				 struct sfp_sframe_row *out, size_t *nout,
				 bool *flex, enum sfp_cfi_skip *why);

/* SP, FP, LR (x30): what an AArch64 conversion tracks. */
SFP_HIDDEN extern const struct cfi_track cfi_aarch64_track;

/*
 * As cfi_convert_amd64, for AArch64 (rows from cfi_run with
 * cfi_aarch64_track): RA tracked on the stack or left in LR, the
 * mangled-RA bit from negate_ra_state.  Never asks for a flexible FDE
 * (*flex is always false): gas does not write them for AArch64.
 */
SFP_HIDDEN int cfi_convert_aarch64(const struct cfi_fde *fde,
				   const struct cfi_rows *rows,
				   uint8_t version, struct sfp_sframe_row *out,
				   size_t *nout, bool *flex,
				   enum sfp_cfi_skip *why);

/* One PLT FDE: rows relative to start (PCINC) or to the block (PCMASK). */
struct cfi_plt_func {
	struct sfp_sframe_func fn;
	struct sfp_sframe_row rows[4];
	size_t nrows;
};

#define CFI_PLT_MAX_FUNCS 3

/*
 * The FDEs ld would give the x86-64 PLT section `name` (".plt",
 * ".plt.sec", ".plt.got") at addr with these contents, worked out from
 * the stubs themselves.  Return: number of FDEs (0 when the contents are
 * not stubs we recognise).
 */
SFP_HIDDEN int cfi_plt_amd64(const char *name, uint64_t addr,
			     const uint8_t *data, size_t size,
			     struct cfi_plt_func *out);

/*
 * The FDEs for the AArch64 ".plt" at addr (PLT0, then one FDE over all
 * PLTn entries), from the stubs.  Return: number of FDEs, 0 when the
 * contents are not ld's stubs (or another section name).
 */
SFP_HIDDEN int cfi_plt_aarch64(const char *name, uint64_t addr,
			       const uint8_t *data, size_t size,
			       struct cfi_plt_func *out);

/* What cfi_go_amd64() made of a Go function table. */
struct cfi_go_stats {
	uint32_t funcs;		/* FDEs from SP deltas */
	uint32_t topframe;	/* outermost FDEs (goexit, mstart, ...) */
	uint32_t left;		/* no FDE: stack switchers (SPWRITE), SP
				   deltas that are no frame (negative), and
				   TOPFRAME functions in SFrame v2 */
	uint32_t bad;		/* damaged records or SP tables (warned) */
};

typedef int (*cfi_go_fn)(void *ctx, const struct sfp_sframe_func *fn,
			 const struct sfp_sframe_row *rows);

struct sfp_elf;

/*
 * The FDEs of the x86-64 Go functions of e, from its Go function table's
 * SP deltas (go.c), each handed to emit (rows relative to fn->start) in
 * the table's order.  version: the SFrame version being written.
 * Return: 0 (also when e has no Go table, or a damaged one: said);
 * -ENOMEM; emit's error.
 */
SFP_HIDDEN int cfi_go_amd64(struct sfp_elf *e, uint8_t version, cfi_go_fn emit,
			    void *ctx, struct cfi_go_stats *st);

#endif /* SFP_CFI_CONVERT_H */
