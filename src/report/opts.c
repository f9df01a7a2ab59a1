// SPDX-License-Identifier: MIT
/*
 * The report's arguments that have perf's syntax: --sort key lists and
 * --time ranges.
 */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int sfp_report_parse_sort(const char *s, struct sfp_report_opts *o)
{
	static const struct {
		const char *name;
		enum sfp_report_key key;
	} names[] = {
		{ "sym", SFP_REPORT_SYM },	{ "symbol", SFP_REPORT_SYM },
		{ "dso", SFP_REPORT_DSO },	{ "comm", SFP_REPORT_COMM },
		{ "pid", SFP_REPORT_PID },
	};
	const char *p = s;

	o->nr_keys = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < ARRAY_SIZE(names); i++) {
			if (strlen(names[i].name) != len ||
			    strncmp(names[i].name, p, len))
				continue;
			found = true;
			if (o->nr_keys == SFP_REPORT_MAX_KEYS)
				return -EINVAL;
			o->keys[o->nr_keys++] = names[i].key;
		}
		if (!found)
			return -EINVAL;
		p += len;
		if (*p == ',' && *++p == 0)
			return -EINVAL;
	}
	return o->nr_keys ? 0 : -EINVAL;
}

/* "secs[.frac]" (up to 9 fraction digits) to ns; empty: *set = false. */
static int parse_ts(const char *s, size_t len, uint64_t *ns, bool *set)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, nd = 0;

	*set = len > 0;
	if (!len)
		return 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (sec > UINT64_MAX / 10 / 1000000000ull)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i)
		return -EINVAL;
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++) {
			if (nd == 9)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		}
	}
	if (i != len)
		return -EINVAL;
	for (; nd < 9; nd++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

int sfp_report_parse_time(const char *s, uint64_t *start, uint64_t *stop)
{
	const char *comma = strchr(s, ',');
	bool a, b;

	*start = 0;
	*stop = 0;
	if (!comma)
		return parse_ts(s, strlen(s), start, &a) || !a ? -EINVAL : 0;
	if (parse_ts(s, (size_t)(comma - s), start, &a) ||
	    parse_ts(comma + 1, strlen(comma + 1), stop, &b) ||
	    (b && a && *stop < *start))
		return -EINVAL;
	return 0;
}
