// SPDX-License-Identifier: MIT
/*
 * common/outfile.c: the temporary beside the target, rename on commit,
 * only the temporary removed on abort, PATH.old, symlinks replaced and
 * not followed, devices and FIFOs in place; and the perf writer built on
 * it (provisional header, publish, a freed writer's file).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "common/outfile.h"
#include "test.h"

static char *tpath(const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/outfile-%s", test_tmp_dir(), name) < 0)
		abort();
	unlink(p);
	return p;
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* Temporaries of NAME left in the scratch directory. */
static int nr_tmp(const char *name)
{
	DIR *d = opendir(test_tmp_dir());
	struct dirent *e;
	char pre[128];
	int n = 0;

	snprintf(pre, sizeof(pre), "outfile-%s.tmp-", name);
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, pre, strlen(pre));
	if (d)
		closedir(d);
	return n;
}

TEST(outfile_commit_replaces_only_at_the_end)
{
	char *p = tpath("a");
	struct sfp_outfile o;
	FILE *f;

	spit(p, "old");
	if (!ASSERT_EQ(sfp_outfile_open(&o, p, 0, 0644), 0))
		goto out;
	f = sfp_outfile_stdio(&o);
	fputs("new", f);
	fflush(f);
	ASSERT_TRUE(!strcmp(slurp(p), "old"));	/* not yet */
	ASSERT_EQ(nr_tmp("a"), 1);
	ASSERT_EQ(sfp_outfile_commit(&o), 0);
	ASSERT_TRUE(!strcmp(slurp(p), "new"));
	ASSERT_EQ(nr_tmp("a"), 0);
out:
	free(p);
}

TEST(outfile_abort_removes_only_the_temporary)
{
	char *p = tpath("b");
	struct sfp_outfile o;

	spit(p, "keep");
	if (!ASSERT_EQ(sfp_outfile_open(&o, p, SFP_OUTFILE_KEEP_OLD, 0644), 0))
		goto out;
	fputs("junk", sfp_outfile_stdio(&o));
	sfp_outfile_abort(&o);
	ASSERT_TRUE(!strcmp(slurp(p), "keep"));
	ASSERT_EQ(nr_tmp("b"), 0);
out:
	free(p);
}

TEST(outfile_keep_old_and_symlink_not_followed)
{
	char *p = tpath("c"), *victim = tpath("victim"), *old;
	struct sfp_outfile o;
	struct stat st;

	if (asprintf(&old, "%s.old", p) < 0)
		abort();
	unlink(old);
	spit(victim, "victim");
	ASSERT_EQ(symlink(victim, p), 0);
	if (!ASSERT_EQ(sfp_outfile_open(&o, p, SFP_OUTFILE_KEEP_OLD, 0600), 0))
		goto out;
	fputs("new", sfp_outfile_stdio(&o));
	ASSERT_EQ(sfp_outfile_commit(&o), 0);
	ASSERT_TRUE(!strcmp(slurp(victim), "victim"));
	ASSERT_TRUE(!lstat(p, &st) && S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_TRUE(!lstat(old, &st) && S_ISLNK(st.st_mode));
out:
	free(p);
	free(victim);
	free(old);
}

TEST(outfile_write_error_kept_with_its_errno_device_survives)
{
	char *p = tpath("full");
	struct sfp_outfile o;
	struct stat st;
	char big[8192];

	if (mknod(p, S_IFCHR | 0600, makedev(1, 7))) {
		test_skip("mknod: %s", strerror(errno));
		goto out;
	}
	if (!ASSERT_EQ(sfp_outfile_open(&o, p, 0, 0644), 0))
		goto out;
	ASSERT_TRUE(o.in_place);
	memset(big, 'x', sizeof(big));
	fwrite(big, 1, sizeof(big), sfp_outfile_stdio(&o));
	ASSERT_EQ(sfp_outfile_commit(&o), -ENOSPC);
	ASSERT_TRUE(!stat(p, &st) && S_ISCHR(st.st_mode));
	unlink(p);
out:
	free(p);
}

TEST(outfile_seekable_refuses_a_fifo)
{
	char *p = tpath("fifo");
	struct sfp_outfile o;
	int rfd;

	if (!ASSERT_EQ(mkfifo(p, 0600), 0))
		goto out;
	/* a reader, so that opening for writing does not block */
	rfd = open(p, O_RDONLY | O_NONBLOCK);
	ASSERT_EQ(sfp_outfile_open(&o, p, SFP_OUTFILE_SEEKABLE, 0600), -ESPIPE);
	ASSERT_EQ(sfp_outfile_open(&o, p, 0, 0600), 0);
	sfp_outfile_abort(&o);
	close(rfd);
	ASSERT_EQ(access(p, F_OK), 0);
	unlink(p);
out:
	free(p);
}

TEST(outfile_directory_refused)
{
	struct sfp_outfile o;

	ASSERT_EQ(sfp_outfile_open(&o, test_tmp_dir(), 0, 0644), -EISDIR);
	ASSERT_EQ(sfp_outfile_open(&o, "/nonexistent/x", 0, 0644), -ENOENT);
}

/* A writer freed after publish leaves a file that reads back as
 * unfinished with its flushed records; before publish, nothing. */
TEST(perf_writer_publish_then_killed_reads_back)
{
	char *p = tpath("w"), *q = tpath("w2");
	struct sfp_perf_attr a = { .type = 1, .sample_type =
		SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_TID |
		SFP_PERF_SAMPLE_TIME, .sample_period = 1 };
	struct sfp_perf_writer *w = NULL;
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint64_t rec[4] = { 0 }, id = 1;
	int i, n = 0;

	rec[0] = SFP_PERF_RECORD_SAMPLE | (32ull << 48);
	spit(q, "keep");
	if (!ASSERT_EQ(sfp_perf_writer__open(q, NULL, &w), 0))
		goto out;
	sfp_perf_writer__add_evsel(w, &a, &id, 1, "cpu-clock");
	sfp_perf_writer__write(w, rec, sizeof(rec));
	sfp_perf_writer__free(&w);	/* not published: q untouched */
	ASSERT_TRUE(!strcmp(slurp(q), "keep"));
	ASSERT_EQ(nr_tmp("w2"), 0);

	if (!ASSERT_EQ(sfp_perf_writer__open(p, NULL, &w), 0))
		goto out;
	sfp_perf_writer__add_evsel(w, &a, &id, 1, "cpu-clock");
	ASSERT_EQ(sfp_perf_writer__publish(w), 0);
	for (i = 0; i < 10; i++) {
		rec[3] = (uint64_t)i;	/* time */
		sfp_perf_writer__write(w, rec, sizeof(rec));
	}
	ASSERT_EQ(sfp_perf_writer__flush(w), 0);
	sfp_perf_writer__write(w, rec, sizeof(rec));	/* buffered only */
	sfp_perf_writer__free(&w);	/* as if killed */
	if (!ASSERT_EQ(sfp_perf_reader__open(p, NULL, &r), 0))
		goto out;
	ASSERT_TRUE(sfp_perf_reader__header(r)->unfinished);
	while (sfp_perf_reader__next(r, &ev) > 0)
		n++;
	ASSERT_EQ(n, 10);
out:
	sfp_perf_reader__free(&r);
	free(p);
	free(q);
}
