// SPDX-License-Identifier: MIT
/*
 * Output files written beside their target and renamed into place
 * (outfile.h says why and what is done in place instead).
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"

#define TMP_SUFFIX ".tmp-XXXXXX"

/* Is st the file behind our standard output or error? */
static int std_stream_fd(const struct stat *st)
{
	struct stat s;
	int fd;

	for (fd = 1; fd <= 2; fd++)
		if (!fstat(fd, &s) && s.st_dev == st->st_dev &&
		    s.st_ino == st->st_ino)
			return fd;
	return -1;
}

/* PATH.tmp-XXXXXX, or DIR/.sfprof-tmp-XXXXXX when the name is too long. */
static char *tmp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = (size_t)(base - path);
	char *t;

	if (strlen(base) + sizeof(TMP_SUFFIX) - 1 <= NAME_MAX) {
		if (asprintf(&t, "%s" TMP_SUFFIX, path) < 0)
			return NULL;
	} else if (asprintf(&t, "%.*s.sfprof" TMP_SUFFIX, (int)dlen, path) < 0) {
		return NULL;
	}
	return t;
}

static void release(struct sfp_outfile *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->fd = -1;
	o->f = NULL;
}

int sfp_outfile_open(struct sfp_outfile *o, const char *path,
		     unsigned int flags, mode_t mode)
{
	struct stat st;
	mode_t um;
	int err, sfd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->flags = flags;
	if (!path || !*path)
		return -EINVAL;
	if (path[strlen(path) - 1] == '/')
		return -EISDIR;
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
			goto fail;
		}
		/* a disk is never an output, whatever link led here */
		if (S_ISBLK(st.st_mode)) {
			err = -ENOTSUP;
			goto fail;
		}
		o->in_place = true;
		o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0) {
			err = -errno;
			goto fail;
		}
		if ((flags & SFP_OUTFILE_SEEKABLE) &&
		    lseek(o->fd, 0, SEEK_CUR) < 0) {
			err = -ESPIPE;
			goto fail;
		}
		return 0;
	}
	if (!stat(path, &st) && (sfd = std_stream_fd(&st)) >= 0) {
		/* `-o /dev/stdout > file`: the shell's redirection is the
		 * output; replacing /dev/stdout itself would be wrong */
		o->in_place = true;
		o->fd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0) {
			err = -errno;
			goto fail;
		}
		return 0;
	}
	/* PATH.old must be free to take PATH: found out now, not after the
	 * job (a whole recording) ran */
	if ((flags & SFP_OUTFILE_KEEP_OLD) && !lstat(path, &st) &&
	    (S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > 0))) {
		struct stat ost;
		char *old;

		if (asprintf(&old, "%s.old", path) < 0) {
			err = -ENOMEM;
			goto fail;
		}
		if (!lstat(old, &ost) && S_ISDIR(ost.st_mode)) {
			pr_warn("%s is a directory: %s cannot be kept there "
				"(as perf keeps perf.data.old); move it away",
				old, path);
			free(old);
			err = -EEXIST;
			goto fail;
		}
		free(old);
	}
	o->tmp = tmp_name(path);
	if (!o->tmp) {
		err = -ENOMEM;
		goto fail;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	um = umask(0);
	umask(um);
	(void)fchmod(o->fd, mode & ~um & 0777);
	return 0;
fail:
	if (o->fd >= 0)
		close(o->fd);
	release(o);
	return err;
}

/* stdio's writes go here, so that the errno of a failure is kept. */
static ssize_t ck_write(void *cookie, const char *buf, size_t n)
{
	struct sfp_outfile *o = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(o->fd, buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (!o->werr)
				o->werr = k < 0 ? -errno : -EIO;
			/* fopencookie(3): 0, never negative, on error */
			return (ssize_t)done;
		}
		done += (size_t)k;
	}
	return (ssize_t)n;
}

FILE *sfp_outfile_stdio(struct sfp_outfile *o)
{
	static const cookie_io_functions_t io = { .write = ck_write };

	if (!o->f)
		o->f = fopencookie(o, "w", io);
	return o->f;
}

int sfp_outfile_publish(struct sfp_outfile *o)
{
	struct stat st;
	char *old;

	if (o->in_place || o->published || !o->tmp)
		return 0;
	if ((o->flags & SFP_OUTFILE_KEEP_OLD) && !lstat(o->path, &st) &&
	    (S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > 0))) {
		if (asprintf(&old, "%s.old", o->path) < 0)
			return -ENOMEM;
		if (rename(o->path, old) < 0) {
			int err = -errno;

			pr_warn("cannot keep %s as %s: %s", o->path, old,
				strerror(errno));
			free(old);
			return err;
		}
		free(old);
	}
	if (rename(o->tmp, o->path) < 0)
		return -errno;
	o->published = true;
	return 0;
}

int sfp_outfile_commit(struct sfp_outfile *o)
{
	int err = 0;

	if (o->f) {
		if (fflush(o->f) && !o->werr)
			o->werr = -EIO;
		fclose(o->f);	/* the cookie's stream: fd stays open */
		o->f = NULL;
		err = o->werr;
	}
	/* data on disk before the name points at it; a device has no use
	 * for it (and /dev/null refuses fsync) */
	if (!err && !o->in_place && !(o->flags & SFP_OUTFILE_NO_SYNC) &&
	    fsync(o->fd) < 0)
		err = -errno;
	if (close(o->fd) < 0 && !err)
		err = -errno;
	o->fd = -1;
	if (!err)
		err = sfp_outfile_publish(o);
	if (err && o->tmp && !o->published)
		unlink(o->tmp);
	release(o);
	return err;
}

void sfp_outfile_abort(struct sfp_outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp && !o->published)
		unlink(o->tmp);
	release(o);
}
