// SPDX-License-Identifier: MIT
/*
 * The table an unwinder uses for an ELF object, and the on-disk cache of
 * tables built from CFI.
 *
 * Cache entries are sfprof table files (sfp_sframe__write_file: the
 * section, its address, the object's build-id, a CRC) named
 * "<key>-g<GEN>-v<version>.sframe", where key is the build-id in hex or,
 * for objects without one, "h" and a 64-bit FNV-1a hash of the whole file.
 * GEN changes whenever the converter's output would change, so stale
 * entries are never used.  The directory and its entries follow the
 * rules of common/cachedir.h (ours, no links followed, no blocking,
 * written under a temporary name and renamed); on load the build-id must
 * match, the CRC must hold and the section must decode, else the entry
 * is removed and rebuilt.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "cfi/build.h"
#include "common/cachedir.h"
#include "elf/elf.h"
#include "sframe/sframe_int.h"

#define CACHE_GEN 1
#define KEY_MAX 160

/* Container header fields we check ourselves (docs/sframe-file.md). */
#define SFT_HDR_SIZE 112
#define SFT_OFF_BUILD_ID_LEN 36
#define SFT_OFF_BUILD_ID 40


int sfp_sframe_cache__dir(const struct sfp_table_opts *opts, char *buf,
			  size_t size)
{
	if (!buf || !SFP_OPTS_VALID(opts, sfp_table_opts))
		return -EINVAL;
	return sfp_cachedir_path(SFP_OPTS_GET(opts, sfp_table_opts, cache_dir,
					      NULL),
				 NULL, buf, size);
}

static void cache_key(const struct sfp_elf *e, char *key, size_t n,
		      const uint8_t **id, size_t *idlen)
{
	size_t o = 0;

	if (!sfp_elf_build_id(e, id, idlen) && *idlen && *idlen <= 64) {
		for (size_t i = 0; i < *idlen && o + 3 < n; i++)
			o += (size_t)snprintf(key + o, n - o, "%02x", (*id)[i]);
		return;
	}
	*id = NULL;
	*idlen = 0;
	{
		size_t isz;
		const uint8_t *img = sfp_elf_image(e, &isz);

		snprintf(key, n, "h%016" PRIx64, sfp_fnv1a64(img, isz));
	}
}

/*
 * Load a cache entry; remove it when it is bad.  A name that is not a
 * regular file of ours is left alone (cache_store()'s rename replaces
 * it).  Return 0 or -errno.
 */
static int cache_load(const char *dir, const char *name, const char *path,
		      const uint8_t *id, size_t idlen, struct sfp_sframe **out)
{
	SFP_OPTS(sfp_sframe_opts, so, .name = path);
	uint8_t hdr[SFT_HDR_SIZE];
	int dfd, fd, err;
	ssize_t r;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = sfp_cachedir_open_entry(dfd, name, path);
	close(dfd);
	if (fd < 0)
		return fd;
	r = pread(fd, hdr, sizeof(hdr), 0);
	if (r != (ssize_t)sizeof(hdr) || hdr[SFT_OFF_BUILD_ID_LEN] != idlen ||
	    (idlen && memcmp(hdr + SFT_OFF_BUILD_ID, id, idlen))) {
		pr_info("%s: cache entry does not match the object; rebuilding",
			path);
		close(fd);
		unlink(path);
		return -EBADMSG;
	}
	err = sframe_open_table_fd(fd, path, &so, out);
	close(fd);
	if (err) {
		pr_info("%s: bad cache entry (%s); rebuilding", path,
			sfp_strerror(err));
		unlink(path);
	}
	return err;
}

static int cache_store(const char *dir, const char *path, const void *sec,
		       size_t size, uint64_t addr, const uint8_t *id,
		       size_t idlen)
{
	SFP_OPTS(sfp_sframe_file_opts, fo, .section_addr = addr,
		 .build_id = id, .build_id_len = idlen);
	char tmp[4200];
	int err;

	err = sfp_cachedir_tmp_path(dir, tmp, sizeof(tmp));
	if (err)
		return err;
	err = sfp_sframe__write_file(tmp, sec, size, &fo);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		pr_info("%s: cannot write cache entry: %s", path,
			sfp_strerror(err));
	}
	return err;
}

/* The object's own .sframe (section, else PT_GNU_SFRAME). */
static int own_sframe(struct sfp_elf *e, struct sfp_sframe **out)
{
	SFP_OPTS(sfp_sframe_opts, so, .name = sfp_elf_name(e));
	struct sfp_elf_section s;
	const uint8_t *d;
	size_t n;

	if ((!sfp_elf_find_section(e, NULL, SHT_GNU_SFRAME, &s) ||
	     !sfp_elf_find_section(e, ".sframe", 0, &s)) &&
	    !sfp_elf_section_data(e, &s, &d, &n)) {
		so.section_addr = s.addr;
		return sfp_sframe__open_mem(d, n, &so, out);
	}
	for (size_t i = 0; i < sfp_elf_num_phdrs(e); i++) {
		GElf_Phdr ph;

		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_GNU_SFRAME ||
		    ph.p_filesz > SIZE_MAX ||
		    sfp_elf_vaddr_data(e, ph.p_vaddr, ph.p_filesz, &d))
			continue;
		so.section_addr = ph.p_vaddr;
		return sfp_sframe__open_mem(d, ph.p_filesz, &so, out);
	}
	return -ENOENT;
}

static int open_table(struct sfp_elf *e, const struct sfp_table_opts *opts,
		      struct sfp_sframe **out)
{
	SFP_OPTS(sfp_build_opts, bo);
	SFP_OPTS(sfp_sframe_opts, so, .name = sfp_elf_name(e));
	char dir[4096], path[4096 + KEY_MAX], key[KEY_MAX], name[KEY_MAX + 32];
	const uint8_t *id = NULL;
	size_t idlen = 0, size = 0;
	bool use_cache;
	void *sec = NULL;
	uint64_t addr = 0;
	int err;

	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_table_opts))
		return -EINVAL;
	err = own_sframe(e, out);
	if (!err)
		return 0;
	if (err != -ENOENT)
		pr_info("%s: its .sframe is unusable (%s); building from CFI",
			sfp_elf_name(e), sfp_strerror(err));

	bo.version = SFP_OPTS_GET(opts, sfp_table_opts, version, 0);
	if (!bo.version)
		bo.version = 3;
	use_cache = !SFP_OPTS_GET(opts, sfp_table_opts, no_cache, false) &&
		    !sfp_sframe_cache__dir(opts, dir, sizeof(dir)) &&
		    !sfp_cachedir_ensure(dir);
	if (use_cache) {
		cache_key(e, key, sizeof(key), &id, &idlen);
		if (!sfp_fmt(name, sizeof(name), "%s-g%d-v%u.sframe", key,
			 CACHE_GEN, bo.version) ||
		    !sfp_fmt(path, sizeof(path), "%s/%s", dir, name))
			use_cache = false;
	}
	if (use_cache && !cache_load(dir, name, path, id, idlen, out))
		return 0;

	err = cfi_build_elf(e, &bo, &sec, &size, &addr, NULL);
	if (err)
		return err;
	so.section_addr = addr;
	err = sfp_sframe__open_mem(sec, size, &so, out);
	if (!err && use_cache)
		cache_store(dir, path, sec, size, addr, id, idlen);
	free(sec);
	return err;
}

int sfp_sframe__open_elf_table(const char *path,
			       const struct sfp_table_opts *opts,
			       struct sfp_sframe **out)
{
	struct sfp_elf *e = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!path)
		return -EINVAL;
	err = sfp_elf_open(path, &e);
	if (err)
		return err == -ENOEXEC ? -EBADMSG : err;
	err = open_table(e, opts, out);
	sfp_elf_close(&e);
	return err;
}

int sfp_sframe__open_elf_table_mem(const void *image, size_t size,
				   const char *name,
				   const struct sfp_table_opts *opts,
				   struct sfp_sframe **out)
{
	struct sfp_elf *e = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!image)
		return -EINVAL;
	err = sfp_elf_open_mem(image, size, name ? name : "(memory)", &e);
	if (err)
		return err == -ENOEXEC ? -EBADMSG : err;
	err = open_table(e, opts, out);
	sfp_elf_close(&e);
	return err;
}

/* --- list / clear --- */

static size_t hex_run(const char *s)
{
	size_t i = 0;

	while ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))
		i++;
	return i;
}

static size_t dec_run(const char *s)
{
	size_t i = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/*
 * A name of the cache's own form, "<key>-g<N>-v<N>.sframe" (key: the
 * build-id in lower-case hex, or "h" and 16 hex digits): clear removes
 * these and nothing else that happens to end in .sframe.
 */
static bool is_entry(const char *n)
{
	size_t k;

	if (n[0] == 'h' && hex_run(n + 1) == 16) {
		n += 17;
	} else {
		k = hex_run(n);
		if (!k || k % 2 || k > 2 * 64)
			return false;
		n += k;
	}
	if (strncmp(n, "-g", 2) || !(k = dec_run(n + 2)))
		return false;
	n += 2 + k;
	if (strncmp(n, "-v", 2) || !(k = dec_run(n + 2)))
		return false;
	return !strcmp(n + 2 + k, ".sframe");
}

/* A temporary of ours: ".tmp-<pid>-<hex>" (sfp_cachedir_tmp_path()). */
static bool is_tmp(const char *n)
{
	size_t k, l = strlen(SFP_CACHEDIR_TMP_PREFIX);

	if (strncmp(n, SFP_CACHEDIR_TMP_PREFIX, l))
		return false;
	n += l;
	if (!(k = dec_run(n)) || n[k] != '-')
		return false;
	n += k + 1;
	k = hex_run(n);
	return k && !n[k];
}

int sfp_sframe_cache__list(const struct sfp_table_opts *opts,
			   sfp_sframe_cache_fn fn, void *ctx)
{
	char dir[4096], path[4096 + 256];
	struct dirent *de;
	DIR *d;
	int err = 0, dfd;

	if (!fn)
		return -EINVAL;
	err = sfp_sframe_cache__dir(opts, dir, sizeof(dir));
	if (err)
		return err;
	dfd = sfp_cachedir_open(dir);
	if (dfd < 0)
		return dfd;
	d = fdopendir(dfd);
	if (!d) {
		err = -errno;
		close(dfd);
		return err;
	}
	while ((de = readdir(d)) != NULL) {
		struct sfp_sframe_cache_entry ent = { .file = de->d_name };
		struct sfp_sframe *sf = NULL;
		SFP_OPTS(sfp_sframe_opts, so);
		struct stat st;
		int fd;

		if (!is_entry(de->d_name) ||
		    !sfp_fmt(path, sizeof(path), "%s/%s", dir, de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		so.name = path;
		ent.size = (uint64_t)st.st_size;
		ent.mtime = st.st_mtime;
		/* Listed as BAD when not ours: loading would not use it. */
		fd = sfp_cachedir_open_entry(dfd, de->d_name, path);
		if (fd >= 0) {
			ent.valid = !sframe_open_table_fd(fd, path, &so, &sf);
			close(fd);
		}
		sfp_sframe__free(&sf);
		err = fn(&ent, ctx);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

/*
 * Entries and leftover temporaries are unlinked relative to the checked
 * directory's descriptor, so a directory swapped for a link after the
 * check is not followed either; unlinkat() removes a link, never its
 * target.
 */
int sfp_sframe_cache__clear(const struct sfp_table_opts *opts)
{
	char dir[4096];
	struct dirent *de;
	DIR *d;
	int n = 0, err, dfd;

	err = sfp_sframe_cache__dir(opts, dir, sizeof(dir));
	if (err)
		return err;
	dfd = sfp_cachedir_open(dir);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	d = fdopendir(dfd);
	if (!d) {
		err = -errno;
		close(dfd);
		return err;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_entry(de->d_name) && !is_tmp(de->d_name))
			continue;
		if (!unlinkat(dfd, de->d_name, 0))
			n++;
	}
	closedir(d);
	return n;
}
