// SPDX-License-Identifier: MIT
/*
 * Event names as perf spells them, resolved to perf_event_attr type and
 * config.  Software and hardware events come from a fixed table (the
 * kernel's ABI numbers); tracepoints "subsys:name" are looked up in tracefs,
 * whose id file is the attr config.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

struct named_event {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct named_event named_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

/* Where tracefs may be: its own mount, or under debugfs. */
static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

int sfp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			    flags);
}

void sfp_attr_set_flag_bit(struct perf_event_attr *a, int bit)
{
	uint64_t w;

	/* The flags word follows sample_type/read_format (offset 40). */
	memcpy(&w, (uint8_t *)a + 40, sizeof(w));
	w |= 1ULL << bit;
	memcpy((uint8_t *)a + 40, &w, sizeof(w));
}

bool sfp_attr_flag_bit(const struct perf_event_attr *a, int bit)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)a + 40, sizeof(w));
	return (w >> bit) & 1;
}

static bool valid_tp_part(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 60)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

static int tracepoint_id(const char *name, const char *colon,
			 struct sfp_event_desc *d)
{
	size_t nsys = (size_t)(colon - name), nev = strlen(colon + 1);
	bool any_tracefs = false;
	char path[256], buf[32];
	size_t i;

	if (!valid_tp_part(name, nsys) || !valid_tp_part(colon + 1, nev)) {
		pr_warn("event '%s': not a tracepoint name (want subsystem:event)",
			name);
		return -ENOENT;
	}
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		char probe[128];
		ssize_t n;
		int fd;

		snprintf(probe, sizeof(probe), "%s/events", tracefs_dirs[i]);
		if (access(probe, R_OK))
			continue;
		any_tracefs = true;
		snprintf(path, sizeof(path), "%s/events/%.*s/%s/id",
			 tracefs_dirs[i], (int)nsys, name, colon + 1);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		d->type = PERF_TYPE_TRACEPOINT;
		d->config = strtoull(buf, NULL, 10);
		d->kind = SFP_EV_TRACEPOINT;
		return 0;
	}
	if (!any_tracefs) {
		pr_warn("event '%s': tracefs is not mounted; mount it with "
			"'mount -t tracefs nodev /sys/kernel/tracing'", name);
		return -EOPNOTSUPP;
	}
	pr_warn("event '%s': no such tracepoint (see 'perf list tracepoint' "
		"or /sys/kernel/tracing/events/)", name);
	return -ENOENT;
}

int sfp_event_parse(const char *name, struct sfp_event_desc *d)
{
	const char *colon;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (!name || !*name || strlen(name) >= sizeof(d->name)) {
		pr_warn("event '%s': empty or too long", name ? name : "");
		return -ENOENT;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	for (i = 0; i < ARRAY_SIZE(named_events); i++) {
		if (strcmp(name, named_events[i].name))
			continue;
		d->type = named_events[i].type;
		d->config = named_events[i].config;
		d->kind = d->type == PERF_TYPE_HARDWARE ? SFP_EV_HARDWARE
							: SFP_EV_SOFTWARE;
		return 0;
	}
	colon = strchr(name, ':');
	if (colon && colon != name)
		return tracepoint_id(name, colon, d);
	pr_warn("unknown event '%s'; software events: cpu-clock, task-clock, "
		"page-faults, context-switches, cpu-migrations, minor-faults, "
		"major-faults; tracepoints as subsystem:name", name);
	return -ENOENT;
}

int sfp_tracepoint_field(const char *sys, const char *event, const char *field,
			 uint32_t *offset, uint32_t *size)
{
	char path[256], line[512], want[80];
	size_t i;

	/* "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;" */
	snprintf(want, sizeof(want), " %s;", field);
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		FILE *f;
		int found = 0;

		snprintf(path, sizeof(path), "%s/events/%s/%s/format",
			 tracefs_dirs[i], sys, event);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			char *semi = strchr(line, ';'), *o, *s;
			unsigned off, sz;

			if (!strstr(line, "field:") || !semi)
				continue;
			/* the name is the last word before the first ';' */
			o = semi;
			while (o > line && o[-1] != ' ' && o[-1] != '*')
				o--;
			if (o == line || strncmp(o - 1, want, strlen(want)))
				continue;
			o = strstr(semi, "offset:");
			s = strstr(semi, "size:");
			if (o && s && sscanf(o, "offset:%u", &off) == 1 &&
			    sscanf(s, "size:%u", &sz) == 1) {
				*offset = off;
				*size = sz;
				found = 1;
			}
		}
		fclose(f);
		if (found)
			return 0;
	}
	return -ENOENT;
}
