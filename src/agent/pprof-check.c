// SPDX-License-Identifier: MIT
/*
 * Is this a pprof Profile?  Asked of every window a sink is given
 * (sink.c), before it is queued: `sfprof push` takes files from the
 * user, and a gzip of anything would otherwise go to Pyroscope as a
 * rawProfile and count as delivered (the OTLP sink, which decodes it,
 * refused the same bytes).
 *
 * Two passes:
 * - the wire format, walked with a bounds-checked cursor through every
 *   message of the schema (Profile, ValueType, Sample, Label, Mapping,
 *   Location, Line, Function), as protobuf-c's descriptors of
 *   proto/pprof.proto give it: tags, wire types against the fields'
 *   types, varints, lengths; an error names its offset;
 * - what Go's profile.Parse and CheckValid insist on, on protobuf-c's
 *   decoding: string_table[0] is "", every string index is in the table,
 *   ids are non-zero and unique, every sample has one value per sample
 *   type and locations that exist, every location's mapping and every
 *   line's function exist.
 * Unknown fields are allowed (newer profile.proto fields), as protobuf
 * allows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink.h"
#include "common/cursor.h"
#include "pprof.pb-c.h"

enum kind {
	K_ANY,		/* unknown field: any valid wire type */
	K_VARINT,	/* a scalar number */
	K_PACKED,	/* a repeated number: varint, or packed varints */
	K_BYTES,	/* a string */
	K_MSG,		/* a message */
};

/*
 * What the one schema (proto/pprof.proto, through protobuf-c's
 * descriptors) says field number `num` of message d is; *sub: the
 * message type of a K_MSG field.
 */
static enum kind field_kind(const ProtobufCMessageDescriptor *d,
			    uint64_t num, const ProtobufCMessageDescriptor **sub)
{
	const ProtobufCFieldDescriptor *f;

	*sub = NULL;
	f = num <= UINT32_MAX ?
		protobuf_c_message_descriptor_get_field(d, (unsigned)num) :
		NULL;
	if (!f)
		return K_ANY;
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		*sub = f->descriptor;
		return K_MSG;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		return K_BYTES;
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return f->label == PROTOBUF_C_LABEL_REPEATED ? K_PACKED :
							       K_VARINT;
	default:
		return K_ANY;	/* fixed-width: profile.proto has none */
	}
}

/* Nesting is fixed by the schema (Profile > Location > Line): 3 deep. */
static int walk(struct sfp_cursor *c, const ProtobufCMessageDescriptor *m,
		char *why, size_t len)
{
	while (sfp_cursor_left(c)) {
		size_t at = sfp_cursor_off(c);
		uint64_t tag, v, n = 0;
		unsigned int wt;
		const ProtobufCMessageDescriptor *sub_d;
		enum kind kind;

		if (sfp_cursor_uleb(c, &tag)) {
			snprintf(why, len, "offset %zu: a %s field's tag is not "
				 "a varint", at, m->short_name);
			return -EBADMSG;
		}
		wt = tag & 7;
		if (!(tag >> 3) || tag >> 3 > 0x1fffffff) {
			snprintf(why, len, "offset %zu: field number %llu in a "
				 "%s (not protobuf)", at,
				 (unsigned long long)(tag >> 3), m->short_name);
			return -EBADMSG;
		}
		kind = field_kind(m, tag >> 3, &sub_d);
		switch (wt) {
		case 0:
			if (kind != K_ANY && kind != K_VARINT &&
			    kind != K_PACKED)
				goto bad_type;
			if (sfp_cursor_uleb(c, &v)) {
				snprintf(why, len, "offset %zu: %s field %llu: "
					 "a bad or truncated varint", at,
					 m->short_name,
					 (unsigned long long)(tag >> 3));
				return -EBADMSG;
			}
			break;
		case 1:
		case 5:
			if (kind != K_ANY)
				goto bad_type;
			if (sfp_cursor_skip(c, wt == 1 ? 8 : 4)) {
				snprintf(why, len, "offset %zu: %s field %llu "
					 "runs past the end", at, m->short_name,
					 (unsigned long long)(tag >> 3));
				return -EBADMSG;
			}
			break;
		case 2: {
			struct sfp_cursor sub;

			if (kind == K_VARINT)
				goto bad_type;
			if (sfp_cursor_uleb(c, &n) || n > sfp_cursor_left(c)) {
				snprintf(why, len, "offset %zu: %s field %llu: "
					 "a length of %llu bytes, %zu left", at,
					 m->short_name,
					 (unsigned long long)(tag >> 3),
					 (unsigned long long)n,
					 sfp_cursor_left(c));
				return -EBADMSG;
			}
			sub = *c;
			sub.end = c->pos + n;
			if (kind == K_MSG) {
				int err = walk(&sub, sub_d, why, len);

				if (err)
					return err;
			} else if (kind == K_PACKED) {
				while (sfp_cursor_left(&sub)) {
					size_t vat = sfp_cursor_off(&sub);

					if (sfp_cursor_uleb(&sub, &v)) {
						snprintf(why, len, "offset %zu: "
							 "%s field %llu: a bad "
							 "packed varint", vat,
							 m->short_name,
							 (unsigned long long)(tag >> 3));
						return -EBADMSG;
					}
				}
			}
			(void)sfp_cursor_skip(c, n);
			break;
		}
		default:
			snprintf(why, len, "offset %zu: wire type %u in a %s "
				 "(not protobuf)", at, wt, m->short_name);
			return -EBADMSG;
		}
		continue;
bad_type:
		snprintf(why, len, "offset %zu: %s field %llu has wire type %u, "
			 "not its type's", at, m->short_name,
			 (unsigned long long)(tag >> 3), wt);
		return -EBADMSG;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted ids of N items, or NULL (-ENOMEM) ; zero or repeated: *why. */
static uint64_t *ids(size_t n, uint64_t (*get)(const void *, size_t),
		     const void *arr, const char *what, char *why, size_t len,
		     int *err)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));

	*err = 0;
	if (!v) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = get(arr, i);
		if (!v[i]) {
			snprintf(why, len, "%s %zu has id 0 (reserved)", what, i);
			*err = -EBADMSG;
			free(v);
			return NULL;
		}
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 1; i < n; i++)
		if (v[i] == v[i - 1]) {
			snprintf(why, len, "two %ss have id %llu", what,
				 (unsigned long long)v[i]);
			*err = -EBADMSG;
			free(v);
			return NULL;
		}
	return v;
}

static bool has_id(const uint64_t *v, size_t n, uint64_t id)
{
	return bsearch(&id, v, n, sizeof(*v), cmp_u64) != NULL;
}

static uint64_t map_id(const void *a, size_t i)
{
	return ((Sfppprof__Mapping *const *)a)[i]->id;
}

static uint64_t fn_id(const void *a, size_t i)
{
	return ((Sfppprof__Function *const *)a)[i]->id;
}

static uint64_t loc_id(const void *a, size_t i)
{
	return ((Sfppprof__Location *const *)a)[i]->id;
}

#define STR_OK(x) ((x) >= 0 && (uint64_t)(x) < p->n_string_table)
#define BAD(...)							\
	do {								\
		snprintf(why, len, __VA_ARGS__);			\
		err = -EBADMSG;						\
		goto out;						\
	} while (0)

static int semantics(const Sfppprof__Profile *p, char *why, size_t len)
{
	uint64_t *maps = NULL, *fns = NULL, *locs = NULL;
	int err = 0;

	if (!p->n_string_table || *p->string_table[0])
		BAD("string_table[0] is not \"\" (%s)",
		    p->n_string_table ? "a string" : "no string table");
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!STR_OK(p->sample_type[i]->type) ||
		    !STR_OK(p->sample_type[i]->unit))
			BAD("sample_type %zu: a string index past the table "
			    "(%zu strings)", i, p->n_string_table);
	if (p->period_type && (!STR_OK(p->period_type->type) ||
			       !STR_OK(p->period_type->unit)))
		BAD("period_type: a string index past the table");
	if (p->n_sample && !p->n_sample_type)
		BAD("%zu samples and no sample_type", p->n_sample);
	if (!(maps = ids(p->n_mapping, map_id, p->mapping, "mapping", why, len,
			 &err)) ||
	    !(fns = ids(p->n_function, fn_id, p->function, "function", why,
			len, &err)) ||
	    !(locs = ids(p->n_location, loc_id, p->location, "location", why,
			 len, &err)))
		goto out;
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!STR_OK(p->mapping[i]->filename) ||
		    !STR_OK(p->mapping[i]->build_id))
			BAD("mapping %zu: a string index past the table", i);
	for (size_t i = 0; i < p->n_function; i++) {
		const Sfppprof__Function *f = p->function[i];

		if (!STR_OK(f->name) || !STR_OK(f->system_name) ||
		    !STR_OK(f->filename))
			BAD("function %zu: a string index past the table", i);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Sfppprof__Location *l = p->location[i];

		if (l->mapping_id && !has_id(maps, p->n_mapping, l->mapping_id))
			BAD("location %zu: mapping id %llu is not defined", i,
			    (unsigned long long)l->mapping_id);
		for (size_t j = 0; j < l->n_line; j++)
			if (!has_id(fns, p->n_function, l->line[j]->function_id))
				BAD("location %zu: line %zu's function id %llu "
				    "is not defined", i, j,
				    (unsigned long long)l->line[j]->function_id);
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Sfppprof__Sample *s = p->sample[i];

		if (s->n_value != p->n_sample_type)
			BAD("sample %zu has %zu values for %zu sample types", i,
			    s->n_value, p->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++)
			if (!has_id(locs, p->n_location, s->location_id[j]))
				BAD("sample %zu: location id %llu is not "
				    "defined", i,
				    (unsigned long long)s->location_id[j]);
		for (size_t j = 0; j < s->n_label; j++)
			if (!STR_OK(s->label[j]->key) ||
			    !STR_OK(s->label[j]->str) ||
			    !STR_OK(s->label[j]->num_unit))
				BAD("sample %zu: label %zu: a string index "
				    "past the table", i, j);
	}
out:
	free(maps);
	free(fns);
	free(locs);
	return err;
}

int agent_pprof_check(const void *pprof, size_t size, char *why,
		      size_t why_len)
{
	struct sfp_cursor c;
	Sfppprof__Profile *p;
	int err;

	if (!size) {
		snprintf(why, why_len, "empty (0 bytes)");
		return -EBADMSG;
	}
	sfp_cursor_init(&c, pprof, size, false);
	if ((err = walk(&c, &sfppprof__profile__descriptor, why, why_len)))
		return err;
	p = sfppprof__profile__unpack(NULL, size, pprof);
	if (!p) {
		/* the wire format passed: out of memory, or a string that is
		 * not UTF-8 */
		snprintf(why, why_len, "protobuf-c could not decode it");
		return -EBADMSG;
	}
	err = semantics(p, why, why_len);
	sfppprof__profile__free_unpacked(p, NULL);
	return err;
}
