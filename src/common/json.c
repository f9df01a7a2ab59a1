// SPDX-License-Identifier: MIT
/*
 * Bounded JSON parser.  Recursive descent with an explicit depth limit:
 * the depth cap bounds the C stack, the size cap bounds memory (every node
 * consumes at least one input byte, so nodes <= input size).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

#define JSON_DEFAULT_DEPTH 64
#define JSON_DEFAULT_MAX_SIZE (256u << 20)

struct jp {
	const char *base;
	const char *p;
	const char *end;
	size_t max_depth;
	const char *name;
	const struct sfp_json_parse_opts *opts;	/* streaming, if set */
	struct sfp_json *top;			/* the top-level value */
};

static int jp_err(struct jp *jp, const char *what)
{
	pr_warn("%s: JSON offset %zu: %s", jp->name ? jp->name : "json",
		(size_t)(jp->p - jp->base), what);
	return -EBADMSG;
}

static void jp_ws(struct jp *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
				   *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static bool jp_lit(struct jp *jp, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, lit, n))
		return false;
	jp->p += n;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int jp_hex4(struct jp *jp, uint32_t *v)
{
	uint32_t r = 0;
	int i;

	if (jp->end - jp->p < 4)
		return jp_err(jp, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		int h = hexval(jp->p[i]);

		if (h < 0)
			return jp_err(jp, "bad hex digit in \\u escape");
		r = r << 4 | (uint32_t)h;
	}
	jp->p += 4;
	*v = r;
	return 0;
}

static size_t utf8_put(char *dst, uint32_t cp)
{
	if (cp < 0x80) {
		dst[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		dst[0] = (char)(0xc0 | cp >> 6);
		dst[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		dst[0] = (char)(0xe0 | cp >> 12);
		dst[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		dst[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	dst[0] = (char)(0xf0 | cp >> 18);
	dst[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	dst[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	dst[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote.  The decoded form is never longer than the raw
 * one (an escape of 6 or 12 bytes gives at most 4), so one allocation of
 * the raw length suffices. */
static int jp_string(struct jp *jp, char **out, size_t *out_len)
{
	const char *s;
	char *buf, *d;
	int err;

	jp->p++;
	s = jp->p;
	while (jp->p < jp->end && *jp->p != '"') {
		if (*jp->p == '\\' && jp->end - jp->p < 2)
			break;
		jp->p += *jp->p == '\\' ? 2 : 1;
	}
	if (jp->p >= jp->end || *jp->p != '"')
		return jp_err(jp, "unterminated string");
	buf = malloc((size_t)(jp->p - s) + 1);
	if (!buf)
		return -ENOMEM;
	jp->p = s;
	d = buf;
	while (*jp->p != '"') {
		unsigned char c = (unsigned char)*jp->p;
		uint32_t cp, lo;

		if (c < 0x20) {
			err = jp_err(jp, "control character in string");
			goto fail;
		}
		if (c != '\\') {
			*d++ = (char)c;
			jp->p++;
			continue;
		}
		jp->p++;
		switch (*jp->p++) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '/': *d++ = '/'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			err = jp_hex4(jp, &cp);
			if (err)
				goto fail;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (!jp_lit(jp, "\\u")) {
					err = jp_err(jp, "lone high surrogate");
					goto fail;
				}
				err = jp_hex4(jp, &lo);
				if (err)
					goto fail;
				if (lo < 0xdc00 || lo >= 0xe000) {
					err = jp_err(jp, "bad low surrogate");
					goto fail;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				err = jp_err(jp, "lone low surrogate");
				goto fail;
			}
			d += utf8_put(d, cp);
			break;
		default:
			jp->p--;
			err = jp_err(jp, "bad escape");
			goto fail;
		}
	}
	jp->p++;	/* closing quote */
	*d = '\0';
	*out = buf;
	*out_len = (size_t)(d - buf);
	return 0;
fail:
	free(buf);
	return err;
}

static int jp_number(struct jp *jp, struct sfp_json *v)
{
	const char *s = jp->p;
	bool neg = false, is_int = true;
	uint64_t u = 0;
	bool overflow = false;
	char tmp[128];
	size_t n;

	if (jp->p < jp->end && *jp->p == '-') {
		neg = true;
		jp->p++;
	}
	if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
		return jp_err(jp, "bad number");
	if (*jp->p == '0' && jp->p + 1 < jp->end && jp->p[1] >= '0' &&
	    jp->p[1] <= '9')
		return jp_err(jp, "leading zero in number");
	while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9') {
		unsigned int dgt = (unsigned int)(*jp->p - '0');

		if (u > (UINT64_MAX - dgt) / 10)
			overflow = true;
		else
			u = u * 10 + dgt;
		jp->p++;
	}
	if (jp->p < jp->end && *jp->p == '.') {
		is_int = false;
		jp->p++;
		if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
			return jp_err(jp, "bad fraction");
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
		is_int = false;
		jp->p++;
		if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
			jp->p++;
		if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
			return jp_err(jp, "bad exponent");
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	if (is_int && !overflow &&
	    (!neg || u <= (uint64_t)INT64_MAX + 1)) {
		v->type = SFP_JSON_INT;
		v->num.neg = neg && u != 0;
		if (neg) {
			v->num.i = u == (uint64_t)INT64_MAX + 1
					   ? INT64_MIN
					   : -(int64_t)u;
			v->num.u = 0;
		} else {
			v->num.u = u;
			v->num.u_only = u > (uint64_t)INT64_MAX;
			v->num.i = v->num.u_only ? 0 : (int64_t)u;
		}
		return 0;
	}
	n = (size_t)(jp->p - s);
	if (n >= sizeof(tmp))
		return jp_err(jp, "number too long");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	v->type = SFP_JSON_DOUBLE;
	v->d = strtod(tmp, NULL);
	return 0;
}

static int jp_value(struct jp *jp, size_t depth, struct sfp_json **out);

static void json_free_node(struct sfp_json *v);

/* Past the opening '[' or '{': true, and past @close too, when the
 * container is empty. */
static bool jp_open(struct jp *jp, char close)
{
	jp->p++;
	jp_ws(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return true;
	}
	return false;
}

/* After an item: 0 past a ',' (another item follows), 1 past @close (the
 * container ends), or the error of anything else. */
static int jp_next(struct jp *jp, char close)
{
	jp_ws(jp);
	if (jp->p < jp->end && *jp->p == ',') {
		jp->p++;
		return 0;
	}
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 1;
	}
	return jp_err(jp, close == ']' ? "expected ',' or ']'"
				       : "expected ',' or '}'");
}

/* An array whose items go to opts->on_item one by one, not into v. */
static int jp_array_stream(struct jp *jp, size_t depth, struct sfp_json *v)
{
	size_t idx = 0;
	int err;

	v->type = SFP_JSON_ARRAY;
	if (jp_open(jp, ']'))
		return 0;
	for (;;) {
		struct sfp_json *item = NULL;

		err = jp_value(jp, depth + 1, &item);
		if (!err)
			err = jp->opts->on_item(jp->top, item, idx++,
						jp->opts->ctx);
		json_free_node(item);
		if (err)
			return err;
		err = jp_next(jp, ']');
		if (err)
			return err > 0 ? 0 : err;
	}
}

static int jp_array(struct jp *jp, size_t depth, struct sfp_json *v)
{
	size_t cap = 0;
	int err;

	v->type = SFP_JSON_ARRAY;
	if (jp_open(jp, ']'))
		return 0;
	for (;;) {
		if (v->arr.n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			void *p = realloc(v->arr.items, ncap * sizeof(*v->arr.items));

			if (!p)
				return -ENOMEM;
			v->arr.items = p;
			cap = ncap;
		}
		/* Attach before checking: a partial item is freed with v. */
		v->arr.items[v->arr.n] = NULL;
		err = jp_value(jp, depth + 1, &v->arr.items[v->arr.n]);
		v->arr.n++;
		if (err)
			return err;
		err = jp_next(jp, ']');
		if (err)
			return err > 0 ? 0 : err;
	}
}

static int jp_object(struct jp *jp, size_t depth, struct sfp_json *v)
{
	size_t cap = 0;
	int err;

	v->type = SFP_JSON_OBJECT;
	if (jp_open(jp, '}'))
		return 0;
	for (;;) {
		struct sfp_json_member *m;

		jp_ws(jp);
		if (jp->p >= jp->end || *jp->p != '"')
			return jp_err(jp, "expected a key string");
		if (v->obj.n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			void *p = realloc(v->obj.m, ncap * sizeof(*v->obj.m));

			if (!p)
				return -ENOMEM;
			v->obj.m = p;
			cap = ncap;
		}
		m = &v->obj.m[v->obj.n];
		m->val = NULL;
		err = jp_string(jp, &m->key, &m->key_len);
		if (err)
			return err;
		v->obj.n++;
		jp_ws(jp);
		if (jp->p >= jp->end || *jp->p != ':')
			return jp_err(jp, "expected ':'");
		jp->p++;
		if (depth == 0 && jp->opts && jp->opts->stream_key &&
		    jp->opts->on_item && !strcmp(m->key, jp->opts->stream_key)) {
			jp_ws(jp);
			if (jp->p < jp->end && *jp->p == '[') {
				m->val = calloc(1, sizeof(*m->val));
				if (!m->val)
					return -ENOMEM;
				err = jp_array_stream(jp, depth + 1, m->val);
				if (err)
					return err;
				goto next;
			}
		}
		err = jp_value(jp, depth + 1, &m->val);
		if (err)
			return err;
next:
		err = jp_next(jp, '}');
		if (err)
			return err > 0 ? 0 : err;
	}
}

static int jp_value(struct jp *jp, size_t depth, struct sfp_json **out)
{
	struct sfp_json *v;
	int err = 0;

	if (depth > jp->max_depth)
		return jp_err(jp, "nested too deeply");
	jp_ws(jp);
	if (jp->p >= jp->end)
		return jp_err(jp, "unexpected end of input");
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*out = v;	/* the caller frees partial trees */
	if (depth == 0)
		jp->top = v;
	switch (*jp->p) {
	case '{':
		err = jp_object(jp, depth, v);
		break;
	case '[':
		err = jp_array(jp, depth, v);
		break;
	case '"':
		v->type = SFP_JSON_STRING;
		err = jp_string(jp, &v->str.s, &v->str.len);
		break;
	case 't':
		if (!jp_lit(jp, "true"))
			return jp_err(jp, "bad literal");
		v->type = SFP_JSON_BOOL;
		v->b = true;
		break;
	case 'f':
		if (!jp_lit(jp, "false"))
			return jp_err(jp, "bad literal");
		v->type = SFP_JSON_BOOL;
		break;
	case 'n':
		if (!jp_lit(jp, "null"))
			return jp_err(jp, "bad literal");
		v->type = SFP_JSON_NULL;
		break;
	default:
		err = jp_number(jp, v);
		break;
	}
	return err;
}

int sfp_json_parse(const char *text, size_t len,
		   const struct sfp_json_parse_opts *opts,
		   struct sfp_json **out)
{
	struct jp jp = {
		.base = text, .p = text, .end = text + len,
		.max_depth = JSON_DEFAULT_DEPTH,
	};
	size_t max_size = JSON_DEFAULT_MAX_SIZE;
	struct sfp_json *v = NULL;
	int err;

	if (!out || (!text && len))
		return -EINVAL;
	*out = NULL;
	if (opts) {
		if (opts->max_depth)
			jp.max_depth = opts->max_depth;
		if (opts->max_size)
			max_size = opts->max_size;
		jp.name = opts->name;
		jp.opts = opts;
	}
	if (len > max_size) {
		pr_warn("%s: JSON input of %zu bytes exceeds the limit of %zu",
			jp.name ? jp.name : "json", len, max_size);
		return -E2BIG;
	}
	err = jp_value(&jp, 0, &v);
	if (!err) {
		jp_ws(&jp);
		if (jp.p != jp.end)
			err = jp_err(&jp, "trailing data after the value");
	}
	if (err) {
		sfp_json_free(&v);
		return err;
	}
	*out = v;
	return 0;
}

static void json_free_node(struct sfp_json *v)
{
	size_t i;

	if (!v)
		return;
	switch (v->type) {
	case SFP_JSON_STRING:
		free(v->str.s);
		break;
	case SFP_JSON_ARRAY:
		for (i = 0; i < v->arr.n; i++)
			json_free_node(v->arr.items[i]);
		free(v->arr.items);
		break;
	case SFP_JSON_OBJECT:
		for (i = 0; i < v->obj.n; i++) {
			free(v->obj.m[i].key);
			json_free_node(v->obj.m[i].val);
		}
		free(v->obj.m);
		break;
	default:
		break;
	}
	free(v);
}

void sfp_json_free(struct sfp_json **v)
{
	if (!v)
		return;
	json_free_node(*v);
	*v = NULL;
}

const struct sfp_json *sfp_json_get(const struct sfp_json *v, const char *key)
{
	size_t i, n;

	if (!v || v->type != SFP_JSON_OBJECT || !key)
		return NULL;
	n = strlen(key);
	for (i = 0; i < v->obj.n; i++)
		if (v->obj.m[i].key_len == n && !memcmp(v->obj.m[i].key, key, n))
			return v->obj.m[i].val;
	return NULL;
}

const struct sfp_json *sfp_json_at(const struct sfp_json *v, size_t idx)
{
	if (!v || v->type != SFP_JSON_ARRAY || idx >= v->arr.n)
		return NULL;
	return v->arr.items[idx];
}

size_t sfp_json_len(const struct sfp_json *v)
{
	if (!v)
		return 0;
	if (v->type == SFP_JSON_ARRAY)
		return v->arr.n;
	if (v->type == SFP_JSON_OBJECT)
		return v->obj.n;
	return 0;
}

int sfp_json_i64(const struct sfp_json *v, int64_t *out)
{
	if (!v)
		return -ENOENT;
	if (v->type != SFP_JSON_INT || v->num.u_only)
		return -EINVAL;
	*out = v->num.i;
	return 0;
}

int sfp_json_u64(const struct sfp_json *v, uint64_t *out)
{
	if (!v)
		return -ENOENT;
	if (v->type != SFP_JSON_INT || v->num.neg)
		return -EINVAL;
	*out = v->num.u;
	return 0;
}

int sfp_json_bool(const struct sfp_json *v, bool *out)
{
	if (!v)
		return -ENOENT;
	if (v->type != SFP_JSON_BOOL)
		return -EINVAL;
	*out = v->b;
	return 0;
}

int sfp_json_str(const struct sfp_json *v, const char **s, size_t *len)
{
	if (!v)
		return -ENOENT;
	if (v->type != SFP_JSON_STRING)
		return -EINVAL;
	*s = v->str.s;
	if (len)
		*len = v->str.len;
	return 0;
}

void sfp_json_write_str(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

void sfp_json_write_cstr(FILE *f, const char *s)
{
	sfp_json_write_str(f, s, strlen(s));
}
