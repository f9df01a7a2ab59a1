/* SPDX-License-Identifier: MIT */
/*
 * A small, bounded JSON parser (DOM) and writer helpers.
 *
 * The parser is for inputs we do not trust (JSON given on the command
 * line, the test vectors): it never recurses deeper than opts->max_depth,
 * refuses documents larger than opts->max_size and fails with -EBADMSG
 * and a pr_warn() naming the byte offset on anything malformed.  Strings
 * are decoded (escapes, \uXXXX with surrogate pairs, to UTF-8) and kept
 * NUL-terminated with an explicit length (they may contain NUL).
 *
 * Numbers: integers without fraction or exponent that fit int64 (or, when
 * positive, uint64) are SFP_JSON_INT; everything else is SFP_JSON_DOUBLE.
 */
#ifndef SFP_JSON_H
#define SFP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/internal.h"

enum sfp_json_type {
	SFP_JSON_NULL,
	SFP_JSON_BOOL,
	SFP_JSON_INT,
	SFP_JSON_DOUBLE,
	SFP_JSON_STRING,
	SFP_JSON_ARRAY,
	SFP_JSON_OBJECT,
};

struct sfp_json;

struct sfp_json_member {
	char *key;
	size_t key_len;
	struct sfp_json *val;
};

struct sfp_json {
	enum sfp_json_type type;
	union {
		bool b;
		struct {
			int64_t i;	/* valid unless u_only */
			uint64_t u;	/* valid when !neg */
			bool neg;	/* value < 0 */
			bool u_only;	/* > INT64_MAX: only u holds it */
		} num;
		double d;
		struct {
			char *s;
			size_t len;
		} str;
		struct {
			struct sfp_json **items;
			size_t n;
		} arr;
		struct {
			struct sfp_json_member *m;
			size_t n;
		} obj;
	};
};

struct sfp_json_parse_opts {
	size_t max_depth;	/* 0: 64 */
	size_t max_size;	/* 0: 256 MiB */
	const char *name;	/* for messages; may be NULL */
	/*
	 * Streaming (optional): the items of an array that is the member
	 * stream_key of the top-level object are passed to on_item one at a
	 * time, with the top-level object as parsed so far (the members
	 * before that one), and freed right after: that array is left empty
	 * in the result.  So a document of a million rows needs memory for
	 * one item, not for the whole tree (`sframe encode`).  on_item
	 * returning non-zero ends the parse with that value.
	 */
	const char *stream_key;
	int (*on_item)(const struct sfp_json *top, const struct sfp_json *item,
		       size_t idx, void *ctx);
	void *ctx;
};

/*
 * Parse text[0..len) (need not be NUL-terminated).  Trailing whitespace
 * is allowed, anything else after the value is an error.
 * Return: 0 and *out; -EBADMSG malformed or too deep; -E2BIG too large;
 * -ENOMEM.
 */
SFP_HIDDEN int sfp_json_parse(const char *text, size_t len,
			      const struct sfp_json_parse_opts *opts,
			      struct sfp_json **out);

SFP_HIDDEN void sfp_json_free(struct sfp_json **v);

/* Member of an object by key, or NULL (also when v is not an object). */
SFP_HIDDEN const struct sfp_json *sfp_json_get(const struct sfp_json *v,
					       const char *key);
/* Item of an array, or NULL. */
SFP_HIDDEN const struct sfp_json *sfp_json_at(const struct sfp_json *v,
					      size_t idx);
SFP_HIDDEN size_t sfp_json_len(const struct sfp_json *v); /* array/object */

/* Typed reads. Return: 0; -ENOENT v is NULL; -EINVAL wrong type/range. */
SFP_HIDDEN int sfp_json_i64(const struct sfp_json *v, int64_t *out);
SFP_HIDDEN int sfp_json_u64(const struct sfp_json *v, uint64_t *out);
SFP_HIDDEN int sfp_json_bool(const struct sfp_json *v, bool *out);
/* The string (NUL-terminated; *len may be NULL). */
SFP_HIDDEN int sfp_json_str(const struct sfp_json *v, const char **s,
			    size_t *len);

/* --- Writer helpers. --- */

/* Write s[0..len) as a JSON string literal with quotes and escapes. */
SFP_HIDDEN void sfp_json_write_str(FILE *f, const char *s, size_t len);
/* Same for a NUL-terminated string. */
SFP_HIDDEN void sfp_json_write_cstr(FILE *f, const char *s);

#endif /* SFP_JSON_H */
