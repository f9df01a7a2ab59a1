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
#include <sys/auxv.h>
#include <unistd.h>

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

/* Frame lines of a byte-built file through the real CLI. */
static int script_lines(const struct pb *p, const char *name, char lines[][160],
			int max)
{
	const char *sfprof = getenv("SFPROF");
	char path[600], cmd[1400], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", test_tmp_dir(), name);
	f = fopen(path, "wb");
	if (!ASSERT_NOT_NULL(f))
		return -1;
	ASSERT_EQ(fwrite(p->b, 1, p->len, f), p->len);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' script -i '%s'", sfprof, path);
	f = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(f))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '\t' && n < max) {
			line[159] = 0;
			memcpy(lines[n++], line, strlen(line) + 1);
		}
	}
	ASSERT_EQ(pclose(f), 0);
	return n;
}

/*
 * perf's names (docs/perf-names.md): a kernel address in the user part
 * of a chain (what a frame-pointer walk finds in garbage) is looked up in
 * the process's maps only, "[unknown] ([unknown])"; the same address in
 * the kernel part is the kernel's; [vdso] frames are named from the vDSO
 * image (ours: the same kernel) as perf names them; executable anonymous
 * memory is perf's "/tmp/perf-PID.map", named from that JIT map.
 */
#define JIT_PID 100

TEST(script_perf_names_contexts_and_vdso)
{
	const uint8_t *vdso = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	char lines[8][160], want[160], vpath[700], cmd[900], buf[256];
	unsigned long long fn = 0;
	uint64_t kaddr = 0xffffffff81000000ull;
	struct pb p;
	FILE *f;
	int n;

	if (!getenv("SFPROF")) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	/* __vdso_clock_gettime's offset in our vDSO, by readelf */
	if (vdso) {
		uint64_t shoff, size;
		uint16_t shnum, shentsize;

		memcpy(&shoff, vdso + 0x28, 8);
		memcpy(&shentsize, vdso + 0x3a, 2);
		memcpy(&shnum, vdso + 0x3c, 2);
		size = shoff + (uint64_t)shnum * shentsize;
		snprintf(vpath, sizeof(vpath), "%s/vdso.img", test_tmp_dir());
		f = fopen(vpath, "wb");
		if (f) {
			fwrite(vdso, 1, size, f);
			fclose(f);
		}
		snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms '%s' 2>/dev/null", vpath);
		f = popen(cmd, "r");
		while (f && fgets(buf, sizeof(buf), f)) {
			char name[128];
			unsigned long long v;

			if (sscanf(buf, " %*d: %llx %*u FUNC %*s %*s %*s %127s", &v,
				   name) == 2 &&
			    !strncmp(name, "__vdso_clock_gettime", 20) &&
			    (name[20] == 0 || name[20] == '@'))
				fn = v;
		}
		if (f)
			pclose(f);
	}
	pb_begin(&p, false, PB_SAMPLE_TYPE, SAMPLE_ID_ALL, 136);
	pb_comm(&p, 100, 1000, "t");
	pb_mmap(&p, 100, 1100, 0x400000, 0x10000, 0, "/nonexistent/a");
	pb_mmap(&p, 100, 1200, 0x7000000, 0x2000, 0, "[vdso]");
	/* a JIT's code: executable anon memory, named by its perf map */
	pb_mmap(&p, 100, 1300, 0x50000000, 0x1000, 0x50000000, "//anon");
	snprintf(vpath, sizeof(vpath), "/tmp/perf-%d.map", JIT_PID);
	f = fopen(vpath, "w");
	if (!ASSERT_NOT_NULL(f))
		return;
	fputs("50000000 40 jitted_fn\n", f);
	fclose(f);
	{
		uint64_t chain[] = { PB_CTX_KERNEL, kaddr, PB_CTX_USER,
				     0x7000000 + fn + 3, kaddr, 0x401234,
				     0x50000010, 0x50000050 };

		pb_sample(&p, 100, 2000, 0, kaddr, chain, 8);
	}
	pb_round(&p);
	pb_end(&p);
	n = script_lines(&p, "names.data", lines, 8);
	free(p.b);
	unlink(vpath);
	if (!ASSERT_EQ(n, 6))
		return;
	/* the kernel part: the kernel's DSO, whatever the symbol */
	ASSERT_TRUE(strstr(lines[0], "ffffffff81000000 ") &&
		    strstr(lines[0], " ([kernel.kallsyms])"));
	if (fn) {
		snprintf(want, sizeof(want), "\t%16llx __vdso_clock_gettime+0x3 ([vdso])",
			 fn + 3);
		ASSERT_STREQ(lines[1], want);
	} else {
		test_skip("no __vdso_clock_gettime in our vDSO");
	}
	ASSERT_STREQ(lines[2], "\tffffffff81000000 [unknown] ([unknown])");
	ASSERT_STREQ(lines[3], "\t            1234 [unknown] (/nonexistent/a)");
	ASSERT_STREQ(lines[4], "\t        50000010 jitted_fn+0x10 (/tmp/perf-100.map)");
	ASSERT_STREQ(lines[5], "\t        50000050 [unknown] (/tmp/perf-100.map)");
}
