// SPDX-License-Identifier: MIT
/*
 * The reader thread, the reading and the end of a recording (recorder.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "record/recorder.h"

struct sfp_recorder {
	struct sfp_record *r;
	struct sfp_rec_pipe *p;
	struct sfp_recorder_source src;
	bool has_src;
	int poll_ms;
	double stop_after_s;
	const char *thread_name;
	pthread_t thread;
	bool running;
	volatile int stop;
	volatile int err;		/* the reader's error */
	volatile int timed_out;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int sfp_recorder__new(struct sfp_record *r, struct sfp_rec_pipe *p,
		      const struct sfp_recorder_opts *o,
		      struct sfp_recorder **out)
{
	const struct sfp_recorder_source *src;
	struct sfp_recorder *rc;

	*out = NULL;
	if (!r || !p || !SFP_OPTS_VALID(o, sfp_recorder_opts))
		return -EINVAL;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	rc->r = r;
	rc->p = p;
	rc->poll_ms = SFP_OPTS_GET(o, sfp_recorder_opts, poll_ms, 0);
	if (rc->poll_ms <= 0)
		rc->poll_ms = 50;
	rc->stop_after_s = SFP_OPTS_GET(o, sfp_recorder_opts, stop_after_s, 0);
	rc->thread_name = SFP_OPTS_GET(o, sfp_recorder_opts, thread_name, NULL);
	src = SFP_OPTS_GET(o, sfp_recorder_opts, source, NULL);
	if (src) {
		rc->src = *src;
		rc->has_src = true;
	}
	*out = rc;
	return 0;
}

static void *reader_main(void *arg)
{
	struct sfp_recorder *rc = arg;
	int err;

	if (rc->thread_name)
		pthread_setname_np(pthread_self(), rc->thread_name);
	while (!rc->stop) {
		/* the events stop on time even when the unwinding lags */
		if (rc->stop_after_s > 0 && !rc->timed_out &&
		    now_s() - rc->t0 >= rc->stop_after_s) {
			sfp_record__stop(rc->r);
			rc->timed_out = 1;
		}
		sfp_record__poll(rc->r, rc->poll_ms);
		err = sfp_record__drain(rc->r);
		if (err < 0) {
			rc->err = err;
			break;
		}
	}
	return NULL;
}

bool sfp_recorder__start_reader(struct sfp_recorder *rc)
{
	if (rc->running)
		return true;
	rc->t0 = now_s();
	rc->stop = 0;
	rc->running = !pthread_create(&rc->thread, NULL, reader_main, rc);
	return rc->running;
}

bool sfp_recorder__reader_running(const struct sfp_recorder *rc)
{
	return rc->running;
}

bool sfp_recorder__timed_out(const struct sfp_recorder *rc)
{
	return rc->timed_out;
}

/* The session's queue, through the source where there is one. */
static int read_session(struct sfp_recorder *rc, bool final)
{
	return rc->has_src ? sfp_record__read(rc->r, final, rc->src.record,
					      rc->src.ctx)
			   : sfp_record__read(rc->r, final,
					      sfp_rec_pipe__record, rc->p);
}

int sfp_recorder__read(struct sfp_recorder *rc, bool final)
{
	int nb = 0, n;

	if (rc->err)
		return rc->err;
	if (rc->has_src && rc->src.poll && (nb = rc->src.poll(rc->src.ctx)) < 0)
		return nb;
	n = read_session(rc, final);
	return n < 0 ? n : n + nb;
}

/* The reader thread ended, woken if it waits on the rings. */
static void reader_join(struct sfp_recorder *rc)
{
	if (!rc->running)
		return;
	rc->stop = 1;
	sfp_record__wake(rc->r);
	pthread_join(rc->thread, NULL);
	rc->running = false;
}

void sfp_recorder__stop(struct sfp_recorder *rc)
{
	reader_join(rc);
	sfp_record__stop(rc->r);
}

int sfp_recorder__drain(struct sfp_recorder *rc)
{
	int err = 0;

	if (rc->has_src && rc->src.poll)
		err = rc->src.poll(rc->src.ctx);
	if (err >= 0 && rc->has_src && rc->src.flush)
		err = rc->src.flush(rc->src.ctx);
	if (err >= 0)
		err = read_session(rc, true);
	if (err >= 0 && rc->has_src && rc->src.finish)
		rc->src.finish(rc->src.ctx);
	return err < 0 ? err : 0;
}

void sfp_recorder__free(struct sfp_recorder **rcp)
{
	struct sfp_recorder *rc = *rcp;

	if (!rc)
		return;
	reader_join(rc);
	free(rc);
	*rcp = NULL;
}
