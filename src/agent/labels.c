// SPDX-License-Identifier: MIT
/*
 * What a process is called in the agent's profiles: the container it
 * runs in, read from its cgroup path, and the service name a cgroup path
 * stands for.
 *
 * Container engines name a container's cgroup after its 64-hex id, with
 * a prefix and a ".scope" suffix under systemd's cgroup driver
 * (docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope,
 * libpod-<id>.scope) or bare under the cgroupfs driver (/docker/<id>,
 * /kubepods/besteffort/pod<uid>/<id>).  The innermost component that is
 * such a name wins: podman and systemd put helper cgroups below a
 * container's (".../libpod-<id>.scope/container").  The monitors of
 * CRI-O and podman (crio-conmon-<id>, libpod-conmon-<id>) are not the
 * container.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "common/procfs.h"

#define ID_LEN 64

static bool all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* One path component [s, s+n): the id it names, if any. */
static bool component_id(const char *s, size_t n, char *id, size_t len)
{
	static const char *const prefixes[] = {
		"docker-", "cri-containerd-", "crio-", "libpod-",
		"containerd-", "nerdctl-", "cri-o-",
	};
	size_t i;

	if (n > 6 && !memcmp(s + n - 6, ".scope", 6))
		n -= 6;
	if (memmem(s, n, "conmon", 6))
		return false;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t pl = strlen(prefixes[i]);

		if (n > pl && !memcmp(s, prefixes[i], pl)) {
			s += pl;
			n -= pl;
			break;
		}
	}
	if (n != ID_LEN || !all_hex(s, n) || len <= ID_LEN)
		return false;
	for (i = 0; i < n; i++)
		id[i] = (char)tolower((unsigned char)s[i]);
	id[n] = 0;
	return true;
}

bool agent_container_id(const char *path, char *id, size_t len)
{
	const char *end = path + strlen(path);

	/* innermost first */
	while (end > path) {
		const char *start = end;

		while (start > path && start[-1] != '/')
			start--;
		if (end > start && component_id(start, (size_t)(end - start),
						id, len))
			return true;
		end = start > path ? start - 1 : path;
	}
	return false;
}

bool agent_read_cgroup(pid_t pid, char *path, size_t len)
{
	char buf[4096], *line, *save = NULL;

	if (sfp_proc_read((int)pid, "cgroup", buf, sizeof(buf)) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* the unified (v2) hierarchy: "0::/path" */
		if (!strncmp(line, "0::", 3)) {
			snprintf(path, len, "%s", line + 3);
			return true;
		}
	}
	return false;
}

void agent_cgroup_service(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 8 && !strcmp(b + n - 8, ".service"))
		n -= 8;
	else if (n > 6 && !strcmp(b + n - 6, ".scope"))
		n -= 6;
	else if (n > 6 && !strcmp(b + n - 6, ".slice"))
		n -= 6;
	if (!n) {
		snprintf(out, len, "root");
		return;
	}
	snprintf(out, len, "%.*s", (int)n, b);
}
