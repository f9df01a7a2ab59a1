// SPDX-License-Identifier: MIT
/*
 * The protobuf encoder behind the pprof export, byte for byte against the
 * encoding examples of the protobuf specification (field 1 = 150 is
 * 08 96 01; a string field is key, length, bytes; negative int64 takes ten
 * bytes) and against protoc's own decoder (--decode_raw) for nesting and
 * packed fields.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/pb.h"
#include "test.h"

static bool bytes_eq(const struct pb_buf *b, const uint8_t *want, size_t n)
{
	if (!ASSERT_EQ(b->err, 0) || !ASSERT_EQ(b->len, n))
		return false;
	return ASSERT_EQ(memcmp(b->data, want, n), 0);
}

TEST(pb_varint_spec_examples)
{
	struct pb_buf b = { 0 };
	static const uint8_t want[] = {
		0x08, 0x96, 0x01,			/* field 1 = 150 */
		0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', /* 2 = "testing" */
		0x18, 0x01,				/* 3 = 1 */
		0xac, 0x02,				/* raw varint 300 */
	};

	pb_uint(&b, 1, 150);
	pb_string_always(&b, 2, "testing");
	pb_uint(&b, 3, 1);
	pb_uint(&b, 4, 0);	/* proto3 default: not written */
	pb_bool(&b, 5, false);
	pb_varint(&b, 300);
	bytes_eq(&b, want, sizeof(want));
	pb_buf__free(&b);
}

TEST(pb_negative_and_large)
{
	struct pb_buf b = { 0 };
	static const uint8_t want[] = {
		0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		/* field 16: key needs two bytes (16 << 3 = 128) */
		0x80, 0x01, 0x7f,
	};

	pb_int(&b, 1, -1);
	pb_uint(&b, 2, UINT64_MAX);
	pb_uint(&b, 16, 127);
	bytes_eq(&b, want, sizeof(want));
	pb_buf__free(&b);
}

TEST(pb_nested_and_packed)
{
	struct pb_buf b = { 0 };
	static const uint64_t ids[] = { 3, 270, 86942 };
	static const uint8_t want[] = {
		0x12, 0x0c,			/* field 2, 12 bytes */
		  0x0a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05, /* packed */
		  0x1a, 0x02, 0x08, 0x05,	/* nested: field 3 { 1: 5 } */
		0x22, 0x00,			/* empty message, field 4 */
	};

	pb_begin(&b, 2);
	pb_packed_uint(&b, 1, ids, 3);
	pb_packed_uint(&b, 9, ids, 0);	/* nothing for none */
	pb_begin(&b, 3);
	pb_uint(&b, 1, 5);
	pb_end(&b);
	pb_end(&b);
	pb_begin(&b, 4);
	pb_end(&b);
	bytes_eq(&b, want, sizeof(want));
	ASSERT_EQ(b.depth, 0);
	pb_buf__free(&b);
}

/* A payload over 127 bytes moves up by a two-byte length. */
TEST(pb_long_nested_payload)
{
	struct pb_buf b = { 0 };
	char s[300];
	size_t i;

	memset(s, 'x', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	pb_uint(&b, 1, 1);
	pb_begin(&b, 2);
	pb_string_always(&b, 1, s);
	pb_end(&b);
	if (!ASSERT_EQ(b.err, 0))
		goto out;
	/* 08 01 | 12 <len 302 = ae 02> | 0a <299 = ab 02> x*299 */
	ASSERT_EQ(b.len, 2 + 1 + 2 + 1 + 2 + 299);
	ASSERT_EQ(b.data[2], 0x12);
	ASSERT_EQ(b.data[3], 0xae);
	ASSERT_EQ(b.data[4], 0x02);
	ASSERT_EQ(b.data[5], 0x0a);
	ASSERT_EQ(b.data[6], 0xab);
	ASSERT_EQ(b.data[7], 0x02);
	for (i = 8; i < b.len; i++)
		if (!ASSERT_EQ(b.data[i], 'x'))
			break;
out:
	pb_buf__free(&b);
}

/* protoc, an independent decoder, reads what we wrote with the schema. */
TEST(pb_protoc_decode)
{
	struct pb_buf b = { 0 };
	static const int64_t vals[] = { 1, -2, 1000000 };
	static const uint64_t ids[] = { 7, 300 };
	char path[512], proto[512], file[600], cmd[2048], out[1024] = "";
	size_t n;
	FILE *f;

	if (system("command -v protoc >/dev/null 2>&1")) {
		test_skip("protoc not installed (make deps)");
		return;
	}
	pb_begin(&b, 2);			/* Profile.sample */
	pb_packed_uint(&b, 1, ids, 2);		/* location_id */
	pb_packed_int(&b, 2, vals, 3);		/* value */
	pb_end(&b);
	pb_string_always(&b, 6, "");		/* string_table */
	pb_string_always(&b, 6, "name");
	pb_int(&b, 10, 123456789012ll);		/* duration_nanos */
	snprintf(path, sizeof(path), "%s/pb.bin", test_tmp_dir());
	f = fopen(path, "wb");
	if (!ASSERT_TRUE(f))
		goto out;
	fwrite(b.data, 1, b.len, f);
	fclose(f);
	/* upstream's schema, in the shared test data beside the tree */
	snprintf(proto, sizeof(proto),
		 "%s/../../../shared/testdata/proto/pprof", test_data_dir());
	snprintf(file, sizeof(file), "%s/profile.proto", proto);
	if (!ASSERT_OK(access(file, R_OK)))
		goto out;
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path='%s' --decode perftools.profiles.Profile "
		 "'%s/profile.proto' < '%s' 2>&1 | tr -s ' \\n' ' '",
		 proto, proto, path);
	f = popen(cmd, "r");
	if (!ASSERT_TRUE(f))
		goto out;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	if (!ASSERT_TRUE(strstr(out, "sample { location_id: 7 location_id: 300 "
				     "value: 1 value: -2 value: 1000000 } "
				     "string_table: \"\" string_table: \"name\" "
				     "duration_nanos: 123456789012") != NULL))
		fprintf(stderr, "  protoc said: %s\n", out);
out:
	pb_buf__free(&b);
}
