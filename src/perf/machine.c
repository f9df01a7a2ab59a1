// SPDX-License-Identifier: MIT
/*
 * Machine model from side-band records (see machine.h).
 *
 * Processes and threads live in open-addressing hash tables keyed by
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
#include "perf/machine.h"

#define KERNEL_PID 0xffffffffu
#define COMM_LEN 32

struct proc {
	uint32_t pid;
	bool used;
	uint64_t gen;		/* m->gen when this map table last changed */
	uint32_t jitdump;	/* DSO index + 1 of the jit-PID.dump it
				 * mapped (0: none) */
	struct sfp_pmap *maps;
	size_t nr, cap;
};

struct thr {
	uint32_t tid, pid;
	bool used;
	char comm[COMM_LEN];
};

struct sfp_machine {
	struct proc *procs;
	size_t nprocs, proc_cap;
	struct thr *thrs;
	size_t nthrs, thr_cap;
	struct sfp_pdso *dsos;
	size_t ndsos, dso_cap;
	uint32_t *dso_hash;	/* idx + 1, 0 empty */
	size_t dso_hash_cap;
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

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

SFP_HIDDEN int sfp_machine__new(struct sfp_machine **out)
{
	struct sfp_machine *m = calloc(1, sizeof(*m));

	*out = m;
	return m ? 0 : -ENOMEM;
}

SFP_HIDDEN void sfp_machine__free(struct sfp_machine **mp)
{
	struct sfp_machine *m;
	size_t i;

	if (!mp || !*mp)
		return;
	m = *mp;
	for (i = 0; i < m->proc_cap; i++)
		free(m->procs[i].maps);
	free(m->procs);
	free(m->thrs);
	for (i = 0; i < m->ndsos; i++)
		free(m->dsos[i].name);
	free(m->dsos);
	free(m->dso_hash);
	for (i = 0; i < m->nksyms; i++)
		free(m->ksyms[i].name);
	free(m->ksyms);
	free(m);
	*mp = NULL;
}

/* --- processes ----------------------------------------------------------- */

static struct proc *proc_find(struct sfp_machine *m, uint32_t pid)
{
	size_t i, mask = m->proc_cap - 1;

	if (!m->proc_cap)
		return NULL;
	for (i = hash32(pid) & mask; m->procs[i].used; i = (i + 1) & mask)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static struct proc *proc_new(struct sfp_machine *m, uint32_t pid)
{
	struct proc *p = proc_find(m, pid);
	size_t i, mask;

	if (p)
		return p;
	if ((m->nprocs + 1) * 2 > m->proc_cap) {
		size_t ncap = m->proc_cap ? m->proc_cap * 2 : 64, j;
		struct proc *n = calloc(ncap, sizeof(*n)), *old = m->procs;
		size_t ocap = m->proc_cap;

		if (!n)
			return NULL;
		m->procs = n;
		m->proc_cap = ncap;
		for (j = 0; j < ocap; j++) {
			if (!old[j].used)
				continue;
			for (i = hash32(old[j].pid) & (ncap - 1); n[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = old[j];
		}
		free(old);
	}
	mask = m->proc_cap - 1;
	for (i = hash32(pid) & mask; m->procs[i].used; i = (i + 1) & mask)
		;
	p = &m->procs[i];
	memset(p, 0, sizeof(*p));
	p->used = true;
	p->pid = pid;
	m->nprocs++;
	return p;
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

	v = malloc((on * 2 + 2) * sizeof(*v));	/* a split adds one */
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
	p->cap = on * 2 + 2;
	return 0;
}

/* --- threads ------------------------------------------------------------- */

static struct thr *thr_find(struct sfp_machine *m, uint32_t tid)
{
	size_t i, mask = m->thr_cap - 1;

	if (!m->thr_cap)
		return NULL;
	for (i = hash32(tid) & mask; m->thrs[i].used; i = (i + 1) & mask)
		if (m->thrs[i].tid == tid)
			return &m->thrs[i];
	return NULL;
}

static struct thr *thr_new(struct sfp_machine *m, uint32_t tid)
{
	struct thr *t = thr_find(m, tid);
	size_t i, mask;

	if (t)
		return t;
	if ((m->nthrs + 1) * 2 > m->thr_cap) {
		size_t ncap = m->thr_cap ? m->thr_cap * 2 : 64, j;
		struct thr *n = calloc(ncap, sizeof(*n)), *old = m->thrs;
		size_t ocap = m->thr_cap;

		if (!n)
			return NULL;
		m->thrs = n;
		m->thr_cap = ncap;
		for (j = 0; j < ocap; j++) {
			if (!old[j].used)
				continue;
			for (i = hash32(old[j].tid) & (ncap - 1); n[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = old[j];
		}
		free(old);
	}
	mask = m->thr_cap - 1;
	for (i = hash32(tid) & mask; m->thrs[i].used; i = (i + 1) & mask)
		;
	t = &m->thrs[i];
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->tid = tid;
	t->pid = tid;
	/* perf names the idle task (pid 0) "swapper" before any COMM */
	if (tid)
		snprintf(t->comm, sizeof(t->comm), ":%d", (int)tid);
	else
		snprintf(t->comm, sizeof(t->comm), "swapper");
	m->nthrs++;
	m->comm_gen++;
	return t;
}

/*
 * Backward-shift deletion from a linear-probing table: the entries after
 * the hole that hash at or before it move up, so no tombstones pile up
 * in a table that sees a process come and go every few milliseconds.
 */
#define TABLE_DELETE(tab, cap, idx, keyf)                                    \
	do {                                                                 \
		size_t mask_ = (cap) - 1, i_ = (idx), j_ = i_;               \
		for (;;) {                                                   \
			size_t h_;                                           \
			j_ = (j_ + 1) & mask_;                               \
			if (!(tab)[j_].used)                                 \
				break;                                       \
			h_ = hash32((tab)[j_].keyf) & mask_;                 \
			/* j_ may fill the hole unless h_ lies in (i_, j_] */ \
			if (i_ <= j_ ? (h_ > i_ && h_ <= j_)                 \
				     : (h_ > i_ || h_ <= j_))                \
				continue;                                    \
			(tab)[i_] = (tab)[j_];                               \
			i_ = j_;                                             \
		}                                                            \
		memset(&(tab)[i_], 0, sizeof((tab)[i_]));                    \
	} while (0)

SFP_HIDDEN void sfp_machine__exit(struct sfp_machine *m, uint32_t pid,
				  uint32_t tid)
{
	struct thr *t = thr_find(m, tid);
	struct proc *p;

	if (t) {
		TABLE_DELETE(m->thrs, m->thr_cap, (size_t)(t - m->thrs), tid);
		m->nthrs--;
		m->comm_gen++;
	}
	if (pid != tid || !(p = proc_find(m, pid)))
		return;
	free(p->maps);
	TABLE_DELETE(m->procs, m->proc_cap, (size_t)(p - m->procs), pid);
	m->nprocs--;
	m->gen++;	/* maps gone: cached lookups are stale */
}

size_t sfp_machine__nr_procs(const struct sfp_machine *m)
{
	return m->nprocs;
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

/*
 * The DSO `name` that k identifies (NULL k: the name alone, for the
 * kernel's and JIT maps), made when new.  The table is hashed by name, so
 * files sharing one sit side by side and the first of them is found on
 * the way.
 */
static int dso_intern(struct sfp_machine *m, const char *name, bool kernel,
		      const struct sfp_file_id *k, uint32_t *idx)
{
	static const struct sfp_file_id none;
	uint32_t first = UINT32_MAX;
	size_t i, mask;

	if (!k)
		k = &none;

	if ((m->ndsos + 1) * 2 > m->dso_hash_cap) {
		size_t ncap = m->dso_hash_cap ? m->dso_hash_cap * 2 : 64, j;
		uint32_t *h = calloc(ncap, sizeof(*h));

		if (!h)
			return -ENOMEM;
		for (j = 0; j < m->ndsos; j++) {
			for (i = hash_str(m->dsos[j].name) & (ncap - 1); h[i];
			     i = (i + 1) & (ncap - 1))
				;
			h[i] = (uint32_t)j + 1;
		}
		free(m->dso_hash);
		m->dso_hash = h;
		m->dso_hash_cap = ncap;
	}
	mask = m->dso_hash_cap - 1;
	for (i = hash_str(name) & mask; m->dso_hash[i]; i = (i + 1) & mask) {
		const struct sfp_pdso *d = &m->dsos[m->dso_hash[i] - 1];

		if (strcmp(d->name, name))
			continue;
		if (dso_is(d, name, k)) {
			*idx = m->dso_hash[i] - 1;
			return 0;
		}
		if (d->first_of_name < first)
			first = d->first_of_name;
	}
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
	m->dso_hash[i] = (uint32_t)m->ndsos + 1;
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
