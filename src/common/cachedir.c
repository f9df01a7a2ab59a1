// SPDX-License-Identifier: MIT
/*
 * The cache directory's rules (see cachedir.h).  A root `sframe cache
 * clear` that followed a planted link would delete another directory's
 * files, and a FIFO planted as an entry would block the open() while an
 * unwound process stays stopped: hence the checks on every use, for
 * listing and clearing as much as for loading.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cachedir.h"


int sfp_cachedir_path(const char *dir, const char *sub, char *buf,
		      size_t size)
{
	const char *d = dir, *x, *h;
	const char *slash = sub ? "/" : "", *tail = sub ? sub : "";

	if (!d || !*d)
		d = getenv("SFPROF_CACHE_DIR");
	if (d && *d)
		return sfp_fmt(buf, size, "%s%s%s", d, slash, tail) ? 0 :
								 -ENAMETOOLONG;
	x = getenv("XDG_CACHE_HOME");
	if (x && *x == '/')
		return sfp_fmt(buf, size, "%s/sfprof%s%s", x, slash, tail) ?
			       0 : -ENAMETOOLONG;
	h = getenv("HOME");
	if (!h || !*h)
		return -ENOENT;
	return sfp_fmt(buf, size, "%s/.cache/sfprof%s%s", h, slash, tail) ?
		       0 : -ENAMETOOLONG;
}

int sfp_cachedir_open(const char *dir)
{
	struct stat st;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		struct stat lst;

		if (err == -ELOOP || (err == -ENOTDIR && !lstat(dir, &lst))) {
			pr_warn("%s: cache directory is a symbolic link or not a directory; not used",
				dir);
			return -EPERM;
		}
		return err;
	}
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 0022)) {
		pr_warn("%s: cache directory is not ours or is writable by others; not used",
			dir);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int sfp_cachedir_ensure(const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);
	int fd;

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	fd = sfp_cachedir_open(dir);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int sfp_cachedir_open_entry(int dirfd, const char *name, const char *path)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP) {
			pr_info("%s: cache entry is a symbolic link; not used",
				path);
			return -EPERM;
		}
		return -errno;
	}
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		pr_warn("%s: cache entry is not a regular file of ours; not used",
			path);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int sfp_cachedir_tmp_path(const char *dir, char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sfp_fmt(buf, size, "%s/" SFP_CACHEDIR_TMP_PREFIX "%d-%lx", dir,
		   (int)getpid(), (unsigned long)ts.tv_nsec) ? 0 :
							       -ENAMETOOLONG;
}
