/* SPDX-License-Identifier: MIT */
/*
 * Private form of a decoded SFrame section.
 *
 * decode.c validates the untrusted bytes once and fills these host-order
 * arrays; lookup.c, dump.c and dump-json.c only ever read them.
 *
 * Layout for fast lookups: the function search runs over lk[], 24-byte
 * entries in ascending start order that carry everything the row step
 * needs (so the final probe's entry is the only function data touched)
 * and all that is known of a function: there is no second array in FDE
 * order, which doubled a large library's function data (libLLVM: 83k
 * functions, 2.6 MB a copy).  Linkers and sfprof write FDEs sorted, so
 * lk[i] is FDE i; only an unsorted table (gas output) keeps the
 * permutation.  Rows are 8-byte (start, rule index) pairs, contiguous per
 * function; rules are de-duplicated (real tables have a few hundred
 * distinct ones), so the rule table stays cache-resident.
 */
#ifndef SFP_SFRAME_INT_H
#define SFP_SFRAME_INT_H

#include <sfprof/sframe.h>

#include "common/internal.h"
#include "sframe/format.h"

/* sfp_sframe_lk.attr */
enum {
	SFP_SFRAME_LK_SIGNAL = 1u << 0,	/* v3 signal frame */
	SFP_SFRAME_LK_PAUTH_B = 1u << 1, /* aarch64: RA signed with key B */
};

/* One function, in the lookup array (sorted by start). */
struct sfp_sframe_lk {
	uint64_t start;		/* VMA of the first PC, before bias */
	uint32_t size;
	uint32_t first_row;	/* index into fres[] */
	uint32_t num_rows;
	uint8_t pc_type;	/* SFP_SFRAME_PC_* */
	uint8_t rep_size;
	uint8_t fde_type;	/* SFP_SFRAME_FDE_* */
	uint8_t attr;		/* SFP_SFRAME_LK_* */
};
_Static_assert(sizeof(struct sfp_sframe_lk) == 24, "lk entries stay 24 bytes");

struct sfp_sframe_fre {
	uint32_t start;		/* offset from function start / in block */
	uint32_t rule;		/* index into rules[] */
};

struct sfp_sframe_rule {
	struct sfp_loc cfa;
	struct sfp_loc ra;
	struct sfp_loc fp;
	uint32_t flags;		/* SFP_ROW_* */
};

struct sfp_sframe {
	struct sfp_sframe_info info;
	bool empty;		/* zero-byte section: no header at all */
	uint64_t fde_base;	/* section offset of the FDE sub-section */
	char *name;

	uint32_t num_fns;
	uint32_t num_rows;
	struct sfp_sframe_fre *fres;	/* all rows, per function in order */
	uint32_t num_rules;
	struct sfp_sframe_rule *rules;	/* distinct rules */
	struct sfp_sframe_lk *lk;	/* num_fns entries, ascending start */
	/* An unsorted table's FDE order: lk_of_fde[FDE index] and its
	 * inverse fde_of_lk[]; both NULL when lk[i] is FDE i. */
	uint32_t *lk_of_fde;
	uint32_t *fde_of_lk;

	/* Bucket index over lk[]: bucket b covers PCs from
	 * bucket_lo + (b << bucket_shift); bucket[b] is the last lk entry
	 * starting at or below that.  A lookup then searches only between
	 * bucket[b] and bucket[b + 1] -- usually one or two entries.  NULL
	 * for small tables. */
	uint32_t *bucket;
	uint32_t num_buckets;		/* power of two */
	unsigned int bucket_shift;
	uint64_t bucket_lo;
};

/* DWARF numbers of the ABI's stack and frame pointer registers. */
SFP_HIDDEN void sfp_sframe_abi_regs(uint8_t abi, uint16_t *sp, uint16_t *fp);

/* The function stored as FDE fi (in range), and the FDE index of l. */
static inline const struct sfp_sframe_lk *
sfp_sframe_fde_lk(const struct sfp_sframe *sf, uint32_t fi)
{
	return &sf->lk[sf->lk_of_fde ? sf->lk_of_fde[fi] : fi];
}

static inline uint32_t sfp_sframe_lk_fde(const struct sfp_sframe *sf,
					 const struct sfp_sframe_lk *l)
{
	uint32_t i = (uint32_t)(l - sf->lk);

	return sf->fde_of_lk ? sf->fde_of_lk[i] : i;
}

/* Fill out from function fi, row ri (both in range). */
SFP_HIDDEN void sfp_sframe_fill_row(const struct sfp_sframe *sf, uint32_t fi,
				    uint32_t ri, struct sfp_sframe_row *out);

/*
 * Open the sfprof table file (container only) already open at fd, which
 * must be a regular file; name is for messages.  For callers that must
 * vet the file before reading it (the table cache).  Return 0 or -errno.
 */
SFP_HIDDEN int sframe_open_table_fd(int fd, const char *name,
				    const struct sfp_sframe_opts *opts,
				    struct sfp_sframe **out);

#endif /* SFP_SFRAME_INT_H */
