// SPDX-License-Identifier: MIT
/*
 * Go code → SFrame rows, from the runtime's own stack-pointer deltas.
 *
 * The Go linker writes no .eh_frame, and Debian strips .debug_frame, so
 * a Go binary had no table and its stacks were walked by frame pointers
 * alone: an assembly function that uses BP as a register (crypto,
 * hashing: notsha256.block in the compiler), a frameless leaf
 * (memequal0, duffzero) or the first instruction of a prologue lost the
 * caller, and the walk stopped.  Every Go binary keeps, for the
 * runtime's tracebacks, the SP delta of every pc of every function (the
 * "pcsp" pc-value table of its pclntab record), so the CFA is exact:
 * SP + delta + 8, the return address at CFA - 8.
 *
 * The frame pointer is saved at CFA - 16 by every Go function that has a
 * frame, once its prologue has run.  The pcsp table does not say when
 * that is; the prologue's bytes do, and both forms the compilers emit are
 * recognised where the delta first becomes positive:
 *   Go 1.21+:  push %rbp (the delta becomes 8 after it) -> saved from there;
 *   Go <=1.20: sub $F,%rsp then mov %rbp,F-8(%rsp)      -> saved after the mov
 *              (F = 8: mov %rbp,(%rsp), without displacement).
 * A function with neither (an assembly function declared NOFRAME that
 * pushes other registers) leaves FP alone.  While the delta is 0 (before
 * the prologue, after an epilogue) FP is the caller's.
 *
 * Left without an FDE, so that the walk takes the frame-pointer step
 * there as before: functions the runtime marks SPWRITE (they switch
 * stacks -- systemstack, morestack, mcall, gogo -- and their deltas do
 * not describe the stack the return address is on).  TOPFRAME functions
 * (goexit, mstart, rt0_go) get an outermost row (SFrame v3): the walk
 * ends there as the runtime's traceback does.
 */
#include "cfi/convert.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"

/* The CFA offset (delta + 8) must fit the row's 32 bits: reflect's call
 * trampolines have frames up to 1 GiB (runtime.call1073741824). */
#define GO_MAX_DELTA (INT32_MAX - 16)

struct go_run {
	uint64_t start, end;
	int64_t d;
};

struct go_ctx {
	struct sfp_elf *e;
	struct go_run *runs;
	size_t nruns, capruns;
	struct sfp_sframe_row *rows;
	size_t caprows;
};

static int push_run(struct go_ctx *g, uint64_t start, uint64_t end, int64_t d)
{
	if (g->nruns == g->capruns) {
		size_t cap = g->capruns ? g->capruns * 2 : 64;
		struct go_run *p = realloc(g->runs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		g->runs = p;
		g->capruns = cap;
	}
	g->runs[g->nruns++] = (struct go_run){ start, end, d };
	return 0;
}

/*
 * Where the saved FP becomes valid: the first pc with a positive delta
 * (p1, delta d) and the bytes around it.  UINT64_MAX: never saved.
 */
static uint64_t fp_saved_from(const struct sfp_elf *e, uint64_t entry,
			      uint64_t p1, int64_t d)
{
	const uint8_t *p;

	if (p1 > entry && d == 8 && !sfp_elf_vaddr_data(e, p1 - 1, 1, &p) &&
	    p[0] == 0x55)				/* push %rbp */
		return p1;
	if (d == 8 && !sfp_elf_vaddr_data(e, p1, 4, &p) && p[0] == 0x48 &&
	    p[1] == 0x89 && p[2] == 0x2c && p[3] == 0x24)
		return p1 + 4;				/* mov %rbp,(%rsp) */
	if (!sfp_elf_vaddr_data(e, p1, 5, &p) && p[0] == 0x48 &&
	    p[1] == 0x89 && p[2] == 0x6c && p[3] == 0x24 &&
	    (int64_t)(int8_t)p[4] == d - 8)		/* mov %rbp,disp8(%rsp) */
		return p1 + 5;
	if (!sfp_elf_vaddr_data(e, p1, 8, &p) && p[0] == 0x48 &&
	    p[1] == 0x89 && p[2] == 0xac && p[3] == 0x24) {
		int32_t disp;					/* disp32 */

		memcpy(&disp, p + 4, 4);
		if (disp == d - 8)
			return p1 + 8;
	}
	return UINT64_MAX;
}

static int reserve_rows(struct go_ctx *g, size_t n)
{
	struct sfp_sframe_row *p;

	if (n <= g->caprows)
		return 0;
	p = realloc(g->rows, n * 2 * sizeof(*p));
	if (!p)
		return -ENOMEM;
	g->rows = p;
	g->caprows = n * 2;
	return 0;
}

static void add_row(struct sfp_sframe_row *rows, size_t *n, uint64_t entry,
		    uint64_t start, uint64_t end, int64_t d, bool fp_saved)
{
	struct sfp_sframe_row r = {
		.start = start - entry,
		.end = end - entry,
		.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP,
			 .offset = (int32_t)(d + 8) },
		.ra = { .kind = SFP_LOC_CFA_DEREF, .flags = SFP_LOC_F_FIXED,
			.offset = -8 },
	};

	if (fp_saved)
		r.fp = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
					 .offset = -16 };
	if (start >= end)
		return;
	if (*n) {
		struct sfp_sframe_row *p = &rows[*n - 1];

		if (p->end == r.start && cfi_same_loc(&p->cfa, &r.cfa) &&
		    cfi_same_loc(&p->fp, &r.fp)) {
			p->end = r.end;
			return;
		}
	}
	r.row_idx = (uint32_t)*n;
	rows[(*n)++] = r;
}

/*
 * f's rows into g->rows.  Return: 0 and *nrows; -ERANGE a delta that is
 * no frame (syscall.rawVforkSyscall pops its own return address: -8);
 * -EBADMSG a damaged table; -ENOMEM.
 */
static int func_rows(struct go_ctx *g, const struct sfp_gotab *t,
		     const struct sfp_gofunc *f, size_t *nrows)
{
	struct sfp_gopcv it;
	uint64_t s, end, saved = UINT64_MAX;
	int64_t d;
	size_t i, n = 0;
	int r, err;

	g->nruns = 0;
	if (sfp_gopcv_init(&it, t, f, f->pcsp))
		return -EBADMSG;
	while ((r = sfp_gopcv_next(&it, &s, &end, &d)) > 0) {
		/* Deltas are whole words: the ABI keeps SP 8-aligned. */
		if (d < 0 || d > GO_MAX_DELTA || (d & 7))
			return -ERANGE;
		if (s < end && (err = push_run(g, s, end, d)))
			return err;
	}
	if (r < 0 || !g->nruns)
		return -EBADMSG;
	for (i = 0; i < g->nruns; i++)
		if (g->runs[i].d > 0) {
			saved = fp_saved_from(g->e, f->entry, g->runs[i].start,
					      g->runs[i].d);
			break;
		}
	if ((err = reserve_rows(g, g->nruns * 2)))
		return err;
	for (i = 0; i < g->nruns; i++) {
		const struct go_run *u = &g->runs[i];
		bool can = u->d >= 8;

		if (can && saved > u->start && saved < u->end) {
			add_row(g->rows, &n, f->entry, u->start, saved, u->d,
				false);
			add_row(g->rows, &n, f->entry, saved, u->end, u->d,
				true);
			continue;
		}
		add_row(g->rows, &n, f->entry, u->start, u->end, u->d,
			can && u->start >= saved);
	}
	*nrows = n;
	return 0;
}

int cfi_go_amd64(struct sfp_elf *e, uint8_t version, cfi_go_fn emit,
		 void *ctx, struct cfi_go_stats *st)
{
	struct go_ctx g = { .e = e };
	struct sfp_gotab t;
	struct sfp_gofunc f;
	uint64_t i, off;
	int err;

	memset(st, 0, sizeof(*st));
	err = sfp_gotab_load(e, &t, &off);
	if (err)	/* none, or said: the rest of the table stands */
		return err == -ENOMEM ? err : 0;
	for (i = 0; i < t.nfunc; i++) {
		struct sfp_sframe_func fn = { .pc_type = SFP_SFRAME_PC_INC };
		size_t nrows = 0;

		if (sfp_gotab_func(&t, i, &f) || f.end - f.entry > UINT32_MAX) {
			st->bad++;
			continue;
		}
		if (f.end == f.entry)
			continue;
		fn.start = f.entry;
		fn.size = (uint32_t)(f.end - f.entry);
		/* (rt0_go is both: the outermost mark wins) */
		if (f.flag & SFP_GOFUNC_TOPFRAME) {
			struct sfp_sframe_row top = {
				.end = fn.size,
				.flags = SFP_ROW_RA_UNDEFINED,
				.ra = { .kind = SFP_LOC_UNDEFINED },
			};

			if (version < 3) {	/* no outermost rows in v2 */
				st->left++;
				continue;
			}
			fn.num_rows = 1;
			st->topframe++;
			if ((err = emit(ctx, &fn, &top)))
				goto out;
			continue;
		}
		if (f.flag & SFP_GOFUNC_SPWRITE) {
			st->left++;
			continue;
		}
		if (!f.pcsp) {	/* markers (go:textfipsstart): no code */
			st->left++;
			continue;
		}
		err = func_rows(&g, &t, &f, &nrows);
		if (err == -ENOMEM)
			goto out;
		if (err == -ERANGE) {
			st->left++;
			continue;
		}
		if (err) {
			if (!st->bad++)
				pr_warn("%s: Go function table at file offset %#llx: SP deltas of %s (record at table offset %#llx) unreadable, left to frame pointers",
					sfp_elf_name(e),
					(unsigned long long)off, f.name,
					(unsigned long long)f.rec);
			continue;
		}
		fn.num_rows = (uint32_t)nrows;
		st->funcs++;
		if ((err = emit(ctx, &fn, g.rows)))
			goto out;
	}
	err = 0;
	if (st->bad > 1)
		pr_warn("%s: Go function table at file offset %#llx: %u functions' SP deltas unreadable, left to frame pointers",
			sfp_elf_name(e), (unsigned long long)off, st->bad);
out:
	free(g.runs);
	free(g.rows);
	return err;
}
