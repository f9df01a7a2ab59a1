// SPDX-License-Identifier: MIT
/*
 * PERF_RECORD_SAMPLE bodies and sample_id trailers.
 *
 * The layout of a sample is dictated by the attr's sample_type bits, in
 * the fixed order of the UAPI comment; every field is read through the
 * cursor, so a record that is shorter than its bits claim fails with
 * -EBADMSG at the first field that does not fit.  Arrays (callchain,
 * registers, branch entries, read values) are copied into the caller's
 * u64 scratch in host order, so the result never points at misaligned or
 * foreign-endian memory; byte blobs (raw, user stack, aux) point into the
 * record.  Without scratch (a host-order record at an 8-aligned address,
 * as `record` copies them out of its rings) the arrays point into the
 * record too: nothing to copy on the recording path.  The file reader
 * asks for the same wherever an array allows it (in_place): its records
 * outlive the decoded sample, and the copy was a tenth of reading a
 * system-wide file.
 */
#include "perf/perf-int.h"

/* Bits set in v; without -mpopcnt gcc calls libgcc for the builtin,
 * which was 3 % of reading a file. */
static unsigned int bits_set(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((v * 0x0101010101010101ull) >> 56);
}

/* Copy n u64s from the cursor into scratch (host order), or without
 * scratch point at them (the caller vouched for order and alignment), or
 * with in_place point at them when they are in host order and aligned. */
static int take_u64s(struct sfp_cursor *c, uint64_t n, uint64_t *scratch,
		     size_t scratch_len, size_t *used, const uint64_t **out,
		     bool in_place)
{
	uint64_t i;

	if (n > sfp_cursor_left(c) / 8)
		return -EBADMSG;
	if (!scratch || (in_place && !c->swap && !((uintptr_t)c->pos & 7))) {
		/* the kernel keeps arrays 8-aligned; a record that does not
		 * (an odd raw size) is malformed */
		if ((uintptr_t)c->pos & 7)
			return -EBADMSG;
		*out = n ? (const uint64_t *)(const void *)c->pos : NULL;
		c->pos += n * 8;
		return 0;
	}
	if (n > scratch_len - *used)
		return -EBADMSG;
	for (i = 0; i < n; i++)
		sfp_cursor_u64(c, &scratch[*used + i]);
	*out = n ? &scratch[*used] : NULL;
	*used += n;
	return 0;
}

static int take_regs(struct sfp_cursor *c, uint64_t mask, uint64_t *abi,
		     uint64_t *scratch, size_t scratch_len, size_t *used,
		     const uint64_t **out, bool in_place)
{
	int err = sfp_cursor_u64(c, abi);

	if (err)
		return err;
	*out = NULL;
	if (!*abi)
		return 0;
	return take_u64s(c, bits_set(mask), scratch,
			 scratch_len, used, out, in_place);
}

/*
 * The fields before READ have fixed sizes: the record is checked once for
 * all of them and they are read without a check each (a system-wide file
 * is mostly these few fields per sample).
 */
#define FIXED_HEAD (SFP_PERF_SAMPLE_IDENTIFIER | SFP_PERF_SAMPLE_IP | \
		    SFP_PERF_SAMPLE_TID | SFP_PERF_SAMPLE_TIME | \
		    SFP_PERF_SAMPLE_ADDR | SFP_PERF_SAMPLE_ID | \
		    SFP_PERF_SAMPLE_STREAM_ID | SFP_PERF_SAMPLE_CPU | \
		    SFP_PERF_SAMPLE_PERIOD)

/*
 * Zero a decoded sample (328 bytes) through libc's memset.  With the size
 * known, gcc inlines the memset as `rep stos`, whose start-up cost made it
 * half of this parser's time on AMD Zen (6 % of a whole report); libc's
 * vector stores take a few cycles.  The size is read from a variable the
 * compiler cannot see through, so the call stays a call.
 */
static volatile size_t sample_bytes = sizeof(struct sfp_perf_sample);

static void zero_sample(struct sfp_perf_sample *s)
{
	memset(s, 0, sample_bytes);
}

static uint64_t head64(struct sfp_cursor *c)
{
	uint64_t v;

	memcpy(&v, c->pos, 8);
	c->pos += 8;
	return c->swap ? sfp_bswap64(v) : v;
}

/* Two u32s in one u64 slot (pid/tid, cpu/res), each in the file's order. */
static void head32x2(struct sfp_cursor *c, uint32_t *a, uint32_t *b)
{
	memcpy(a, c->pos, 4);
	memcpy(b, c->pos + 4, 4);
	c->pos += 8;
	if (c->swap) {
		*a = sfp_bswap32(*a);
		*b = sfp_bswap32(*b);
	}
}

static int take_blob(struct sfp_cursor *c, uint64_t n, const void **out)
{
	if (n > sfp_cursor_left(c))
		return -EBADMSG;
	*out = n ? c->pos : NULL;
	c->pos += n;
	return 0;
}

SFP_HIDDEN void sfp_perf_sample_layout(const struct sfp_perf_attr *attr,
				       struct sfp_perf_sample_layout *l)
{
	static const uint64_t order[] = {
		SFP_PERF_SAMPLE_IDENTIFIER, SFP_PERF_SAMPLE_IP,
		SFP_PERF_SAMPLE_TID, SFP_PERF_SAMPLE_TIME,
		SFP_PERF_SAMPLE_ADDR, SFP_PERF_SAMPLE_ID,
		SFP_PERF_SAMPLE_STREAM_ID, SFP_PERF_SAMPLE_CPU,
		SFP_PERF_SAMPLE_PERIOD,
	};
	int8_t *at[] = {
		&l->identifier, &l->ip, &l->tid, &l->time, &l->addr, &l->id,
		&l->stream_id, &l->cpu, &l->period,
	};
	uint64_t type = attr->sample_type & (SFP_PERF_SAMPLE_MAX - 1);
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		*at[i] = -1;
		if (type & order[i]) {
			*at[i] = (int8_t)l->head;
			l->head = (uint8_t)(l->head + 8);
		}
	}
	l->chain = type & SFP_PERF_SAMPLE_CALLCHAIN;
	l->defer = attr->flags & SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN;
	l->ok = !(type & ~(FIXED_HEAD | SFP_PERF_SAMPLE_CALLCHAIN));
}

SFP_HIDDEN int sfp_perf_decode_sample_body(const struct sfp_perf_attr *attr,
					   struct sfp_cursor *c,
					   struct sfp_perf_sample *s,
					   uint64_t *scratch,
					   size_t scratch_len, bool in_place)
{
	uint64_t type = attr->sample_type;
	size_t used = 0;
	uint32_t u32;
	int err = 0;

	zero_sample(s);
	s->present = type & (SFP_PERF_SAMPLE_MAX - 1);

	if (8u * bits_set(type & FIXED_HEAD) > sfp_cursor_left(c))
		return -EBADMSG;
	if (type & SFP_PERF_SAMPLE_IDENTIFIER)
		s->id = head64(c);
	if (type & SFP_PERF_SAMPLE_IP)
		s->ip = head64(c);
	if (type & SFP_PERF_SAMPLE_TID)
		head32x2(c, &s->pid, &s->tid);
	if (type & SFP_PERF_SAMPLE_TIME)
		s->time = head64(c);
	if (type & SFP_PERF_SAMPLE_ADDR)
		s->addr = head64(c);
	if (type & SFP_PERF_SAMPLE_ID)
		s->id = head64(c);
	if (type & SFP_PERF_SAMPLE_STREAM_ID)
		s->stream_id = head64(c);
	if (type & SFP_PERF_SAMPLE_CPU)
		head32x2(c, &s->cpu, &u32);	/* res */
	if (type & SFP_PERF_SAMPLE_PERIOD)
		s->period = head64(c);

#define RD(fn, dst) do { if ((err = fn(c, dst))) goto bad; } while (0)
	if (type & SFP_PERF_SAMPLE_READ) {
		uint64_t rf = attr->read_format, nr = 1, i, *vals;
		size_t per = 1 + !!(rf & SFP_PERF_FORMAT_ID) +
			     !!(rf & SFP_PERF_FORMAT_LOST);

		if (rf & SFP_PERF_FORMAT_GROUP)
			RD(sfp_cursor_u64, &nr);
		if (!scratch || nr > sfp_cursor_left(c) / 8 / per ||
		    nr * 3 > scratch_len - used) {
			err = -EBADMSG;
			goto bad;
		}
		vals = &scratch[used];
		used += nr * 3;
		s->read_nr = nr;
		s->read_values = vals;
		if (rf & SFP_PERF_FORMAT_GROUP) {
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_ENABLED)
				RD(sfp_cursor_u64, &s->read_time_enabled);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_RUNNING)
				RD(sfp_cursor_u64, &s->read_time_running);
			for (i = 0; i < nr; i++) {
				vals[3 * i + 1] = vals[3 * i + 2] = 0;
				RD(sfp_cursor_u64, &vals[3 * i]);
				if (rf & SFP_PERF_FORMAT_ID)
					RD(sfp_cursor_u64, &vals[3 * i + 1]);
				if (rf & SFP_PERF_FORMAT_LOST)
					RD(sfp_cursor_u64, &vals[3 * i + 2]);
			}
		} else {
			vals[1] = vals[2] = 0;
			RD(sfp_cursor_u64, &vals[0]);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_ENABLED)
				RD(sfp_cursor_u64, &s->read_time_enabled);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_RUNNING)
				RD(sfp_cursor_u64, &s->read_time_running);
			if (rf & SFP_PERF_FORMAT_ID)
				RD(sfp_cursor_u64, &vals[1]);
			if (rf & SFP_PERF_FORMAT_LOST)
				RD(sfp_cursor_u64, &vals[2]);
		}
	}
	if (type & SFP_PERF_SAMPLE_CALLCHAIN) {
		RD(sfp_cursor_u64, &s->nr_ips);
		if ((err = take_u64s(c, s->nr_ips, scratch, scratch_len, &used,
				     &s->ips, in_place)))
			goto bad;
		/* perf 6.19: a chain ending in the deferred marker + cookie
		 * waits for its user part (only with defer_callchain). */
		if ((attr->flags & SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN) &&
		    s->nr_ips >= 2 &&
		    s->ips[s->nr_ips - 2] == SFP_PERF_CONTEXT_USER_DEFERRED) {
			s->deferred = true;
			s->deferred_cookie = s->ips[s->nr_ips - 1];
		}
	}
	if (type & SFP_PERF_SAMPLE_RAW) {
		RD(sfp_cursor_u32, &s->raw_size);
		if ((err = take_blob(c, s->raw_size, &s->raw_data)))
			goto bad;
	}
	if (type & SFP_PERF_SAMPLE_BRANCH_STACK) {
		RD(sfp_cursor_u64, &s->nr_branches);
		if (attr->branch_sample_type & SFP_PERF_SAMPLE_BRANCH_HW_INDEX)
			RD(sfp_cursor_u64, &s->branch_hw_idx);
		if (s->nr_branches > sfp_cursor_left(c) / 24) {
			err = -EBADMSG;
			goto bad;
		}
		if ((err = take_u64s(c, s->nr_branches * 3, scratch,
				     scratch_len, &used, &s->branches,
				     in_place)))
			goto bad;
		if ((attr->branch_sample_type &
		     SFP_PERF_SAMPLE_BRANCH_COUNTERS) &&
		    (err = take_u64s(c, s->nr_branches, scratch, scratch_len,
				     &used, &s->branch_counters, in_place)))
			goto bad;
	}
	if (type & SFP_PERF_SAMPLE_REGS_USER) {
		s->user_regs_mask = attr->sample_regs_user;
		if ((err = take_regs(c, attr->sample_regs_user,
				     &s->user_regs_abi, scratch, scratch_len,
				     &used, &s->user_regs, in_place)))
			goto bad;
	}
	if (type & SFP_PERF_SAMPLE_STACK_USER) {
		RD(sfp_cursor_u64, &s->user_stack_size);
		if ((err = take_blob(c, s->user_stack_size, &s->user_stack)))
			goto bad;
		if (s->user_stack_size) {
			RD(sfp_cursor_u64, &s->user_stack_dyn_size);
			/* dyn_size beyond the copied bytes would be a lie */
			if (s->user_stack_dyn_size > s->user_stack_size) {
				err = -EBADMSG;
				goto bad;
			}
		}
	}
	if (type & (SFP_PERF_SAMPLE_WEIGHT | SFP_PERF_SAMPLE_WEIGHT_STRUCT))
		RD(sfp_cursor_u64, &s->weight);
	if (type & SFP_PERF_SAMPLE_DATA_SRC)
		RD(sfp_cursor_u64, &s->data_src);
	if (type & SFP_PERF_SAMPLE_TRANSACTION)
		RD(sfp_cursor_u64, &s->transaction);
	if (type & SFP_PERF_SAMPLE_REGS_INTR) {
		s->intr_regs_mask = attr->sample_regs_intr;
		if ((err = take_regs(c, attr->sample_regs_intr,
				     &s->intr_regs_abi, scratch, scratch_len,
				     &used, &s->intr_regs, in_place)))
			goto bad;
	}
	if (type & SFP_PERF_SAMPLE_PHYS_ADDR)
		RD(sfp_cursor_u64, &s->phys_addr);
	if (type & SFP_PERF_SAMPLE_CGROUP)
		RD(sfp_cursor_u64, &s->cgroup);
	if (type & SFP_PERF_SAMPLE_DATA_PAGE_SIZE)
		RD(sfp_cursor_u64, &s->data_page_size);
	if (type & SFP_PERF_SAMPLE_CODE_PAGE_SIZE)
		RD(sfp_cursor_u64, &s->code_page_size);
	if (type & SFP_PERF_SAMPLE_AUX) {
		RD(sfp_cursor_u64, &s->aux_size);
		if ((err = take_blob(c, s->aux_size, &s->aux_data)))
			goto bad;
	}
#undef RD
	return 0;
bad:
	return err ? err : -EBADMSG;
}

/* Bytes of the sample_id trailer for this sample_type. */
SFP_HIDDEN size_t sfp_perf_id_trailer_size(uint64_t type)
{
	size_t n = 0;

	if (type & SFP_PERF_SAMPLE_TID)
		n += 8;
	if (type & SFP_PERF_SAMPLE_TIME)
		n += 8;
	if (type & SFP_PERF_SAMPLE_ID)
		n += 8;
	if (type & SFP_PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (type & SFP_PERF_SAMPLE_CPU)
		n += 8;
	if (type & SFP_PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return n;
}

SFP_HIDDEN int sfp_perf_decode_sample_id(const struct sfp_perf_attr *attr,
					 const uint8_t *rec, size_t size,
					 bool swap, size_t body_min,
					 struct sfp_perf_sample *s)
{
	uint64_t type = attr->sample_type;
	size_t n = sfp_perf_id_trailer_size(type);
	struct sfp_cursor c;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	if (!(attr->flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL))
		return 0;
	if (size < body_min || size - body_min < n)
		return -EBADMSG;
	sfp_cursor_init(&c, rec + size - n, n, swap);
	s->present = type & (SFP_PERF_SAMPLE_TID | SFP_PERF_SAMPLE_TIME |
			     SFP_PERF_SAMPLE_ID | SFP_PERF_SAMPLE_STREAM_ID |
			     SFP_PERF_SAMPLE_CPU | SFP_PERF_SAMPLE_IDENTIFIER);
	/* Sizes were checked above, so these reads cannot fail. */
	if (type & SFP_PERF_SAMPLE_TID) {
		sfp_cursor_u32(&c, &s->pid);
		sfp_cursor_u32(&c, &s->tid);
	}
	if (type & SFP_PERF_SAMPLE_TIME)
		sfp_cursor_u64(&c, &s->time);
	if (type & SFP_PERF_SAMPLE_ID)
		sfp_cursor_u64(&c, &s->id);
	if (type & SFP_PERF_SAMPLE_STREAM_ID)
		sfp_cursor_u64(&c, &s->stream_id);
	if (type & SFP_PERF_SAMPLE_CPU) {
		sfp_cursor_u32(&c, &s->cpu);
		sfp_cursor_u32(&c, &res);
	}
	if (type & SFP_PERF_SAMPLE_IDENTIFIER)
		sfp_cursor_u64(&c, &s->id);
	return 0;
}

SFP_API int sfp_perf_decode_sample(const struct sfp_perf_attr *attr,
				   const void *rec, size_t size, bool swap,
				   struct sfp_perf_sample *out,
				   uint64_t *scratch, size_t scratch_len)
{
	struct sfp_cursor c;
	uint16_t misc;
	int err;

	if (!attr || !rec || !out || (!scratch && scratch_len))
		return -EINVAL;
	/* arrays in place: only what needs neither swapping nor aligning */
	if (!scratch && (swap || ((uintptr_t)rec & 7)))
		return -EINVAL;
	if (size < 8)
		return -EBADMSG;
	sfp_cursor_init(&c, rec, size, swap);
	c.pos += 4;	/* header: type, */
	sfp_cursor_u16(&c, &misc);	/* misc (cannot fail: size >= 8), */
	c.pos += 2;	/* size */
	err = sfp_perf_decode_sample_body(attr, &c, out, scratch, scratch_len,
					  false);
	out->misc = misc;
	return err;
}

SFP_API int sfp_perf_sample_user_reg(const struct sfp_perf_sample *s,
				     unsigned int regno, uint64_t *val)
{
	uint64_t bit;

	if (!s || !val || regno >= 64)
		return -EINVAL;
	bit = 1ULL << regno;
	if (!s->user_regs_abi || !s->user_regs || !(s->user_regs_mask & bit))
		return -ENOENT;
	/* the values of the lower bits come first */
	*val = s->user_regs[bits_set(s->user_regs_mask & (bit - 1))];
	return 0;
}
