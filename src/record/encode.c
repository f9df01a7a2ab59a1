// SPDX-License-Identifier: MIT
/*
 * Writing the records of the output file.  In the sframe modes the samples
 * are rewritten: the user registers and stack bytes go (the file stays
 * small) and the callchain gets its user part, either the kernel's deferred
 * form (PERF_CONTEXT_USER_DEFERRED, cookie) or the classic inline one
 * (PERF_CONTEXT_USER, ips...).  The output attr says so, so that readers
 * parse what is there.
 */
#include <errno.h>

#include "record/encode.h"

void sfp_record_out_attr(const struct perf_event_attr *in, bool deferred,
			 bool tracking, struct perf_event_attr *out)
{
	*out = *in;
	out->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER |
					PERF_SAMPLE_STACK_USER);
	out->sample_regs_user = 0;
	out->sample_stack_user = 0;
	/* The user part is in the file: readers must not think it excluded. */
	out->exclude_callchain_user = 0;
	if (deferred) {
		sfp_attr_set_flag_bit(out, SFP_ATTR_BIT_DEFER_CALLCHAIN);
		if (tracking)
			sfp_attr_set_flag_bit(out, SFP_ATTR_BIT_DEFER_OUTPUT);
	}
}

struct wbuf {
	uint8_t *p, *end;
	bool overflow;
};

static void put64(struct wbuf *w, uint64_t v)
{
	if (w->end - w->p < 8) {
		w->overflow = true;
		return;
	}
	memcpy(w->p, &v, 8);
	w->p += 8;
}

static void put32x2(struct wbuf *w, uint32_t a, uint32_t b)
{
	put64(w, (uint64_t)a | ((uint64_t)b << 32));
}

static void put_bytes(struct wbuf *w, const void *d, size_t n)
{
	if ((size_t)(w->end - w->p) < n) {
		w->overflow = true;
		return;
	}
	memcpy(w->p, d, n);
	w->p += n;
}

static int finish(struct wbuf *w, uint8_t *start, uint32_t type,
		  uint16_t misc)
{
	struct perf_event_header h;
	size_t size = (size_t)(w->p - start);

	if (w->overflow)
		return -ENOSPC;
	if (size > 65535 || (size & 7))
		return -EINVAL;
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)size;
	memcpy(start, &h, sizeof(h));
	return (int)size;
}

static void put_sample_id(void *wp, uint64_t t, uint32_t pid,
			      uint32_t tid, uint64_t time, uint64_t id,
			      uint32_t cpu)
{
	struct wbuf *w = wp;

	if (t & PERF_SAMPLE_TID)
		put32x2(w, pid, tid);
	if (t & PERF_SAMPLE_TIME)
		put64(w, time);
	if (t & PERF_SAMPLE_ID)
		put64(w, id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put64(w, id);
	if (t & PERF_SAMPLE_CPU)
		put32x2(w, cpu, 0);
	if (t & PERF_SAMPLE_IDENTIFIER)
		put64(w, id);
}

/* Length of the kernel part: the chain up to any user context marker. */
static size_t kernel_part(const struct sfp_record_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr_callchain; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER ||
		    s->callchain[i] == SFP_PERF_CONTEXT_USER_DEFERRED)
			break;
	return i;
}

int sfp_record_encode_sample(const struct perf_event_attr *out_attr,
			     const struct sfp_record_sample *s,
			     const struct sfp_defer_user *u, void *buf,
			     size_t cap)
{
	uint64_t t = out_attr->sample_type;
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	size_t nk, i;

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	if (t & PERF_SAMPLE_IDENTIFIER)
		put64(&w, s->id);
	if (t & PERF_SAMPLE_IP)
		put64(&w, s->ip);
	if (t & PERF_SAMPLE_TID)
		put32x2(&w, s->pid, s->tid);
	if (t & PERF_SAMPLE_TIME)
		put64(&w, s->time);
	if (t & PERF_SAMPLE_ADDR)
		put64(&w, s->addr);
	if (t & PERF_SAMPLE_ID)
		put64(&w, s->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put64(&w, s->stream_id);
	if (t & PERF_SAMPLE_CPU)
		put32x2(&w, s->cpu, 0);
	if (t & PERF_SAMPLE_PERIOD)
		put64(&w, s->period);
	if (t & PERF_SAMPLE_READ)
		return -EOPNOTSUPP;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		size_t nr;

		nk = kernel_part(s);
		nr = nk;
		if (u->kind == SFP_DEFER_USER_DEFERRED)
			nr += 2;
		else if (u->kind == SFP_DEFER_USER_INLINE && u->nr)
			nr += 1 + u->nr;
		put64(&w, nr);
		put_bytes(&w, s->callchain, nk * 8);
		if (u->kind == SFP_DEFER_USER_DEFERRED) {
			put64(&w, SFP_PERF_CONTEXT_USER_DEFERRED);
			put64(&w, u->cookie);
		} else if (u->kind == SFP_DEFER_USER_INLINE && u->nr) {
			put64(&w, PERF_CONTEXT_USER);
			for (i = 0; i < u->nr; i++)
				put64(&w, u->ips[i]);
		}
	}
	if (t & PERF_SAMPLE_RAW) {
		/* u32 size + data, padded so the record stays 8-aligned
		 * (the kernel pads the same way). */
		size_t n = 4 + s->raw_size;
		uint32_t sz = s->raw_size;

		put_bytes(&w, &sz, 4);
		put_bytes(&w, s->raw, s->raw_size);
		while (!w.overflow && (n & 7)) {
			put_bytes(&w, "", 1);
			n++;
		}
	}
	if (t & ~(uint64_t)(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			    PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			    PERF_SAMPLE_RAW))
		return -EOPNOTSUPP;
	return finish(&w, buf, PERF_RECORD_SAMPLE, s->misc);
}

int sfp_record_encode_deferred(const struct perf_event_attr *out_attr,
			       uint64_t id, const struct sfp_defer_origin *o,
			       uint64_t cookie, const uint64_t *ips, size_t nr,
			       void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	size_t i;

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	put64(&w, cookie);
	put64(&w, nr);
	for (i = 0; i < nr; i++)
		put64(&w, ips[i]);
	if (out_attr->sample_id_all)
		put_sample_id(&w, out_attr->sample_type, o->pid,
					 o->tid, o->time, id, o->cpu);
	/* The kernel marks the record as user-space content. */
	return finish(&w, buf, SFP_PERF_RECORD_CALLCHAIN_DEFERRED,
		      PERF_RECORD_MISC_USER);
}

int sfp_record_encode_mmap2(const struct perf_event_attr *attr, uint64_t id,
			    uint32_t pid, uint32_t tid, uint64_t start,
			    uint64_t len, uint64_t pgoff, uint32_t prot,
			    uint32_t flags, const char *path, void *buf,
			    size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	size_t n = strlen(path) + 1, pad = (8 - (n & 7)) & 7;
	static const uint8_t zeros[8];

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	put32x2(&w, pid, tid);
	put64(&w, start);
	put64(&w, len);
	put64(&w, pgoff);
	put32x2(&w, 0, 0);	/* maj, min: unknown for synthesized maps */
	put64(&w, 0);		/* ino */
	put64(&w, 0);		/* ino_generation */
	put32x2(&w, prot, flags);
	put_bytes(&w, path, n);
	put_bytes(&w, zeros, pad);
	if (attr->sample_id_all)
		put_sample_id(&w, attr->sample_type, pid, tid, 0,
					 id, 0);
	return finish(&w, buf, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
}

int sfp_record_encode_comm(const struct perf_event_attr *attr, uint64_t id,
			   uint32_t pid, uint32_t tid, const char *comm,
			   void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	size_t n = strlen(comm) + 1, pad = (8 - (n & 7)) & 7;
	static const uint8_t zeros[8];

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	put32x2(&w, pid, tid);
	put_bytes(&w, comm, n);
	put_bytes(&w, zeros, pad);
	if (attr->sample_id_all)
		put_sample_id(&w, attr->sample_type, pid, tid, 0,
					 id, 0);
	return finish(&w, buf, PERF_RECORD_COMM, 0);
}

int sfp_record_encode_kernel_mmap(const struct perf_event_attr *attr,
				  uint64_t id, uint64_t start, uint64_t len,
				  const char *name, void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	size_t n = strlen(name) + 1, pad = (8 - (n & 7)) & 7;
	static const uint8_t zeros[8];

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	/* pid -1: the kernel's maps belong to every process. */
	put32x2(&w, (uint32_t)-1, 0);
	put64(&w, start);
	put64(&w, len);
	put64(&w, start);	/* pgoff: perf stores the start address */
	put_bytes(&w, name, n);
	put_bytes(&w, zeros, pad);
	if (attr->sample_id_all)
		put_sample_id(&w, attr->sample_type, (uint32_t)-1, 0, 0, id,
			      0);
	return finish(&w, buf, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
}
