// SPDX-License-Identifier: MIT
/*
 * Option values and input paths, checked once for every subcommand so
 * that no option accepts "5x", "nan", an overflowed number or a silently
 * clamped one, and so that a missing input is reported with its path and
 * the system's reason rather than a library error code.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/record.h>

#include "cli.h"

bool cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	/* strtoull() would skip blanks and take "+5" and "-5" (wrapped):
	 * a number starts with a digit. */
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

bool cli_parse_double(const char *s, double min, double max, double *v)
{
	char *end;
	double d;

	/* strtod() takes "nan", "inf", hex floats and leading blanks; an
	 * option value is a plain decimal number. */
	if (!s || !((*s >= '0' && *s <= '9') || *s == '.') ||
	    s[strspn(s, "0123456789.eE+-")])
		return false;
	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || d < min || d > max)
		return false;
	*v = d;
	return true;
}

/* The units a size takes, case-insensitively: 5K, 5KB and 5KiB are all
 * 5 * 1024 (as perf's -m takes them). */
static const struct { const char *name; int shift; } size_units[] = {
	{ "k", 10 }, { "kb", 10 }, { "kib", 10 },
	{ "m", 20 }, { "mb", 20 }, { "mib", 20 },
	{ "g", 30 }, { "gb", 30 }, { "gib", 30 },
};

bool cli_parse_size(const char *s, uint64_t *out, bool *had_unit)
{
	unsigned long long v;
	const char *p = s;
	int shift = -1;
	size_t i;

	if (!s || *s < '0' || *s > '9')
		return false;
	for (v = 0; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (unsigned)(*p - '0')) / 10)
			return false;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (!*p)
		shift = 0;
	for (i = 0; shift < 0 && i < sizeof(size_units) / sizeof(size_units[0]);
	     i++)
		if (!strcasecmp(p, size_units[i].name))
			shift = size_units[i].shift;
	if (shift < 0 || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	if (had_unit)
		*had_unit = *p != 0;
	return true;
}

bool cli_parse_duration(const char *s, double *out)
{
	static const struct { char c; double mult; } unit[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	char num[64];
	size_t len = s ? strlen(s) : 0, i;
	double mult = 1, v;

	if (!len || len >= sizeof(num))
		return false;
	for (i = 0; i < sizeof(unit) / sizeof(unit[0]); i++)
		if (s[len - 1] == unit[i].c) {
			mult = unit[i].mult;
			len--;
			break;
		}
	memcpy(num, s, len);
	num[len] = 0;
	if (!cli_parse_double(num, 0, 1e9, &v))
		return false;
	*out = v * mult;
	return true;
}

bool cli_check_input(const char *cmd, const char *what, const char *path)
{
	struct stat st;
	int err = 0;

	if (!path || !strcmp(path, "-"))
		return true;	/* standard input: nothing to look at */
	if (stat(path, &st))
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (access(path, R_OK))
		err = errno;
	if (!err)
		return true;
	fprintf(stderr, "sfprof %s: cannot open %s%s'%s': %s\n", cmd,
		what ? what : "", what ? " " : "", path, strerror(err));
	return false;
}

bool cli_parse_call_graph(const char *arg, unsigned int allowed,
			  enum sfp_record_call_graph *mode, bool *is_auto)
{
	char list[128];
	size_t len = 0;
	unsigned int m;

	*is_auto = !strcmp(arg, "auto");
	if (*is_auto)
		return true;	/* decided once the target is known */
	for (m = 0; m < 32 && allowed >> m; m++)
		if ((allowed >> m & 1) &&
		    !strcmp(arg, sfp_record__call_graph_name(m))) {
			*mode = (enum sfp_record_call_graph)m;
			return true;
		}
	list[0] = 0;
	for (m = 0; m < 32 && allowed >> m; m++)
		if (allowed >> m & 1 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s, ",
						sfp_record__call_graph_name(m));
	/* (as cli_err() says it: this file links without main.c) */
	fprintf(stderr, "sfprof: --call-graph: unknown mode '%s' (%sauto)\n",
		arg, list);
	return false;
}
