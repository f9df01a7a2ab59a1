// SPDX-License-Identifier: MIT
/*
 * The service's tables (sfprof symbolize --listen): one per build-id,
 * shared by every request.
 *
 * - An entry is a build-id and a symbolizer of its own that holds that
 *   one file.  A symbolizer is not thread-safe, but two entries share
 *   nothing: requests naming frames of different files never wait for
 *   each other, and lookups in one entry take its own lock.
 * - Single flight: the first request that needs a build-id the store has
 *   not got makes the entry (LOADING) and looks for the files -- debug
 *   directories, the build-id cache, debuginfod -- outside the store's
 *   lock; every other request for it waits on the store's condition
 *   variable, each until its own deadline at most (then its frames of
 *   that file stay unnamed and the wait is counted), so a debuginfod
 *   that is slow costs the others no more than their own time-out, and
 *   requests for other build-ids not even that.
 * - A build-id nothing was found for is remembered for retry_ms, so that
 *   a flood of requests is not a flood of debuginfod lookups; then it is
 *   looked for again (the server may have learnt it).
 * - The budget: an entry costs the sizes of the files its table maps
 *   (the file at its path or the debug file that stood in, and the
 *   separate debug file) plus the heap it holds.  The heap is measured
 *   where the caller gives a meter (o.heap_now: this thread's net
 *   allocations, the CLI's counting wrappers): what the load added, and
 *   then what each lookup adds -- a table grows as lookups reach new
 *   compile units, libdw reading their line tables -- each taken on the
 *   thread that does it while no other table's work runs there (a load
 *   runs alone on its thread; a lookup holds the entry's lock).  Where
 *   no meter is given the files' sizes are all, which is low: a table's
 *   symbol index, line tables and libdw's state take about four times
 *   its files' size.  Past the budget the least recently used entries
 *   nobody is using are let go; an entry in use stays until its last
 *   request is done (so the budget can be exceeded by the tables of the
 *   requests under way, never for longer).
 * - A build-id is the only key: a path that changes meaning cannot
 *   give another file's names.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "symbolize/symbolize.h"

#define DEFAULT_MEMORY (512ull << 20)
#define DEFAULT_RETRY_MS 60000u
#define NR_BUCKETS 1024u

enum entry_state { ENT_LOADING, ENT_READY, ENT_FAILED };

struct symz_entry {
	struct symz_store *store;
	struct symz_entry *hnext;		/* its bucket */
	struct symz_entry *lprev, *lnext;	/* LRU, READY only */
	uint8_t id[SYMZ_BUILD_ID_MAX];
	size_t id_len;
	enum entry_state state;
	unsigned int refs;
	bool gone;		/* out of the table: freed at the last put */
	int err;		/* FAILED */
	uint64_t failed_at;	/* CLOCK_MONOTONIC ns */
	struct sfp_symbolizer *sym;
	struct sfp_symbolizer_dso *dso;
	enum symz_source src;
	uint64_t bytes;		/* files + heap: what the budget counts */
	uint64_t files;		/* the sizes of the files it maps */
	uint64_t heap;		/* the heap it was measured to hold */
	int64_t mark;		/* the meter when the lookup began (lock) */
	pthread_mutex_t lock;	/* lookups in sym */
};

struct symz_store {
	struct symz_store_opts o;
	const char **dirs;	/* a copy of o.debug_dirs */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* an entry left LOADING */
	struct symz_entry *buckets[NR_BUCKETS];
	struct symz_entry *lru_head, *lru_tail;	/* most recent first */
	struct symz_store_stats st;
};

static unsigned int bucket_of(const uint8_t *id, size_t len)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return (unsigned int)(h % NR_BUCKETS);
}

int symz_store_new(const struct symz_store_opts *o, struct symz_store **out)
{
	struct symz_store *st = calloc(1, sizeof(*st));
	pthread_condattr_t ca;
	size_t n = 0, i;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->o = *o;
	if (!st->o.memory)
		st->o.memory = DEFAULT_MEMORY;
	if (!st->o.retry_ms)
		st->o.retry_ms = DEFAULT_RETRY_MS;
	st->st.heap_measured = st->o.heap_now != NULL;
	while (o->debug_dirs && o->debug_dirs[n])
		n++;
	st->dirs = calloc(n + 1, sizeof(*st->dirs));
	if (!st->dirs) {
		free(st);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		st->dirs[i] = o->debug_dirs[i];
	st->o.debug_dirs = st->dirs;
	pthread_mutex_init(&st->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = st;
	return 0;
}

static void entry_free(struct symz_entry *e)
{
	sfp_symbolizer__free(&e->sym);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static void lru_unlink(struct symz_store *st, struct symz_entry *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else if (st->lru_head == e)
		st->lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else if (st->lru_tail == e)
		st->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_front(struct symz_store *st, struct symz_entry *e)
{
	lru_unlink(st, e);
	e->lnext = st->lru_head;
	if (st->lru_head)
		st->lru_head->lprev = e;
	st->lru_head = e;
	if (!st->lru_tail)
		st->lru_tail = e;
}

/* E's cost out of the store's (lock held) */
static void uncharge(struct symz_store *st, struct symz_entry *e)
{
	st->st.bytes -= e->bytes;
	st->st.heap_bytes -= e->heap;
}

/* Take E out of the table (lock held); freed now if nobody uses it. */
static void entry_remove(struct symz_store *st, struct symz_entry *e)
{
	struct symz_entry **pp = &st->buckets[bucket_of(e->id, e->id_len)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
	if (e->state == ENT_READY) {
		lru_unlink(st, e);
		st->st.tables--;
	}
	e->gone = true;
	if (!e->refs) {
		uncharge(st, e);
		entry_free(e);
	}
}

/* The least recently used unused tables go until the budget holds. */
static void evict(struct symz_store *st)
{
	struct symz_entry *e = st->lru_tail, *prev;

	while (e && st->st.bytes > st->o.memory) {
		prev = e->lprev;
		if (!e->refs) {
			st->st.evictions++;
			st->st.evicted_bytes += e->bytes;
			entry_remove(st, e);
		}
		e = prev;
	}
}

void symz_store_free(struct symz_store *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < NR_BUCKETS; i++)
		while (st->buckets[i]) {
			struct symz_entry *e = st->buckets[i];

			st->buckets[i] = e->hnext;
			entry_free(e);
		}
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
	free(st->dirs);
	free(st);
}

void symz_store_stats(struct symz_store *st, struct symz_store_stats *out)
{
	pthread_mutex_lock(&st->lock);
	*out = st->st;
	pthread_mutex_unlock(&st->lock);
}

void symz_store_flush(struct symz_store *st)
{
	size_t i;

	pthread_mutex_lock(&st->lock);
	for (i = 0; i < NR_BUCKETS; i++) {
		struct symz_entry *e = st->buckets[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			/* a load under way finishes for its waiters */
			if (e->state != ENT_LOADING)
				entry_remove(st, e);
		}
	}
	st->st.flushes++;
	pthread_mutex_unlock(&st->lock);
}

static uint64_t file_bytes(const char *path)
{
	struct stat sb;

	return path && !stat(path, &sb) ? (uint64_t)sb.st_size : 0;
}

/* The lookup itself, the store's lock not held. */
static void load(struct symz_store *st, struct symz_entry *e,
		 const char *path)
{
	SFP_OPTS(sfp_symbolizer_opts, so, .debug_dirs = st->o.debug_dirs,
		 .srclines = true, .debuginfod = st->o.debuginfod,
		 .debuginfod_timeout_ms = st->o.debuginfod_timeout_ms,
		 .flags = SFP_SYMBOLIZER_DEBUG_AS_CODE);
	int64_t mark = st->o.heap_now ? st->o.heap_now() : 0;
	const char *p, *d;
	int err;

	err = sfp_symbolizer__new(&so, &e->sym);
	if (!err)
		/* pid -1: no process of this host mapped it */
		err = sfp_symbolizer__get_dso(e->sym, -1, path, e->id,
					      e->id_len, &e->dso);
	if (err) {
		sfp_symbolizer__free(&e->sym);
		e->dso = NULL;
		e->err = err;
		return;
	}
	e->src = symz_classify(e->dso, path);
	p = sfp_symbolizer_dso__path(e->dso);
	d = sfp_symbolizer_dso__debug_path(e->dso);
	e->files = file_bytes(p) + (d && (!p || strcmp(p, d)) ?
				    file_bytes(d) : 0);
	if (st->o.heap_now) {
		int64_t grew = st->o.heap_now() - mark;

		e->heap = grew > 0 ? (uint64_t)grew : 0;
	}
	e->bytes = e->files + e->heap;
}

int symz_store_get(struct symz_store *st, const char *path, const uint8_t *id,
		   size_t len, uint64_t deadline_ns, struct symz_map *out)
{
	unsigned int b = bucket_of(id, len);
	struct symz_entry *e;
	int err;

	if (!len || len > SYMZ_BUILD_ID_MAX)
		return -ENODATA;
	pthread_mutex_lock(&st->lock);
	for (e = st->buckets[b]; e; e = e->hnext)
		if (e->id_len == len && !memcmp(e->id, id, len))
			break;
	if (e && e->state == ENT_FAILED &&
	    sfp_mono_ns() - e->failed_at >= (uint64_t)st->o.retry_ms * 1000000ull) {
		entry_remove(st, e);	/* look again */
		e = NULL;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			pthread_mutex_unlock(&st->lock);
			return -ENOMEM;
		}
		e->store = st;
		memcpy(e->id, id, len);
		e->id_len = len;
		e->state = ENT_LOADING;
		e->refs = 1;
		pthread_mutex_init(&e->lock, NULL);
		e->hnext = st->buckets[b];
		st->buckets[b] = e;
		st->st.loads++;
		pthread_mutex_unlock(&st->lock);

		load(st, e, path);

		pthread_mutex_lock(&st->lock);
		if (e->dso) {
			e->state = ENT_READY;
			st->st.tables++;
			st->st.bytes += e->bytes;
			st->st.heap_bytes += e->heap;
			lru_front(st, e);
		} else {
			e->state = ENT_FAILED;
			e->failed_at = sfp_mono_ns();
			st->st.load_failures++;
		}
		pthread_cond_broadcast(&st->cond);
		/* not this one: its request is using it */
		evict(st);
	} else {
		e->refs++;
		if (e->state == ENT_LOADING) {
			struct timespec ts = {
				.tv_sec = (time_t)(deadline_ns / 1000000000ull),
				.tv_nsec = (long)(deadline_ns % 1000000000ull),
			};

			st->st.waits++;
			while (e->state == ENT_LOADING &&
			       pthread_cond_timedwait(&st->cond, &st->lock,
						      &ts) != ETIMEDOUT)
				;
			if (e->state == ENT_LOADING) {
				st->st.wait_timeouts++;
				e->refs--;
				pthread_mutex_unlock(&st->lock);
				return -ETIMEDOUT;
			}
		}
		if (e->state == ENT_READY) {
			st->st.hits++;
			if (!e->gone)
				lru_front(st, e);
		}
	}
	if (e->state != ENT_READY) {
		err = e->err ? e->err : -ENOENT;
		if (!--e->refs && e->gone) {
			uncharge(st, e);
			entry_free(e);
		}
		pthread_mutex_unlock(&st->lock);
		return err;
	}
	pthread_mutex_unlock(&st->lock);
	out->dso = e->dso;
	out->src = e->src;
	out->ent = e;
	out->err = 0;
	return 0;
}

void symz_store_put(struct symz_entry *e)
{
	struct symz_store *st = e->store;

	pthread_mutex_lock(&st->lock);
	if (!--e->refs) {
		if (e->gone) {
			uncharge(st, e);
			entry_free(e);
		} else {
			evict(st);
		}
	}
	pthread_mutex_unlock(&st->lock);
}

void symz_entry_lock(struct symz_entry *e)
{
	pthread_mutex_lock(&e->lock);
	if (e->store->o.heap_now)
		e->mark = e->store->o.heap_now();
}

/* What the lookup made the table grow (or shrink) by is charged to it. */
void symz_entry_unlock(struct symz_entry *e)
{
	struct symz_store *st = e->store;
	int64_t d = st->o.heap_now ? st->o.heap_now() - e->mark : 0;

	if (d) {
		uint64_t heap = d > 0 || (uint64_t)-d < e->heap ?
				e->heap + (uint64_t)d : 0;

		pthread_mutex_lock(&st->lock);
		st->st.heap_bytes += heap - e->heap;
		st->st.bytes += heap - e->heap;
		e->heap = heap;
		e->bytes = e->files + heap;
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&e->lock);
}
