/* SPDX-License-Identifier: MIT */
/*
 * The files sink: each window becomes DIR/profile-<UTC start>-<seq>-
 * <service>.pb.gz (gzip pprof, as `go tool pprof` reads it), written
 * through outfile.h (never half-written); an off-CPU window (name
 * "off_cpu") DIR/off_cpu-<UTC start>-<seq>-<service>.pb.gz.  Past the
 * prefix the names sort by time, so rotation keeps the newest files
 * within max_disk by removing the oldest first.  Only files with those
 * patterns are ever removed.
 *
 * What the directory holds is kept in memory (names by time, sizes) and
 * read again from the directory at most once a minute: rotating by a
 * scan after every file stat'ed every file kept twice per window and
 * service (100 MB of windows are thousands of files).  Files are not
 * fsync'ed: a window lost in a crash of the machine costs less than a
 * disk flush per file every window.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/gzip.h"
#include "agent/sink-int.h"
#include "common/outfile.h"

#define DEFAULT_MAX_DISK (100ull << 20)
#define PREFIX "profile-"
#define PREFIX_OFF "off_cpu-"
#define SUFFIX ".pb.gz"
/* The directory is read again after this long (files removed or added
 * by others); between, the list in memory is trusted. */
#define RESCAN_NS (60ull * 1000000000ull)

struct kept_file {
	char *name;
	uint64_t size;
};

struct files_sink {
	char *dir;
	uint64_t max_disk;
	struct kept_file *files;	/* by cmp_names order: oldest first */
	size_t nr, cap;
	uint64_t total;
	uint64_t scanned_ns;		/* 0: never */
};

static int files_init(struct agent_sink *s, const struct agent_sink_opts *o,
		      void **priv)
{
	struct files_sink *f = calloc(1, sizeof(*f));
	struct stat st;

	if (!f)
		return -ENOMEM;
	if (mkdir(o->target, 0755) && errno != EEXIST) {
		int err = -errno;
		pr_warn("sink files: cannot create directory '%s': %s",
			o->target, strerror(errno));
		free(f);
		return err;
	}
	if (stat(o->target, &st) || !S_ISDIR(st.st_mode)) {
		pr_warn("sink files: '%s' is not a directory", o->target);
		free(f);
		return -ENOTDIR;
	}
	f->dir = strdup(o->target);
	f->max_disk = o->max_disk ? o->max_disk : DEFAULT_MAX_DISK;
	if (!f->dir) {
		free(f);
		return -ENOMEM;
	}
	*priv = f;
	return 0;
}

static bool ours(const char *name)
{
	size_t n = strlen(name), p = strlen(PREFIX), x = strlen(SUFFIX);
	size_t po = strlen(PREFIX_OFF);

	return ((n > p + x && !strncmp(name, PREFIX, p)) ||
		(n > po + x && !strncmp(name, PREFIX_OFF, po))) &&
	       !strcmp(name + n - x, SUFFIX);
}

/* By time (the text past the prefix), then by name. */
static int cmp_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int c = strcmp(strchr(x, '-') + 1, strchr(y, '-') + 1);

	return c ? c : strcmp(x, y);
}

static void forget_files(struct files_sink *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->files[i].name);
	f->nr = 0;
	f->total = 0;
}

/* One more file in the list, in its place by time (mostly the end). */
static int keep_file(struct files_sink *f, const char *name, uint64_t size)
{
	size_t i;
	char *n;

	if (f->nr == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 64;
		struct kept_file *nf = realloc(f->files, nc * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		f->files = nf;
		f->cap = nc;
	}
	if (!(n = strdup(name)))
		return -ENOMEM;
	i = f->nr;
	while (i > 0 && cmp_names(&f->files[i - 1].name, &n) > 0)
		i--;
	memmove(&f->files[i + 1], &f->files[i],
		(f->nr - i) * sizeof(*f->files));
	f->files[i] = (struct kept_file){ n, size };
	f->nr++;
	f->total += size;
	return 0;
}

static int cmp_kept(const void *a, const void *b)
{
	return cmp_names(&((const struct kept_file *)a)->name,
			 &((const struct kept_file *)b)->name);
}

/* The list from the directory itself. */
static void scan(struct files_sink *f, int dfd)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(dfd);

	forget_files(f);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!ours(de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (f->nr == f->cap) {
			size_t nc = f->cap ? f->cap * 2 : 64;
			struct kept_file *nf =
				realloc(f->files, nc * sizeof(*nf));

			if (!nf)
				break;
			f->files = nf;
			f->cap = nc;
		}
		if (!(f->files[f->nr].name = strdup(de->d_name)))
			break;
		f->files[f->nr++].size = (uint64_t)st.st_size;
		f->total += (uint64_t)st.st_size;
	}
	closedir(d);
	qsort(f->files, f->nr, sizeof(*f->files), cmp_kept);
}

/* Remove the oldest of our files until the rest fit in max_disk. */
static void rotate(struct files_sink *f)
{
	struct timespec ts;
	uint64_t now;
	size_t i = 0;
	int dfd;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (f->scanned_ns && now - f->scanned_ns < RESCAN_NS &&
	    f->total <= f->max_disk)
		return;
	dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (!f->scanned_ns || now - f->scanned_ns >= RESCAN_NS) {
		scan(f, dfd);
		f->scanned_ns = now;
	}
	/* The newest file stays even if it alone is over the limit. */
	for (; i + 1 < f->nr && f->total > f->max_disk; i++) {
		/* gone already (removed by someone else): just forgotten */
		unlinkat(dfd, f->files[i].name, 0);
		f->total -= f->files[i].size <= f->total ? f->files[i].size
							 : f->total;
		free(f->files[i].name);
	}
	memmove(f->files, f->files + i, (f->nr - i) * sizeof(*f->files));
	f->nr -= i;
	close(dfd);
}

static void sanitize(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; src && *src && i + 1 < cap; src++)
		dst[i++] = (isalnum((unsigned char)*src) || *src == '-' ||
			    *src == '_' || *src == '.') ? *src : '_';
	dst[i] = 0;
	if (!i)
		snprintf(dst, cap, "unknown");
}

static enum sink_result files_deliver(struct agent_sink *s, void *priv,
				      const struct sink_item *it)
{
	struct files_sink *f = priv;
	char svc[64], stamp[32], *path = NULL;
	struct sfp_outfile of;
	void *gz = NULL;
	size_t gz_len;
	struct tm tm;
	time_t sec = (time_t)(it->start_ns / 1000000000ull);
	int err;

	sanitize(svc, sizeof(svc), sink_item_label(it, "service_name"));
	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	err = sfp_gzip(it->pprof, it->pprof_len, &gz, &gz_len);
	if (!err && asprintf(&path, "%s/%s%s.%09llu-%06llu-%s" SUFFIX,
			     f->dir, it->name && !strcmp(it->name, "off_cpu") ?
			     PREFIX_OFF : PREFIX, stamp,
			     (unsigned long long)(it->start_ns % 1000000000ull),
			     (unsigned long long)(it->seq % 1000000), svc) < 0) {
		path = NULL;
		err = -ENOMEM;
	}
	if (!err)
		err = sfp_outfile_open(&of, path, SFP_OUTFILE_NO_SYNC, 0644);
	if (!err) {
		FILE *fp = sfp_outfile_stdio(&of);
		if (!fp) {
			sfp_outfile_abort(&of);
			err = -ENOMEM;
		} else {
			fwrite(gz, 1, gz_len, fp);
			err = sfp_outfile_commit(&of);
		}
	}
	if (err) {
		pr_warn("sink files: cannot write '%s': %s",
			path ? path : f->dir, strerror(-err));
	}
	free(gz);
	if (err)
		free(path);
	/* Disk full or the like may pass: try again later. */
	if (err == -ENOSPC || err == -EDQUOT || err == -ENOMEM || err == -EIO)
		return SINK_RETRY;
	if (err)
		return SINK_GIVE_UP;
	if (f->scanned_ns)	/* else the first scan finds it */
		keep_file(f, strrchr(path, '/') + 1, gz_len);
	rotate(f);
	free(path);
	return SINK_DELIVERED;
}

static void files_fini(void *priv)
{
	struct files_sink *f = priv;

	if (f) {
		forget_files(f);
		free(f->files);
		free(f->dir);
	}
	free(f);
}

const struct sink_backend sink_files_backend = {
	.name = "files",
	.init = files_init,
	.deliver = files_deliver,
	.fini = files_fini,
};
