// SPDX-License-Identifier: MIT
/*
 * `sfprof symbolize --listen ADDR:PORT`: the symbolizer as a service in
 * front of a backend.  The agent's listener takes the requests, the
 * service (src/symbolize/service.c) names them through the shared store
 * and hands them to the agent's sinks; this file starts and stops them
 * and handles the signals as the agent does: SIGINT/SIGTERM stop taking
 * requests and give the sinks --flush-timeout to deliver what is queued;
 * SIGHUP lets every symbol table go (debug files installed or fixed
 * since are read at the next request that needs them).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cli.h"
#include "symbolize-listen.h"
#include "symbolize/service.h"

static volatile sig_atomic_t stop_requested, hups;
static int wake_fd = -1;

static void wake(void)
{
	uint64_t one = 1;
	int e = errno;

	if (wake_fd >= 0)
		(void)!write(wake_fd, &one, sizeof(one));
	errno = e;
}

static void on_signal(int sig)
{
	if (stop_requested) {	/* a second one: at once */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stop_requested = 1;
	wake();
}

static void on_hup(int sig)
{
	(void)sig;
	hups++;
	wake();
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int start_sink(enum agent_sink_kind kind, const char *url,
		      const struct symz_listen_opts *lo, struct agent_sink **out)
{
	struct agent_sink_opts so = {
		.sz = sizeof(so), .kind = kind, .target = url,
		.queue_bytes = lo->queue_bytes, .auth_file = lo->auth_file,
		.tenant = lo->tenant,
	};
	int err = agent_sink__new(&so, out);

	if (err)
		cli_err("symbolize: cannot start the %s sink for %s: %s",
			kind == AGENT_SINK_OTLP ? "OTLP" : "Pyroscope", url,
			sfp_strerror(err));
	return err;
}

static void say_sink(struct agent_sink *s)
{
	struct agent_sink_stats st;

	if (!s)
		return;
	agent_sink__stats(s, &st);
	fprintf(stderr, "sfprof symbolize: sink %s: %llu delivered, %llu "
		"dropped (queue full), %llu failed, %llu retries, %llu not "
		"delivered by the deadline\n", agent_sink__name(s),
		(unsigned long long)st.delivered,
		(unsigned long long)st.dropped, (unsigned long long)st.failed,
		(unsigned long long)st.retries, (unsigned long long)st.unsent);
}

int symz_listen(const struct symz_listen_opts *lo)
{
	struct symz_store_opts sto = {
		.memory = lo->memory, .debug_dirs = lo->debug_dirs,
		.debuginfod = lo->debuginfod,
		.debuginfod_timeout_ms = lo->timeout_ms,
		.heap_now = cli_heap_meter(),
	};
	struct symz_service_opts svo = {
		.max_profile = lo->max_profile, .max_series = 256,
		.max_samples = 1024, .max_labels = 128,
		.timeout_ms = lo->timeout_ms,
	};
	struct agent_listen_limits lim = {
		.max_conn = lo->max_conn, .timeout_s = lo->listen_timeout_s,
		.max_pulls = 1,
	};
	struct agent_listen_service svc = {
		.max_body = lo->max_body, .stack_size = 2u << 20,
		.post = symz_service_post, .metrics = symz_service_metrics,
	};
	struct agent_shared sh = { .svc = &svc, .wake_fd = -1 };
	struct agent_listener *l = NULL;
	struct symz_store *store = NULL;
	struct symz_service *sv = NULL;
	struct symz_service_stats st;
	struct symz_store_stats ts;
	sig_atomic_t seen_hups = 0;
	int err, ret = EXIT_INVALID;

	cli_daemon_heap();
	pthread_mutex_init(&sh.lock, NULL);
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wake_fd < 0) {
		cli_err("symbolize: eventfd: %s", strerror(errno));
		return EXIT_INVALID;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	if ((err = symz_store_new(&sto, &store))) {
		cli_err("symbolize: %s", sfp_strerror(err));
		goto out;
	}
	if (!sto.heap_now && !lo->quiet)
		fprintf(stderr, "sfprof symbolize: this build cannot count the "
			"tables' heap (its libraries are linked shared): "
			"--memory counts their files' sizes only, about a "
			"quarter of what they hold\n");
	if (lo->pyroscope &&
	    start_sink(AGENT_SINK_PYROSCOPE, lo->pyroscope, lo, &svo.pyroscope))
		goto out;
	if (lo->otlp && start_sink(AGENT_SINK_OTLP, lo->otlp, lo, &svo.otlp))
		goto out;
	svo.store = store;
	if ((err = symz_service_new(&svo, &sv))) {
		cli_err("symbolize: %s", sfp_strerror(err));
		goto out;
	}
	svc.ctx = sv;
	if ((err = agent_listener__start(lo->listen, &lim, &sh, &l))) {
		cli_err("symbolize: --listen %s: %s", lo->listen,
			sfp_strerror(err));
		goto out;
	}
	if (!lo->quiet)
		fprintf(stderr, "sfprof symbolize: listening on %s (port %u)%s\n",
			lo->listen, agent_listener__port(l),
			lo->pyroscope ? "" : "; Pyroscope pushes go to --otlp "
			"as OTLP");
	while (!stop_requested) {
		struct pollfd p = { .fd = wake_fd, .events = POLLIN };
		uint64_t v;

		poll(&p, 1, -1);
		(void)!read(wake_fd, &v, sizeof(v));
		if (hups != seen_hups) {
			seen_hups = hups;
			symz_store_flush(store);
			if (!lo->quiet)
				fprintf(stderr, "sfprof symbolize: SIGHUP: "
					"every symbol table let go\n");
		}
	}
	ret = 0;
out:
	/* no request is taken any more; those under way finish first */
	agent_listener__stop(&l);
	{
		uint64_t dl = mono_ns() + (uint64_t)(lo->flush_s * 1e9);

		agent_sink__close(svo.pyroscope, dl);
		agent_sink__close(svo.otlp, dl);
	}
	if (sv && !lo->quiet) {
		symz_service_stats(sv, &st);
		symz_store_stats(store, &ts);
		fprintf(stderr, "sfprof symbolize: %llu Push and %llu OTLP "
			"requests named, %llu refused (4xx), %llu failed; "
			"%llu locations: %llu named, %llu already named, %llu "
			"not native, %llu unnamed, %llu in files not found\n",
			(unsigned long long)st.requests_ok[0],
			(unsigned long long)st.requests_ok[1],
			(unsigned long long)st.requests_refused,
			(unsigned long long)st.requests_failed,
			(unsigned long long)st.locations,
			(unsigned long long)st.named,
			(unsigned long long)st.already,
			(unsigned long long)st.not_native,
			(unsigned long long)st.unnamed,
			(unsigned long long)st.missing);
		fprintf(stderr, "sfprof symbolize: tables: %llu loads (%llu "
			"found nothing), %llu hits, %llu waits (%llu timed "
			"out), %llu evicted (%llu bytes), %llu kept (%llu "
			"bytes, %llu of them heap%s)\n",
			(unsigned long long)ts.loads,
			(unsigned long long)ts.load_failures,
			(unsigned long long)ts.hits,
			(unsigned long long)ts.waits,
			(unsigned long long)ts.wait_timeouts,
			(unsigned long long)ts.evictions,
			(unsigned long long)ts.evicted_bytes,
			(unsigned long long)ts.tables,
			(unsigned long long)ts.bytes,
			(unsigned long long)ts.heap_bytes,
			ts.heap_measured ? "" : ", not measured");
		say_sink(svo.pyroscope);
		say_sink(svo.otlp);
	}
	agent_sink__free(svo.pyroscope);
	agent_sink__free(svo.otlp);
	symz_service_free(sv);
	symz_store_free(store);
	pthread_mutex_destroy(&sh.lock);
	close(wake_fd);
	wake_fd = -1;
	return ret;
}
