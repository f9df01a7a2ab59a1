// SPDX-License-Identifier: MIT
/*
 * CFI → SFrame conversion speed.
 *
 *  1. libc.so.6 through sfp_sframe__build_from_elf() (open, parse
 *     .eh_frame, interpret, convert, encode): best of 20 runs; target
 *     <= 10 ms.  Peer in the same run: `readelf --debug-dump=frames-interp`
 *     on the same file (binutils' CFI interpreter printing every row to
 *     /dev/null), best of 5, as a reference point only -- it does less
 *     (no encoding) and more (text output) than we do.
 *  2. Every ELF file under /usr/lib/x86_64-linux-gnu (recursively, symlinks
 *     not followed): total wall time; target <= 10 s.
 *
 * The machine is shared: figures are indicative.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/cfi.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double build_once(const char *path, struct sfp_build_stats *st,
			 int *err)
{
	void *sec = NULL;
	size_t size;
	uint64_t addr;
	double t0 = now();

	st->sz = sizeof(*st);
	*err = sfp_sframe__build_from_elf(path, NULL, &sec, &size, &addr, st);
	t0 = now() - t0;
	free(sec);
	return t0;
}

static double run_readelf(const char *path)
{
	double t0 = now();
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execlp("readelf", "readelf", "--debug-dump=frames-interp", path,
		       (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	/* binutils 2.40's readelf exits 1 on libc after printing it all. */
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return -1;
	return now() - t0;
}

struct totals {
	unsigned long files, built, failed, rel;
	unsigned long long fdes, emitted, text, covered;
};

static bool is_elf(const char *path)
{
	char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, m, 4) == 4 && !memcmp(m, "\177ELF", 4);
	close(fd);
	return ok;
}

static void walk(const char *dir, struct totals *t, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d || depth > 8) {
		if (d)
			closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char p[4096];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(p))
			continue;
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(p, t, depth + 1);
		} else if (S_ISREG(st.st_mode) && is_elf(p)) {
			struct sfp_build_stats bs;
			int err;

			t->files++;
			build_once(p, &bs, &err);
			if (!err)
				t->built++;
			else if (err == -EOPNOTSUPP)
				t->rel++;	/* .o files (and non-x86) */
			else if (err != -ENOENT)
				t->failed++;
			t->fdes += bs.fdes;
			t->emitted += bs.emitted;
			t->text += bs.text_bytes;
			t->covered += bs.covered_bytes;
		}
	}
	closedir(d);
}

int main(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct sfp_build_stats st;
	struct totals t = { 0 };
	double best = 1e9, peer = 1e9, t0, total;
	int err, rc = 0;

	for (int i = 0; i < 20; i++) {
		double d = build_once(libc, &st, &err);

		if (err) {
			fprintf(stderr, "build %s: %d\n", libc, err);
			return 1;
		}
		if (d < best)
			best = d;
	}
	for (int i = 0; i < 5; i++) {
		double d = run_readelf(libc);

		if (d > 0 && d < peer)
			peer = d;
	}
	printf("libc.so.6: %u FDEs -> %u SFrame FDEs (+%u PLT), %u FREs\n",
	       st.fdes, st.emitted, st.plt_fdes, st.rows);
	printf("  sfprof build_from_elf            %8.2f ms  (target <= 10 ms: %s)\n",
	       best * 1e3, best <= 0.010 ? "met" : "MISSED");
	if (peer < 1e9)
		printf("  peer: readelf --debug-dump=frames-interp (reference only) %8.2f ms  ratio %.1fx\n",
		       peer * 1e3, peer / best);
	else
		printf("  peer: readelf not available\n");
	if (best > 0.010)
		rc = 1;

	t0 = now();
	walk("/usr/lib/x86_64-linux-gnu", &t, 0);
	total = now() - t0;
	printf("/usr/lib/x86_64-linux-gnu: %lu ELF files, %lu tables built, %lu unsupported (relocatable/non-x86), %lu failed, %.2f s (target <= 10 s: %s)\n",
	       t.files, t.built, t.rel, t.failed, total,
	       total <= 10.0 ? "met" : "MISSED");
	printf("  FDEs %llu, emitted %llu (%.1f%%), text covered %.1f%%\n",
	       t.fdes, t.emitted, t.fdes ? 100.0 * t.emitted / t.fdes : 0.0,
	       t.text ? 100.0 * t.covered / t.text : 0.0);
	if (total > 10.0)
		rc = 1;
	return rc;
}
