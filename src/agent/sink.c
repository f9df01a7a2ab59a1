/* SPDX-License-Identifier: MIT */
/*
 * The sink: a bounded byte queue of windows and the thread that delivers
 * them through a backend (files, Pyroscope, OTLP), with retries.
 *
 * Accounting that a test can count exactly: a window is charged to the
 * queue from submit until it is delivered, given up on or dropped, the
 * window being sent included.  So with a backend that takes nothing, the
 * queue holds the same windows whether or not the thread has picked one
 * up yet, and the drops are exactly what did not fit.  The window being
 * sent is never dropped (its request is under way); the oldest waiting
 * one is.  A window larger than the whole budget is dropped at once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/sink-int.h"

#define DEFAULT_QUEUE_BYTES (16u << 20)
#define DEFAULT_TIMEOUT_MS 10000u
/* Backoff: 250 ms doubling to 30 s, each wait drawn in [b/2, b). */
#define BACKOFF_FIRST_MS 250u
#define BACKOFF_MAX_MS 30000u
#define LOG_EVERY_NS (60ull * 1000000000ull)

struct agent_sink {
	const struct sink_backend *be;
	void *priv;
	char *target;
	char *name;
	size_t budget;
	unsigned int timeout_ms;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_started;
	struct sink_item *head, *tail;
	struct sink_item *busy;	/* being delivered; never dropped */
	size_t queued_bytes;
	uint64_t next_seq;
	bool closing;
	_Atomic uint64_t deadline_ns;	/* UINT64_MAX until close() */

	struct agent_sink_stats st;
	uint64_t last_drop_log_ns;
	uint64_t drops_since_log;
	uint64_t last_bad_log_ns;
	uint64_t bad_since_log;
	uint64_t rand_state;
};

uint64_t sink_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool sink_past_deadline(struct agent_sink *s)
{
	return sink_now_ns() >= atomic_load(&s->deadline_ns);
}

long sink_request_budget_ms(struct agent_sink *s)
{
	uint64_t dl = atomic_load(&s->deadline_ns), now = sink_now_ns();
	uint64_t ms = s->timeout_ms;

	if (dl != UINT64_MAX) {
		uint64_t left = dl > now ? (dl - now) / 1000000 : 0;
		if (left < ms)
			ms = left;
	}
	return ms ? (long)ms : 1;
}

const char *sink_target(const struct agent_sink *s)
{
	return s->target;
}

const char *sink_item_label(const struct sink_item *it, const char *key)
{
	for (size_t i = 0; i < it->nr_labels; i++)
		if (!strcmp(it->keys[i], key))
			return it->values[i];
	return NULL;
}

static void item_free(struct sink_item *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->nr_labels; i++) {
		free(it->keys[i]);
		free(it->values[i]);
	}
	free(it->keys);
	free(it->values);
	free(it->pprof);
	free(it->name);
	free(it);
}

static struct sink_item *item_copy(const struct agent_window *w)
{
	struct sink_item *it = calloc(1, sizeof(*it));
	size_t cost = AGENT_SINK_WINDOW_OVERHEAD + w->pprof_len;

	if (!it)
		return NULL;
	it->keys = calloc(w->nr_labels ? w->nr_labels : 1, sizeof(char *));
	it->values = calloc(w->nr_labels ? w->nr_labels : 1, sizeof(char *));
	it->pprof = malloc(w->pprof_len ? w->pprof_len : 1);
	if (!it->keys || !it->values || !it->pprof)
		goto fail;
	for (size_t i = 0; i < w->nr_labels; i++) {
		it->keys[i] = strdup(w->labels[i].key ? w->labels[i].key : "");
		it->values[i] = strdup(w->labels[i].value ?
				       w->labels[i].value : "");
		it->nr_labels = i + 1;
		if (!it->keys[i] || !it->values[i])
			goto fail;
		cost += strlen(it->keys[i]) + strlen(it->values[i]);
	}
	if (w->pprof_len)
		memcpy(it->pprof, w->pprof, w->pprof_len);
	it->pprof_len = w->pprof_len;
	it->start_ns = w->start_ns;
	it->end_ns = w->end_ns;
	if (w->name && !(it->name = strdup(w->name)))
		goto fail;
	it->otlp = w->otlp;
	it->cost = cost;
	return it;
fail:
	item_free(it);
	return NULL;
}

/* Unlink IT (not necessarily the head) from the queue; lock held. */
static void unlink_item(struct agent_sink *s, struct sink_item *it)
{
	struct sink_item **pp = &s->head, *prev = NULL;

	while (*pp && *pp != it) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = it->next;
	if (s->tail == it)
		s->tail = prev;
	s->queued_bytes -= it->cost;
	it->next = NULL;
}

/* One more window dropped; say so at most once a minute.  Lock held. */
static void count_drop(struct agent_sink *s)
{
	uint64_t now = sink_now_ns();

	s->st.dropped++;
	s->drops_since_log++;
	if (!s->last_drop_log_ns || now - s->last_drop_log_ns >= LOG_EVERY_NS) {
		pr_warn("sink %s: queue full (%zu bytes): dropped %llu window(s), the oldest first (%llu in all)",
			s->name, s->budget,
			(unsigned long long)s->drops_since_log,
			(unsigned long long)s->st.dropped);
		s->last_drop_log_ns = now;
		s->drops_since_log = 0;
	}
}

/* A window that is no pprof: counted failed, said at most once a minute.
 * Lock held. */
static void count_bad(struct agent_sink *s, uint64_t seq, const char *why)
{
	uint64_t now = sink_now_ns();

	s->st.failed++;
	s->bad_since_log++;
	if (!s->last_bad_log_ns || now - s->last_bad_log_ns >= LOG_EVERY_NS) {
		pr_warn("sink %s: window %llu is not a pprof Profile (%s); not "
			"sent (%llu such since the last message, %llu windows "
			"failed in all)", s->name, (unsigned long long)seq, why,
			(unsigned long long)s->bad_since_log,
			(unsigned long long)s->st.failed);
		s->last_bad_log_ns = now;
		s->bad_since_log = 0;
	}
}

bool agent_sink__wants_otlp(const struct agent_sink *s)
{
	return s->be == &sink_otlp_backend;
}

int agent_sink__submit(struct agent_sink *s, const struct agent_window *w)
{
	struct sink_item *it;
	char why[256];
	int err;

	/* what is sent must be a profile: a backend that stores the bytes
	 * as they come (Pyroscope's rawProfile, the files) would take
	 * anything, and count it delivered */
	if (w->otlp && s->be != &sink_otlp_backend)
		return -EPROTOTYPE;
	err = w->otlp ? 0 : agent_pprof_check(w->pprof, w->pprof_len, why,
					      sizeof(why));
	if (err) {
		pthread_mutex_lock(&s->lock);
		count_bad(s, s->next_seq++, why);
		pthread_mutex_unlock(&s->lock);
		return err == -ENOMEM ? err : -EBADMSG;
	}
	it = item_copy(w);
	if (!it)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	it->seq = s->next_seq++;
	if (it->cost > s->budget) {
		count_drop(s);
		pthread_mutex_unlock(&s->lock);
		item_free(it);
		return 0;
	}
	while (s->queued_bytes + it->cost > s->budget) {
		struct sink_item *victim = s->head;

		if (victim && victim == s->busy)
			victim = victim->next;
		if (!victim)
			break;
		unlink_item(s, victim);
		count_drop(s);
		item_free(victim);
	}
	if (s->queued_bytes + it->cost > s->budget) {
		/* Only the window in flight is left, and both don't fit. */
		count_drop(s);
		pthread_mutex_unlock(&s->lock);
		item_free(it);
		return 0;
	}
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	s->queued_bytes += it->cost;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static uint64_t next_rand(struct agent_sink *s)
{
	/* xorshift64*: jitter only, not security. */
	uint64_t x = s->rand_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rand_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/*
 * Wait until ABS_NS (CLOCK_MONOTONIC, the condvar's clock) or close()'s
 * deadline, whichever comes first; close() may bring the deadline
 * forward while we wait.  Lock held.
 */
static void wait_until(struct agent_sink *s, uint64_t abs_ns)
{
	for (;;) {
		uint64_t dl = atomic_load(&s->deadline_ns);
		uint64_t end = dl < abs_ns ? dl : abs_ns;
		struct timespec ts;

		if (sink_now_ns() >= end)
			return;
		ts.tv_sec = (time_t)(end / 1000000000ull);
		ts.tv_nsec = (long)(end % 1000000000ull);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
}

static void *delivery_thread(void *arg)
{
	struct agent_sink *s = arg;
	unsigned int backoff_ms = BACKOFF_FIRST_MS;
	char tname[16];

	/* "sfp-sink-files" etc.: its CPU shows apart per thread */
	snprintf(tname, sizeof(tname), "sfp-sink-%s", s->be->name);
	pthread_setname_np(pthread_self(), tname);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->closing)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head || sink_past_deadline(s))
			break;
		struct sink_item *it = s->head;
		s->busy = it;
		pthread_mutex_unlock(&s->lock);

		enum sink_result r = s->be->deliver(s, s->priv, it);

		pthread_mutex_lock(&s->lock);
		s->busy = NULL;
		if (r == SINK_RETRY) {
			uint64_t wait = backoff_ms / 2 +
					next_rand(s) % (backoff_ms / 2 + 1);
			uint64_t at = sink_now_ns() + wait * 1000000ull;

			/*
			 * No retry starts after close()'s deadline, so none
			 * is counted: a request whose time limit was cut to
			 * what was left (sink_request_budget_ms) may time out
			 * a few ms before the deadline, on curl's clock.
			 */
			if (at >= atomic_load(&s->deadline_ns))
				break;
			s->st.retries++;
			wait_until(s, at);
			backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ?
				     BACKOFF_MAX_MS : backoff_ms * 2;
			continue;
		}
		backoff_ms = BACKOFF_FIRST_MS;
		if (r == SINK_DELIVERED)
			s->st.delivered++;
		else
			s->st.failed++;
		unlink_item(s, it);
		item_free(it);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The backend of each kind, as sinks.def lists them. */
static const struct sink_backend *const backends[AGENT_SINK_NR] = {
#define AGENT_SINK(kind, opt, arg, backend, help)			\
	[AGENT_SINK_##kind] = &backend,
#include "agent/sinks.def"
#undef AGENT_SINK
};

int agent_sink__new(const struct agent_sink_opts *opts,
		    struct agent_sink **out)
{
	struct agent_sink *s;
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (!opts || opts->sz < offsetof(struct agent_sink_opts, timeout_ms) +
			       sizeof(opts->timeout_ms) || !opts->target ||
	    !*opts->target)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if ((unsigned int)opts->kind >= AGENT_SINK_NR) {
		free(s);
		return -EINVAL;
	}
	s->be = backends[opts->kind];
	s->target = strdup(opts->target);
	if (!s->target || asprintf(&s->name, "%s %s", s->be->name,
				   opts->target) < 0) {
		s->name = NULL;
		err = -ENOMEM;
		goto fail;
	}
	s->budget = opts->queue_bytes ? opts->queue_bytes : DEFAULT_QUEUE_BYTES;
	s->timeout_ms = opts->timeout_ms ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	s->deadline_ns = UINT64_MAX;
	s->rand_state = sink_now_ns() ^ ((uint64_t)getpid() << 32) ^
			(uintptr_t)s;
	if (!s->rand_state)
		s->rand_state = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);

	err = s->be->init(s, opts, &s->priv);
	if (err)
		goto fail_sync;
	err = -pthread_create(&s->thread, NULL, delivery_thread, s);
	if (err) {
		s->be->fini(s->priv);
		goto fail_sync;
	}
	s->thread_started = true;
	*out = s;
	return 0;
fail_sync:
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
fail:
	free(s->name);
	free(s->target);
	free(s);
	return err;
}

void agent_sink__close(struct agent_sink *s, uint64_t deadline_ns)
{
	if (!s || !s->thread_started)
		return;
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	atomic_store(&s->deadline_ns, deadline_ns);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
	pthread_mutex_lock(&s->lock);
	s->st.unsent = 0;
	for (struct sink_item *it = s->head; it; it = it->next)
		s->st.unsent++;
	if (s->st.unsent)
		pr_warn("sink %s: %llu window(s) not delivered by the deadline",
			s->name, (unsigned long long)s->st.unsent);
	pthread_mutex_unlock(&s->lock);
}

void agent_sink__stats(const struct agent_sink *s, struct agent_sink_stats *st)
{
	struct agent_sink *m = (struct agent_sink *)s;

	pthread_mutex_lock(&m->lock);
	*st = s->st;
	st->queue_bytes = s->queued_bytes;
	pthread_mutex_unlock(&m->lock);
}

const char *agent_sink__name(const struct agent_sink *s)
{
	return s->name;
}

void agent_sink__free(struct agent_sink *s)
{
	if (!s)
		return;
	/* Freed without close(): stop now, deliver nothing more. */
	agent_sink__close(s, 0);
	s->be->fini(s->priv);
	while (s->head) {
		struct sink_item *it = s->head;
		s->head = it->next;
		item_free(it);
	}
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->name);
	free(s->target);
	free(s);
}
