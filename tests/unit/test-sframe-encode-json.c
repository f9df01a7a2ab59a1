// SPDX-License-Identifier: MIT
/*
 * The JSON reader of `sfprof sframe encode`: what it reads from the schema
 * (docs/sframe-json.md), and that every bad value is refused with the
 * exact error code and a message naming its JSON path.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/sframe.h>

#include "sframe/json-read.h"
#include "test.h"

static char last_log[512];

static void save_log(enum sfp_log_level level, const char *msg, void *ctx)
{
	/* Keep the first message: it is the one that names the place. */
	if (!last_log[0])
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

static int enc(const char *json, const struct sfp_sframe_json_opts *o,
	       void **buf, size_t *size, uint64_t *addr)
{
	struct sfp_sframe_json_opts dflt = { .name = "t.json" };

	sfp_set_log(save_log, NULL);
	last_log[0] = 0;
	*buf = NULL;
	return sfp_sframe_json__encode(json, strlen(json), o ? o : &dflt, buf,
				       size, addr);
}

#define HDR(extra) \
	"{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,\n" \
	" \"header\": {\"version\": 2, \"abi\": \"amd64\", \"fixed_ra_offset\": -8," \
	" \"section_addr\": 4096" extra "},\n"

/* The worked example of the format notes (see test-sframe-encode.c). */
#define EXAMPLE_FUNCS(off)                                                    \
	" \"functions\": [{\"start\": " #off "4352, \"size\": 16, \"rows\": [\n" \
	"  {\"start\": " #off "4352, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 8},\n" \
	"   \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true}},\n" \
	"  {\"start\": " #off "4353, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 16},\n" \
	"   \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true},\n" \
	"   \"fp\": {\"kind\": \"cfa_deref\", \"offset\": -16}},\n"              \
	"  {\"start\": " #off "4356, \"end\": 99, \"flags\": [],\n"          \
	"   \"cfa\": {\"kind\": \"reg\", \"reg\": 6, \"offset\": 16},\n"         \
	"   \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true},\n" \
	"   \"fp\": {\"kind\": \"cfa_deref\", \"offset\": -16}, \"unknown\": 1}]}]}\n"

static const uint8_t example_v2[] = {
	0xe2, 0xde, 0x02, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0, 0, 0, 0x03, 0, 0, 0, 0x0b, 0, 0, 0,
	0x00, 0, 0, 0, 0x14, 0, 0, 0,
	0xe4, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0,
	0x00, 0x00, 0, 0,
	0x00, 0x03, 0x08,
	0x01, 0x05, 0x10, 0xf0,
	0x04, 0x04, 0x10, 0xf0,
};

TEST(json_encode_example_bytes)
{
	void *buf = NULL;
	size_t size = 0;
	uint64_t addr = 0;

	if (ASSERT_OK(enc(HDR("") EXAMPLE_FUNCS(), NULL, &buf, &size, &addr))) {
		ASSERT_EQ(addr, 4096);
		ASSERT_EQ(size, sizeof(example_v2));
		ASSERT_TRUE(size == sizeof(example_v2) &&
			    !memcmp(buf, example_v2, size));
	}
	free(buf);
}

/* "functions" is streamed (one function's tree at a time); a document that
 * puts the header after the functions must give the same bytes. */
TEST(json_encode_header_after_functions)
{
	static const char doc[] =
		"{" EXAMPLE_FUNCS() "";
	char *j = NULL;
	void *buf = NULL;
	size_t size = 0, n;
	uint64_t addr = 0;
	const char *hdr = HDR("");

	/* EXAMPLE_FUNCS() ends the document with "]}\n": rebuild it as
	 * {functions..., format..., header...} */
	n = strlen(doc);
	j = malloc(n + strlen(hdr) + 8);
	if (!ASSERT_TRUE(j != NULL))
		return;
	memcpy(j, doc, n);
	while (n && j[n - 1] != '}')
		n--;
	n--;		/* drop the closing brace of the document */
	j[n++] = ',';
	memcpy(j + n, hdr + 1, strlen(hdr) - 1);	/* without its '{' */
	n += strlen(hdr) - 1;
	while (j[n - 1] == '\n' || j[n - 1] == ',')
		n--;
	memcpy(j + n, "}", 2);
	if (ASSERT_OK(enc(j, NULL, &buf, &size, &addr))) {
		ASSERT_EQ(addr, 4096);
		ASSERT_TRUE(size == sizeof(example_v2) &&
			    !memcmp(buf, example_v2, size));
	}
	free(buf);
	free(j);
}

/* Absolute addresses in the JSON include the bias; the section does not. */
TEST(json_encode_bias)
{
	void *buf = NULL;
	size_t size = 0;
	uint64_t addr = 0;

	/* "1" prefixes the starts: 14352 = 4352 + 10000 */
	if (ASSERT_OK(enc(HDR(", \"bias\": 10000") EXAMPLE_FUNCS(1), NULL,
			  &buf, &size, &addr)))
		ASSERT_TRUE(size == sizeof(example_v2) &&
			    !memcmp(buf, example_v2, size));
	free(buf);
}

TEST(json_encode_options)
{
	struct sfp_sframe_json_opts o = { .version = 3, .name = "t.json" };
	void *buf = NULL;
	size_t size = 0;
	uint64_t addr = 0;

	/* --version 3 and --section-addr override the JSON. */
	o.set_section_addr = true;
	o.section_addr = 0x1100;
	if (ASSERT_OK(enc(HDR("") EXAMPLE_FUNCS(), &o, &buf, &size, &addr))) {
		int64_t rel;

		ASSERT_EQ(((uint8_t *)buf)[2], 3);
		ASSERT_EQ(addr, 0x1100);
		memcpy(&rel, (uint8_t *)buf + 28, 8);
		ASSERT_EQ(rel, -28);	/* function at the section's address */
	}
	free(buf);

	/* A JSON of version 1 is written as version 3 by default. */
	if (ASSERT_OK(enc("{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,"
			  " \"header\": {\"version\": 1, \"abi\": \"amd64\"}}",
			  NULL, &buf, &size, &addr))) {
		ASSERT_EQ(((uint8_t *)buf)[2], 3);
		ASSERT_EQ(((uint8_t *)buf)[6], 0xf8);	/* AMD64 default */
		ASSERT_EQ(size, 28);
	}
	free(buf);

	/* An explicit fixed_ra_offset of 0 means no fixed RA, even on AMD64. */
	if (ASSERT_OK(enc("{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,"
			  " \"header\": {\"abi\": \"amd64\", \"fixed_ra_offset\": 0}}",
			  NULL, &buf, &size, &addr)))
		ASSERT_EQ(((uint8_t *)buf)[6], 0);
	free(buf);
}

TEST(json_encode_merge_rows)
{
	struct sfp_sframe_json_opts o = { .merge_rows = true };
	const char *json = HDR("")
		" \"functions\": [{\"start\": 4352, \"size\": 16, \"rows\": [\n"
		"  {\"start\": 4352, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 8},\n"
		"   \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true}},\n"
		"  {\"start\": 4353, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 8},\n"
		"   \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true}}]}]}";
	void *buf = NULL;
	size_t size = 0;
	uint64_t addr = 0;

	if (ASSERT_OK(enc(json, NULL, &buf, &size, &addr)))
		ASSERT_EQ(((uint8_t *)buf)[12], 2);
	free(buf);
	if (ASSERT_OK(enc(json, &o, &buf, &size, &addr)))
		ASSERT_EQ(((uint8_t *)buf)[12], 1);
	free(buf);
}

/* Each bad document: its error and (part of) the message it must log. */
static const struct {
	const char *json;
	int err;
	const char *msg;
} bad_docs[] = {
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 1, ",
	  -EBADMSG, "t.json" },
	{ "[1, 2]", -EBADMSG, "(top level): expected an object" },
	{ "{\"format\": \"other\"}", -EBADMSG, "format: expected \"sfprof-sframe-json\"" },
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 2}",
	  -EBADMSG, "format_version: 2 is outside [1, 1]" },
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 1}",
	  -EBADMSG, "header: missing" },
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,"
	  " \"header\": {\"abi\": \"riscv\"}}",
	  -EBADMSG, "header.abi: unknown value \"riscv\"" },
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,"
	  " \"header\": {\"abi\": \"amd64\", \"fixed_fp_offset\": 200}}",
	  -EBADMSG, "header.fixed_fp_offset: 200 is outside [-128, 127]" },
	{ "{\"format\": \"sfprof-sframe-json\", \"format_version\": 1,"
	  " \"header\": {\"abi\": \"amd64\", \"section_addr\": -1}}",
	  -EBADMSG, "header.section_addr: expected an unsigned 64-bit integer" },
	{ HDR("") " \"functions\": {}}", -EBADMSG, "functions: expected an array" },
	{ HDR("") " \"functions\": [{\"size\": 1}]}", -EBADMSG,
	  "functions[0].start: missing" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1.5}]}", -EBADMSG,
	  "functions[0].size: expected an integer" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"pc_type\": \"x\"}]}",
	  -EBADMSG, "functions[0].pc_type: unknown value \"x\"" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"signal\": 1}]}",
	  -EBADMSG, "functions[0].signal: expected true or false" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": [3]}]}",
	  -EBADMSG, "functions[0].rows[0]: expected an object" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"flags\": [\"weird\"]}]}]}",
	  -EBADMSG, "functions[0].rows[0].flags[0]: unknown row flag \"weird\"" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"cfa\": {\"kind\": \"reg\", \"offset\": 8}}]}]}",
	  -EBADMSG, "functions[0].rows[0].cfa.reg: missing" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 2147483648}}]}]}",
	  -EBADMSG, "functions[0].rows[0].cfa.offset: 2147483648 is outside" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"cfa\": {\"kind\": \"reg\", \"reg\": 65536, \"offset\": 8}}]}]}",
	  -EBADMSG, "functions[0].rows[0].cfa.reg: 65536 is outside [0, 65535]" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"ra\": {\"kind\": 5}}]}]}",
	  -EBADMSG, "functions[0].rows[0].ra.kind: expected a string" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"fp\": []}]}]}",
	  -EBADMSG, "functions[0].rows[0].fp: expected an object" },
	/* Valid JSON, but rows the encoder refuses: */
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 1, \"rows\": ["
	  "{\"start\": 1, \"cfa\": {\"kind\": \"cfa\", \"offset\": 8}}]}]}",
	  -EINVAL, "CFA rule kind 2 is not register-based" },
	{ HDR("") " \"functions\": [{\"start\": 1, \"size\": 8, \"fde_type\": \"flex\", \"rows\": ["
	  "{\"start\": 1, \"cfa\": {\"kind\": \"reg\", \"reg\": 7, \"offset\": 8},"
	  " \"ra\": {\"kind\": \"cfa_deref\", \"offset\": -8, \"fixed\": true}}]}]}",
	  -EOPNOTSUPP, "flexible FDEs need version 3" },
};

TEST(json_encode_errors)
{
	for (size_t i = 0; i < sizeof(bad_docs) / sizeof(bad_docs[0]); i++) {
		void *buf = NULL;
		size_t size = 0;
		uint64_t addr = 0;
		int err = enc(bad_docs[i].json, NULL, &buf, &size, &addr);

		if (!ASSERT_ERR(err, bad_docs[i].err) ||
		    !ASSERT_TRUE(strstr(last_log, bad_docs[i].msg)) ||
		    !ASSERT_TRUE(buf == NULL))
			printf("  document %zu; logged: %s\n", i, last_log);
		free(buf);
	}
}

TEST(json_encode_bad_args)
{
	struct sfp_sframe_json_opts o = { 0 };
	void *buf;
	size_t size;
	uint64_t addr;

	ASSERT_ERR(sfp_sframe_json__encode(NULL, 0, &o, &buf, &size, &addr),
		   -EINVAL);
	ASSERT_ERR(sfp_sframe_json__encode("{}", 2, NULL, &buf, &size, &addr),
		   -EINVAL);
	ASSERT_ERR(sfp_sframe_json__encode("{}", 2, &o, NULL, &size, &addr),
		   -EINVAL);
}
