// SPDX-License-Identifier: MIT
/*
 * Machine model from side-band records (see machine.h).
 *
 * Processes and threads live in id tables (common/idmap.h) keyed by
 * pid/tid; each process has a sorted, non-overlapping array of maps, and a
 * new mapping replaces the parts of older ones it covers, as mmap() does
 * (and as perf's maps__fixup_overlap does).  DSOs are interned by name and
 * identity (common/fileid.h): the build-id an MMAP2 carried, else its
 * device and inode, so containers' different files at one path stay
 * apart.
 * Kernel maps (MMAP records of pid -1) go to one extra process.
 */
#include <sys/sysmacros.h>

#include "common/fileid.h"
#include "common/htab.h"
#include "common/idmap.h"
#include "perf/machine.h"

#define KERNEL_PID 0xffffffffu
#define COMM_LEN 32

struct proc {
	uint32_t pid;		/* first: the id table's key */
	uint64_t gen;		/* m->gen when this map table last changed */
	uint32_t jitdump;	/* DSO index + 1 of the jit-PID.dump it
				 * mapped (0: none) */
	struct sfp_pmap *maps;
	size_t nr, cap;
};

struct thr {
	uint32_t tid, pid;	/* tid first: the id table's key */
	char comm[COMM_LEN];
};

struct sfp_machine {
	struct sfp_idmap procs;	/* struct proc by pid */
	struct sfp_idmap thrs;	/* struct thr by tid */
	struct sfp_pdso *dsos;
	size_t ndsos, dso_cap;
	struct sfp_htab dso_index;	/* dsos by name */
	uint64_t gen;		/* bumped by every change of a map table */
	/* the last mapping found; valid while gen stays last_gen (an MMAP
	 * reallocates the maps array, and a new process may move procs) */
	const struct sfp_pmap *last;
	uint32_t last_pid;
	uint64_t last_gen;
	/* the last sfp_machine__pid_gen() answer, valid while gen stays */
	uint32_t pg_pid;
	uint64_t pg_gen, pg_val;
	/* KSYMBOL ranges, sorted and disjoint */
	struct sfp_ksym *ksyms;
	size_t nksyms, ksym_cap;
	uint64_t ksym_gen;
	uint64_t comm_gen;	/* bumped by every change of a thread's name
				 * or of which threads there are */
	char tmp[COMM_LEN];
};

SFP_HIDDEN int sfp_machine__new(struct sfp_machine **out)
{
	struct sfp_machine *m = calloc(1, sizeof(*m));

	*out = m;
	if (!m)
		return -ENOMEM;
	/* 64 slots at a load of 1/2: what the tables had by hand */
	sfp_idmap_init(&m->procs, sizeof(struct proc), 64, 50);
	sfp_idmap_init(&m->thrs, sizeof(struct thr), 64, 50);
	return 0;
}

SFP_HIDDEN void sfp_machine__free(struct sfp_machine **mp)
{
	struct sfp_machine *m;
	struct proc *p;
	size_t i, pos = 0;

	if (!mp || !*mp)
		return;
	m = *mp;
	while ((p = sfp_idmap_next(&m->procs, &pos)))
		free(p->maps);
	sfp_idmap_free(&m->procs);
	sfp_idmap_free(&m->thrs);
	for (i = 0; i < m->ndsos; i++)
		free(m->dsos[i].name);
	free(m->dsos);
	sfp_htab_free(&m->dso_index);
	for (i = 0; i < m->nksyms; i++)
		free(m->ksyms[i].name);
	free(m->ksyms);
	free(m);
	*mp = NULL;
}

/* --- processes ----------------------------------------------------------- */

static struct proc *proc_find(struct sfp_machine *m, uint32_t pid)
{
	return sfp_idmap_find(&m->procs, pid);
}

/* The process pid, made when new.  NULL: no memory.  May move others. */
static struct proc *proc_new(struct sfp_machine *m, uint32_t pid)
{
	bool added;

	return sfp_idmap_get(&m->procs, pid, &added);
}

static int proc_reserve(struct proc *p, size_t n)
{
	struct sfp_pmap *v;
	size_t ncap;

	if (n <= p->cap)
		return 0;
	ncap = p->cap ? p->cap * 2 : 16;
	while (ncap < n)
		ncap *= 2;
	v = realloc(p->maps, ncap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->maps = v;
	p->cap = ncap;
	return 0;
}

/* Insert [start, end) replacing what it overlaps; keeps the array sorted. */
static int proc_insert(struct proc *p, const struct sfp_pmap *nm)
{
	struct sfp_pmap *old = p->maps, *v;
	size_t i, n = 0, on = p->nr;
	bool placed = false;

	/* At most two more: nm, and the right piece of the one old map that
	 * nm falls strictly inside (maps do not overlap, so only one can
	 * surround it).  Sized exactly: an agent keeps this array for every
	 * process it sees, and twice the count cost it 1-2 KiB a process. */
	v = malloc((on + 2) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < on; i++) {
		struct sfp_pmap o = old[i];

		if (!placed && o.start >= nm->start) {
			v[n++] = *nm;
			placed = true;
		}
		if (o.end <= nm->start || o.start >= nm->end) {
			v[n++] = o;
			continue;
		}
		if (o.start < nm->start) {	/* left piece survives */
			struct sfp_pmap l = o;

			l.end = nm->start;
			v[n++] = l;
			if (!placed) {
				v[n++] = *nm;
				placed = true;
			}
		}
		if (o.end > nm->end) {		/* right piece survives */
			struct sfp_pmap r = o;

			r.pgoff += nm->end - o.start;
			r.start = nm->end;
			if (!placed) {
				v[n++] = *nm;
				placed = true;
			}
			v[n++] = r;
		}
	}
	if (!placed)
		v[n++] = *nm;
	free(old);
	p->maps = v;
	p->nr = n;
	p->cap = on + 2;
	return 0;
}

/* --- threads ------------------------------------------------------------- */

static struct thr *thr_find(struct sfp_machine *m, uint32_t tid)
{
	return sfp_idmap_find(&m->thrs, tid);
}

/* The thread tid, made when new.  NULL: no memory.  May move others. */
static struct thr *thr_new(struct sfp_machine *m, uint32_t tid)
{
	bool added;
	struct thr *t = sfp_idmap_get(&m->thrs, tid, &added);

	if (!t || !added)
		return t;
	t->pid = tid;
	/* perf names the idle task (pid 0) "swapper" before any COMM */
	if (tid)
		snprintf(t->comm, sizeof(t->comm), ":%d", (int)tid);
	else
		snprintf(t->comm, sizeof(t->comm), "swapper");
	m->comm_gen++;
	return t;
}

SFP_HIDDEN void sfp_machine__exit(struct sfp_machine *m, uint32_t pid,
				  uint32_t tid)
{
	struct thr *t = thr_find(m, tid);
	struct proc *p;

	/* the id tables delete without tombstones: a process comes and
	 * goes every few milliseconds on a busy machine */
	if (t) {
		sfp_idmap_delete(&m->thrs, t);
		m->comm_gen++;
	}
	if (pid != tid || !(p = proc_find(m, pid)))
		return;
	free(p->maps);
	sfp_idmap_delete(&m->procs, p);
	m->gen++;	/* maps gone: cached lookups are stale */
}

size_t sfp_machine__nr_procs(const struct sfp_machine *m)
{
	return m->procs.n;
}

/* --- DSOs ---------------------------------------------------------------- */

/* What an MMAP record says the file is (see struct sfp_pdso's key). */
static void dso_key(const struct sfp_perf_event *ev, struct sfp_file_id *k)
{
	memset(k, 0, sizeof(*k));
	k->path = ev->mmap.filename;
	if (ev->type != SFP_PERF_RECORD_MMAP2)
		return;
	if (ev->misc & SFP_PERF_MISC_MMAP_BUILD_ID) {
		k->build_id_len = ev->mmap.build_id_size <= SFP_FILE_ID_MAX ?
					  ev->mmap.build_id_size : 0;
		memcpy(k->build_id, ev->mmap.build_id, k->build_id_len);
		return;
	}
	k->dev = makedev(ev->mmap.maj, ev->mmap.min);
	k->ino = ev->mmap.ino;
}

static bool dso_is(const struct sfp_pdso *d, const char *name,
		   const struct sfp_file_id *k)
{
	struct sfp_file_id a = {
		.path = d->name,
		.dev = d->key_build_id_size ? 0 : d->dev,
		.ino = d->key_build_id_size ? 0 : d->ino,
		.build_id_len = d->key_build_id_size,
	};

	struct sfp_file_id b = *k;

	if (strcmp(d->name, name))
		return false;
	memcpy(a.build_id, d->key_build_id, d->key_build_id_size);
	b.path = name;		/* (NULL in the kernel's and JIT maps' key) */
	return sfp_file_id_same(&a, &b);
}

/* The index's questions: is row idx the file `key` (struct dso_want)?
 * Any file of that name? */
struct dso_want {
	const char *name;
	const struct sfp_file_id *k;
};

static bool dso_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_machine *m = ctx;
	const struct dso_want *w = key;

	return dso_is(&m->dsos[idx], w->name, w->k);
}

static bool dso_row_named(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_machine *m = ctx;

	return !strcmp(m->dsos[idx].name, key);
}

/*
 * The DSO `name` that k identifies (NULL k: the name alone, for the
 * kernel's and JIT maps), made when new.  The index is hashed by name, so
 * a new file of a known name finds one of its namesakes; every file of a
 * name has the first one's index as its first_of_name.
 */
static int dso_intern(struct sfp_machine *m, const char *name, bool kernel,
		      const struct sfp_file_id *k, uint32_t *idx)
{
	static const struct sfp_file_id none;
	uint32_t first = UINT32_MAX, hash = sfp_hash_str(name), i;

	if (!k)
		k = &none;
	i = sfp_htab_find(&m->dso_index, hash, dso_row_is, m,
			  &(struct dso_want){ name, k });
	if (i != SFP_HTAB_NONE) {
		*idx = i;
		return 0;
	}
	/* a new file: MMAP records are few, a second probe is cheap */
	i = sfp_htab_find(&m->dso_index, hash, dso_row_named, m, name);
	if (i != SFP_HTAB_NONE)
		first = m->dsos[i].first_of_name;
	if (m->ndsos == m->dso_cap) {
		size_t ncap = m->dso_cap ? m->dso_cap * 2 : 32;
		struct sfp_pdso *v = realloc(m->dsos, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->dsos = v;
		m->dso_cap = ncap;
	}
	memset(&m->dsos[m->ndsos], 0, sizeof(m->dsos[0]));
	m->dsos[m->ndsos].name = strdup(name);
	if (!m->dsos[m->ndsos].name)
		return -ENOMEM;
	m->dsos[m->ndsos].kernel = kernel;
	m->dsos[m->ndsos].first_of_name =
		first != UINT32_MAX ? first : (uint32_t)m->ndsos;
	if (first != UINT32_MAX)
		m->dsos[first].name_shared = m->dsos[m->ndsos].name_shared =
			true;
	if (k->build_id_len) {
		memcpy(m->dsos[m->ndsos].key_build_id, k->build_id,
		       k->build_id_len);
		m->dsos[m->ndsos].key_build_id_size = k->build_id_len;
		/* the file's build-id is the one its records carry */
		memcpy(m->dsos[m->ndsos].build_id, k->build_id,
		       k->build_id_len);
		m->dsos[m->ndsos].build_id_size = k->build_id_len;
	} else {
		m->dsos[m->ndsos].dev = k->dev;
		m->dsos[m->ndsos].ino = k->ino;
	}
	if (sfp_htab_add(&m->dso_index, hash, (uint32_t)m->ndsos)) {
		free(m->dsos[m->ndsos].name);
		return -ENOMEM;
	}
	*idx = (uint32_t)m->ndsos++;
	return 0;
}

/* perf's names: the kernel image is [kernel.kallsyms], modules [name]. */
static void kernel_dso_name(const char *fn, char *out, size_t len)
{
	const char *b = strrchr(fn, '/');
	size_t n, i;

	if (!strncmp(fn, "[kernel.kallsyms]", 17) || fn[0] == '[') {
		snprintf(out, len, "%s", fn[0] == '[' &&
			 strncmp(fn, "[kernel.kallsyms]", 17) ? fn :
			 "[kernel.kallsyms]");
		return;
	}
	b = b ? b + 1 : fn;
	n = strcspn(b, ".");
	if (n + 3 > len)
		n = len - 3;
	out[0] = '[';
	for (i = 0; i < n; i++)
		out[i + 1] = b[i] == '-' ? '_' : b[i];
	out[n + 1] = ']';
	out[n + 2] = 0;
}

/*
 * perf names executable anonymous memory (and [heap], [stack...], SysV
 * shared memory) after the process's JIT map, "/tmp/perf-PID.map", and
 * takes the frames' names from that file (map__new(): is_anon_memory(),
 * is_no_dso_memory(), PROT_EXEC; an MMAP record without
 * PERF_RECORD_MISC_MMAP_DATA is executable).
 */
static bool jit_map(const struct sfp_perf_event *ev)
{
	const char *f = ev->mmap.filename;
	bool exec = ev->type == SFP_PERF_RECORD_MMAP2 ?
			    (ev->mmap.prot & 4) != 0 :	/* PROT_EXEC */
			    !(ev->misc & (1u << 13));	/* MISC_MMAP_DATA */

	if (!exec || !f)
		return false;
	return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14) ||
	       (ev->type == SFP_PERF_RECORD_MMAP2 &&
		(ev->mmap.flags & 0x40000)) ||		/* MAP_HUGETLB */
	       !strncmp(f, "[stack", 6) || !strncmp(f, "/SYSV", 5) ||
	       !strcmp(f, "[heap]");
}

/*
 * A JIT that writes a jitdump maps the file into the process so that the
 * recording sees where it is (perf inject --jit looks for the same
 * name): ".../jit-PID.dump".
 */
static bool jitdump_name(const char *f)
{
	const char *b = f ? strrchr(f, '/') : NULL;
	size_t n;

	b = b ? b + 1 : f;
	if (!b || strncmp(b, "jit-", 4))
		return false;
	n = strspn(b + 4, "0123456789");
	return n && !strcmp(b + 4 + n, ".dump");
}

SFP_HIDDEN const char *sfp_machine__jitdump(struct sfp_machine *m,
					    uint32_t pid)
{
	struct proc *p = proc_find(m, pid);

	return p && p->jitdump ? m->dsos[p->jitdump - 1].name : NULL;
}

/* --- KSYMBOL ranges --------------------------------------------------------- */

/* The first range that ends above addr (nksyms: none). */
static size_t ksym_lower(const struct sfp_machine *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nksyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ksyms[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Forget the ranges that overlap [start, end). */
static void ksym_remove(struct sfp_machine *m, uint64_t start, uint64_t end)
{
	size_t i = ksym_lower(m, start), j = i;

	while (j < m->nksyms && m->ksyms[j].start < end)
		free(m->ksyms[j++].name);
	if (j == i)
		return;		/* (also: no array yet) */
	memmove(m->ksyms + i, m->ksyms + j,
		(m->nksyms - j) * sizeof(*m->ksyms));
	m->nksyms -= j - i;
}

/*
 * A KSYMBOL record: a registration replaces whatever overlapped it (the
 * kernel reuses the addresses of unloaded programs); an unregistration
 * removes the range, as perf removes its map.  A zero length is taken as
 * one byte, so that the address itself still names it.
 */
static int ksym_event(struct sfp_machine *m, const struct sfp_perf_event *ev)
{
	uint64_t start = ev->ksymbol.addr, end;
	size_t i;

	m->ksym_gen++;
	if (sfp_add_overflow(start, ev->ksymbol.len ? ev->ksymbol.len : 1,
			     &end))
		end = UINT64_MAX;
	ksym_remove(m, start, end);
	if (ev->ksymbol.flags & SFP_PERF_KSYMBOL_UNREGISTER)
		return 0;
	if (m->nksyms == m->ksym_cap) {
		size_t nc = m->ksym_cap ? m->ksym_cap * 2 : 16;
		struct sfp_ksym *n = realloc(m->ksyms, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->ksyms = n;
		m->ksym_cap = nc;
	}
	i = ksym_lower(m, start);
	memmove(m->ksyms + i + 1, m->ksyms + i,
		(m->nksyms - i) * sizeof(*m->ksyms));
	m->ksyms[i] = (struct sfp_ksym){ start, end,
					 strdup(ev->ksymbol.name ?: "") };
	m->nksyms++;
	if (!m->ksyms[i].name) {
		ksym_remove(m, start, end);
		return -ENOMEM;
	}
	return 0;
}

SFP_HIDDEN const struct sfp_ksym *sfp_machine__ksym(struct sfp_machine *m,
						    uint64_t addr)
{
	size_t i = m->nksyms ? ksym_lower(m, addr) : 0;

	return i < m->nksyms && m->ksyms[i].start <= addr ? &m->ksyms[i]
							  : NULL;
}

SFP_HIDDEN uint64_t sfp_machine__ksym_gen(const struct sfp_machine *m)
{
	return m->ksym_gen;
}

SFP_HIDDEN int sfp_machine__event(struct sfp_machine *m,
				  const struct sfp_perf_event *ev)
{
	switch (ev->type) {
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2:
	case SFP_PERF_RECORD_FORK:
		m->gen++;
		break;
	default:
		break;
	}
	switch (ev->type) {
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2: {
		bool kernel = (ev->misc & SFP_PERF_MISC_CPUMODE_MASK) ==
				      SFP_PERF_MISC_KERNEL &&
			      ev->mmap.pid == KERNEL_PID;
		struct sfp_pmap nm;
		char kname[256] = "";
		struct proc *p;
		uint64_t end;
		int err;

		if (!ev->mmap.len ||
		    sfp_add_overflow(ev->mmap.start, ev->mmap.len, &end))
			end = UINT64_MAX;
		if (kernel)
			kernel_dso_name(ev->mmap.filename, kname, sizeof(kname));
		else if (jit_map(ev))
			snprintf(kname, sizeof(kname), "/tmp/perf-%u.map",
				 ev->mmap.pid);
		if (kernel || kname[0]) {
			err = dso_intern(m, kname, kernel, NULL, &nm.dso);
		} else {
			struct sfp_file_id k;

			dso_key(ev, &k);
			err = dso_intern(m, ev->mmap.filename, false, &k,
					 &nm.dso);
		}
		if (err)
			return err;
		if (!kernel && kname[0])
			m->dsos[nm.dso].jit = true;
		nm.start = ev->mmap.start;
		nm.end = end;
		nm.pgoff = ev->mmap.pgoff;
		p = proc_new(m, kernel ? KERNEL_PID : ev->mmap.pid);
		if (!p || proc_reserve(p, 1))
			return -ENOMEM;
		if (!kernel && jitdump_name(ev->mmap.filename))
			p->jitdump = nm.dso + 1;
		p->gen = m->gen;
		return proc_insert(p, &nm);
	}
	case SFP_PERF_RECORD_KSYMBOL:
		return ksym_event(m, ev);
	case SFP_PERF_RECORD_COMM: {
		struct thr *t = thr_new(m, ev->comm.tid);

		if (!t)
			return -ENOMEM;
		t->pid = ev->comm.pid;
		snprintf(t->comm, sizeof(t->comm), "%s", ev->comm.comm);
		m->comm_gen++;
		return 0;
	}
	case SFP_PERF_RECORD_FORK: {
		struct thr *parent = thr_find(m, ev->fork.ptid), *t;
		char comm[COMM_LEN];

		if (parent)
			memcpy(comm, parent->comm, sizeof(comm));
		t = thr_new(m, ev->fork.tid);
		if (!t)
			return -ENOMEM;
		t->pid = ev->fork.pid;
		if (parent)
			memcpy(t->comm, comm, sizeof(comm));
		m->comm_gen++;
		if (ev->fork.pid != ev->fork.ppid) {
			/* a new process starts with a copy of the parent's maps */
			struct proc *pp = proc_find(m, ev->fork.ppid), *c;
			size_t n = pp ? pp->nr : 0;

			c = proc_new(m, ev->fork.pid);
			if (!c)
				return -ENOMEM;
			c->gen = m->gen;
			pp = proc_find(m, ev->fork.ppid);	/* may have moved */
			if (n && !c->nr) {
				if (proc_reserve(c, n))
					return -ENOMEM;
				memcpy(c->maps, pp->maps, n * sizeof(*c->maps));
				c->nr = n;
			}
		}
		return 0;
	}
	default:
		return 0;
	}
}

SFP_HIDDEN const char *sfp_machine__comm(struct sfp_machine *m, uint32_t tid)
{
	struct thr *t = thr_find(m, tid);

	if (t)
		return t->comm;
	if (!tid)
		return "swapper";
	/* perf prints the tid signed: ":-1", not ":4294967295" */
	snprintf(m->tmp, sizeof(m->tmp), ":%d", (int)tid);
	return m->tmp;
}

SFP_HIDDEN const struct sfp_pmap *sfp_machine__find(struct sfp_machine *m,
						    uint32_t pid, uint64_t addr)
{
	uint32_t key = addr >= SFP_KERNEL_START ? KERNEL_PID : pid;
	const struct sfp_pmap *l = m->last;
	struct proc *p;
	size_t lo = 0, hi;

	/* consecutive frames mostly fall in one mapping */
	if (l && m->last_gen == m->gen && m->last_pid == key &&
	    addr >= l->start && addr < l->end)
		return l;
	p = proc_find(m, key);
	if (!p)
		return NULL;
	hi = p->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else {
			m->last = &p->maps[mid];
			m->last_pid = key;
			m->last_gen = m->gen;
			return m->last;
		}
	}
	return NULL;
}

SFP_HIDDEN struct sfp_pdso *sfp_machine__dso(struct sfp_machine *m,
					     uint32_t idx)
{
	return idx < m->ndsos ? &m->dsos[idx] : NULL;
}

SFP_HIDDEN uint64_t sfp_machine__comm_gen(const struct sfp_machine *m)
{
	return m->comm_gen;
}

SFP_HIDDEN uint64_t sfp_machine__gen(const struct sfp_machine *m)
{
	return m->gen;
}

SFP_HIDDEN uint64_t sfp_machine__pid_gen(struct sfp_machine *m, uint32_t pid)
{
	struct proc *p;

	if (m->pg_gen == m->gen && m->pg_pid == pid && m->gen)
		return m->pg_val;
	p = proc_find(m, pid);
	m->pg_pid = pid;
	m->pg_gen = m->gen;
	m->pg_val = p ? p->gen : 0;
	return m->pg_val;
}

SFP_HIDDEN size_t sfp_machine__nr_dsos(const struct sfp_machine *m)
{
	return m->ndsos;
}

SFP_HIDDEN bool sfp_machine__dso_name_shared(const struct sfp_machine *m,
					     uint32_t idx)
{
	return idx < m->ndsos && m->dsos[idx].name_shared;
}
