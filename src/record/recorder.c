// SPDX-License-Identifier: MIT
/*
 * A recording's opening, start, reader thread, reading and end
 * (recorder.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "record/recorder.h"

struct sfp_recorder {
	struct sfp_record *r;
	struct sfp_rec_pipe *p;
	struct sfp_recorder_source src;
	bool has_src;
	bool owns;			/* r and p are ours (__open()) */
	struct sfp_recorder_sums sums;
	bool has_sums;			/* loaded */
	/* the processes to synthesize at start: pids, or every one */
	pid_t *pids;
	size_t nr_pids;
	bool system_wide;
	void *ctx;
	int (*failed)(void *ctx, enum sfp_recorder_step step, int err);
	void (*started)(void *ctx, struct sfp_recorder *rc);
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

/* What every recorder takes from o. */
static struct sfp_recorder *recorder_alloc(const struct sfp_recorder_opts *o)
{
	const struct sfp_recorder_source *src;
	struct sfp_recorder *rc;

	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
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
	return rc;
}

int sfp_recorder__new(struct sfp_record *r, struct sfp_rec_pipe *p,
		      const struct sfp_recorder_opts *o,
		      struct sfp_recorder **out)
{
	struct sfp_recorder *rc;

	*out = NULL;
	if (!r || !p || !SFP_OPTS_VALID(o, sfp_recorder_opts))
		return -EINVAL;
	rc = recorder_alloc(o);
	if (!rc)
		return -ENOMEM;
	rc->r = r;
	rc->p = p;
	*out = rc;
	return 0;
}

static const char *const step_names[] = {
	[SFP_RECORDER_SESSION] = "cannot record",
	[SFP_RECORDER_PIPELINE] = "cannot set up the pipeline",
	[SFP_RECORDER_ATTACH] = "cannot attach the second source",
	[SFP_RECORDER_ASYNC_TABLES] = "cannot build tables off the reader",
	[SFP_RECORDER_SUMS] = "no kernel sums of off-CPU time",
	[SFP_RECORDER_KERNEL] = "synthesizing the kernel's records",
	[SFP_RECORDER_START] = "cannot start",
	[SFP_RECORDER_PROCS] = "reading /proc",
};

/* A step failed: the caller hears it (or the log does).  Return: 0 to
 * go on (a step that may be skipped, and the caller said so), or the
 * error to end with. */
static int step_failed(struct sfp_recorder *rc, enum sfp_recorder_step step,
		       int err)
{
	int ret;

	if (!rc->failed) {
		pr_warn("recorder: %s: %s", step_names[step],
			sfp_strerror(err));
		return err;
	}
	ret = rc->failed(rc->ctx, step, err);
	if (step == SFP_RECORDER_ASYNC_TABLES || step == SFP_RECORDER_SUMS ||
	    step == SFP_RECORDER_PROCS)
		return ret;
	return err;
}

/* -p's "PID[,PID...]", for the synthesis at start (at most 1024, as
 * record always took). */
static int parse_pids(struct sfp_recorder *rc, const char *s)
{
	size_t cap = 1024;

	if (!s)
		return 0;
	rc->pids = calloc(cap, sizeof(*rc->pids));
	if (!rc->pids)
		return -ENOMEM;
	while (*s && rc->nr_pids < cap) {
		char *end;

		rc->pids[rc->nr_pids++] = (pid_t)strtol(s, &end, 10);
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			break;
	}
	return 0;
}

/* The pipeline, with the deep stacks' copies where they attach. */
static int open_pipeline(struct sfp_recorder *rc,
			 const struct sfp_recorder_opts *o,
			 const struct sfp_record_opts *ro)
{
	const struct sfp_recorder_deep *deep =
		SFP_OPTS_GET(o, sfp_recorder_opts, deep, NULL);
	const struct sfp_rec_pipe_opts *po =
		SFP_OPTS_GET(o, sfp_recorder_opts, pipe, NULL);
	struct sfp_rec_pipe_opts lpo;

	memset(&lpo, 0, sizeof(lpo));
	if (po)
		memcpy(&lpo, po, po->sz < sizeof(lpo) ? po->sz : sizeof(lpo));
	lpo.sz = sizeof(lpo);
	if (deep && deep->attach && ro->call_graph == SFP_RECORD_CG_SFRAME &&
	    !lpo.no_deep_stacks)
		lpo.bpf_deep = deep->attach(deep->ctx, rc->r, ro);
	return sfp_rec_pipe__new(rc->r, &lpo,
				 SFP_OPTS_GET(o, sfp_recorder_opts, out, NULL),
				 SFP_OPTS_GET(o, sfp_recorder_opts, out_ctx,
					      NULL),
				 &rc->p);
}

/* The source onto the session's events, its tables off the reader. */
static int attach_source(struct sfp_recorder *rc,
			 const struct sfp_recorder_opts *o,
			 const struct sfp_record_opts *ro)
{
	int err;

	if (!rc->has_src)
		return 0;
	if (rc->src.attach &&
	    (err = rc->src.attach(rc->src.ctx, rc->r, rc->p, ro)) &&
	    (err = step_failed(rc, SFP_RECORDER_ATTACH, err)))
		return err;
	if (SFP_OPTS_GET(o, sfp_recorder_opts, async_tables, false) &&
	    rc->src.async_tables &&
	    (err = rc->src.async_tables(rc->src.ctx)) &&
	    (err = step_failed(rc, SFP_RECORDER_ASYNC_TABLES, err)))
		return err;
	return 0;
}

/* The kernel sums, where the session's records time the blocks. */
static int load_sums(struct sfp_recorder *rc,
		     const struct sfp_recorder_opts *o,
		     const struct sfp_record_opts *ro)
{
	const struct sfp_recorder_sums *sums =
		SFP_OPTS_GET(o, sfp_recorder_opts, sums, NULL);
	int err;

	if (!sums || !sums->load || !ro->off_cpu ||
	    ro->call_graph == SFP_RECORD_CG_BPF_DEFER)
		return 0;
	err = sums->load(sums->ctx);
	if (err)
		return step_failed(rc, SFP_RECORDER_SUMS, err);
	rc->sums = *sums;
	rc->has_sums = true;
	return 0;
}

int sfp_recorder__open(const struct sfp_recorder_opts *o,
		       struct sfp_recorder **out)
{
	const struct sfp_record_opts *ro;
	int (*ready)(void *ctx, struct sfp_recorder *rc);
	struct sfp_recorder *rc;
	int err;

	*out = NULL;
	if (!SFP_OPTS_VALID(o, sfp_recorder_opts))
		return -EINVAL;
	ro = SFP_OPTS_GET(o, sfp_recorder_opts, record, NULL);
	if (!ro)
		return -EINVAL;
	rc = recorder_alloc(o);
	if (!rc)
		return -ENOMEM;
	rc->owns = true;
	rc->ctx = SFP_OPTS_GET(o, sfp_recorder_opts, ctx, NULL);
	rc->failed = SFP_OPTS_GET(o, sfp_recorder_opts, failed, NULL);
	rc->started = SFP_OPTS_GET(o, sfp_recorder_opts, started, NULL);
	ready = SFP_OPTS_GET(o, sfp_recorder_opts, ready, NULL);
	rc->system_wide = ro->system_wide;
	if ((err = parse_pids(rc, ro->pids)))
		goto fail;
	if ((err = sfp_record__open(ro, &rc->r))) {
		step_failed(rc, SFP_RECORDER_SESSION, err);
		goto fail;
	}
	if ((err = open_pipeline(rc, o, ro))) {
		step_failed(rc, SFP_RECORDER_PIPELINE, err);
		goto fail;
	}
	if ((err = attach_source(rc, o, ro)) || (err = load_sums(rc, o, ro)))
		goto fail;
	if (ready && (err = ready(rc->ctx, rc)))
		goto fail;
	if ((err = sfp_rec_pipe__synthesize_kernel(rc->p))) {
		step_failed(rc, SFP_RECORDER_KERNEL, err);
		goto fail;
	}
	*out = rc;
	return 0;
fail:
	sfp_recorder__free(&rc);
	return err;
}

int sfp_recorder__start(struct sfp_recorder *rc)
{
	int err;

	if (!rc->owns)
		return -EINVAL;
	/* The command's terminal SIGINT reaches it too; the caller drains
	 * and finishes. */
	err = sfp_record__start(rc->r);
	/* The kernel's sums from now: a command has exec'd (its events
	 * enable at the exec, and its blocks in execve are not the
	 * recording's); a block that began before is not counted, and one
	 * the records have needs no sum. */
	if (rc->has_sums && rc->sums.arm)
		rc->sums.arm(rc->sums.ctx, sfp_mono_ns());
	if (err)
		return step_failed(rc, SFP_RECORDER_START, err);
	if (rc->started)
		rc->started(rc->ctx, rc);
	if ((rc->nr_pids || rc->system_wide) &&
	    (err = sfp_rec_pipe__synthesize(rc->p, rc->pids, rc->nr_pids,
					    rc->system_wide)))
		return step_failed(rc, SFP_RECORDER_PROCS, err);
	return 0;
}

struct sfp_record *sfp_recorder__session(const struct sfp_recorder *rc)
{
	return rc->r;
}

struct sfp_rec_pipe *sfp_recorder__pipeline(const struct sfp_recorder *rc)
{
	return rc->p;
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
	if (rc->has_sums && rc->sums.stop)
		rc->sums.stop(rc->sums.ctx);
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

int sfp_recorder__finish(struct sfp_recorder *rc)
{
	int err, e;

	err = sfp_recorder__drain(rc);
	if (err >= 0 && rc->has_sums && rc->sums.read)
		err = rc->sums.read(rc->sums.ctx, rc->p);
	/* a cancelled read (the output's callback had enough) still ends
	 * the pipeline with what came */
	if (err >= 0 || err == -ECANCELED) {
		e = sfp_rec_pipe__finish(rc->p);
		if (err >= 0)
			err = e;
	}
	return err < 0 ? err : 0;
}

void sfp_recorder__free(struct sfp_recorder **rcp)
{
	struct sfp_recorder *rc = *rcp;

	if (!rc)
		return;
	reader_join(rc);
	if (rc->owns) {
		sfp_rec_pipe__free(&rc->p);
		sfp_record__free(&rc->r);
	}
	free(rc->pids);
	free(rc);
	*rcp = NULL;
}
