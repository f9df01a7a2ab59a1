// SPDX-License-Identifier: MIT
/*
 * Writing the records of the output file.  In the sframe modes the samples
 * are rewritten: the user registers and stack bytes go (the file stays
 * small) and the callchain gets its user part, either the kernel's deferred
 * form (PERF_CONTEXT_USER_DEFERRED, cookie) or the classic inline one
 * (PERF_CONTEXT_USER, ips...).  The output attr says so, so that readers
 * parse what is there.  The sample layout and the sample_id trailers are
 * the perf.data writer's (sfp_perf_write_sample/_sample_id); what is left
 * here is assembling the callchain and the fixed fields of the records
 * that component has no encoder for.
 */
#include <errno.h>

#include "perf/perf-int.h"
#include "record/encode.h"

/* The fields a rewritten sample can carry: those of a session's sample
 * (record/sample.c) without the user registers and stack bytes. */
#define OUT_SAMPLE_BITS                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |        \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |             \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |     \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)
/* Entries of the longest callchain a 64 KiB record can hold. */
#define MAX_CHAIN (65536 / 8)
/* Chains up to this long are put together on the stack. */
#define STACK_CHAIN 1024

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

/* A NUL-terminated string padded with zeros to 8 bytes. */
static void put_string(struct wbuf *w, const char *str)
{
	static const uint8_t zeros[8];
	size_t n = strlen(str) + 1;

	put_bytes(w, str, n);
	put_bytes(w, zeros, (8 - (n & 7)) & 7);
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

/* The sample_id_all trailer of a non-sample record, as perf lays it out. */
static void put_sample_id(struct wbuf *w, const struct perf_event_attr *attr,
			  uint32_t pid, uint32_t tid, uint64_t time,
			  uint64_t id, uint32_t cpu)
{
	struct sfp_perf_attr a = {
		.sample_type = attr->sample_type,
		.flags = attr->sample_id_all ? SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL : 0,
	};
	struct sfp_perf_sample s = {
		.pid = pid, .tid = tid, .time = time, .id = id,
		.stream_id = id, .cpu = cpu,
	};
	int n;

	if (w->overflow)
		return;
	n = sfp_perf_write_sample_id(&a, &s, w->p, (size_t)(w->end - w->p));
	if (n < 0)
		w->overflow = true;
	else
		w->p += n;
}

/* Entries of the chain of s with user part u (0: no chain). */
static size_t chain_len(const struct perf_event_attr *out_attr,
			const struct sfp_perf_sample *s,
			const struct sfp_defer_user *u)
{
	size_t nr;

	if (!(out_attr->sample_type & PERF_SAMPLE_CALLCHAIN))
		return 0;
	nr = sfp_sample_kernel_len(s);
	if (u->kind == SFP_DEFER_USER_DEFERRED)
		nr += 2;
	else if (u->kind == SFP_DEFER_USER_INLINE && u->nr)
		nr += 1 + u->nr;
	return nr;
}

/* The kernel's part of s, then the user part in the form u chose. */
static void chain_fill(const struct sfp_perf_sample *s,
		       const struct sfp_defer_user *u, uint64_t *chain)
{
	size_t nk = sfp_sample_kernel_len(s);

	if (nk)
		memcpy(chain, s->ips, nk * 8);
	if (u->kind == SFP_DEFER_USER_DEFERRED) {
		chain[nk] = SFP_PERF_CONTEXT_USER_DEFERRED;
		chain[nk + 1] = u->cookie;
	} else if (u->kind == SFP_DEFER_USER_INLINE && u->nr) {
		chain[nk] = PERF_CONTEXT_USER;
		memcpy(chain + nk + 1, u->ips, u->nr * 8);
	}
}

/*
 * s as the output attr declares it: the same sample, less what the
 * rewrite drops (user registers and stack bytes; the chain, which the
 * caller assembles).  A copy of the whole struct, not of its fields one
 * by one: a field the session learns to read passes through unnamed.
 */
static void sample_out(const struct perf_event_attr *out_attr,
		       const struct sfp_perf_sample *s,
		       struct sfp_perf_sample *ps)
{
	*ps = *s;
	ps->present = out_attr->sample_type & (SFP_PERF_SAMPLE_MAX - 1);
	ps->nr_ips = 0;
	ps->ips = NULL;
	ps->deferred = false;
	ps->deferred_cookie = 0;
	ps->user_regs_abi = 0;
	ps->user_regs_mask = 0;
	ps->user_regs = NULL;
	ps->user_stack_size = 0;
	ps->user_stack = NULL;
	ps->user_stack_dyn_size = 0;
}

int sfp_record_encode_sample(const struct perf_event_attr *out_attr,
			     const struct sfp_perf_sample *s,
			     const struct sfp_defer_user *u, void *buf,
			     size_t cap)
{
	uint64_t stack_chain[STACK_CHAIN], *chain = stack_chain;
	size_t nr = chain_len(out_attr, s, u);
	struct sfp_perf_sample ps;
	struct sfp_perf_attr a;
	int n;

	if (out_attr->sample_type & ~(uint64_t)OUT_SAMPLE_BITS)
		return -EOPNOTSUPP;
	sfp_record_perf_attr(out_attr, &a);
	sample_out(out_attr, s, &ps);
	if (out_attr->sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (nr > MAX_CHAIN)
			return -EINVAL;
		if (nr > STACK_CHAIN) {
			chain = malloc(nr * sizeof(*chain));
			if (!chain)
				return -ENOMEM;
		}
		chain_fill(s, u, chain);
		ps.ips = chain;
		ps.nr_ips = nr;
	}
	n = sfp_perf_write_sample(&a, s->misc, &ps, buf, cap);
	if (chain != stack_chain)
		free(chain);
	return n;
}

int sfp_record_sample_event(const struct perf_event_attr *out_attr,
			    const struct sfp_perf_evsel *evsel,
			    const struct sfp_perf_sample *s,
			    const struct sfp_defer_user *u, uint64_t **chain,
			    size_t *chain_cap, struct sfp_perf_event *ev)
{
	size_t nr = chain_len(out_attr, s, u);

	if (out_attr->sample_type & ~(uint64_t)OUT_SAMPLE_BITS)
		return -EOPNOTSUPP;
	/* the limit of the record it stands for, as in the file */
	if (nr > MAX_CHAIN)
		return -EINVAL;
	if (nr > *chain_cap) {
		size_t cap = nr < 256 ? 256 : nr;
		uint64_t *c = realloc(*chain, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		*chain = c;
		*chain_cap = cap;
	}
	memset(ev, 0, sizeof(*ev));
	ev->type = PERF_RECORD_SAMPLE;
	ev->misc = s->misc;
	ev->evsel = evsel;
	sample_out(out_attr, s, &ev->sample);
	if (out_attr->sample_type & PERF_SAMPLE_CALLCHAIN) {
		chain_fill(s, u, *chain);
		ev->sample.ips = *chain;
		ev->sample.nr_ips = nr;
		if (u->kind == SFP_DEFER_USER_DEFERRED) {
			ev->sample.deferred = true;
			ev->sample.deferred_cookie = u->cookie;
		}
	}
	return 0;
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
	put_sample_id(&w, out_attr, o->pid, o->tid, o->time, id, o->cpu);
	/* The kernel marks the record as user-space content. */
	return finish(&w, buf, SFP_PERF_RECORD_CALLCHAIN_DEFERRED,
		      PERF_RECORD_MISC_USER);
}

int sfp_record_encode_mmap2(const struct perf_event_attr *attr, uint64_t id,
			    uint32_t pid, uint32_t tid, uint64_t start,
			    uint64_t len, uint64_t pgoff, uint32_t prot,
			    uint32_t flags, const char *path,
			    const uint8_t *build_id, size_t build_id_len,
			    void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (cap < 8)
		return -ENOSPC;
	if (build_id_len > 20)
		build_id_len = 0;
	w.p += 8;
	put32x2(&w, pid, tid);
	put64(&w, start);
	put64(&w, len);
	put64(&w, pgoff);
	if (build_id_len) {
		/* As the kernel writes it with attr.build_id: size, three
		 * reserved bytes, the id padded to 20 bytes. */
		uint8_t b[24] = { (uint8_t)build_id_len };

		memcpy(b + 4, build_id, build_id_len);
		put_bytes(&w, b, sizeof(b));
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	} else {
		put32x2(&w, 0, 0);	/* maj, min: unknown here */
		put64(&w, 0);		/* ino */
		put64(&w, 0);		/* ino_generation */
	}
	put32x2(&w, prot, flags);
	put_string(&w, path);
	put_sample_id(&w, attr, pid, tid, 0, id, 0);
	return finish(&w, buf, PERF_RECORD_MMAP2, misc);
}

int sfp_record_encode_comm(const struct perf_event_attr *attr, uint64_t id,
			   uint32_t pid, uint32_t tid, const char *comm,
			   void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	put32x2(&w, pid, tid);
	put_string(&w, comm);
	put_sample_id(&w, attr, pid, tid, 0, id, 0);
	return finish(&w, buf, PERF_RECORD_COMM, 0);
}

int sfp_record_encode_kernel_mmap(const struct perf_event_attr *attr,
				  uint64_t id, uint64_t start, uint64_t len,
				  const char *name, void *buf, size_t cap)
{
	struct wbuf w = { buf, (uint8_t *)buf + cap, false };

	if (cap < 8)
		return -ENOSPC;
	w.p += 8;
	/* pid -1: the kernel's maps belong to every process. */
	put32x2(&w, (uint32_t)-1, 0);
	put64(&w, start);
	put64(&w, len);
	put64(&w, start);	/* pgoff: perf stores the start address */
	put_string(&w, name);
	put_sample_id(&w, attr, (uint32_t)-1, 0, 0, id, 0);
	return finish(&w, buf, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
}
