// SPDX-License-Identifier: MIT
/*
 * The record pipeline (see pipeline.h): side-band records keep one address
 * space per process up to date, samples go through the deferral engine,
 * whose unwind callback walks the sample's stack snapshot in the address
 * space of its process at that moment.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cursor.h"
#include "common/idmap.h"
#include "common/procfs.h"
#include "elf/buildid.h"
#include "perf/perf-int.h"
#include "record/deep.h"
#include "record/encode.h"
#include "record/pipeline.h"
#include "unwind/addr-space.h"

#define OUT_BUF 65536
#define MAX_NO_TABLE 256
/* bpf-defer's samples waiting for their user chains, at most: a task that
 * exits or execs before its chain comes leaves its samples behind, and in
 * an agent they must not pile up for weeks; past it the oldest goes on
 * unmerged (SFP_STITCH_LEFTOVER, which the profile marks) */
#define STITCH_MAX_WAITING 4096

struct proc {
	uint32_t pid;		/* first: the idmap's key */
	int8_t want;		/* opts' want(): 1 yes, -1 no, 0 not asked */
	/* Its name as the records gave it (COMM, inherited at FORK), for
	 * want() when the process is gone before its samples are read. */
	char comm[16];
	struct sfp_addr_space *as;
};

/* A file's build-id, by inode, for synthesized maps (libc once for -a). */
struct bid_memo {
	uint64_t dev, ino;
	uint8_t len;		/* 0 with none set: nothing known */
	bool none;		/* read, and the file has no build-id */
	uint8_t id[20];
};

#define BID_MEMO 512
/* The largest MMAP2 record: fixed fields, a PATH_MAX name, sample_id. */
#define MMAP_FIX_MAX (8 + 64 + 4096 + 64)

struct no_table {
	char *path;
	uint64_t count;
};

struct sfp_rec_pipe {
	struct sfp_record *r;
	bool rewrite;
	bool inline_mode;
	uint32_t max_depth;
	char *cache_dir;
	struct perf_event_attr *out_attrs;
	uint64_t track_id;		/* id stamped on our own records */
	struct sfp_defer_engine *engine;
	struct sfp_reader *reader;
	struct sfp_frame *frames;
	struct sfp_rec_deep *deep;	/* walks past the snapshot (deep.h) */
	struct sfp_idmap procs;		/* struct proc by pid */
	struct no_table *no_table;
	size_t nr_no_table;
	struct bid_memo *bid_memo;	/* BID_MEMO slots, hashed by inode */
	sfp_rec_out_fn out;
	void *ctx;
	/* Or typed events (sfp_rec_event_fn): the decoder's view of each
	 * output attr, the chain a sample event is built in, the buffers a
	 * record is decoded into, bpf-defer's stitcher. */
	sfp_rec_event_fn on_event;
	void *event_ctx;
	struct sfp_perf_evsel *evsels;
	uint64_t *ev_chain;
	size_t ev_chain_cap;
	uint64_t *scratch;
	size_t scratch_len;
	char *str;
	size_t str_cap;
	struct sfp_stitcher *stitch;
	bool in_exit_flush;		/* the sums before an EXIT */
	bool async_tables;		/* the unwinder's loader thread runs */
	bool linger;			/* ... and tables linger (opts) */
	uint64_t *obuf;
	/* Off-CPU time (record/offcpu.h), with the session's event. */
	struct sfp_offcpu *offcpu;
	int offcpu_evsel;		/* -1: none */
	uint64_t offcpu_id;		/* its first id */
	uint32_t state_off, state_size;	/* sched_switch prev_state */
	bool offcpu_inject;		/* bpf-defer: samples back into the
					   session, for its time order */
	uint64_t last_time;		/* newest record time seen */
	bool synthesizing;		/* the record comes from /proc */
	uint64_t *mmap_fix;		/* MMAP2 changed: its stray flag
					   cleared, its build-id filled */
	bool fill_build_ids;		/* see mmap2_fill_build_id() */
	bool (*want)(void *want_ctx, uint32_t pid, const char *comm);
	void *want_ctx;
	struct sfp_rec_pipe_stats st;
};

/* --- processes ----------------------------------------------------------- */

static struct proc *find_proc(struct sfp_rec_pipe *p, uint32_t pid)
{
	return sfp_idmap_find(&p->procs, pid);
}

/* The address space of pid, created empty (or from a parent) if absent. */
static struct sfp_addr_space *get_as(struct sfp_rec_pipe *p, uint32_t pid,
				     const struct sfp_addr_space *parent)
{
	bool added;
	struct proc *pr = sfp_idmap_get(&p->procs, pid, &added);
	int err;

	if (!pr)
		return NULL;
	if (!added)
		return pr->as;
	if (parent) {
		err = sfp_addr_space__fork(parent, &pr->as);
		if (!err)
			unw_as_set_pid(pr->as, (int)pid);
	} else {
		/* pid: its files as it sees them (containers, upgrades). */
		SFP_OPTS(sfp_addr_space_opts, ao, .cache_dir = p->cache_dir,
			 .pid = (int)pid);

		err = sfp_addr_space__new(&ao, &pr->as);
	}
	if (err) {
		pr_warn("address space of process %u: %s", pid,
			sfp_strerror(err));
		sfp_idmap_delete(&p->procs, pr);
		return NULL;
	}
	p->st.procs++;
	return pr->as;
}

/* Remove pid (process exit). */
static void drop_proc(struct sfp_rec_pipe *p, uint32_t pid)
{
	struct proc *pr = find_proc(p, pid);

	if (!pr)
		return;
	sfp_addr_space__free(&pr->as);
	sfp_idmap_delete(&p->procs, pr);
}

/* --- output ----------------------------------------------------------- */

/* An event to the consumer, through the stitcher where there is one. */
static int deliver(struct sfp_rec_pipe *p, const struct sfp_perf_event *ev)
{
	int err = p->stitch ? sfp_stitcher__push(p->stitch, ev)
			    : p->on_event(p->event_ctx, ev, SFP_STITCH_PASS);

	if (err < 0)
		return err;
	p->st.records_out++;
	return 0;
}

/* The output evsel of a record: a sample's own event (the first when its
 * id names none: the decoder judges it then), side-band the first's. */
static int out_evsel_of(const struct sfp_rec_pipe *p, const void *rec,
			size_t size)
{
	int ev;

	if (((const struct perf_event_header *)rec)->type != PERF_RECORD_SAMPLE)
		return 0;
	ev = sfp_record_sample_evsel(p->r, rec, size);
	return ev < 0 ? 0 : ev;
}

/* A record as bytes (the kernel's, /proc's, the BPF side's), decoded once
 * for the consumer of events. */
static int emit_decoded(struct sfp_rec_pipe *p, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	struct sfp_perf_event ev;
	int err;

	if (h->type == PERF_RECORD_EXIT && p->offcpu && !p->in_exit_flush) {
		p->in_exit_flush = true;
		err = sfp_offcpu__flush_sums(p->offcpu, p->last_time);
		p->in_exit_flush = false;
		if (err < 0)
			return err;
	}
	if (size / 8 + 8 > p->scratch_len) {
		size_t n = size / 8 + 8;
		uint64_t *sc = realloc(p->scratch, n * sizeof(*sc));

		if (!sc)
			return -ENOMEM;
		p->scratch = sc;
		p->scratch_len = n;
	}
	if (size + 1 > p->str_cap) {
		char *str = realloc(p->str, size + 1);

		if (!str)
			return -ENOMEM;
		p->str = str;
		p->str_cap = size + 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = h->type;
	ev.misc = h->misc;
	ev.size = h->size;
	ev.raw = rec;
	ev.evsel = &p->evsels[out_evsel_of(p, rec, size)];
	err = sfp_perf_record_decode(ev.evsel, rec, size, false, &ev,
				     p->scratch, p->scratch_len, p->str, false);
	if (err) {
		p->st.undecoded++;
		pr_warn("a record of type %u (%zu bytes) not understood: "
			"skipped", h->type, size);
		return 0;
	}
	return deliver(p, &ev);
}

static int emit(struct sfp_rec_pipe *p, const void *rec, size_t size)
{
	int err;

	if (p->on_event)
		return emit_decoded(p, rec, size);
	err = p->out(p->ctx, rec, size);
	if (err < 0)
		return err;
	p->st.records_out++;
	p->st.bytes_out += size;
	return 0;
}

/*
 * A sample of the session on its way through the deferral engine: the
 * decoded sample and the index of its event, which a sample does not
 * name (the session's IDENTIFIER does).
 */
struct rec_sample {
	struct sfp_perf_sample s;
	int evsel;
};

/* A sample of the engine or the off-CPU sums, typed (event consumer). */
static int emit_typed(struct sfp_rec_pipe *p, int evsel,
		      const struct sfp_perf_sample *s,
		      const struct sfp_defer_user *u)
{
	struct sfp_perf_event ev;
	int err;

	err = sfp_record_sample_event(&p->out_attrs[evsel], &p->evsels[evsel],
				      s, u, &p->ev_chain,
				      &p->ev_chain_cap, &ev);
	if (err < 0) {
		pr_warn("cannot pass on a sample of %u frames: %s",
			(unsigned)(s->nr_ips + u->nr), strerror(-err));
		return err;
	}
	return deliver(p, &ev);
}

static void note_no_table(struct sfp_rec_pipe *p, const char *path)
{
	struct no_table *n;
	size_t i;

	for (i = 0; i < p->nr_no_table; i++)
		if (!strcmp(p->no_table[i].path, path)) {
			p->no_table[i].count++;
			return;
		}
	if (p->nr_no_table >= MAX_NO_TABLE)
		return;
	n = realloc(p->no_table, (p->nr_no_table + 1) * sizeof(*n));
	if (!n)
		return;
	p->no_table = n;
	n[p->nr_no_table].path = strdup(path);
	if (!n[p->nr_no_table].path)
		return;
	n[p->nr_no_table++].count = 1;
}

static int unwind_cb(void *ctx, const struct sfp_defer_sample *s,
		     uint64_t *ips, size_t max)
{
	struct sfp_rec_pipe *p = ctx;
	struct sfp_regs regs = {
		.ip = s->ip, .sp = s->sp, .fp = s->bp,
		.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP,
	};
	SFP_OPTS(sfp_unwind_opts, uo, .max_depth = (uint32_t)max);
	enum sfp_unwind_stop stop = SFP_STOP_NONE;
	struct sfp_addr_space *as;
	int n, i, err;

	as = get_as(p, s->pid, NULL);
	if (!as) {
		ips[0] = s->ip;
		return 1;
	}
	err = sfp_reader__set_snapshot(p->reader, s->stack, s->stack_size,
				       s->sp);
	if (err)
		return err;
	n = sfp_unwind(as, p->reader, &regs, p->frames, max, &uo, &stop);
	if (n < 0) {
		ips[0] = s->ip;
		return 1;
	}
	if (p->deep) {
		struct proc *pr = find_proc(p, s->pid);
		struct sfp_rec_deep_walk w = {
			.as = as, .reader = p->reader, .regs = &regs,
			.pid = s->pid, .tid = s->tid, .time = s->time,
			.stack = s->stack, .stack_size = s->stack_size,
			.comm = pr && pr->comm[0] ? pr->comm : NULL,
		};

		n = (int)sfp_rec_deep__complete(p->deep, &w, p->frames,
						(size_t)n, max, &stop);
	}
	for (i = 0; i < n; i++) {
		ips[i] = p->frames[i].ip;
		if (p->frames[i].flags & SFP_FRAME_TRAMPOLINE)
			p->st.tramp_frames++;
	}
	if (stop < SFP_STOP__MAX)
		p->st.stops[stop]++;
	if (stop == SFP_STOP_NO_INFO || stop == SFP_STOP_BAD_RA) {
		struct sfp_map_info mi;

		if (!sfp_addr_space__find(as, p->frames[n - 1].ip, &mi) &&
		    !mi.has_table && mi.path)
			note_no_table(p, mi.path);
	}
	return n;
}

static int emit_sample_cb(void *ctx, const struct sfp_defer_sample *ds,
			  const struct sfp_defer_user *u)
{
	struct sfp_rec_pipe *p = ctx;
	const struct rec_sample *rs = ds->priv;
	const struct sfp_perf_sample *s = &rs->s;
	int n;

	if (rs->evsel == p->offcpu_evsel && p->offcpu)
		return sfp_offcpu__block(p->offcpu, s, u);
	if (p->on_event)
		return emit_typed(p, rs->evsel, s, u);
	n = sfp_record_encode_sample(&p->out_attrs[rs->evsel], s, u, p->obuf,
				     OUT_BUF);
	if (n < 0) {
		pr_warn("cannot write a sample of %u bytes: %s",
			(unsigned)(s->nr_ips * 8), strerror(-n));
		return n;
	}
	return emit(p, p->obuf, (size_t)n);
}

static int emit_deferred_cb(void *ctx, const struct sfp_defer_origin *o,
			    uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct sfp_rec_pipe *p = ctx;
	struct sfp_defer_origin late;
	int n;

	if (p->offcpu && p->last_time > o->time) {
		/* Its off-CPU samples are stamped at their switch-in, after
		 * the switch-out the engine remembers; a reader sorting by
		 * time must see the record after them.  The kernel too
		 * writes it later, on the way back to user space. */
		late = *o;
		late.time = p->last_time;
		o = &late;
	}
	if (p->on_event) {
		/* not from the engine, which runs inline for events; kept
		 * whole should another source of chains come */
		struct sfp_perf_event ev = {
			.type = SFP_PERF_RECORD_CALLCHAIN_DEFERRED,
			.misc = PERF_RECORD_MISC_USER,
			.evsel = &p->evsels[0],
		};

		ev.sample.pid = o->pid;
		ev.sample.tid = o->tid;
		ev.sample.time = o->time;
		ev.sample.cpu = o->cpu;
		ev.deferred.cookie = cookie;
		ev.deferred.nr = nr;
		ev.deferred.ips = ips;
		return deliver(p, &ev);
	}
	n = sfp_record_encode_deferred(&p->out_attrs[0], p->track_id, o, cookie,
				       ips, nr, p->obuf, OUT_BUF);
	if (n < 0)
		return n;
	return emit(p, p->obuf, (size_t)n);
}

/* An off-CPU sample, blocked time as period (record/offcpu.h). */
static int emit_offcpu_cb(void *ctx, const struct sfp_perf_sample *s,
			  const struct sfp_defer_user *u)
{
	struct sfp_rec_pipe *p = ctx;
	int n;

	if (p->on_event && !p->offcpu_inject)
		return emit_typed(p, p->offcpu_evsel, s, u);
	n = sfp_record_encode_sample(&p->out_attrs[p->offcpu_evsel], s, u,
				     p->obuf, OUT_BUF);
	if (n < 0) {
		pr_warn("cannot write an off-CPU sample: %s", strerror(-n));
		return n;
	}
	/* bpf-defer: the session delivers it in time order, back to
	 * sfp_rec_pipe__record(), which writes it as it is */
	if (p->offcpu_inject)
		return sfp_record_inject(p->r, p->obuf, (size_t)n, (int)s->cpu);
	return emit(p, p->obuf, (size_t)n);
}

static const struct sfp_defer_ops engine_ops = {
	.unwind = unwind_cb,
	.emit_sample = emit_sample_cb,
	.emit_deferred = emit_deferred_cb,
};

/* --- side-band ----------------------------------------------------------- */

static void on_mmap2(struct sfp_rec_pipe *p, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	size_t trailer = sfp_sample_id_size(p->out_attrs[0].sample_type);
	uint32_t pid, tid, prot, flags;
	uint64_t start, len, pgoff;
	uint8_t bid_size = 0, bid[20];
	uint32_t maj = 0, min = 0;
	uint64_t ino = 0;
	struct sfp_addr_space *as;
	struct sfp_cursor c;
	struct sfp_map m;
	const char *name;
	size_t name_max;

	sfp_cursor_init(&c, rec, size, false);
	if (sfp_cursor_skip(&c, 8) || sfp_cursor_u32(&c, &pid) ||
	    sfp_cursor_u32(&c, &tid) || sfp_cursor_u64(&c, &start) ||
	    sfp_cursor_u64(&c, &len) || sfp_cursor_u64(&c, &pgoff))
		goto bad;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		if (sfp_cursor_u8(&c, &bid_size) || sfp_cursor_skip(&c, 3) ||
		    sfp_cursor_bytes(&c, bid, 20) || bid_size > 20)
			goto bad;
	} else if (sfp_cursor_u32(&c, &maj) || sfp_cursor_u32(&c, &min) ||
		   sfp_cursor_u64(&c, &ino) || sfp_cursor_skip(&c, 8)) {
		goto bad;
	}
	if (sfp_cursor_u32(&c, &prot) || sfp_cursor_u32(&c, &flags))
		goto bad;
	if (sfp_cursor_left(&c) < trailer + 1)
		goto bad;
	name = (const char *)c.pos;
	name_max = sfp_cursor_left(&c) - trailer;
	if (!memchr(name, 0, name_max))
		goto bad;
	as = get_as(p, pid, NULL);
	if (!as)
		return;
	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = start + len;
	m.pgoff = pgoff;
	m.prot = ((prot & PROT_READ) ? SFP_MAP_READ : 0) |
		 ((prot & PROT_WRITE) ? SFP_MAP_WRITE : 0) |
		 ((prot & PROT_EXEC) ? SFP_MAP_EXEC : 0);
	m.path = name;
	if (bid_size) {
		m.build_id = bid;
		m.build_id_len = bid_size;
	}
	/* Without a build-id, the file is the kernel's (device, inode) at
	 * that path: another container's file there is another module. */
	if (m.end > m.start)
		unw_as_add_map_dev(as, &m, ino ? (uint64_t)makedev(maj, min) : 0,
				   ino);
	return;
bad:
	pr_warn("malformed MMAP2 record (%zu bytes, misc %#x, %zu bytes "
		"from where parsing stopped for a %zu-byte sample_id) ignored",
		size, h->misc, sfp_cursor_left(&c), trailer);
}

/* A COMM record's name (NUL-terminated within the record, or cut). */
static void set_comm(struct proc *pr, const char *name, size_t left)
{
	size_t n = strnlen(name, left < sizeof(pr->comm) ? left
							   : sizeof(pr->comm) - 1);

	memcpy(pr->comm, name, n);
	pr->comm[n] = 0;
}

static int on_side_band(struct sfp_rec_pipe *p, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	uint32_t v[4];

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (p->rewrite)
			on_mmap2(p, rec, size);
		break;
	case PERF_RECORD_COMM:
		if (p->rewrite && size >= 16) {
			struct sfp_addr_space *as = NULL;
			struct proc *pr;

			memcpy(v, (const uint8_t *)rec + 8, 8);
			if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
				as = get_as(p, v[0], NULL);
				if (as)
					sfp_addr_space__exec(as);
			}
			pr = find_proc(p, v[0]);
			if (pr && v[0] == v[1])
				set_comm(pr, (const char *)rec + 16,
					 size - 16);
			if (pr && as)
				pr->want = 0;	/* another program */
		}
		break;
	case PERF_RECORD_FORK:
		/* pid, ppid, tid, ptid: a new process unless pid == ppid. */
		if (p->rewrite && size >= 24) {
			memcpy(v, (const uint8_t *)rec + 8, 16);
			if (v[0] != v[1]) {
				/* The table may move: keep the space itself. */
				struct proc *parent = find_proc(p, v[1]);
				struct sfp_addr_space *pas =
					parent ? parent->as : NULL;
				char comm[sizeof(parent->comm)] = "";

				if (parent)
					memcpy(comm, parent->comm, sizeof(comm));
				drop_proc(p, v[0]);
				if (get_as(p, v[0], pas))
					memcpy(find_proc(p, v[0])->comm, comm,
					       sizeof(comm));
			}
		}
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* Asked for the switch-in times only: not written (perf's
		 * --off-cpu files have none either). */
		if (p->offcpu) {
			struct sfp_perf_sample s;

			if (sfp_record__decode_id(p->r, rec, size, &s))
				return 0;
			if (s.time > p->last_time)
				p->last_time = s.time;
			if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
				return sfp_offcpu__wake(p->offcpu, s.tid,
							s.time);
			/* A block's beginning (not a preemption), whose
			 * sched_switch sample may have been lost. */
			if (p->rewrite &&
			    !(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) &&
			    s.tid) {
				s.id = p->offcpu_id;
				s.misc = PERF_RECORD_MISC_KERNEL;
				s.ip = 0;
				return sfp_offcpu__switch_out(p->offcpu, &s);
			}
			return 0;
		}
		break;
	case PERF_RECORD_EXIT:
		if (size >= 24) {
			int err;

			memcpy(v, (const uint8_t *)rec + 8, 16);
			if (p->offcpu)
				sfp_offcpu__task_exit(p->offcpu, v[2]);
			if (p->deep)
				sfp_rec_deep__task_exit(p->deep, v[2]);
			if (p->engine) {
				/* The exiting task's record comes first. */
				err = sfp_defer_engine__task_exit(p->engine,
								  v[2]);
				if (err)
					return err;
			}
			if (p->rewrite && v[0] == v[2])
				drop_proc(p, v[0]);
		}
		break;
	case PERF_RECORD_LOST:
		if (size >= 24) {
			uint64_t n;

			memcpy(&n, (const uint8_t *)rec + 16, 8);
			p->st.lost += n;
		}
		break;
	default:
		break;
	}
	return emit(p, rec, size);
}

static int engine_add(struct sfp_rec_pipe *p, struct rec_sample *rs,
		      int cpu);

/*
 * A sched_switch sample of the off-CPU event: a preemption is dropped (the
 * task stays runnable); a block goes through the deferral engine like any
 * kernel-mode sample -- one user unwind per kernel entry, whatever the
 * number of blocks in it -- and waits in offcpu for its switch-in.
 */
static int offcpu_switch(struct sfp_rec_pipe *p, struct rec_sample *rs,
			 int cpu)
{
	const struct sfp_perf_sample *s = &rs->s;
	uint64_t state = 0, before;
	struct sfp_defer_stats ds;
	int err;

	if (s->raw_size < p->state_off + p->state_size ||
	    p->state_size > sizeof(state)) {
		pr_warn("sched_switch sample without prev_state (%u raw bytes)",
			s->raw_size);
		return 0;
	}
	/* host order, as the ring gave it; only the low bits matter */
	memcpy(&state, (const uint8_t *)s->raw_data + p->state_off,
	       p->state_size);
	if (!sfp_offcpu__is_block(p->offcpu, state))
		return 0;
	sfp_defer_engine__stats(p->engine, &ds);
	before = ds.unwinds;
	err = engine_add(p, rs, cpu);
	sfp_defer_engine__stats(p->engine, &ds);
	if (ds.unwinds != before)
		sfp_offcpu__add_unwind(p->offcpu);
	return err;
}

/*
 * The build-id of the file at path, which is inode (dev, ino): from the
 * memo (libc once for all the processes; a file without one is read
 * once too), else read and remembered.  path NULL: the memo only.
 * Return: its length, 0 none or unknown; *known (may be NULL) whether
 * the memo or the file answered.
 */
static size_t memo_build_id(struct sfp_rec_pipe *p, const char *path,
			    uint64_t dev, uint64_t ino, uint8_t *id,
			    bool *known)
{
	struct bid_memo *b = NULL;
	size_t len;
	int err;

	if (known)
		*known = false;
	if (!p->bid_memo)
		p->bid_memo = calloc(BID_MEMO, sizeof(*p->bid_memo));
	if (p->bid_memo) {
		b = &p->bid_memo[(ino * 0x9e3779b97f4a7c15ull ^ dev) % BID_MEMO];
		if (b->ino == ino && b->dev == dev && (b->len || b->none)) {
			if (known)
				*known = true;
			memcpy(id, b->id, b->len);
			return b->len;
		}
	}
	if (!path)
		return 0;
	err = sfp_file_build_id(path, id, 20, &len);
	if (err && err != -ENOENT)
		return 0;	/* not readable now: maybe through another path */
	if (err)
		len = 0;	/* no build-id note */
	if (known)
		*known = true;
	if (b) {
		b->dev = dev;
		b->ino = ino;
		b->len = (uint8_t)len;
		b->none = !len;
		memcpy(b->id, id, len);
	}
	return len;
}

/* The MMAP2 record to hand on in place of rec: p->mmap_fix, a copy of
 * it to change, or NULL (no room: rec as it is). */
static struct perf_event_header *mmap2_copy(struct sfp_rec_pipe *p,
					    const void *rec, size_t size)
{
	if (!p->mmap_fix)
		p->mmap_fix = malloc(MMAP_FIX_MAX);
	if (!p->mmap_fix || size > MMAP_FIX_MAX)
		return NULL;
	if ((const void *)p->mmap_fix != rec)
		memcpy(p->mmap_fix, rec, size);
	return (struct perf_event_header *)p->mmap_fix;
}

/*
 * A kernel MMAP2 record in the device/inode layout (this session has no
 * attr.build_id) made into the build-id layout, the same size, as perf
 * writes it with --buildid-mmap: the build-id of that very inode, found
 * through /proc/PID/map_files, then /proc/PID/root/PATH, then PATH, each
 * taken only when its device and inode are the record's (a process gone
 * meanwhile, a file replaced since).  Why not attr.build_id itself:
 * while any session on the machine has it, the kernel leaves the flag in
 * the records of the sessions after it (mmap2_stray_build_id()), and
 * Debian's perf 6.1 aborts on those (assertion in util/build-id.c).
 * Unknown: the record stays as the kernel wrote it.
 */
static const void *mmap2_fill_build_id(struct sfp_rec_pipe *p,
				       const void *rec, size_t size)
{
	const uint8_t *b = rec;
	char path[4096 + 32];
	const char *name;
	uint32_t pid, maj, min;
	uint64_t addr, len, ino, dev;
	struct perf_event_header *h;
	uint8_t id[20];
	size_t idlen = 0;
	bool known;
	struct stat st;

	if (size < 80 || !memchr(b + 72, 0, size - 72))
		return rec;
	name = (const char *)b + 72;
	if (name[0] != '/')
		return rec;		/* [vdso], //anon, [heap] ... */
	memcpy(&pid, b + 8, 4);
	memcpy(&addr, b + 16, 8);
	memcpy(&len, b + 24, 8);
	memcpy(&maj, b + 40, 4);
	memcpy(&min, b + 44, 4);
	memcpy(&ino, b + 48, 8);
	dev = makedev(maj, min);
	idlen = memo_build_id(p, NULL, dev, ino, id, &known);
	if (!known) {
		const char *cand[3];
		char mf[64];
		size_t i;

		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid,
			 (unsigned long long)addr,
			 (unsigned long long)(addr + len));
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, name);
		cand[0] = mf;
		cand[1] = path;
		cand[2] = name;
		for (i = 0; i < 3 && !known; i++)
			if (!stat(cand[i], &st) && (uint64_t)st.st_dev == dev &&
			    (uint64_t)st.st_ino == ino)
				idlen = memo_build_id(p, cand[i], dev, ino, id,
						      &known);
	}
	if (!idlen || !(h = mmap2_copy(p, rec, size))) {
		p->st.mmap_no_build_id++;
		return rec;
	}
	h->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	memset((uint8_t *)h + 40, 0, 24);
	((uint8_t *)h)[40] = (uint8_t)idlen;
	memcpy((uint8_t *)h + 44, id, idlen);
	p->st.mmap_build_id_filled++;
	return h;
}

/*
 * An MMAP2 record from the kernel with the build-id flag that this
 * session, without attr.build_id, never asked for.  The kernel writes the
 * device/inode layout for such a session's events whatever the flag says
 * (the choice is made per event), but it prepares one header for all the
 * sessions an mmap is reported to and sets the flag in it for a session
 * that has attr.build_id, where the sessions after it see it too.  Read
 * as a build-id, the device and inode bytes made a wrong one (the
 * 'size' byte is the low byte of the device's major number), and the
 * symbolizer refused libc: seen in the agent beside other sessions.  The
 * two layouts have the same size, so clearing the flag gives every
 * reader, the output file's included, the record the kernel meant.
 */
static const void *mmap2_stray_build_id(struct sfp_rec_pipe *p,
					const void *rec, size_t size)
{
	struct perf_event_header *h = mmap2_copy(p, rec, size);

	if (!h)
		return rec;
	h->misc &= (uint16_t)~PERF_RECORD_MISC_MMAP_BUILD_ID;
	if (!p->st.mmap_stray_build_id++)
		pr_info("MMAP2 records carry a build-id flag this session did "
			"not ask for (another session on the machine records "
			"build-ids): the flag is cleared");
	return p->mmap_fix;
}

int sfp_rec_pipe__record(const void *rec, size_t size, int cpu, void *pipe)
{
	struct sfp_rec_pipe *p = pipe;
	const struct perf_event_header *h = rec;
	struct rec_sample rs;
	int err;

	p->st.records_in++;
	if (h->type == PERF_RECORD_MMAP2 && !p->synthesizing &&
	    !sfp_record__has_build_ids(p->r)) {
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
			rec = mmap2_stray_build_id(p, rec, size);
		if (p->fill_build_ids)
			rec = mmap2_fill_build_id(p, rec, size);
	}
	if (h->type != PERF_RECORD_SAMPLE)
		return on_side_band(p, rec, size);
	p->st.samples++;
	if (!p->rewrite)
		return emit(p, rec, size);
	err = sfp_record__decode_sample(p->r, rec, size, &rs.s, &rs.evsel);
	if (err) {
		pr_warn("sample of %zu bytes not understood: %s", size,
			sfp_strerror(err));
		return 0;	/* counted as in, not out */
	}
	if (rs.s.time > p->last_time)
		p->last_time = rs.s.time;
	if (rs.evsel == p->offcpu_evsel && p->offcpu)
		return offcpu_switch(p, &rs, cpu);
	return engine_add(p, &rs, cpu);
}

/* Does the caller keep pid's samples (opts' want())?  Asked once per
 * process (and program: an exec asks again). */
static bool wanted(struct sfp_rec_pipe *p, uint32_t pid)
{
	struct proc *pr;

	if (!p->want)
		return true;
	if (!get_as(p, pid, NULL) || !(pr = find_proc(p, pid)))
		return p->want(p->want_ctx, pid, "");
	if (!pr->want)
		pr->want = p->want(p->want_ctx, pid, pr->comm) ? 1 : -1;
	return pr->want > 0;
}

/*
 * A sample through the deferral engine (which calls emit_sample_cb with
 * rs as ds.priv, before this returns).  Its cpu is made the ring's when
 * the sample has none, for the record written.
 */
static int engine_add(struct sfp_rec_pipe *p, struct rec_sample *rs,
		      int cpu)
{
	struct sfp_perf_sample *s = &rs->s;
	struct sfp_defer_sample ds;

	memset(&ds, 0, sizeof(ds));
	ds.pid = s->pid;
	ds.tid = s->tid;
	/* Without PERF_SAMPLE_CPU the ring says where it was taken. */
	if (!(s->present & SFP_PERF_SAMPLE_CPU))
		s->cpu = (uint32_t)cpu;
	ds.cpu = s->cpu;
	ds.time = s->time;
	ds.kernel_mode = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_KERNEL;
	/* x86-64 bp, sp, ip (record.h); looked up once, here: the engine
	 * and the unwinder take them from ds */
	ds.has_user = s->user_regs_abi != 0 &&
		      (s->user_regs_mask & SFP_USER_REGS_MASK) ==
			      SFP_USER_REGS_MASK;
	/* a process the caller throws away: its stack is not unwound */
	if (ds.has_user && !wanted(p, s->pid)) {
		ds.has_user = false;
		p->st.unwanted++;
	}
	if (s->user_regs_abi) {
		sfp_perf_sample_user_reg(s, SFP_X86_REG_BP, &ds.bp);
		sfp_perf_sample_user_reg(s, SFP_X86_REG_SP, &ds.sp);
		sfp_perf_sample_user_reg(s, SFP_X86_REG_IP, &ds.ip);
	}
	ds.stack = s->user_stack;
	ds.stack_size = s->user_stack_dyn_size;
	/* all of them: what tells two kernel entries apart (record.h) */
	ds.regs = s->user_regs;
	ds.nr_regs = s->user_regs ?
		     (size_t)__builtin_popcountll(s->user_regs_mask) : 0;
	ds.priv = rs;
	return sfp_defer_engine__add(p->engine, &ds);
}

/* --- synthesis from /proc ------------------------------------------------ */

static int synth_emit(struct sfp_rec_pipe *p, int n)
{
	int err;

	if (n < 0)
		return n;
	p->st.synthesized++;
	p->synthesizing = true;
	err = sfp_rec_pipe__record(p->obuf, (size_t)n, 0, p);
	p->synthesizing = false;
	return err;
}

/*
 * The build-id of the file pid maps at [start, end), read from the mapped
 * inode itself (map_files; the path may hold a newer file by now), as the
 * kernel puts it in MMAP2 records with attr.build_id: it then names the
 * right bytes for the unwinder, the symbolizer and the build-id cache.
 * Return: its length, 0 unknown.
 */
static size_t synth_build_id(struct sfp_rec_pipe *p, pid_t pid,
			     const char *name, uint64_t start, uint64_t end,
			     uint8_t *id)
{
	char path[4096];
	struct stat st;

	if (name[0] != '/')
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)start, (unsigned long long)end);
	if (stat(path, &st) &&
	    (sfp_proc_mapped_file(pid, name, start, end, NULL, 0, path,
				  sizeof(path)) || stat(path, &st)))
		return 0;
	return memo_build_id(p, path, st.st_dev, st.st_ino, id, NULL);
}

static int synth_proc(struct sfp_rec_pipe *p, pid_t pid)
{
	const struct perf_event_attr *a = &p->out_attrs[0];
	char path[64], line[4096], comm[64] = "";
	struct dirent *de;
	FILE *f;
	DIR *d;
	int err = 0;
	ssize_t n;

	n = sfp_proc_read(pid, "comm", comm, sizeof(comm));
	if (n < 0 && n != -ENODATA)
		return 0;	/* gone meanwhile */
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = 0;
	/* One COMM per thread, so that every tid has a name. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && !err && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0)
			err = synth_emit(p, sfp_record_encode_comm(
						    a, p->track_id, (uint32_t)pid,
						    (uint32_t)tid, comm, p->obuf,
						    OUT_BUF));
	}
	if (d)
		closedir(d);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], *name;
		uint32_t prot = 0;
		uint8_t bid[20];
		size_t bid_len;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end,
			   perms, &off, &pos) < 4 || !pos)
			continue;
		if (perms[2] != 'x')
			continue;	/* perf synthesizes code maps only */
		name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			name = "//anon";
		prot = (perms[0] == 'r' ? PROT_READ : 0) |
		       (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		bid_len = synth_build_id(p, pid, name, start, end, bid);
		err = synth_emit(p, sfp_record_encode_mmap2(
					    a, p->track_id, (uint32_t)pid,
					    (uint32_t)pid, start, end - start, off,
					    prot, perms[3] == 's' ? MAP_SHARED
								  : MAP_PRIVATE,
					    name, bid, bid_len, p->obuf,
					    OUT_BUF));
	}
	fclose(f);
	return err;
}

int sfp_rec_pipe__synthesize_kernel(struct sfp_rec_pipe *p)
{
	unsigned long long addr, text = 0, etext = 0;
	char line[512], type, name[256];
	FILE *f;

	/* perf script resolves kernel addresses through this map. */
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && (!text || !etext)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
	}
	fclose(f);
	if (!text || etext <= text)
		return 0;	/* kptr_restrict hides the addresses */
	return synth_emit(p, sfp_record_encode_kernel_mmap(
				     &p->out_attrs[0], p->track_id, text,
				     etext - text, "[kernel.kallsyms]_text",
				     p->obuf, OUT_BUF));
}

int sfp_rec_pipe__synthesize(struct sfp_rec_pipe *p, const pid_t *pids,
			     size_t nr_pids, bool all)
{
	struct dirent *de;
	size_t i;
	DIR *d;
	int err = 0;

	if (!all) {
		for (i = 0; i < nr_pids && !err; i++)
			err = synth_proc(p, pids[i]);
		return err;
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid > 0)
			err = synth_proc(p, (pid_t)pid);
	}
	closedir(d);
	return err;
}

/* --- life cycle ---------------------------------------------------------- */

/*
 * The off-CPU event's output: perf's `offcpu-time` (a software
 * bpf-output event, the blocked time as period), without the raw
 * tracepoint data.
 */
static int offcpu_setup(struct sfp_rec_pipe *p,
			const struct sfp_rec_pipe_opts *o)
{
	SFP_OPTS(sfp_offcpu_opts, oo,
		 .thresh_ns = SFP_OPTS_GET(o, sfp_rec_pipe_opts,
					   off_cpu_thresh_ns, 0),
		 .max_rate = SFP_OPTS_GET(o, sfp_rec_pipe_opts,
					  off_cpu_max_rate, 0));
	struct perf_event_attr *a = &p->out_attrs[p->offcpu_evsel];
	int err;

	/* bpf-defer: the BPF program on sched_switch reads the state and
	 * matches the switch-in; user chains come after the switch-in */
	if (!p->rewrite) {
		p->offcpu_inject = true;
		oo.late_user = true;
	} else {
		const uint64_t *ids;

		if (sfp_record__ids(p->r, p->offcpu_evsel, &ids))
			p->offcpu_id = ids[0];
		oo.switch_records = SFP_OPTS_GET(o, sfp_rec_pipe_opts,
						 off_cpu_switch_records,
						 false);
		err = sfp_tracepoint_field("sched", "sched_switch",
					   "prev_state", &p->state_off,
					   &p->state_size);
		if (err || !p->state_size || p->state_size > 8) {
			pr_warn("sched:sched_switch has no prev_state field "
				"in tracefs");
			return -EOPNOTSUPP;
		}
	}
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
	a->sample_period = 1;
	a->freq = 0;
	/* the switch records feed offcpu and are not written */
	p->out_attrs[0].context_switch = 0;
	return sfp_offcpu__new(&oo, emit_offcpu_cb, p, &p->offcpu);
}

int sfp_rec_pipe__new(struct sfp_record *r, const struct sfp_rec_pipe_opts *o,
		      sfp_rec_out_fn out, void *ctx, struct sfp_rec_pipe **pp)
{
	const char *cache_dir = SFP_OPTS_GET(o, sfp_rec_pipe_opts, cache_dir,
					     NULL);
	int i, nr = sfp_record__nr_evsels(r), err = -ENOMEM;
	sfp_rec_event_fn on_event = SFP_OPTS_GET(o, sfp_rec_pipe_opts,
						 on_event, NULL);
	struct sfp_rec_pipe *p;
	const uint64_t *ids;

	*pp = NULL;
	if (!SFP_OPTS_VALID(o, sfp_rec_pipe_opts) || !out == !on_event ||
	    nr <= 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->out = out;
	p->ctx = ctx;
	p->on_event = on_event;
	p->event_ctx = SFP_OPTS_GET(o, sfp_rec_pipe_opts, event_ctx, NULL);
	p->inline_mode = SFP_OPTS_GET(o, sfp_rec_pipe_opts, inline_mode, false);
	p->fill_build_ids = SFP_OPTS_GET(o, sfp_rec_pipe_opts, fill_build_ids,
					   false);
	p->want = SFP_OPTS_GET(o, sfp_rec_pipe_opts, want, NULL);
	p->want_ctx = SFP_OPTS_GET(o, sfp_rec_pipe_opts, want_ctx, NULL);
	p->max_depth = SFP_OPTS_GET(o, sfp_rec_pipe_opts, max_depth, 0);
	if (!p->max_depth || p->max_depth > SFP_DEFER_MAX_DEPTH)
		p->max_depth = SFP_DEFER_MAX_DEPTH;
	/* Only the sframe mode unwinds here; dwarf keeps the snapshots. */
	p->rewrite = sfp_record__call_graph(r) == SFP_RECORD_CG_SFRAME;
	/* An event consumer gets whole chains: the engine's samples carry
	 * their user part, there is nothing to stitch. */
	if (on_event && p->rewrite)
		p->inline_mode = true;
	p->obuf = malloc(OUT_BUF);
	p->out_attrs = calloc((size_t)nr, sizeof(*p->out_attrs));
	sfp_idmap_init(&p->procs, sizeof(struct proc), 64, 75);
	if (cache_dir)
		p->cache_dir = strdup(cache_dir);
	if (!p->obuf || !p->out_attrs ||
	    (cache_dir && !p->cache_dir))
		goto fail;
	if (sfp_record__ids(r, 0, &ids))
		p->track_id = ids[0];
	for (i = 0; i < nr; i++) {
		/* bpf-defer writes deferred-form samples too (src/bpf/). */
		if (p->rewrite || sfp_record__call_graph(r) ==
					  SFP_RECORD_CG_BPF_DEFER)
			sfp_record_out_attr(sfp_record__attr(r, i),
					    !p->inline_mode, i == 0,
					    &p->out_attrs[i]);
		else
			p->out_attrs[i] = *sfp_record__attr(r, i);
	}
	if (on_event) {
		p->evsels = calloc((size_t)nr, sizeof(*p->evsels));
		if (!p->evsels)
			goto fail;
		for (i = 0; i < nr; i++) {
			sfp_record_perf_attr(&p->out_attrs[i],
					     &p->evsels[i].attr);
			p->evsels[i].idx = (size_t)i;
			p->evsels[i].nr_ids = sfp_record__ids(r, i,
							      &p->evsels[i].ids);
		}
		/* bpf-defer's samples wait for their chains' records */
		if (sfp_record__call_graph(r) == SFP_RECORD_CG_BPF_DEFER) {
			SFP_OPTS(sfp_stitch_opts, so,
				 .max_waiting = STITCH_MAX_WAITING);

			err = sfp_stitcher__new(&so, on_event, p->event_ctx,
						&p->stitch);
			if (err)
				goto fail;
			err = -ENOMEM;
		}
	}
	p->linger = SFP_OPTS_GET(o, sfp_rec_pipe_opts, table_linger_ms, 0);
	if (p->linger)
		unw_module_linger(
			(uint64_t)SFP_OPTS_GET(o, sfp_rec_pipe_opts,
					       table_linger_ms, 0) * 1000000,
			SFP_OPTS_GET(o, sfp_rec_pipe_opts, table_linger_bytes,
				     0));
	if (SFP_OPTS_GET(o, sfp_rec_pipe_opts, async_tables, false)) {
		err = unw_module_async_start();
		if (err)
			goto fail;
		p->async_tables = true;
		err = -ENOMEM;
	}
	p->offcpu_evsel = sfp_record__off_cpu_evsel(r);
	if (p->offcpu_evsel >= 0 &&
	    (p->rewrite ||
	     sfp_record__call_graph(r) == SFP_RECORD_CG_BPF_DEFER)) {
		err = offcpu_setup(p, o);
		if (err)
			goto fail;
	}
	if (p->rewrite) {
		err = sfp_defer_engine__new(&engine_ops, p, p->inline_mode,
					    p->max_depth, &p->engine);
		if (!err)
			err = sfp_reader__new_snapshot("", 0, 0, &p->reader);
		if (err)
			goto fail;
		err = -ENOMEM;
		p->frames = calloc(p->max_depth, sizeof(*p->frames));
		if (!p->frames)
			goto fail;
		if (!SFP_OPTS_GET(o, sfp_rec_pipe_opts, no_deep_stacks,
				  false)) {
			err = sfp_rec_deep__new(&p->deep);
			if (err)
				goto fail;
			sfp_rec_deep__set_bpf(p->deep,
					      SFP_OPTS_GET(o, sfp_rec_pipe_opts,
							   bpf_deep, NULL));
		}
	}
	*pp = p;
	return 0;
fail:
	sfp_rec_pipe__free(&p);
	return err;
}

bool sfp_rec_pipe__rewrites(const struct sfp_rec_pipe *p)
{
	return p->rewrite;
}

const struct perf_event_attr *sfp_rec_pipe__out_attr(const struct sfp_rec_pipe *p,
						     int evsel)
{
	if (evsel < 0 || evsel >= sfp_record__nr_evsels(p->r))
		return NULL;
	return &p->out_attrs[evsel];
}

const char *sfp_rec_pipe__out_name(const struct sfp_rec_pipe *p, int evsel)
{
	if (p->offcpu && evsel == p->offcpu_evsel)
		return SFP_OFF_CPU_EVENT_NAME;
	return sfp_record__evsel_name(p->r, evsel);
}

int sfp_rec_pipe__finish(struct sfp_rec_pipe *p)
{
	int err;

	/* Before the engine's last deferred records: the sums carry their
	 * user chains inline, the blocks still pending are counted.  The
	 * session has delivered its last records: written directly. */
	if (p->offcpu) {
		p->offcpu_inject = false;
		err = sfp_offcpu__finish(p->offcpu, p->last_time);
		if (err)
			return err;
	}
	if (p->engine && (err = sfp_defer_engine__flush(p->engine)))
		return err;
	return p->stitch ? sfp_stitcher__flush(p->stitch) : 0;
}

const struct sfp_perf_evsel *sfp_rec_pipe__evsel(const struct sfp_rec_pipe *p,
						 int evsel)
{
	if (!p->evsels || evsel < 0 || evsel >= sfp_record__nr_evsels(p->r))
		return NULL;
	return &p->evsels[evsel];
}

int sfp_rec_pipe__flush_offcpu(struct sfp_rec_pipe *p)
{
	return p->offcpu ? sfp_offcpu__flush_sums(p->offcpu, p->last_time) : 0;
}

bool sfp_rec_pipe__is_offcpu(const struct sfp_rec_pipe *p, int evsel)
{
	return p->offcpu && evsel == p->offcpu_evsel;
}

int sfp_rec_pipe__offcpu_block(struct sfp_rec_pipe *p,
			       const struct sfp_perf_sample *s,
			       const struct sfp_defer_user *u,
			       uint64_t time_in, bool new_entry)
{
	int err;

	if (!p->offcpu)
		return -EINVAL;
	if (time_in > p->last_time)
		p->last_time = time_in;
	/* the counts of is_block() come from the BPF side at the end */
	if (new_entry)
		sfp_offcpu__add_unwind(p->offcpu);
	err = sfp_offcpu__block(p->offcpu, s, u);
	return err ? err : sfp_offcpu__wake(p->offcpu, s->tid, time_in);
}

int sfp_rec_pipe__offcpu_user(struct sfp_rec_pipe *p, uint64_t cookie,
			      const uint64_t *ips, size_t nr)
{
	return p->offcpu ? sfp_offcpu__user_chain(p->offcpu, cookie, ips, nr)
			 : 0;
}

int sfp_rec_pipe__offcpu_kernel_sum(void *pipe, uint32_t pid, uint32_t tid,
				    uint64_t ns, uint64_t blocks)
{
	struct sfp_rec_pipe *p = pipe;
	struct sfp_perf_sample s = {
		.id = p->offcpu_id, .misc = PERF_RECORD_MISC_KERNEL,
		.pid = pid, .tid = tid,
	};

	if (!p->offcpu)
		return 0;
	uint64_t lost = p->st.lost;
	int c;

	for (c = 0; c < sfp_record__nr_cpus(p->r); c++)
		lost += sfp_record__lost(p->r, c);
	s.present = p->out_attrs[p->offcpu_evsel].sample_type &
		    (SFP_PERF_SAMPLE_MAX - 1);
	return sfp_offcpu__kernel_total(p->offcpu, &s,
					sfp_record__system_wide(p->r), lost,
					ns, blocks);
}

void sfp_rec_pipe__offcpu_switches(struct sfp_rec_pipe *p, uint64_t switches,
				   uint64_t preempted, uint64_t exits,
				   uint64_t blocks)
{
	if (p->offcpu)
		sfp_offcpu__set_switches(p->offcpu, switches, preempted, exits,
					 blocks);
}

uint64_t sfp_rec_pipe__release_pages(struct sfp_rec_pipe *p)
{
	(void)p;	/* the modules are the process's */
	return unw_module_release_pages();
}

void sfp_rec_pipe__stats(const struct sfp_rec_pipe *p,
			 struct sfp_rec_pipe_stats *st)
{
	struct unw_module_stats ms;

	*st = p->st;
	unw_module_stats(&ms);
	st->unwind_files = ms.modules;
	st->unwind_tables = ms.loaded;
	st->unwind_mismatch = ms.mismatch;
	st->tables_revived = ms.revived;
	st->tables_expired = ms.expired;
	st->tables_idle = ms.idle;
	st->tables_idle_bytes = ms.idle_bytes;
	if (p->async_tables) {
		struct unw_async_stats as;

		unw_module_async_stats(&as);
		st->tables_queued = as.queued;
		st->tables_built = as.built;
		st->tables_pending = as.pending;
		st->tables_not_ready = as.not_ready;
	}
	if (p->engine)
		sfp_defer_engine__stats(p->engine, &st->defer);
	if (p->deep) {
		st->deep_on = true;
		sfp_rec_deep__stats(p->deep, &st->deep);
	}
	if (p->offcpu) {
		st->off_cpu = true;
		sfp_offcpu__stats(p->offcpu, &st->offcpu);
	}
}

const char *sfp_rec_pipe__no_table(const struct sfp_rec_pipe *p, size_t i,
				   uint64_t *count)
{
	if (i >= p->nr_no_table)
		return NULL;
	*count = p->no_table[i].count;
	return p->no_table[i].path;
}

void sfp_rec_pipe__free(struct sfp_rec_pipe **pp)
{
	struct sfp_rec_pipe *p = *pp;
	struct proc *pr;
	size_t i, pos = 0;

	if (!p)
		return;
	/* first: the thread may be building a table for one of them */
	if (p->async_tables)
		unw_module_async_stop();
	while ((pr = sfp_idmap_next(&p->procs, &pos)))
		sfp_addr_space__free(&pr->as);
	for (i = 0; i < p->nr_no_table; i++)
		free(p->no_table[i].path);
	if (p->linger)	/* the idle tables go with the pipeline */
		unw_module_linger(0, 0);
	sfp_defer_engine__free(&p->engine);
	sfp_offcpu__free(&p->offcpu);
	sfp_reader__free(&p->reader);
	sfp_rec_deep__free(&p->deep);
	free(p->no_table);
	free(p->bid_memo);
	sfp_idmap_free(&p->procs);
	free(p->frames);
	free(p->out_attrs);
	free(p->obuf);
	free(p->mmap_fix);
	free(p->cache_dir);
	sfp_stitcher__free(&p->stitch);
	free(p->evsels);
	free(p->ev_chain);
	free(p->scratch);
	free(p->str);
	free(p);
	*pp = NULL;
}
