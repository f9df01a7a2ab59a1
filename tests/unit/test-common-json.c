// SPDX-License-Identifier: MIT
/* The bounded JSON parser: values, escapes, numbers, limits, errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "test.h"

static int parse(const char *s, struct sfp_json **v)
{
	return sfp_json_parse(s, strlen(s), NULL, v);
}

TEST(json_values)
{
	struct sfp_json *v = NULL;
	const char *s;
	size_t len;
	int64_t i;
	uint64_t u;
	bool b;

	if (!ASSERT_OK(parse(" {\"a\": [1, -2, 3.5, true, null], \"b\": \"x\\ny\\u00e9\\ud83d\\ude00\\u0000z\", "
			     "\"big\": 18446744073709551615, \"min\": -9223372036854775808, \"e\": 1e3} ", &v)))
		return;
	ASSERT_EQ(sfp_json_len(v), 5);
	ASSERT_EQ(sfp_json_len(sfp_json_get(v, "a")), 5);
	ASSERT_OK(sfp_json_i64(sfp_json_at(sfp_json_get(v, "a"), 1), &i));
	ASSERT_EQ(i, -2);
	ASSERT_ERR(sfp_json_u64(sfp_json_at(sfp_json_get(v, "a"), 1), &u), -EINVAL);
	ASSERT_EQ(sfp_json_at(sfp_json_get(v, "a"), 2)->type, SFP_JSON_DOUBLE);
	ASSERT_ERR(sfp_json_i64(sfp_json_at(sfp_json_get(v, "a"), 2), &i), -EINVAL);
	ASSERT_OK(sfp_json_bool(sfp_json_at(sfp_json_get(v, "a"), 3), &b));
	ASSERT_TRUE(b);
	ASSERT_EQ(sfp_json_at(sfp_json_get(v, "a"), 4)->type, SFP_JSON_NULL);
	ASSERT_OK(sfp_json_str(sfp_json_get(v, "b"), &s, &len));
	ASSERT_EQ(len, 11);
	ASSERT_TRUE(memcmp(s, "x\ny\xc3\xa9\xf0\x9f\x98\x80\0z", 11) == 0);
	ASSERT_OK(sfp_json_u64(sfp_json_get(v, "big"), &u));
	ASSERT_EQ(u, UINT64_MAX);
	ASSERT_ERR(sfp_json_i64(sfp_json_get(v, "big"), &i), -EINVAL);
	ASSERT_OK(sfp_json_i64(sfp_json_get(v, "min"), &i));
	ASSERT_EQ(i, INT64_MIN);
	ASSERT_EQ(sfp_json_get(v, "e")->type, SFP_JSON_DOUBLE);
	ASSERT_TRUE(sfp_json_get(v, "nope") == NULL);
	ASSERT_ERR(sfp_json_i64(sfp_json_get(v, "nope"), &i), -ENOENT);
	ASSERT_TRUE(sfp_json_at(v, 0) == NULL);
	sfp_json_free(&v);
	ASSERT_TRUE(v == NULL);
}

TEST(json_errors)
{
	static const char *const bad[] = {
		"", "   ", "{", "[1,", "[1 2]", "{\"a\" 1}", "{a: 1}", "\"abc",
		"\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "01",
		"-", "1.", "1e", "tru", "nul", "[1]x", "\"a\x01\"", "{\"a\":1,}",
		"[,1]", "\"\\", "1e+", "--1",
	};
	struct sfp_json *v = NULL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!ASSERT_ERR(parse(bad[i], &v), -EBADMSG))
			sfp_test_fail_at(__FILE__, __LINE__, "input '%s'", bad[i]);
		ASSERT_TRUE(v == NULL);
	}
}

TEST(json_limits)
{
	struct sfp_json_parse_opts o = { .max_depth = 8 };
	struct sfp_json *v = NULL;
	char deep[64];

	memset(deep, '[', 20);
	memset(deep + 20, ']', 20);
	deep[40] = '\0';
	ASSERT_ERR(sfp_json_parse(deep, 40, &o, &v), -EBADMSG);
	ASSERT_OK(sfp_json_parse(deep + 12, 16, &o, &v));	/* depth 8 */
	sfp_json_free(&v);
	o.max_size = 10;
	ASSERT_ERR(sfp_json_parse(deep, 40, &o, &v), -E2BIG);
	/* Default depth cap: 100000 '[' must fail cleanly, not recurse. */
	{
		size_t n = 100000;
		char *s = malloc(n);

		if (ASSERT_NOT_NULL(s)) {
			memset(s, '[', n);
			ASSERT_ERR(sfp_json_parse(s, n, NULL, &v), -EBADMSG);
			free(s);
		}
	}
	/* Not NUL-terminated input: the length rules. */
	ASSERT_OK(sfp_json_parse("123456", 3, NULL, &v));
	ASSERT_EQ(v->num.i, 123);
	sfp_json_free(&v);
}

TEST(json_writer_roundtrip)
{
	static const char raw[] = "quote\" back\\ nl\n tab\t ctl\x01 end";
	struct sfp_json *v = NULL;
	char *buf = NULL;
	size_t len = 0;
	const char *s;
	size_t slen;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_NOT_NULL(f))
		return;
	sfp_json_write_str(f, raw, sizeof(raw) - 1);
	fclose(f);
	ASSERT_STREQ(buf, "\"quote\\\" back\\\\ nl\\n tab\\t ctl\\u0001 end\"");
	if (ASSERT_OK(sfp_json_parse(buf, len, NULL, &v)) &&
	    ASSERT_OK(sfp_json_str(v, &s, &slen))) {
		ASSERT_EQ(slen, sizeof(raw) - 1);
		ASSERT_TRUE(memcmp(s, raw, slen) == 0);
	}
	sfp_json_free(&v);
	free(buf);
}
