// SPDX-License-Identifier: MIT
/*
 * From the BPF ring buffer to perf records: each sample becomes a
 * PERF_RECORD_SAMPLE whose callchain is the kernel part followed by
 * PERF_CONTEXT_USER_DEFERRED, cookie (or the kernel part alone when the
 * task could not defer), each unwind a PERF_RECORD_CALLCHAIN_DEFERRED —
 * the writer's encoders (src/record/encode.c) lay them out exactly as the
 * sframe mode does, so `sfprof script` stitches both alike.  They are
 * queued into the session, which delivers them in time order together
 * with the side-band records of the perf rings.
 *
 * Every ring record is checked for its size before it is read: the bytes
 * come from our own program, but a mismatch of layouts must not read out
 * of bounds.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bpf-int.h"
#include "record/encode.h"

#define PERF_CONTEXT_MAX_U ((uint64_t)-4095)

static struct cookie_slot *cookie_slot(struct sfp_bpf_defer *b,
				       uint64_t cookie, bool add)
{
	uint32_t h = (uint32_t)((cookie * 0x9e3779b97f4a7c15ULL) >> 52);
	uint32_t i;

	for (i = 0; i < SFB_COOKIE_SLOTS; i++) {
		struct cookie_slot *s =
			&b->cookies[(h + i) & (SFB_COOKIE_SLOTS - 1)];

		if (s->cookie == cookie)
			return s;
		if (!s->cookie) {
			if (!add)
				return NULL;
			s->cookie = cookie;
			s->samples = 0;
			return s;
		}
	}
	return NULL;	/* full: the count is lost, nothing else */
}

/* Remove a slot, re-inserting the rest of its probe run. */
static void cookie_del(struct sfp_bpf_defer *b, struct cookie_slot *s)
{
	uint32_t i = (uint32_t)(s - b->cookies), j;

	s->cookie = 0;
	for (j = (i + 1) & (SFB_COOKIE_SLOTS - 1); b->cookies[j].cookie;
	     j = (j + 1) & (SFB_COOKIE_SLOTS - 1)) {
		struct cookie_slot tmp = b->cookies[j], *n;

		b->cookies[j].cookie = 0;
		n = cookie_slot(b, tmp.cookie, true);
		if (n)
			n->samples = tmp.samples;
	}
}

/* --- deferred records held until their entry's end (SFB_D_HELD) --------- */

/*
 * A record walked at a block comes before the blocks it serves (they are
 * written at their switch-in), and readers want it after them.  So it is
 * kept per task and written ("flushed") after what it served: at each
 * poll when it served something new since, and when the task's entry is
 * over (a record of another cookie of the task).  An entry blocking again
 * after a flush (a long write() to a full pipe) gets the record once more
 * after its new blocks: the readers merge each sample with the next
 * record of its cookie.
 */

static struct held_rec *held_slot(struct sfp_bpf_defer *b, uint32_t tid)
{
	size_t h = (size_t)(tid * 0x9e3779b1u) & (b->held_cap - 1);

	while (b->held[h].tid && b->held[h].tid != tid)
		h = (h + 1) & (b->held_cap - 1);
	return &b->held[h];
}

static struct held_rec *held_find(struct sfp_bpf_defer *b, uint32_t tid)
{
	struct held_rec *h;

	if (!b->held_nr || !tid)
		return NULL;
	h = held_slot(b, tid);
	return h->tid ? h : NULL;
}

static int deliver_deferred(struct sfp_bpf_defer *b,
			    const struct sfb_deferred *d, bool again);

/* Write a held record if it served something since it was last
 * written, stamped with the newest time of what it served. */
static int held_write(struct sfp_bpf_defer *b, struct held_rec *h)
{
	int err;

	if (!h->dirty)
		return 0;
	if (h->last > h->d->time)
		h->d->time = h->last;
	err = deliver_deferred(b, h->d, h->written);
	h->dirty = false;
	h->written = true;
	return err;
}

/*
 * A block whose switch-in this program did not see (defer.bpf.c,
 * on_switch()) reaches the ring only at the task's next switch-out: after
 * the task ran, after its entry's record was written and the entry taken
 * as over here.  The last records of entries that are over are kept, so
 * that such a late block still gets its user stack and a record after it
 * (recent_find()).
 */
static void recent_keep(struct sfp_bpf_defer *b, const struct sfb_deferred *d,
			bool written)
{
	struct sfb_recent *r = &b->recent[b->recent_next++ % SFB_NR_RECENT];

	if (!r->d && !(r->d = malloc(sizeof(*r->d)))) {
		r->used = false;
		return;		/* only a late block would miss it */
	}
	memcpy(r->d, d, offsetof(struct sfb_deferred, ips) + d->nr * 8);
	r->used = true;
	r->written = written;
}

static struct sfb_recent *recent_find(struct sfp_bpf_defer *b, uint32_t tid,
				      uint64_t cookie)
{
	unsigned int i;

	for (i = 0; i < SFB_NR_RECENT; i++) {
		struct sfb_recent *r = &b->recent[i];

		if (r->used && r->d->tid == tid && r->d->cookie == cookie)
			return r;
	}
	return NULL;
}

/* The entry is over: write what is owed, forget the record. */
static int held_drop(struct sfp_bpf_defer *b, struct held_rec *h)
{
	size_t i = (size_t)(h - b->held), j;
	int err = held_write(b, h);

	if (b->off_cpu)
		recent_keep(b, h->d, h->written);
	free(h->d);
	memset(h, 0, sizeof(*h));
	b->held_nr--;
	/* linear probing deletion: re-insert the rest of the cluster */
	for (j = (i + 1) & (b->held_cap - 1); b->held[j].tid;
	     j = (j + 1) & (b->held_cap - 1)) {
		struct held_rec m = b->held[j];

		memset(&b->held[j], 0, sizeof(m));
		*held_slot(b, m.tid) = m;
	}
	return err;
}

static int held_grow(struct sfp_bpf_defer *b)
{
	struct held_rec *old = b->held;
	size_t i, cap = b->held_cap;

	b->held = calloc(cap ? cap * 2 : 64, sizeof(*b->held));
	if (!b->held) {
		b->held = old;
		return -ENOMEM;
	}
	b->held_cap = cap ? cap * 2 : 64;
	for (i = 0; i < cap; i++)
		if (old[i].tid)
			*held_slot(b, old[i].tid) = old[i];
	free(old);
	return 0;
}

/* Keep d until its entry's end; a record still held for the task is
 * dropped first (its entry is over: the task walked a new one). */
static int held_put(struct sfp_bpf_defer *b, const struct sfb_deferred *d,
		    size_t size)
{
	struct held_rec *h = held_find(b, d->tid);
	int err;

	if (h && (err = held_drop(b, h)))
		return err;
	if ((b->held_nr + 1) * 4 > b->held_cap * 3 && (err = held_grow(b)))
		return err;
	h = held_slot(b, d->tid);
	h->d = malloc(size);
	if (!h->d)
		return -ENOMEM;
	memcpy(h->d, d, size);
	h->tid = d->tid;
	h->cookie = d->cookie;
	h->last = d->time;
	h->dirty = false;
	h->written = false;
	b->held_nr++;
	return 0;
}

/* A record of task tid (cookie, at time): a held record of another
 * cookie is over; of this cookie, it serves one more.  Return: the held
 * record of this cookie or NULL, *err. */
static struct held_rec *held_touch(struct sfp_bpf_defer *b, uint32_t tid,
				   uint64_t cookie, uint64_t time, int *err)
{
	struct held_rec *h = held_find(b, tid);

	*err = 0;
	if (!h)
		return NULL;
	if (h->cookie != cookie) {
		*err = held_drop(b, h);
		return NULL;
	}
	if (time > h->last)
		h->last = time;
	h->dirty = true;
	return h;
}

/* At each poll: what the held records served since. */
static int held_write_all(struct sfp_bpf_defer *b)
{
	size_t i;
	int err;

	for (i = 0; b->held_nr && i < b->held_cap; i++)
		if (b->held[i].tid && (err = held_write(b, &b->held[i])))
			return err;
	return 0;
}

int sfp_bpf_defer__flush(struct sfp_bpf_defer *b)
{
	size_t i;
	int err;

	for (i = 0; b->held_nr && i < b->held_cap; i++)
		while (b->held[i].tid)	/* deletion may move one here */
			if ((err = held_drop(b, &b->held[i])))
				return err;
	return 0;
}

static int inject(struct sfp_bpf_defer *b, int n, int cpu)
{
	if (n < 0) {
		pr_warn("bpf-defer: cannot encode a record: %s",
			sfp_strerror(n));
		return n;
	}
	return sfp_record_inject(b->r, b->obuf, (size_t)n, cpu);
}

static int on_sample(struct sfp_bpf_defer *b, const struct sfb_sample *bs,
		     size_t size)
{
	const struct perf_event_attr *oa;
	struct sfp_perf_sample s;
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_NONE };
	const uint64_t *ids;
	size_t nk = 0, i;
	int err;

	if (size < offsetof(struct sfb_sample, kstack) ||
	    bs->nr_kstack > SFB_MAX_KSTACK ||
	    size < offsetof(struct sfb_sample, kstack) + bs->nr_kstack * 8)
		return -EBADMSG;
	oa = sfp_rec_pipe__out_attr(b->p, (int)bs->evsel);
	if (!oa)
		return -EBADMSG;
	held_touch(b, bs->tid, bs->cookie, bs->time, &err);
	if (err)
		return err;
	b->st.samples++;
	memset(&s, 0, sizeof(s));
	s.present = oa->sample_type & (SFP_PERF_SAMPLE_MAX - 1);
	s.misc = (bs->flags & SFB_S_KERNEL) ? PERF_RECORD_MISC_KERNEL
					    : PERF_RECORD_MISC_USER;
	if (sfp_record__ids(b->r, (int)bs->evsel, &ids))
		s.id = ids[0];
	s.stream_id = s.id;
	s.ip = bs->ip;
	s.pid = bs->pid;
	s.tid = bs->tid;
	s.time = bs->time;
	s.cpu = bs->cpu;
	s.period = bs->period;
	/* The kernel part as perf writes it: its context marker first. */
	for (i = 0; i < bs->nr_kstack; i++) {
		if (bs->kstack[i] >= PERF_CONTEXT_MAX_U)
			continue;
		if (!nk)
			b->chain[nk++] = PERF_CONTEXT_KERNEL;
		b->chain[nk++] = bs->kstack[i];
	}
	s.ips = b->chain;
	s.nr_ips = nk;
	if (bs->cookie) {
		struct cookie_slot *cs = cookie_slot(b, bs->cookie, true);

		if (cs)
			cs->samples++;
		b->st.user_samples++;
		u.kind = SFP_DEFER_USER_DEFERRED;
		u.cookie = bs->cookie;
	}
	return inject(b, sfp_record_encode_sample(oa, &s, &u, b->obuf, 65536),
		      (int)bs->cpu);
}

/*
 * --off-cpu: a block the program on sched_switch matched with its
 * switch-in, into the off-CPU samples of record/offcpu.c (the same
 * threshold, rate bound and sums as the tracepoint path) through the
 * pipeline: its kernel part as perf writes it, its entry's cookie.
 */
static int on_offcpu(struct sfp_bpf_defer *b, const struct sfb_offcpu *bo,
		     size_t size)
{
	const struct perf_event_attr *oa;
	struct sfp_perf_sample s;
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_NONE };
	const struct held_rec *h;
	struct sfb_recent *late = NULL;
	const uint64_t *ids;
	size_t nk = 0, i;
	int err;

	if (size < offsetof(struct sfb_offcpu, kstack) ||
	    bo->nr_kstack > SFB_MAX_KSTACK ||
	    size < offsetof(struct sfb_offcpu, kstack) + bo->nr_kstack * 8)
		return -EBADMSG;
	oa = sfp_rec_pipe__out_attr(b->p, b->off_evsel);
	if (!b->off_cpu || !oa)
		return -EBADMSG;
	memset(&s, 0, sizeof(s));
	s.present = oa->sample_type & (SFP_PERF_SAMPLE_MAX - 1);
	s.misc = PERF_RECORD_MISC_KERNEL;
	if (sfp_record__ids(b->r, b->off_evsel, &ids))
		s.id = ids[0];
	s.stream_id = s.id;
	s.pid = bo->pid;
	s.tid = bo->tid;
	s.time = bo->time_out;
	s.cpu = bo->cpu;
	for (i = 0; i < bo->nr_kstack; i++) {
		if (bo->kstack[i] >= PERF_CONTEXT_MAX_U)
			continue;
		if (!nk)
			b->chain[nk++] = PERF_CONTEXT_KERNEL;
		b->chain[nk++] = bo->kstack[i];
	}
	s.ip = nk > 1 ? b->chain[1] : 0;
	s.ips = b->chain;
	s.nr_ips = nk;
	if (bo->cookie) {
		/* the deferred record serves this block too */
		struct cookie_slot *cs = cookie_slot(b, bo->cookie, true);

		if (cs)
			cs->samples++;
		u.kind = SFP_DEFER_USER_DEFERRED;
		u.cookie = bo->cookie;
	}
	/* an entry walked at its first block: its chain is known already */
	h = held_touch(b, bo->tid, bo->cookie, bo->time_in, &err);
	if (err)
		return err;
	if (!h && bo->cookie && (bo->flags & SFB_S_IN_UNSEEN))
		late = recent_find(b, bo->tid, bo->cookie);
	if (h || late) {
		u.unwound = h ? h->d->ips : late->d->ips;
		u.nr_unwound = h ? h->d->nr : late->d->nr;
	}
	err = sfp_rec_pipe__offcpu_block(b->p, &s, &u, bo->time_in,
					 bo->flags & SFB_S_NEW_ENTRY);
	if (late && !err) {
		/* once more, after the block's sample (stamped time_in) */
		if (late->d->time < bo->time_in)
			late->d->time = bo->time_in;
		b->st.late_blocks++;
		err = deliver_deferred(b, late->d, late->written);
		late->written = true;
	}
	return err;
}

static int on_deferred(struct sfp_bpf_defer *b, const struct sfb_deferred *d,
		       size_t size)
{
	struct held_rec *h;
	int err;

	if (size < offsetof(struct sfb_deferred, ips) ||
	    d->nr > SFB_MAX_DEPTH ||
	    size < offsetof(struct sfb_deferred, ips) + d->nr * 8)
		return -EBADMSG;
	if (d->flags & SFB_D_HELD)
		return held_put(b, d, offsetof(struct sfb_deferred, ips) +
				      d->nr * 8);
	/* the task is back in user space: a held entry of it is over */
	h = held_find(b, d->tid);
	if (h && (err = held_drop(b, h)))
		return err;
	if (b->off_cpu)
		recent_keep(b, d, true);
	return deliver_deferred(b, d, false);
}

/* One unwind into the session (its samples' cookie slot, the sums);
 * again: a held record written once more (not counted again). */
static int deliver_deferred(struct sfp_bpf_defer *b,
			    const struct sfb_deferred *d, bool again)
{
	struct sfp_defer_origin o;
	struct cookie_slot *cs;
	const uint64_t *ids;
	uint64_t served = 0, id = 0;
	bool none;
	int err;

	cs = cookie_slot(b, d->cookie, false);
	if (cs) {
		served = cs->samples;
		cookie_del(b, cs);
	}
	none = (d->flags & (SFB_D_EXEC | SFB_D_EXITING | SFB_D_WRONG_TASK)) ||
	       !d->nr;
	/* the entry's short blocks, summed per stack, wait for this */
	if (b->off_cpu) {
		err = sfp_rec_pipe__offcpu_user(b->p, d->cookie,
						none ? NULL : d->ips,
						none ? 0 : d->nr);
		if (err)
			return err;
	}
	if (none) {
		/* No stack of the sampled image: the samples keep their
		 * kernel part only (the stitcher delivers them unmerged). */
		b->st.deferred_dropped++;
		return 0;
	}
	if (d->flags & SFB_D_NO_TABLE) {
		b->st.no_table_unwinds += !again;
		b->st.no_table_samples += served;
	}
	if (!again) {
		if (d->stop < SFP_STOP__MAX)
			b->st.stops[d->stop]++;
		b->st.deferred++;
		b->st.frames += d->nr;
		b->st.sframe_frames += d->sframe_frames;
		b->st.fp_frames += d->fp_frames;
	}
	o.pid = d->pid;
	o.tid = d->tid;
	o.cpu = d->cpu;
	o.time = d->time;
	if (sfp_record__ids(b->r, 0, &ids))
		id = ids[0];
	return inject(b, sfp_record_encode_deferred(sfp_rec_pipe__out_attr(b->p, 0),
						  id, &o, d->cookie, d->ips,
						  d->nr, b->obuf, 65536),
		      (int)d->cpu);
}

int sfb_ring_record(void *ctx, void *data, size_t size)
{
	struct sfp_bpf_defer *b = ctx;
	uint32_t type;
	int err = 0;

	if (size < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case SFB_REC_SAMPLE:
		err = on_sample(b, data, size);
		break;
	case SFB_REC_DEFERRED:
		err = on_deferred(b, data, size);
		break;
	case SFB_REC_MISS:
		if (size >= sizeof(struct sfb_miss)) {
			const struct sfb_miss *m = data;

			b->st.misses++;
			if (b->tw)
				sfb_worker__miss(b, (pid_t)m->pid, m->dev,
						 m->ino, m->vm_start);
			else
				sfb_tables__resolve_miss(b->tables,
							 (pid_t)m->pid, m->dev,
							 m->ino, m->vm_start);
		}
		break;
	case SFB_REC_STALE:
		b->st.stale++;
		break;
	case SFB_REC_OFFCPU:
		err = on_offcpu(b, data, size);
		break;
	default:
		err = -EBADMSG;
		break;
	}
	if (err == -EBADMSG)
		pr_warn("bpf-defer: ring record of type %u and %zu bytes does "
			"not match its layout; skipped", type, size);
	else if (err && !b->err)
		b->err = err;
	return 0;
}

int sfp_bpf_defer__wait_fd(const struct sfp_bpf_defer *b)
{
	return b->ring ? ring_buffer__epoll_fd(b->ring) : -1;
}

int sfp_bpf_defer__poll(struct sfp_bpf_defer *b)
{
	int n = ring_buffer__consume(b->ring), err;

	if (b->err)
		return b->err;
	/* the processes that mapped code since: their VMAs again (an error
	 * only leaves their walks to the callbacks' cache) */
	sfb_uvmas__flush(b);
	/* what the held records served meanwhile: their record now, so
	 * that readers need not keep those samples waiting for long */
	err = held_write_all(b);
	return err < 0 ? err : n;
}

void sfp_bpf_defer__finish(struct sfp_bpf_defer *b)
{
	struct sfp_bpf_defer_stats st;

	if (!b->off_cpu)
		return;
	sfp_bpf_defer__stats(b, &st);
	sfp_rec_pipe__offcpu_switches(b->p, st.kernel[SFB_ST_OFF_SWITCHES],
				      st.kernel[SFB_ST_OFF_PREEMPTED],
				      st.kernel[SFB_ST_OFF_EXITS],
				      st.kernel[SFB_ST_OFF_BLOCKS]);
}

int sfp_bpf_defer__record(const void *rec, size_t size, int cpu, void *ctx)
{
	struct sfp_bpf_defer *b = ctx;
	const struct perf_event_header *h = rec;

	/* New executable file mappings: their tables, before the BPF side
	 * meets them.  MMAP2: prot at byte 64, the file name at 72. */
	if (h->type == PERF_RECORD_MMAP2 && size >= 80) {
		const uint8_t *p = rec;
		uint32_t prot;
		const char *name = (const char *)p + 72;

		memcpy(&prot, p + 64, sizeof(prot));
		uint32_t pid;
		bool later = false;

		memcpy(&pid, p + 8, sizeof(pid));
		/* perf's "//anon" (anonymous memory made executable, a
		 * JIT's code) has no table to load; it may cover a module
		 * the BPF side's VMAs still name: those go all the same */
		if (prot & 0x4)
			later = sfb_uvmas__dirty(b, (pid_t)pid) && !b->tw;
		if ((prot & 0x4) && !strncmp(name, "//anon", 6)) {
			bpf_map_delete_elem(b->vmas_fd, &pid);
			prot = 0;
		}
		if (!memchr(name, 0, size - 72) || name[0] != '/')
			prot = 0;
		if ((prot & 0x4) && b->tw) {
			/* MMAP2: maj, min at 40, ino at 48 (unless the
			 * record carries a build-id there instead) */
			uint32_t maj = 0, min = 0;
			uint64_t ino = 0;

			if (!(h->misc & (1u << 14) /* MMAP_BUILD_ID */)) {
				memcpy(&maj, p + 40, sizeof(maj));
				memcpy(&min, p + 44, sizeof(min));
				memcpy(&ino, p + 48, sizeof(ino));
			}
			/* the table on the tables' thread (which drops the
			 * VMAs again once it is in); the stale VMAs now */
			sfb_worker__mapping(b, (pid_t)pid,
					    ((uint64_t)maj << 20) | min, ino,
					    name);
			bpf_map_delete_elem(b->vmas_fd, &pid);
		} else if (prot & 0x4) {
			char alt[PATH_MAX + 32];

			sfb_tables__ensure(b->tables,
					   sfb_tables__path_of((pid_t)pid, name,
							       alt, sizeof(alt)),
					   0, 0);
			/* the VMAs the BPF side remembered may be stale now:
			 * dropped by the flush that reads the new ones, else
			 * here */
			if (!later)
				bpf_map_delete_elem(b->vmas_fd, &pid);
		}
	}
	/* EXIT: pid, ppid, tid, ptid; the process's, when pid == tid */
	if (h->type == PERF_RECORD_EXIT && size >= 24) {
		uint32_t pid, tid;

		memcpy(&pid, (const uint8_t *)rec + 8, sizeof(pid));
		memcpy(&tid, (const uint8_t *)rec + 16, sizeof(tid));
		if (pid == tid)
			sfb_uvmas__exit(b, (pid_t)pid);
	}
	return sfp_rec_pipe__record(rec, size, cpu, b->p);
}
