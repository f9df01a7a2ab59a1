// SPDX-License-Identifier: MIT
/*
 * SFrame tables into BPF maps (see tables.h).  The conversion keeps what
 * the BPF walk evaluates (CFA from sp or fp, optionally dereferenced; RA
 * and fp saved at CFA offsets; RA undefined) and marks every other rule
 * "unsupported", which makes the BPF side use the frame pointer for that
 * row, as the user-space unwinder does for a row it cannot evaluate.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/defer-shared.h"
#include "bpf/tables.h"
#include "common/fileid.h"
#include "unwind/module.h"

#define MAX_MODS 4096
/* A module larger than this is refused (it would evict everything). */
#define MAX_FDES_PER_MOD (1U << 20)

struct tmod {
	struct sfb_mod_key key;
	char *path;
	bool in_maps;		/* else: known to have no table, or */
	bool deferred;		/* not loaded for want of free room (its
				   sizes known: the next prefetch checks
				   the room without reading it again) */
	bool evicted;		/* and it was in before: only an unwind
				   that needs it brings it back */
	uint32_t fde_base, nr_fdes;
	uint32_t fre_base, nr_fres;
	uint64_t last_use;
};

struct sfb_tables {
	int mods_fd;
	struct sfb_fde *fde_mem;
	struct sfb_fre *fre_mem;
	uint32_t fde_cap, fre_cap;
	char *cache_dir;
	struct tmod *mods;
	size_t nr_mods;
	uint64_t tick;
	/* Loads that evict, limited (sfb_tables__evict_budget()): rows
	 * per second, what is left now, and when it was last topped up. */
	uint32_t evict_rate;
	double evict_left;
	uint64_t evict_ns;
	struct sfb_tables_stats st;
};

uint64_t sfb_kernel_dev(uint64_t st_dev)
{
	return ((uint64_t)major(st_dev) << 20) | minor(st_dev);
}

int sfb_tables__new(int mods_fd, void *fde_mem, uint32_t fde_cap,
		    void *fre_mem, uint32_t fre_cap, const char *cache_dir,
		    struct sfb_tables **out)
{
	struct sfb_tables *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->mods_fd = mods_fd;
	t->fde_mem = fde_mem;
	t->fre_mem = fre_mem;
	t->fde_cap = fde_cap;
	t->fre_cap = fre_cap;
	t->mods = calloc(MAX_MODS, sizeof(*t->mods));
	if (cache_dir)
		t->cache_dir = strdup(cache_dir);
	if (!t->mods || (cache_dir && !t->cache_dir)) {
		sfb_tables__free(&t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

static struct tmod *find_mod(struct sfb_tables *t, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < t->nr_mods; i++)
		if (t->mods[i].key.dev == dev && t->mods[i].key.ino == ino)
			return &t->mods[i];
	return NULL;
}

/*
 * A free range of n entries in [0, cap) given the ranges in use (base, nr
 * pairs read through get()).  Return: its start, or UINT32_MAX.
 */
static uint32_t find_gap(struct sfb_tables *t, bool fre, uint32_t n)
{
	uint32_t cap = fre ? t->fre_cap : t->fde_cap, cand = 0;
	bool moved = true;
	size_t i;

	/* First fit: move past every range that overlaps the candidate
	 * until none does (few modules: quadratic is fine). */
	while (moved) {
		moved = false;
		if ((uint64_t)cand + n > cap)
			return UINT32_MAX;
		for (i = 0; i < t->nr_mods; i++) {
			const struct tmod *m = &t->mods[i];
			uint32_t b = fre ? m->fre_base : m->fde_base;
			uint32_t k = fre ? m->nr_fres : m->nr_fdes;

			if (!m->in_maps || !k)
				continue;
			if (cand < b + k && b < cand + n) {
				cand = b + k;
				moved = true;
			}
		}
	}
	return cand;
}

static void evict(struct sfb_tables *t, struct tmod *m)
{
	bpf_map_delete_elem(t->mods_fd, &m->key);
	m->in_maps = false;
	t->st.fdes -= m->nr_fdes;
	t->st.fres -= m->nr_fres;
	t->st.evicted++;
	pr_debug("bpf-defer: evicted the table of %s", m->path);
	/* Known with its sizes, not loaded: an unwind that needs it
	 * loads it again when the budget allows (a mere mapping does not:
	 * a prefetch that refills the room evictions made would thrash). */
	m->deferred = true;
	m->evicted = true;
}

void sfb_tables__evict_budget(struct sfb_tables *t, uint32_t rows_per_s)
{
	t->evict_rate = rows_per_s;
	t->evict_left = (double)t->fre_cap;
	t->evict_ns = 0;
}

/* Whether a table of nr FREs may be loaded by evicting others now (and
 * then it is paid for): the budget fills at evict_rate rows a second up
 * to the whole array, so that the first load of any table goes at once
 * and a working set larger than the arrays costs a bounded share of a
 * CPU in reloads. */
static bool evict_allowed(struct sfb_tables *t, uint32_t nr, bool pay)
{
	struct timespec ts;
	uint64_t now;

	if (!t->evict_rate)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (t->evict_ns)
		t->evict_left += (double)(now - t->evict_ns) / 1e9 *
				 t->evict_rate;
	t->evict_ns = now;
	if (t->evict_left > (double)t->fre_cap)
		t->evict_left = (double)t->fre_cap;
	if (t->evict_left < (double)nr)
		return false;
	if (pay)
		t->evict_left -= (double)nr;
	return true;
}

/* Room for nf FDEs and nr FREs, evicting least recently used tables
 * when may_evict (else -ENOSPC when there is no free room) and the
 * eviction budget allows (else -EBUSY). */
static int make_room(struct sfb_tables *t, uint32_t nf, uint32_t nr,
		     bool may_evict, uint32_t *fb, uint32_t *rb)
{
	bool paid = false;

	for (;;) {
		struct tmod *lru = NULL;
		size_t i;

		*fb = find_gap(t, false, nf);
		*rb = find_gap(t, true, nr);
		if (*fb != UINT32_MAX && *rb != UINT32_MAX)
			return 0;
		if (!may_evict)
			return -ENOSPC;
		if (!paid && !evict_allowed(t, nr, true))
			return -EBUSY;
		paid = true;
		for (i = 0; i < t->nr_mods; i++)
			if (t->mods[i].in_maps &&
			    (!lru || t->mods[i].last_use < lru->last_use))
				lru = &t->mods[i];
		if (!lru)
			return -ENOSPC;
		evict(t, lru);
	}
}

static int cmp_fde(const void *a, const void *b)
{
	const struct sfb_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Convert one row; false when it has to be marked unsupported. */
static bool conv_row(const struct sfp_sframe_row *r, struct sfb_fre *f)
{
	if (r->flags & SFP_ROW_RA_UNDEFINED || r->ra.kind == SFP_LOC_UNDEFINED) {
		f->flags |= SFB_FRE_RA_UNDEF;
		return true;
	}
	if (r->flags & SFP_ROW_SIGNAL)
		f->flags |= SFB_FRE_SIGNAL;
	if (r->cfa.kind != SFP_LOC_REG && r->cfa.kind != SFP_LOC_REG_DEREF)
		return false;
	if (r->cfa.reg == SFP_DWARF_AMD64_FP)
		f->flags |= SFB_FRE_CFA_FP;
	else if (r->cfa.reg != SFP_DWARF_AMD64_SP)
		return false;
	if (r->cfa.kind == SFP_LOC_REG_DEREF)
		f->flags |= SFB_FRE_CFA_DEREF;
	f->cfa_off = r->cfa.offset;
	switch (r->ra.kind) {
	case SFP_LOC_NONE:
		f->ra_off = -8;		/* x86-64: the call pushed it */
		break;
	case SFP_LOC_CFA_DEREF:
		if (r->ra.offset < INT16_MIN || r->ra.offset > INT16_MAX)
			return false;
		f->ra_off = (int16_t)r->ra.offset;
		break;
	default:
		return false;
	}
	switch (r->fp.kind) {
	case SFP_LOC_NONE:
		break;
	case SFP_LOC_CFA_DEREF:
		if (r->fp.offset < INT16_MIN || r->fp.offset > INT16_MAX)
			return false;
		f->flags |= SFB_FRE_FP_SAVED;
		f->fp_off = (int16_t)r->fp.offset;
		break;
	default:
		return false;
	}
	return true;
}

/*
 * The unwinder's module of the file the kernel knows as (dev, ino) at
 * path: keyed by the identity rule (common/fileid.h) like every other
 * user of the registry, so that another file at the same path (a
 * container's, a binary replaced on disk) is never this one's module,
 * and one file reached by two paths (the host's and /proc/PID/root/...)
 * is one module.  dev in the kernel's encoding (sfb_kernel_dev()); the
 * registry's is st_dev's, as the rule's dev is everywhere else.
 */
static struct unw_module *module_of(const char *path, uint64_t dev,
				    uint64_t ino)
{
	struct sfp_file_id id = { .path = path };

	if (strcmp(path, "[vdso]")) {
		id.dev = makedev((unsigned)(dev >> 20),
				 (unsigned)(dev & 0xfffff));
		id.ino = ino;
	}
	return unw_module_get_id(&id, NULL, 0, NULL, 0, 0, 0);
}

/* Write m's table into the maps.  Return: 0, -ENOENT no table, -ENOSPC
 * no free room and !may_evict, -errno. */
static int load_table(struct sfb_tables *t, struct tmod *tm, const char *path,
		      bool may_evict)
{
	struct unw_table_opts topts = { .cache_dir = t->cache_dir };
	struct sfb_fde *fd = NULL;
	struct sfb_mod mod;
	struct unw_module *m;
	uint32_t nf, nr = 0, i, j, k, fb, rb;
	uint64_t base = UINT64_MAX;
	int err;

	m = module_of(path, tm->key.dev, tm->key.ino);
	if (!m)
		return -ENOMEM;
	err = unw_module_load(m, &topts);
	if (err)
		goto out;
	if (!m->table) {
		err = -ENOENT;
		goto out;
	}
	nf = sfp_sframe__num_funcs(m->table);
	if (!nf || nf > MAX_FDES_PER_MOD || nf > t->fde_cap) {
		err = nf ? -E2BIG : -ENOENT;
		goto out;
	}
	fd = calloc(nf, sizeof(*fd));
	if (!fd) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nf; i++) {
		struct sfp_sframe_func f;

		if (sfp_sframe__func(m->table, i, &f))
			continue;
		if (f.start < base)
			base = f.start;
		if (f.num_rows > UINT16_MAX || nr + f.num_rows < nr) {
			err = -E2BIG;
			goto out;
		}
		nr += f.num_rows;
	}
	if (nr > t->fre_cap) {
		err = -E2BIG;
		goto out;
	}
	tm->nr_fdes = nf;	/* for a deferred module: what it needs */
	tm->nr_fres = nr;
	err = make_room(t, nf, nr, may_evict, &fb, &rb);
	if (err)
		goto out;
	/* FREs go straight into the mmap'ed array, FDEs via fd[] (sorted). */
	k = 0;
	for (i = 0; i < nf; i++) {
		struct sfp_sframe_func f;

		memset(&fd[i], 0, sizeof(fd[i]));
		if (sfp_sframe__func(m->table, i, &f) ||
		    f.start - base > UINT32_MAX) {
			fd[i].start = UINT32_MAX;
			continue;
		}
		fd[i].start = (uint32_t)(f.start - base);
		fd[i].size = f.size;
		fd[i].fre_idx = rb + k;
		if (f.pc_type == SFP_SFRAME_PC_MASK) {
			fd[i].flags |= SFB_FDE_PCMASK;
			fd[i].rep_size = f.rep_size;
		}
		for (j = 0; j < f.num_rows && k < nr; j++) {
			struct sfp_sframe_row row;
			struct sfb_fre fr;

			memset(&fr, 0, sizeof(fr));
			if (sfp_sframe__row(m->table, i, j, &row)) {
				fr.flags = SFB_FRE_UNSUPP;
			} else {
				fr.start = (uint32_t)(row.flags & SFP_ROW_PCMASK
							      ? row.start
							      : row.start - f.start);
				if (!conv_row(&row, &fr))
					fr.flags |= SFB_FRE_UNSUPP;
			}
			t->fre_mem[rb + k] = fr;
			k++;
		}
		fd[i].nr_fres = (uint16_t)(rb + k - fd[i].fre_idx);
	}
	qsort(fd, nf, sizeof(*fd), cmp_fde);
	memcpy(&t->fde_mem[fb], fd, (size_t)nf * sizeof(*fd));

	memset(&mod, 0, sizeof(mod));
	mod.fde_base = fb;
	mod.nr_fdes = nf;
	mod.base = base;
	for (i = 0; i < m->num_loads && mod.nr_segs < SFB_MAX_SEGS; i++) {
		const struct unw_load *l = &m->loads[i];
		uint64_t lo = l->offset & ~4095ULL;

		mod.segs[mod.nr_segs].off = lo;
		mod.segs[mod.nr_segs].size = l->offset + l->filesz - lo;
		mod.segs[mod.nr_segs].adj = (int64_t)(l->vaddr - l->offset);
		mod.nr_segs++;
	}
	/* The slices are written: publish the module. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (bpf_map_update_elem(t->mods_fd, &tm->key, &mod, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	tm->in_maps = true;
	tm->fde_base = fb;
	tm->nr_fdes = nf;
	tm->fre_base = rb;
	tm->nr_fres = nr;
	t->st.loaded++;
	t->st.fdes += nf;
	t->st.fres += nr;
	pr_debug("bpf-defer: %s: %u FDEs, %u FREs at %u/%u", path, nf, nr, fb,
		 rb);
out:
	free(fd);
	unw_module_put(m);
	return err;
}

/* The list full (weeks of programs): what it knows of modules not in
 * the maps (no table, deferred) is let go, and learned again if met. */
static void forget_unloaded(struct sfb_tables *t)
{
	size_t i = 0;

	while (i < t->nr_mods) {
		if (t->mods[i].in_maps) {
			i++;
			continue;
		}
		free(t->mods[i].path);
		t->mods[i] = t->mods[--t->nr_mods];
	}
}

static int ensure(struct sfb_tables *t, const char *path, uint64_t dev,
		  uint64_t ino, bool may_evict)
{
	struct tmod *tm, nm;
	int err;

	if (!dev && !ino && strcmp(path, "[vdso]")) {
		struct stat st;

		if (stat(path, &st))
			return -errno;
		dev = sfb_kernel_dev(st.st_dev);
		ino = st.st_ino;
	}
	tm = find_mod(t, dev, ino);
	if (tm && !tm->deferred) {
		tm->last_use = ++t->tick;
		return 0;
	}
	if (tm) {
		/* deferred or evicted before: its sizes are known, so
		 * whether it fits is known without reading it again */
		if (!may_evict && tm->evicted)
			return 0;
		if ((find_gap(t, false, tm->nr_fdes) == UINT32_MAX ||
		     find_gap(t, true, tm->nr_fres) == UINT32_MAX) &&
		    (!may_evict || !evict_allowed(t, tm->nr_fres, false))) {
			if (may_evict)
				t->st.throttled++;
			return 0;
		}
		free(tm->path);
		*tm = t->mods[--t->nr_mods];
	}
	if (t->nr_mods >= MAX_MODS)
		forget_unloaded(t);
	if (t->nr_mods >= MAX_MODS)
		return -ENOSPC;
	/* Loaded before it joins the list: evictions move list entries. */
	memset(&nm, 0, sizeof(nm));
	nm.key.dev = dev;
	nm.key.ino = ino;
	nm.path = strdup(path);
	if (!nm.path)
		return -ENOMEM;
	err = load_table(t, &nm, path, may_evict);
	if ((err == -ENOSPC && !may_evict) || err == -EBUSY) {
		/* remembered with its sizes; the first unwind that needs
		 * it asks (a miss), and that load evicts */
		if (err == -EBUSY)
			t->st.throttled++;
		else
			t->st.deferred++;
		pr_debug("bpf-defer: %s: not loaded (%s)", path,
			 err == -EBUSY ? "eviction budget spent"
				       : "no free room");
		nm.deferred = true;
		err = 0;
	} else if (err) {
		t->st.failed++;
		nm.nr_fdes = nm.nr_fres = 0;
		pr_debug("bpf-defer: %s: no table (%s)", path,
			 sfp_strerror(err));
	}
	if (t->nr_mods >= MAX_MODS) {
		free(nm.path);
		return -ENOSPC;
	}
	nm.last_use = ++t->tick;
	t->mods[t->nr_mods++] = nm;
	return err == -ENOMEM ? err : 0;
}

int sfb_tables__ensure(struct sfb_tables *t, const char *path, uint64_t dev,
		       uint64_t ino)
{
	return ensure(t, path, dev, ino, true);
}

bool sfb_tables__prefetch_known(struct sfb_tables *t, uint64_t dev,
				uint64_t ino)
{
	struct tmod *tm = find_mod(t, dev, ino);

	if (!tm || (tm->deferred && !tm->evicted))
		return false;	/* new, or waiting for room: the path's way */
	if (!tm->deferred)
		tm->last_use = ++t->tick;
	return true;
}

int sfb_tables__prefetch(struct sfb_tables *t, const char *path)
{
	uint64_t loaded = t->st.loaded;
	int err = ensure(t, path, 0, 0, false);

	return err ? err : t->st.loaded != loaded;
}

/* Parse a /proc/PID/maps line: start, perms, path (NULL when none). */
static bool parse_maps_line(char *line, uint64_t *start, bool *exec,
			    char **path)
{
	unsigned long long s, e, off;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off,
		   &pos) < 4 || !pos)
		return false;
	*start = s;
	*exec = perms[2] == 'x';
	line[strcspn(line, "\n")] = 0;
	*path = line[pos] == '/' ? line + pos : NULL;
	return true;
}

const char *sfb_tables__path_of(pid_t pid, const char *path, char *buf,
				size_t len)
{
	uint64_t theirs = sfp_proc_mntns((int)pid);

	/* Our mount namespace, or one we cannot tell: the path as we see
	 * it.  Another one (a container): its root, even where we see a
	 * file at that path too (an image's libc.so.6 at the host's own
	 * path is another file). */
	if ((!theirs || theirs == sfp_proc_mntns((int)getpid())) &&
	    !access(path, F_OK))
		return path;
	snprintf(buf, len, "/proc/%d/root%s", (int)pid, path);
	return buf;
}

int sfb_tables__preload_pid(struct sfb_tables *t, pid_t pid, const char *only)
{
	char alt[PATH_MAX + 32];
	char fname[64], line[4096], *path;
	uint64_t start;
	bool exec;
	FILE *f;
	int err = 0;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f))
		if (parse_maps_line(line, &start, &exec, &path) && exec &&
		    path && (!only || strstr(path, only)))
			err = sfb_tables__ensure(
				t, sfb_tables__path_of(pid, path, alt, sizeof(alt)),
				0, 0);
	fclose(f);
	return err;
}

int sfb_tables__resolve_miss(struct sfb_tables *t, pid_t pid, uint64_t dev,
			     uint64_t ino, uint64_t vm_start)
{
	char fname[64], line[4096], *path, alt[PATH_MAX + 32];
	uint64_t start;
	bool exec;
	FILE *f;
	int err = -ENOENT;

	{
		const struct tmod *tm = find_mod(t, dev, ino);

		/* known: loaded meanwhile, or has no table (a deferred
		 * one is loaded now: an unwind needs it) */
		if (tm && !tm->deferred)
			return 0;
	}
	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;	/* gone: the next miss of another task */
	while (fgets(line, sizeof(line), f)) {
		struct stat st;

		if (!parse_maps_line(line, &start, &exec, &path) || !path ||
		    start != vm_start)
			continue;
		/* The path must still name the mapped file (in the
		 * process's own root when it has one). */
		path = (char *)sfb_tables__path_of(pid, path, alt, sizeof(alt));
		if (stat(path, &st) || (uint64_t)st.st_ino != ino ||
		    sfb_kernel_dev(st.st_dev) != dev)
			break;
		err = sfb_tables__ensure(t, path, dev, ino);
		break;
	}
	fclose(f);
	return err;
}

void sfb_tables__stats(const struct sfb_tables *t, struct sfb_tables_stats *st)
{
	*st = t->st;
}

void sfb_tables__free(struct sfb_tables **tp)
{
	struct sfb_tables *t = *tp;
	size_t i;

	if (!t)
		return;
	for (i = 0; t->mods && i < t->nr_mods; i++)
		free(t->mods[i].path);
	free(t->mods);
	free(t->cache_dir);
	free(t);
	*tp = NULL;
}
