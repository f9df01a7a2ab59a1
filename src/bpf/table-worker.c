// SPDX-License-Identifier: MIT
/*
 * bpf-defer's tables built off the reading thread (sfprof agent).
 *
 * Loading a module's table (its .sframe, or one built from .eh_frame on a
 * cache miss) takes from microseconds to seconds; done where the records
 * are read, a machine that starts many new programs makes the reader fall
 * behind the rings by as much.  With the worker on, the MMAP2 records and
 * the BPF side's misses only queue a request; this thread owns the tables
 * from then on and answers them in order.  Until a table is in the maps
 * the BPF side steps that module's frames by frame pointer and says so
 * (SFB_D_NO_TABLE, counted as no_table_unwinds).
 *
 * The queue is bounded: a burst of mappings beyond it is dropped and
 * counted; the BPF side's next miss of such a module asks again.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/bpf-int.h"

#define MAX_QUEUED 4096
/* Table rows that loads evicting others may bring in per second: a
 * compiler's 450,000 rows every 45 s at most.  Loading costs about
 * 200 ns a row (reading the cached table, converting it; measured on a
 * machine starting compilers, node and chromium), so this bounds the
 * reloads to about 0.2 % of a CPU. */
#define EVICT_ROWS_PER_S 10000

struct req {
	struct req *next;
	bool miss;		/* a BPF-side miss, else a new mapping */
	bool vmas;		/* else: re-read pid's VMAs (user-vmas.c) */
	bool gone;		/* with vmas: pid exited, drop them */
	pid_t pid;
	uint64_t dev, ino, vm_start;	/* a mapping's: 0 when unknown */
	char path[];		/* the mapping's path (not for a miss) */
};

struct sfb_worker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool stop;
	struct req *head, **tail;
	size_t nr;
	uint64_t dropped;
	struct sfb_tables_stats ts;	/* the tables' stats, as of the last
					   request (the thread owns them) */
};

static void answer(struct sfp_bpf_defer *b, const struct req *r)
{
	char alt[PATH_MAX + 32];

	if (r->vmas) {
		sfb_uvmas__answer(b, r->pid, r->gone);
		return;
	}
	if (r->miss) {
		sfb_tables__resolve_miss(b->tables, r->pid, r->dev, r->ino,
					 r->vm_start);
		return;
	}
	/* a mapping only: loaded when it fits, the BPF side's first miss
	 * of it evicts for it (a table per new mapping that evicts the
	 * tables in use would thrash); a module known by the record's
	 * dev and inode needs no look at its path */
	if ((r->dev || r->ino) &&
	    sfb_tables__prefetch_known(b->tables, r->dev, r->ino))
		return;
	if (sfb_tables__prefetch(b->tables,
				 sfb_tables__path_of(r->pid, r->path, alt,
						     sizeof(alt))) > 0)
		/* the VMAs the BPF side remembered may be stale now (the
		 * reader dropped them at the mapping; an unwind since may
		 * have cached them without the table) */
		bpf_map_delete_elem(b->vmas_fd, &r->pid);
}

static void *worker_main(void *arg)
{
	struct sfp_bpf_defer *b = arg;
	struct sfb_worker *w = b->tw;
	struct req *r;

	pthread_setname_np(pthread_self(), "sfp-bpf-tables");
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		r = w->head;
		w->head = r->next;
		if (!w->head)
			w->tail = &w->head;
		w->nr--;
		pthread_mutex_unlock(&w->lock);
		answer(b, r);
		free(r);
		pthread_mutex_lock(&w->lock);
		sfb_tables__stats(b->tables, &w->ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int sfp_bpf_defer__async_tables(struct sfp_bpf_defer *b)
{
	struct sfb_worker *w;
	int err;

	if (b->tw)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->tail = &w->head;
	/* an always-on agent on a machine whose tables do not fit the
	 * arrays: reloads bounded to this many rows a second */
	sfb_tables__evict_budget(b->tables, EVICT_ROWS_PER_S);
	sfb_tables__stats(b->tables, &w->ts);
	b->tw = w;
	err = pthread_create(&w->thread, NULL, worker_main, b);
	if (err) {
		b->tw = NULL;
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -err;
	}
	return 0;
}

static void enqueue(struct sfb_worker *w, struct req *r)
{
	pthread_mutex_lock(&w->lock);
	if (w->nr >= MAX_QUEUED) {
		w->dropped++;
		pthread_mutex_unlock(&w->lock);
		free(r);
		return;
	}
	*w->tail = r;
	w->tail = &r->next;
	w->nr++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void sfb_worker__mapping(struct sfp_bpf_defer *b, pid_t pid, uint64_t dev,
			 uint64_t ino, const char *path)
{
	size_t len = strlen(path) + 1;
	struct req *r = malloc(sizeof(*r) + len);

	if (!r) {
		__atomic_fetch_add(&b->tw->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->dev = dev;
	r->ino = ino;
	memcpy(r->path, path, len);
	enqueue(b->tw, r);
}

void sfb_worker__miss(struct sfp_bpf_defer *b, pid_t pid, uint64_t dev,
		      uint64_t ino, uint64_t vm_start)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r) {
		__atomic_fetch_add(&b->tw->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	r->miss = true;
	r->pid = pid;
	r->dev = dev;
	r->ino = ino;
	r->vm_start = vm_start;
	enqueue(b->tw, r);
}

void sfb_worker__vmas(struct sfp_bpf_defer *b, pid_t pid, bool gone)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r) {
		__atomic_fetch_add(&b->tw->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	r->vmas = true;
	r->gone = gone;
	r->pid = pid;
	enqueue(b->tw, r);
}

void sfb_worker__stats(const struct sfp_bpf_defer *b,
		       struct sfb_tables_stats *ts, uint64_t *pending,
		       uint64_t *dropped)
{
	struct sfb_worker *w = b->tw;

	pthread_mutex_lock(&w->lock);
	*ts = w->ts;
	*pending = w->nr;
	*dropped = w->dropped;
	pthread_mutex_unlock(&w->lock);
}

void sfb_worker__stop(struct sfp_bpf_defer *b)
{
	struct sfb_worker *w = b->tw;
	struct req *r;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	while ((r = w->head)) {
		w->head = r->next;
		free(r);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	b->tw = NULL;
}
