// SPDX-License-Identifier: MIT
/*
 * The build-id cache side of `sfprof record` (see record-buildid.h).
 *
 * Why a descriptor per DSO at map time: the process (and with it its
 * mount namespace, its map_files entries, a deleted binary's last link)
 * may be gone by the end of the recording; an open descriptor keeps the
 * mapped bytes reachable whatever happens to paths.  Which DSOs to copy
 * is decided at the end, as perf does (`perf buildid-list --with-hits`):
 * the recording is read back and only the files that samples hit are
 * copied.  One descriptor per distinct build-id; past the limit of open
 * files, the file is opened by path at the end instead.
 *
 * Which file a sample hit is decided here, from the MMAP2 records this
 * recording wrote (the process and the range that carry each build-id),
 * not from a reader's model of the DSOs: six containers each map their
 * own build at one path, and a model keyed by the path gave all their
 * samples to one build (2 of 6 containers' binaries were cached).
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/profile.h>
#include <sfprof/symbols.h>

#include "cli.h"
#include "elf/buildid.h"
#include "perf/buildid-cache.h"
#include "record-buildid.h"

#define MAX_FDS 4096

struct bid_ent {
	uint8_t id[20];
	uint8_t len;
	int fd;			/* -1: not opened */
	int dbg_fd;		/* its debug file inside the process's
				 * image, -1: none found there */
	char *name;		/* as recorded */
};

/*
 * The debug file of build-id id inside the image process pid runs from:
 * /usr/lib/debug/.build-id/xx/rest.debug under /proc/PID/root, where a
 * container's image ships it (the host's debug directories do not have
 * it, and the process may be gone when the recording ends).  Read while
 * the process runs, and only when the file carries the same build-id.
 * Return: an open descriptor, or -1.
 */
static int image_debug_file(int pid, const uint8_t *id, size_t len)
{
	char path[128], hex[41];
	uint8_t fid[SFP_PROC_BUILD_ID_MAX];
	size_t i, flen;
	int n, fd;

	if (pid <= 0 || len < 2 || len > 20)
		return -1;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(path, sizeof(path),
		     "/proc/%d/root/usr/lib/debug/.build-id/%.2s/%s.debug",
		     pid, hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sfp_file_build_id(path, fid, sizeof(fid), &flen) || flen != len ||
	    memcmp(fid, id, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A mapping of an entry's file: what a sample's (pid, ip) hits. */
struct bid_map {
	uint32_t pid;
	uint64_t start, end;
	size_t ent;
};

struct bid_collect {
	char dir[PATH_MAX];
	uint64_t budget;
	struct bid_ent *ents;
	size_t nr, cap;
	size_t nr_fds, max_fds;
	struct bid_map *maps;
	size_t nr_maps, cap_maps;
};

int bid_collect_new(const char *dir, uint64_t budget, struct bid_collect **out)
{
	struct bid_collect *bc = calloc(1, sizeof(*bc));
	struct rlimit rl;
	int err;

	*out = NULL;
	if (!bc)
		return -ENOMEM;
	if (dir) {
		if (strlen(dir) >= sizeof(bc->dir)) {
			free(bc);
			return -ENAMETOOLONG;
		}
		memcpy(bc->dir, dir, strlen(dir) + 1);
	} else if ((err = sfp_buildid_dir(bc->dir, sizeof(bc->dir)))) {
		free(bc);
		return err;
	}
	bc->budget = budget;
	/* Room for a descriptor per DSO of a whole machine (-a). */
	bc->max_fds = 256;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < MAX_FDS + 256) {
			rl.rlim_cur = rl.rlim_max < MAX_FDS + 256 ? rl.rlim_max
								  : MAX_FDS + 256;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur > 512)
			bc->max_fds = rl.rlim_cur - 256 > MAX_FDS
					      ? MAX_FDS
					      : (size_t)rl.rlim_cur - 256;
	}
	*out = bc;
	return 0;
}

static struct bid_ent *find(struct bid_collect *bc, const uint8_t *id,
			    size_t len)
{
	size_t i;

	for (i = 0; i < bc->nr; i++)
		if (bc->ents[i].len == len && !memcmp(bc->ents[i].id, id, len))
			return &bc->ents[i];
	return NULL;
}

static void add_map(struct bid_collect *bc, uint32_t pid, uint64_t start,
		    uint64_t len, size_t ent)
{
	struct bid_map *m;

	if (!len || start + len < start)
		return;
	if (bc->nr_maps == bc->cap_maps) {
		size_t cap = bc->cap_maps ? bc->cap_maps * 2 : 256;

		m = realloc(bc->maps, cap * sizeof(*m));
		if (!m)
			return;	/* (the profile's mappings still count) */
		bc->maps = m;
		bc->cap_maps = cap;
	}
	m = &bc->maps[bc->nr_maps++];
	m->pid = pid;
	m->start = start;
	m->end = start + len;
	m->ent = ent;
}

static int map_cmp(const void *a, const void *b)
{
	const struct bid_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Mark every entry mapped at ip in pid (bc->maps sorted): a range mapped
 * twice in the recording (exec, a new mmap) marks both files. */
static void hit_ip(struct bid_collect *bc, uint32_t pid, uint64_t ip,
		   bool *hit)
{
	size_t lo = 0, hi = bc->nr_maps, i;

	/* the first map of pid starting above ip */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct bid_map *m = &bc->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && bc->maps[i].pid == pid;)
		if (ip < bc->maps[i].end)
			hit[bc->maps[i].ent] = true;
}

/* The entries the samples' frames fall in, by process and address. */
static void hits_by_address(struct bid_collect *bc,
			    const struct sfp_profile *prof, bool *hit)
{
	size_t i, n = sfp_profile__nr_samples(prof);

	if (!bc->nr_maps)
		return;
	qsort(bc->maps, bc->nr_maps, sizeof(*bc->maps), map_cmp);
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(prof, i);
		uint32_t node = s->stack;

		if (s->ip_loc != UINT32_MAX)
			hit_ip(bc, s->pid, sfp_profile__loc(prof, s->ip_loc)->ip,
			       hit);
		while (node && node != UINT32_MAX) {
			const struct sfp_profile_node *nd =
				sfp_profile__node(prof, node);

			if (nd->loc != UINT32_MAX)
				hit_ip(bc, s->pid,
				       sfp_profile__loc(prof, nd->loc)->ip, hit);
			node = nd->parent;
		}
	}
}

void bid_collect_mmap2(struct bid_collect *bc, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	const uint8_t *b = rec;
	char path[PATH_MAX + 64];
	struct bid_ent *e;
	uint64_t start, len;
	uint32_t pid;
	const char *name;

	/* header, pid, tid, addr, len, pgoff, then size(1) + 3 reserved +
	 * id[20], prot, flags, filename */
	if (!bc || h->type != PERF_RECORD_MMAP2 ||
	    !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) || size < 80 ||
	    b[40] < 2 || b[40] > 20 || !memchr(b + 72, 0, size - 72))
		return;
	name = (const char *)b + 72;
	if (name[0] != '/')
		return;
	memcpy(&pid, b + 8, 4);
	memcpy(&start, b + 16, 8);
	memcpy(&len, b + 24, 8);
	if ((e = find(bc, b + 44, b[40]))) {
		add_map(bc, pid, start, len, (size_t)(e - bc->ents));
		return;
	}
	if (bc->nr == bc->cap) {
		size_t cap = bc->cap ? bc->cap * 2 : 64;
		struct bid_ent *n = realloc(bc->ents, cap * sizeof(*n));

		if (!n)
			return;
		bc->ents = n;
		bc->cap = cap;
	}
	e = &bc->ents[bc->nr];
	memset(e, 0, sizeof(*e));
	memcpy(e->id, b + 44, b[40]);
	e->len = b[40];
	e->fd = -1;
	e->dbg_fd = -1;
	e->name = strdup(name);
	if (!e->name)
		return;
	bc->nr++;
	add_map(bc, pid, start, len, bc->nr - 1);
	if (bc->nr_fds < bc->max_fds &&
	    !sfp_proc_mapped_file((int)pid, name, start, start + len, e->id,
				  e->len, path, sizeof(path))) {
		e->fd = open(path, O_RDONLY | O_CLOEXEC);
		bc->nr_fds += e->fd >= 0;
	}
	if (bc->nr_fds < bc->max_fds &&
	    (e->dbg_fd = image_debug_file((int)pid, e->id, e->len)) >= 0)
		bc->nr_fds++;
}

/* Where to read an entry's bytes now. */
static int source(const struct bid_ent *e, char *buf, size_t len)
{
	if (e->fd >= 0) {
		snprintf(buf, len, "/proc/self/fd/%d", e->fd);
		return 0;
	}
	return sfp_proc_mapped_file(0, e->name, 0, 0, e->id, e->len, buf, len);
}

int bid_collect_finish(struct bid_collect *bc, const char *path, bool quiet)
{
	SFP_OPTS(sfp_profile_opts, po, .no_symbols = true);
	/* Local debug files only: the end of a recording must not wait on
	 * a debuginfod server (report fetches, and caches, on demand). */
	SFP_OPTS(sfp_symbolizer_opts, so, .no_demangle = true,
		 .debuginfod = SFP_DEBUGINFOD_OFF);
	struct sfp_symbolizer *sym = NULL;
	struct sfp_profile *prof = NULL;
	uint64_t added = 0;
	size_t i, nr_new = 0, nr_hit = 0, nr_over = 0, nr_gone = 0;
	bool *hit;
	int err;

	if (!bc || !bc->nr || !strcmp(path, "-"))
		return 0;
	hit = calloc(bc->nr, sizeof(*hit));
	if (!hit)
		return -ENOMEM;
	/* Which DSOs the samples hit: by the process and address of their
	 * frames in the MMAP2 records written (hits_by_address()), and the
	 * mappings the profile gives (a process forked during the recording
	 * has no MMAP2 records of its own). */
	err = sfp_profile__load(path, &po, &prof);
	if (err) {
		cli_err("build-id cache: cannot read %s back: %s", path,
			sfp_strerror(err));
		free(hit);
		return err;
	}
	for (i = 0; i < sfp_profile__nr_mappings(prof); i++) {
		const struct sfp_profile_mapping *m = sfp_profile__mapping(prof, i);
		struct bid_ent *e;

		if (m->build_id_size &&
		    (e = find(bc, m->build_id, m->build_id_size)))
			hit[e - bc->ents] = true;
	}
	hits_by_address(bc, prof, hit);
	sfp_profile__free(&prof);
	if (sfp_symbolizer__new(&so, &sym))
		sym = NULL;
	for (i = 0; i < bc->nr; i++) {
		const struct bid_ent *e = &bc->ents[i];
		struct sfp_symbolizer_dso *d = NULL;
		char src[PATH_MAX + 64], link[PATH_MAX], dbg_src[64];
		const char *dbg = NULL;

		if (!hit[i])
			continue;
		nr_hit++;
		if (!sfp_buildid_cache_path(bc->dir, e->id, e->len, "elf", link,
					    sizeof(link)) &&
		    !access(link, R_OK))
			continue;	/* cached by an earlier run (or perf) */
		if (source(e, src, sizeof(src))) {
			nr_gone++;
			continue;
		}
		/* Its debug file, found as the symbolizer finds it (build-id
		 * directories, debuglink): the one seam for every source. */
		if (e->dbg_fd >= 0) {
			/* the one inside its image, found while it ran */
			snprintf(dbg_src, sizeof(dbg_src), "/proc/self/fd/%d",
				 e->dbg_fd);
			dbg = dbg_src;
		} else if (sym && !sfp_symbolizer__get_dso(sym, -1, src, e->id,
							   e->len, &d)) {
			dbg = sfp_symbolizer_dso__debug_path(d);
		}
		if (dbg && d && !strcmp(dbg, sfp_symbolizer_dso__path(d)))
			dbg = NULL;	/* (the file itself: none found) */
		if (bc->budget) {
			struct stat st;
			uint64_t sz = stat(src, &st) ? 0 : (uint64_t)st.st_size;

			if (dbg && !stat(dbg, &st))
				sz += (uint64_t)st.st_size;
			if (added + sz > bc->budget) {
				nr_over++;
				continue;
			}
		}
		err = sfp_buildid_cache_add(bc->dir, e->name, e->id, e->len, src,
					    dbg, &added);
		if (!err)
			nr_new++;
		else if (err != -EEXIST)
			cli_err("build-id cache: %s: %s", e->name,
				sfp_strerror(err));
	}
	sfp_symbolizer__free(&sym);
	free(hit);
	if (!quiet) {
		fprintf(stderr, "  build-id cache %s: %zu DSOs hit, %zu added "
			"(%.1f MB)", bc->dir, nr_hit, nr_new,
			(double)added / 1e6);
		if (nr_over)
			fprintf(stderr, ", %zu over the size budget", nr_over);
		if (nr_gone)
			fprintf(stderr, ", %zu no longer readable", nr_gone);
		fputc('\n', stderr);
	}
	return 0;
}

void bid_collect_free(struct bid_collect **bcp)
{
	struct bid_collect *bc = *bcp;
	size_t i;

	if (!bc)
		return;
	for (i = 0; i < bc->nr; i++) {
		if (bc->ents[i].fd >= 0)
			close(bc->ents[i].fd);
		if (bc->ents[i].dbg_fd >= 0)
			close(bc->ents[i].dbg_fd);
		free(bc->ents[i].name);
	}
	free(bc->ents);
	free(bc->maps);
	free(bc);
	*bcp = NULL;
}
