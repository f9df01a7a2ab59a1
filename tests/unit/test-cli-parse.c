// SPDX-License-Identifier: MIT
/*
 * The CLI's one rule for sizes and durations (tools/sfprof/cli-parse.c),
 * which record, agent and the -m option share: what each accepts and,
 * as important, what each refuses rather than reading it as something
 * else ("5x", "-1", "1e400", "5 m", an overflow).
 */
#include <stdlib.h>

#include "cli.h"
#include "test.h"

TEST(cli_parse_size_units)
{
	static const struct { const char *in; uint64_t v; bool unit; } ok[] = {
		{ "0", 0, false }, { "4096", 4096, false },
		{ "5k", 5120, true }, { "5K", 5120, true }, { "5KB", 5120, true },
		{ "5kib", 5120, true }, { "2M", 2ULL << 20, true },
		{ "2mib", 2ULL << 20, true }, { "3G", 3ULL << 30, true },
		{ "3GiB", 3ULL << 30, true },
		{ "18446744073709551615", UINT64_MAX, false },
		{ "17179869183G", 17179869183ULL << 30, true },
	};
	static const char *const bad[] = {
		"", "k", "-1", "+5", " 5", "5 ", "5x", "5kk", "5T", "0x10",
		"1.5M", "18446744073709551616", "17179869184G", "5 M",
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 1;
		bool unit = !ok[i].unit;

		if (!ASSERT_TRUE(cli_parse_size(ok[i].in, &v, &unit)))
			fprintf(stderr, "  refused '%s'\n", ok[i].in);
		ASSERT_EQ(v, ok[i].v);
		ASSERT_EQ(unit, ok[i].unit);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 7;

		if (!ASSERT_FALSE(cli_parse_size(bad[i], &v, NULL)))
			fprintf(stderr, "  took '%s' as %llu\n", bad[i],
				(unsigned long long)v);
		ASSERT_EQ(v, 7);
	}
}

TEST(cli_parse_duration_units)
{
	static const struct { const char *in; double v; } ok[] = {
		{ "0", 0 }, { "2.5", 2.5 }, { "10s", 10 }, { "1.5m", 90 },
		{ "2h", 7200 }, { "1d", 86400 }, { "1e9", 1e9 },
		{ ".5s", 0.5 },
	};
	static const char *const bad[] = {
		"", "s", "-1", "nan", "inf", "0x10", "5x", "5 s", " 5", "1e10",
		"5ss", "5ms",
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double v = -1;

		if (!ASSERT_TRUE(cli_parse_duration(ok[i].in, &v)))
			fprintf(stderr, "  refused '%s'\n", ok[i].in);
		ASSERT_TRUE(v == ok[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double v = -7;

		if (!ASSERT_FALSE(cli_parse_duration(bad[i], &v)))
			fprintf(stderr, "  took '%s' as %g\n", bad[i], v);
		ASSERT_TRUE(v == -7);
	}
}
