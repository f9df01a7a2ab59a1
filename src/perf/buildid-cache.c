// SPDX-License-Identifier: MIT
/*
 * perf's build-id cache (layout in buildid-cache.h): `sfprof record`
 * copies every DSO its samples hit there, and perf report/script as well
 * as sfprof read that copy first, so a binary rebuilt, upgraded or gone
 * with its container after recording still resolves.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/buildid-cache.h"
#include "perf/machine.h"

static char *symfs_dir;

int sfp_buildid_set_dirs(const char *dir, const char *symfs)
{
	if (dir && setenv("PERF_BUILDID_DIR", dir, 1))
		return -ENOMEM;
	if (symfs) {
		char *s = strdup(symfs);

		if (!s)
			return -ENOMEM;
		free(symfs_dir);
		symfs_dir = s;
	}
	return 0;
}

const char *sfp_buildid_symfs(void)
{
	return symfs_dir;
}

int sfp_buildid_dir(char *buf, size_t len)
{
	const char *env = getenv("PERF_BUILDID_DIR");
	const char *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.debug", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* "DIR/" and "DIR" name one cache: keep joins free of "//". */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	return 0;
}

static int hex_id(const uint8_t *id, size_t id_len, char *hex)
{
	size_t i;

	if (id_len < 2 || id_len > 20)
		return -EINVAL;
	for (i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return 0;
}

int sfp_buildid_cache_path(const char *dir, const uint8_t *id, size_t id_len,
			   const char *file, char *buf, size_t len)
{
	char hex[41];
	int n;

	if (hex_id(id, id_len, hex))
		return -EINVAL;
	n = snprintf(buf, len, "%s/.build-id/%.2s/%s%s%s", dir, hex, hex + 2,
		     file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *sfp_perf_dso_path(const struct sfp_perf_header_info *h,
			      const char *name, const uint8_t *id,
			      size_t id_len, char *buf, size_t len)
{
	char dir[PATH_MAX];
	size_t i;
	int n;

	if (!name || name[0] != '/')
		return name;
	for (i = 0; !id_len && h && i < h->nr_build_ids; i++)
		if (!strcmp(h->build_ids[i].filename, name)) {
			id = h->build_ids[i].id;
			id_len = h->build_ids[i].size;
		}
	if (id_len && !sfp_buildid_dir(dir, sizeof(dir)) &&
	    !sfp_buildid_cache_path(dir, id, id_len, "elf", buf, len) &&
	    !access(buf, R_OK))
		return buf;
	/* --symfs: an unpacked archive (its .build-id) or a copy of the
	 * recorded machine's files under that root. */
	if (symfs_dir && id_len &&
	    !sfp_buildid_cache_path(symfs_dir, id, id_len, "elf", buf, len) &&
	    !access(buf, R_OK))
		return buf;
	if (symfs_dir) {
		n = snprintf(buf, len, "%s%s", symfs_dir, name);
		if (n > 0 && (size_t)n < len && !access(buf, R_OK))
			return buf;
	}
	return name;
}

/* mkdir -p of path's directory part up to (not including) the last '/'. */
static int make_parents(char *path)
{
	char *p;

	for (p = path + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	return 0;
}

/* Copy src to dst (absent) through dst.tmp.PID and a rename. */
static int copy_file(const char *src, const char *dst, uint64_t *added)
{
	char tmp[PATH_MAX + 32], buf[65536];
	int in, out, err = 0;
	struct stat st;
	ssize_t n;

	if (!access(dst, F_OK))
		return -EEXIST;
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		return -ENOEXEC;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		   (st.st_mode & 0111) ? 0755 : 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (n > 0) {
			ssize_t w = write(out, p, (size_t)n);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				err = -errno;
				goto out;
			}
			p += w;
			n -= w;
			*added += (uint64_t)w;
		}
	}
	if (n < 0)
		err = -errno;
out:
	close(in);
	if (close(out) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* A recorded name as a relative path: absolute, no "..", no " (deleted)". */
static int clean_name(const char *name, char *out, size_t size)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(name), d = sizeof(deleted) - 1;
	const char *p;

	if (n > d && !strcmp(name + n - d, deleted))
		n -= d;
	if (name[0] != '/' || n >= size || n < 2)
		return -EINVAL;
	memcpy(out, name, n);
	out[n] = 0;
	for (p = out; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || !p[3])
			return -EINVAL;
	return 0;
}

int sfp_buildid_cache_add(const char *dir, const char *name,
			  const uint8_t *id, size_t id_len, const char *src,
			  const char *debug_src, uint64_t *added)
{
	char hex[41], clean[PATH_MAX], entry[PATH_MAX], path[PATH_MAX + 16];
	char target[PATH_MAX + 64];
	int n, err, made = 0;

	if (hex_id(id, id_len, hex) || clean_name(name, clean, sizeof(clean)))
		return -EINVAL;
	n = snprintf(entry, sizeof(entry), "%s%s/%s", dir, clean, hex);
	if (n < 0 || (size_t)n >= sizeof(entry))
		return -ENAMETOOLONG;
	snprintf(path, sizeof(path), "%s/elf", entry);
	err = make_parents(path);
	if (err)
		return err;
	err = copy_file(src, path, added);
	if (err && err != -EEXIST)
		return err;
	made += !err;
	if (debug_src) {
		snprintf(path, sizeof(path), "%s/debug", entry);
		err = copy_file(debug_src, path, added);
		if (err && err != -EEXIST)
			pr_warn("%s: debug file %s not cached: %s", clean,
				debug_src, sfp_strerror(err));
		made += !err;
	}
	err = sfp_buildid_cache_path(dir, id, id_len, NULL, path, sizeof(path));
	if (err)
		return err;
	err = make_parents(path);
	if (err)
		return err;
	/* Relative, as perf makes it: the cache can move as a whole. */
	snprintf(target, sizeof(target), "../..%s/%s", clean, hex);
	if (symlink(target, path)) {
		if (errno != EEXIST)
			return -errno;
	} else {
		made++;
	}
	return made ? 0 : -EEXIST;
}

SFP_HIDDEN void sfp_perf_header_build_id(const struct sfp_perf_header_info *h,
					 const char *name, const uint8_t **id,
					 size_t *len)
{
	size_t i;

	*id = NULL;
	*len = 0;
	for (i = 0; h && i < h->nr_build_ids; i++) {
		const struct sfp_perf_build_id *b = &h->build_ids[i];

		if (!b->filename || !b->size || b->size > 20 ||
		    strcmp(b->filename, name))
			continue;
		if (*id && (*len != b->size || memcmp(*id, b->id, *len))) {
			/* two files at this path: which one a mapping
			 * was cannot be told from the name */
			*id = NULL;
			*len = 0;
			return;
		}
		*id = b->id;
		*len = b->size;
	}
}

SFP_HIDDEN void sfp_perf_dso_build_id(const struct sfp_perf_header_info *h,
				      const struct sfp_pdso *d,
				      const uint8_t **id, size_t *len)
{
	if (d->build_id_size) {
		*id = d->build_id;
		*len = d->build_id_size;
		return;
	}
	*id = NULL;
	*len = 0;
	/* the header names files by path only: with two files at d's path
	 * it cannot say which one d is, and a wrong build-id would lend d
	 * another file's names */
	if (!d->name_shared)
		sfp_perf_header_build_id(h, d->name, id, len);
}

SFP_HIDDEN bool sfp_perf_dso_unverifiable(const struct sfp_perf_header_info *h,
					  const struct sfp_pdso *d,
					  const char *path)
{
	const uint8_t *id;
	size_t len;
	struct stat st;

	if (!d->name_shared)
		return false;
	sfp_perf_dso_build_id(h, d, &id, &len);
	if (id)
		return false;	/* the symbolizer checks it */
	return !d->ino || stat(path, &st) || (uint64_t)st.st_dev != d->dev ||
	       (uint64_t)st.st_ino != d->ino;
}
