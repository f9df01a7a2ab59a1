// SPDX-License-Identifier: MIT
/*
 * JSON form (docs/sframe-json.md) → SFrame builder → section bytes.
 *
 * The JSON is untrusted (it comes from the command line), so every value
 * is type- and range-checked before it reaches the builder, and each
 * complaint names the JSON path of the value, so that a user can find it
 * in a document of thousands of rows.  Fields the encoder derives itself
 * (counts, flags, row ends, the repeated function attributes in row
 * flags) are not read; unknown fields are ignored, as the schema asks.
 */
#include <inttypes.h>
#include <stdarg.h>

#include <sfprof/sframe.h>

#include "common/internal.h"
#include "common/json.h"
#include "sframe/json-read.h"

#define PATH_LEN 96

struct jctx {
	const char *name;
};

__attribute__((format(printf, 3, 4)))
static int bad(const struct jctx *c, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn("%s: %s: %s", c->name, path, msg);
	return -EBADMSG;
}

/* A JSON path, cut short (not overflowed) if it is absurdly deep. */
__attribute__((format(printf, 2, 3)))
static const char *path_fmt(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_LEN, fmt, ap);
	va_end(ap);
	return out;
}

/* "functions[3]" + "rows" → "functions[3].rows" */
static const char *sub(char *out, const char *path, const char *key)
{
	return path_fmt(out, "%s%s%s", path, *path ? "." : "", key);
}

static const char *idx(char *out, const char *path, size_t i)
{
	return path_fmt(out, "%s[%zu]", path, i);
}

/*
 * Integer member key of obj in [min, max].  A missing member gives dflt
 * unless required.
 */
static int get_int(const struct jctx *c, const struct sfp_json *obj,
		   const char *key, const char *path, int64_t min, int64_t max,
		   bool required, int64_t dflt, int64_t *out)
{
	const struct sfp_json *v = sfp_json_get(obj, key);
	char p[PATH_LEN];
	int64_t x;

	if (!v) {
		if (required)
			return bad(c, sub(p, path, key), "missing");
		*out = dflt;
		return 0;
	}
	if (v->type != SFP_JSON_INT || sfp_json_i64(v, &x))
		return bad(c, sub(p, path, key),
			   "expected an integer in [%" PRId64 ", %" PRId64 "]",
			   min, max);
	if (x < min || x > max)
		return bad(c, sub(p, path, key),
			   "%" PRId64 " is outside [%" PRId64 ", %" PRId64 "]",
			   x, min, max);
	*out = x;
	return 0;
}

static int get_u64(const struct jctx *c, const struct sfp_json *obj,
		   const char *key, const char *path, bool required,
		   uint64_t *out)
{
	const struct sfp_json *v = sfp_json_get(obj, key);
	char p[PATH_LEN];

	if (!v) {
		if (required)
			return bad(c, sub(p, path, key), "missing");
		*out = 0;
		return 0;
	}
	if (v->type != SFP_JSON_INT || sfp_json_u64(v, out))
		return bad(c, sub(p, path, key),
			   "expected an unsigned 64-bit integer");
	return 0;
}

static int get_bool(const struct jctx *c, const struct sfp_json *obj,
		    const char *key, const char *path, bool *out)
{
	const struct sfp_json *v = sfp_json_get(obj, key);
	char p[PATH_LEN];

	*out = false;
	if (!v)
		return 0;
	if (v->type != SFP_JSON_BOOL || sfp_json_bool(v, out))
		return bad(c, sub(p, path, key), "expected true or false");
	return 0;
}

/* String member matched against names[]; *out is its index. */
static int get_enum(const struct jctx *c, const struct sfp_json *obj,
		    const char *key, const char *path,
		    const char *const *names, size_t n, bool required,
		    size_t dflt, size_t *out)
{
	const struct sfp_json *v = sfp_json_get(obj, key);
	char p[PATH_LEN];
	const char *s;
	size_t len, i;

	if (!v) {
		if (required)
			return bad(c, sub(p, path, key), "missing");
		*out = dflt;
		return 0;
	}
	if (v->type != SFP_JSON_STRING || sfp_json_str(v, &s, &len))
		return bad(c, sub(p, path, key), "expected a string");
	for (i = 0; i < n; i++) {
		if (names[i] && strlen(names[i]) == len &&
		    !memcmp(names[i], s, len)) {
			*out = i;
			return 0;
		}
	}
	return bad(c, sub(p, path, key), "unknown value \"%.40s\"", s);
}

static const struct sfp_json *get_typed(const struct jctx *c,
					const struct sfp_json *obj,
					const char *key, const char *path,
					enum sfp_json_type type,
					const char *what, int *err)
{
	const struct sfp_json *v = sfp_json_get(obj, key);
	char p[PATH_LEN];

	*err = 0;
	if (!v)
		return NULL;
	if (v->type != type) {
		*err = bad(c, sub(p, path, key), "expected %s", what);
		return NULL;
	}
	return v;
}

/* Indexed by enum sfp_loc_kind. */
static const char *const loc_kinds[] = {
	[SFP_LOC_NONE] = "none",
	[SFP_LOC_CFA_DEREF] = "cfa_deref",
	[SFP_LOC_CFA] = "cfa",
	[SFP_LOC_REG] = "reg",
	[SFP_LOC_REG_DEREF] = "reg_deref",
	[SFP_LOC_UNDEFINED] = "undefined",
	[SFP_LOC_NOT_SAVED] = "not_saved",
};

static int read_loc(const struct jctx *c, const struct sfp_json *row,
		    const char *key, const char *path, struct sfp_loc *l)
{
	const struct sfp_json *v;
	char p[PATH_LEN];
	size_t kind;
	int64_t x;
	bool flag;
	int err;

	memset(l, 0, sizeof(*l));
	v = get_typed(c, row, key, path, SFP_JSON_OBJECT, "an object", &err);
	if (err)
		return err;
	if (!v)
		return 0;	/* missing: no rule */
	sub(p, path, key);
	err = get_enum(c, v, "kind", p, loc_kinds, ARRAY_SIZE(loc_kinds),
		       true, 0, &kind);
	if (err)
		return err;
	l->kind = (uint8_t)kind;
	if (kind == SFP_LOC_REG || kind == SFP_LOC_REG_DEREF) {
		err = get_int(c, v, "reg", p, 0, UINT16_MAX, true, 0, &x);
		if (err)
			return err;
		l->reg = (uint16_t)x;
	}
	if (kind != SFP_LOC_NONE && kind != SFP_LOC_UNDEFINED &&
	    kind != SFP_LOC_NOT_SAVED) {
		err = get_int(c, v, "offset", p, INT32_MIN, INT32_MAX, true, 0,
			      &x);
		if (err)
			return err;
		l->offset = (int32_t)x;
	}
	err = get_bool(c, v, "fixed", p, &flag);
	if (err)
		return err;
	if (flag)
		l->flags |= SFP_LOC_F_FIXED;
	err = get_bool(c, v, "padding", p, &flag);
	if (err)
		return err;
	if (flag)
		l->flags |= SFP_LOC_F_PADDING;
	return 0;
}

static const char *const row_flags[] = {
	"mangled_ra", "ra_undefined", "signal", "flex", "pcmask",
};
static const uint32_t row_flag_bits[] = {
	SFP_ROW_MANGLED_RA, SFP_ROW_RA_UNDEFINED, SFP_ROW_SIGNAL,
	SFP_ROW_FLEX, SFP_ROW_PCMASK,
};

static int read_row(const struct jctx *c, const struct sfp_json *row,
		    const char *path, bool mask, uint64_t bias,
		    struct sfp_sframe_row *r)
{
	const struct sfp_json *flags;
	char p[PATH_LEN];
	size_t i, k;
	int err;

	memset(r, 0, sizeof(*r));
	if (row->type != SFP_JSON_OBJECT)
		return bad(c, path, "expected an object");
	err = get_u64(c, row, "start", path, true, &r->start);
	if (err)
		return err;
	/* Absolute PCs include the bias the table was opened with; the
	 * section describes addresses before it.  PCMASK rows are offsets. */
	if (!mask)
		r->start -= bias;

	flags = get_typed(c, row, "flags", path, SFP_JSON_ARRAY, "an array",
			  &err);
	if (err)
		return err;
	for (i = 0; flags && i < sfp_json_len(flags); i++) {
		const struct sfp_json *f = sfp_json_at(flags, i);
		const char *s;
		size_t len;

		path_fmt(p, "%s.flags[%zu]", path, i);
		if (f->type != SFP_JSON_STRING || sfp_json_str(f, &s, &len))
			return bad(c, p, "expected a string");
		for (k = 0; k < ARRAY_SIZE(row_flags); k++)
			if (strlen(row_flags[k]) == len &&
			    !memcmp(row_flags[k], s, len))
				break;
		if (k == ARRAY_SIZE(row_flags))
			return bad(c, p, "unknown row flag \"%.40s\"", s);
		r->flags |= row_flag_bits[k];
	}

	err = read_loc(c, row, "cfa", path, &r->cfa);
	if (!err)
		err = read_loc(c, row, "ra", path, &r->ra);
	if (!err)
		err = read_loc(c, row, "fp", path, &r->fp);
	return err;
}

static const char *const pc_types[] = { "inc", "mask" };
static const char *const fde_types[] = { "default", "flex" };
static const char *const pauth_keys[] = { "A", "B" };

static int read_func(const struct jctx *c, struct sfp_sframe_builder *b,
		     const struct sfp_json *fj, const char *path, uint64_t bias)
{
	struct sfp_sframe_func fn = { 0 };
	struct sfp_sframe_row *rows = NULL;
	const struct sfp_json *rj;
	char p[PATH_LEN], rp[PATH_LEN];
	size_t n = 0, i, v;
	int64_t x;
	int err;

	if (fj->type != SFP_JSON_OBJECT)
		return bad(c, path, "expected an object");
	err = get_u64(c, fj, "start", path, true, &fn.start);
	if (err)
		return err;
	fn.start -= bias;
	err = get_int(c, fj, "size", path, 0, UINT32_MAX, true, 0, &x);
	if (err)
		return err;
	fn.size = (uint32_t)x;
	err = get_enum(c, fj, "pc_type", path, pc_types, 2, false, 0, &v);
	if (err)
		return err;
	fn.pc_type = (uint8_t)v;
	err = get_enum(c, fj, "fde_type", path, fde_types, 2, false, 0, &v);
	if (err)
		return err;
	fn.fde_type = (uint8_t)v;
	err = get_enum(c, fj, "pauth_key", path, pauth_keys, 2, false, 0, &v);
	if (err)
		return err;
	fn.pauth_key = (uint8_t)v;
	err = get_int(c, fj, "rep_size", path, 0, UINT8_MAX, false, 0, &x);
	if (err)
		return err;
	fn.rep_size = (uint8_t)x;
	err = get_bool(c, fj, "signal", path, &fn.signal);
	if (err)
		return err;

	rj = get_typed(c, fj, "rows", path, SFP_JSON_ARRAY, "an array", &err);
	if (err)
		return err;
	if (rj)
		n = sfp_json_len(rj);
	if (n) {
		/* n is bounded by the parsed document's size. */
		rows = calloc(n, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
	}
	sub(rp, path, "rows");
	for (i = 0; i < n; i++) {
		err = read_row(c, sfp_json_at(rj, i), idx(p, rp, i),
			       fn.pc_type == SFP_SFRAME_PC_MASK, bias,
			       &rows[i]);
		if (err)
			goto out;
	}
	err = sfp_sframe_builder__add_func(b, &fn, rows, n);
	if (err)	/* the builder said why; say where */
		pr_warn("%s: %s: cannot encode this function: %s", c->name,
			path, sfp_strerror(err));
out:
	free(rows);
	return err;
}

static const char *const abis[] = {
	[SFP_SFRAME_ABI_AARCH64_BE] = "aarch64_be",
	[SFP_SFRAME_ABI_AARCH64_LE] = "aarch64_le",
	[SFP_SFRAME_ABI_AMD64_LE] = "amd64",
	[SFP_SFRAME_ABI_S390X_BE] = "s390x",
};

/* What the streamed "functions" items need: the builder, made from the
 * header once it has been seen. */
struct enc {
	struct jctx c;
	const struct sfp_sframe_json_opts *opts;
	struct sfp_sframe_builder *b;
	uint64_t bias, addr;
	bool deferred;		/* functions came before the header */
};

/* format, format_version and header of the top-level object → a builder. */
static int setup_builder(struct enc *e, const struct sfp_json *doc)
{
	SFP_OPTS(sfp_sframe_builder_opts, bo);
	const struct sfp_sframe_json_opts *opts = e->opts;
	const struct jctx *c = &e->c;
	const struct sfp_json *hdr, *v;
	int64_t x, version;
	const char *s;
	size_t abi;
	int err;

	if (doc->type != SFP_JSON_OBJECT)
		return bad(c, "(top level)", "expected an object");
	v = sfp_json_get(doc, "format");
	if (!v || v->type != SFP_JSON_STRING || sfp_json_str(v, &s, NULL) ||
	    strcmp(s, "sfprof-sframe-json"))
		return bad(c, "format",
			   "expected \"sfprof-sframe-json\" (not an sfprof sframe JSON dump?)");
	err = get_int(c, doc, "format_version", "", 1, 1, true, 0, &x);
	if (err)
		return err;

	hdr = get_typed(c, doc, "header", "", SFP_JSON_OBJECT, "an object",
			&err);
	if (err)
		return err;
	if (!hdr)
		return bad(c, "header", "missing");
	err = get_enum(c, hdr, "abi", "header", abis, ARRAY_SIZE(abis), true,
		       0, &abi);
	if (err)
		return err;
	bo.abi = (uint8_t)abi;
	err = get_int(c, hdr, "version", "header", 1, 255, false, 3,
		      &version);
	if (err)
		return err;
	err = get_int(c, hdr, "fixed_fp_offset", "header", INT8_MIN,
		      INT8_MAX, false, 0, &x);
	if (err)
		return err;
	bo.fixed_fp_offset = (int8_t)x;
	/* An explicit 0 must stay 0 (no fixed RA), even on AMD64. */
	if (sfp_json_get(hdr, "fixed_ra_offset")) {
		err = get_int(c, hdr, "fixed_ra_offset", "header", INT8_MIN,
			      INT8_MAX, true, 0, &x);
		if (err)
			return err;
		bo.fixed_ra_offset = (int8_t)x;
		bo.no_fixed_ra = x == 0;
	}
	err = get_u64(c, hdr, "section_addr", "header", false, &e->addr);
	if (!err)
		err = get_u64(c, hdr, "bias", "header", false, &e->bias);
	if (err)
		return err;
	if (opts->set_section_addr)
		e->addr = opts->section_addr;

	bo.version = opts->version;
	if (!bo.version)
		bo.version = version == 2 ? 2 : 3;
	bo.section_addr = e->addr;
	if (opts->merge_rows)
		bo.flags |= SFP_SFRAME_BUILDER_F_MERGE_ROWS;
	return sfp_sframe_builder__new(&bo, &e->b);
}

/*
 * One item of "functions", straight from the parser.  The header comes
 * first in every dump sfprof writes; a document with it after the
 * functions is read twice (the first pass only notes it).
 */
static int on_func(const struct sfp_json *top, const struct sfp_json *item,
		   size_t i, void *ctx)
{
	struct enc *e = ctx;
	char p[PATH_LEN];
	int err;

	if (!e->b) {
		if (e->deferred || !sfp_json_get(top, "header") ||
		    !sfp_json_get(top, "format")) {
			e->deferred = true;
			return 0;
		}
		err = setup_builder(e, top);
		if (err)
			return err;
	}
	return read_func(&e->c, e->b, item, idx(p, "functions", i), e->bias);
}

int sfp_sframe_json__encode(const char *text, size_t len,
			    const struct sfp_sframe_json_opts *opts,
			    void **buf, size_t *size, uint64_t *section_addr)
{
	struct sfp_json_parse_opts popts = { 0 };
	struct enc e = { .c.name = "JSON input", .opts = opts };
	struct sfp_json *doc = NULL;
	int err;

	if (!text || !opts || !buf || !size || !section_addr)
		return -EINVAL;
	*buf = NULL;
	*size = 0;
	if (opts->name)
		e.c.name = opts->name;
	popts.name = e.c.name;
	/* Functions are read as the parser meets them: the whole tree of a
	 * big table took ~9x the JSON's size. */
	popts.stream_key = "functions";
	popts.on_item = on_func;
	popts.ctx = &e;
	err = sfp_json_parse(text, len, &popts, &doc);
	if (err)
		goto out;	/* the parser or read_func said why */
	if (!e.b) {
		err = setup_builder(&e, doc);
		if (err)
			goto out;
	}
	if (doc->type == SFP_JSON_OBJECT)
		(void)get_typed(&e.c, doc, "functions", "", SFP_JSON_ARRAY,
				"an array", &err);
	if (err)
		goto out;
	if (e.deferred) {
		/* The builder exists now: stream the functions again. */
		e.deferred = false;
		sfp_json_free(&doc);
		err = sfp_json_parse(text, len, &popts, &doc);
		if (err)
			goto out;
	}
	err = sfp_sframe_builder__write(e.b, buf, size);
	if (!err)
		*section_addr = e.addr;
out:
	sfp_sframe_builder__free(&e.b);
	sfp_json_free(&doc);
	return err;
}
