// SPDX-License-Identifier: MIT
/*
 * The recorder as `record` and the agent open it (record/recorder.h): the
 * session and pipeline made from options, the backends' callbacks called
 * at their steps and in their order, the caller's ready() and started(),
 * the kernel's records synthesized at open, and a failed step heard by
 * failed() -- going on where the step may be skipped, ending the open
 * where it may not.  The backends are fakes: the BPF ones sit a layer
 * above and have their own tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/record.h>

#include "record/pipeline.h"
#include "record/recorder.h"
#include "test.h"

static char prog[512];

static void prog_path(void)
{
	snprintf(prog, sizeof(prog), "%s/tests/progs/record-spin",
		 getenv("SFP_BUILD") ? getenv("SFP_BUILD") : "build");
}

/* What the fakes were asked, in order: one letter each. */
struct calls {
	char seq[32];
	size_t n;
	struct sfp_rec_pipe *p;		/* the source's, from its attach */
	struct sfp_record *deep_r;	/* the session deep stacks saw */
	uint64_t records, out, out_at_ready, armed_ns;
	int attach_err, async_err, load_err, failed_ret;
	enum sfp_recorder_step failed_step;
	int failed_err, nr_failed;
	struct sfp_recorder *ready_rc, *started_rc;
	/* the fakes as the recorder's options point at them */
	struct sfp_recorder_source src;
	struct sfp_recorder_deep deep;
	struct sfp_recorder_sums sums;
};

static void mark(struct calls *c, char ch)
{
	if (c->n < sizeof(c->seq) - 1)
		c->seq[c->n++] = ch;
}

static int src_record(const void *rec, size_t size, int cpu, void *ctx)
{
	struct calls *c = ctx;

	c->records++;
	return sfp_rec_pipe__record(rec, size, cpu, c->p);
}

static int src_poll(void *ctx)
{
	(void)ctx;
	return 0;
}

static int src_flush(void *ctx)
{
	mark(ctx, 'f');
	return 0;
}

static void src_finish(void *ctx)
{
	mark(ctx, 'F');
}

static int src_attach(void *ctx, struct sfp_record *r, struct sfp_rec_pipe *p,
		      const struct sfp_record_opts *ro)
{
	struct calls *c = ctx;

	(void)r;
	(void)ro;
	mark(c, 'a');
	c->p = p;
	return c->attach_err;
}

static int src_async(void *ctx)
{
	struct calls *c = ctx;

	mark(c, 'y');
	return c->async_err;
}

static struct sfp_bpf_deep *deep_attach(void *ctx, struct sfp_record *r,
					const struct sfp_record_opts *ro)
{
	struct calls *c = ctx;

	(void)ro;
	mark(c, 'd');
	c->deep_r = r;
	return NULL;		/* not loaded: the pipeline goes without */
}

static int sums_load(void *ctx)
{
	struct calls *c = ctx;

	mark(c, 'l');
	return c->load_err;
}

static void sums_arm(void *ctx, uint64_t now_ns)
{
	struct calls *c = ctx;

	mark(c, 'm');
	c->armed_ns = now_ns;
}

static void sums_stop(void *ctx)
{
	mark(ctx, 's');
}

static int sums_read(void *ctx, struct sfp_rec_pipe *p)
{
	struct calls *c = ctx;

	mark(c, p == c->p ? 'r' : '?');
	return 0;
}

static int out_count(void *ctx, const void *rec, size_t size)
{
	struct calls *c = ctx;

	(void)rec;
	(void)size;
	c->out++;
	return 0;
}

static int on_failed(void *ctx, enum sfp_recorder_step step, int err)
{
	struct calls *c = ctx;

	mark(c, 'E');
	c->failed_step = step;
	c->failed_err = err;
	c->nr_failed++;
	return c->failed_ret;
}

static int on_ready(void *ctx, struct sfp_recorder *rc)
{
	struct calls *c = ctx;

	mark(c, 'R');
	c->ready_rc = rc;
	c->out_at_ready = c->out;
	return 0;
}

static void on_started(void *ctx, struct sfp_recorder *rc)
{
	struct calls *c = ctx;

	mark(c, 'S');
	c->started_rc = rc;
}

static const struct sfp_recorder_source fake_source = {
	.record = src_record, .poll = src_poll, .flush = src_flush,
	.finish = src_finish, .attach = src_attach,
	.async_tables = src_async,
};

static const struct sfp_recorder_deep fake_deep = { .attach = deep_attach };

static const struct sfp_recorder_sums fake_sums = {
	.load = sums_load, .arm = sums_arm, .stop = sums_stop,
	.read = sums_read,
};

/* c cleared, and the recorder's options around its fakes. */
static void fakes(struct calls *c, struct sfp_recorder_opts *o)
{
	memset(c, 0, sizeof(*c));
	prog_path();
	c->src = fake_source;
	c->src.ctx = c;
	c->deep = fake_deep;
	c->deep.ctx = c;
	c->sums = fake_sums;
	c->sums.ctx = c;
	o->source = &c->src;
	o->deep = &c->deep;
	o->sums = &c->sums;
	o->out = out_count;
	o->out_ctx = c;
	o->ctx = c;
	o->failed = on_failed;
	o->ready = on_ready;
	o->started = on_started;
}

/*
 * A child recorded from open to finish: deep stacks attach before the
 * pipeline, the source after it, its tables thread asked, no kernel sums
 * without off-CPU records; ready() before the kernel's records, which
 * come at open; started() once the events are on; the source flushed
 * and finished at the end, every sample through it.
 */
TEST(recorder_open_start_finish)
{
	char *argv[] = { prog, "flat", "1000", NULL };
	struct calls c;
	SFP_OPTS(sfp_record_opts, ro, .argv = argv, .freq = 999);
	SFP_OPTS(sfp_rec_pipe_opts, po);
	SFP_OPTS(sfp_recorder_opts, o, .stop_after_s = 0.3, .record = &ro,
		 .pipe = &po, .async_tables = true);
	struct sfp_recorder *rc = NULL;
	struct sfp_rec_pipe_stats st;
	int rounds = 0;

	fakes(&c, &o);
	if (!ASSERT_OK(sfp_recorder__open(&o, &rc)))
		goto out;
	ASSERT_STREQ(c.seq, "dayR");
	ASSERT_TRUE(c.deep_r == sfp_recorder__session(rc));
	ASSERT_TRUE(c.p == sfp_recorder__pipeline(rc));
	ASSERT_TRUE(c.ready_rc == rc);
	ASSERT_EQ(c.out_at_ready, 0);
	ASSERT_GE(c.out, 1);		/* the kernel's records */
	if (!ASSERT_OK(sfp_recorder__start(rc)))
		goto out;
	ASSERT_STREQ(c.seq, "dayRS");
	ASSERT_TRUE(c.started_rc == rc);
	ASSERT_TRUE(sfp_recorder__start_reader(rc));
	while (!sfp_recorder__timed_out(rc) && rounds++ < 200) {
		usleep(50000);
		if (!ASSERT_GE(sfp_recorder__read(rc, false), 0))
			goto out;
	}
	sfp_recorder__stop(rc);
	if (!ASSERT_OK(sfp_recorder__finish(rc)))
		goto out;
	ASSERT_STREQ(c.seq, "dayRSfF");
	ASSERT_EQ(c.nr_failed, 0);
	sfp_rec_pipe__stats(sfp_recorder__pipeline(rc), &st);
	ASSERT_GE(st.samples, 1);
	/* every sample came through the source; the kernel's synthesized
	 * records did not */
	ASSERT_GE(c.records, st.samples);
	ASSERT_GE(st.records_in, c.records);
out:
	sfp_recorder__free(&rc);
}

/*
 * A step that may be skipped goes on when failed() says so (the tables
 * thread); one that may not ends the open whatever failed() says (the
 * source's attach), with nothing left behind.
 */
TEST(recorder_failed_steps)
{
	char *argv[] = { prog, "flat", "100", NULL };
	struct calls c;
	SFP_OPTS(sfp_record_opts, ro, .argv = argv);
	SFP_OPTS(sfp_rec_pipe_opts, po, .no_deep_stacks = true);
	SFP_OPTS(sfp_recorder_opts, o, .record = &ro, .pipe = &po,
		 .async_tables = true);
	struct sfp_recorder *rc = NULL;

	fakes(&c, &o);
	c.async_err = -EAGAIN;
	if (!ASSERT_OK(sfp_recorder__open(&o, &rc)))
		goto out;
	/* no deep stacks asked: no 'd' */
	ASSERT_STREQ(c.seq, "ayER");
	ASSERT_EQ(c.failed_step, SFP_RECORDER_ASYNC_TABLES);
	ASSERT_EQ(c.failed_err, -EAGAIN);
	sfp_recorder__free(&rc);

	fakes(&c, &o);
	c.attach_err = -EPERM;
	ASSERT_ERR(sfp_recorder__open(&o, &rc), -EPERM);
	ASSERT_TRUE(rc == NULL);
	ASSERT_STREQ(c.seq, "aE");
	ASSERT_EQ(c.failed_step, SFP_RECORDER_ATTACH);
	ASSERT_EQ(c.nr_failed, 1);

	/* a recorder without options to open from */
	ASSERT_ERR(sfp_recorder__open(NULL, &rc), -EINVAL);
out:
	sfp_recorder__free(&rc);
}

/*
 * Off-CPU records through the session: the kernel sums loaded at open,
 * armed at start, stopped with the events and read into the pipeline at
 * the end; where they do not load and failed() lets it, the recording
 * goes on without them.
 */
TEST(recorder_kernel_sums)
{
	char *argv[] = { prog, "flat", "100", NULL };
	struct calls c;
	SFP_OPTS(sfp_record_opts, ro, .argv = argv, .off_cpu = true);
	SFP_OPTS(sfp_rec_pipe_opts, po, .no_deep_stacks = true);
	SFP_OPTS(sfp_recorder_opts, o, .record = &ro, .pipe = &po);
	struct sfp_recorder *rc = NULL;
	int err;

	fakes(&c, &o);
	err = sfp_recorder__open(&o, &rc);
	if (err == -EACCES || err == -EPERM || err == -ENOENT) {
		test_skip("no sched_switch tracepoint here (%s)",
			  strerror(-err));
		return;
	}
	if (!ASSERT_OK(err) || !ASSERT_OK(sfp_recorder__start(rc)))
		goto out;
	ASSERT_TRUE(c.armed_ns > 0);
	while (!sfp_record__done(sfp_recorder__session(rc))) {
		sfp_record__poll(sfp_recorder__session(rc), 100);
		if (!ASSERT_GE(sfp_recorder__read(rc, false), 0))
			goto out;
	}
	sfp_recorder__stop(rc);
	if (!ASSERT_OK(sfp_recorder__finish(rc)))
		goto out;
	ASSERT_STREQ(c.seq, "alRmSsfFr");
	sfp_recorder__free(&rc);

	fakes(&c, &o);
	c.load_err = -EOPNOTSUPP;
	if (!ASSERT_OK(sfp_recorder__open(&o, &rc)) ||
	    !ASSERT_OK(sfp_recorder__start(rc)))
		goto out;
	sfp_recorder__stop(rc);
	if (!ASSERT_OK(sfp_recorder__finish(rc)))
		goto out;
	/* no arm, stop or read of sums that are not there */
	ASSERT_STREQ(c.seq, "alERSfF");
	ASSERT_EQ(c.failed_step, SFP_RECORDER_SUMS);
out:
	sfp_recorder__free(&rc);
}
