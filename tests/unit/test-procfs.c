// SPDX-License-Identifier: MIT
/*
 * Mapped files as their process sees them (src/elf/buildid.c) and the
 * build-id cache writer (src/perf/buildid-cache.c), on this very process
 * and its own executable.  Namespaces and replaced binaries are covered
 * end to end by tests/cli/run-containers.sh.
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "elf/buildid.h"
#include "perf/buildid-cache.h"
#include "test.h"

/* Our executable's path and the range of its first mapping. */
static bool own_mapping(char *path, size_t size, unsigned long long *a,
			unsigned long long *b)
{
	char line[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	bool found = false;
	FILE *f;

	if (n <= 0)
		return false;
	path[n] = 0;
	f = fopen("/proc/self/maps", "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (name && !strncmp(name, path, (size_t)n) && name[n] == '\n' &&
		    sscanf(line, "%llx-%llx", a, b) == 2)
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

TEST(procfs_mapped_file_checks_build_id)
{
	char exe[PATH_MAX], out[PATH_MAX + 64], want[96];
	unsigned long long a, b;
	uint8_t id[SFP_PROC_BUILD_ID_MAX], bad[SFP_PROC_BUILD_ID_MAX];
	size_t len;

	if (!ASSERT_TRUE(own_mapping(exe, sizeof(exe), &a, &b)))
		return;
	if (sfp_file_build_id(exe, id, sizeof(id), &len))
		return;	/* linked without a build-id: nothing to check */
	/* The exact mapping: its map_files entry (root), else the root. */
	ASSERT_OK(sfp_proc_mapped_file(getpid(), exe, a, b, id, len, out,
				       sizeof(out)));
	snprintf(want, sizeof(want), "/proc/%d/map_files/%llx-%llx",
		 (int)getpid(), a, b);
	if (geteuid() == 0)
		ASSERT_STREQ(out, want);
	/* No range: found through /proc/PID/root. */
	ASSERT_OK(sfp_proc_mapped_file(getpid(), exe, 0, 0, id, len, out,
				       sizeof(out)));
	/* Another build-id: every candidate is the wrong file. */
	memcpy(bad, id, len);
	bad[0] ^= 0xff;
	ASSERT_ERR(sfp_proc_mapped_file(getpid(), exe, a, b, bad, len, out,
					sizeof(out)), -ESTALE);
	ASSERT_ERR(sfp_proc_mapped_file(0, "/nonexistent/file", 0, 0, NULL, 0,
					out, sizeof(out)), -ENOENT);
	ASSERT_ERR(sfp_proc_mapped_file(getpid(), "relative", 0, 0, NULL, 0,
					out, sizeof(out)), -ENOENT);
	/* not in a pid namespace of our own: the same pid */
	ASSERT_EQ(sfp_proc_ns_pid(getpid()), getpid());
}

TEST(buildid_cache_layout)
{
	char exe[PATH_MAX], dir[] = "/tmp/sfp-test-bidc.XXXXXX";
	char link[PATH_MAX], target[PATH_MAX], want[PATH_MAX + 64], hex[41];
	char cmd[PATH_MAX + 32];
	unsigned long long a, b;
	uint8_t id[SFP_PROC_BUILD_ID_MAX];
	uint64_t added = 0;
	size_t len, i;
	ssize_t n;
	struct stat st1, st2;

	if (!ASSERT_TRUE(own_mapping(exe, sizeof(exe), &a, &b)) ||
	    sfp_file_build_id(exe, id, sizeof(id), &len) || len > 20 ||
	    !ASSERT_TRUE(mkdtemp(dir) != NULL))
		return;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	ASSERT_OK(sfp_buildid_cache_add(dir, exe, id, len, exe, NULL, &added));
	ASSERT_TRUE(stat(exe, &st1) == 0 && added == (uint64_t)st1.st_size);
	/* perf's link: relative, to the entry's directory */
	ASSERT_OK(sfp_buildid_cache_path(dir, id, len, NULL, link, sizeof(link)));
	n = readlink(link, target, sizeof(target) - 1);
	if (ASSERT_TRUE(n > 0)) {
		target[n] = 0;
		snprintf(want, sizeof(want), "../..%s/%s", exe, hex);
		ASSERT_STREQ(target, want);
	}
	ASSERT_OK(sfp_buildid_cache_path(dir, id, len, "elf", link,
					 sizeof(link)));
	ASSERT_TRUE(stat(link, &st2) == 0 && st2.st_size == st1.st_size);
	/* a second time: nothing to do */
	ASSERT_ERR(sfp_buildid_cache_add(dir, exe, id, len, exe, NULL, &added),
		   -EEXIST);
	/* names from a recording may not climb out of the cache */
	ASSERT_ERR(sfp_buildid_cache_add(dir, "/a/../../etc/x", id, len, exe,
					 NULL, &added), -EINVAL);
	ASSERT_ERR(sfp_buildid_cache_add(dir, "rel/x", id, len, exe, NULL,
					 &added), -EINVAL);
	ASSERT_ERR(sfp_buildid_cache_add(dir, exe, id, 1, exe, NULL, &added),
		   -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}
