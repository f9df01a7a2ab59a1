// SPDX-License-Identifier: MIT
/*
 * Option values and input paths, checked once for every subcommand so
 * that no option accepts "5x", "nan", an overflowed number or a silently
 * clamped one, and so that a missing input is reported with its path and
 * the system's reason rather than a library error code.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
