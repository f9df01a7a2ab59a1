// SPDX-License-Identifier: MIT
/*
 * Derived data kept beside the file it came from (see filecache.h).
 *
 * Entries are mapped, not read: a hit costs the page-table entries of
 * the payload and one CRC pass over it (libdeflate's, ~0.1 ms a MiB
 * here), not a copy.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cachedir.h"
#include "common/filecache.h"

/* Beyond this an entry is called hostile rather than big. */
#define PAYLOAD_MAX (1ull << 30)

struct trailer {
	char magic[8];
	char kind[8];
	uint32_t gen;
	uint32_t crc;
	uint64_t part[2];
	uint64_t size;
	int64_t mtime_sec;
	int64_t mtime_nsec;
	uint64_t ino, dev;
	uint8_t id_len;
	uint8_t pad[7];
	uint8_t id[SFP_FC_ID_MAX];
	uint64_t reserved;
};
_Static_assert(sizeof(struct trailer) == 160, "trailer layout");

static const char magic[8] = { 'S', 'F', 'P', 'C', 'A', 'C', 'H', 'E' };

void sfp_fc_src_init(struct sfp_fc_src *s, const char *kind, uint32_t gen,
		     const struct stat *st, const uint8_t *id, size_t id_len)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->kind, kind, strnlen(kind, sizeof(s->kind)));
	s->gen = gen;
	s->size = (uint64_t)st->st_size;
	s->mtime_sec = st->st_mtim.tv_sec;
	s->mtime_nsec = st->st_mtim.tv_nsec;
	s->ino = (uint64_t)st->st_ino;
	s->dev = (uint64_t)st->st_dev;
	if (id && id_len <= SFP_FC_ID_MAX) {
		s->id_len = (uint8_t)id_len;
		memcpy(s->id, id, id_len);
	}
}

/*
 * The directory an entry lives in is a subdirectory of the cache root
 * (<root>/dwarf); the root passes the same checks, so that a root
 * planted as a link to somewhere else is not followed into either.
 * ensure: create what is missing.  Return 0 or -errno.
 */
static int check_parent(const char *dir, bool ensure)
{
	char parent[4096];
	const char *slash = strrchr(dir, '/');
	size_t n = slash ? (size_t)(slash - dir) : 0;
	int fd;

	if (!n)
		return 0;	/* "/x" or a relative name: nothing above */
	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, dir, n);
	parent[n] = 0;
	if (ensure)
		return sfp_cachedir_ensure(parent);
	fd = sfp_cachedir_open(parent);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static void to_trailer(const struct sfp_fc_src *s, struct trailer *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, magic, sizeof(magic));
	memcpy(t->kind, s->kind, sizeof(t->kind));
	t->gen = s->gen;
	t->size = s->size;
	t->mtime_sec = s->mtime_sec;
	t->mtime_nsec = s->mtime_nsec;
	t->ino = s->ino;
	t->dev = s->dev;
	t->id_len = s->id_len;
	memcpy(t->id, s->id, s->id_len);
}

static bool same_source(const struct trailer *a, const struct trailer *b)
{
	return !memcmp(a->magic, b->magic, sizeof(a->magic)) &&
	       !memcmp(a->kind, b->kind, sizeof(a->kind)) &&
	       a->gen == b->gen && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec &&
	       a->mtime_nsec == b->mtime_nsec && a->ino == b->ino &&
	       a->dev == b->dev && a->id_len == b->id_len &&
	       a->id_len <= SFP_FC_ID_MAX && !memcmp(a->id, b->id, a->id_len);
}

int sfp_fc_load(const char *dir, const char *name, const struct sfp_fc_src *src,
		struct sfp_fc_entry *out)
{
	char path[4096 + 256];
	struct trailer want, got;
	const char *why = NULL;
	uint64_t all = 0;
	struct stat st;
	void *map;
	int dfd, fd;

	memset(out, 0, sizeof(*out));
	if (!sfp_fmt(path, sizeof(path), "%s/%s", dir, name))
		return -ENAMETOOLONG;
	to_trailer(src, &want);
	dfd = check_parent(dir, false);
	if (dfd < 0)
		return dfd;
	dfd = sfp_cachedir_open(dir);
	if (dfd < 0)
		return dfd;
	fd = sfp_cachedir_open_entry(dfd, name, path);
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(got) ||
	    pread(fd, &got, sizeof(got), st.st_size - (off_t)sizeof(got)) !=
		    (ssize_t)sizeof(got))
		why = "shorter than its trailer";
	else if (!same_source(&want, &got))
		why = "made from another file";
	else if (got.part[0] > PAYLOAD_MAX || got.part[1] > PAYLOAD_MAX ||
		 !(all = got.part[0] + got.part[1]) ||
		 all != (uint64_t)st.st_size - sizeof(got))
		why = "of the wrong size";
	if (why)
		goto bad;
	/*
	 * Writable and private (elf_memory() is handed its image to own),
	 * but populated read-only: MAP_POPULATE on a private writable
	 * mapping write-faults every page, copying the whole payload --
	 * more than half of what inflating a DWARF image costs.
	 */
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
	out->map = map;
	out->size[0] = got.part[0];
	out->size[1] = got.part[1];
	return 0;
bad:
	pr_info("%s: cache entry %s; rebuilding", path, why);
	close(fd);
	(void)unlinkat(dfd, name, 0);
	close(dfd);
	return -EBADMSG;
}

void sfp_fc_unmap(struct sfp_fc_entry *e)
{
	if (e->map)
		munmap(e->map, e->size[0] + e->size[1]);
	memset(e, 0, sizeof(*e));
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

/*
 * Remove the least recently used entries named *suffix (never keep)
 * while the directory's entries pass budget bytes.
 */
static void evict(int dfd, const char *keep, const char *suffix,
		  uint64_t budget)
{
	struct entry *ents = NULL, *n;
	size_t count = 0, cap = 0, i, sl = strlen(suffix);
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
		    l <= sl || strcmp(de->d_name + l - sl, suffix) ||
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

void sfp_fc_store(const char *dir, const char *name, const char *suffix,
		  const struct sfp_fc_src *src, const void *p0, size_t n0,
		  const void *p1, size_t n1, uint64_t budget)
{
	char path[4096 + 256], tmp[4200];
	struct trailer t;
	int dfd, fd, err;

	if (!p1)
		n1 = 0;
	if (!n0 || n0 + n1 + sizeof(t) > budget / 4 ||
	    !sfp_fmt(path, sizeof(path), "%s/%s", dir, name) ||
	    check_parent(dir, true) || sfp_cachedir_ensure(dir) ||
	    sfp_cachedir_tmp_path(dir, tmp, sizeof(tmp)))
		return;
	to_trailer(src, &t);
	t.part[0] = n0;
	t.part[1] = n1;
	t.crc = libdeflate_crc32(0, p0, n0);
	if (n1)			/* (a NULL buffer restarts the CRC) */
		t.crc = libdeflate_crc32(t.crc, p1, n1);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		pr_info("%s: cannot write cache entry: %s", tmp,
			sfp_strerror(-errno));
		return;
	}
	err = write_all(fd, p0, n0);
	if (!err)
		err = write_all(fd, p1, n1);
	if (!err)
		err = write_all(fd, &t, sizeof(t));
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		pr_info("%s: cannot write cache entry: %s", path,
			sfp_strerror(err));
		unlink(tmp);
		return;
	}
	dfd = sfp_cachedir_open(dir);
	if (dfd >= 0) {
		evict(dfd, name, suffix, budget);
		close(dfd);
	}
}
