// SPDX-License-Identifier: MIT
/*
 * The machine model's map lookups across map changes.  sfp_machine__find
 * remembers the last mapping it found; an MMAP reallocates the process's
 * map array and a FORK may move the process table, so the remembered
 * mapping must never be answered after either (the ASan tier of make
 * check turns a stale one into a use-after-free report).  Also
 * sfp_machine__gen(), which callers key their own caches on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf/machine.h"
#include "test.h"

static struct sfp_perf_event mmap_ev(uint32_t pid, uint64_t start,
				     uint64_t len, uint64_t pgoff,
				     const char *file)
{
	struct sfp_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_MMAP2;
	ev.misc = SFP_PERF_MISC_USER;
	ev.mmap.pid = pid;
	ev.mmap.tid = pid;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.pgoff = pgoff;
	ev.mmap.prot = 5;
	ev.mmap.filename = file;
	return ev;
}

static const char *dso_at(struct sfp_machine *m, uint32_t pid, uint64_t addr)
{
	const struct sfp_pmap *map = sfp_machine__find(m, pid, addr);

	return map ? sfp_machine__dso(m, map->dso)->name : NULL;
}

TEST(machine_find_across_map_changes)
{
	struct sfp_machine *m = NULL;
	struct sfp_perf_event ev;
	const struct sfp_pmap *map;
	uint64_t g0, g1;
	int i;

	if (!ASSERT_OK(sfp_machine__new(&m)))
		return;
	g0 = sfp_machine__gen(m);
	ev = mmap_ev(100, 0x400000, 0x10000, 0, "/bin/a");
	ASSERT_OK(sfp_machine__event(m, &ev));
	g1 = sfp_machine__gen(m);
	ASSERT_NE(g0, g1);
	ASSERT_STREQ(dso_at(m, 100, 0x401000), "/bin/a");
	ASSERT_STREQ(dso_at(m, 100, 0x402000), "/bin/a");	/* remembered */
	/* another process does not see it */
	ASSERT_TRUE(dso_at(m, 101, 0x401000) == NULL);
	ASSERT_STREQ(dso_at(m, 100, 0x401000), "/bin/a");
	/* an mmap over the remembered one: the new mapping wins at once,
	 * and the old one's array is gone (freed by the insert) */
	ev = mmap_ev(100, 0x400000, 0x8000, 0x1000, "/bin/b");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_NE(sfp_machine__gen(m), g1);
	ASSERT_STREQ(dso_at(m, 100, 0x401000), "/bin/b");
	map = sfp_machine__find(m, 100, 0x401000);
	if (ASSERT_NOT_NULL(map)) {
		ASSERT_EQ(map->start, 0x400000);
		ASSERT_EQ(map->pgoff, 0x1000);
	}
	/* the right piece of the old mapping survives, shifted */
	map = sfp_machine__find(m, 100, 0x409000);
	if (ASSERT_NOT_NULL(map)) {
		ASSERT_EQ(map->start, 0x408000);
		ASSERT_EQ(map->pgoff, 0x8000);
		ASSERT_STREQ(sfp_machine__dso(m, map->dso)->name, "/bin/a");
	}
	/* many processes (the process table grows and moves) between two
	 * lookups of the same address */
	ASSERT_STREQ(dso_at(m, 100, 0x409000), "/bin/a");
	for (i = 0; i < 200; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = SFP_PERF_RECORD_FORK;
		ev.fork.pid = 1000 + (uint32_t)i;
		ev.fork.tid = 1000 + (uint32_t)i;
		ev.fork.ppid = 100;
		ev.fork.ptid = 100;
		ASSERT_OK(sfp_machine__event(m, &ev));
	}
	ASSERT_STREQ(dso_at(m, 100, 0x409000), "/bin/a");
	/* a child has a copy of the parent's maps */
	ASSERT_STREQ(dso_at(m, 1199, 0x401000), "/bin/b");
	ASSERT_TRUE(dso_at(m, 100, 0x500000) == NULL);
	/* COMM changes no map: the generation stays */
	g1 = sfp_machine__gen(m);
	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_COMM;
	ev.comm.pid = ev.comm.tid = 100;
	ev.comm.comm = "a";
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_EQ(sfp_machine__gen(m), g1);
	sfp_machine__free(&m);
	ASSERT_TRUE(m == NULL);
}
