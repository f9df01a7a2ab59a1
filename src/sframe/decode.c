// SPDX-License-Identifier: MIT
/*
 * SFrame decoder and validator.
 *
 * The section is checked in layers -- preamble and header, then the
 * bounds of the FDE and FRE sub-sections, then every FDE and every FRE --
 * and decoded once into the host-order arrays of struct sfp_sframe
 * (sframe_int.h).  The caller's bytes are only ever read through a
 * bounds-checked cursor (which also byte-swaps foreign-endian sections on
 * the fly) and never modified; nothing of them is kept, so lookups cannot
 * touch untrusted data.  Every count is checked against the bytes that
 * would have to hold it before anything is allocated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cursor.h"
#include "sframe/sframe_int.h"

struct dctx {
	const uint8_t *buf;
	size_t size;
	bool swap;
	const char *name;
	struct sfp_sframe *sf;
	uint8_t version;
	uint8_t flags;
	uint8_t abi;
	int8_t fixed_fp;
	int8_t fixed_ra;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint64_t hdr_size;	/* header + aux header */
	uint64_t fde_base;	/* section offset of the FDE sub-section */
	uint64_t fre_base;	/* section offset of the FRE sub-section */
	uint16_t sp_reg;
	uint16_t fp_reg;
	/* Rule de-duplication: open-addressed table of rule indices + 1. */
	uint32_t *ht;
	uint32_t ht_mask;
	uint32_t rules_cap;
};

#define bad(c, off, fmt, ...)                                              \
	(pr_warn("%s: SFrame offset 0x%llx: " fmt, (c)->name,               \
		 (unsigned long long)(off), ##__VA_ARGS__),                 \
	 -EBADMSG)

void sfp_sframe_abi_regs(uint8_t abi, uint16_t *sp, uint16_t *fp)
{
	switch (abi) {
	case SFP_SFRAME_ABI_AARCH64_BE:
	case SFP_SFRAME_ABI_AARCH64_LE:
		*sp = SFP_DWARF_AARCH64_SP;
		*fp = SFP_DWARF_AARCH64_FP;
		break;
	case SFP_SFRAME_ABI_S390X_BE:
		*sp = SFP_DWARF_S390X_SP;
		*fp = SFP_DWARF_S390X_FP;
		break;
	default:
		*sp = SFP_DWARF_AMD64_SP;
		*fp = SFP_DWARF_AMD64_FP;
		break;
	}
}

static int decode_header(struct dctx *c)
{
	struct sfp_cursor cur;
	uint16_t magic;
	uint8_t aux = 0;
	uint32_t fdeoff = 0, freoff = 0, valid_flags;
	unsigned int fde_size;
	uint64_t end;

	if (c->size < 4)
		return bad(c, 0, "truncated preamble (%zu bytes)", c->size);
	memcpy(&magic, c->buf, sizeof(magic));
	if (magic == SFRAME_MAGIC)
		c->swap = false;
	else if (magic == SFRAME_MAGIC_SWAPPED)
		c->swap = true;
	else
		return bad(c, 0, "bad magic 0x%04x", magic);
	if (c->size < SFRAME_HDR_SIZE)
		return bad(c, 0, "truncated header (%zu of %d bytes)", c->size,
			   SFRAME_HDR_SIZE);

	sfp_cursor_init(&cur, c->buf, c->size, c->swap);
	sfp_cursor_seek(&cur, SFRAME_HDR_OFF_VERSION);
	/* The header is 28 bytes and size >= 28: these reads cannot fail. */
	sfp_cursor_u8(&cur, &c->version);
	sfp_cursor_u8(&cur, &c->flags);
	sfp_cursor_u8(&cur, &c->abi);
	sfp_cursor_i8(&cur, &c->fixed_fp);
	sfp_cursor_i8(&cur, &c->fixed_ra);
	sfp_cursor_u8(&cur, &aux);
	sfp_cursor_u32(&cur, &c->num_fdes);
	sfp_cursor_u32(&cur, &c->num_fres);
	sfp_cursor_u32(&cur, &c->fre_len);
	sfp_cursor_u32(&cur, &fdeoff);
	if (sfp_cursor_u32(&cur, &freoff))
		return bad(c, 0, "truncated header");

	switch (c->version) {
	case SFRAME_VERSION_1:
		valid_flags = SFRAME_V1_F_ALL;
		break;
	case SFRAME_VERSION_2:
		valid_flags = SFRAME_V2_F_ALL;
		break;
	case SFRAME_VERSION_3:
		valid_flags = SFRAME_V3_F_ALL;
		break;
	default:
		pr_warn("%s: SFrame offset 0x2: unsupported version %u",
			c->name, c->version);
		return -EOPNOTSUPP;
	}
	if (c->flags & ~valid_flags)
		return bad(c, SFRAME_HDR_OFF_FLAGS,
			   "unknown flags 0x%02x for version %u",
			   c->flags & ~valid_flags, c->version);
	if (c->abi < SFP_SFRAME_ABI_AARCH64_BE ||
	    c->abi > SFP_SFRAME_ABI_S390X_BE) {
		pr_warn("%s: SFrame offset 0x4: unsupported ABI %u", c->name,
			c->abi);
		return -EOPNOTSUPP;
	}
	sfp_sframe_abi_regs(c->abi, &c->sp_reg, &c->fp_reg);

	c->hdr_size = SFRAME_HDR_SIZE + (uint64_t)aux;
	if (c->hdr_size > c->size)
		return bad(c, SFRAME_HDR_OFF_AUXHDR_LEN,
			   "aux header (%u bytes) beyond the section end", aux);

	fde_size = sframe_fde_size(c->version);
	c->fde_base = c->hdr_size + fdeoff;
	end = c->fde_base + (uint64_t)c->num_fdes * fde_size;
	if (end > c->size)
		return bad(c, SFRAME_HDR_OFF_NUM_FDES,
			   "%u FDEs at offset 0x%llx reach past the section end (%zu bytes)",
			   c->num_fdes, (unsigned long long)c->fde_base,
			   c->size);
	c->fre_base = c->hdr_size + freoff;
	end = c->fre_base + c->fre_len;
	if (end > c->size)
		return bad(c, SFRAME_HDR_OFF_FRE_LEN,
			   "FRE sub-section [0x%llx, 0x%llx) reaches past the section end (%zu bytes)",
			   (unsigned long long)c->fre_base,
			   (unsigned long long)end, c->size);
	/* The smallest FRE is 2 bytes (1-byte start, info byte, no words). */
	if (c->num_fres > c->fre_len / 2)
		return bad(c, SFRAME_HDR_OFF_NUM_FRES,
			   "%u FREs cannot fit in %u bytes", c->num_fres,
			   c->fre_len);
	return 0;
}

/* A data word read as both its signed value and its raw bits. */
struct word {
	int32_t val;
	uint32_t raw;
};

static int read_word(struct sfp_cursor *cur, unsigned int size,
		     struct word *w)
{
	uint8_t u8 = 0;
	uint16_t u16 = 0;
	uint32_t u32 = 0;
	int err;

	switch (size) {
	case 1:
		err = sfp_cursor_u8(cur, &u8);
		w->val = (int8_t)u8;
		w->raw = u8;
		break;
	case 2:
		err = sfp_cursor_u16(cur, &u16);
		w->val = (int16_t)u16;
		w->raw = u16;
		break;
	default:
		err = sfp_cursor_u32(cur, &u32);
		w->val = (int32_t)u32;
		w->raw = u32;
		break;
	}
	return err;
}

static struct sfp_loc loc(uint8_t kind, uint8_t flags, uint16_t reg,
			  int32_t off)
{
	struct sfp_loc l = { .kind = kind, .flags = flags, .reg = reg,
			     .offset = off };
	return l;
}

/* RA or FP from a default-FDE data word. */
static struct sfp_loc word_loc(const struct dctx *c, const struct word *w,
			       bool is_ra)
{
	if (c->abi == SFP_SFRAME_ABI_S390X_BE) {
		if (is_ra && w->val == SFRAME_FRE_RA_OFFSET_INVALID)
			return loc(SFP_LOC_NOT_SAVED, SFP_LOC_F_PADDING, 0, 0);
		if (c->version == SFRAME_VERSION_2 &&
		    sframe_v2_s390x_offset_is_regnum(w->val))
			return loc(SFP_LOC_REG, 0, (uint16_t)(w->raw >> 1), 0);
	}
	return loc(SFP_LOC_CFA_DEREF, 0, 0, w->val);
}

static struct sfp_loc fixed_loc(int8_t fixed)
{
	if (!fixed)
		return loc(SFP_LOC_NONE, 0, 0, 0);
	return loc(SFP_LOC_CFA_DEREF, SFP_LOC_F_FIXED, 0, fixed);
}

static int default_rule(const struct dctx *c, uint64_t off, uint8_t fi,
			const struct word *w, unsigned int n,
			struct sfp_sframe_rule *r)
{
	unsigned int fp_idx;
	int64_t cfa = w[0].val;

	if (c->abi == SFP_SFRAME_ABI_S390X_BE) {
		cfa = sframe_s390x_cfa_decode(cfa);
		if (cfa < INT32_MIN || cfa > INT32_MAX)
			return bad(c, off, "s390x CFA offset out of range");
	}
	r->cfa = loc(SFP_LOC_REG, 0,
		     sframe_fre_info_base_reg(fi) == SFRAME_BASE_REG_SP
			     ? c->sp_reg : c->fp_reg,
		     (int32_t)cfa);
	if (c->fixed_ra) {
		r->ra = fixed_loc(c->fixed_ra);
		fp_idx = 1;
	} else {
		r->ra = n > 1 ? word_loc(c, &w[1], true)
			      : loc(SFP_LOC_NONE, 0, 0, 0);
		fp_idx = 2;
	}
	r->fp = n > fp_idx ? word_loc(c, &w[fp_idx], false)
			   : fixed_loc(c->fixed_fp);
	if (n > fp_idx + 1)
		return bad(c, off, "%u data words, at most %u for this ABI", n,
			   fp_idx + 1);
	return 0;
}

/* A (control word, offset word) pair of a flexible FDE. */
static int flex_pair(const struct dctx *c, uint64_t off, const struct word *ctl,
		     const struct word *ow, bool is_cfa, struct sfp_loc *l)
{
	uint32_t reg = ctl->raw >> SFRAME_FLEX_CTRL_REG_SHIFT;
	bool reg_p = ctl->raw & SFRAME_FLEX_CTRL_REG_P;
	bool deref = ctl->raw & SFRAME_FLEX_CTRL_DEREF_P;

	if (ctl->raw & SFRAME_FLEX_CTRL_RESERVED)
		return bad(c, off, "flex control word 0x%x has the reserved bit set",
			   ctl->raw);
	if (is_cfa && !reg_p)
		return bad(c, off, "flex CFA rule is not register-based (control 0x%x)",
			   ctl->raw);
	if (reg > UINT16_MAX)
		return bad(c, off, "flex register number %u out of range", reg);
	if (reg_p)
		*l = loc(deref ? SFP_LOC_REG_DEREF : SFP_LOC_REG, 0,
			 (uint16_t)reg, ow->val);
	else
		*l = loc(deref ? SFP_LOC_CFA_DEREF : SFP_LOC_CFA, 0, 0,
			 ow->val);
	return 0;
}

/*
 * Data words of a flexible FDE's FRE: the CFA pair, then either an RA
 * pair or a single 0 padding word (RA has no rule, FP follows), then the
 * optional FP pair.  Like libsframe, a 0 in word 2 always means padding,
 * so the only valid shapes are 2, 4, 5 (with padding) and 6 words; any
 * other reading of the same bytes would disagree with libsframe's.
 */
static int flex_rule(const struct dctx *c, uint64_t off, const struct word *w,
		     unsigned int n, struct sfp_sframe_rule *r)
{
	bool pad = n >= 3 && w[2].raw == 0;
	int err;

	if (pad ? n != 5 : (n != 2 && n != 4 && n != 6))
		return bad(c, off, "flex FRE with %u data words%s (want 2, 4 or 6, or 5 with a 0 padding word 2)",
			   n, pad ? " and a padding word" : "");
	err = flex_pair(c, off, &w[0], &w[1], true, &r->cfa);
	if (err)
		return err;
	r->ra = fixed_loc(c->fixed_ra);
	r->fp = fixed_loc(c->fixed_fp);
	if (pad) {
		if (c->fixed_ra)
			r->ra = loc(SFP_LOC_CFA_DEREF,
				    SFP_LOC_F_FIXED | SFP_LOC_F_PADDING, 0,
				    c->fixed_ra);
		else
			r->ra = loc(SFP_LOC_NOT_SAVED, SFP_LOC_F_PADDING, 0, 0);
		return flex_pair(c, off, &w[3], &w[4], false, &r->fp);
	}
	if (n >= 4) {
		err = flex_pair(c, off, &w[2], &w[3], false, &r->ra);
		if (err)
			return err;
	}
	if (n == 6)
		return flex_pair(c, off, &w[4], &w[5], false, &r->fp);
	return 0;
}

/*
 * Eight bytes a step, with a final mix for the low bits the table uses:
 * every row of every table decoded is hashed, and a byte at a time (52
 * dependent multiplies a row) was the largest part of decoding a cached
 * table (the agent's tables' thread loads them for every new program).
 */
static uint32_t rule_hash(const struct sfp_sframe_rule *r)
{
	const uint8_t *p = (const uint8_t *)r;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;
	size_t i;

	for (i = 0; i + 8 <= sizeof(*r); i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 31;
	}
	if (i < sizeof(*r)) {
		w = 0;
		memcpy(&w, p + i, sizeof(*r) - i);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* Double the hash table (and re-insert every rule). */
static int ht_grow(struct dctx *c)
{
	uint32_t nmask = c->ht_mask * 2 + 1, i;
	uint32_t *nht = calloc((size_t)nmask + 1, sizeof(*nht));

	if (!nht)
		return -ENOMEM;
	for (i = 0; i < c->sf->num_rules; i++) {
		uint32_t h = rule_hash(&c->sf->rules[i]) & nmask;

		while (nht[h])
			h = (h + 1) & nmask;
		nht[h] = i + 1;
	}
	free(c->ht);
	c->ht = nht;
	c->ht_mask = nmask;
	return 0;
}

/*
 * Index of rule r in sf->rules, adding it if new (*idx).  r must be fully
 * initialised (memset) because rules are compared bytewise.  Memory grows
 * with the number of distinct rules, not with the number of FREs.
 */
static int rule_intern(struct dctx *c, const struct sfp_sframe_rule *r,
		       uint32_t *idx)
{
	struct sfp_sframe *sf = c->sf;
	uint32_t h;

	if (2 * (uint64_t)(sf->num_rules + 1) > c->ht_mask) {
		int err = ht_grow(c);

		if (err)
			return err;
	}
	if (sf->num_rules == c->rules_cap) {
		uint32_t ncap = c->rules_cap ? c->rules_cap * 2 : 64;
		void *p = realloc(sf->rules, sizeof(*sf->rules) * ncap);

		if (!p)
			return -ENOMEM;
		sf->rules = p;
		c->rules_cap = ncap;
	}
	for (h = rule_hash(r) & c->ht_mask;; h = (h + 1) & c->ht_mask) {
		uint32_t e = c->ht[h];

		if (!e) {
			sf->rules[sf->num_rules] = *r;
			c->ht[h] = ++sf->num_rules;
			*idx = sf->num_rules - 1;
			return 0;
		}
		if (!memcmp(&sf->rules[e - 1], r, sizeof(*r))) {
			*idx = e - 1;
			return 0;
		}
	}
}

/*
 * Decode the FREs of function fi, which start at byte fre_off of the FRE
 * sub-section.  Rows go to sf->fres from *row_pos on.
 */
static int decode_fres(struct dctx *c, uint32_t fi, unsigned int fre_type,
		       uint64_t fre_off, uint32_t nfres, uint32_t *row_pos)
{
	struct sfp_sframe *sf = c->sf;
	struct sfp_sframe_lk *fn = &sf->lk[fi];	/* still in FDE order */
	unsigned int asz = sframe_fre_addr_size(fre_type);
	unsigned int max_words = fn->fde_type == SFP_SFRAME_FDE_FLEX
					 ? SFRAME_FRE_MAX_WORDS_FLEX
					 : SFRAME_FRE_MAX_WORDS_DEFAULT;
	struct sfp_cursor cur;
	uint32_t j, prev = 0;

	if (nfres > c->num_fres - *row_pos)
		return bad(c, c->fde_base + (uint64_t)fi * sframe_fde_size(c->version),
			   "FDE %u: its %u FREs exceed the header's total of %u",
			   fi, nfres, c->num_fres);
	sfp_cursor_init(&cur, c->buf + c->fre_base, c->fre_len, c->swap);
	if (sfp_cursor_seek(&cur, fre_off))
		return bad(c, c->fre_base + fre_off,
			   "FDE %u: FREs start beyond the FRE sub-section", fi);
	fn->first_row = *row_pos;
	fn->num_rows = nfres;
	for (j = 0; j < nfres; j++) {
		uint64_t off = c->fre_base + sfp_cursor_off(&cur);
		struct sfp_sframe_rule rule, *r = &rule;
		struct word w[SFRAME_FRE_MAX_WORDS_FLEX];
		uint32_t start;
		uint8_t fi_byte;
		unsigned int n, wsz, k;
		struct word sw;
		int err;

		if (read_word(&cur, asz, &sw) || sfp_cursor_u8(&cur, &fi_byte))
			return bad(c, off, "FDE %u FRE %u: truncated (FRE sub-section ends at 0x%llx)",
				   fi, j,
				   (unsigned long long)(c->fre_base + c->fre_len));
		start = sw.raw;
		n = sframe_fre_info_count(fi_byte);
		wsz = sframe_fre_word_size(sframe_fre_info_size_code(fi_byte));
		if (!wsz)
			return bad(c, off, "FDE %u FRE %u: invalid data-word size code 3",
				   fi, j);
		if (n > max_words)
			return bad(c, off, "FDE %u FRE %u: %u data words, at most %u",
				   fi, j, n, max_words);
		for (k = 0; k < n; k++)
			if (read_word(&cur, wsz, &w[k]))
				return bad(c, off, "FDE %u FRE %u: data words run past the FRE sub-section",
					   fi, j);
		if (j && start < prev)
			return bad(c, off, "FDE %u FRE %u: start offset 0x%x below the previous 0x%x",
				   fi, j, start, prev);
		prev = start;

		memset(r, 0, sizeof(*r));
		if (n == 0) {
			/* "RA undefined": the outermost frame. */
			r->ra = loc(SFP_LOC_UNDEFINED, 0, 0, 0);
			r->flags |= SFP_ROW_RA_UNDEFINED;
		} else if (fn->fde_type == SFP_SFRAME_FDE_FLEX) {
			err = flex_rule(c, off, w, n, r);
			if (err)
				return err;
		} else {
			err = default_rule(c, off, fi_byte, w, n, r);
			if (err)
				return err;
		}
		if (sframe_fre_info_mangled_ra(fi_byte) && n)
			r->flags |= SFP_ROW_MANGLED_RA;
		if (fn->attr & SFP_SFRAME_LK_SIGNAL)
			r->flags |= SFP_ROW_SIGNAL;
		if (fn->fde_type == SFP_SFRAME_FDE_FLEX)
			r->flags |= SFP_ROW_FLEX;
		if (fn->pc_type == SFP_SFRAME_PC_MASK)
			r->flags |= SFP_ROW_PCMASK;
		err = rule_intern(c, r, &sf->fres[*row_pos].rule);
		if (err)
			return err;
		sf->fres[*row_pos].start = start;
		(*row_pos)++;
	}
	return 0;
}

static int decode_fde(struct dctx *c, uint32_t i, uint32_t *row_pos,
		      uint64_t section_addr)
{
	struct sfp_sframe_lk *fn = &c->sf->lk[i];	/* in FDE order until sorted */
	uint64_t off = c->fde_base + (uint64_t)i * sframe_fde_size(c->version);
	unsigned int fre_type;
	struct sfp_cursor cur;
	uint64_t fre_off;
	uint32_t nfres, size, fre_off32;
	uint8_t info, info2 = 0, rep = 0;
	int64_t start;

	sfp_cursor_init(&cur, c->buf, c->size, c->swap);
	/* decode_header() checked that all FDEs lie inside the section. */
	if (sfp_cursor_seek(&cur, off))
		return bad(c, off, "FDE %u outside the section", i);
	if (c->version == SFRAME_VERSION_3) {
		uint16_t n16;
		struct sfp_cursor ac;

		if (sfp_cursor_i64(&cur, &start) ||
		    sfp_cursor_u32(&cur, &size) ||
		    sfp_cursor_u32(&cur, &fre_off32))
			return bad(c, off, "FDE %u truncated", i);
		sfp_cursor_init(&ac, c->buf + c->fre_base, c->fre_len, c->swap);
		if (sfp_cursor_seek(&ac, fre_off32) ||
		    sfp_cursor_u16(&ac, &n16) || sfp_cursor_u8(&ac, &info) ||
		    sfp_cursor_u8(&ac, &info2) || sfp_cursor_u8(&ac, &rep))
			return bad(c, c->fre_base + fre_off32,
				   "FDE %u: attribute record at FRE offset 0x%x beyond the FRE sub-section (%u bytes)",
				   i, fre_off32, c->fre_len);
		nfres = n16;
		fre_off = (uint64_t)fre_off32 + SFRAME_V3_FDE_ATTR_SIZE;
	} else {
		int32_t s32;

		if (sfp_cursor_i32(&cur, &s32) || sfp_cursor_u32(&cur, &size) ||
		    sfp_cursor_u32(&cur, &fre_off32) ||
		    sfp_cursor_u32(&cur, &nfres) || sfp_cursor_u8(&cur, &info))
			return bad(c, off, "FDE %u truncated", i);
		if (c->version == SFRAME_VERSION_2 && sfp_cursor_u8(&cur, &rep))
			return bad(c, off, "FDE %u truncated", i);
		start = s32;
		fre_off = fre_off32;
	}

	fn->size = size;
	fre_type = sframe_func_info_fre_type(info);
	fn->pc_type = (uint8_t)sframe_func_info_pc_type(info);
	fn->rep_size = rep;
	fn->attr = 0;
	if (sframe_func_info_pauth_key(info))
		fn->attr |= SFP_SFRAME_LK_PAUTH_B;
	if (c->version == SFRAME_VERSION_3 && sframe_func_info_signal(info))
		fn->attr |= SFP_SFRAME_LK_SIGNAL;
	fn->fde_type = SFP_SFRAME_FDE_DEFAULT;
	if (c->version == SFRAME_VERSION_3) {
		unsigned int t = info2 & SFRAME_FUNC_INFO2_FDE_TYPE_MASK;

		if (t > SFRAME_FDE_TYPE_FLEX) {
			pr_warn("%s: SFrame offset 0x%llx: FDE %u: unsupported FDE type %u",
				c->name,
				(unsigned long long)(c->fre_base + fre_off32),
				i, t);
			return -EOPNOTSUPP;
		}
		fn->fde_type = (uint8_t)t;
	}
	if (!sframe_fre_addr_size(fre_type))
		return bad(c, off, "FDE %u: invalid FRE type %u", i, fre_type);
	if (fn->pc_type == SFP_SFRAME_PC_MASK &&
	    c->version >= SFRAME_VERSION_2 && !rep)
		return bad(c, off, "FDE %u: PCMASK FDE with repetition size 0", i);

	/* Function start: relative to the section, or (FUNC_START_PCREL)
	 * to the start-address field itself.  We use the field's real
	 * position (sfh_fdeoff included); libsframe leaves fdeoff out, which
	 * only matters for sections no tool writes (fdeoff is always 0).
	 * Unsigned wrap-around is the intended modular address arithmetic. */
	fn->start = section_addr + (uint64_t)start;
	if (c->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		fn->start += off + SFRAME_FDE_OFF_START;

	return decode_fres(c, i, fre_type, fre_off, nfres, row_pos);
}

/* FDE indices by their function's start, then by index (qsort_r). */
static int cmp_fde_start(const void *a, const void *b, void *arg)
{
	const struct sfp_sframe_lk *lk = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (lk[x].start != lk[y].start)
		return lk[x].start < lk[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Below this many functions plain binary search is as fast. */
#define BUCKET_MIN_FUNCS 64

static int build_buckets(struct sfp_sframe *sf)
{
	uint32_t n = sf->num_fns, nb = 1, b, idx = 0;
	uint64_t lo, span;
	unsigned int shift = 0;

	if (n < BUCKET_MIN_FUNCS)
		return 0;
	while (nb < n)
		nb *= 2;
	lo = sf->lk[0].start;
	span = sf->lk[n - 1].start - lo;
	while (shift < 63 && (span >> shift) >= nb)
		shift++;
	sf->bucket = malloc(sizeof(*sf->bucket) * nb);
	if (!sf->bucket)
		return -ENOMEM;
	for (b = 0; b < nb; b++) {
		uint64_t rel = (uint64_t)b << shift;
		uint64_t edge = rel > span ? sf->lk[n - 1].start : lo + rel;

		while (idx + 1 < n && sf->lk[idx + 1].start <= edge)
			idx++;
		sf->bucket[b] = idx;
	}
	sf->num_buckets = nb;
	sf->bucket_shift = shift;
	sf->bucket_lo = lo;
	return 0;
}

/*
 * lk[] holds the functions in FDE order: sort it by start where the
 * FDEs were not (object files: gas output), keeping the permutation for
 * the callers that speak in FDE indices.
 */
static int build_index(struct dctx *c)
{
	struct sfp_sframe *sf = c->sf;
	struct sfp_sframe_lk *sorted;
	uint32_t i, n = sf->num_fns;
	bool in_order = true;

	for (i = 1; i < n; i++)
		if (sf->lk[i].start < sf->lk[i - 1].start) {
			in_order = false;
			break;
		}
	if (!in_order && (c->flags & SFRAME_F_FDE_SORTED))
		return bad(c, c->fde_base + (uint64_t)i * sframe_fde_size(c->version),
			   "FDE %u starts below FDE %u although SFRAME_F_FDE_SORTED is set",
			   i, i - 1);
	if (!in_order) {
		sf->fde_of_lk = malloc(sizeof(*sf->fde_of_lk) * n);
		sf->lk_of_fde = malloc(sizeof(*sf->lk_of_fde) * n);
		sorted = malloc(sizeof(*sorted) * n);
		if (!sf->fde_of_lk || !sf->lk_of_fde || !sorted) {
			free(sorted);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			sf->fde_of_lk[i] = i;
		qsort_r(sf->fde_of_lk, n, sizeof(*sf->fde_of_lk), cmp_fde_start,
			sf->lk);
		for (i = 0; i < n; i++) {
			sorted[i] = sf->lk[sf->fde_of_lk[i]];
			sf->lk_of_fde[sf->fde_of_lk[i]] = i;
		}
		free(sf->lk);
		sf->lk = sorted;
	}
	return build_buckets(sf);
}

static int decode(struct dctx *c, uint64_t section_addr)
{
	struct sfp_sframe *sf = c->sf;
	uint32_t i, row_pos = 0;
	int err;

	err = decode_header(c);
	if (err)
		return err;
	sf->info.version = c->version;
	sf->info.flags = c->flags;
	sf->info.abi = c->abi;
	sf->info.fixed_fp_offset = c->fixed_fp;
	sf->info.fixed_ra_offset = c->fixed_ra;
	sf->info.auxhdr_len = (uint8_t)(c->hdr_size - SFRAME_HDR_SIZE);
	sf->info.foreign_endian = c->swap;
	sf->info.num_fdes = c->num_fdes;
	sf->info.num_fres = c->num_fres;
	sf->info.fre_len = c->fre_len;
	sf->fde_base = c->fde_base;

	/* Both counts were bounded by the section size in decode_header(). */
	sf->lk = calloc(c->num_fdes ? c->num_fdes : 1, sizeof(*sf->lk));
	sf->fres = calloc(c->num_fres ? c->num_fres : 1, sizeof(*sf->fres));
	c->ht_mask = 127;
	c->ht = calloc((size_t)c->ht_mask + 1, sizeof(*c->ht));
	if (!sf->lk || !sf->fres || !c->ht)
		return -ENOMEM;
	sf->num_fns = c->num_fdes;
	for (i = 0; i < c->num_fdes; i++) {
		err = decode_fde(c, i, &row_pos, section_addr);
		if (err)
			return err;
	}
	if (row_pos != c->num_fres)
		return bad(c, SFRAME_HDR_OFF_NUM_FRES,
			   "header says %u FREs, the FDEs hold %u", c->num_fres,
			   row_pos);
	sf->num_rows = row_pos;
	return build_index(c);
}

int sfp_sframe__open_mem(const void *data, size_t size,
			 const struct sfp_sframe_opts *opts,
			 struct sfp_sframe **out)
{
	struct sfp_sframe *sf;
	struct dctx c = { 0 };
	const char *name;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if ((!data && size) || !SFP_OPTS_VALID(opts, sfp_sframe_opts))
		return -EINVAL;
	name = SFP_OPTS_GET(opts, sfp_sframe_opts, name, NULL);
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	sf->name = strdup(name ? name : "<memory>");
	if (!sf->name) {
		free(sf);
		return -ENOMEM;
	}
	sf->info.section_addr = SFP_OPTS_GET(opts, sfp_sframe_opts,
					     section_addr, 0);
	sf->info.bias = SFP_OPTS_GET(opts, sfp_sframe_opts, bias, 0);
	if (size == 0) {
		/* An empty section (the linker kept it with no content):
		 * a valid table without functions. */
		sf->empty = true;
		*out = sf;
		return 0;
	}
	c.buf = data;
	c.size = size;
	c.name = sf->name;
	c.sf = sf;
	err = decode(&c, sf->info.section_addr);
	free(c.ht);
	if (err) {
		sfp_sframe__free(&sf);
		return err;
	}
	*out = sf;
	return 0;
}

void sfp_sframe__free(struct sfp_sframe **sfp)
{
	struct sfp_sframe *sf;

	if (!sfp || !*sfp)
		return;
	sf = *sfp;
	free(sf->fres);
	free(sf->rules);
	free(sf->lk);
	free(sf->lk_of_fde);
	free(sf->fde_of_lk);
	free(sf->bucket);
	free(sf->name);
	free(sf);
	*sfp = NULL;
}
