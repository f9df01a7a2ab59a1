// SPDX-License-Identifier: MIT
/*
 * Decompressed DWARF images (dwarf-image.c) kept on disk between runs.
 *
 * Inflating libc's debug file is most of a small dwarf-mode report with
 * inline frames (18 of 49 ms of CPU on bench-report's file), and every
 * report of every program that calls into libc pays it again: perf does
 * too, through libdw.  The image does not change while the debug file
 * does not, so the first run writes it to <cache dir>/dwarf and later
 * runs map it.  An entry is the image, what the reader built from it
 * that is worth keeping too (dwarf.c's index of the compile units'
 * ranges, ~5 ms of libdw walking libc's 1,937 CUs), and a trailer:
 *
 *	magic "SFPDWARF", generation, CRC-32 of image and extra, image
 *	size, size and mtime (s, ns) of the file it came from, its
 *	build-id, the extra's size
 *
 * named "<build-id>-<size>.dwarf" (a binary and its separate debug file
 * share a build-id, not a size).  An entry is used only when all of that
 * matches the file being opened and the CRC holds; otherwise it is
 * removed and rebuilt.  The directory's rules are common/cachedir.h's.
 * The entries together are kept under a byte budget: a new entry evicts
 * the least recently used ones (a hit refreshes the entry's mtime), and
 * an image bigger than a quarter of the budget is not kept at all.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cachedir.h"
#include "elf/elf.h"
#include "symbols/internal.h"

#define ENTRY_SUFFIX ".dwarf"
/* Bump when the image's layout or the sections it carries change. */
#define CACHE_GEN 1
#define BUILD_ID_MAX 64
#define IMAGE_MAX (1ull << 30)
#define DEFAULT_BUDGET (1ull << 30)

struct trailer {
	char magic[8];
	uint32_t gen;
	uint32_t crc;
	uint64_t image_size;
	uint64_t src_size;
	int64_t src_mtime_sec;
	int64_t src_mtime_nsec;
	uint8_t build_id_len;
	uint8_t pad[7];
	uint8_t build_id[BUILD_ID_MAX];
	uint64_t extra_size;
};
_Static_assert(sizeof(struct trailer) == 128, "trailer layout");

static const char magic[8] = { 'S', 'F', 'P', 'D', 'W', 'A', 'R', 'F' };

/* What an entry must say about the file it stands for. */
static int describe(struct sfp_elf *e, struct trailer *t, char *name,
		    size_t name_len)
{
	const uint8_t *id;
	size_t idlen, o;
	struct stat st;

	if (sfp_elf_build_id(e, &id, &idlen) || !idlen ||
	    idlen > BUILD_ID_MAX || sfp_elf_stat(e, &st))
		return -ENOENT;
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, magic, sizeof(magic));
	t->gen = CACHE_GEN;
	t->src_size = (uint64_t)st.st_size;
	t->src_mtime_sec = st.st_mtim.tv_sec;
	t->src_mtime_nsec = st.st_mtim.tv_nsec;
	t->build_id_len = (uint8_t)idlen;
	memcpy(t->build_id, id, idlen);
	for (o = 0; o < idlen; o++)
		snprintf(name + 2 * o, 3, "%02x", id[o]);
	o = (size_t)snprintf(name + 2 * idlen, name_len - 2 * idlen,
			     "-%llx" ENTRY_SUFFIX,
			     (unsigned long long)t->src_size);
	return o < name_len - 2 * idlen ? 0 : -ENAMETOOLONG;
}

static bool same_source(const struct trailer *a, const struct trailer *b)
{
	return !memcmp(a->magic, b->magic, sizeof(a->magic)) &&
	       a->gen == b->gen && a->src_size == b->src_size &&
	       a->src_mtime_sec == b->src_mtime_sec &&
	       a->src_mtime_nsec == b->src_mtime_nsec &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

int sfp_dwarf_cache_load(const struct sfp_dwarf_cache *c, struct sfp_elf *e,
			 void **image, size_t *size, const void **extra,
			 size_t *extra_size)
{
	char name[2 * BUILD_ID_MAX + 32], path[4096 + sizeof(name)];
	struct trailer want, got;
	const char *why = NULL;
	struct stat st;
	uint64_t all;
	void *map;
	int dfd, fd;

	*image = NULL;
	*size = 0;
	*extra = NULL;
	*extra_size = 0;
	if (!c || !c->dir || describe(e, &want, name, sizeof(name)))
		return -ENOENT;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dir, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	dfd = sfp_cachedir_open(c->dir);
	if (dfd < 0)
		return dfd;
	fd = sfp_cachedir_open_entry(dfd, name, path);
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(got) ||
	    (uint64_t)st.st_size - sizeof(got) > IMAGE_MAX ||
	    pread(fd, &got, sizeof(got), st.st_size - (off_t)sizeof(got)) !=
		    (ssize_t)sizeof(got))
		why = "shorter than its trailer";
	else if (!same_source(&want, &got))
		why = "made from another file";
	else if (!got.image_size || got.extra_size > IMAGE_MAX ||
		 got.image_size + got.extra_size !=
			 (uint64_t)st.st_size - sizeof(got))
		why = "of the wrong size";
	if (why)
		goto bad;
	/*
	 * Writable, as elf_memory() is given the image to own, but mapped
	 * in one go read-only: MAP_POPULATE on a private writable mapping
	 * would copy every page (a write fault each), which cost more than
	 * half of what inflating does.
	 */
	all = got.image_size + got.extra_size;
	map = mmap(NULL, all, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		int err = -errno;

		close(fd);
		close(dfd);
		return err;
	}
#ifdef MADV_POPULATE_READ
	(void)madvise(map, all, MADV_POPULATE_READ);
#endif
	if (libdeflate_crc32(0, map, all) != got.crc) {
		munmap(map, all);
		why = "damaged (CRC)";
		goto bad;
	}
	/* the mtime is the entry's last use, for eviction */
	(void)futimens(fd, NULL);
	close(fd);
	close(dfd);
	*image = map;
	*size = got.image_size;
	*extra = got.extra_size ? (const uint8_t *)map + got.image_size : NULL;
	*extra_size = got.extra_size;
	return 0;
bad:
	pr_info("%s: DWARF cache entry %s; rebuilding", path, why);
	close(fd);
	(void)unlinkat(dfd, name, 0);
	close(dfd);
	return -EBADMSG;
}

void sfp_dwarf_cache_unmap(void *image, size_t size, size_t extra_size)
{
	if (image)
		munmap(image, size + extra_size);
}

struct entry {
	char name[256];
	uint64_t size;
	struct timespec used;
};

static int older_first(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->used.tv_sec != b->used.tv_sec)
		return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
	if (a->used.tv_nsec != b->used.tv_nsec)
		return a->used.tv_nsec < b->used.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Remove the least recently used entries (not keep) while over budget. */
static void evict(int dfd, const char *keep, uint64_t budget)
{
	struct entry *ents = NULL, *n;
	size_t count = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *de;
	int fd2 = dup(dfd);
	DIR *d;

	if (fd2 < 0)
		return;
	d = fdopendir(fd2);
	if (!d) {
		close(fd2);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || l >= sizeof(ents->name) ||
		    l <= strlen(ENTRY_SUFFIX) ||
		    strcmp(de->d_name + l - strlen(ENTRY_SUFFIX), ENTRY_SUFFIX) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		if (!strcmp(de->d_name, keep))
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 32;
			n = realloc(ents, cap * sizeof(*ents));
			if (!n)
				goto out;
			ents = n;
		}
		memcpy(ents[count].name, de->d_name, l + 1);
		ents[count].size = (uint64_t)st.st_size;
		ents[count].used = st.st_mtim;
		count++;
	}
	if (total > budget && count) {
		qsort(ents, count, sizeof(*ents), older_first);
		for (i = 0; i < count && total > budget; i++)
			if (!unlinkat(dfd, ents[i].name, 0))
				total -= ents[i].size;
	}
out:
	free(ents);
	closedir(d);
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

void sfp_dwarf_cache_store(const struct sfp_dwarf_cache *c, struct sfp_elf *e,
			   const void *image, size_t size, const void *extra,
			   size_t extra_size)
{
	char name[2 * BUILD_ID_MAX + 32], path[4096 + sizeof(name)], tmp[4200];
	uint64_t budget;
	struct trailer t;
	int dfd, fd, err;

	if (!c || !c->dir || !size || describe(e, &t, name, sizeof(name)))
		return;
	budget = c->budget ? c->budget : DEFAULT_BUDGET;
	if (!extra)
		extra_size = 0;
	if (size + extra_size + sizeof(t) > budget / 4)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dir, name) >=
		    sizeof(path) ||
	    sfp_cachedir_ensure(c->dir) ||
	    sfp_cachedir_tmp_path(c->dir, tmp, sizeof(tmp)))
		return;
	t.image_size = size;
	t.extra_size = extra_size;
	t.crc = libdeflate_crc32(0, image, size);
	if (extra_size)		/* (a NULL buffer restarts the CRC) */
		t.crc = libdeflate_crc32(t.crc, extra, extra_size);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		pr_info("%s: cannot write DWARF cache entry: %s", tmp,
			sfp_strerror(-errno));
		return;
	}
	err = write_all(fd, image, size);
	if (!err)
		err = write_all(fd, extra, extra_size);
	if (!err)
		err = write_all(fd, &t, sizeof(t));
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		pr_info("%s: cannot write DWARF cache entry: %s", path,
			sfp_strerror(err));
		unlink(tmp);
		return;
	}
	dfd = sfp_cachedir_open(c->dir);
	if (dfd >= 0) {
		evict(dfd, name, budget);
		close(dfd);
	}
}
