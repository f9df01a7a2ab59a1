// SPDX-License-Identifier: MIT
/*
 * The user side of deepcopy.bpf.c (deepcopy.h): loading, the threads'
 * sizes in the BPF maps, and pairing each copy with its sample.
 *
 * Pairing.  The copy is written in the sample's interrupt, before perf
 * copies its snapshot, so it is in the BPF ring before the sample can be
 * read from the perf ring; the recorder processes samples later, in time
 * order.  The program stamps each copy with the events' clock
 * (CLOCK_MONOTONIC, record's use_clockid) in the sample's interrupt, a
 * few microseconds from perf's own stamp of the sample (after it on
 * 6.18: the stamp is taken before the overflow handlers run), so a
 * sample's copy is its thread's copy stamped nearest it, within PAIR_NS.
 * Then it must also name the same user registers (ip, sp), start where
 * the snapshot ends (less SFD_OVERLAP bytes), and those repeated bytes
 * must equal the snapshot's last ones (the seam): a copy that is not the
 * sample's, or not from where the snapshot ended, is refused and counted.
 * A thread's copies come in its samples' order, so the copies of it
 * before the one taken are of samples already past: dropped (`unused`).
 *
 * Sizes.  A thread is asked for when one of its walks ran out of the
 * snapshot: first SFD_FIRST bytes, doubled while walks over the copy
 * still run out, set to what a completed walk needed (plus a quarter)
 * when that is more, and shrunk by 1/256 at each walk that needed less
 * (half in ~180 samples), never under one page while the thread lives.
 * Its comm is asked for too, with the largest size, so that the next
 * process of the same program (each cc1, each Go compile) is copied from
 * its first sample.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/perf_event.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sfprof/record.h>

#include "bpf/deepcopy.h"
#include "bpf/deepcopy-shared.h"
#include "common/idmap.h"
#include "common/procfs.h"
#include "record/record.h"
#include "deepcopy.skel.h"

#define SFD_FIRST (32u << 10)
/* Copies of another stack in a row that took a thread's walk nowhere
 * before its chain is no longer followed. */
#define OTHER_FAILS_MAX 16
/* Copies held for samples not yet processed, at most (the oldest are
 * dropped first, counted as unused). */
#define HELD_MAX_BYTES (128u << 20)
#define RING_BYTES (64u << 20)
/* A copy is stamped within microseconds of its sample (measured: 1-3 us
 * after perf's stamp on 6.18); one further than this is not the
 * sample's, nor is any when samples of a thread come closer than twice
 * this (the registers and the seam then decide). */
#define PAIR_NS 200000ull

struct held {
	struct sfd_rec h;
	uint8_t *data;
	bool dead;
};

struct thr {
	uint32_t tid;		/* first: the idmap's key */
	uint32_t want;		/* what the map says (bytes, page multiple) */
	bool other;		/* its chain leaves the stack: follow it */
	bool other_off;		/* it did, and led nowhere: not again */
	uint8_t other_fails;	/* copies of it in a row that led nowhere */
	uint32_t other_want;	/* bytes of it to copy */
	uint64_t shrink;	/* want * 256, shrunk by 1 per 256ths */
};

struct sfp_bpf_deep {
	struct sfp_deepcopy_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link **links;
	size_t nr_links;
	uint32_t snap_size;
	struct held *q;
	size_t q_head, q_nr, q_cap, q_bytes;
	uint8_t *taken;			/* the copy last given */
	struct sfp_idmap thr;		/* struct thr by tid */
	uint32_t test_drop, test_n;	/* SFPROF_BPF_TEST_DEEP_DROP */
	struct sfp_bpf_deep_stats st;
};

static int bpf_log(enum libbpf_print_level level, const char *fmt,
		   va_list ap)
{
	char buf[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	pr_debug("deep stacks: %s", buf);
	return 0;
}

int sfp_bpf_deep__load(uint32_t snap_size, struct sfp_bpf_deep **out,
		       char *why, size_t why_len)
{
	struct sfp_bpf_deep *b;
	const char *env;
	int err, ncpu;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->snap_size = snap_size;
	sfp_idmap_init(&b->thr, sizeof(struct thr), 64, 50);
	env = getenv("SFPROF_BPF_TEST_DEEP_DROP");
	if (env && atoi(env) > 0)
		b->test_drop = (uint32_t)atoi(env);
	libbpf_set_print(bpf_log);
	b->skel = sfp_deepcopy_bpf__open();
	if (!b->skel) {
		err = errno ? -errno : -ENOMEM;
		snprintf(why, why_len, "cannot open the BPF object: %s",
			 strerror(-err));
		goto fail;
	}
	b->skel->rodata->snap_size = snap_size;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		err = ncpu ? ncpu : -EINVAL;
		snprintf(why, why_len, "cannot count the CPUs: %s",
			 strerror(-err));
		goto fail;
	}
	bpf_map__set_max_entries(b->skel->maps.scratch, (uint32_t)ncpu);
	bpf_map__set_max_entries(b->skel->maps.rb, RING_BYTES);
	err = sfp_deepcopy_bpf__load(b->skel);
	if (err) {
		snprintf(why, why_len, "the BPF program did not load: %s%s",
			 strerror(-err), err == -EPERM ? " (needs CAP_BPF "
			 "and CAP_PERFMON)" : " (the verifier's log with -v)");
		goto fail;
	}
	*out = b;
	return 0;
fail:
	sfp_bpf_deep__free(&b);
	return err;
}

static int on_copy(void *ctx, void *data, size_t size);

int sfp_bpf_deep__attach(struct sfp_bpf_deep *b, struct sfp_record *r)
{
	const int *fds;
	size_t nr = sfp_record_fds(r, &fds), k = 0;
	int ev, err;

	b->links = calloc(nr ? nr : 1, sizeof(*b->links));
	if (!b->links)
		return -ENOMEM;
	b->ring = ring_buffer__new(bpf_map__fd(b->skel->maps.rb), on_copy, b,
				   NULL);
	if (!b->ring)
		return errno ? -errno : -ENOMEM;
	for (ev = 0; ev < sfp_record__nr_evsels(r); ev++) {
		const uint64_t *ids;
		size_t i, n = sfp_record__ids(r, ev, &ids);
		bool tp = sfp_record__attr(r, ev)->type ==
			  PERF_TYPE_TRACEPOINT;

		for (i = 0; i < n && k < nr; i++, k++) {
			struct bpf_link *l;

			/* a perf_event program cannot sit on a tracepoint
			 * (its samples keep the snapshot only) */
			if (tp || ev == sfp_record__off_cpu_evsel(r))
				continue;
			l = bpf_program__attach_perf_event(
				b->skel->progs.on_sample, fds[k]);
			if (!l) {
				err = errno ? -errno : -EINVAL;
				pr_warn("deep stacks: attaching to event "
					"'%s': %s", sfp_record__evsel_name(r, ev),
					strerror(-err));
				return err;
			}
			b->links[b->nr_links++] = l;
			/* libbpf enables the event when it attaches; the
			 * session enables it at start (or at exec) */
			ioctl(fds[k], PERF_EVENT_IOC_DISABLE, 0);
		}
	}
	return 0;
}

/* --- copies held for their samples --------------------------------------- */

static void held_drop(struct sfp_bpf_deep *b, struct held *h, bool count)
{
	if (h->dead)
		return;
	h->dead = true;
	free(h->data);
	h->data = NULL;
	b->q_bytes -= h->h.len + h->h.other_len;
	if (count)
		b->st.unused++;
}

/* Forget dead entries at the head; compact when half the array is. */
static void held_trim(struct sfp_bpf_deep *b)
{
	while (b->q_nr && b->q[b->q_head].dead) {
		b->q_head++;
		b->q_nr--;
	}
	if (!b->q_nr)
		b->q_head = 0;
	if (b->q_head && b->q_head >= b->q_cap / 2) {
		memmove(b->q, b->q + b->q_head, b->q_nr * sizeof(*b->q));
		b->q_head = 0;
	}
}

static int on_copy(void *ctx, void *data, size_t size)
{
	struct sfp_bpf_deep *b = ctx;
	struct sfd_rec h;
	struct held *e;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	/* (no bytes past the snapshot: another stack's only) */
	if (h.len > size - sizeof(h) || (h.len < SFD_OVERLAP && h.len) ||
	    h.other_len > size - sizeof(h) - h.len ||
	    (!h.len && !h.other_len))
		return 0;
	if (b->test_drop && ++b->test_n % b->test_drop == 0) {
		b->st.test_dropped++;
		return 0;
	}
	while (b->q_nr && b->q_bytes + h.len + h.other_len > HELD_MAX_BYTES) {
		held_drop(b, &b->q[b->q_head], true);
		held_trim(b);
	}
	if (b->q_head + b->q_nr >= b->q_cap) {
		size_t cap = b->q_cap ? b->q_cap * 2 : 256;
		struct held *q = realloc(b->q, cap * sizeof(*q));

		if (!q)
			return 0;
		b->q = q;
		b->q_cap = cap;
	}
	e = &b->q[b->q_head + b->q_nr];
	e->data = malloc(h.len + h.other_len);
	if (!e->data)
		return 0;
	memcpy(e->data, (const uint8_t *)data + sizeof(h),
	       h.len + h.other_len);
	e->h = h;
	e->dead = false;
	b->q_nr++;
	b->q_bytes += h.len + h.other_len;
	return 0;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

size_t sfp_bpf_deep__take(struct sfp_bpf_deep *b, uint32_t tid,
			  uint64_t time, uint64_t ip, uint64_t sp,
			  const uint8_t *snap, size_t snap_size,
			  const uint8_t **extra, struct sfp_bpf_deep_other *other)
{
	struct held *best = NULL;
	size_t i, n;

	free(b->taken);
	b->taken = NULL;
	*extra = NULL;
	memset(other, 0, sizeof(*other));
	ring_buffer__consume(b->ring);
	/* The sample's copy: the thread's one stamped nearest the sample
	 * (the program runs in the sample's interrupt, microseconds from
	 * perf's stamp, before or after it by the kernel's order); the
	 * thread's copies before it are of samples already past. */
	for (i = 0; i < b->q_nr; i++) {
		struct held *e = &b->q[b->q_head + i];

		if (e->dead || e->h.tid != tid)
			continue;
		if (e->h.time > time + PAIR_NS)
			break;
		if (best && dist(e->h.time, time) > dist(best->h.time, time))
			break;
		if (best)
			held_drop(b, best, true);
		best = e;
	}
	if (!best || dist(best->h.time, time) > PAIR_NS)
		goto none;
	/* ... and it is: the same registers, starting where the snapshot
	 * ends, with the snapshot's last bytes.  A snapshot perf cut short
	 * (the stack's mapping ended inside it) does not meet the copy, but
	 * another stack's bytes in it are still the sample's: the
	 * registers say so, and the copy then starts where the chain left. */
	if (best->h.ip != ip || best->h.sp != sp)
		goto refused;
	if (best->h.len && snap_size == b->snap_size) {
		if (best->h.start != sp + snap_size - SFD_OVERLAP ||
		    memcmp(best->data, snap + snap_size - SFD_OVERLAP,
			   SFD_OVERLAP))
			goto refused;
		n = best->h.len - SFD_OVERLAP;
	} else if (best->h.other_len && snap_size <= b->snap_size) {
		n = 0;
	} else {
		goto refused;
	}
	b->taken = best->data;
	best->data = NULL;
	b->q_bytes -= best->h.len + best->h.other_len;
	if (best->h.other_len) {
		other->bytes = b->taken + best->h.len;
		other->len = best->h.other_len;
		other->addr = best->h.other;
	}
	best->dead = true;
	held_trim(b);
	b->st.paired++;
	*extra = n ? b->taken + SFD_OVERLAP : b->taken;
	return n;
refused:
	b->st.seam_refused++;
	held_drop(b, best, false);
	held_trim(b);
none:
	held_trim(b);
	b->st.no_copy++;
	return 0;
}

/* --- threads' sizes ------------------------------------------------------- */

static struct thr *thr_get(struct sfp_bpf_deep *b, uint32_t tid, bool add)
{
	struct thr *t;
	bool added;

	if (!add)
		return sfp_idmap_find(&b->thr, tid);
	t = sfp_idmap_get(&b->thr, tid, &added);
	if (t && added)
		b->st.threads++;
	return t;
}

static uint32_t pages(uint64_t bytes)
{
	uint64_t max = SFD_MAX - SFD_OVERLAP;

	bytes = (bytes + SFD_PAGE - 1) & ~(uint64_t)(SFD_PAGE - 1);
	if (bytes > max)
		bytes = max & ~(uint64_t)(SFD_PAGE - 1);
	return bytes < SFD_PAGE ? SFD_PAGE : (uint32_t)bytes;
}

static void set_want(struct sfp_bpf_deep *b, struct thr *t,
		     const char *pcomm, uint32_t want, bool grown, bool force)
{
	struct sfd_want val, old;
	char comm[32];
	ssize_t n;

	if (want == t->want && !force)
		return;
	t->want = want;
	val.bytes = want;
	val.other = t->other ? t->other_want : 0;
	bpf_map_update_elem(bpf_map__fd(b->skel->maps.wants), &t->tid, &val,
			    BPF_ANY);
	if (!grown)
		return;
	/* the program's other processes: the thread's comm, as the kernel
	 * has it (threads may be named apart from their process), else,
	 * the thread gone by now, the process's name from the records */
	n = sfp_proc_read((int)t->tid, "comm", comm, sizeof(comm));
	if (n > 0)
		comm[strcspn(comm, "\n")] = 0;
	else if (pcomm)
		snprintf(comm, sizeof(comm), "%s", pcomm);
	else
		return;
	{
		char key[16] = { 0 };
		int fd = bpf_map__fd(b->skel->maps.comm_wants);

		memcpy(key, comm, strnlen(comm, sizeof(key) - 1));
		/* the larger of each */
		if (!bpf_map_lookup_elem(fd, key, &old)) {
			if (old.bytes > val.bytes)
				val.bytes = old.bytes;
			if (old.other > val.other)
				val.other = old.other;
			if (val.bytes == old.bytes && val.other == old.other)
				return;
		}
		bpf_map_update_elem(fd, key, &val, BPF_ANY);
	}
}

void sfp_bpf_deep__need(struct sfp_bpf_deep *b, uint32_t tid,
			const char *comm, size_t past, bool cut, size_t had,
			enum sfp_bpf_deep_switch sw)
{
	struct thr *t = thr_get(b, tid, cut || past || sw != SFP_DEEP_SW_NONE);
	uint64_t w;

	if (!t)
		return;
	if (sw == SFP_DEEP_SW_HELPED || sw == SFP_DEEP_SW_SHORT)
		t->other_fails = 0;
	if (sw == SFP_DEEP_SW_FAILED && t->other &&
	    ++t->other_fails >= OTHER_FAILS_MAX) {
		/* its frame pointer leads nowhere: stop following it */
		t->other = false;
		t->other_off = true;
		b->st.other_dropped++;
		set_want(b, t, comm, t->want, false, true);
		return;
	}
	if (sw != SFP_DEEP_SW_NONE && !t->other && !t->other_off) {
		/* a thread that changed stacks once will again: follow
		 * its chain from now on (the bytes past the snapshot are
		 * not needed for that: want may stay 0); one followed for
		 * its comm's sake so far gets its own entry */
		t->other = true;
		t->other_want = sw == SFP_DEEP_SW_SHORT ? 2 * SFD_OTHER_FIRST
							: SFD_OTHER_FIRST;
		b->st.other_threads++;
		set_want(b, t, comm, t->want, true, true);
		return;
	}
	if (sw == SFP_DEEP_SW_SHORT && t->other &&
	    t->other_want < SFD_OTHER_MAX) {
		/* the walk ran out of the other stack's copy */
		t->other_want *= 2;
		if (t->other_want > SFD_OTHER_MAX)
			t->other_want = SFD_OTHER_MAX;
		set_want(b, t, comm, t->want, true, true);
		return;
	}
	if (!t->shrink)
		t->shrink = (uint64_t)t->want * 256;
	if (cut) {
		w = had ? (uint64_t)had * 2 : SFD_FIRST;
		if (w < t->want)
			w = t->want;
		if (w < SFD_FIRST)
			w = SFD_FIRST;
		set_want(b, t, comm, pages(w), true, false);
		t->shrink = (uint64_t)t->want * 256;
		return;
	}
	w = past + past / 4;
	if (w > t->want) {
		set_want(b, t, comm, pages(w), true, false);
		t->shrink = (uint64_t)t->want * 256;
		return;
	}
	/* needed less: shrink slowly */
	t->shrink -= t->shrink / 256;
	if (t->shrink / 256 < w)
		t->shrink = w * 256;
	if (pages(t->shrink / 256) < t->want)
		set_want(b, t, comm, pages(t->shrink / 256), false, false);
}

void sfp_bpf_deep__task_exit(struct sfp_bpf_deep *b, uint32_t tid)
{
	struct thr *t = thr_get(b, tid, false);

	if (!t)
		return;
	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.wants), &tid);
	sfp_idmap_delete(&b->thr, t);
}

void sfp_bpf_deep__stats(const struct sfp_bpf_deep *b,
			 struct sfp_bpf_deep_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	uint64_t *v, sum[SFD_NR_COUNTERS] = { 0 };
	uint32_t i;

	*st = b->st;
	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	fd = bpf_map__fd(b->skel->maps.counters);
	for (i = 0; i < SFD_NR_COUNTERS; i++) {
		int c;

		if (bpf_map_lookup_elem(fd, &i, v))
			continue;
		for (c = 0; c < ncpu; c++)
			sum[i] += v[c];
	}
	free(v);
	st->copies = sum[SFD_CTR_COPIES];
	st->bytes = sum[SFD_CTR_BYTES];
	st->short_copies = sum[SFD_CTR_SHORT];
	st->unreadable = sum[SFD_CTR_UNREADABLE];
	st->ring_full = sum[SFD_CTR_RING_FULL];
	st->no_regs = sum[SFD_CTR_NO_REGS];
	st->other_copies = sum[SFD_CTR_OTHER];
	st->other_bytes = sum[SFD_CTR_OTHER_BYTES];
	/* the copies not paired, held ones (or still in the ring) at the
	 * end included, were no walk's */
	st->unused = st->copies > st->paired + st->test_dropped
			     ? st->copies - st->paired - st->test_dropped
			     : 0;
}

void sfp_bpf_deep__free(struct sfp_bpf_deep **bp)
{
	struct sfp_bpf_deep *b = *bp;
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nr_links; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	ring_buffer__free(b->ring);
	sfp_deepcopy_bpf__destroy(b->skel);
	for (i = 0; i < b->q_nr; i++)
		free(b->q[b->q_head + i].data);
	free(b->q);
	free(b->taken);
	sfp_idmap_free(&b->thr);
	free(b);
	*bp = NULL;
}
