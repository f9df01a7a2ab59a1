// SPDX-License-Identifier: MIT
/*
 * perf's rules for walking a sample's recorded callchain
 * (src/perf/callchain.h), which `sfprof script` and the profile model both
 * follow: context markers are not frames and say whose the frames after
 * them are, an unknown marker drops the whole chain, at most 127 frames,
 * a deferred sample's trailing cookie is no frame, and without a user
 * marker a dwarf-mode sample's user part comes from its stack snapshot.
 */
#include <string.h>

#include "perf/callchain.h"
#include "test.h"

#define K SFP_PERF_CONTEXT_KERNEL
#define U SFP_PERF_CONTEXT_USER
#define UD SFP_PERF_CONTEXT_USER_DEFERRED

struct got {
	uint64_t ip[256];
	char kind[257];		/* 'k' kernel, 'u' user, 'c' cookie */
	size_t n;
};

static struct sfp_perf_sample chain_sample(const uint64_t *ips, uint64_t nr)
{
	struct sfp_perf_sample sm;

	memset(&sm, 0, sizeof(sm));
	sm.present = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_CALLCHAIN;
	sm.ips = ips;
	sm.nr_ips = nr;
	return sm;
}

static void walk(const struct sfp_perf_sample *sm,
		 struct sfp_perf_chain_walk *w, struct got *g)
{
	uint64_t ip;

	memset(g, 0, sizeof(*g));
	sfp_perf_chain__begin(w, sm);
	while (g->n < 256 && sfp_perf_chain__next(w, &ip)) {
		g->ip[g->n] = ip;
		g->kind[g->n++] = sfp_perf_chain__at_cookie(w) ? 'c' :
				  w->kernel ? 'k' : 'u';
	}
}

TEST(callchain_markers_say_whose_frames)
{
	const uint64_t ips[] = { K, 0xffffffff81000010ull, 0xffffffff81000020ull,
				 U, 0x401000, 0x402000 };
	struct sfp_perf_sample sm = chain_sample(ips, 6);
	struct sfp_perf_chain_walk w;
	struct got g;

	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 4);
	ASSERT_STREQ(g.kind, "kkuu");
	ASSERT_EQ(g.ip[0], 0xffffffff81000010ull);
	ASSERT_EQ(g.ip[1], 0xffffffff81000020ull);
	ASSERT_EQ(g.ip[2], 0x401000);
	ASSERT_EQ(g.ip[3], 0x402000);
	ASSERT_TRUE(w.user_seen);
	/* the user part is in the chain: no unwind even with a snapshot */
	sm.user_stack_size = 8192;
	sm.user_regs_abi = 2;
	ASSERT_FALSE(sfp_perf_chain__unwind_user(&w, &sm));
}

TEST(callchain_hv_and_guest_markers)
{
	const uint64_t ips[] = {
		SFP_PERF_CONTEXT_HV, 0x10,
		SFP_PERF_CONTEXT_GUEST_KERNEL, 0x20,
		SFP_PERF_CONTEXT_GUEST_USER, 0x30,
		SFP_PERF_CONTEXT_GUEST, 0x40,
	};
	struct sfp_perf_sample sm = chain_sample(ips, 8);
	struct sfp_perf_chain_walk w;
	struct got g;

	walk(&sm, &w, &g);
	/* all known, so nothing dropped; only guest kernel counts as kernel */
	ASSERT_EQ(g.n, 4);
	ASSERT_STREQ(g.kind, "ukuu");
	ASSERT_EQ(g.ip[3], 0x40);
	/* guest user is not the host's user part */
	ASSERT_FALSE(w.user_seen);
	ASSERT_TRUE(sfp_perf_chain__known_context(SFP_PERF_CONTEXT_GUEST));
	ASSERT_TRUE(sfp_perf_chain__known_context(UD));
	ASSERT_FALSE(sfp_perf_chain__known_context((uint64_t)-1000));
	ASSERT_FALSE(sfp_perf_chain__known_context(SFP_PERF_CONTEXT_MAX));
}

TEST(callchain_unknown_context_drops_the_chain)
{
	/* a garbage word in the context range, as a broken frame-pointer
	 * chain can leave (seen inside libasan): perf resets its cursor */
	const uint64_t ips[] = { K, 0xffffffff81000010ull, U, 0x401000,
				 (uint64_t)-1000, 0x402000 };
	struct sfp_perf_sample sm = chain_sample(ips, 6);
	struct sfp_perf_chain_walk w;
	struct got g;

	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 0);
	ASSERT_FALSE(w.user_seen);
	/* the same chain without the bad word walks */
	sm.nr_ips = 4;
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 2);
	ASSERT_STREQ(g.kind, "ku");
}

TEST(callchain_deferred_cookie_pair)
{
	const uint64_t ips[] = { K, 0xffffffff81000010ull, UD, 0xc00c1e };
	struct sfp_perf_sample sm = chain_sample(ips, 4);
	struct sfp_perf_chain_walk w;
	struct got g;

	sm.deferred = true;
	sm.deferred_cookie = 0xc00c1e;
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 2);
	ASSERT_STREQ(g.kind, "kc");
	ASSERT_EQ(g.ip[1], 0xc00c1e);
	ASSERT_TRUE(w.user_seen);
	/* a user-mode sample: the chain is the pair alone */
	sm = chain_sample(ips + 2, 2);
	sm.deferred = true;
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 1);
	ASSERT_STREQ(g.kind, "c");
	/* stitched (no longer deferred), the last entry is a frame */
	sm = chain_sample(ips, 4);
	walk(&sm, &w, &g);
	ASSERT_STREQ(g.kind, "ku");
}

TEST(callchain_empty_and_markers_only)
{
	const uint64_t ips[] = { U };
	struct sfp_perf_sample sm = chain_sample(ips, 0);
	struct sfp_perf_chain_walk w;
	struct got g;

	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 0);
	ASSERT_FALSE(w.user_seen);
	/* dwarf mode: an empty chain, the user part from the snapshot */
	ASSERT_FALSE(sfp_perf_chain__unwind_user(&w, &sm));
	sm.user_stack_size = 8192;
	sm.user_regs_abi = 2;
	ASSERT_TRUE(sfp_perf_chain__unwind_user(&w, &sm));
	/* a user marker and nothing after it: no frames, and no unwind */
	sm.nr_ips = 1;
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 0);
	ASSERT_TRUE(w.user_seen);
	ASSERT_FALSE(sfp_perf_chain__unwind_user(&w, &sm));
	/* no PERF_SAMPLE_CALLCHAIN at all: the decoder leaves nr_ips 0 */
	memset(&sm, 0, sizeof(sm));
	sm.present = SFP_PERF_SAMPLE_IP;
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, 0);
}

TEST(callchain_at_most_127_frames)
{
	uint64_t ips[202];
	struct sfp_perf_sample sm;
	struct sfp_perf_chain_walk w;
	struct got g;
	size_t i;

	ips[0] = K;
	for (i = 1; i < 202; i++)
		ips[i] = 0xffffffff81000000ull + i;
	/* a user marker past the 127th frame is not reached */
	ips[150] = U;
	sm = chain_sample(ips, 202);
	walk(&sm, &w, &g);
	ASSERT_EQ(g.n, SFP_PERF_MAX_STACK);
	ASSERT_EQ(g.ip[126], 0xffffffff81000000ull + 127);
	ASSERT_FALSE(w.user_seen);
	/* the walk stays ended */
	{
		uint64_t ip = 0;

		ASSERT_FALSE(sfp_perf_chain__next(&w, &ip));
	}
}
