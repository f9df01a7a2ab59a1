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
	struct sfp_record_sample s;
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_NONE };
	const uint64_t *ids;
	size_t nk = 0, i;

	if (size < offsetof(struct sfb_sample, kstack) ||
	    bs->nr_kstack > SFB_MAX_KSTACK ||
	    size < offsetof(struct sfb_sample, kstack) + bs->nr_kstack * 8)
		return -EBADMSG;
	oa = sfp_rec_pipe__out_attr(b->p, (int)bs->evsel);
	if (!oa)
		return -EBADMSG;
	b->st.samples++;
	memset(&s, 0, sizeof(s));
	s.sample_type = oa->sample_type;
	s.evsel = (int)bs->evsel;
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
	s.callchain = b->chain;
	s.nr_callchain = nk;
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

static int on_deferred(struct sfp_bpf_defer *b, const struct sfb_deferred *d,
		       size_t size)
{
	struct sfp_defer_origin o;
	struct cookie_slot *cs;
	const uint64_t *ids;
	uint64_t served = 0, id = 0;

	if (size < offsetof(struct sfb_deferred, ips) ||
	    d->nr > SFB_MAX_DEPTH ||
	    size < offsetof(struct sfb_deferred, ips) + d->nr * 8)
		return -EBADMSG;
	cs = cookie_slot(b, d->cookie, false);
	if (cs) {
		served = cs->samples;
		cookie_del(b, cs);
	}
	if (d->flags & (SFB_D_EXEC | SFB_D_EXITING | SFB_D_WRONG_TASK) ||
	    !d->nr) {
		/* No stack of the sampled image: the samples keep their
		 * kernel part only (the stitcher delivers them unmerged). */
		b->st.deferred_dropped++;
		return 0;
	}
	if (d->flags & SFB_D_NO_TABLE) {
		b->st.no_table_unwinds++;
		b->st.no_table_samples += served;
	}
	if (d->stop < SFP_STOP__MAX)
		b->st.stops[d->stop]++;
	b->st.deferred++;
	b->st.frames += d->nr;
	b->st.sframe_frames += d->sframe_frames;
	b->st.fp_frames += d->fp_frames;
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

int sfp_bpf_defer__poll(struct sfp_bpf_defer *b)
{
	int n = ring_buffer__consume(b->ring);

	if (b->err)
		return b->err;
	return n;
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

		memcpy(&pid, p + 8, sizeof(pid));
		if ((prot & 0x4) && memchr(name, 0, size - 72) &&
		    name[0] == '/' && b->tw) {
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
		} else if ((prot & 0x4) && memchr(name, 0, size - 72) &&
			   name[0] == '/') {
			char alt[PATH_MAX + 32];

			sfb_tables__ensure(b->tables,
					   sfb_tables__path_of((pid_t)pid, name,
							       alt, sizeof(alt)),
					   0, 0);
			/* the VMAs the BPF side remembered may be stale now */
			bpf_map_delete_elem(b->vmas_fd, &pid);
		}
	}
	return sfp_rec_pipe__record(rec, size, cpu, b->p);
}
