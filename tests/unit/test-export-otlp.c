// SPDX-License-Identifier: MIT
/*
 * The OTLP request written from a profile's tables (export/otlp.c)
 * against the one otlp_convert() builds from the same window's pprof
 * (the agent's way before): both decoded by protobuf-c and compared
 * field by field through the schema's descriptors, for a profile with
 * every case the mapping rules name (mappings with and without build-id
 * and names, a main binary that is not mapping 0, inlined frames, four
 * sample types, labels, an empty comm) and for a large generated one,
 * whose encode times both ways are printed; and `sfprof export -f otlp`,
 * the same encoder without a window.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sfprof/export.h>

#include "agent/sink-int.h"
#include "export/otlp-window.h"
#include "export/pprof-window.h"
#include "otlp-profiles.pb-c.h"
#include "profile/profile-int.h"
#include "test.h"

/* --- a profile made table by table ------------------------------------ */

struct mk {
	struct sfp_profile *p;
	bool ok;
};

static const char *str(struct mk *k, const char *s)
{
	const char *r = sfp_profile_str(k->p, s);

	k->ok &= r != NULL;
	return r;
}

static uint32_t mapping(struct mk *k, uint32_t key, const char *path,
			uint8_t bid_byte, uint64_t start,
			enum sfp_profile_kind kind)
{
	struct sfp_profile_mapping m = {
		.start = start, .end = start + 0x100000, .pgoff = 0x1000,
		.path = str(k, path), .kind = kind,
	};
	int64_t r;

	if (bid_byte) {
		memset(m.build_id, bid_byte, sizeof(m.build_id));
		m.build_id[0] = 0x01;	/* a leading zero nibble in hex */
		m.build_id_size = 20;
	}
	r = sfp_profile_mapping(k->p, key, &m);
	k->ok &= r >= 0;
	return r < 0 ? 0 : (uint32_t)r;
}

static uint32_t func(struct mk *k, const char *name, const char *raw,
		     const char *dso, const char *file, uint32_t start_line)
{
	struct sfp_profile_func f = {
		.name = str(k, name), .raw_name = str(k, raw ? raw : name),
		.dso = str(k, dso), .file = file ? str(k, file) : NULL,
		.start_line = start_line,
	};
	int64_t r = sfp_profile_func(k->p, &f);

	k->ok &= r >= 0;
	return r < 0 ? 0 : (uint32_t)r;
}

/* A loc of MAP at IP with N lines (innermost first). */
static uint32_t loc(struct mk *k, uint32_t map, uint64_t ip,
		    const struct sfp_profile_line *lines, size_t n)
{
	struct sfp_profile_loc l = { .ip = ip, .addr = ip, .mapping = map };
	int64_t r = sfp_profile_add_loc(k->p, &l, lines, n);

	k->ok &= r >= 0;
	return r < 0 ? 0 : (uint32_t)r;
}

/* The node of a stack given outermost first. */
static uint32_t stack(struct mk *k, const uint32_t *locs, size_t n)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t r = sfp_profile_node(k->p, node, locs[i]);

		k->ok &= r >= 0;
		node = r < 0 ? 0 : (uint32_t)r;
	}
	return node;
}

static void sample(struct mk *k, uint32_t node, uint32_t pid, uint32_t tid,
		   const char *comm, uint32_t event, uint64_t period,
		   uint64_t time)
{
	struct sfp_profile_sample s = {
		.time = time, .period = period, .pid = pid, .tid = tid,
		.cpu = 0, .stack = node, .event = event, .ip_loc = UINT32_MAX,
		.count = 1,
	};

	k->ok &= sfp_profile_intern(k->p, comm, &s.comm) == 0;
	k->ok &= sfp_profile_add_sample(k->p, &s) == 0;
}

static bool events(struct mk *k)
{
	struct sfp_profile *p = k->p;

	p->events = calloc(3, sizeof(*p->events));
	if (!p->events)
		return false;
	p->nr_events = 3;
	p->events[0] = (struct sfp_profile_event){
		.name = str(k, "cpu-clock"), .sample_freq = 99,
		.kind = SFP_PROFILE_EV_CLOCK,
	};
	p->events[1] = (struct sfp_profile_event){
		.name = str(k, "cycles"), .sample_period = 100000,
		.kind = SFP_PROFILE_EV_COUNT,
	};
	p->events[2] = (struct sfp_profile_event){
		.name = str(k, "offcpu-time"), .sample_period = 1,
		.kind = SFP_PROFILE_EV_OFF_CPU,
	};
	return true;
}

/*
 * Mappings: libc (build-id, names), the app (build-id, names; the main
 * binary, written first though it is mapping 1), a stripped library
 * (build-id, no names: its locations lose their lines), the kernel (no
 * build-id), a JIT map file (no build-id, no names: lines kept), and a
 * mapping no stack uses.
 */
static struct sfp_profile *small_profile(void)
{
	struct mk k = { .ok = true };
	uint32_t m_libc, m_app, m_strip, m_kern, m_jit;
	uint32_t f_main, f_work, f_helper, f_deep, f_read, f_unk, f_kern,
		 f_jit;
	uint32_t l_main, l_work, l_read, l_s1, l_s2, l_kern, l_jit, l_none;
	uint32_t n1, n2, n3, n4, n5;

	if (sfp_profile_new(&k.p))
		return NULL;
	m_libc = mapping(&k, 1, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0xaa,
			 0x7f0000000000, SFP_PROFILE_USER);
	m_app = mapping(&k, 2, "/usr/bin/app", 0xbb, 0x400000,
			SFP_PROFILE_USER);
	m_strip = mapping(&k, 3, "/opt/vendor/libstripped.so", 0xcc,
			  0x7f1000000000, SFP_PROFILE_USER);
	m_kern = mapping(&k, 4, "[kernel.kallsyms]", 0, 0xffffffff81000000,
			 SFP_PROFILE_KERNEL);
	m_jit = mapping(&k, 5, "/tmp/perf-100.map", 0, 0x7f2000000000,
			SFP_PROFILE_USER);
	mapping(&k, 6, "/usr/lib/libunused.so", 0xdd, 0x7f3000000000,
		SFP_PROFILE_USER);

	f_main = func(&k, "main", NULL, "/usr/bin/app", "app.c", 3);
	f_work = func(&k, "work(int)", "_Z4worki", "/usr/bin/app", "app.c", 20);
	f_helper = func(&k, "helper", NULL, "/usr/bin/app", "helper.h", 0);
	f_deep = func(&k, "deep", NULL, "/usr/bin/app", NULL, 0);
	f_read = func(&k, "read", "__GI___libc_read",
		      "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0);
	f_unk = func(&k, "[unknown]", NULL, "/opt/vendor/libstripped.so",
		     NULL, 0);
	f_kern = func(&k, "ksys_read", NULL, "[kernel.kallsyms]", NULL, 0);
	f_jit = func(&k, "[unknown]", NULL, "/tmp/perf-100.map", NULL, 0);
	func(&k, "never_used", NULL, "/usr/bin/app", NULL, 0);

	l_main = loc(&k, m_app, 0x401010,
		     (struct sfp_profile_line[]){ { f_main, 12 } }, 1);
	/* work() with helper() inlined, and deep() inlined into helper */
	l_work = loc(&k, m_app, 0x401234,
		     (struct sfp_profile_line[]){ { f_deep, 7 },
						  { f_helper, 40 },
						  { f_work, 25 } }, 3);
	l_read = loc(&k, m_libc, 0x7f0000011111,
		     (struct sfp_profile_line[]){ { f_read, 0 } }, 1);
	l_s1 = loc(&k, m_strip, 0x7f1000002000,
		   (struct sfp_profile_line[]){ { f_unk, 0 } }, 1);
	l_s2 = loc(&k, m_strip, 0x7f1000003000,
		   (struct sfp_profile_line[]){ { f_unk, 0 } }, 1);
	l_kern = loc(&k, m_kern, 0xffffffff81234567,
		     (struct sfp_profile_line[]){ { f_kern, 0 } }, 1);
	l_jit = loc(&k, m_jit, 0x7f2000000100,
		    (struct sfp_profile_line[]){ { f_jit, 0 } }, 1);
	l_none = loc(&k, UINT32_MAX, 0x1234,
		     (struct sfp_profile_line[]){ { f_jit, 0 } }, 1);
	loc(&k, m_app, 0x409999,
	    (struct sfp_profile_line[]){ { f_main, 99 } }, 1);	/* unused */

	n1 = stack(&k, (uint32_t[]){ l_main, l_work }, 2);
	n2 = stack(&k, (uint32_t[]){ l_main, l_work, l_read }, 3);
	n3 = stack(&k, (uint32_t[]){ l_main, l_work, l_read, l_kern }, 4);
	n4 = stack(&k, (uint32_t[]){ l_main, l_s1, l_s2 }, 3);
	n5 = stack(&k, (uint32_t[]){ l_main, l_jit, l_none }, 3);
	k.ok &= events(&k);

	sample(&k, n1, 100, 100, "app", 0, 10101010, 1000);
	sample(&k, n1, 100, 100, "app", 0, 10101010, 2000);
	sample(&k, n1, 100, 101, "worker", 0, 10101010, 3000);
	sample(&k, n2, 100, 101, "worker", 1, 1, 4000);
	sample(&k, n3, 100, 100, "app", 2, 5000000, 5000);
	sample(&k, n3, 0, 0, "swapper/0", 0, 10101010, 6000);
	sample(&k, n4, 101, 101, "", 0, 10101010, 7000);	/* no comm */
	sample(&k, n5, 101, 102, "app", 1, 1, 8000);
	sample(&k, 0, 101, 102, "app", 0, 10101010, 9000);	/* no frames */
	sfp_profile_finish(k.p);
	if (!k.ok)
		sfp_profile__free(&k.p);
	return k.p;
}

/* --- the two encoders --------------------------------------------------- */

static const char *const win_labels[][2] = {
	{ "service_name", "app" }, { "host", "h1" }, { "container_id", "" },
};
static const char *const res_labels[][2] = {
	{ "service_name", "app" }, { "host", "h1" }, { "pid", "100" },
	{ "region", "eu-1" },
};
#define T0 1765000000123456789ull
#define DUR 10000000000ull
#define SEQ 7

static int encode_direct(const struct sfp_profile *p, void **out, size_t *len)
{
	struct sfp_otlp_window x = {
		.time_nanos = T0, .duration_nanos = DUR, .seq = SEQ,
		.labels = win_labels, .nr_labels = ARRAY_SIZE(win_labels),
		.resource = res_labels, .nr_resource = ARRAY_SIZE(res_labels),
	};

	return sfp_otlp_encode(p, &x, out, len);
}

/* The agent's way before: the window's pprof, converted by the sink. */
static int encode_via_pprof(const struct sfp_profile *p, void **out,
			    size_t *len)
{
	struct sfp_pprof_window x = {
		.time_nanos = (int64_t)T0, .duration_nanos = (int64_t)DUR,
		.labels = win_labels, .nr_labels = ARRAY_SIZE(win_labels),
	};
	char *keys[ARRAY_SIZE(res_labels)], *values[ARRAY_SIZE(res_labels)];
	struct sink_item it = {
		.keys = keys, .values = values,
		.nr_labels = ARRAY_SIZE(res_labels), .start_ns = T0,
		.end_ns = T0 + DUR, .seq = SEQ,
	};
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(res_labels); i++) {
		keys[i] = (char *)res_labels[i][0];
		values[i] = (char *)res_labels[i][1];
	}
	err = sfp_pprof_encode(p, &x, &it.pprof, &it.pprof_len);
	if (!err)
		err = otlp_convert(&it, out, len);
	free(it.pprof);
	return err;
}

/* The pprof alone: what the agent's thread spent before when an OTLP
 * sink's thread did the conversion. */
static int encode_pprof(const struct sfp_profile *p, void **out, size_t *len)
{
	struct sfp_pprof_window x = {
		.time_nanos = (int64_t)T0, .duration_nanos = (int64_t)DUR,
		.labels = win_labels, .nr_labels = ARRAY_SIZE(win_labels),
	};

	return sfp_pprof_encode(p, &x, out, len);
}

/* --- field by field, through the descriptors ------------------------- */

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;	/* int32 ... float, enum, protobuf_c_boolean */
	}
}

static bool msg_eq(const ProtobufCMessage *a, const ProtobufCMessage *b,
		   const char *path);

static bool value_eq(const ProtobufCFieldDescriptor *f, const void *a,
		     const void *b, const char *path)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return msg_eq(*(ProtobufCMessage *const *)a,
			      *(ProtobufCMessage *const *)b, path);
	case PROTOBUF_C_TYPE_STRING: {
		const char *x = *(const char *const *)a;
		const char *y = *(const char *const *)b;

		if (!strcmp(x ? x : "", y ? y : ""))
			return true;
		sfp_test_fail_at(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"",
				 path, x ? x : "", y ? y : "");
		return false;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *x = a, *y = b;

		if (x->len == y->len && (!x->len ||
					 !memcmp(x->data, y->data, x->len)))
			return true;
		sfp_test_fail_at(__FILE__, __LINE__, "%s: bytes differ (%zu, %zu)",
				 path, x->len, y->len);
		return false;
	}
	default:
		if (!memcmp(a, b, elem_size(f->type)))
			return true;
		sfp_test_fail_at(__FILE__, __LINE__, "%s: %lld != %lld", path,
				 elem_size(f->type) == 8 ?
				 *(const long long *)a : *(const int *)a,
				 elem_size(f->type) == 8 ?
				 *(const long long *)b : *(const int *)b);
		return false;
	}
}

/* Every field of A and B, recursively; the first difference is said
 * with its path ("dictionary.location_table[3].lines[1].line"). */
static bool msg_eq(const ProtobufCMessage *a, const ProtobufCMessage *b,
		   const char *path)
{
	const ProtobufCMessageDescriptor *d;
	char sub[512];

	if (!a || !b) {
		if (a == b)
			return true;
		sfp_test_fail_at(__FILE__, __LINE__, "%s: present in %s only",
				 path, a ? "the direct one" : "the converted one");
		return false;
	}
	d = a->descriptor;
	for (unsigned int i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *qa = (const char *)a + f->quantifier_offset;
		const char *qb = (const char *)b + f->quantifier_offset;
		const char *ma = (const char *)a + f->offset;
		const char *mb = (const char *)b + f->offset;

		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t na = *(const size_t *)qa, nb = *(const size_t *)qb;
			const char *ea = *(const char *const *)ma;
			const char *eb = *(const char *const *)mb;
			size_t sz = elem_size(f->type);

			if (na != nb) {
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%s: %zu entries != %zu", sub,
						 na, nb);
				return false;
			}
			for (size_t j = 0; j < na; j++) {
				snprintf(sub, sizeof(sub), "%s.%s[%zu]", path,
					 f->name, j);
				if (!value_eq(f, ea + j * sz, eb + j * sz, sub))
					return false;
			}
			continue;
		}
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			uint32_t ca = *(const uint32_t *)qa;
			uint32_t cb = *(const uint32_t *)qb;

			if (ca != cb) {
				sfp_test_fail_at(__FILE__, __LINE__,
						 "%s: oneof case %u != %u", sub,
						 ca, cb);
				return false;
			}
			if (ca != f->id)
				continue;
		}
		if (!value_eq(f, ma, mb, sub))
			return false;
	}
	return true;
}

typedef Sfpotlp__ExportProfilesServiceRequest Req;

static Req *decode(const void *buf, size_t len)
{
	return sfpotlp__export_profiles_service_request__unpack(NULL, len, buf);
}

/* Both ways, decoded, equal field by field; the direct one's bytes kept
 * for the rule checks. */
static bool same_both_ways(const struct sfp_profile *p, Req **direct)
{
	void *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	Req *ra = NULL, *rb = NULL;
	bool ok = false;

	*direct = NULL;
	if (!ASSERT_OK(encode_direct(p, &a, &na)) ||
	    !ASSERT_OK(encode_via_pprof(p, &b, &nb)))
		goto out;
	ra = decode(a, na);
	rb = decode(b, nb);
	if (!ASSERT_NOT_NULL(ra) || !ASSERT_NOT_NULL(rb))
		goto out;
	ok = msg_eq(&ra->base, &rb->base, "request");
	/* and byte for byte: the same fields in the same order */
	ok &= ASSERT_EQ(na, nb) && ASSERT_EQ(memcmp(a, b, na), 0);
	*direct = ra;
	ra = NULL;
out:
	if (ra)
		sfpotlp__export_profiles_service_request__free_unpacked(ra, NULL);
	if (rb)
		sfpotlp__export_profiles_service_request__free_unpacked(rb, NULL);
	free(a);
	free(b);
	return ok;
}

static const char *dstr(const Req *r, int32_t i)
{
	const Sfpotlp__ProfilesDictionary *d = r->dictionary;

	return i >= 0 && (size_t)i < d->n_string_table ? d->string_table[i] :
	       "(out of range)";
}

TEST(otlp_direct_equals_converted_pprof)
{
	struct sfp_profile *p = small_profile();
	const Sfpotlp__ProfilesDictionary *d;
	Req *r;
	size_t strip_locs = 0;

	if (!ASSERT_NOT_NULL(p))
		return;
	same_both_ways(p, &r);
	if (!r)
		goto out;
	/* the rules themselves, on the direct one: a mismatch of both
	 * encoders in the same way would not show above */
	d = r->dictionary;
	ASSERT_EQ(r->n_resource_profiles, 1);
	ASSERT_EQ(r->resource_profiles[0]->scope_profiles[0]->n_profiles, 4);
	ASSERT_EQ(d->n_mapping_table, 6);	/* [0] + 5 used */
	ASSERT_STREQ(dstr(r, d->mapping_table[1]->filename_strindex),
		     "/usr/bin/app");
	if (ASSERT_EQ(d->mapping_table[1]->n_attribute_indices, 1)) {
		const Sfpotlp__KeyValueAndUnit *a = d->attribute_table[
			d->mapping_table[1]->attribute_indices[0]];

		ASSERT_STREQ(dstr(r, a->key_strindex), SFP_OTLP_BUILD_ID_KEY);
		ASSERT_STREQ(a->value->string_value,
			     "01bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	}
	for (size_t i = 1; i < d->n_location_table; i++) {
		const Sfpotlp__Location *l = d->location_table[i];
		const char *file = dstr(r, d->mapping_table[l->mapping_index]->
					   filename_strindex);

		if (!strcmp(file, "/opt/vendor/libstripped.so")) {
			strip_locs++;
			ASSERT_EQ(l->n_lines, 0);
		}
		if (l->address == 0x401234 && ASSERT_EQ(l->n_lines, 3)) {
			/* callee first */
			ASSERT_STREQ(dstr(r, d->function_table[l->lines[0]->
					  function_index]->name_strindex),
				     "deep");
			ASSERT_STREQ(dstr(r, d->function_table[l->lines[2]->
					  function_index]->name_strindex),
				     "work(int)");
		}
	}
	ASSERT_EQ(strip_locs, 2);
	sfpotlp__export_profiles_service_request__free_unpacked(r, NULL);
out:
	sfp_profile__free(&p);
}

/* sfprof export -f otlp: the request of a window without time, labels
 * or Resource, the samples' span as its duration. */
TEST(otlp_export_format)
{
	struct sfp_profile *p = small_profile();
	struct sfp_otlp_window x = { .duration_nanos = 9000 - 1000 };
	char *file = NULL;
	size_t file_len = 0;
	void *want = NULL;
	size_t want_len = 0;
	FILE *f;

	if (!ASSERT_NOT_NULL(p))
		return;
	f = open_memstream(&file, &file_len);
	if (ASSERT_NOT_NULL(f)) {
		ASSERT_EQ(sfp_profile__export(p, "otlp", f, NULL), 0);
		fclose(f);
	}
	if (ASSERT_OK(sfp_otlp_encode(p, &x, &want, &want_len)) &&
	    ASSERT_EQ(file_len, want_len))
		ASSERT_EQ(memcmp(file, want, want_len), 0);
	free(file);
	free(want);
	sfp_profile__free(&p);
}

/* --- a large profile, and the time each way takes ------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct sfp_profile *large_profile(size_t nr_samples)
{
	struct mk k = { .ok = true };
	uint32_t maps[8], funcs[2000], locs[20000], st[48];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char name[64];

	if (sfp_profile_new(&k.p))
		return NULL;
	for (uint32_t i = 0; i < ARRAY_SIZE(maps); i++) {
		snprintf(name, sizeof(name), "/usr/lib/lib%u.so", i);
		maps[i] = mapping(&k, i + 1, name, i % 3 ? (uint8_t)(0x10 + i) : 0,
				  0x7f0000000000ull + ((uint64_t)i << 32),
				  SFP_PROFILE_USER);
	}
	for (uint32_t i = 0; i < ARRAY_SIZE(funcs); i++) {
		snprintf(name, sizeof(name), "ns::function_%u(int)", i);
		funcs[i] = func(&k, i % 50 ? name : "[unknown]", NULL,
				"/usr/lib/lib1.so", i % 2 ? "src.c" : NULL, i);
	}
	for (uint32_t i = 0; i < ARRAY_SIZE(locs); i++) {
		struct sfp_profile_line ln[3];
		uint32_t n = 1 + (uint32_t)(rnd(&seed) % 3);

		for (uint32_t j = 0; j < n; j++)
			ln[j] = (struct sfp_profile_line){
				funcs[rnd(&seed) % ARRAY_SIZE(funcs)],
				(uint32_t)(rnd(&seed) % 500) };
		locs[i] = loc(&k, maps[i % ARRAY_SIZE(maps)],
			      0x7f0000000000ull + ((uint64_t)(i % 8) << 32) +
			      i * 16, ln, n);
	}
	k.ok &= events(&k);
	for (size_t i = 0; i < nr_samples && k.ok; i++) {
		size_t depth = 8 + rnd(&seed) % 40;

		/* shared roots, varied leaves: stacks as real ones go */
		for (size_t j = 0; j < depth; j++)
			st[j] = locs[j < 6 ? j : rnd(&seed) % ARRAY_SIZE(locs)];
		sample(&k, stack(&k, st, depth), 1000 + (uint32_t)(i % 4),
		       1000 + (uint32_t)(i % 16), i % 7 ? "server" : "gc",
		       (uint32_t)(i % 3), 10101010, 1000 + i);
	}
	sfp_profile_finish(k.p);
	if (!k.ok)
		sfp_profile__free(&k.p);
	return k.p;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The best of RUNS encodes, in ms. */
static double time_encode(const struct sfp_profile *p,
			  int (*enc)(const struct sfp_profile *, void **,
				     size_t *), int runs, size_t *len)
{
	double best = 1e30;

	for (int i = 0; i < runs; i++) {
		void *buf = NULL;
		double t = now_ms();

		if (enc(p, &buf, len))
			return -1;
		t = now_ms() - t;
		best = t < best ? t : best;
		free(buf);
	}
	return best;
}

TEST(otlp_direct_equals_converted_pprof_large)
{
	struct sfp_profile *p = large_profile(50000);
	double direct, via, pprof;
	size_t len = 0, pprof_len = 0;
	Req *r;

	if (!ASSERT_NOT_NULL(p))
		return;
	if (same_both_ways(p, &r) && r)
		sfpotlp__export_profiles_service_request__free_unpacked(r, NULL);
	direct = time_encode(p, encode_direct, 5, &len);
	via = time_encode(p, encode_via_pprof, 5, &len);
	pprof = time_encode(p, encode_pprof, 5, &pprof_len);
	ASSERT_TRUE(direct > 0 && via > 0 && pprof > 0);
	printf("    encode of %zu samples (a %zu-byte request), best of 5: "
	       "direct %.1f ms, pprof + otlp_convert %.1f ms (the pprof "
	       "alone, %zu bytes: %.1f ms)\n", sfp_profile__nr_samples(p),
	       len, direct, via, pprof_len, pprof);
	sfp_profile__free(&p);
}
