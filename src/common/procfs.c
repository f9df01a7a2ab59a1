// SPDX-License-Identifier: MIT
/* Small /proc/PID files and pid translation (see procfs.h). */
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "common/procfs.h"

ssize_t sfp_proc_read(int pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (size < 2)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n == 0)
		n = -ENODATA;
	buf[n > 0 ? n : 0] = 0;
	return n;
}

int sfp_proc_ns_pid(int pid)
{
	char path[64], line[512];
	int inner = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* "NSpid:\t42\t7": the last number is the innermost. */
		for (;;) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (v > 0 && v < INT32_MAX)
				inner = (int)v;
			p = end;
		}
		break;
	}
	fclose(f);
	return inner;
}
