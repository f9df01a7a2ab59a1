// SPDX-License-Identifier: MIT
/*
 * sfp_profile__load(): a perf.data file through the same pipeline `sfprof
 * script` uses -- reader (time order) -> stitcher (deferred user chains,
 * perf 6.19 rules) -> machine model and dwarf-mode unwinder (side-band
 * records) -> symbolizer -- with every sample's frames interned into the
 * profile's tables instead of printed.
 *
 * Which frames a sample has follows perf script: the recorded chain up to
 * perf's 127-entry limit, context markers dropped, the whole chain dropped
 * at a context value perf does not know, a deferred sample's trailing
 * cookie left out (the sample is marked unmerged instead), and for
 * dwarf-mode samples the user part unwound from the stack snapshot with
 * callers given as call sites (return address - 1), as perf prints them.
 */
#include <limits.h>
#include <sys/mman.h>

#include "common/fileid.h"
#include "common/prefault.h"
#include "perf/dwarf.h"
#include "perf/machine.h"
#include "perf/callchain.h"
#include "profile/load.h"

#define DEFAULT_MAX_DEPTH 1024

/* the raw-sample memo's size: 256 entries, doubling up to 4096 */
#define MEMO_MIN_BITS 8
#define MEMO_MAX_BITS 12

static int push_frame(struct sfp_profile_loader *ld, size_t *n, uint32_t pid,
		      uint64_t ip, bool kernel, bool dwarf)
{
	uint32_t loc;
	int err;

	if (sfp_profile_grow((void **)&ld->frames, &ld->cap_frames, *n + 1,
			     sizeof(*ld->frames)))
		return -ENOMEM;
	err = sfp_profile_frame(ld->p, ld, pid, ip, kernel, dwarf, &loc);
	if (err)
		return err;
	ld->frames[(*n)++] = loc;
	return 0;
}

#define LAST_STACK_SLOTS 256

/*
 * The node of the stack ld->frames[0..n) (leaf first).  The tree grows
 * from the outermost caller down to the leaf, one interned (parent, loc)
 * node per frame; the frames a sample shares, from the root on, with the
 * previous sample of its thread have the nodes that sample got (a node
 * is a function of its parent and loc), so only the rest is looked up.
 * On a system-wide file the hash lookups were a fifth of a report.
 */
static int intern_stack(struct sfp_profile_loader *ld, uint32_t tid, size_t n,
			uint32_t *out)
{
	struct sfp_last_stack *ls;
	int64_t node = 0;
	size_t i, j = 0, k;

	if (!ld->last) {
		ld->last = calloc(LAST_STACK_SLOTS, sizeof(*ld->last));
		if (!ld->last)
			return -ENOMEM;
	}
	ls = &ld->last[(tid * 0x9e3779b1u) >> 24];
	if (n > ls->cap) {
		size_t cap = ls->cap ? ls->cap : 32;
		uint32_t *a, *b;

		while (cap < n)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		a = realloc(ls->locs, cap * sizeof(*a));
		if (a)
			ls->locs = a;
		b = a ? realloc(ls->nodes, cap * sizeof(*b)) : NULL;
		if (!b)
			return -ENOMEM;
		ls->nodes = b;
		ls->cap = (uint32_t)cap;
	}
	if (ls->tid == tid) {
		/* frames[n - 1 - j] is the j-th from the root */
		while (j < n && j < ls->n && ls->locs[j] == ld->frames[n - 1 - j])
			j++;
		if (j)
			node = ls->nodes[j - 1];
	}
	for (k = j; k < n; k++) {
		i = n - 1 - k;
		node = sfp_profile_node(ld->p, (uint32_t)node, ld->frames[i]);
		if (node < 0) {
			ls->n = 0;
			return (int)node;
		}
		ls->locs[k] = ld->frames[i];
		ls->nodes[k] = (uint32_t)node;
	}
	ls->tid = tid;
	ls->n = (uint32_t)n;
	*out = (uint32_t)node;
	return 0;
}

/*
 * The sample's own address: perf looks it up in the maps of the sample's
 * cpumode, then in those of the address's mode (thread__find_map_fb()):
 * the kernel's exactly for kernel addresses.
 */
static bool ip_in_kernel(const struct sfp_perf_event *ev)
{
	return ev->sample.ip >= SFP_KERNEL_START;
}

void sfp_profile_loader_release(struct sfp_profile_loader *ld)
{
	free(ld->dh);
	free(ld->dso_str);
	free(ld->chain_read);
	free(ld->frames);
	free(ld->chain);
	free(ld->fcache);
	if (ld->memo)
		munmap(ld->memo, sizeof(*ld->memo) << MEMO_MAX_BITS);
	ld->memo = NULL;
	ld->memo_bits = 0;
	ld->memo_fill = 0;
	if (ld->last) {
		size_t i;

		for (i = 0; i < LAST_STACK_SLOTS; i++) {
			free(ld->last[i].locs);
			free(ld->last[i].nodes);
		}
		free(ld->last);
		ld->last = NULL;
	}
	ld->dh = NULL;
	ld->dso_str = NULL;
	ld->cap_dso_str = 0;
	ld->chain_read = NULL;
	ld->frames = NULL;
	ld->chain = NULL;
	ld->fcache = NULL;
	ld->fcache_bits = 0;
	ld->fcache_fill = 0;
	memset(ld->comm, 0, sizeof(ld->comm));
	sfp_htab_free(&ld->twins);
	memset(ld->recent, 0xff, sizeof(ld->recent));
	ld->nr_seen = 0;
}

/*
 * The string index of thread tid's name now, when the name cache has it:
 * no new string is made (the memo's look-up must not add to the
 * profile's strings ahead of the frames' names).
 */
static bool thread_comm_cached(struct sfp_profile_loader *ld, uint32_t tid,
			       uint32_t *out)
{
	struct sfp_comm_cache_ent *c =
		&ld->comm[(tid ^ (tid >> 6)) % ARRAY_SIZE(ld->comm)];
	uint64_t gen = sfp_machine__comm_gen(ld->m);

	if (c->p != ld->p || c->tid != tid)
		return false;
	/* no thread was named, made or removed since: the same name */
	if (c->gen != gen && strcmp(c->name, sfp_machine__comm(ld->m, tid)))
		return false;
	c->gen = gen;
	*out = c->idx;
	return true;
}

/* The string index of thread tid's name now. */
static int thread_comm(struct sfp_profile_loader *ld, uint32_t tid,
		       uint32_t *out)
{
	struct sfp_comm_cache_ent *c =
		&ld->comm[(tid ^ (tid >> 6)) % ARRAY_SIZE(ld->comm)];
	const char *name;
	size_t len;
	int err;

	if (thread_comm_cached(ld, tid, out))
		return 0;
	name = sfp_machine__comm(ld->m, tid);
	if ((err = sfp_profile_intern(ld->p, name, out)))
		return err;
	len = strlen(name);
	c->p = len < sizeof(c->name) ? ld->p : NULL;
	if (c->p) {
		memcpy(c->name, name, len + 1);
		c->tid = tid;
		c->idx = *out;
		c->gen = sfp_machine__comm_gen(ld->m);
	}
	return 0;
}

/* merge_samples: a and b differ at most in time and period */
static bool twins(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_profile_sample *a = sfp_profile__sample(ctx, idx);
	const struct sfp_profile_sample *b = key;

	return a->stack == b->stack && a->tid == b->tid &&
	       a->pid == b->pid && a->comm == b->comm && a->cpu == b->cpu &&
	       a->event == b->event && a->ip_loc == b->ip_loc &&
	       a->truncated == b->truncated && a->unmerged == b->unmerged &&
	       a->dwarf == b->dwarf;
}

/*
 * Add s to the profile, or with merge_samples to its twin if it has one;
 * *out: the index s went to.
 */
static int add_sample(struct sfp_profile_loader *ld,
		      const struct sfp_profile_sample *s, uint32_t *out)
{
	struct sfp_profile *p = ld->p;
	uint32_t *recent, idx, h;
	struct sfp_profile_sample *t;
	int err;

	if (!ld->merge) {
		*out = (uint32_t)sfp_profile__nr_samples(p);
		return sfp_profile_add_sample(p, s);
	}
	recent = &ld->recent[(s->tid * 0x9e3779b1u) >> 24];
	idx = *recent;
	if (idx == SFP_PROFILE_NONE || !twins(p, idx, s)) {
		h = sfp_hash64((uint64_t)s->tid << 32 | s->stack,
			       s->comm ^ s->cpu ^ s->ip_loc ^ s->event);
		idx = sfp_htab_find(&ld->twins, h, twins, p, s);
		if (idx == SFP_PROFILE_NONE) {
			idx = (uint32_t)sfp_profile__nr_samples(p);
			if ((err = sfp_profile_add_sample(p, s)) ||
			    (err = sfp_htab_add(&ld->twins, h, idx)))
				return err;
			*recent = *out = idx;
			return 0;
		}
		*recent = idx;
	}
	t = &p->samples[idx];
	t->period += s->period;
	t->count++;
	t->last = s->last;
	*out = idx;
	return 0;
}

/* --- the raw-sample memo (merge_samples) ---------------------------------- */

#define MEMO_UNMERGED 0x1
#define MEMO_DEFERRED 0x2
#define MEMO_CHAIN 0x4
#define MEMO_IP 0x8

/*
 * The key of sample ev as it came in and its hash, or false when it has
 * none: a chain longer than the key holds, a name the comm cache does
 * not have yet (made by the long way first).  The frames' locs depend on
 * the chain, the process's maps (sfp_machine__pid_gen) and for kernel
 * frames on the KSYMBOL ranges (sfp_machine__ksym_gen), as the frame
 * cache has it; the twin besides on the ids, the comm and the
 * stitcher's verdict.  Every field is stored once with its own type and
 * the hash is made from the values, not read back from the key: a
 * memset (rep stos) and word loads over narrower stores cost more than
 * the look-ups the memo saves.
 */
static bool memo_key(struct sfp_profile_loader *ld,
		     const struct sfp_perf_event *ev, bool unmerged,
		     struct sfp_memo_key *k, uint32_t *hash)
{
	const uint64_t K = 0x9e3779b97f4a7c15ull;
	const struct sfp_perf_sample *sm = &ev->sample;
	uint64_t nr = sm->nr_ips, h, ids, more;
	uint32_t flags = 0, i;

	if (nr > SFP_MEMO_IPS || !thread_comm_cached(ld, sm->tid, &k->comm))
		return false;
	if (sm->present & SFP_PERF_SAMPLE_CALLCHAIN)
		flags |= MEMO_CHAIN;
	if (sm->present & SFP_PERF_SAMPLE_IP)
		flags |= MEMO_IP;
	if (sm->deferred)
		flags |= MEMO_DEFERRED;
	if (unmerged)
		flags |= MEMO_UNMERGED;
	k->ip = sm->ip;
	k->pid_gen = sfp_machine__pid_gen(ld->m, sm->pid);
	k->ksym_gen = sfp_machine__ksym_gen(ld->m);
	k->tid = sm->tid;
	k->pid = sm->pid;
	k->cpu = sm->present & SFP_PERF_SAMPLE_CPU ? sm->cpu : UINT32_MAX;
	k->event = ev->evsel ? (uint32_t)ev->evsel->idx : SFP_PROFILE_NONE;
	k->nr_flags = (uint32_t)nr << 8 | flags;
	ids = (uint64_t)k->tid << 32 | k->cpu;
	more = ((uint64_t)k->event << 32 | k->nr_flags) ^
	       ((uint64_t)k->comm << 40) ^ k->pid;
	h = (k->ip ^ k->pid_gen) * K + (ids ^ k->ksym_gen) * (K | 2) + more;
	for (i = 0; i < nr; i++) {
		k->ips[i] = sm->ips[i];
		h = (h ^ sm->ips[i]) * K;
	}
	for (; i < SFP_MEMO_IPS; i++)
		k->ips[i] = 0;
	h ^= h >> 29;
	*hash = (uint32_t)(h >> 32) ^ (uint32_t)h;
	return true;
}

static bool memo_same(const struct sfp_memo_key *a,
		      const struct sfp_memo_key *b)
{
	uint32_t i, nr = a->nr_flags >> 8;

	if (a->ip != b->ip || a->pid_gen != b->pid_gen ||
	    a->ksym_gen != b->ksym_gen || a->tid != b->tid ||
	    a->pid != b->pid || a->cpu != b->cpu || a->event != b->event ||
	    a->comm != b->comm || a->nr_flags != b->nr_flags)
		return false;
	for (i = 0; i < nr; i++)
		if (a->ips[i] != b->ips[i])
			return false;
	return true;
}

/*
 * A hit's period, count and sample number wait in its entry, whose lines
 * the key's comparison has just read, and reach the twin when the entry
 * is replaced or the load ends: adding to the twin at once was a second
 * cache miss a sample, a sixth of the loader's own time.  Sums commute;
 * the twin's last sample is the later of the two (sample numbers as
 * perf counts them, wrapping at 2^32).
 */
static void memo_settle(struct sfp_profile *p, struct sfp_memo_ent *e)
{
	struct sfp_profile_sample *t;

	if (!e->idx1 || !e->count)
		return;
	t = &p->samples[e->idx1 - 1];
	t->period += e->period;
	t->count += e->count;
	if ((int32_t)(e->last - t->last) > 0)
		t->last = e->last;
	e->period = 0;
	e->count = 0;
}

static void memo_settle_all(struct sfp_profile_loader *ld)
{
	size_t i;

	for (i = 0; ld->memo && i < (size_t)1 << ld->memo_bits; i++)
		memo_settle(ld->p, &ld->memo[i]);
}

static struct sfp_memo_ent *memo_slot(struct sfp_profile_loader *ld,
				      uint32_t hash)
{
	return &ld->memo[hash & (((size_t)1 << ld->memo_bits) - 1)];
}

/*
 * The memo lives in one mapping reserved at its largest size; the table
 * is its first 1 << memo_bits entries and doubles in place.  A slot's
 * entry moves, when the table doubles, to the slot itself or to the one
 * a half further on, by the hash's next bit, so no entry meets another.
 * Growing by calloc and copy cost twice the pages, all zeroed by glibc:
 * fresh pages are what costs most in a guest (prefault.h).
 */
static void memo_grow(struct sfp_profile_loader *ld)
{
	size_t old = (size_t)1 << ld->memo_bits, i;
	struct sfp_memo_ent *m = ld->memo;

	if (!m) {
		m = mmap(NULL, sizeof(*m) << MEMO_MAX_BITS,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (m == MAP_FAILED)
			return;	/* no memo: every sample the long way */
		ld->memo = m;
		ld->memo_bits = MEMO_MIN_BITS;
		ld->memo_fill = 0;
		sfp_prefault(m, sizeof(*m) << MEMO_MIN_BITS);
		return;
	}
	sfp_prefault(m + old, old * sizeof(*m));
	/* entries move, none is dropped: memo_fill stands */
	for (i = 0; i < old; i++)
		if (m[i].idx1 && (m[i].hash & old)) {
			m[i + old] = m[i];
			m[i].idx1 = 0;
		}
	ld->memo_bits++;
}

/* Remember that key k's sample went to twin idx (a failed mapping only
 * costs the look-ups it would have saved). */
static void memo_add(struct sfp_profile_loader *ld,
		     const struct sfp_memo_key *k, uint32_t hash, uint32_t idx)
{
	struct sfp_memo_ent *e;

	/* half full: twice the size (at most MEMO_MAX_BITS) */
	if (!ld->memo || (ld->memo_bits < MEMO_MAX_BITS &&
			  ld->memo_fill >= ((uint32_t)1 << ld->memo_bits) / 2))
		memo_grow(ld);
	if (!ld->memo)
		return;
	e = memo_slot(ld, hash);
	ld->memo_fill += !e->idx1;
	memo_settle(ld->p, e);
	e->k = *k;
	e->hash = hash;
	e->idx1 = idx + 1;
	e->period = 0;
	e->count = 0;
}

int sfp_profile_loader_sample(struct sfp_profile_loader *ld,
			      const struct sfp_perf_event *ev,
			      enum sfp_stitch_how how)
{
	const struct sfp_perf_sample *sm = &ev->sample;
	struct sfp_profile *p = ld->p;
	struct sfp_profile_sample out = {
		.pid = sm->pid,
		.tid = sm->tid,
		.time = sm->present & SFP_PERF_SAMPLE_TIME ? sm->time : 0,
		.period = sm->present & SFP_PERF_SAMPLE_PERIOD ? sm->period : 1,
		.cpu = sm->present & SFP_PERF_SAMPLE_CPU ? sm->cpu : UINT32_MAX,
		.event = ev->evsel ? (uint32_t)ev->evsel->idx : SFP_PROFILE_NONE,
		.unmerged = how == SFP_STITCH_OTHER_COOKIE ||
			    how == SFP_STITCH_LEFTOVER,
		.ip_loc = SFP_PROFILE_NONE,
		.count = 1,
		.last = ld->nr_seen++,
	};
	struct sfp_perf_chain_walk w;
	struct sfp_memo_key key;
	bool memo = false;
	size_t n = 0, i, kept;
	uint32_t hash = 0, idx;
	uint64_t ip;
	int err;

	/* seen before as it is: its twin takes it, nothing looked up */
	if (ld->merge && !ld->uw &&
	    (memo = memo_key(ld, ev, out.unmerged, &key, &hash))) {
		struct sfp_memo_ent *e = ld->memo ? memo_slot(ld, hash) : NULL;

		if (e && e->idx1 && e->hash == hash && memo_same(&e->k, &key)) {
			e->period += out.period;
			e->last = out.last;
			if (++e->count == UINT32_MAX)
				memo_settle(p, e);
			return 0;
		}
	}
	if (!(sm->present & SFP_PERF_SAMPLE_CALLCHAIN)) {
		err = push_frame(ld, &n, sm->pid, sm->ip, ip_in_kernel(ev),
				 false);
		if (err)
			return err;
		goto intern;
	}
	sfp_perf_chain__begin(&w, sm);
	while (sfp_perf_chain__next(&w, &ip)) {
		/* the cookie of a chain still waiting for its user part:
		 * not a frame */
		if (sfp_perf_chain__at_cookie(&w)) {
			out.unmerged = true;
			continue;
		}
		err = push_frame(ld, &n, sm->pid, ip, w.kernel, false);
		if (err)
			return err;
	}
	if (ld->uw && sfp_perf_chain__unwind_user(&w, sm)) {
		int uf = sfp_perf_unwinder__unwind(ld->uw, ev, &ld->chain,
						   &ld->cap_chain, true);

		if (uf < 0)
			return uf;
		out.dwarf = uf > 0;
		for (i = 0; i < (size_t)uf; i++) {
			err = push_frame(ld, &n, sm->pid, ld->chain[i], false,
					 true);
			if (err)
				return err;
		}
	}
	/*
	 * No frames at all: perf report still counts the sample at its ip
	 * (its entry comes from the sample ip, not the chain), perf script
	 * shows nothing.  The stack stays empty, the ip's loc goes beside.
	 */
	if (!n && (sm->present & SFP_PERF_SAMPLE_IP)) {
		err = sfp_profile_frame(p, ld, sm->pid, sm->ip, ip_in_kernel(ev),
					false, &out.ip_loc);
		if (err)
			return err;
	}
intern:
	kept = n;
	if (kept > ld->max_depth) {
		kept = ld->max_depth;
		out.truncated = true;
	}
	err = intern_stack(ld, sm->tid, kept, &out.stack);
	if (err)
		return err;
	err = thread_comm(ld, sm->tid, &out.comm);
	if (err)
		return err;
	if ((err = add_sample(ld, &out, &idx)))
		return err;
	if (memo)
		memo_add(ld, &key, hash, idx);
	return 0;
}

static int on_event(void *ctx, const struct sfp_perf_event *ev,
		    enum sfp_stitch_how how)
{
	struct sfp_profile_loader *ld = ctx;
	int err;

	switch (ev->type) {
	case SFP_PERF_RECORD_SAMPLE:
		return sfp_profile_loader_sample(ld, ev, how);
	case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
		return 0;	/* only seen unmerged (no_merge): not a sample */
	default:
		err = sfp_machine__event(ld->m, ev);
		if (!err && ld->uw)
			err = sfp_perf_unwinder__event(ld->uw, ev);
		return err;
	}
}

/* The dso string the functions of machine DSO di carry (see
 * user_dso_str()), NULL when none of them was made. */
static const char *dso_str_of(struct sfp_profile_loader *ld, uint32_t di,
			      const struct sfp_pdso *d)
{
	uint32_t idx;

	if (d->first_of_name != di)
		return di < ld->cap_dso_str ? ld->dso_str[di] : NULL;
	/* the interned path; interning it here would make it exist */
	return sfp_profile_find_str(ld->p, d->name, &idx) ? NULL
							  : ld->p->strs[idx];
}

/*
 * Different files that share a path (two containers' /srv/app/server, a
 * binary replaced while it ran) and both have functions in the profile
 * are told apart in every output that shows the dso: "PATH [SHORT]",
 * SHORT the first 4 bytes of the build-id in hex, or the device and inode
 * of a file without one (docs/report.md).  A name only one file of the
 * profile has keeps its plain path.  Return: 0, -ENOMEM.
 */
static int dsos_apart(struct sfp_profile_loader *ld)
{
	struct sfp_profile *p = ld->p;
	size_t nd = sfp_machine__nr_dsos(ld->m), n = 0, i, j;
	struct apart {
		uint32_t di;
		const char *str;	/* the functions' dso string now */
		const char *to;		/* ... and their new one */
		bool used;
	} *v;
	int err = 0;

	for (i = 0; i < nd; i++)
		n += sfp_machine__dso_name_shared(ld->m, (uint32_t)i);
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0, n = 0; i < nd; i++) {
		const struct sfp_pdso *d = sfp_machine__dso(ld->m, (uint32_t)i);
		const char *str;

		if (!sfp_machine__dso_name_shared(ld->m, (uint32_t)i) ||
		    !(str = dso_str_of(ld, (uint32_t)i, d)))
			continue;
		v[n].di = (uint32_t)i;
		v[n++].str = str;
	}
	for (i = 0; i < p->nr_funcs; i++)
		for (j = 0; j < n; j++)
			if (p->funcs[i].dso == v[j].str)
				v[j].used = true;
	for (i = 0; i < n; i++) {
		const struct sfp_pdso *d = sfp_machine__dso(ld->m, v[i].di);
		struct sfp_file_id id = {
			.path = d->name, .dev = d->dev, .ino = d->ino,
		};
		char sh[SFP_FILE_ID_SHORT], *name;
		bool other = false;

		if (!v[i].used)
			continue;
		/* only where another file of the name has functions too */
		for (j = 0; j < n; j++)
			other |= j != i && v[j].used &&
				 sfp_machine__dso(ld->m, v[j].di)->first_of_name ==
					 d->first_of_name;
		if (!other)
			continue;
		id.build_id_len = d->build_id_size;
		memcpy(id.build_id, d->build_id, d->build_id_size);
		sfp_file_id_short(&id, sh, sizeof(sh));
		if (asprintf(&name, "%s [%s]", d->name,
			     sh[0] ? sh : "?") < 0) {
			err = -ENOMEM;
			break;
		}
		v[i].to = sfp_profile_str(p, name);
		free(name);
		if (!v[i].to) {
			err = -ENOMEM;
			break;
		}
	}
	for (i = 0; !err && i < p->nr_funcs; i++)
		for (j = 0; j < n; j++)
			if (v[j].to && p->funcs[i].dso == v[j].str) {
				p->funcs[i].dso = v[j].to;
				break;
			}
	free(v);
	return err;
}

/* File facts and the event table, once the stream has been read. */
static int finish(struct sfp_profile_loader *ld)
{
	const struct sfp_perf_header_info *h = ld->hdr;
	struct sfp_profile *p = ld->p;
	size_t nev = sfp_perf_reader__nr_evsels(ld->rd), i, len = 0;
	bool unknown = false;
	char *cmd;
	int err = dsos_apart(ld);

	if (err)
		return err;
	for (i = 0; i < p->nr_samples; i++)
		if (p->samples[i].event >= nev) {
			p->samples[i].event = (uint32_t)nev;
			unknown = true;
		}
	p->events = calloc(nev + 1, sizeof(*p->events));
	if (!p->events)
		return -ENOMEM;
	for (i = 0; i < nev; i++) {
		const struct sfp_perf_evsel *e = sfp_perf_reader__evsel(ld->rd, i);
		struct sfp_profile_event *o = &p->events[i];

		if (!(o->name = sfp_profile_str(p, sfp_profile_event_name(e))))
			return -ENOMEM;
		o->kind = sfp_profile_event_kind(o->name);
		if (e && (e->attr.flags & SFP_PERF_ATTR_FLAG_FREQ))
			o->sample_freq = e->attr.sample_period;
		else if (e)
			o->sample_period = e->attr.sample_period;
	}
	if (unknown &&
	    !(p->events[nev++].name = sfp_profile_str(p, "[unknown]")))
		return -ENOMEM;
	p->nr_events = nev;

	if (h->hostname && !(p->hostname = sfp_profile_str(p, h->hostname)))
		return -ENOMEM;
	for (i = 0; i < h->nr_cmdline; i++)
		len += strlen(h->cmdline[i] ? h->cmdline[i] : "") + 1;
	if (len) {
		char *q = cmd = malloc(len);

		if (!cmd)
			return -ENOMEM;
		for (i = 0; i < h->nr_cmdline; i++) {
			const char *a = h->cmdline[i] ? h->cmdline[i] : "";
			size_t l = strlen(a);

			memcpy(q, a, l);
			q += l;
			*q++ = i + 1 < h->nr_cmdline ? ' ' : '\0';
		}
		p->cmdline = sfp_profile_str(p, cmd);
		free(cmd);
		if (!p->cmdline)
			return -ENOMEM;
	}
	sfp_profile_finish(p);
	return 0;
}

static int load(struct sfp_perf_reader *rd, const char *name,
		const struct sfp_profile_opts *opts, struct sfp_profile **out)
{
	struct sfp_profile_loader ld = { .rd = rd };
	const struct sfp_perf_event *ev;
	const struct sfp_perf_stats *stats;
	struct sfp_stitcher *st = NULL;
	const char *kpath = SFP_OPTS_GET(opts, sfp_profile_opts, kallsyms_path,
					 NULL);
	char kbuf[4096];
	int err;

	ld.hdr = sfp_perf_reader__header(rd);
	ld.srclines = SFP_OPTS_GET(opts, sfp_profile_opts, srclines, false);
	ld.dwarf_inlines = SFP_OPTS_GET(opts, sfp_profile_opts, dwarf_inlines,
					false);
	ld.max_depth = SFP_OPTS_GET(opts, sfp_profile_opts, max_depth, 0);
	ld.no_symbols = SFP_OPTS_GET(opts, sfp_profile_opts, no_symbols, false);
	ld.merge = SFP_OPTS_GET(opts, sfp_profile_opts, merge_samples, false);
	memset(ld.recent, 0xff, sizeof(ld.recent));
	if (!ld.max_depth)
		ld.max_depth = DEFAULT_MAX_DEPTH;
	if (!kpath && !sfp_profile_kallsyms_cache(ld.hdr, kbuf, sizeof(kbuf)))
		kpath = kbuf;

	SFP_OPTS(sfp_stitch_opts, so,
		 .no_merge = SFP_OPTS_GET(opts, sfp_profile_opts, no_merge,
					  false));
	SFP_OPTS(sfp_symbolizer_opts, symo, .no_demangle = true,
		 .srclines = ld.srclines, .kallsyms_path = kpath,
		 .debuginfod = SFP_OPTS_GET(opts, sfp_profile_opts, debuginfod,
					    SFP_DEBUGINFOD_AUTO),
		 .debuginfod_timeout_ms = SFP_OPTS_GET(opts, sfp_profile_opts,
						       debuginfod_timeout_ms,
						       0));
	if ((err = sfp_profile_new(&ld.p)) ||
	    (err = sfp_machine__new(&ld.m)) ||
	    (err = sfp_symbolizer__new(&symo, &ld.sym)) ||
	    (err = sfp_stitcher__new(&so, on_event, &ld, &st)) ||
	    (sfp_perf_unwinder__wanted(rd) &&
	     (err = sfp_perf_unwinder__new(ld.hdr, &ld.uw))))
		goto out;
	while ((err = sfp_perf_reader__next(rd, &ev)) > 0)
		if ((err = sfp_stitcher__push(st, ev)))
			break;
	if (!err)
		err = sfp_stitcher__flush(st);
	if (err) {
		pr_warn("%s: loading the profile: %s", name, sfp_strerror(err));
		goto out;
	}
	stats = sfp_perf_reader__stats(rd);
	if (stats->nr_bad_records) {
		pr_warn("%s: %llu malformed records", name,
			(unsigned long long)stats->nr_bad_records);
		err = -EBADMSG;
		goto out;
	}
	ld.p->lost.records = stats->nr_lost;
	ld.p->lost.chunks = stats->nr_records[SFP_PERF_RECORD_LOST];
	ld.p->lost.samples = stats->nr_lost_samples;
	memo_settle_all(&ld);
	if (sfp_symbolizer__mismatched(ld.sym))
		pr_warn("%s: %llu files left unnamed: the files at their paths "
			"(in the recorded processes' roots and on this host) "
			"have other build-ids than the recording gives, and no "
			"copy was found (build-id cache, debug directories)",
			name,
			(unsigned long long)sfp_symbolizer__mismatched(ld.sym));
	err = finish(&ld);
	if (!err && SFP_OPTS_GET(opts, sfp_profile_opts, keep_files, false)) {
		/* freed with the profile (see struct sfp_profile) */
		ld.p->sym = ld.sym;
		ld.sym = NULL;
	}
out:
	sfp_perf_unwinder__free(&ld.uw);
	sfp_stitcher__free(&st);
	sfp_symbolizer__free(&ld.sym);
	sfp_machine__free(&ld.m);
	sfp_profile_loader_release(&ld);
	if (err)
		sfp_profile__free(&ld.p);
	*out = ld.p;
	return err;
}

int sfp_profile__load(const char *path, const struct sfp_profile_opts *opts,
		      struct sfp_profile **out)
{
	struct sfp_perf_reader *rd = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!path || !SFP_OPTS_VALID(opts, sfp_profile_opts))
		return -EINVAL;
	err = sfp_perf_reader__open(path, NULL, &rd);
	if (err)
		return err;
	err = load(rd, path, opts, out);
	sfp_perf_reader__free(&rd);
	return err;
}

int sfp_profile__load_mem(const void *data, size_t size,
			  const struct sfp_profile_opts *opts,
			  struct sfp_profile **out)
{
	struct sfp_perf_reader *rd = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!data || !SFP_OPTS_VALID(opts, sfp_profile_opts))
		return -EINVAL;
	err = sfp_perf_reader__open_mem(data, size, NULL, &rd);
	if (err)
		return err;
	err = load(rd, "<memory>", opts, out);
	sfp_perf_reader__free(&rd);
	return err;
}
