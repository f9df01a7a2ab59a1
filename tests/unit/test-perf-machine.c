// SPDX-License-Identifier: MIT
/*
 * The machine model's map lookups across map changes.  sfp_machine__find
 * remembers the last mapping it found; an MMAP reallocates the process's
 * map array and a FORK may move the process table, so the remembered
 * mapping must never be answered after either (the ASan tier of make
 * check turns a stale one into a use-after-free report).  Also
 * sfp_machine__gen(), sfp_machine__pid_gen() and sfp_machine__comm_gen(),
 * which callers key their own caches on, and the KSYMBOL ranges that
 * name BPF programs.
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

static struct sfp_perf_event comm_ev(uint32_t pid, uint32_t tid,
				     const char *name)
{
	struct sfp_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_COMM;
	ev.comm.pid = pid;
	ev.comm.tid = tid;
	ev.comm.comm = name;
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
	ev = comm_ev(100, 100, "a");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_EQ(sfp_machine__gen(m), g1);
	sfp_machine__free(&m);
	ASSERT_TRUE(m == NULL);
}

/* Every change of a thread's name moves comm_gen; nothing else does. */
TEST(machine_comm_gen)
{
	struct sfp_machine *m = NULL;
	struct sfp_perf_event ev;
	uint64_t g;

	if (!ASSERT_OK(sfp_machine__new(&m)))
		return;
	g = sfp_machine__comm_gen(m);
	ASSERT_STREQ(sfp_machine__comm(m, 300), ":300");
	ev = mmap_ev(300, 0x400000, 0x10000, 0, "/bin/a");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_EQ(sfp_machine__comm_gen(m), g);	/* maps are not names */
	ev = comm_ev(300, 300, "first");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_NE(sfp_machine__comm_gen(m), g);
	ASSERT_STREQ(sfp_machine__comm(m, 300), "first");
	g = sfp_machine__comm_gen(m);
	ev.comm.comm = "second";		/* exec: same thread renamed */
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_NE(sfp_machine__comm_gen(m), g);
	ASSERT_STREQ(sfp_machine__comm(m, 300), "second");
	g = sfp_machine__comm_gen(m);
	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_FORK;
	ev.fork.pid = ev.fork.tid = 301;
	ev.fork.ppid = ev.fork.ptid = 300;
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_NE(sfp_machine__comm_gen(m), g);
	ASSERT_STREQ(sfp_machine__comm(m, 301), "second");
	g = sfp_machine__comm_gen(m);
	sfp_machine__exit(m, 301, 301);
	ASSERT_NE(sfp_machine__comm_gen(m), g);
	ASSERT_STREQ(sfp_machine__comm(m, 301), ":301");
	g = sfp_machine__comm_gen(m);
	sfp_machine__exit(m, 302, 302);		/* not a thread we had */
	ASSERT_EQ(sfp_machine__comm_gen(m), g);
	sfp_machine__free(&m);
}

/*
 * sfp_machine__pid_gen(): a process's maps changing changes its value and
 * no other process's; it never returns to a value it had (a cache keyed
 * on it would answer a stale mapping).
 */
TEST(machine_pid_gen_per_process)
{
	struct sfp_machine *m = NULL;
	struct sfp_perf_event ev;
	uint64_t a0, a1, b0, b1, c0;

	if (!ASSERT_OK(sfp_machine__new(&m)))
		return;
	ASSERT_EQ(sfp_machine__pid_gen(m, 100), 0);	/* no maps yet */
	ev = mmap_ev(100, 0x400000, 0x10000, 0, "/bin/a");
	ASSERT_OK(sfp_machine__event(m, &ev));
	a0 = sfp_machine__pid_gen(m, 100);
	ASSERT_NE(a0, 0);
	ev = mmap_ev(200, 0x400000, 0x10000, 0, "/bin/b");
	ASSERT_OK(sfp_machine__event(m, &ev));
	b0 = sfp_machine__pid_gen(m, 200);
	/* 200's mmap left 100's maps, and their generation, alone */
	ASSERT_EQ(sfp_machine__pid_gen(m, 100), a0);
	ASSERT_NE(b0, 0);
	ev = mmap_ev(100, 0x500000, 0x1000, 0, "/bin/c");
	ASSERT_OK(sfp_machine__event(m, &ev));
	a1 = sfp_machine__pid_gen(m, 100);
	ASSERT_NE(a1, a0);
	ASSERT_TRUE(a1 > a0);
	ASSERT_EQ(sfp_machine__pid_gen(m, 200), b0);
	/* a thread of 200 (same pid): no new maps */
	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_FORK;
	ev.fork.pid = ev.fork.ppid = 200;
	ev.fork.tid = 201;
	ev.fork.ptid = 200;
	ASSERT_OK(sfp_machine__event(m, &ev));
	b1 = sfp_machine__pid_gen(m, 200);
	ASSERT_EQ(b1, b0);
	/* a new process from 100: its copy of the maps is a change of its
	 * own, the parent's stays */
	ev.fork.pid = ev.fork.tid = 300;
	ev.fork.ppid = ev.fork.ptid = 100;
	ASSERT_OK(sfp_machine__event(m, &ev));
	c0 = sfp_machine__pid_gen(m, 300);
	ASSERT_TRUE(c0 > a1);
	ASSERT_EQ(sfp_machine__pid_gen(m, 100), a1);
	ASSERT_STREQ(dso_at(m, 300, 0x500000), "/bin/c");
	sfp_machine__free(&m);
}

static struct sfp_perf_event ksym_ev(uint64_t addr, uint32_t len,
				     bool unregister, const char *name)
{
	struct sfp_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = SFP_PERF_RECORD_KSYMBOL;
	ev.ksymbol.addr = addr;
	ev.ksymbol.len = len;
	ev.ksymbol.ksym_type = 1;	/* BPF */
	ev.ksymbol.flags = unregister ? SFP_PERF_KSYMBOL_UNREGISTER : 0;
	ev.ksymbol.name = name;
	return ev;
}

static const char *ksym_at(struct sfp_machine *m, uint64_t addr)
{
	const struct sfp_ksym *k = sfp_machine__ksym(m, addr);

	return k ? k->name : NULL;
}

/*
 * BPF programs come and go while perf records (KSYMBOL register and
 * unregister); a frame is named by the program registered at its address
 * when the sample was taken, and the kernel reuses freed addresses.
 */
TEST(machine_ksymbol_ranges)
{
	struct sfp_machine *m = NULL;
	struct sfp_perf_event ev;
	uint64_t g0, g1;

	if (!ASSERT_OK(sfp_machine__new(&m)))
		return;
	ASSERT_TRUE(sfp_machine__ksym(m, 0xffffffffc0001000ull) == NULL);
	g0 = sfp_machine__ksym_gen(m);
	ev = ksym_ev(0xffffffffc0002000ull, 0x100, false, "bpf_prog_b");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev = ksym_ev(0xffffffffc0001000ull, 0x200, false, "bpf_prog_a");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev = ksym_ev(0xffffffffc0003000ull, 0x80, false, "bpf_prog_c");
	ASSERT_OK(sfp_machine__event(m, &ev));
	g1 = sfp_machine__ksym_gen(m);
	ASSERT_NE(g0, g1);
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0001000ull), "bpf_prog_a");
	ASSERT_STREQ(ksym_at(m, 0xffffffffc00011ffull), "bpf_prog_a");
	ASSERT_TRUE(ksym_at(m, 0xffffffffc0001200ull) == NULL);	/* past a */
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0002080ull), "bpf_prog_b");
	ASSERT_STREQ(ksym_at(m, 0xffffffffc000307full), "bpf_prog_c");
	ASSERT_TRUE(ksym_at(m, 0xffffffffc0003080ull) == NULL);
	/* b unloaded: its range names nothing any more */
	ev = ksym_ev(0xffffffffc0002000ull, 0x100, true, "bpf_prog_b");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_NE(sfp_machine__ksym_gen(m), g1);
	ASSERT_TRUE(ksym_at(m, 0xffffffffc0002080ull) == NULL);
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0001100ull), "bpf_prog_a");
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0003000ull), "bpf_prog_c");
	/* a new program over a's and part of the hole: it replaces a */
	ev = ksym_ev(0xffffffffc0001100ull, 0x1000, false, "bpf_prog_d");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_TRUE(ksym_at(m, 0xffffffffc0001000ull) == NULL);
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0001100ull), "bpf_prog_d");
	ASSERT_STREQ(ksym_at(m, 0xffffffffc00020ffull), "bpf_prog_d");
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0003000ull), "bpf_prog_c");
	/* a zero length still names its address */
	ev = ksym_ev(0xffffffffc0009000ull, 0, false, "bpf_trampoline_1");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_STREQ(ksym_at(m, 0xffffffffc0009000ull), "bpf_trampoline_1");
	ASSERT_TRUE(ksym_at(m, 0xffffffffc0009001ull) == NULL);
	sfp_machine__free(&m);
}

/* The DSO index a process's address falls in (UINT32_MAX: none). */
static uint32_t dso_idx_at(struct sfp_machine *m, uint32_t pid, uint64_t addr)
{
	const struct sfp_pmap *map = sfp_machine__find(m, pid, addr);

	return map ? map->dso : UINT32_MAX;
}

/*
 * A file is its identity, not its path (common/fileid.h): two containers'
 * different builds at /srv/app/server are two DSOs, each with its own
 * build-id; the same build-id (or, without one, the same device and inode)
 * in two processes is one DSO; a name shared by two files is said.
 */
TEST(machine_dso_identity)
{
	static const char *srv = "/srv/app/server";
	struct sfp_machine *m = NULL;
	struct sfp_perf_event ev;
	uint32_t a, b, c, d, e;

	ASSERT_OK(sfp_machine__new(&m));
	/* MMAP2 with build-ids: pids 10 and 11 another build, 12 = 10's */
	ev = mmap_ev(10, 0x400000, 0x1000, 0, srv);
	ev.misc |= SFP_PERF_MISC_MMAP_BUILD_ID;
	ev.mmap.build_id_size = 20;
	memset(ev.mmap.build_id, 0xaa, 20);
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev.mmap.pid = ev.mmap.tid = 11;
	memset(ev.mmap.build_id, 0xbb, 20);
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev.mmap.pid = ev.mmap.tid = 12;
	memset(ev.mmap.build_id, 0xaa, 20);
	ASSERT_OK(sfp_machine__event(m, &ev));
	a = dso_idx_at(m, 10, 0x400100);
	b = dso_idx_at(m, 11, 0x400100);
	c = dso_idx_at(m, 12, 0x400100);
	ASSERT_TRUE(a != UINT32_MAX && b != UINT32_MAX);
	ASSERT_TRUE(a != b);
	ASSERT_EQ(a, c);
	ASSERT_EQ(sfp_machine__dso(m, a)->build_id[0], 0xaa);
	ASSERT_EQ(sfp_machine__dso(m, b)->build_id[0], 0xbb);
	ASSERT_STREQ(sfp_machine__dso(m, b)->name, srv);
	ASSERT_TRUE(sfp_machine__dso_name_shared(m, a));
	ASSERT_TRUE(sfp_machine__dso_name_shared(m, b));
	ASSERT_EQ(sfp_machine__dso(m, b)->first_of_name, a);

	/* MMAP2 without build-ids (perf record's): device and inode */
	ev = mmap_ev(20, 0x500000, 0x1000, 0, "/usr/bin/app");
	ev.mmap.maj = 8;
	ev.mmap.min = 1;
	ev.mmap.ino = 100;
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev.mmap.pid = ev.mmap.tid = 21;
	ASSERT_OK(sfp_machine__event(m, &ev));
	ev.mmap.pid = ev.mmap.tid = 22;
	ev.mmap.ino = 200;		/* replaced on disk, or a container's */
	ASSERT_OK(sfp_machine__event(m, &ev));
	d = dso_idx_at(m, 20, 0x500000);
	e = dso_idx_at(m, 22, 0x500000);
	ASSERT_EQ(d, dso_idx_at(m, 21, 0x500000));
	ASSERT_TRUE(d != e);
	ASSERT_EQ(sfp_machine__dso(m, d)->ino, 100);
	ASSERT_EQ(sfp_machine__dso(m, e)->ino, 200);
	ASSERT_TRUE(sfp_machine__dso_name_shared(m, e));

	/* a name only one file has is not shared */
	ev = mmap_ev(20, 0x600000, 0x1000, 0, "/usr/lib/libonly.so");
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_FALSE(sfp_machine__dso_name_shared(m, dso_idx_at(m, 20,
								0x600000)));
	/* the same file mapped again: no new DSO */
	ASSERT_EQ(sfp_machine__nr_dsos(m), 5);
	ev.mmap.pid = ev.mmap.tid = 10;
	ASSERT_OK(sfp_machine__event(m, &ev));
	ASSERT_EQ(sfp_machine__nr_dsos(m), 5);
	sfp_machine__free(&m);
}
