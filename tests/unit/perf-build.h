/* SPDX-License-Identifier: MIT */
/*
 * Byte-by-byte builder of perf.data files for tests, written from the UAPI
 * layout (include/uapi/linux/perf_event.h, tools/perf/util/header.h), not
 * with sfprof's writer: header, one perf_event_attr with ids, data
 * records, no features.  `be` builds a big-endian file (bitfield bytes of
 * the attr flags mirrored, as a big-endian compiler lays them out).
 */
#ifndef SFP_TEST_PERF_BUILD_H
#define SFP_TEST_PERF_BUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pb {
	uint8_t *b;
	size_t len, cap;
	bool be;
};

static inline void pb_raw(struct pb *p, const void *d, size_t n)
{
	if (p->len + n > p->cap) {
		p->cap = (p->len + n) * 2 + 256;
		p->b = realloc(p->b, p->cap);
	}
	memcpy(p->b + p->len, d, n);
	p->len += n;
}

static inline void pb_uint(struct pb *p, uint64_t v, int n)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < n; i++)
		x[p->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
	pb_raw(p, x, (size_t)n);
}
#define pb_u8(p, v) pb_uint(p, v, 1)
#define pb_u16(p, v) pb_uint(p, v, 2)
#define pb_u32(p, v) pb_uint(p, v, 4)
#define pb_u64(p, v) pb_uint(p, v, 8)

static inline void pb_patch64(struct pb *p, size_t off, uint64_t v)
{
	size_t save = p->len;

	p->len = off;
	pb_u64(p, v);
	p->len = save;
}

static inline void pb_patch16(struct pb *p, size_t off, uint16_t v)
{
	size_t save = p->len;

	p->len = off;
	pb_u16(p, v);
	p->len = save;
}

/* Sample types the tests use. */
#define PB_ST_IDENT (1u << 16)
#define PB_ST_IP (1u << 0)
#define PB_ST_TID (1u << 1)
#define PB_ST_TIME (1u << 2)
#define PB_ST_CPU (1u << 7)
#define PB_ST_PERIOD (1u << 8)
#define PB_ST_CALLCHAIN (1u << 5)
#define PB_SAMPLE_TYPE (PB_ST_IDENT | PB_ST_IP | PB_ST_TID | PB_ST_TIME | \
			PB_ST_CPU | PB_ST_PERIOD | PB_ST_CALLCHAIN)
#define PB_ID 42
#define PB_CTX_KERNEL ((uint64_t)-128)
#define PB_CTX_USER ((uint64_t)-512)
#define PB_CTX_USER_DEFERRED ((uint64_t)-640)

static inline uint8_t pb_rev8(uint8_t b)
{
	uint8_t r = 0;
	int i;

	for (i = 0; i < 8; i++)
		if (b & (1u << i))
			r |= (uint8_t)(0x80u >> i);
	return r;
}

/*
 * File header + one attr (size 136) + its id; data starts at once.
 * flags: attr bitfield word, bit 0 = disabled.  attr_sz lets a test write
 * an older, shorter attr (64 = VER0).
 */
static inline void pb_begin(struct pb *p, bool be, uint64_t sample_type,
			    uint64_t flags, uint32_t attr_sz)
{
	size_t a_off = 104, i_off = a_off + attr_sz + 16;
	int i;

	memset(p, 0, sizeof(*p));
	p->be = be;
	pb_raw(p, "PERFILE2", 8);	/* the magic is bytes, not a number */
	if (be) {			/* ... read as u64 in the file's order */
		p->len = 0;
		pb_u64(p, 0x32454c4946524550ull);
	}
	pb_u64(p, 104);			/* header size */
	pb_u64(p, attr_sz + 16);	/* attr_size: attr + ids section */
	pb_u64(p, a_off);
	pb_u64(p, attr_sz + 16);
	pb_u64(p, i_off + 8);		/* data.offset (patched by pb_end) */
	pb_u64(p, 0);			/* data.size */
	pb_u64(p, 0);
	pb_u64(p, 0);			/* event_types */
	for (i = 0; i < 4; i++)
		pb_u64(p, 0);		/* no features */
	/* perf_event_attr */
	pb_u32(p, 1);			/* PERF_TYPE_SOFTWARE */
	pb_u32(p, attr_sz);
	pb_u64(p, 0);			/* cpu-clock */
	pb_u64(p, 4000);		/* sample_freq */
	pb_u64(p, sample_type);
	pb_u64(p, 0);			/* read_format */
	for (i = 0; i < 8; i++) {
		uint8_t byte = (uint8_t)(flags >> (8 * i));

		pb_u8(p, be ? pb_rev8(byte) : byte);
	}
	while (p->len < a_off + attr_sz)
		pb_u8(p, 0);
	pb_u64(p, i_off);		/* ids section */
	pb_u64(p, 8);
	pb_u64(p, PB_ID);
}

static inline void pb_end(struct pb *p)
{
	size_t d_off = 104 + 16;
	uint64_t attr_size;

	/* data.offset/size sit at 40/48; attr_size at 16 */
	memcpy(&attr_size, p->b + 16, 8);
	if (p->be)
		attr_size = __builtin_bswap64(attr_size);
	d_off = 104 + attr_size + 8;
	pb_patch64(p, 40, d_off);
	pb_patch64(p, 48, p->len - d_off);
}

/* sample_id trailer for PB_SAMPLE_TYPE: tid, time, cpu, identifier */
static inline void pb_trailer(struct pb *p, uint32_t tid, uint64_t time,
			      uint32_t cpu)
{
	pb_u32(p, tid);
	pb_u32(p, tid);
	pb_u64(p, time);
	pb_u32(p, cpu);
	pb_u32(p, 0);
	pb_u64(p, PB_ID);
}

static inline void pb_sample(struct pb *p, uint32_t tid, uint64_t time,
			     uint32_t cpu, uint64_t ip, const uint64_t *ips,
			     uint64_t nr)
{
	size_t start = p->len;
	uint64_t i;

	pb_u32(p, 9);			/* PERF_RECORD_SAMPLE */
	pb_u16(p, 1);			/* misc: kernel */
	pb_u16(p, 0);
	pb_u64(p, PB_ID);		/* IDENTIFIER */
	pb_u64(p, ip);
	pb_u32(p, tid);
	pb_u32(p, tid);
	pb_u64(p, time);
	pb_u32(p, cpu);
	pb_u32(p, 0);
	pb_u64(p, 10000);		/* period */
	pb_u64(p, nr);
	for (i = 0; i < nr; i++)
		pb_u64(p, ips[i]);
	pb_patch16(p, start + 6, (uint16_t)(p->len - start));
}

/* PERF_RECORD_CALLCHAIN_DEFERRED: header, cookie, nr, ips[nr], sample_id */
static inline void pb_deferred(struct pb *p, uint32_t tid, uint64_t time,
			       uint32_t cpu, uint64_t cookie,
			       const uint64_t *ips, uint64_t nr)
{
	size_t start = p->len;
	uint64_t i;

	pb_u32(p, 22);
	pb_u16(p, 2);			/* PERF_RECORD_MISC_USER */
	pb_u16(p, 0);
	pb_u64(p, cookie);
	pb_u64(p, nr);
	for (i = 0; i < nr; i++)
		pb_u64(p, ips[i]);
	pb_trailer(p, tid, time, cpu);
	pb_patch16(p, start + 6, (uint16_t)(p->len - start));
}

static inline void pb_comm(struct pb *p, uint32_t tid, uint64_t time,
			   const char *comm)
{
	size_t start = p->len, n = strlen(comm) + 1;

	pb_u32(p, 3);
	pb_u16(p, 0);
	pb_u16(p, 0);
	pb_u32(p, tid);
	pb_u32(p, tid);
	pb_raw(p, comm, n);
	while ((p->len - start) % 8)
		pb_u8(p, 0);
	pb_trailer(p, tid, time, 0);
	pb_patch16(p, start + 6, (uint16_t)(p->len - start));
}

/* PERF_RECORD_MMAP: pid, tid, addr, len, pgoff, filename, sample_id */
static inline void pb_mmap(struct pb *p, uint32_t pid, uint64_t time,
			   uint64_t start, uint64_t len, uint64_t pgoff,
			   const char *file)
{
	size_t s = p->len, n = strlen(file) + 1;

	pb_u32(p, 1);
	pb_u16(p, 2);			/* PERF_RECORD_MISC_USER */
	pb_u16(p, 0);
	pb_u32(p, pid);
	pb_u32(p, pid);
	pb_u64(p, start);
	pb_u64(p, len);
	pb_u64(p, pgoff);
	pb_raw(p, file, n);
	while ((p->len - s) % 8)
		pb_u8(p, 0);
	pb_trailer(p, pid, time, 0);
	pb_patch16(p, s + 6, (uint16_t)(p->len - s));
}

static inline void pb_round(struct pb *p)
{
	pb_u32(p, 68);			/* PERF_RECORD_FINISHED_ROUND */
	pb_u16(p, 0);
	pb_u16(p, 8);
}

#endif /* SFP_TEST_PERF_BUILD_H */
