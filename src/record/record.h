/* SPDX-License-Identifier: MIT */
/*
 * Internals of the recording sessions shared by the files of src/record/:
 * event-name resolution, the per-CPU ring reader and the session object.
 */
#ifndef SFP_RECORD_INTERNAL_H
#define SFP_RECORD_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include <sfprof/perf.h>
#include <sfprof/record.h>

#include "common/internal.h"

/* Attr flag bits newer than this system's UAPI header (kernel-deferred.md). */
#define SFP_ATTR_BIT_DEFER_CALLCHAIN 38
#define SFP_ATTR_BIT_DEFER_OUTPUT 39

/* The user registers we ask for on x86-64: bp, sp, ip (their perf_regs
 * numbers, for sfp_perf_sample_user_reg(); ascending bits). */
#define SFP_X86_REG_BP 6
#define SFP_X86_REG_SP 7
#define SFP_X86_REG_IP 8
#define SFP_USER_REGS_MASK ((1ULL << SFP_X86_REG_BP) | \
			    (1ULL << SFP_X86_REG_SP) | \
			    (1ULL << SFP_X86_REG_IP))
/* What the sframe mode asks for: those and the other general registers
 * (bx, cx, dx, si, di, flags, r8-r15; not ax, which a syscall's return
 * value changes within its entry, nor the segment registers), so that the
 * deferral engine can tell two kernel entries from one call site apart:
 * their loop counters and pointers differ.  In the ring only, never in
 * the file. */
#define SFP_SFRAME_REGS_MASK 0xff03feULL
/* What perf's --call-graph dwarf asks for: every x86-64 register but the
 * segment registers ds, es, fs, gs; DWARF-based unwinders (perf's, in
 * `perf script`) may need callee-saved registers too. */
#define SFP_DWARF_REGS_MASK 0xff0fffULL

/* Set or test a bit of the attr flags word (byte offset 40). */
SFP_HIDDEN void sfp_attr_set_flag_bit(struct perf_event_attr *a, int bit);
SFP_HIDDEN bool sfp_attr_flag_bit(const struct perf_event_attr *a, int bit);

/* --- events.c --- */

enum sfp_event_kind { SFP_EV_SOFTWARE, SFP_EV_HARDWARE, SFP_EV_TRACEPOINT };

struct sfp_event_desc {
	char name[128];
	uint32_t type;
	uint64_t config;
	enum sfp_event_kind kind;
};

/*
 * Resolve one event name (perf's spelling) to type/config.  Tracepoints
 * "sys:name" are looked up in tracefs.  Return: 0, -ENOENT unknown name,
 * -EOPNOTSUPP tracefs not available (both logged with the fix).
 */
SFP_HIDDEN int sfp_event_parse(const char *name, struct sfp_event_desc *d);

/*
 * Where a field of a tracepoint's raw record is (tracefs' format file):
 * its offset and size in bytes.  Return: 0, -ENOENT (no tracefs, no such
 * event or field).
 */
SFP_HIDDEN int sfp_tracepoint_field(const char *sys, const char *event,
				    const char *field, uint32_t *offset,
				    uint32_t *size);

/* perf_event_open(2). */
SFP_HIDDEN int sfp_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				   int cpu, int group_fd, unsigned long flags);

/* --- ring.c: one mmap'ed ring, read through a bounds-checked path --- */

struct sfp_ring {
	void *base;		/* mmap: control page + data */
	size_t mmap_len;
	uint8_t *data;
	uint64_t data_size;	/* power of two */
	uint64_t tail;		/* our read position (mirrors data_tail) */
	int cpu;
	int fd;
};

SFP_HIDDEN int sfp_ring_map(struct sfp_ring *rg, int fd, int cpu,
			    uint32_t data_pages);
SFP_HIDDEN void sfp_ring_unmap(struct sfp_ring *rg);

/*
 * Read the next record into buf (capacity cap, 8-aligned).  Return: the
 * record size, 0 when the ring is empty, -EBADMSG when the header is
 * impossible (size < 8, not a multiple of 8, larger than the ring or than
 * what the kernel has published), -ENOSPC when cap is too small.
 */
SFP_HIDDEN int sfp_ring_next(struct sfp_ring *rg, void *buf, size_t cap);

/* Publish the read position to the kernel (data_tail). */
SFP_HIDDEN void sfp_ring_consume(struct sfp_ring *rg);

/* --- sample.c: samples through the perf.data decoder (src/perf) --- */

struct sfp_perf_attr;

/* The perf.data component's view of one of our attrs. */
SFP_HIDDEN void sfp_record_perf_attr(const struct perf_event_attr *in,
				     struct sfp_perf_attr *out);

/* Size of the sample_id_all trailer for sample_type (0 if none). */
SFP_HIDDEN size_t sfp_sample_id_size(uint64_t sample_type);

/*
 * Decode a sample of a ring laid out by attr (type, regs mask, ...) with
 * the perf.data decoder, its arrays in place.  Return: 0, -EBADMSG (s is
 * then zero or partly written), -EOPNOTSUPP (a sample_type bit a session
 * never asks for; s zero).
 */
SFP_HIDDEN int sfp_record_decode_sample(const struct perf_event_attr *attr,
					const void *rec, size_t size,
					struct sfp_perf_sample *s);

/* The same with attr already in the decoder's terms (sfp_record_perf_attr()),
 * as the session keeps it per event: converting it for every sample was a
 * third of the time a sample took to decode. */
SFP_HIDDEN int sfp_record_decode_sample_pa(const struct sfp_perf_attr *pa,
					   const void *rec, size_t size,
					   struct sfp_perf_sample *s);

/* The sample_id_all trailer of a non-sample record (s zeroed first). */
SFP_HIDDEN int sfp_record_decode_sample_id(uint64_t sample_type,
					   const void *rec, size_t size,
					   struct sfp_perf_sample *s);

/* Entries of s's chain before its user part (PERF_CONTEXT_USER or the
 * deferred marker): the kernel's frames and context markers. */
static inline size_t sfp_sample_kernel_len(const struct sfp_perf_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr_ips; i++)
		if (s->ips[i] == PERF_CONTEXT_USER ||
		    s->ips[i] == SFP_PERF_CONTEXT_USER_DEFERRED)
			break;
	return i;
}

/* --- session.c --- */

/* The session's event a PERF_RECORD_SAMPLE of it belongs to (by its
 * IDENTIFIER when there are several).  Return: its index, -EBADMSG (too
 * short), -ENOENT (an id of no event of the session). */
SFP_HIDDEN int sfp_record_sample_evsel(const struct sfp_record *r,
				       const void *rec, size_t size);

/* --- session.c, for --call-graph bpf-defer (src/bpf/) --- */

/* The event fds, in the order of the ids of evsel 0, 1, ... */
SFP_HIDDEN size_t sfp_record_fds(const struct sfp_record *r, const int **fds);

/* Queue a record made elsewhere; sfp_record__read() delivers it in time
 * order with those of the rings.  Return: 0 or -ENOMEM. */
SFP_HIDDEN int sfp_record_inject(struct sfp_record *r, const void *rec,
				 size_t size, int cpu);

#endif /* SFP_RECORD_INTERNAL_H */
