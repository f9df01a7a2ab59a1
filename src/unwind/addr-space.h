/* SPDX-License-Identifier: MIT */
/* The address-space object and its PC cache (internal). */
#ifndef SFP_UNWIND_ADDR_SPACE_H
#define SFP_UNWIND_ADDR_SPACE_H

#include "unwind/module.h"

struct unw_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t bias;
	uint32_t prot;
	bool loaded;		/* module loaded and bias computed */
	bool bias_ok;
	char *path;
	struct unw_module *mod;	/* executable file/vDSO mappings only */
};

/*
 * One line per entry: a 64-byte stride makes the slot address one shift
 * (a 40-byte one costs two multiply-adds on the walk's serial chain), and
 * no entry straddles two cache lines.
 */
struct unw_cache_ent {
	uint64_t key;		/* ip << 1 | exact; 0 = empty */
	struct unw_rule rule;
} __attribute__((aligned(64)));

/* Anonymous code mappings whose bytes an address space keeps, at most;
 * each at most UNW_KEPT_CODE_MAX bytes (CPython's trampoline arena is
 * 64 KiB). */
#define UNW_KEPT_CODE 4
#define UNW_KEPT_CODE_MAX (1u << 20)

struct sfp_addr_space {
	struct unw_map *maps;	/* sorted by start, no overlaps */
	size_t num_maps;
	size_t cap_maps;
	uint64_t gen;		/* bumped on every change */
	bool cache_stale;	/* mappings changed: empty the cache before
				   the next walk */
	struct unw_cache_ent *cache;
	uint32_t cache_mask;	/* entries now - 1 */
	uint32_t cache_max_mask; /* ... at most (opts' cache_entries) */
	uint64_t cache_hits;
	uint64_t cache_misses;
	uint64_t cache_misses_sized; /* cache_misses when last sized */
	uint64_t cache_sized_ns; /* CLOCK_MONOTONIC_COARSE then */
	/* the last lookup met a table the loader thread is building */
	bool lookup_pending;
	char *cache_dir;
	char *root_dir;
	int pid;		/* the process, for its files; 0 unknown */
	uint64_t mntns;		/* its mount namespace, 0 unknown */
	bool mntns_read;	/* ... asked already */
	uint64_t mntns_forked;	/* its parent's at the fork (0 unknown) */
	uint8_t arch;		/* enum sfp_arch, never SFP_ARCH_HOST */
	bool no_cache;
	struct unw_table_opts topts;
	/* The bytes of anonymous code mappings in which an interpreter's
	 * trampoline was recognised from the live process, as last read:
	 * what the process ran, for its samples read after it has exited
	 * (a recorder behind a short process).  A few mappings; dropped
	 * when their range changes. */
	struct unw_kept_code {
		uint64_t start;
		size_t len;
		uint8_t *bytes;
	} kept[UNW_KEPT_CODE];
};

/* The architecture sfprof runs on. */
#if defined(__aarch64__)
#define UNW_HOST_ARCH SFP_ARCH_AARCH64
#else
#define UNW_HOST_ARCH SFP_ARCH_X86_64
#endif

struct unw_as_code_ctx {
	struct sfp_addr_space *as;
	struct sfp_reader *r;
	bool live;		/* anon_code_reader read the live process */
};

/*
 * sfp_addr_space__add_map() of a mapping whose file the kernel named by
 * (device, inode) as well (MMAP2 without a build-id, /proc/PID/maps): the
 * unwinder's module is then that file's (common/fileid.h), not whatever
 * else sits at its path in another container.  0, 0: not known.
 */
SFP_HIDDEN int unw_as_add_map_dev(struct sfp_addr_space *as,
				  const struct sfp_map *map, uint64_t dev,
				  uint64_t ino);

/* The process whose files the mappings name (a forked space's child). */
SFP_HIDDEN void unw_as_set_pid(struct sfp_addr_space *as, int pid);
SFP_HIDDEN struct unw_map *unw_as_find(struct sfp_addr_space *as,
				       uint64_t addr);
SFP_HIDDEN int unw_as_read_code(struct sfp_addr_space *as, uint64_t ip,
				void *buf, size_t len);
SFP_HIDDEN int unw_as_code_reader(void *ctx, uint64_t ip, void *buf,
				  size_t len);
/*
 * The rule cache's size: UNW_CACHE_FIRST entries (1 KiB) at the first
 * walk, four times as many each time the misses since the last sizing
 * reach UNW_CACHE_GROW_AT times the entries, up to the options'
 * cache_entries (1024 by default).  A program whose few hot PCs fit stays
 * at 1 KiB (an agent holds one per process it unwound: twenty replicas of
 * a small server kept 4 KiB each, hence UNW_CACHE_GROW_NS); one that
 * keeps missing (cc1: thousands of PCs) is at full size after a few
 * thousand misses, a fraction of a second of samples.
 */
#define UNW_CACHE_FIRST 16u
#define UNW_CACHE_GROW_AT 4u
/*
 * ... and only while the misses come fast: UNW_CACHE_GROW_AT times the
 * entries within this long of the last sizing.  Misses that took longer
 * cost less than the memory (a lookup in the table is ~0.1 us): the count
 * starts again instead.  An agent sampling twenty replicas of a small
 * server at 99 Hz saw each one's 16-entry cache miss 64 times within a
 * few seconds, and grew all of them to 4 KiB.
 */
#define UNW_CACHE_GROW_NS 1000000000ull

static inline bool unw_as_cache_outgrown(const struct sfp_addr_space *as)
{
	return as->cache_mask < as->cache_max_mask &&
	       as->cache_misses - as->cache_misses_sized >=
		       (uint64_t)UNW_CACHE_GROW_AT * (as->cache_mask + 1);
}

/* Allocate the cache (first walk) or grow it (outgrown), emptied. */
SFP_HIDDEN int unw_as_size_cache(struct sfp_addr_space *as);

SFP_HIDDEN void unw_as_lookup_miss(struct sfp_addr_space *as,
				   struct sfp_reader *r, uint64_t pc,
				   uint64_t ip, struct unw_cache_ent *e,
				   struct unw_rule *rule);

/* The rule for pc (ip - 1 for return addresses): one hash probe when
 * cached, else the mapping search and table lookup. */
static inline const struct unw_rule *
unw_as_lookup(struct sfp_addr_space *as, struct sfp_reader *r, uint64_t pc,
	      uint64_t ip, struct unw_rule *buf)
{
	uint64_t key = (ip << 1) | (pc == ip);
	/* No hash, and the slot from ip alone (the key still tells exact
	 * from caller PCs): the low bits of return addresses are spread
	 * well enough, and this sits on the walk's serial dependency chain
	 * (load RA -> index -> load entry -> CFA -> load RA), where every
	 * instruction counts. */
	struct unw_cache_ent *e = &as->cache[ip & as->cache_mask];

	if (sfp_likely(e->key == key))
		return &e->rule;
	unw_as_lookup_miss(as, r, pc, ip, e, buf);
	return &e->rule;
}

#endif /* SFP_UNWIND_ADDR_SPACE_H */
