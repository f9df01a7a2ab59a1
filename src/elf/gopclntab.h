/* SPDX-License-Identifier: MIT */
/*
 * The Go runtime's function table (the "pclntab"), as a layout: its
 * header, its function records and their pc-value tables.  Every Go
 * binary keeps it for the runtime's own tracebacks, stripped or not; the
 * symbolizer takes the functions' names from it (symbols/gopclntab.c) and
 * the table builder their stack-pointer deltas (cfi/gopclntab.c).  In
 * elf/ because it is a section of Go's ELF files that both read.
 *
 * Layouts read (by the magic at the start of the table):
 *   0xfffffffa  Go 1.16-1.17: functab entries are (entry pc, func offset)
 *               pairs of pointer size, entry pcs absolute;
 *   0xfffffff0  Go 1.18-1.19, 0xfffffff1 Go 1.20+: a text start in the
 *               header and (entry offset, func offset) pairs of 32 bits.
 * Go 1.2-1.15 (0xfffffffb) is refused with a message, not guessed at.
 *
 * Everything comes from the file: every offset is checked through a
 * cursor, and a damaged record is reported to the caller, which skips and
 * counts it.
 */
#ifndef SFP_ELF_GOPCLNTAB_H
#define SFP_ELF_GOPCLNTAB_H

#include "common/cursor.h"
#include "common/internal.h"

struct sfp_elf;

/* A table's header, checked. */
struct sfp_gotab {
	const uint8_t *data;
	size_t size;
	bool swap;		/* the file's byte order is not ours */
	unsigned int version;	/* 116, 118 or 120: the layout's Go version */
	unsigned int ptrsize;
	unsigned int quantum;	/* pc quantum: pc deltas are multiples */
	bool text_guessed;	/* no text start in the header: the caller's */
	uint64_t text_start;	/* functions' offsets are from here (1.18+) */
	uint64_t nfunc;
	uint64_t nameoff, pcoff, funcoff;	/* from the table's start */
};

/* Runtime flags of a function (_func.flag, Go 1.17+). */
#define SFP_GOFUNC_TOPFRAME 0x1	/* outermost frame of every stack */
#define SFP_GOFUNC_SPWRITE 0x2	/* writes SP: no SP delta to trust */
#define SFP_GOFUNC_ASM 0x4	/* written in assembly */

/* One function record. */
struct sfp_gofunc {
	uint64_t entry, end;	/* [entry, end): up to the next function */
	uint64_t rec;		/* table offset of its _func record */
	const char *name;	/* inside the table, NUL-terminated */
	uint32_t pcsp;		/* its SP-delta table, in the pc-value area
				   (0: none) */
	uint8_t funcid;		/* the runtime's funcID (0: normal) */
	uint8_t flag;		/* SFP_GOFUNC_* (0 before Go 1.17) */
};

/*
 * Check the header of the table of size bytes at data (swap: the file's
 * byte order is not ours); text_fallback is the text start when a 1.18+
 * header leaves it 0.  Quiet: on error *why says what was wrong.
 * Return: 0; -EBADMSG damaged or not a table; -ENOTSUP Go 1.2-1.15.
 */
SFP_HIDDEN int sfp_gotab_open(struct sfp_gotab *t, const uint8_t *data,
			      size_t size, bool swap, uint64_t text_fallback,
			      const char **why);

/*
 * Function i (< t->nfunc) into *f, its addresses absolute.
 * Return: 0; -EBADMSG its record is damaged (*f's rec still says where).
 */
SFP_HIDDEN int sfp_gotab_func(const struct sfp_gotab *t, uint64_t i,
			      struct sfp_gofunc *f);

/*
 * A pc-value table of a function (its SP deltas, say), run by run: each
 * sfp_gopcv_next() gives the value that holds for [*start, *end).
 */
struct sfp_gopcv {
	struct sfp_cursor c;
	unsigned int quantum;
	uint64_t pc, limit;
	int64_t val;
	bool first;
};

/* Start reading f's pc-value table at offset off of the pc-value area. */
SFP_HIDDEN int sfp_gopcv_init(struct sfp_gopcv *it, const struct sfp_gotab *t,
			      const struct sfp_gofunc *f, uint32_t off);

/*
 * The next run.  Return: 1 and the run; 0 at the table's end; -EBADMSG
 * truncated, or a run past the function's end or overflowing.
 */
SFP_HIDDEN int sfp_gopcv_next(struct sfp_gopcv *it, uint64_t *start,
			      uint64_t *end, int64_t *val);

/*
 * Where e's Go function table is: the .gopclntab section (.data.rel.ro
 * .gopclntab in PIE), else, for a binary with a Go build note, a table
 * found by its magic in .data.rel.ro or .rodata (externally linked cgo
 * binaries).  Return: 0 and the bytes, their file offset and byte order;
 * -ENOENT none; -EBADMSG its section unreadable.
 */
SFP_HIDDEN int sfp_gotab_find(struct sfp_elf *e, const uint8_t **data,
			      size_t *size, uint64_t *file_off, bool *swap);

/* sfp_gotab_find() and sfp_gotab_open() with .text's start as the
 * fallback; errors are said, naming e and the table's file offset.
 * Return: as those. */
SFP_HIDDEN int sfp_gotab_load(struct sfp_elf *e, struct sfp_gotab *t,
			      uint64_t *file_off);

#endif /* SFP_ELF_GOPCLNTAB_H */
