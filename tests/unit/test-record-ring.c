// SPDX-License-Identifier: MIT
/*
 * The ring reader on hand-built rings: records that wrap around the end
 * of the data area come out whole, and impossible heads and sizes fail
 * with -EBADMSG without moving the tail (and a too small buffer with
 * -ENOSPC).  Also the sample parser's and encoder's edge cases.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/perf.h>

#include "record/encode.h"
#include "record/record.h"
#include "test.h"

#define DATA 4096

struct fake {
	uint8_t *map;
	struct sfp_ring rg;
};

static bool fake_init(struct fake *f)
{
	f->map = aligned_alloc(4096, 4096 + DATA);
	if (!f->map)
		return false;
	memset(f->map, 0, 4096 + DATA);
	memset(&f->rg, 0, sizeof(f->rg));
	f->rg.base = f->map;
	f->rg.data = f->map + 4096;
	f->rg.data_size = DATA;
	return true;
}

static void put_rec(struct fake *f, uint64_t pos, uint32_t type, uint16_t size,
		    uint8_t fill)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	uint16_t i;

	for (i = 0; i < size; i++)
		f->rg.data[(pos + i) % DATA] = i < sizeof(h)
			? ((uint8_t *)&h)[i] : fill;
}

static struct perf_event_header hdr(const void *p)
{
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	return h;
}

static void set_head(struct fake *f, uint64_t head)
{
	((struct perf_event_mmap_page *)f->map)->data_head = head;
}

TEST(ring_record_wrapping_the_end)
{
	struct fake f;
	uint64_t buf[64];
	uint8_t *b = (uint8_t *)buf;

	if (!ASSERT_TRUE(fake_init(&f)))
		return;
	/* tail 16 bytes before the end, a 48-byte record across it */
	f.rg.tail = DATA - 16;
	put_rec(&f, DATA - 16, PERF_RECORD_SAMPLE, 48, 0xab);
	put_rec(&f, DATA + 32, PERF_RECORD_COMM, 16, 0xcd);
	set_head(&f, DATA - 16 + 64);
	ASSERT_EQ(sfp_ring_next(&f.rg, buf, sizeof(buf)), 48);
	ASSERT_EQ(hdr(buf).type, PERF_RECORD_SAMPLE);
	ASSERT_EQ(b[8], 0xab);
	ASSERT_EQ(b[47], 0xab);
	ASSERT_EQ(sfp_ring_next(&f.rg, buf, sizeof(buf)), 16);
	ASSERT_EQ(hdr(buf).type, PERF_RECORD_COMM);
	ASSERT_EQ(sfp_ring_next(&f.rg, buf, sizeof(buf)), 0);
	sfp_ring_consume(&f.rg);
	ASSERT_EQ(((struct perf_event_mmap_page *)f.map)->data_tail,
		  DATA - 16 + 64);
	free(f.map);
}

TEST(ring_rejects_impossible_sizes)
{
	struct fake f;
	uint64_t buf[64];

	if (!ASSERT_TRUE(fake_init(&f)))
		return;
	put_rec(&f, 0, PERF_RECORD_SAMPLE, 4, 0);	/* below the header */
	set_head(&f, 64);
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, sizeof(buf)), -EBADMSG);
	ASSERT_EQ(f.rg.tail, 0);
	put_rec(&f, 0, PERF_RECORD_SAMPLE, 20, 0);	/* not 8-aligned */
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, sizeof(buf)), -EBADMSG);
	put_rec(&f, 0, PERF_RECORD_SAMPLE, 128, 0);	/* past the head */
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, sizeof(buf)), -EBADMSG);
	put_rec(&f, 0, PERF_RECORD_SAMPLE, 64, 0);
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, 32), -ENOSPC);
	ASSERT_EQ(f.rg.tail, 0);
	set_head(&f, DATA + 64);	/* more than the ring holds */
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, sizeof(buf)), -EBADMSG);
	set_head(&f, 4);		/* less than a header */
	ASSERT_ERR(sfp_ring_next(&f.rg, buf, sizeof(buf)), -EBADMSG);
	set_head(&f, 64);
	ASSERT_EQ(sfp_ring_next(&f.rg, buf, sizeof(buf)), 64);
	free(f.map);
}

TEST(sample_parse_bounds)
{
	struct perf_event_attr a;
	struct sfp_perf_sample s;
	uint64_t rec[16];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };

	memset(&a, 0, sizeof(a));
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	memset(rec, 0, sizeof(rec));
	rec[1] = 0x401000;
	rec[2] = 7 | (8ULL << 32);
	rec[3] = 2;		/* nr */
	rec[4] = PERF_CONTEXT_KERNEL;
	rec[5] = 0xffffffff81000000ULL;
	h.size = 6 * 8;
	memcpy(rec, &h, sizeof(h));
	if (!ASSERT_OK(sfp_record_decode_sample(&a, rec, 48, &s)))
		return;
	ASSERT_EQ(s.ip, 0x401000);
	ASSERT_EQ(s.pid, 7);
	ASSERT_EQ(s.tid, 8);
	ASSERT_EQ(s.nr_ips, 2);
	/* nr claims more than the record holds */
	rec[3] = 3;
	ASSERT_ERR(sfp_record_decode_sample(&a, rec, 48, &s), -EBADMSG);
	rec[3] = 2;
	/* header size disagrees with the record length */
	ASSERT_ERR(sfp_record_decode_sample(&a, rec, 40, &s), -EBADMSG);
	/* a sample_type bit we do not parse */
	a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	ASSERT_ERR(sfp_record_decode_sample(&a, rec, 48, &s), -EOPNOTSUPP);
	/* sample_id trailer longer than the record */
	ASSERT_ERR(sfp_record_decode_sample_id(PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					       PERF_SAMPLE_CPU |
					       PERF_SAMPLE_IDENTIFIER |
					       PERF_SAMPLE_ID,
				       rec, 40, &s),
		   -EBADMSG);
}

/* The perf decoder's in-place mode, which record's samples go through:
 * arrays point into the record, only for host-order aligned records. */
TEST(sample_parse_in_place)
{
	struct sfp_perf_attr a = { 0 };
	struct sfp_perf_sample ps;
	uint64_t rec[8], scratch[8];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 48 };

	a.sample_type = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_TID |
			SFP_PERF_SAMPLE_CALLCHAIN;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	rec[1] = 0x401000;
	rec[3] = 2;
	rec[4] = PERF_CONTEXT_KERNEL;
	rec[5] = 0xffffffff81000000ULL;
	if (!ASSERT_OK(sfp_perf_decode_sample(&a, rec, 48, false, &ps, NULL, 0)))
		return;
	ASSERT_EQ(ps.nr_ips, 2);
	ASSERT_TRUE(ps.ips == &rec[4]);
	/* with scratch the chain is a copy */
	ASSERT_OK(sfp_perf_decode_sample(&a, rec, 48, false, &ps, scratch, 8));
	ASSERT_TRUE(ps.ips == scratch && ps.ips[1] == rec[5]);
	/* swapped or misaligned records cannot be pointed into */
	ASSERT_ERR(sfp_perf_decode_sample(&a, rec, 48, true, &ps, NULL, 0), -EINVAL);
	ASSERT_ERR(sfp_perf_decode_sample(&a, (uint8_t *)rec + 4, 40, false, &ps,
					  NULL, 0), -EINVAL);
	/* a lying count still cannot reach past the record */
	rec[3] = 3;
	ASSERT_ERR(sfp_perf_decode_sample(&a, rec, 48, false, &ps, NULL, 0), -EBADMSG);
	/* an odd RAW size leaves the user registers misaligned: refused */
	a.sample_type = SFP_PERF_SAMPLE_RAW | SFP_PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 0x1c0;
	rec[1] = 4 | (0xabcdULL << 32);	/* raw_size 4: 4 + 4 is aligned */
	rec[2] = 1;			/* abi */
	ASSERT_OK(sfp_perf_decode_sample(&a, rec, 48, false, &ps, NULL, 0));
	ASSERT_TRUE(ps.user_regs == &rec[3]);
	rec[1] = 8;			/* 4 + 8: abi at +20, regs at +28 */
	rec[3] = 1;			/* its high half: a non-zero abi */
	ASSERT_ERR(sfp_perf_decode_sample(&a, rec, 56, false, &ps, NULL, 0), -EBADMSG);
	ASSERT_OK(sfp_perf_decode_sample(&a, rec, 56, false, &ps, scratch, 8));
	/* READ values are expanded into scratch: none, no READ */
	a.sample_type = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_READ;
	ASSERT_ERR(sfp_perf_decode_sample(&a, rec, 48, false, &ps, NULL, 0), -EBADMSG);
}

TEST(encode_sample_forms_and_limits)
{
	const uint64_t kchain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL };
	uint64_t ips[600], out[8192];
	struct perf_event_attr a, oa;
	struct sfp_perf_sample s, b;
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_DEFERRED,
				    .cookie = (3ULL << 32) | 1 };
	struct sfp_defer_origin o = { 7, 8, 1, 1000 };
	size_t i;
	int n;

	memset(&a, 0, sizeof(a));
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = SFP_USER_REGS_MASK;
	a.exclude_callchain_user = 1;
	a.sample_id_all = 1;
	memset(&s, 0, sizeof(s));
	s.ip = 0xffffffff81000010ULL;
	s.pid = 7;
	s.tid = 8;
	s.time = 1000;
	s.period = 250000;
	s.ips = kchain;
	s.nr_ips = 2;
	s.misc = PERF_RECORD_MISC_KERNEL;

	sfp_record_out_attr(&a, true, true, &oa);
	ASSERT_EQ(oa.sample_type & (PERF_SAMPLE_REGS_USER |
				    PERF_SAMPLE_STACK_USER), 0);
	ASSERT_FALSE(oa.exclude_callchain_user);
	ASSERT_TRUE(sfp_attr_flag_bit(&oa, SFP_ATTR_BIT_DEFER_CALLCHAIN));
	ASSERT_TRUE(sfp_attr_flag_bit(&oa, SFP_ATTR_BIT_DEFER_OUTPUT));
	n = sfp_record_encode_sample(&oa, &s, &u, out, sizeof(out));
	if (!ASSERT_GE(n, 8))
		return;
	ASSERT_OK(sfp_record_decode_sample(&oa, out, (size_t)n, &b));
	ASSERT_EQ(b.nr_ips, 4);
	ASSERT_EQ(b.ips[2], SFP_PERF_CONTEXT_USER_DEFERRED);
	ASSERT_EQ(b.ips[3], u.cookie);
	ASSERT_EQ(b.misc, PERF_RECORD_MISC_KERNEL);

	/* The deferred record: header, cookie, nr, ips, sample_id. */
	for (i = 0; i < 3; i++)
		ips[i] = 0x401000 + i;
	n = sfp_record_encode_deferred(&oa, 0, &o, u.cookie, ips, 3, out,
				       sizeof(out));
	ASSERT_EQ(n, 8 + 8 + 8 + 3 * 8 + 16);
	ASSERT_EQ(hdr(out).type, 22);
	ASSERT_EQ(hdr(out).misc,
		  PERF_RECORD_MISC_USER);
	ASSERT_EQ(out[1], u.cookie);
	ASSERT_EQ(out[2], 3);
	ASSERT_OK(sfp_record_decode_sample_id(oa.sample_type, out, (size_t)n, &b));
	ASSERT_EQ(b.pid, 7);
	ASSERT_EQ(b.tid, 8);
	ASSERT_EQ(b.time, 1000);

	/* Inline: PERF_CONTEXT_USER then the ips; too many for 64 KiB fails. */
	sfp_record_out_attr(&a, false, true, &oa);
	ASSERT_FALSE(sfp_attr_flag_bit(&oa, SFP_ATTR_BIT_DEFER_CALLCHAIN));
	u.kind = SFP_DEFER_USER_INLINE;
	u.ips = ips;
	u.nr = 3;
	n = sfp_record_encode_sample(&oa, &s, &u, out, sizeof(out));
	if (ASSERT_GE(n, 8) &&
	    ASSERT_OK(sfp_record_decode_sample(&oa, out, (size_t)n, &b))) {
		ASSERT_EQ(b.nr_ips, 6);
		ASSERT_EQ(b.ips[2], PERF_CONTEXT_USER);
		ASSERT_EQ(b.ips[5], 0x401002);
	}
	ASSERT_ERR(sfp_record_encode_sample(&oa, &s, &u, out, 40), -ENOSPC);
	u.nr = 600;
	for (i = 0; i < 600; i++)
		ips[i] = 0x401000;
	ASSERT_GE(sfp_record_encode_sample(&oa, &s, &u, out, sizeof(out)), 8);
	ASSERT_ERR(sfp_record_encode_sample(&oa, &s, &u, out, 4096), -ENOSPC);
}

/*
 * The pipeline's typed sample (its event consumer, the agent) is what a
 * reader decodes from the bytes the file writer makes of the same sample:
 * every field, each chain form, raw data, an identifier, and the limit.
 */
TEST(sample_event_equals_encoded_then_decoded)
{
	const uint64_t kchain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				    0xffffffff81000abcULL };
	const uint32_t raw[5] = { 1, 2, 3, 4, 5 };
	uint64_t ips[700], out[8192], scratch[8200], *chain = NULL;
	size_t chain_cap = 0, i, k;
	struct perf_event_attr a, oa;
	struct sfp_perf_evsel evsel;
	struct sfp_perf_sample s;
	struct sfp_defer_user u;
	struct sfp_perf_event ev;
	struct sfp_perf_sample d;
	int n, form;

	for (i = 0; i < 700; i++)
		ips[i] = 0x401000 + 16 * i;
	memset(&a, 0, sizeof(a));
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = SFP_USER_REGS_MASK;
	a.sample_id_all = 1;
	memset(&s, 0, sizeof(s));
	s.id = 77;
	s.ip = 0xffffffff81000010ULL;
	s.pid = 7;
	s.tid = 8;
	s.time = 123456789;
	s.cpu = 1;
	s.period = 250000;
	s.ips = kchain;
	s.nr_ips = 3;
	s.raw_data = raw;
	s.raw_size = sizeof(raw);
	s.misc = PERF_RECORD_MISC_KERNEL;
	/* 0: no user part, 1: a cookie, 2: inline frames, 3: a user-mode
	 * sample (no kernel part) inline */
	for (form = 0; form < 4; form++) {
		memset(&u, 0, sizeof(u));
		u.kind = form == 0 ? SFP_DEFER_USER_NONE :
			 form == 1 ? SFP_DEFER_USER_DEFERRED :
				     SFP_DEFER_USER_INLINE;
		u.cookie = (5ULL << 32) | 9;
		u.ips = ips;
		u.nr = 12;
		if (form == 3) {
			s.nr_ips = 0;
			s.misc = PERF_RECORD_MISC_USER;
		}
		sfp_record_out_attr(&a, form == 1, true, &oa);
		memset(&evsel, 0, sizeof(evsel));
		sfp_record_perf_attr(&oa, &evsel.attr);
		evsel.idx = 3;
		n = sfp_record_encode_sample(&oa, &s, &u, out, sizeof(out));
		if (!ASSERT_GE(n, 8) ||
		    !ASSERT_OK(sfp_perf_decode_sample(&evsel.attr, out,
						      (size_t)n, false, &d,
						      scratch, 8200)) ||
		    !ASSERT_OK(sfp_record_sample_event(&oa, &evsel, &s, &u,
						       &chain, &chain_cap,
						       &ev)))
			break;
		ASSERT_EQ(ev.type, PERF_RECORD_SAMPLE);
		ASSERT_EQ(ev.misc, hdr(out).misc);
		ASSERT_TRUE(ev.evsel == &evsel);
		ASSERT_TRUE(ev.raw == NULL);
		ASSERT_EQ(ev.sample.present, d.present);
		ASSERT_EQ(ev.sample.id, d.id);
		ASSERT_EQ(ev.sample.ip, d.ip);
		ASSERT_EQ(ev.sample.pid, d.pid);
		ASSERT_EQ(ev.sample.tid, d.tid);
		ASSERT_EQ(ev.sample.time, d.time);
		ASSERT_EQ(ev.sample.cpu, d.cpu);
		ASSERT_EQ(ev.sample.period, d.period);
		ASSERT_EQ(ev.sample.deferred, d.deferred);
		ASSERT_EQ(ev.sample.deferred_cookie, d.deferred_cookie);
		ASSERT_EQ(ev.sample.raw_size, d.raw_size);
		ASSERT_OK(memcmp(ev.sample.raw_data, d.raw_data, d.raw_size));
		if (!ASSERT_EQ(ev.sample.nr_ips, d.nr_ips))
			continue;
		for (k = 0; k < d.nr_ips; k++)
			if (!ASSERT_EQ(ev.sample.ips[k], d.ips[k]))
				break;
		ASSERT_EQ(d.nr_ips, form == 0 ? 3 : form == 1 ? 5 :
				    form == 2 ? 16 : 13);
	}
	/* Over what a record can hold: refused as the encoder refuses it */
	u.kind = SFP_DEFER_USER_INLINE;
	u.nr = 700;
	sfp_record_out_attr(&a, false, true, &oa);
	if (ASSERT_OK(sfp_record_sample_event(&oa, &evsel, &s, &u, &chain,
					      &chain_cap, &ev)))
		ASSERT_EQ(ev.sample.nr_ips, 1 + 700);	/* user-mode s */
	{
		struct sfp_perf_sample big = s;
		uint64_t *kc = calloc(8192, sizeof(*kc));

		if (ASSERT_TRUE(kc != NULL)) {
			kc[0] = PERF_CONTEXT_KERNEL;
			big.ips = kc;
			big.nr_ips = 8000;
			ASSERT_ERR(sfp_record_sample_event(&oa, &evsel, &big,
							   &u, &chain,
							   &chain_cap, &ev),
				   -EINVAL);
			ASSERT_ERR(sfp_record_encode_sample(&oa, &big, &u, out,
							    sizeof(out)),
				   -EINVAL);
		}
		free(kc);
	}
	free(chain);
}
