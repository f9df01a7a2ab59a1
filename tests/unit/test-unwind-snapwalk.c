// SPDX-License-Identifier: MIT
/*
 * The snapshot walk's private fast paths (src/unwind/unwind.c): exact
 * snapshot bounds of its reader, and the PC cache whose slot comes from
 * the ip alone, so that different keys share a slot.  Synthetic stacks
 * over anonymous code (no table: the frame-pointer fallback), so every
 * expected stop follows from the bytes below.
 */
#include <errno.h>

#include <sfprof/common.h>
#include <sfprof/unwind.h>

#include "test.h"
#include "unwind/addr-space.h"

#define SP 0x7000000ull
#define CODE 0x400000ull

struct env {
	struct sfp_addr_space *as;
	struct sfp_reader *r;
};

static bool env_new(struct env *e, uint64_t *stack, size_t size)
{
	struct sfp_map m = { .start = CODE, .end = CODE + 0x1000,
			     .prot = SFP_MAP_READ | SFP_MAP_EXEC };

	e->as = NULL;
	e->r = NULL;
	return ASSERT_OK(sfp_addr_space__new(NULL, &e->as)) &&
	       ASSERT_OK(sfp_addr_space__add_map(e->as, &m)) &&
	       ASSERT_OK(sfp_reader__new_snapshot(stack, size, SP, &e->r));
}

static void env_free(struct env *e)
{
	sfp_reader__free(&e->r);
	sfp_addr_space__free(&e->as);
}

/* A frame record ([fp] = next fp, [fp + 8] = RA) ending exactly at the
 * snapshot's end is readable; one word less of snapshot and it is not. */
TEST(unwind_snapwalk_exact_end)
{
	uint64_t stack[8] = { 0 };
	struct sfp_regs regs = { .ip = CODE + 0x10, .sp = SP, .fp = SP,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	struct env e;
	int n;

	/* sp+0 -> sp+48, whose record is the last 16 bytes of 64 */
	stack[0] = SP + 48;
	stack[1] = CODE + 0x20;
	stack[6] = SP + 0x1000;	/* never followed: RA 0 ends the walk */
	stack[7] = 0;
	if (!env_new(&e, stack, sizeof(stack)))
		goto out;
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(fr[1].ip, CODE + 0x20);
	ASSERT_EQ(fr[1].sp, SP + 16);
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);

	/* The record straddles the end: truncated, not a wild read. */
	ASSERT_OK(sfp_reader__set_snapshot(e.r, stack, sizeof(stack) - 8, SP));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_TRUNCATED);

	/* A snapshot starting above sp: the first read is below it. */
	ASSERT_OK(sfp_reader__set_snapshot(e.r, stack, sizeof(stack), SP + 8));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_UNREADABLE);
out:
	env_free(&e);
}

/* Two return addresses 64 KiB apart share a cache slot (slot = ip & mask
 * for any power-of-two cache up to 64 Ki entries): one is code, one is
 * not.  Alternating walks must each get their own answer. */
TEST(unwind_snapwalk_cache_slot_sharing)
{
	uint64_t stack[8] = { 0 };
	const uint64_t ra_code = CODE + 0x40, ra_bad = CODE + 0x40 + 0x10000;
	struct sfp_regs regs = { .ip = CODE + 0x10, .sp = SP, .fp = SP,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	struct env e;
	int i, n;

	stack[0] = SP + 32;
	stack[4] = SP + 0x1000;
	stack[5] = 0;
	if (!env_new(&e, stack, sizeof(stack)))
		goto out;
	for (i = 0; i < 4; i++) {
		stack[1] = i & 1 ? ra_bad : ra_code;
		n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
		if (i & 1) {
			ASSERT_EQ(n, 1);
			ASSERT_EQ(stop, SFP_STOP_BAD_RA);
		} else {
			ASSERT_EQ(n, 2);
			ASSERT_EQ(fr[1].ip, ra_code);
			ASSERT_EQ(stop, SFP_STOP_RA_ZERO);
		}
	}

	/* The same ip as an exact PC (frame 0) and as a return address:
	 * same slot, different keys; both walks stay correct. */
	regs.ip = ra_code;
	stack[1] = ra_code;
	for (i = 0; i < 2; i++) {
		n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
		ASSERT_EQ(n, 2);
		ASSERT_TRUE(fr[0].flags & SFP_FRAME_EXACT);
		ASSERT_FALSE(fr[1].flags & SFP_FRAME_EXACT);
		ASSERT_EQ(fr[1].ip, ra_code);
		ASSERT_EQ(stop, SFP_STOP_RA_ZERO);
	}
out:
	env_free(&e);
}

/* One-frame walks, each from a leaf PC of its own, until the rule cache
 * has missed `misses` times since it was last sized (UNW_CACHE_FIRST
 * slots are too few for the PCs to stay); then one more walk, whose start
 * sizes the cache.  Returns the walks. */
static unsigned int walk_until(struct env *e, uint64_t *stack,
			       uint64_t misses)
{
	struct sfp_regs regs = { .sp = SP, .fp = SP,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };
	struct sfp_frame fr[4];
	enum sfp_unwind_stop stop;
	static unsigned int k;
	unsigned int n = 0;

	stack[0] = SP + 0x100;
	stack[1] = 0;		/* RA 0: the walk ends after the leaf */
	do {
		regs.ip = CODE + 8 * (k++ % 500);
		sfp_unwind(e->as, e->r, &regs, fr, 4, NULL, &stop);
		n++;
	} while (e->as->cache_misses - e->as->cache_misses_sized < misses &&
		 n < 10000);
	regs.ip = CODE + 8 * (k++ % 500);
	sfp_unwind(e->as, e->r, &regs, fr, 4, NULL, &stop);
	return n + 1;
}

/*
 * The rule cache grows fourfold when its misses since the last sizing
 * reach four times its entries within UNW_CACHE_GROW_NS; misses that took
 * longer start the count again and leave it at its size.
 */
TEST(unwind_snapwalk_cache_grows_on_fast_misses_only)
{
	const uint64_t grow = UNW_CACHE_GROW_AT * UNW_CACHE_FIRST;
	uint64_t stack[8] = { 0 };
	struct env e;

	/* fast: the misses in a moment -> 64 entries */
	if (!env_new(&e, stack, sizeof(stack)))
		goto out;
	walk_until(&e, stack, 0);
	ASSERT_EQ(e.as->cache_mask, UNW_CACHE_FIRST - 1);
	walk_until(&e, stack, grow);
	ASSERT_EQ(e.as->cache_mask, 4 * UNW_CACHE_FIRST - 1);
	env_free(&e);

	/* slow: the same misses, the cache sized 2 s before they reach
	 * the threshold -> it stays, the count starts again... */
	if (!env_new(&e, stack, sizeof(stack)))
		goto out;
	walk_until(&e, stack, 0);
	e.as->cache_sized_ns -= 2 * UNW_CACHE_GROW_NS;
	walk_until(&e, stack, grow);
	ASSERT_EQ(e.as->cache_mask, UNW_CACHE_FIRST - 1);
	ASSERT_GE(e.as->cache_misses_sized, grow);
	/* ... and as many again within the second do grow it */
	walk_until(&e, stack, grow);
	ASSERT_EQ(e.as->cache_mask, 4 * UNW_CACHE_FIRST - 1);
out:
	env_free(&e);
}

/*
 * A second region (sfp_reader__set_other_stack): the frame-pointer chain
 * leaves the stack for another, below it (Go's g0 above a goroutine's
 * stack) or above it.  The walk steps there once; the return address read
 * there must follow a call, but for the outermost frame of that stack
 * (saved frame pointer 0, as under Go's goexit+1).  Anonymous code: no
 * bytes to check a call by, so only the outermost frame passes.
 */
TEST(unwind_snapwalk_other_stack)
{
	const uint64_t down = SP - 0x100000, up = SP + 0x100000;
	uint64_t stack[8] = { 0 }, other[8] = { 0 };
	struct sfp_regs regs = { .ip = CODE + 0x10, .sp = SP, .fp = SP,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };
	struct sfp_reader *self = NULL;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	struct env e;
	int n;

	/* frame 0's record at sp: its caller's frame pointer is on the
	 * other stack */
	stack[0] = down + 16;
	stack[1] = CODE + 0x20;
	other[2] = 0;			/* the outermost frame there */
	other[3] = CODE + 0x30;
	if (!env_new(&e, stack, sizeof(stack)))
		goto out;

	/* one stack: a frame pointer below sp is nobody's frame */
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* the other stack below: one step down onto it, marked */
	ASSERT_OK(sfp_reader__set_other_stack(e.r, other, sizeof(other), down));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(fr[2].ip, CODE + 0x30);
	ASSERT_EQ(fr[2].sp, down + 32);
	ASSERT_TRUE(fr[1].flags & SFP_FRAME_OTHER_STACK);
	ASSERT_FALSE(fr[0].flags & SFP_FRAME_OTHER_STACK);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* not the outermost frame there: its return address must follow a
	 * call, and anonymous code cannot show one */
	other[2] = down + 48;
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_BAD_RA);
	other[2] = 0;

	/* the record runs past the region's end: truncated */
	ASSERT_OK(sfp_reader__set_other_stack(e.r, other, 24, down));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_TRUNCATED);

	/* re-pointing the snapshot drops the region */
	ASSERT_OK(sfp_reader__set_snapshot(e.r, stack, sizeof(stack), SP));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* the other stack above, past the snapshot: read there, not cut */
	stack[0] = up + 16;
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_TRUNCATED);
	ASSERT_OK(sfp_reader__set_other_stack(e.r, other, sizeof(other), up));
	n = sfp_unwind(e.as, e.r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(fr[2].sp, up + 32);
	ASSERT_TRUE(fr[1].flags & SFP_FRAME_OTHER_STACK);

	/* a region over the stack, or on a reader that is no snapshot */
	ASSERT_ERR(sfp_reader__set_other_stack(e.r, other, sizeof(other),
					       SP + 8), -EINVAL);
	ASSERT_ERR(sfp_reader__set_other_stack(e.r, other, sizeof(other),
					       SP - 8), -EINVAL);
	ASSERT_OK(sfp_reader__set_other_stack(e.r, other, sizeof(other),
					      SP - sizeof(other)));
	if (ASSERT_OK(sfp_reader__new_self(&self)))
		ASSERT_ERR(sfp_reader__set_other_stack(self, other,
						       sizeof(other), down),
			   -EINVAL);
	ASSERT_ERR(sfp_reader__set_other_stack(NULL, other, 8, down), -EINVAL);
out:
	sfp_reader__free(&self);
	env_free(&e);
}
