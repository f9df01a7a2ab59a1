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

/* A deferred record walked at a block (SFB_D_HELD), kept per task and
 * written after what it served (records.c; by tid, open). */
#define SFB_NR_RECENT 64

struct sfb_recent {
	struct sfb_deferred *d;	/* a slot of sizeof(*d), or NULL */
	bool used;
	bool written;
};

struct held_rec {
	uint32_t tid;		/* 0: empty */
	uint64_t cookie;
	uint64_t last;		/* newest time of what it serves */
	struct sfb_deferred *d;	/* copy */
	bool dirty;		/* served something since last written */
	bool written;
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
	bool off_cpu;			/* the sched_switch program runs */
	int off_evsel;			/* the session's offcpu-time evsel */
	struct held_rec *held;
	size_t held_cap, held_nr;
	/* --off-cpu: the last records of entries over (records.c) */
	struct sfb_recent recent[SFB_NR_RECENT];
	unsigned int recent_next;
	struct sfp_bpf_defer_stats st;
	struct sfb_worker *tw;	/* tables built off the reader (or NULL) */
	struct sfb_uvmas *uv;	/* user space's table of the VMAs */
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
/* re-read pid's VMAs (0: every process's), or drop them (gone) */
SFP_HIDDEN void sfb_worker__vmas(struct sfp_bpf_defer *b, pid_t pid,
				 bool gone);
SFP_HIDDEN void sfb_worker__stop(struct sfp_bpf_defer *b);

/* user-vmas.c: user space's table of the processes' executable VMAs for
 * the walks that find the mmap lock taken (docs/record-bpf.md) */
SFP_HIDDEN int sfb_uvmas__new(struct sfp_bpf_defer *b);
/* the attached processes (or threads), all of them when neither */
SFP_HIDDEN int sfb_uvmas__attach(struct sfp_bpf_defer *b, const char *pids,
				 const char *tids);
/* an executable mapping of pid: re-read at the next flush; true when pid
 * is on that flush's list (false once too many processes mapped since
 * the last one: all are re-read).  Without the tables' thread the flush
 * also drops the callbacks' VMA cache of each process on its list. */
SFP_HIDDEN bool sfb_uvmas__dirty(struct sfp_bpf_defer *b, pid_t pid);
/* the process pid exited: its entry goes */
SFP_HIDDEN void sfb_uvmas__exit(struct sfp_bpf_defer *b, pid_t pid);
SFP_HIDDEN int sfb_uvmas__flush(struct sfp_bpf_defer *b);
/* on the tables' thread: a request of sfb_worker__vmas() */
SFP_HIDDEN void sfb_uvmas__answer(struct sfp_bpf_defer *b, pid_t pid,
				  bool gone);
SFP_HIDDEN void sfb_uvmas__free(struct sfp_bpf_defer *b);

#endif /* SFP_BPF_INT_H */
