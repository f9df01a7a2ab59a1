// SPDX-License-Identifier: MIT
/*
 * Event names as perf prints them: the name the file's EVENT_DESC gives,
 * else the generic name of a hardware or software counter.
 */
#include "profile/load.h"

const char *sfp_profile_event_name(const struct sfp_perf_evsel *e)
{
	/* PERF_TYPE_HARDWARE (0) and PERF_TYPE_SOFTWARE (1) config values */
	static const char *const hardware[] = {
		[0] = "cycles",		[1] = "instructions",
		[2] = "cache-references", [3] = "cache-misses",
		[4] = "branches",	[5] = "branch-misses",
		[6] = "bus-cycles",
	};
	static const char *const software[] = {
		[0] = "cpu-clock",	[1] = "task-clock",
		[2] = "page-faults",	[3] = "context-switches",
		[4] = "cpu-migrations",	[5] = "minor-faults",
		[6] = "major-faults",	[7] = "alignment-faults",
		[8] = "emulation-faults", [9] = "dummy",
	};

	if (!e)
		return "[unknown]";
	if (e->name)
		return e->name;
	switch (e->attr.type) {
	case 0:
		if (e->attr.config < ARRAY_SIZE(hardware))
			return hardware[e->attr.config];
		break;
	case 1:
		if (e->attr.config < ARRAY_SIZE(software))
			return software[e->attr.config];
		break;
	}
	return "[unknown]";
}

/* perf writes an event's modifiers after a colon: "cpu-clock:pppH" */
static bool name_is(const char *name, const char *what)
{
	size_t n = strlen(what);

	return !strncmp(name, what, n) && (!name[n] || name[n] == ':');
}

enum sfp_profile_event_kind sfp_profile_event_kind(const char *name)
{
	if (!name)
		return SFP_PROFILE_EV_COUNT;
	if (name_is(name, SFP_OFF_CPU_EVENT_NAME))
		return SFP_PROFILE_EV_OFF_CPU;
	if (name_is(name, "cpu-clock") || name_is(name, "task-clock"))
		return SFP_PROFILE_EV_CLOCK;
	return SFP_PROFILE_EV_COUNT;
}
