// SPDX-License-Identifier: MIT
/*
 * JSON form of a decoded section (docs/sframe-json.md), the input format
 * of `sfprof sframe encode`.  Semantic, not bytes: rules as struct sfp_loc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/json.h"
#include "sframe/sframe_int.h"

static const char *abi_name(uint8_t abi)
{
	switch (abi) {
	case SFP_SFRAME_ABI_AARCH64_BE: return "aarch64_be";
	case SFP_SFRAME_ABI_AARCH64_LE: return "aarch64_le";
	case SFP_SFRAME_ABI_AMD64_LE: return "amd64";
	case SFP_SFRAME_ABI_S390X_BE: return "s390x";
	default: return "unknown";
	}
}

static const char *const loc_kinds[] = {
	[SFP_LOC_NONE] = "none",
	[SFP_LOC_CFA_DEREF] = "cfa_deref",
	[SFP_LOC_CFA] = "cfa",
	[SFP_LOC_REG] = "reg",
	[SFP_LOC_REG_DEREF] = "reg_deref",
	[SFP_LOC_UNDEFINED] = "undefined",
	[SFP_LOC_NOT_SAVED] = "not_saved",
};

static void write_flags(FILE *f, const char *const *names,
			const unsigned int *bits, size_t n, unsigned int v)
{
	const char *sep = "";
	size_t i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		if (v & bits[i]) {
			fprintf(f, "%s\"%s\"", sep, names[i]);
			sep = ", ";
		}
	fputc(']', f);
}

static void write_loc(FILE *f, const struct sfp_loc *l)
{
	const char *kind = l->kind < ARRAY_SIZE(loc_kinds) && loc_kinds[l->kind]
				   ? loc_kinds[l->kind] : "none";

	fprintf(f, "{ \"kind\": \"%s\"", kind);
	if (l->kind == SFP_LOC_REG || l->kind == SFP_LOC_REG_DEREF)
		fprintf(f, ", \"reg\": %u", l->reg);
	if (l->kind == SFP_LOC_CFA_DEREF || l->kind == SFP_LOC_CFA ||
	    l->kind == SFP_LOC_REG || l->kind == SFP_LOC_REG_DEREF)
		fprintf(f, ", \"offset\": %d", l->offset);
	if (l->flags & SFP_LOC_F_FIXED)
		fprintf(f, ", \"fixed\": true");
	if (l->flags & SFP_LOC_F_PADDING)
		fprintf(f, ", \"padding\": true");
	fprintf(f, " }");
}

int sfp_sframe__dump_json(const struct sfp_sframe *sf, FILE *f)
{
	static const char *const hflag_names[] = {
		"fde_sorted", "frame_pointer", "fde_func_start_pcrel" };
	static const unsigned int hflag_bits[] = {
		SFRAME_F_FDE_SORTED, SFRAME_F_FRAME_POINTER,
		SFRAME_F_FDE_FUNC_START_PCREL };
	static const char *const rflag_names[] = {
		"mangled_ra", "ra_undefined", "signal", "flex", "pcmask" };
	static const unsigned int rflag_bits[] = {
		SFP_ROW_MANGLED_RA, SFP_ROW_RA_UNDEFINED, SFP_ROW_SIGNAL,
		SFP_ROW_FLEX, SFP_ROW_PCMASK };
	const struct sfp_sframe_info *in;
	uint32_t i, j;

	if (!sf || !f)
		return -EINVAL;
	in = &sf->info;
	fprintf(f, "{\n  \"format\": \"sfprof-sframe-json\",\n"
		   "  \"format_version\": 1,\n  \"header\": {\n");
	fprintf(f, "    \"version\": %u,\n    \"flags\": ", in->version);
	write_flags(f, hflag_names, hflag_bits, ARRAY_SIZE(hflag_bits),
		    in->flags);
	fprintf(f, ",\n    \"abi\": \"%s\",\n", abi_name(in->abi));
	fprintf(f, "    \"fixed_fp_offset\": %d,\n    \"fixed_ra_offset\": %d,\n",
		in->fixed_fp_offset, in->fixed_ra_offset);
	fprintf(f, "    \"auxhdr_len\": %u,\n    \"foreign_endian\": %s,\n",
		in->auxhdr_len, in->foreign_endian ? "true" : "false");
	fprintf(f, "    \"num_fdes\": %" PRIu32 ",\n    \"num_fres\": %" PRIu32
		   ",\n    \"fre_len\": %" PRIu32 ",\n",
		in->num_fdes, in->num_fres, in->fre_len);
	fprintf(f, "    \"section_addr\": %" PRIu64 ",\n    \"bias\": %" PRIu64
		   "\n  },\n  \"functions\": [",
		in->section_addr, in->bias);
	for (i = 0; i < sf->num_fns; i++) {
		struct sfp_sframe_func fn;

		sfp_sframe__func(sf, i, &fn);
		fprintf(f, "%s\n    {\n      \"start\": %" PRIu64
			   ", \"size\": %" PRIu32 ", \"pc_type\": \"%s\","
			   " \"fde_type\": \"%s\",\n      \"rep_size\": %u,"
			   " \"pauth_key\": \"%s\", \"signal\": %s,\n"
			   "      \"rows\": [",
			i ? "," : "", fn.start, fn.size,
			fn.pc_type == SFP_SFRAME_PC_MASK ? "mask" : "inc",
			fn.fde_type == SFP_SFRAME_FDE_FLEX ? "flex" : "default",
			fn.rep_size, fn.pauth_key ? "B" : "A",
			fn.signal ? "true" : "false");
		for (j = 0; j < fn.num_rows; j++) {
			struct sfp_sframe_row r;

			sfp_sframe_fill_row(sf, i, j, &r);
			fprintf(f, "%s\n        { \"start\": %" PRIu64
				   ", \"end\": %" PRIu64 ", \"flags\": ",
				j ? "," : "", r.start, r.end);
			write_flags(f, rflag_names, rflag_bits,
				    ARRAY_SIZE(rflag_bits), r.flags);
			fprintf(f, ",\n          \"cfa\": ");
			write_loc(f, &r.cfa);
			fprintf(f, ",\n          \"ra\": ");
			write_loc(f, &r.ra);
			fprintf(f, ",\n          \"fp\": ");
			write_loc(f, &r.fp);
			fprintf(f, " }");
		}
		fprintf(f, "%s]\n    }", fn.num_rows ? "\n      " : "");
	}
	fprintf(f, "%s]\n}\n", sf->num_fns ? "\n  " : "");
	return ferror(f) ? -EIO : 0;
}
