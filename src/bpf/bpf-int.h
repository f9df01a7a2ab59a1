/* SPDX-License-Identifier: MIT */
/* The bpf-defer object, shared by loader.c and records.c (internal). */
#ifndef SFP_BPF_INT_H
#define SFP_BPF_INT_H

#include "bpf/bpf-defer.h"
#include "bpf/defer-shared.h"
#include "bpf/tables.h"

struct sfp_defer_bpf;		/* the bpftool skeleton */
struct ring_buffer;
struct bpf_link;

/* Samples per cookie, until its deferred record comes (small, open). */
#define SFB_COOKIE_SLOTS 4096

struct cookie_slot {
	uint64_t cookie;	/* 0: empty */
	uint64_t samples;
};

struct sfp_bpf_defer {
	struct sfp_defer_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link **links;
	size_t nr_links;
	void *fde_mem, *fre_mem;
	size_t fde_len, fre_len;
	uint32_t fde_cap, fre_cap;
	struct sfb_tables *tables;
	struct sfp_record *r;
	struct sfp_rec_pipe *p;
	uint64_t *obuf;		/* one output record */
	uint64_t *chain;	/* callchain being built */
	int err;		/* first error met in the ring callback */
	int vmas_fd;		/* the BPF side's per-process VMA cache */
	struct cookie_slot *cookies;
	struct sfp_bpf_defer_stats st;
	struct sfb_worker *tw;	/* tables built off the reader (or NULL) */
};

SFP_HIDDEN int sfb_ring_record(void *ctx, void *data, size_t size);

/* table-worker.c: requests for the tables' thread (b->tw set) */
SFP_HIDDEN void sfb_worker__mapping(struct sfp_bpf_defer *b, pid_t pid,
				    uint64_t dev, uint64_t ino,
				   const char *path);
SFP_HIDDEN void sfb_worker__miss(struct sfp_bpf_defer *b, pid_t pid,
				uint64_t dev, uint64_t ino, uint64_t vm_start);
SFP_HIDDEN void sfb_worker__stats(const struct sfp_bpf_defer *b,
				 struct sfb_tables_stats *ts,
				 uint64_t *pending, uint64_t *dropped);
SFP_HIDDEN void sfb_worker__stop(struct sfp_bpf_defer *b);

#endif /* SFP_BPF_INT_H */
