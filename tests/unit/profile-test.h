/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the profile tests: make real recordings with perf and
 * sfprof, run `sfprof script` / `perf script` on them, and read their
 * output back as blocks of frame lines to compare the profile against.
 */
#ifndef SFP_PROFILE_TEST_H
#define SFP_PROFILE_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/profile.h>

#include "test.h"

static inline const char *pt_sfprof(void)
{
	const char *s = getenv("SFPROF");

	return s && *s ? s : "build/sfprof";
}

static inline const char *pt_progs(void)
{
	static char dir[512];
	const char *b = getenv("SFP_BUILD");

	snprintf(dir, sizeof(dir), "%s/tests/progs", b && *b ? b : "build");
	return dir;
}

/* Run a shell command; true when it exited 0. */
__attribute__((format(printf, 1, 2)))
static inline bool pt_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/* A formatted command line (one at a time: a static buffer). */
__attribute__((format(printf, 1, 2)))
static inline const char *pt_fmt(const char *fmt, ...)
{
	static char buf[4800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

/* Path of a scratch file of this test binary. */
static inline const char *pt_tmp(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/profile-%s", test_tmp_dir(), name);

	if (n < 0 || (size_t)n >= len)
		buf[0] = 0;
	return buf;
}

/* An empty 0700 scratch directory "<prefix>-<tag>-cache" (a cache's). */
static inline char *pt_cache_dir(const char *prefix, const char *tag,
				 char *buf, size_t n)
{
	char name[64];

	snprintf(name, sizeof(name), "%s-%s-cache", prefix, tag);
	pt_tmp(buf, n, name);
	pt_sh("rm -rf '%s' && mkdir -m 700 '%s'", buf, buf);
	return buf;
}

/*
 * Make a recording; the command gets the output path as %1$s.  perf
 * record on this shared machine now and then ends early: a command that
 * starts with "perf " gets up to three tries, and false after that means
 * perf cannot record here (a reason to skip).  Any other command (sfprof
 * record, convert) runs once: its failure is the test's, reported here
 * as a failed assertion with the command, its status and its output,
 * never retried or skipped (an intermittent sfprof crash must show).
 */
static inline bool pt_record(const char *out, const char *cmd_fmt)
{
	char cmd[4096], log[600], line[256];
	bool is_perf = !strncmp(cmd_fmt, "perf ", 5);
	int t, st = -1;
	FILE *f;

	snprintf(log, sizeof(log), "%s.log", out);
	for (t = 0; t < (is_perf ? 3 : 1); t++) {
		unlink(out);
		snprintf(cmd, sizeof(cmd), cmd_fmt, out);
		st = system(pt_fmt("%s >'%s' 2>&1", cmd, log));
		if (st == 0 && !access(out, R_OK))
			return true;
	}
	if (is_perf)
		return false;
	sfp_test_fail_at(__FILE__, __LINE__, "%s: wait status 0x%x%s", cmd,
			 st, st == 0 ? " but no output file" : "");
	f = fopen(log, "r");
	for (t = 0; f && t < 8 && fgets(line, sizeof(line), f); t++)
		printf("    %s", line);
	if (f)
		fclose(f);
	return false;
}

/* An sfprof recording a test needs failed (pt_record() said why the
 * first time): the test fails, never skips. */
#define PT_SFPROF_FAILED(...) sfp_test_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* One sample of a perf-script-style output: its frame lines. */
struct pt_block {
	char *header;
	char **frames;
	size_t nr;
};

struct pt_script {
	struct pt_block *b;
	size_t nr;
};

static inline void pt_script_free(struct pt_script *s)
{
	size_t i, j;

	for (i = 0; i < s->nr; i++) {
		for (j = 0; j < s->b[i].nr; j++)
			free(s->b[i].frames[j]);
		free(s->b[i].frames);
		free(s->b[i].header);
	}
	free(s->b);
	s->b = NULL;
	s->nr = 0;
}

/*
 * Read a script output: blocks separated by blank lines; the deferred
 * records `--no-merge-callchains` prints and "(cookie)" frames are left
 * out (the profile has neither as frames).
 */
static inline bool pt_script_read(const char *path, struct pt_script *s)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct pt_block *cur = NULL;
	bool skip = false;

	memset(s, 0, sizeof(*s));
	if (!f)
		return false;
	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		if (!n) {
			cur = NULL;
			skip = false;
			continue;
		}
		if (line[0] != '\t') {
			if (strstr(line, "DEFERRED CALLCHAIN [cookie:")) {
				skip = true;
				continue;
			}
			s->b = realloc(s->b, (s->nr + 1) * sizeof(*s->b));
			cur = &s->b[s->nr++];
			memset(cur, 0, sizeof(*cur));
			cur->header = strdup(line);
			continue;
		}
		if (skip || !cur || strstr(line, " (cookie) "))
			continue;
		cur->frames = realloc(cur->frames,
				      (cur->nr + 1) * sizeof(*cur->frames));
		cur->frames[cur->nr++] = strdup(line);
	}
	free(line);
	fclose(f);
	return true;
}

/* A loc as perf script prints it: "\t%16lx name+0xoff (dso)". */
static inline void pt_frame_line(const struct sfp_profile *p, uint32_t li,
				 char *buf, size_t len)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, li);
	const struct sfp_profile_func *f =
		sfp_profile__func(p, l->lines[l->nr_lines - 1].func);

	if (!strcmp(f->name, "[unknown]"))
		snprintf(buf, len, "\t%16llx %s (%s)", (unsigned long long)l->addr,
			 f->name, f->dso);
	else
		snprintf(buf, len, "\t%16llx %s+0x%llx (%s)",
			 (unsigned long long)l->addr, f->name,
			 (unsigned long long)l->sym_off, f->dso);
}

#endif /* SFP_PROFILE_TEST_H */
