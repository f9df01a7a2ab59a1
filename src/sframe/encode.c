// SPDX-License-Identifier: MIT
/*
 * SFrame encoder: functions and rows in the semantic form of
 * include/sfprof/sframe.h → a version 2 (always FUNC_START_PCREL) or
 * version 3 section, in the byte order of the target ABI.
 *
 * Each function is turned into FRE bytes when it is added, so a function
 * the output version cannot express is reported by add_func (naming the
 * row and the reason) rather than at the end.  write() only sorts the
 * functions, lays out the sub-sections and fixes up the PC-relative start
 * addresses, which depend on each FDE's final position.
 *
 * The encoder is the inverse of the decoder: decode(encode(x)) == x for
 * every x that the decoder can produce for the output version.  It never
 * merges rows unless asked to (SFP_SFRAME_BUILDER_F_MERGE_ROWS), because a round trip
 * must reproduce the rows exactly as given.  The choices it makes are
 * described in docs/sframe-encoder.md.
 */
#include <inttypes.h>
#include <stdarg.h>

#include <sfprof/sframe.h>

#include "common/internal.h"
#include "sframe/builder.h"
#include "sframe/format.h"

/* Reasons are short strings: "row 3: CFA base is r10". */
#define WHY_LEN 160

/* One FRE before serialisation: host-order values. */
struct enc_fre {
	uint32_t start;
	uint8_t info;		/* fre_info without the word-size code */
	uint8_t nwords;
	int32_t words[SFRAME_FRE_MAX_WORDS_FLEX];
};

/* One function as it will be written. */
struct enc_func {
	uint64_t start;
	uint32_t size;
	uint32_t num_fres;
	uint32_t seq;		/* order of addition: keeps the sort stable */
	uint8_t info;		/* func info byte (FRE type, PC type, key, signal) */
	uint8_t info2;		/* v3: FDE type */
	uint8_t rep_size;
	size_t fre_off;		/* this function's FRE bytes in b->fres */
	size_t fre_len;
	bool dropped;		/* sfp_sframe_builder__drop(): not written */
};

struct sfp_sframe_builder {
	uint8_t version;
	uint8_t abi;
	int8_t fixed_fp;
	int8_t fixed_ra;
	bool swap;		/* target byte order differs from the host's */
	bool merge_rows;
	uint64_t section_addr;

	struct enc_func *funcs;
	size_t nr_funcs, cap_funcs;
	uint8_t *fres;		/* FRE bytes of all functions, target order */
	size_t fres_len, fres_cap;
	struct enc_fre *scratch;	/* one function's FREs, reused */
	size_t scratch_cap;
	uint64_t total_fres;
	size_t fres_dropped;	/* bytes of dropped functions' FREs */
};

/* --- Small helpers. --- */

static bool abi_is_big_endian(uint8_t abi)
{
	return abi == SFRAME_ABI_AARCH64_ENDIAN_BIG ||
	       abi == SFRAME_ABI_S390X_ENDIAN_BIG;
}

static bool abi_is_s390x(uint8_t abi)
{
	return abi == SFRAME_ABI_S390X_ENDIAN_BIG;
}

/* DWARF numbers of the stack and frame pointer: the two default bases. */
static void abi_sp_fp(uint8_t abi, uint16_t *sp, uint16_t *fp)
{
	switch (abi) {
	case SFRAME_ABI_AARCH64_ENDIAN_BIG:
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
		*sp = SFP_DWARF_AARCH64_SP;
		*fp = SFP_DWARF_AARCH64_FP;
		break;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		*sp = SFP_DWARF_S390X_SP;
		*fp = SFP_DWARF_S390X_FP;
		break;
	default:
		*sp = SFP_DWARF_AMD64_SP;
		*fp = SFP_DWARF_AMD64_FP;
		break;
	}
}

/* Smallest data-word size code whose signed range holds v. */
static unsigned int word_size_code(int64_t v)
{
	if (v >= INT8_MIN && v <= INT8_MAX)
		return SFRAME_FRE_OFFSET_1B;
	if (v >= INT16_MIN && v <= INT16_MAX)
		return SFRAME_FRE_OFFSET_2B;
	return SFRAME_FRE_OFFSET_4B;
}

/* Smallest FRE type whose start field holds every row start up to max. */
static unsigned int fre_type_for(uint32_t max_start)
{
	if (max_start <= UINT8_MAX)
		return SFRAME_FRE_TYPE_ADDR1;
	if (max_start <= UINT16_MAX)
		return SFRAME_FRE_TYPE_ADDR2;
	return SFRAME_FRE_TYPE_ADDR4;
}

/* Store an n-byte value (1, 2, 4 or 8) in target byte order. */
static void put_uint(const struct sfp_sframe_builder *b, uint8_t *p,
		     uint64_t v, unsigned int n)
{
	uint16_t v16;
	uint32_t v32;

	switch (n) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		v16 = (uint16_t)v;
		if (b->swap)
			v16 = sfp_bswap16(v16);
		memcpy(p, &v16, 2);
		break;
	case 4:
		v32 = (uint32_t)v;
		if (b->swap)
			v32 = sfp_bswap32(v32);
		memcpy(p, &v32, 4);
		break;
	default:
		if (b->swap)
			v = sfp_bswap64(v);
		memcpy(p, &v, 8);
		break;
	}
}

/* --- Builder life cycle. --- */

int sfp_sframe_builder__new(const struct sfp_sframe_builder_opts *opts,
			    struct sfp_sframe_builder **out)
{
	struct sfp_sframe_builder *b;
	uint8_t version, abi;
	int8_t fixed_ra;
	uint64_t flags;
	bool host_be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_sframe_builder_opts))
		return -EINVAL;

	version = SFP_OPTS_GET(opts, sfp_sframe_builder_opts, version, 0);
	abi = SFP_OPTS_GET(opts, sfp_sframe_builder_opts, abi, 0);
	if (!version)
		version = SFRAME_VERSION_3;
	if (!abi)
		abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	if (version != SFRAME_VERSION_2 && version != SFRAME_VERSION_3) {
		pr_warn("sframe encoder: cannot write version %u (only 2 and 3)",
			version);
		return -EOPNOTSUPP;
	}
	if (abi < SFRAME_ABI_AARCH64_ENDIAN_BIG ||
	    abi > SFRAME_ABI_S390X_ENDIAN_BIG) {
		pr_warn("sframe encoder: unknown ABI %u", abi);
		return -EINVAL;
	}

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->version = version;
	b->abi = abi;
	b->swap = abi_is_big_endian(abi) != host_be;
	b->fixed_fp = SFP_OPTS_GET(opts, sfp_sframe_builder_opts,
				   fixed_fp_offset, 0);
	fixed_ra = SFP_OPTS_GET(opts, sfp_sframe_builder_opts,
				fixed_ra_offset, 0);
	/* AMD64 keeps the return address at CFA-8 in every frame, which is
	 * why the format has a header field for it. */
	if (!fixed_ra && abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		fixed_ra = SFRAME_AMD64_FIXED_RA_OFFSET;
	if (SFP_OPTS_GET(opts, sfp_sframe_builder_opts, no_fixed_ra, false))
		fixed_ra = 0;
	b->fixed_ra = fixed_ra;
	b->section_addr = SFP_OPTS_GET(opts, sfp_sframe_builder_opts,
				       section_addr, 0);
	flags = SFP_OPTS_GET(opts, sfp_sframe_builder_opts, flags, 0);
	if (flags & ~(uint64_t)SFP_SFRAME_BUILDER_F_MERGE_ROWS) {
		pr_warn("sframe encoder: unknown builder flags 0x%" PRIx64,
			flags);
		free(b);
		return -EINVAL;
	}
	b->merge_rows = flags & SFP_SFRAME_BUILDER_F_MERGE_ROWS;
	*out = b;
	return 0;
}

void sfp_sframe_builder__free(struct sfp_sframe_builder **bp)
{
	struct sfp_sframe_builder *b;

	if (!bp || !*bp)
		return;
	b = *bp;
	free(b->funcs);
	free(b->fres);
	free(b->scratch);
	free(b);
	*bp = NULL;
}

/* --- Input validation (-EINVAL): things no version can mean. --- */

static bool row_ra_undefined(const struct sfp_sframe_row *r)
{
	return (r->flags & SFP_ROW_RA_UNDEFINED) ||
	       r->ra.kind == SFP_LOC_UNDEFINED;
}

#define SFP_ROW_ALL_FLAGS (SFP_ROW_MANGLED_RA | SFP_ROW_RA_UNDEFINED | \
			   SFP_ROW_SIGNAL | SFP_ROW_FLEX | SFP_ROW_PCMASK)

/*
 * Rewrite the reason @why (WHY_LEN bytes) from @fmt, which may use @why
 * itself: "row 7: <why>".  A reason that no longer fits is cut and ends in
 * "..." so that the warning shows it was cut.
 */
static void __attribute__((format(printf, 2, 3)))
why_prefix(char *why, const char *fmt, ...)
{
	char tmp[WHY_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;		/* (no conversion here can fail) */
	if ((size_t)n >= sizeof(tmp))
		memcpy(tmp + sizeof(tmp) - 4, "...", 4);
	memcpy(why, tmp, WHY_LEN);
}

static int check_loc(const struct sfp_sframe_builder *b,
		     const struct sfp_loc *l, const char *what, int8_t fixed,
		     char *why)
{
	if (l->kind > SFP_LOC_NOT_SAVED) {
		snprintf(why, WHY_LEN, "%s has unknown rule kind %u", what,
			 l->kind);
		return -EINVAL;
	}
	if (l->flags & ~(SFP_LOC_F_FIXED | SFP_LOC_F_PADDING)) {
		snprintf(why, WHY_LEN, "%s has unknown flags 0x%x", what,
			 l->flags);
		return -EINVAL;
	}
	if ((l->flags & SFP_LOC_F_FIXED) &&
	    (l->kind != SFP_LOC_CFA_DEREF || !fixed || l->offset != fixed)) {
		snprintf(why, WHY_LEN,
			 "%s is marked fixed but the header's fixed offset is %d",
			 what, fixed);
		return -EINVAL;
	}
	/* A padding word stands for the RA only: "not saved", or on AMD64
	 * flexible FDEs the fixed slot. */
	if ((l->flags & SFP_LOC_F_PADDING) &&
	    (strcmp(what, "RA") ||
	     (l->kind != SFP_LOC_NOT_SAVED &&
	      !(l->flags & SFP_LOC_F_FIXED)))) {
		snprintf(why, WHY_LEN,
			 "%s rule kind %u cannot come from a padding word",
			 what, l->kind);
		return -EINVAL;
	}
	return 0;
}

static int check_row(const struct sfp_sframe_builder *b,
		     const struct sfp_sframe_row *r, char *why)
{
	int err;

	if (r->flags & ~SFP_ROW_ALL_FLAGS) {
		snprintf(why, WHY_LEN, "unknown row flags 0x%x", r->flags);
		return -EINVAL;
	}
	if (row_ra_undefined(r)) {
		/* The outermost-frame marker has no other rules to check. */
		if (r->ra.kind != SFP_LOC_UNDEFINED &&
		    r->ra.kind != SFP_LOC_NONE) {
			snprintf(why, WHY_LEN,
				 "RA-undefined row has an RA rule (kind %u)",
				 r->ra.kind);
			return -EINVAL;
		}
		return 0;
	}
	err = check_loc(b, &r->cfa, "CFA", 0, why);
	if (!err)
		err = check_loc(b, &r->ra, "RA", b->fixed_ra, why);
	if (!err)
		err = check_loc(b, &r->fp, "FP", b->fixed_fp, why);
	if (err)
		return err;
	if (r->cfa.kind != SFP_LOC_REG && r->cfa.kind != SFP_LOC_REG_DEREF) {
		snprintf(why, WHY_LEN, "CFA rule kind %u is not register-based",
			 r->cfa.kind);
		return -EINVAL;
	}
	if (r->fp.kind == SFP_LOC_UNDEFINED ||
	    r->fp.kind == SFP_LOC_NOT_SAVED) {
		snprintf(why, WHY_LEN, "FP rule kind %u is only valid for RA",
			 r->fp.kind);
		return -EINVAL;
	}
	return 0;
}

/* --- Rows → FRE words. --- */

/* The outermost-frame FRE: no words and fre_info 0 (v3 only). */
static int enc_ra_undefined(const struct sfp_sframe_builder *b,
			    const struct sfp_sframe_row *r,
			    struct enc_fre *f, char *why)
{
	if (b->version < SFRAME_VERSION_3) {
		snprintf(why, WHY_LEN, "RA-undefined rows need version 3");
		return -EOPNOTSUPP;
	}
	if (r->flags & SFP_ROW_MANGLED_RA) {
		snprintf(why, WHY_LEN,
			 "an RA-undefined row cannot carry the mangled-RA bit");
		return -EOPNOTSUPP;
	}
	f->info = SFRAME_FRE_INFO_RA_UNDEFINED;
	f->nwords = 0;
	return 0;
}

/*
 * Word for an RA or FP slot of a default FDE, or none.
 * Return: 1 with *w set, 0 for "no word", -EOPNOTSUPP with why.
 */
static int default_slot(const struct sfp_sframe_builder *b,
			const struct sfp_loc *l, bool is_ra, int8_t fixed,
			int32_t *w, char *why)
{
	const char *what = is_ra ? "RA" : "FP";
	bool s390x = abi_is_s390x(b->abi);

	if (fixed) {
		/* The header says where it is in every row; FREs carry
		 * no word for it. */
		if (l->kind == SFP_LOC_CFA_DEREF && l->offset == fixed &&
		    !(l->flags & SFP_LOC_F_PADDING))
			return 0;
		snprintf(why, WHY_LEN,
			 "%s rule differs from the header's fixed c%+d", what,
			 fixed);
		return -EOPNOTSUPP;
	}
	switch (l->kind) {
	case SFP_LOC_NONE:
		return 0;
	case SFP_LOC_CFA_DEREF:
		/* On s390x a 0 word is the "not saved" padding, and in v2
		 * an odd word names a register. */
		if (is_ra && l->offset == 0) {
			snprintf(why, WHY_LEN,
				 "RA at c+0 reads as 'no RA offset'");
			return -EOPNOTSUPP;
		}
		if (s390x && b->version == SFRAME_VERSION_2 && (l->offset & 1)) {
			snprintf(why, WHY_LEN,
				 "s390x v2 %s offset %d is odd (reads as a register)",
				 what, l->offset);
			return -EOPNOTSUPP;
		}
		*w = l->offset;
		return 1;
	case SFP_LOC_NOT_SAVED:
		if (s390x && is_ra) {
			*w = SFRAME_FRE_RA_OFFSET_INVALID;
			return 1;
		}
		break;
	case SFP_LOC_REG:
		if (s390x && b->version == SFRAME_VERSION_2 && l->offset == 0) {
			*w = (int32_t)sframe_v2_s390x_regnum_encode(l->reg);
			return 1;
		}
		break;
	default:
		break;
	}
	snprintf(why, WHY_LEN, "%s rule (kind %u) needs a flexible FDE", what,
		 l->kind);
	return -EOPNOTSUPP;
}

/* A row as a default FDE's FRE: CFA word, then RA and FP words. */
static int enc_default_row(const struct sfp_sframe_builder *b,
			   const struct sfp_sframe_row *r, struct enc_fre *f,
			   char *why)
{
	uint16_t sp, fp;
	int32_t ra_w = 0, fp_w = 0;
	int64_t cfa_w;
	int has_ra, has_fp;
	unsigned int base;

	if (row_ra_undefined(r))
		return enc_ra_undefined(b, r, f, why);

	abi_sp_fp(b->abi, &sp, &fp);
	if (r->cfa.kind != SFP_LOC_REG) {
		snprintf(why, WHY_LEN, "CFA is a dereference");
		return -EOPNOTSUPP;
	}
	if (r->cfa.reg == sp) {
		base = SFRAME_BASE_REG_SP;
	} else if (r->cfa.reg == fp) {
		base = SFRAME_BASE_REG_FP;
	} else {
		snprintf(why, WHY_LEN, "CFA base r%u is neither SP nor FP",
			 r->cfa.reg);
		return -EOPNOTSUPP;
	}
	cfa_w = r->cfa.offset;
	if (abi_is_s390x(b->abi)) {
		/* s390x stores (offset - 160) / 8 to keep words small. */
		if ((cfa_w - SFRAME_S390X_CFA_OFFSET_ADJ) %
		    SFRAME_S390X_CFA_OFFSET_ALIGN) {
			snprintf(why, WHY_LEN,
				 "s390x CFA offset %d is not 160 + 8k",
				 r->cfa.offset);
			return -EOPNOTSUPP;
		}
		cfa_w = sframe_s390x_cfa_encode(cfa_w);
	}

	has_ra = default_slot(b, &r->ra, true, b->fixed_ra, &ra_w, why);
	if (has_ra < 0)
		return has_ra;
	has_fp = default_slot(b, &r->fp, false, b->fixed_fp, &fp_w, why);
	if (has_fp < 0)
		return has_fp;
	/* Words are positional: an FP word needs the RA word before it
	 * unless the header fixes the RA. */
	if (has_fp && !has_ra && !b->fixed_ra) {
		snprintf(why, WHY_LEN,
			 "FP is saved but the RA has no rule (no RA word to put before it)");
		return -EOPNOTSUPP;
	}

	f->nwords = 0;
	f->words[f->nwords++] = (int32_t)cfa_w;
	if (has_ra)
		f->words[f->nwords++] = ra_w;
	if (has_fp)
		f->words[f->nwords++] = fp_w;
	f->info = SFRAME_FRE_INFO(base, f->nwords, 0,
				  !!(r->flags & SFP_ROW_MANGLED_RA));
	return 0;
}

/* Control word of a flexible-FDE location. */
static int flex_ctrl(const struct sfp_loc *l, int32_t *ctrl)
{
	switch (l->kind) {
	case SFP_LOC_CFA_DEREF:
		*ctrl = (int32_t)SFRAME_FLEX_CTRL(0, true, false);
		return 0;
	case SFP_LOC_CFA:
		*ctrl = (int32_t)SFRAME_FLEX_CTRL(0, false, false);
		return 0;
	case SFP_LOC_REG:
		*ctrl = (int32_t)SFRAME_FLEX_CTRL(l->reg, false, true);
		return 0;
	case SFP_LOC_REG_DEREF:
		*ctrl = (int32_t)SFRAME_FLEX_CTRL(l->reg, true, true);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * A row as a flexible FDE's FRE: (control, offset) pairs for CFA, RA and
 * FP.  An RA without a pair before an FP pair becomes the 0 padding word,
 * as GNU as writes it.
 */
static int enc_flex_row(const struct sfp_sframe_builder *b,
			const struct sfp_sframe_row *r, struct enc_fre *f,
			char *why)
{
	int32_t ctrl = 0, ra_ctrl = 0, fp_ctrl = 0;
	bool ra_pair = false, ra_pad = false, fp_pair = false;

	if (row_ra_undefined(r))
		return enc_ra_undefined(b, r, f, why);

	/* check_row() allowed only REG and REG_DEREF for the CFA. */
	if (flex_ctrl(&r->cfa, &ctrl))
		return -EINVAL;

	switch (r->ra.kind) {
	case SFP_LOC_NONE:
		/* No RA pair: the header's fixed offset (AMD64) or the
		 * ABI's RA register (AArch64, s390x). */
		if (b->fixed_ra) {
			snprintf(why, WHY_LEN,
				 "RA has no rule but the header fixes it at c%+d",
				 b->fixed_ra);
			return -EOPNOTSUPP;
		}
		break;
	case SFP_LOC_NOT_SAVED:
		/* With a fixed RA offset, readers take the padding word for
		 * the fixed slot. */
		if (b->fixed_ra) {
			snprintf(why, WHY_LEN,
				 "RA 'not saved' would read as the header's fixed c%+d",
				 b->fixed_ra);
			return -EOPNOTSUPP;
		}
		ra_pad = true;
		break;
	case SFP_LOC_CFA_DEREF:
		/* The fixed slot is written as no pair (readers fall back
		 * to the header), or as the padding word it was read from. */
		if (r->ra.flags & SFP_LOC_F_PADDING) {
			ra_pad = true;
			break;
		}
		if (r->ra.flags & SFP_LOC_F_FIXED)
			break;
		/* fall through */
	default:
		if (flex_ctrl(&r->ra, &ra_ctrl)) {
			snprintf(why, WHY_LEN, "RA rule kind %u", r->ra.kind);
			return -EOPNOTSUPP;
		}
		/* RA = CFA + off has control word 0, and readers take a 0
		 * in word 2 for the padding word. */
		if (!ra_ctrl) {
			snprintf(why, WHY_LEN,
				 "RA = CFA%+d has control word 0, which reads as padding",
				 r->ra.offset);
			return -EOPNOTSUPP;
		}
		ra_pair = true;
		break;
	}
	switch (r->fp.kind) {
	case SFP_LOC_NONE:
		if (b->fixed_fp) {
			snprintf(why, WHY_LEN,
				 "FP has no rule but the header fixes it at c%+d",
				 b->fixed_fp);
			return -EOPNOTSUPP;
		}
		break;
	case SFP_LOC_CFA_DEREF:
		if (r->fp.flags & SFP_LOC_F_FIXED)
			break;
		/* fall through */
	default:
		if (flex_ctrl(&r->fp, &fp_ctrl)) {
			snprintf(why, WHY_LEN, "FP rule kind %u", r->fp.kind);
			return -EOPNOTSUPP;
		}
		fp_pair = true;
		break;
	}

	/* The padding word only exists between a CFA and an FP pair. */
	if (ra_pad && !fp_pair) {
		snprintf(why, WHY_LEN,
			 "RA padding word without an FP pair after it");
		return -EOPNOTSUPP;
	}

	f->nwords = 0;
	f->words[f->nwords++] = ctrl;
	f->words[f->nwords++] = r->cfa.offset;
	if (ra_pair) {
		f->words[f->nwords++] = ra_ctrl;
		f->words[f->nwords++] = r->ra.offset;
	} else if (ra_pad || fp_pair) {
		f->words[f->nwords++] = SFRAME_FRE_RA_OFFSET_INVALID;
	}
	if (fp_pair) {
		f->words[f->nwords++] = fp_ctrl;
		f->words[f->nwords++] = r->fp.offset;
	}
	/* The base-register bit is unused in flexible FDEs (0). */
	f->info = SFRAME_FRE_INFO(0, f->nwords, 0,
				  !!(r->flags & SFP_ROW_MANGLED_RA));
	return 0;
}

/* Two rows whose FREs would be identical apart from the start. */
static bool same_rules(const struct sfp_sframe_row *a,
		       const struct sfp_sframe_row *b)
{
	return a->flags == b->flags && !memcmp(&a->cfa, &b->cfa, sizeof(a->cfa)) &&
	       !memcmp(&a->ra, &b->ra, sizeof(a->ra)) &&
	       !memcmp(&a->fp, &b->fp, sizeof(a->fp));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Encode all rows with one FDE type.  Returns the row index in *bad. */
static int enc_rows(const struct sfp_sframe_builder *b, bool flex,
		    const struct sfp_sframe_row *rows, size_t num_rows,
		    uint64_t base, struct enc_fre *fres, size_t *nfres,
		    size_t *bad, char *why)
{
	size_t i, n = 0;
	int err;

	for (i = 0; i < num_rows; i++) {
		if (b->merge_rows && n && same_rules(&rows[i - 1], &rows[i]))
			continue;
		fres[n].start = (uint32_t)(rows[i].start - base);
		err = flex ? enc_flex_row(b, &rows[i], &fres[n], why)
			   : enc_default_row(b, &rows[i], &fres[n], why);
		if (err) {
			*bad = i;
			return err;
		}
		n++;
	}
	*nfres = n;
	return 0;
}

/*
 * Validate a function and its rows.  *base is what row starts are
 * relative to: the function start when they are absolute PCs (as the
 * decoder reports PCINC rows), else 0 (offsets, and always for PCMASK).
 */
static int check_func(const struct sfp_sframe_builder *b,
		      const struct sfp_sframe_func *fn,
		      const struct sfp_sframe_row *rows, size_t num_rows,
		      uint64_t *base, char *why)
{
	uint64_t limit, rel;
	size_t i;
	int err;

	if (fn->pc_type != SFP_SFRAME_PC_INC &&
	    fn->pc_type != SFP_SFRAME_PC_MASK) {
		snprintf(why, WHY_LEN, "unknown PC type %u", fn->pc_type);
		return -EINVAL;
	}
	if (fn->fde_type != SFP_SFRAME_FDE_DEFAULT &&
	    fn->fde_type != SFP_SFRAME_FDE_FLEX) {
		snprintf(why, WHY_LEN, "unknown FDE type %u", fn->fde_type);
		return -EINVAL;
	}
	if (fn->pauth_key > 1) {
		snprintf(why, WHY_LEN, "pauth key %u is neither A (0) nor B (1)",
			 fn->pauth_key);
		return -EINVAL;
	}
	if (fn->pauth_key && b->abi != SFRAME_ABI_AARCH64_ENDIAN_BIG &&
	    b->abi != SFRAME_ABI_AARCH64_ENDIAN_LITTLE) {
		snprintf(why, WHY_LEN, "pauth key B on a non-AArch64 ABI");
		return -EINVAL;
	}
	if (fn->pc_type == SFP_SFRAME_PC_MASK && !fn->rep_size) {
		snprintf(why, WHY_LEN, "PCMASK function with rep_size 0");
		return -EINVAL;
	}
	if (num_rows && !rows) {
		snprintf(why, WHY_LEN, "rows is NULL");
		return -EINVAL;
	}
	if (fn->num_rows && fn->num_rows != num_rows) {
		snprintf(why, WHY_LEN, "num_rows %u but %zu rows given",
			 fn->num_rows, num_rows);
		return -EINVAL;
	}
	if (fn->start > UINT64_MAX - fn->size) {
		snprintf(why, WHY_LEN, "function wraps around the address space");
		return -EINVAL;
	}
	/* Row starts are offsets into the function, or into one repeated
	 * block for PCMASK. */
	limit = fn->pc_type == SFP_SFRAME_PC_MASK ? fn->rep_size : fn->size;
	*base = 0;
	if (num_rows && fn->pc_type == SFP_SFRAME_PC_INC &&
	    rows[0].start == fn->start)
		*base = fn->start;
	for (i = 0; i < num_rows; i++) {
		const struct sfp_sframe_row *r = &rows[i];

		if (i == 0 && r->start != *base) {
			snprintf(why, WHY_LEN,
				 "row 0 starts at %#" PRIx64
				 ", neither 0 nor the function start",
				 r->start);
			return -EINVAL;
		}
		if (i > 0 && r->start <= rows[i - 1].start) {
			snprintf(why, WHY_LEN,
				 "row %zu starts at %#" PRIx64
				 ", not after row %zu (%#" PRIx64 ")",
				 i, r->start, i - 1, rows[i - 1].start);
			return -EINVAL;
		}
		/* A row at 0 of an empty function is what producers write
		 * for zero-sized functions. */
		rel = r->start - *base;
		if (r->start < *base || (rel >= limit && rel != 0)) {
			snprintf(why, WHY_LEN,
				 "row %zu starts at %#" PRIx64
				 ", beyond the %s (%#" PRIx64 ")",
				 i, r->start,
				 fn->pc_type == SFP_SFRAME_PC_MASK ? "block"
								   : "function",
				 limit);
			return -EINVAL;
		}
		err = check_row(b, r, why);
		if (err) {
			why_prefix(why, "row %zu: %s", i, why);
			return err;
		}
	}
	return 0;
}

/* Serialise FREs into b->fres in target byte order. */
static int emit_fres(struct sfp_sframe_builder *b, const struct enc_fre *fres,
		     size_t n, unsigned int fre_type, size_t *len)
{
	unsigned int asz = sframe_fre_addr_size(fre_type);
	size_t need = 0, i, pos;
	int err;

	for (i = 0; i < n; i++)
		need += asz + 1 + (size_t)fres[i].nwords * 4;
	err = grow((void **)&b->fres, &b->fres_cap, b->fres_len + need, 1);
	if (err)
		return err;
	pos = b->fres_len;
	for (i = 0; i < n; i++) {
		const struct enc_fre *f = &fres[i];
		unsigned int code = SFRAME_FRE_OFFSET_1B, k, wsz;

		/* All words of an FRE share the smallest size that fits
		 * each of them. */
		for (k = 0; k < f->nwords; k++) {
			unsigned int c = word_size_code(f->words[k]);

			if (c > code)
				code = c;
		}
		wsz = sframe_fre_word_size(code);
		put_uint(b, b->fres + pos, f->start, asz);
		pos += asz;
		b->fres[pos++] = f->nwords ? (uint8_t)(f->info |
				 (code << SFRAME_FRE_INFO_SIZE_SHIFT)) : f->info;
		for (k = 0; k < f->nwords; k++) {
			put_uint(b, b->fres + pos, (uint64_t)(int64_t)f->words[k],
				 wsz);
			pos += wsz;
		}
	}
	*len = pos - b->fres_len;
	b->fres_len = pos;
	return 0;
}

int sfp_sframe_builder__add_func(struct sfp_sframe_builder *b,
				 const struct sfp_sframe_func *fn,
				 const struct sfp_sframe_row *rows,
				 size_t num_rows)
{
	struct enc_fre *fres;
	struct enc_func *ef;
	char why[WHY_LEN], why_flex[WHY_LEN];
	size_t nfres = 0, bad = 0, len = 0, i;
	uint64_t base = 0;
	uint32_t max_start = 0;
	bool flex;
	int err;

	if (!b || !fn)
		return -EINVAL;
	why[0] = why_flex[0] = 0;
	if (b->nr_funcs >= UINT32_MAX) {
		pr_warn("sframe encoder: more than %u functions", UINT32_MAX);
		return -E2BIG;
	}
	err = check_func(b, fn, rows, num_rows, &base, why);
	if (err)
		goto warn;

	if (b->version == SFRAME_VERSION_2) {
		if (fn->fde_type == SFP_SFRAME_FDE_FLEX) {
			snprintf(why, WHY_LEN, "flexible FDEs need version 3");
			err = -EOPNOTSUPP;
			goto warn;
		}
		if (fn->signal) {
			snprintf(why, WHY_LEN,
				 "the signal-frame bit needs version 3");
			err = -EOPNOTSUPP;
			goto warn;
		}
		if (num_rows > UINT32_MAX) {
			snprintf(why, WHY_LEN, "%zu rows", num_rows);
			err = -EOPNOTSUPP;
			goto warn;
		}
	} else if (num_rows > SFRAME_V3_MAX_FUNC_FRES) {
		snprintf(why, WHY_LEN,
			 "%zu rows; version 3 holds at most %u per function",
			 num_rows, SFRAME_V3_MAX_FUNC_FRES);
		err = -EOPNOTSUPP;
		goto warn;
	}

	err = grow((void **)&b->scratch, &b->scratch_cap, num_rows,
		   sizeof(*b->scratch));
	if (err)
		return err;
	fres = b->scratch;
	/* v3 writes a default FDE where it can (smaller, and what every
	 * reader understands) and falls back to a flexible one. */
	flex = b->version >= SFRAME_VERSION_3 &&
	       fn->fde_type == SFP_SFRAME_FDE_FLEX;
	err = enc_rows(b, flex, rows, num_rows, base, fres, &nfres, &bad, why);
	if (err == -EOPNOTSUPP && !flex && b->version >= SFRAME_VERSION_3) {
		flex = true;
		err = enc_rows(b, true, rows, num_rows, base, fres, &nfres,
			       &bad, why_flex);
		if (err)
			why_prefix(why, "%s; flexible FDE: %s", why, why_flex);
	}
	if (err) {
		why_prefix(why, "row %zu: %s", bad, why);
		goto warn;
	}

	for (i = 0; i < nfres; i++)
		if (fres[i].start > max_start)
			max_start = fres[i].start;

	err = grow((void **)&b->funcs, &b->cap_funcs, b->nr_funcs + 1,
		   sizeof(*b->funcs));
	if (err)
		return err;
	ef = &b->funcs[b->nr_funcs];
	memset(ef, 0, sizeof(*ef));
	ef->start = fn->start;
	ef->size = fn->size;
	ef->num_fres = (uint32_t)nfres;
	ef->seq = (uint32_t)b->nr_funcs;
	ef->info = SFRAME_FUNC_INFO(fre_type_for(max_start), fn->pc_type,
				    fn->pauth_key, fn->signal);
	ef->info2 = flex ? SFRAME_FDE_TYPE_FLEX : SFRAME_FDE_TYPE_DEFAULT;
	ef->rep_size = fn->rep_size;
	ef->fre_off = b->fres_len;
	err = emit_fres(b, fres, nfres, fre_type_for(max_start), &len);
	if (err)
		return err;
	ef->fre_len = len;
	b->nr_funcs++;
	b->total_fres += nfres;
	return 0;

warn:
	pr_warn("sframe encoder: function at %#" PRIx64 " (v%u): %s",
		fn->start, b->version, why);
	return err;
}

int sfp_sframe_builder__drop(struct sfp_sframe_builder *b, size_t idx)
{
	if (!b || idx >= b->nr_funcs || b->funcs[idx].dropped ||
	    b->funcs[idx].seq != idx)	/* written (sorted) already */
		return -EINVAL;
	b->funcs[idx].dropped = true;
	return 0;
}

/* The dropped functions go, with their FREs' share of the counts (their
 * bytes stay in b->fres, unreferenced). */
static void forget_dropped(struct sfp_sframe_builder *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->nr_funcs; i++) {
		struct enc_func *f = &b->funcs[i];

		if (f->dropped) {
			b->total_fres -= f->num_fres;
			b->fres_dropped += f->fre_len;
			continue;
		}
		b->funcs[n++] = *f;
	}
	b->nr_funcs = n;
}

/* --- Writing the section. --- */

static int cmp_func(const void *pa, const void *pb)
{
	const struct enc_func *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int sfp_sframe_builder__write(struct sfp_sframe_builder *b, void **bufp,
			      size_t *sizep)
{
	unsigned int fde_size;
	uint64_t fde_bytes, fre_bytes, total;
	uint8_t *buf, *p;
	size_t i, fre_pos;

	if (!b || !bufp || !sizep)
		return -EINVAL;
	*bufp = NULL;
	*sizep = 0;

	forget_dropped(b);
	fde_size = sframe_fde_size(b->version);
	if (b->total_fres > UINT32_MAX) {
		pr_warn("sframe encoder: %" PRIu64 " FREs do not fit the header",
			b->total_fres);
		return -E2BIG;
	}
	fde_bytes = (uint64_t)b->nr_funcs * fde_size;
	fre_bytes = b->fres_len - b->fres_dropped;
	if (b->version >= SFRAME_VERSION_3)
		fre_bytes += (uint64_t)b->nr_funcs * SFRAME_V3_FDE_ATTR_SIZE;
	if (fde_bytes > UINT32_MAX || fre_bytes > UINT32_MAX) {
		pr_warn("sframe encoder: sub-sections exceed 4 GiB");
		return -E2BIG;
	}
	total = SFRAME_HDR_SIZE + fde_bytes + fre_bytes;
	if (total > SIZE_MAX)
		return -E2BIG;

	/* Sorted FDEs let readers binary-search; a stable sort keeps
	 * functions with equal starts in the order they were added. */
	if (b->nr_funcs > 1)
		qsort(b->funcs, b->nr_funcs, sizeof(*b->funcs), cmp_func);

	buf = calloc(1, (size_t)total);
	if (!buf)
		return -ENOMEM;

	/* Header. */
	put_uint(b, buf + SFRAME_HDR_OFF_MAGIC, SFRAME_MAGIC, 2);
	buf[SFRAME_HDR_OFF_VERSION] = b->version;
	buf[SFRAME_HDR_OFF_FLAGS] = SFRAME_F_FDE_SORTED |
				    SFRAME_F_FDE_FUNC_START_PCREL;
	buf[SFRAME_HDR_OFF_ABI] = b->abi;
	buf[SFRAME_HDR_OFF_FIXED_FP] = (uint8_t)b->fixed_fp;
	buf[SFRAME_HDR_OFF_FIXED_RA] = (uint8_t)b->fixed_ra;
	buf[SFRAME_HDR_OFF_AUXHDR_LEN] = 0;
	put_uint(b, buf + SFRAME_HDR_OFF_NUM_FDES, b->nr_funcs, 4);
	put_uint(b, buf + SFRAME_HDR_OFF_NUM_FRES, b->total_fres, 4);
	put_uint(b, buf + SFRAME_HDR_OFF_FRE_LEN, fre_bytes, 4);
	put_uint(b, buf + SFRAME_HDR_OFF_FDEOFF, 0, 4);
	put_uint(b, buf + SFRAME_HDR_OFF_FREOFF, fde_bytes, 4);

	fre_pos = 0;	/* offset inside the FRE sub-section */
	for (i = 0; i < b->nr_funcs; i++) {
		const struct enc_func *f = &b->funcs[i];
		uint64_t field_off = SFRAME_HDR_SIZE + (uint64_t)i * fde_size;
		/* PC-relative: the distance from the start field itself. */
		uint64_t rel = f->start - (b->section_addr + field_off);
		uint8_t *fde = buf + field_off;
		uint8_t *fre = buf + SFRAME_HDR_SIZE + fde_bytes + fre_pos;

		if (b->version == SFRAME_VERSION_2) {
			int64_t srel = (int64_t)rel;

			if (srel < INT32_MIN || srel > INT32_MAX) {
				pr_warn("sframe encoder: function at %#" PRIx64
					" is %" PRId64
					" bytes from its FDE: too far for version 2",
					f->start, srel);
				free(buf);
				return -EOPNOTSUPP;
			}
			put_uint(b, fde + SFRAME_FDE_OFF_START, rel, 4);
			put_uint(b, fde + SFRAME_FDE_OFF_SIZE_V12, f->size, 4);
			put_uint(b, fde + SFRAME_FDE_OFF_FRE_OFF_V12, fre_pos, 4);
			put_uint(b, fde + SFRAME_FDE_OFF_NUM_FRES_V12,
				 f->num_fres, 4);
			fde[SFRAME_FDE_OFF_INFO_V12] = f->info;
			fde[SFRAME_FDE_OFF_REP_SIZE_V2] = f->rep_size;
		} else {
			put_uint(b, fde + SFRAME_FDE_OFF_START, rel, 8);
			put_uint(b, fde + SFRAME_FDE_OFF_SIZE_V3, f->size, 4);
			put_uint(b, fde + SFRAME_FDE_OFF_FRE_OFF_V3, fre_pos, 4);
			/* Attribute record, then the FREs. */
			put_uint(b, fre, f->num_fres, 2);
			fre[2] = f->info;
			fre[3] = f->info2;
			fre[4] = f->rep_size;
			fre += SFRAME_V3_FDE_ATTR_SIZE;
			fre_pos += SFRAME_V3_FDE_ATTR_SIZE;
		}
		if (f->fre_len)
			memcpy(fre, b->fres + f->fre_off, f->fre_len);
		fre_pos += f->fre_len;
	}
	p = buf;
	*bufp = p;
	*sizep = (size_t)total;
	return 0;
}
