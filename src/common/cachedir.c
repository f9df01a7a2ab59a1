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

/*
 * A symbolic link on the way to the cache directory is followed only
 * when root or we own it and no one else can swap it: it sits in a
 * directory of root's or ours that others cannot write (or that is
 * sticky, as /tmp, where only its owner can replace it).  A link planted
 * by another user (/tmp/x -> a directory of root's) is not: a root
 * `sframe cache clear` would delete files there.
 */
static bool link_trusted(int parent, const struct stat *lst)
{
	struct stat pst;
	uid_t me = geteuid();

	if (lst->st_uid != 0 && lst->st_uid != me)
		return false;
	if (fstat(parent, &pst))
		return false;
	if (pst.st_uid != 0 && pst.st_uid != me)
		return false;
	return !(pst.st_mode & 0022) || (pst.st_mode & S_ISVTX);
}

/*
 * Walk path's components below the start (/ or the working directory)
 * without following a link that is not trusted; the last one is not
 * followed at all.  Return the directory's descriptor or -errno (-EPERM
 * said).
 */
static int open_nofollow_path(const char *dir)
{
	char buf[4096], *p, *next;
	size_t n = strlen(dir);
	int fd, nfd;
	bool abs_first;

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	/* "DIR/" and "DIR//" name DIR: the slash would make open() follow
	 * a link at DIR whatever O_NOFOLLOW says */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	fd = open(buf[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (p = buf; *p == '/'; p++)
		;
	/* An absolute path's first component is looked up by its absolute
	 * name ("/work"), not relative to the "/" just opened: under
	 * qemu-user -L (the aarch64 tests) "/" opens the emulator's sysroot,
	 * while "/work" is the real one.  (fd stays the parent link_trusted()
	 * judges.) */
	abs_first = buf[0] == '/';
	while (*p) {
		struct stat st;
		int at = abs_first ? AT_FDCWD : fd;
		const char *name = abs_first ? p - 1 : p;

		next = strchr(p, '/');
		if (next) {
			*next++ = 0;
			while (*next == '/')
				next++;
		}
		if (!next || !*next)
			break;	/* p is the last component */
		if (!strcmp(p, ".")) {
			p[1] = '/';
			p = next;
			continue;
		}
		if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW)) {
			nfd = -errno;
			close(fd);
			return nfd;
		}
		if (S_ISLNK(st.st_mode) && !link_trusted(fd, &st)) {
			pr_warn("%s: %.*s on its path is a symbolic link another "
				"user could have planted; cache directory not used",
				dir, (int)(p + strlen(p) - buf), buf);
			close(fd);
			return -EPERM;
		}
		nfd = openat(at, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return -errno;
		fd = nfd;
		abs_first = false;
		p[strlen(p)] = '/';	/* (for the message above) */
		p = next;
	}
	nfd = openat(abs_first && *p ? AT_FDCWD : fd,
		     abs_first && *p ? p - 1 : *p ? p : ".",
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0) {
		int err = -errno;
		struct stat lst;

		if (err == -ELOOP ||
		    (err == -ENOTDIR &&
		     !fstatat(abs_first ? AT_FDCWD : fd, abs_first ? p - 1 : p,
			      &lst, AT_SYMLINK_NOFOLLOW)))
			err = -ELOOP;
		close(fd);
		return err;
	}
	close(fd);
	return nfd;
}

int sfp_cachedir_open(const char *dir)
{
	struct stat st;
	int fd;

	fd = open_nofollow_path(dir);
	if (fd < 0) {
		if (fd == -ELOOP) {
			pr_warn("%s: cache directory is a symbolic link or not a directory; not used",
				dir);
			return -EPERM;
		}
		return fd;
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
