/* SPDX-License-Identifier: MIT */
/*
 * The files sink: each window becomes DIR/profile-<UTC start>-<seq>-
 * <service>.pb.gz (gzip pprof, as `go tool pprof` reads it), written
 * through outfile.h (never half-written); an off-CPU window (name
 * "off_cpu") DIR/off_cpu-<UTC start>-<seq>-<service>.pb.gz.  Past the
 * prefix the names sort by time, so rotation keeps the newest files
 * within max_disk by removing the oldest first.  Only files with those
 * patterns are ever removed.
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

#include "agent/sink-int.h"
#include "common/outfile.h"

#define DEFAULT_MAX_DISK (100ull << 20)
#define PREFIX "profile-"
#define PREFIX_OFF "off_cpu-"
#define SUFFIX ".pb.gz"

struct files_sink {
	char *dir;
	uint64_t max_disk;
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

/* Remove the oldest of our files until the rest fit in max_disk. */
static void rotate(struct files_sink *f)
{
	DIR *d = opendir(f->dir);
	char **names = NULL;
	uint64_t *sizes = NULL, total = 0;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (!ours(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
		total += (uint64_t)st.st_size;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	sizes = calloc(n ? n : 1, sizeof(*sizes));
	for (size_t i = 0; sizes && i < n; i++) {
		struct stat st;
		if (!fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW))
			sizes[i] = (uint64_t)st.st_size;
	}
	/* The newest file stays even if it alone is over the limit. */
	for (size_t i = 0; sizes && i + 1 < n && total > f->max_disk; i++) {
		if (!unlinkat(dirfd(d), names[i], 0))
			total -= sizes[i] <= total ? sizes[i] : total;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(sizes);
	closedir(d);
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
	err = sink_gzip(it->pprof, it->pprof_len, &gz, &gz_len);
	if (!err && asprintf(&path, "%s/%s%s.%09llu-%06llu-%s" SUFFIX,
			     f->dir, it->name && !strcmp(it->name, "off_cpu") ?
			     PREFIX_OFF : PREFIX, stamp,
			     (unsigned long long)(it->start_ns % 1000000000ull),
			     (unsigned long long)(it->seq % 1000000), svc) < 0) {
		path = NULL;
		err = -ENOMEM;
	}
	if (!err)
		err = sfp_outfile_open(&of, path, 0, 0644);
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
	free(path);
	/* Disk full or the like may pass: try again later. */
	if (err == -ENOSPC || err == -EDQUOT || err == -ENOMEM || err == -EIO)
		return SINK_RETRY;
	if (err)
		return SINK_GIVE_UP;
	rotate(f);
	return SINK_DELIVERED;
}

static void files_fini(void *priv)
{
	struct files_sink *f = priv;

	if (f)
		free(f->dir);
	free(f);
}

const struct sink_backend sink_files_backend = {
	.name = "files",
	.init = files_init,
	.deliver = files_deliver,
	.fini = files_fini,
};
