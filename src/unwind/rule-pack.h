/* SPDX-License-Identifier: MIT */
/*
 * A PC's unwind rule packed with its tag into one 64-bit word, for the
 * PC -> rule cache that sfp_backtrace() reads and fills from signal
 * handlers.  One aligned 8-byte load or store is single-copy atomic on
 * every 64-bit target we build for (x86-64, AArch64), so a reader sees a
 * whole entry, old or new, never half of each: no sequence count, no
 * lock, no copy, and a handler that interrupts a writer of its own thread
 * cannot deadlock or read a torn entry.  The tag is in the same word, so
 * the hit test and the rule arrive with one load.
 *
 * The data are the arch-neutral shape of a "plain" row: CFA = SP or FP +
 * offset; RA saved in a slot just below the CFA or (AArch64 leaves) still
 * in its register; FP saved in such a slot or kept.  What qualifies is the
 * arch's business (unw_rule_pack, step.c, for x86-64).  Everything else is
 * not packed and goes the general way.
 *
 * Layout (bit 0 least significant):
 *    0-2   kind (enum unw_pk_kind; 0: empty slot)
 *    3-18  CFA offset / 8, unsigned: (e & UNW_PK_CFA_MASK) is the offset
 *          in bytes (0 .. 524,280)
 *   19-23  RA slot: (address - CFA) / 8, -15 .. -1
 *   24-28  FP slot: the same; UNW_PK_NOT_SAVED: FP keeps its value
 *   29-63  key >> UNW_PK_INDEX_BITS, key = PC | exact << 48, exact: the
 *          PC is looked up as it is, not as return address - 1
 * The slot index is key & (UNW_PK_ENTRIES - 1), so tag and index give
 * back the whole key.  PCs of 2^48 and above are not packed.
 *
 * Slots lie below the CFA, so a reader checks one bound per frame: for
 * CFA = SP + off, unw_pk_make also guarantees that the RA slot is at or
 * above SP and drops an FP slot below SP (the epilogue popped it: FP
 * already holds the caller's value), so every read lies in [SP, CFA).
 */
#ifndef SFP_UNWIND_RULE_PACK_H
#define SFP_UNWIND_RULE_PACK_H

#include "unwind/unwind-internal.h"

#define UNW_PK_INDEX_BITS 14
#define UNW_PK_ENTRIES (1u << UNW_PK_INDEX_BITS)
#define UNW_PK_PC_BITS 48

enum unw_pk_kind {
	UNW_PK_EMPTY = 0,
	UNW_PK_SP,		/* CFA = SP + off, RA in its slot */
	UNW_PK_FP,		/* CFA = FP + off, RA in its slot */
	UNW_PK_OUTERMOST,	/* RA undefined: the walk ends here */
	UNW_PK_SIGNAL,		/* signal trampoline: registers in the
				   ucontext at SP */
	UNW_PK_SP_RA_REG,	/* CFA = SP + off, RA still in its register */
	UNW_PK_FP_RA_REG,	/* CFA = FP + off, RA still in its register */
};

#define UNW_PK_KIND_MASK 7ull
#define UNW_PK_CFA_SHIFT 3
#define UNW_PK_CFA_MASK 0x7fff8ull
#define UNW_PK_RA_SHIFT 19
#define UNW_PK_FP_SHIFT 24
#define UNW_PK_SLOT_MIN (-15)
#define UNW_PK_NOT_SAVED (-16)
#define UNW_PK_TAG_SHIFT 29
#define UNW_PK_EXACT (1ull << UNW_PK_PC_BITS)

/* The key of a PC looked up as is (exact) or as return address - 1. */
static inline uint64_t unw_pk_key(uint64_t pc, bool exact)
{
	return pc | (exact ? UNW_PK_EXACT : 0);
}

/* Index of a key's slot. */
static inline uint32_t unw_pk_index(uint64_t key)
{
	return (uint32_t)(key & (UNW_PK_ENTRIES - 1));
}

/* The tag bits of a slot holding key (with no rule bits). */
static inline uint64_t unw_pk_tag(uint64_t key)
{
	return (key >> UNW_PK_INDEX_BITS) << UNW_PK_TAG_SHIFT;
}

/* Does slot word e hold key?  (key < 2^49) */
static inline bool unw_pk_hit(uint64_t e, uint64_t key)
{
	return !((e ^ (key << (UNW_PK_TAG_SHIFT - UNW_PK_INDEX_BITS))) >>
		 UNW_PK_TAG_SHIFT);
}

/* Does slot word e hold the non-exact key pc with a rule of this kind?
 * (One test for both: the tag bits and the kind bits.) */
static inline bool unw_pk_hit_kind(uint64_t e, uint64_t pc,
				   unsigned int kind)
{
	return !((e ^ (pc << (UNW_PK_TAG_SHIFT - UNW_PK_INDEX_BITS)) ^ kind) &
		 (~0ull << UNW_PK_TAG_SHIFT | UNW_PK_KIND_MASK));
}

static inline unsigned int unw_pk_kind(uint64_t e)
{
	return (unsigned int)(e & UNW_PK_KIND_MASK);
}

static inline uint64_t unw_pk_cfa_off(uint64_t e)
{
	return e & UNW_PK_CFA_MASK;
}

/* A 5-bit signed slot field: offset from the CFA in 8-byte slots. */
static inline int64_t unw_pk_slot(uint64_t e, unsigned int shift)
{
	return (int64_t)(e << (64 - 5 - shift)) >> 59;
}

static inline int64_t unw_pk_ra_slot(uint64_t e)
{
	return unw_pk_slot(e, UNW_PK_RA_SHIFT);
}

static inline int64_t unw_pk_fp_slot(uint64_t e)
{
	return unw_pk_slot(e, UNW_PK_FP_SHIFT);
}

/*
 * Build the rule bits (no tag) of a kind from the CFA offset and the RA
 * and FP slots' offsets from the CFA, in bytes (INT32_MIN: not saved).
 * Return: the bits, or 0 when the rule does not fit (it is then not
 * packed).
 */
static inline uint64_t unw_pk_make(unsigned int kind, int64_t cfa_off,
				   int64_t ra_off, int64_t fp_off)
{
	bool sp_based = kind == UNW_PK_SP || kind == UNW_PK_SP_RA_REG;
	bool ra_reg = kind == UNW_PK_SP_RA_REG || kind == UNW_PK_FP_RA_REG;
	int64_t ra = UNW_PK_NOT_SAVED, fp = UNW_PK_NOT_SAVED;

	if (cfa_off < 0 || (cfa_off & 7) ||
	    (uint64_t)cfa_off > UNW_PK_CFA_MASK)
		return 0;
	if (!ra_reg) {
		if (ra_off == INT32_MIN || (ra_off & 7) ||
		    ra_off < UNW_PK_SLOT_MIN * 8 || ra_off >= 0)
			return 0;
		/* Below SP: no such frame; let the general walk say so. */
		if (sp_based && cfa_off + ra_off < 0)
			return 0;
		ra = ra_off / 8;
	}
	if (fp_off != INT32_MIN) {
		if ((fp_off & 7) || fp_off < UNW_PK_SLOT_MIN * 8 || fp_off >= 0)
			return 0;
		/* Popped whenever this PC runs (see above). */
		if (!(sp_based && cfa_off + fp_off < 0))
			fp = fp_off / 8;
	}
	return kind | (uint64_t)cfa_off |
	       ((uint64_t)ra & 31) << UNW_PK_RA_SHIFT |
	       ((uint64_t)fp & 31) << UNW_PK_FP_SHIFT;
}

/*
 * The packed form of a rule as this arch's walk steps it, or 0 when it
 * has none (only the general path can step it).  (step.c)
 */
SFP_HIDDEN uint64_t unw_rule_pack(const struct unw_rule *rule);

/*
 * For tests: sfp_backtrace()'s packed loop alone, from the caller, on the
 * packed cache as earlier walks left it -- or, when warm, after a whole
 * sfp_backtrace() walk from the same registers.  Return: frames; *stop
 * the stop reason, or -1 where the general loop would have gone on.
 * (backtrace.c)
 */
SFP_HIDDEN int unw_bt_packed_only(void **buf, int max, bool warm,
				  int *stop);

#endif /* SFP_UNWIND_RULE_PACK_H */
