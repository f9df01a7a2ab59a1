// SPDX-License-Identifier: MIT
/*
 * `sfprof script` keeps built frame lines by (pid, ip, map generation):
 * a mapping replaced between two samples at the same ip must show in the
 * second sample's line (its file offset and DSO), in another process the
 * same ip is its own line, and samples before any change keep theirs.
 * The file is built byte by byte (perf-build.h) and the real CLI run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-build.h"
#include "test.h"

#define SAMPLE_ID_ALL (1ull << 18)

static void user_sample(struct pb *p, uint32_t tid, uint64_t time,
			uint64_t ip)
{
	uint64_t chain[2] = { PB_CTX_USER, ip };

	pb_sample(p, tid, time, 0, ip, chain, 2);
}

TEST(script_line_cache_follows_map_changes)
{
	const char *sfprof = getenv("SFPROF");
	char path[600], cmd[1400], line[512];
	static const char *const want[] = {
		"\t            1234 [unknown] (/nonexistent/a)",
		"\t            1234 [unknown] (/nonexistent/a)",
		"\t            3234 [unknown] (/nonexistent/b)",
		"\t            5234 [unknown] (/nonexistent/c)",
		"\t            3234 [unknown] (/nonexistent/b)",
		"\t          401234 [unknown] ([unknown])",
	};
	size_t nw = 0;
	struct pb p;
	FILE *f;

	if (!sfprof) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	pb_begin(&p, false, PB_SAMPLE_TYPE, SAMPLE_ID_ALL, 136);
	pb_comm(&p, 100, 1000, "t");
	pb_mmap(&p, 100, 1100, 0x400000, 0x10000, 0, "/nonexistent/a");
	pb_mmap(&p, 200, 1150, 0x400000, 0x10000, 0x4000, "/nonexistent/c");
	user_sample(&p, 100, 2000, 0x401234);
	user_sample(&p, 100, 2100, 0x401234);
	/* the same range mapped again, from another file and offset */
	pb_mmap(&p, 100, 2200, 0x400000, 0x10000, 0x2000, "/nonexistent/b");
	user_sample(&p, 100, 3000, 0x401234);
	user_sample(&p, 200, 3100, 0x401234);
	user_sample(&p, 100, 3200, 0x401234);
	/* a process with no maps */
	user_sample(&p, 300, 3300, 0x401234);
	pb_round(&p);
	pb_end(&p);

	snprintf(path, sizeof(path), "%s/cache.data", test_tmp_dir());
	f = fopen(path, "wb");
	if (!ASSERT_NOT_NULL(f))
		return;
	ASSERT_EQ(fwrite(p.b, 1, p.len, f), p.len);
	fclose(f);
	free(p.b);

	snprintf(cmd, sizeof(cmd), "'%s' script -i '%s'", sfprof, path);
	f = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(f))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] != '\t')
			continue;
		if (nw < sizeof(want) / sizeof(want[0]))
			ASSERT_STREQ(line, want[nw]);
		nw++;
	}
	ASSERT_EQ(pclose(f), 0);
	ASSERT_EQ(nw, sizeof(want) / sizeof(want[0]));
}
