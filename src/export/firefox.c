// SPDX-License-Identifier: MIT
/*
 * The Firefox Profiler's Gecko profile format (version 24, the version the
 * profiler's own `perf script` importer produces and its upgraders take to
 * the current processed format), presymbolicated:
 *
 *   { "meta": { version 24, interval (ms), startTime (ms), product,
 *               categories [User, Kernel], presymbolicated, ... },
 *     "libs": [], "processes": [], "pausedRanges": [],
 *     "threads": [ one per tid (per tid and event when the file has
 *                  several events): name, processName, pid, tid,
 *       samples    { schema {stack, time, responsiveness}, data [[stack,
 *                    ms since the first sample, 0], ...] },
 *       stackTable { schema {prefix, frame}, data [[prefix|null, frame]] },
 *       frameTable { schema {location, relevantForJS, innerWindowID,
 *                    implementation, optimizations, line, column,
 *                    category, subcategory}, data [...] },
 *       stringTable [...], markers (empty) ] }
 *
 * Off-CPU samples (offcpu-time: record --off-cpu's and perf's) weigh a
 * blocked time, and the format has no weights (the importer makes every
 * sample weigh one).  So each block becomes samples, one per meta.interval
 * of blocked time, spread over the blocked span on the thread's own track,
 * whose stack is the blocking stack plus a leaf "Off-CPU" (category
 * Off-CPU) and whose threadCPUDelta is 0: the call tree shows where the
 * thread waited and for how long, the activity graph still shows it not
 * running (on-CPU samples carry their period in µs).  Each block is also
 * an interval marker "Off-CPU" over [switch-in - blocked ns, switch-in]
 * with the blocking stack as the marker's stack (the profiler shows it as
 * the marker's cause).  Blocks summed by the recorder (all stamped with
 * one time, the end of the recording; perf stamps its own sums with
 * ~0 << 32) have no span: each is an instant "Off-CPU (summed)" marker
 * with its total and stack, and its samples fill the thread's gaps.
 *
 * A frame's location string is "function (in dso)": the profiler makes
 * its function and library tables from that text.  Inlined functions are
 * frames of their own (outermost first, each with its line when known).
 * Kernel frames get the Kernel category, user frames the User one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export-int.h"
#include "export/strtab.h"
#include "export/walk.h"

#define FF_GECKO_VERSION 24
#define FF_CAT_USER 0
#define FF_CAT_KERNEL 1
#define FF_CAT_OFFCPU 2
#define FF_NONE UINT32_MAX

struct ff_frame {
	uint32_t loc, line;	/* line: index into loc->lines; loc FF_NONE:
				   the "Off-CPU" leaf of off-CPU samples */
	uint32_t location;	/* string index */
};

struct ff_stack {
	uint32_t prefix;	/* FF_NONE: root */
	uint32_t frame;
};

struct ff_thread {
	struct exp_strtab st;
	struct ff_frame *frames;
	size_t nframes, cap_frames;
	struct ff_stack *stacks;
	size_t nstacks, cap_stacks;
	/* memo for the thread being written, reset through the touched
	 * lists so that a thread costs what it uses, not nr_nodes */
	uint32_t *loc_frame;	/* loc -> first frame (FF_NONE) */
	uint32_t *node_stack;	/* node -> stack (FF_NONE unknown) */
	uint8_t *node_done;
	uint32_t *touched_locs, *touched_nodes;
	size_t ntl, ntn;
	uint32_t *path;		/* scratch: nodes leaf -> memoized ancestor */
	size_t path_cap;
};

struct ff_ctx {
	const struct sfp_profile *p;
	FILE *out;
	bool user_only;
	size_t nlocs, nnodes;
	uint64_t t0;
	/* off-CPU samples: their event, the event whose track they join
	 * (FF_NONE: none), the stamp the recorder gave its sums (0: none),
	 * and whether on-CPU periods are ns (a clock event) */
	uint32_t off_event, on_event;
	uint64_t sum_stamp;
	uint64_t t_end;		/* the latest stamp of a sample or block (not
				   the sums', not perf's ~0 << 32) */
	bool on_is_clock;
	double interval_ms;	/* meta.interval: what one sample stands for */
	struct ff_thread th;
	int err;
};

/* JSON string: escapes, and invalid UTF-8 bytes as U+FFFD. */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*u) {
		unsigned char c = *u;
		size_t n = 0, i;

		if (c < 0x80) {
			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
			u++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3;
		for (i = 1; n && i <= n; i++)
			if ((u[i] & 0xc0) != 0x80)
				n = 0;
		/* overlongs and surrogates that pass the lead-byte test */
		if ((n == 2 && c == 0xe0 && u[1] < 0xa0) ||
		    (n == 2 && c == 0xed && u[1] >= 0xa0) ||
		    (n == 3 && c == 0xf0 && u[1] < 0x90) ||
		    (n == 3 && c == 0xf4 && u[1] >= 0x90))
			n = 0;
		if (!n) {
			fputs("\\ufffd", f);
			u++;
			continue;
		}
		fwrite(u, 1, n + 1, f);
		u += n + 1;
	}
	fputc('"', f);
}

static int64_t ff_str(struct ff_ctx *c, const char *s)
{
	int64_t i = exp_strtab__intern(&c->th.st, s);

	if (i < 0) {
		c->err = (int)i;
		return 0;
	}
	return i;
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *a;

	if (need <= *cap)
		return true;
	n = *cap ? *cap * 2 : 1024;
	while (n < need)
		n *= 2;
	a = realloc(*arr, n * elem);
	if (!a)
		return false;
	*arr = a;
	*cap = n;
	return true;
}

/*
 * The profiler takes the library from "(in LIB)" with a pattern that stops
 * at the first ')': a path like "/usr/bin/x (deleted)" keeps its
 * parentheses as brackets so the frame still parses as native code.
 */
static void add_dso(struct exp_str *b, const char *dso)
{
	for (; *dso; dso++) {
		char c = *dso == '(' ? '[' : *dso == ')' ? ']' : *dso;

		exp_str__add(b, &c, 1);
	}
}

/* The frames of a loc (one per line, index = base + line), made once. */
static uint32_t loc_frames(struct ff_ctx *c, uint32_t li,
			   const struct sfp_profile_loc *loc)
{
	struct ff_thread *t = &c->th;
	uint32_t base, l;

	if (t->loc_frame[li] != FF_NONE)
		return t->loc_frame[li];
	if (!grow((void **)&t->frames, &t->cap_frames,
		  t->nframes + loc->nr_lines, sizeof(*t->frames))) {
		c->err = -ENOMEM;
		return FF_NONE;
	}
	base = (uint32_t)t->nframes;
	for (l = 0; l < loc->nr_lines; l++) {
		const char *dso = exp_frame_dso(c->p, loc, l);
		struct exp_str b = { 0 };
		char buf[512];

		exp_str__adds(&b, exp_frame_name(c->p, loc, l, buf, sizeof(buf)));
		exp_str__adds(&b, " (in ");
		add_dso(&b, dso ? dso : "[unknown]");
		exp_str__adds(&b, ")");
		if (b.err) {
			c->err = b.err;
			exp_str__free(&b);
			return FF_NONE;
		}
		t->frames[base + l] = (struct ff_frame){
			.loc = li, .line = l, .location = (uint32_t)ff_str(c, b.s),
		};
		exp_str__free(&b);
	}
	t->nframes += loc->nr_lines;
	t->loc_frame[li] = base;
	t->touched_locs[t->ntl++] = li;
	return base;
}

static uint32_t push_stack(struct ff_ctx *c, uint32_t prefix, uint32_t frame)
{
	struct ff_thread *t = &c->th;

	if (!grow((void **)&t->stacks, &t->cap_stacks, t->nstacks + 1,
		  sizeof(*t->stacks))) {
		c->err = -ENOMEM;
		return FF_NONE;
	}
	t->stacks[t->nstacks] = (struct ff_stack){ prefix, frame };
	return (uint32_t)t->nstacks++;
}

/*
 * The stack row of a node: walk up to the nearest node already done in
 * this thread (or the root), then come back down adding rows.
 */
static uint32_t node_stack(struct ff_ctx *c, uint32_t node)
{
	struct ff_thread *t = &c->th;
	size_t np = 0;
	uint32_t cur = FF_NONE, n = node;

	while (n < c->nnodes && !t->node_done[n]) {
		const struct sfp_profile_node *nd = sfp_profile__node(c->p, n);

		if (!nd || nd->loc == UINT32_MAX)	/* the root */
			break;
		if (!grow((void **)&t->path, &t->path_cap, np + 1,
			  sizeof(*t->path))) {
			c->err = -ENOMEM;
			return FF_NONE;
		}
		t->path[np++] = n;
		n = nd->parent;
	}
	if (n < c->nnodes && t->node_done[n])
		cur = t->node_stack[n];
	while (np-- > 0) {
		uint32_t nn = t->path[np];
		const struct sfp_profile_node *nd = sfp_profile__node(c->p, nn);
		const struct sfp_profile_loc *loc = sfp_profile__loc(c->p, nd->loc);

		if (loc && loc->nr_lines &&
		    !(c->user_only && exp_loc_is_kernel(c->p, loc))) {
			uint32_t base = loc_frames(c, nd->loc, loc), l;

			if (c->err)
				return FF_NONE;
			for (l = loc->nr_lines; l-- > 0;) {
				cur = push_stack(c, cur, base + l);
				if (c->err)
					return FF_NONE;
			}
		}
		t->node_stack[nn] = cur;
		t->node_done[nn] = 1;
		t->touched_nodes[t->ntn++] = nn;
	}
	return cur;
}

static void thread_reset(struct ff_thread *t)
{
	size_t i;

	for (i = 0; i < t->ntl; i++)
		t->loc_frame[t->touched_locs[i]] = FF_NONE;
	for (i = 0; i < t->ntn; i++)
		t->node_done[t->touched_nodes[i]] = 0;
	t->ntl = t->ntn = 0;
	t->nframes = t->nstacks = 0;
	exp_strtab__reset(&t->st);
}

static double ms_since_t0(const struct ff_ctx *c, uint64_t t)
{
	return t > c->t0 ? (double)(t - c->t0) / 1e6 : 0.0;
}

static bool is_off(const struct ff_ctx *c, const struct sfp_profile_sample *s)
{
	return c->off_event != FF_NONE && s->event == c->off_event;
}

/* The event whose track a sample is drawn in. */
static uint32_t track_event(const struct ff_ctx *c,
			    const struct sfp_profile_sample *s)
{
	return is_off(c, s) && c->on_event != FF_NONE ? c->on_event : s->event;
}

/* How an off-CPU sample is drawn (the top of the file). */
enum ff_kind { FF_ON, FF_BLOCK, FF_SUM };

/*
 * Classify the samples of one thread: on-CPU, a block with its interval,
 * or a sum (the recorder's, or a block that cannot be one: it would start
 * before the thread's previous block ended, or before the clock).
 */
static void classify(const struct ff_ctx *c, const uint32_t *idx, size_t n,
		     uint8_t *kind)
{
	uint64_t prev_end = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, idx[i]);

		if (!is_off(c, s)) {
			kind[i] = FF_ON;
			continue;
		}
		if ((c->sum_stamp && s->time == c->sum_stamp) ||
		    s->period > s->time || s->time - s->period < prev_end) {
			kind[i] = FF_SUM;
		} else {
			kind[i] = FF_BLOCK;
			prev_end = s->time;
		}
	}
}

/* A sum's stamp, as drawn: perf's ~0 << 32 is taken as the end. */
static uint64_t sum_time(const struct ff_ctx *c, const struct sfp_profile_sample *s)
{
	return s->time > c->t_end ? c->t_end : s->time;
}

/*
 * The off-CPU markers of one thread (its off-CPU samples among idx[],
 * whose stacks are stk[]): an interval over each block, an instant at the
 * end for each sum (see the top of the file).  Return how many written.
 */
static size_t write_off_markers(struct ff_ctx *c, const uint32_t *idx,
				const uint32_t *stk, const uint8_t *kind,
				size_t n, uint32_t tid)
{
	FILE *f = c->out;
	uint32_t name_iv = (uint32_t)ff_str(c, "Off-CPU");
	uint32_t name_sum = (uint32_t)ff_str(c, "Off-CPU (summed)");
	size_t i, nm = 0;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, idx[i]);
		bool sum = kind[i] == FF_SUM;
		double start, end;

		if (kind[i] == FF_ON)
			continue;
		end = ms_since_t0(c, sum ? sum_time(c, s) : s->time);
		start = sum ? end : ms_since_t0(c, s->time - s->period);
		fprintf(f, "%s[%" PRIu32 ",%.6f,", nm++ ? ",\n" : "\n",
			sum ? name_sum : name_iv, start);
		if (sum)
			fputs("null,0", f);
		else
			fprintf(f, "%.6f,1", end);
		fprintf(f, ",%d,{\"type\":\"OffCPU\",\"blockedMs\":%.6f",
			FF_CAT_OFFCPU, (double)s->period / 1e6);
		if (stk[i] != FF_NONE)
			/* the shape of Gecko's marker stacks: a one-sample
			 * thread whose sample is the stack */
			fprintf(f, ",\"stack\":{\"tid\":%" PRIu32 ",\"markers\":"
				   "{\"schema\":{\"name\":0,\"startTime\":1,"
				   "\"endTime\":2,\"phase\":3,\"category\":4,"
				   "\"data\":5},\"data\":[]},\"samples\":{\"schema\":"
				   "{\"stack\":0,\"time\":1,\"responsiveness\":2},"
				   "\"data\":[[%" PRIu32 ",%.6f,0]]}}",
				tid, stk[i], start);
		fputs("}]", f);
	}
	return nm;
}

/*
 * The samples table of one thread, in time order.  On-CPU samples as they
 * are; off-CPU time as samples too, so that the call tree (which counts
 * samples: the Gecko format has no weights) shows where the thread waited:
 * one sample per meta.interval of blocked time, whose stack is the
 * blocking stack plus a leaf frame "Off-CPU" (category Off-CPU), and whose
 * threadCPUDelta is 0, so that the activity graph still draws the thread
 * as not running.  A block's samples are spread over its span; a sum's
 * (it has no span) go into the thread's gaps, where it was on no CPU,
 * from the first time of its process on (a thread that only ever blocked
 * in short waits has no time of its own), and past the end of the
 * recording if the gaps are full.  Rounding is carried per stack, so a stack's off-CPU samples
 * are its blocked time / interval within half a sample.
 */
struct ff_smp {
	double t;		/* ms since t0 */
	uint32_t stack;		/* FF_NONE: no frames */
	uint32_t seq;		/* ties keep their order */
	int64_t cpu_us;		/* threadCPUDelta */
};

struct ff_off_stack {
	uint32_t stack;		/* the stack with the Off-CPU leaf */
	uint64_t ns;		/* blocked ns so far */
	uint64_t emitted;	/* samples written for them */
};

struct ff_smps {
	struct ff_smp *v;
	size_t n, cap;
};

static bool smp_push(struct ff_smps *a, double t, uint32_t stack, int64_t cpu)
{
	if (!grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return false;
	a->v[a->n] = (struct ff_smp){ t, stack, (uint32_t)a->n, cpu };
	a->n++;
	return true;
}

static int cmp_smp(const void *a, const void *b)
{
	const struct ff_smp *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The frame "Off-CPU" of this thread, made once. */
static uint32_t off_frame(struct ff_ctx *c, uint32_t *memo)
{
	struct ff_thread *t = &c->th;

	if (*memo != FF_NONE)
		return *memo;
	if (!grow((void **)&t->frames, &t->cap_frames, t->nframes + 1,
		  sizeof(*t->frames))) {
		c->err = -ENOMEM;
		return FF_NONE;
	}
	t->frames[t->nframes] = (struct ff_frame){
		.loc = FF_NONE, .line = 0,
		.location = (uint32_t)ff_str(c, "Off-CPU"),
	};
	*memo = (uint32_t)t->nframes++;
	return *memo;
}

/* How many samples ns more of blocked time under os make: rounded on the
 * stack's running total, so that errors do not add up across blocks. */
static uint64_t off_samples(const struct ff_ctx *c, struct ff_off_stack *os,
			    uint64_t ns)
{
	uint64_t want;

	os->ns += ns;
	want = (uint64_t)((double)os->ns / (c->interval_ms * 1e6) + 0.5);
	ns = want > os->emitted ? want - os->emitted : 0;
	os->emitted += ns;
	return ns;
}

/* Walks the samples that summed blocks make (sum_n[i] for sample i), in
 * sample order, one slot at a time. */
struct sum_cursor {
	const uint64_t *sum_n;
	size_t n, i, k;
	uint64_t left;
};

/* The next slot's sample index in *k; false when every sum is placed. */
static bool sum_next(struct sum_cursor *sc, size_t *k)
{
	while (!sc->left && sc->i < sc->n)
		if ((sc->left = sc->sum_n[sc->i++]))
			sc->k = sc->i - 1;
	if (!sc->left)
		return false;
	sc->left--;
	*k = sc->k;
	return true;
}

static bool sum_done(const struct sum_cursor *sc)
{
	return !sc->left && sc->i >= sc->n;
}

static int build_samples(struct ff_ctx *c, const uint32_t *idx,
			 const uint32_t *stk, const uint8_t *kind, size_t n,
			 uint64_t from, struct ff_smps *out)
{
	struct ff_thread *t = &c->th;
	size_t nstk = t->nstacks, i, k = 0, nsum = 0;
	struct ff_off_stack *os = NULL;
	uint32_t offf = FF_NONE;
	uint64_t *sum_n = NULL;	/* per sample: samples its sum makes */
	double iv = c->interval_ms, p, q;
	int64_t on_us = (int64_t)(iv * 1000.0 + 0.5);

	os = calloc(nstk + 1, sizeof(*os));
	sum_n = calloc(n + 1, sizeof(*sum_n));
	if (!os || !sum_n)
		goto nomem;
	for (i = 0; i <= nstk; i++)
		os[i].stack = FF_NONE;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, idx[i]);
		struct ff_off_stack *o;
		uint64_t m, j;

		if (kind[i] == FF_ON) {
			/* the CPU time the sample stands for, in µs */
			if (!smp_push(out, ms_since_t0(c, s->time), stk[i],
				      c->on_is_clock ?
				      (int64_t)((s->period + 500) / 1000) : on_us))
				goto nomem;
			continue;
		}
		o = &os[stk[i] == FF_NONE ? nstk : stk[i]];
		if (o->stack == FF_NONE) {
			uint32_t fr = off_frame(c, &offf);

			if (fr == FF_NONE)
				goto err;
			o->stack = push_stack(c, stk[i], fr);
			if (o->stack == FF_NONE)
				goto err;
		}
		m = off_samples(c, o, s->period);
		if (kind[i] == FF_SUM) {
			sum_n[i] = m;
			nsum += m;
			continue;
		}
		/* spread over the block */
		p = ms_since_t0(c, s->time - s->period);
		q = ms_since_t0(c, s->time);
		for (j = 0; j < m; j++)
			if (!smp_push(out, p + (q - p) * ((double)j + 0.5) / (double)m,
				      o->stack, 0))
				goto nomem;
	}
	/* (a thread whose blocks were all summed has none yet: no array) */
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_smp);
	if (nsum) {
		/* the sums into the gaps: slots an interval apart, at least
		 * an interval from the samples around them */
		struct sum_cursor sc = { .sum_n = sum_n, .n = n };
		size_t nreal = out->n, r = 0;

		p = ms_since_t0(c, from) - iv;
		for (;;) {
			q = r < nreal ? out->v[r].t : ms_since_t0(c, c->t_end) + iv;
			while (p + 2 * iv <= q + 1e-9 && sum_next(&sc, &k)) {
				p += iv;
				if (!smp_push(out, p, os[stk[k] == FF_NONE ? nstk :
						       stk[k]].stack, 0))
					goto nomem;
			}
			if (r >= nreal || sum_done(&sc))
				break;
			p = out->v[r++].t;
		}
		/* past the end: the gaps were full */
		while (sum_next(&sc, &k)) {
			p += iv;
			if (!smp_push(out, p, os[stk[k] == FF_NONE ? nstk :
					       stk[k]].stack, 0))
				goto nomem;
		}
		qsort(out->v, out->n, sizeof(*out->v), cmp_smp);
	}
	free(os);
	free(sum_n);
	return 0;
nomem:
	c->err = -ENOMEM;
err:
	free(os);
	free(sum_n);
	return c->err;
}

/* The earliest time a sample of idx[0..n) stands for: an on-CPU sample's
 * time, a block's start (not a sum's stamp). */
static uint64_t first_time(const struct ff_ctx *c, const uint32_t *idx, size_t n)
{
	uint64_t first = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, idx[i]);
		uint64_t b = s->time;

		if (is_off(c, s)) {
			if ((c->sum_stamp && s->time == c->sum_stamp) ||
			    s->period > s->time)
				continue;
			b = s->time - s->period;
		}
		if (b && (!first || b < first))
			first = b;
	}
	return first;
}

/* One thread: samples idx[0..n) (all of one tid, in time order);
 * proc_first: the first time of its process (first_time()). */
static int write_thread(struct ff_ctx *c, const uint32_t *idx, size_t n,
			const char *process_name, uint64_t proc_first,
			bool first)
{
	struct ff_thread *t = &c->th;
	const struct sfp_profile_sample *s0 = sfp_profile__sample(c->p, idx[0]);
	const struct sfp_profile_sample *sl = sfp_profile__sample(c->p, idx[n - 1]);
	FILE *f = c->out;
	uint32_t *stk;
	uint8_t *kind;
	struct ff_smps smps = { 0 };
	size_t i, ntracks = sfp_profile__nr_events(c->p);
	uint64_t reg = s0->time;
	bool cpu_delta = c->off_event != FF_NONE;
	int err;

	stk = malloc(n * sizeof(*stk));
	kind = malloc(n);
	if (!stk || !kind) {
		free(stk);
		free(kind);
		return -ENOMEM;
	}
	thread_reset(t);
	for (i = 0; i < n && !c->err; i++)
		stk[i] = node_stack(c, sfp_profile__sample(c->p, idx[i])->stack);
	classify(c, idx, n, kind);

	/* off-CPU samples share the on-CPU event's tracks */
	if (c->off_event != FF_NONE && c->on_event != FF_NONE)
		ntracks--;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, idx[i]);
		uint64_t b = is_off(c, s) && s->period <= s->time &&
			     !(c->sum_stamp && s->time == c->sum_stamp) ?
			     s->time - s->period : s->time;

		if (b && (!reg || b < reg))
			reg = b;
	}
	if (!c->err)
		build_samples(c, idx, stk, kind, n,
			      proc_first && proc_first < reg ? proc_first : reg,
			      &smps);
	if (c->err) {
		err = c->err;
		free(stk);
		free(kind);
		free(smps.v);
		return err;
	}

	fputs(first ? "\n" : ",\n", f);
	fputs("{\"name\":", f);
	/* the name it had last, like perf's own importer: a thread is
	 * often renamed right after it was created; with several events,
	 * one track per event, named after it */
	if (ntracks > 1) {
		const struct sfp_profile_event *ev =
			sfp_profile__event(c->p, track_event(c, s0));
		struct exp_str b = { 0 };

		exp_str__adds(&b, sfp_profile__string(c->p, sl->comm) ?: "");
		exp_str__adds(&b, " (");
		exp_str__adds(&b, ev && ev->name ? ev->name : "[unknown]");
		exp_str__adds(&b, ")");
		json_str(f, b.err ? "" : b.s);
		exp_str__free(&b);
	} else {
		json_str(f, sfp_profile__string(c->p, sl->comm));
	}
	fputs(",\"processName\":", f);
	json_str(f, process_name);
	fprintf(f, ",\"processType\":\"default\",\"pid\":%" PRIu32
		   ",\"tid\":%" PRIu32 ",\"registerTime\":%.6f"
		   ",\"unregisterTime\":null",
		s0->pid, s0->tid, ms_since_t0(c, reg));
	fputs(",\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,"
	      "\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5},"
	      "\"data\":[", f);
	if (c->off_event != FF_NONE)
		write_off_markers(c, idx, stk, kind, n, s0->tid);
	fputs("]}", f);
	fprintf(f, ",\"samples\":{\"schema\":{\"stack\":0,\"time\":1,"
		   "\"responsiveness\":2%s},\"data\":[",
		cpu_delta ? ",\"threadCPUDelta\":3" : "");
	for (i = 0; i < smps.n; i++) {
		const struct ff_smp *sm = &smps.v[i];

		fputs(i ? ",\n[" : "\n[", f);
		if (sm->stack == FF_NONE)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu32, sm->stack);
		fprintf(f, ",%.6f,0", sm->t);
		if (cpu_delta)
			fprintf(f, ",%" PRId64, sm->cpu_us);
		putc(']', f);
	}
	free(stk);
	free(kind);
	free(smps.v);
	fputs("]}", f);

	fputs(",\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},"
	      "\"data\":[", f);
	for (i = 0; i < t->nstacks; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		if (t->stacks[i].prefix == FF_NONE)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu32, t->stacks[i].prefix);
		fprintf(f, ",%" PRIu32 "]", t->stacks[i].frame);
	}
	fputs("]}", f);

	fputs(",\"frameTable\":{\"schema\":{\"location\":0,"
	      "\"relevantForJS\":1,\"innerWindowID\":2,\"implementation\":3,"
	      "\"optimizations\":4,\"line\":5,\"column\":6,\"category\":7,"
	      "\"subcategory\":8},\"data\":[", f);
	for (i = 0; i < t->nframes; i++) {
		const struct ff_frame *fr = &t->frames[i];
		const struct sfp_profile_loc *loc;
		uint32_t line;

		fprintf(f, "%s[%" PRIu32 ",false,0,null,null,", i ? ",\n" : "\n",
			fr->location);
		if (fr->loc == FF_NONE) {	/* the Off-CPU leaf */
			fprintf(f, "null,null,%d,0]", FF_CAT_OFFCPU);
			continue;
		}
		loc = sfp_profile__loc(c->p, fr->loc);
		line = loc->lines[fr->line].line;
		if (line)
			fprintf(f, "%" PRIu32, line);
		else
			fputs("null", f);
		fprintf(f, ",null,%d,0]",
			exp_loc_is_kernel(c->p, loc) ? FF_CAT_KERNEL : FF_CAT_USER);
	}
	fputs("]}", f);

	fputs(",\"stringTable\":[", f);
	for (i = 0; i < t->st.n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_str(f, t->st.strs[i]);
	}
	fputs("]}", f);
	return ferror(f) ? -EIO : 0;
}

struct ff_order {
	uint32_t pid, tid, event, idx;
};

/*
 * Which event is off-CPU time and which on-CPU track its markers join:
 * the first clock event with samples, else the first other event with
 * samples; the stamp of the recorder's sums (the latest off-CPU stamp when
 * two or more samples carry it, or perf's ~0 << 32).
 */
static void pick_off_cpu(struct ff_ctx *c)
{
	size_t ne = sfp_profile__nr_events(c->p), ns = sfp_profile__nr_samples(c->p);
	size_t i, at_max = 0;
	uint32_t other = FF_NONE, e;
	uint8_t *has = calloc(ne + 1, 1);

	c->off_event = c->on_event = FF_NONE;
	if (!has)
		return;
	for (i = 0; i < ns; i++) {
		e = sfp_profile__sample(c->p, i)->event;
		has[e < ne ? e : ne] = 1;
	}
	for (e = 0; e < ne; e++) {
		const struct sfp_profile_event *ev = sfp_profile__event(c->p, e);

		if (!has[e])
			continue;
		if (ev && ev->kind == SFP_PROFILE_EV_OFF_CPU) {
			if (c->off_event == FF_NONE)
				c->off_event = e;
		} else if (ev && ev->kind == SFP_PROFILE_EV_CLOCK) {
			if (c->on_event == FF_NONE || !c->on_is_clock)
				c->on_event = e;
			c->on_is_clock = true;
		} else if (other == FF_NONE) {
			other = e;
		}
	}
	free(has);
	if (c->off_event == FF_NONE) {
		c->on_event = FF_NONE;
		c->on_is_clock = false;
		return;
	}
	if (c->on_event == FF_NONE)
		c->on_event = other;
	for (i = 0; i < ns; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(c->p, i);

		if (s->event != c->off_event)
			continue;
		if (s->time > c->sum_stamp) {
			c->sum_stamp = s->time;
			at_max = 1;
		} else if (s->time == c->sum_stamp) {
			at_max++;
		}
	}
	if (at_max < 2 && c->sum_stamp < 0xffffffff00000000ull)
		c->sum_stamp = 0;
}

static int cmp_order(const void *a, const void *b)
{
	const struct ff_order *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void write_meta(struct ff_ctx *c, const struct sfp_export_opts *opts)
{
	const struct sfp_profile_event *ev = NULL;
	const char *title = SFP_OPTS_GET(opts, sfp_export_opts, title, NULL);
	const char *host = sfp_profile__hostname(c->p);
	double interval = 1.0;
	FILE *f = c->out;

	if (sfp_profile__nr_events(c->p))
		ev = sfp_profile__event(c->p, 0);
	/* the sampling interval in ms: a clock event's period is in ns */
	if (ev && ev->sample_freq)
		interval = 1000.0 / (double)ev->sample_freq;
	else if (ev && ev->sample_period && ev->name &&
		 (!strncmp(ev->name, "cpu-clock", 9) ||
		  !strncmp(ev->name, "task-clock", 10)))
		interval = (double)ev->sample_period / 1e6;
	c->interval_ms = interval;
	if (!title)
		title = sfp_profile__cmdline(c->p);
	fprintf(f, "{\"meta\":{\"version\":%d,\"interval\":%.6f,"
		   "\"startTime\":%.6f,\"shutdownTime\":null,"
		   "\"processType\":0,\"stackwalk\":1,\"debug\":0,"
		   "\"gcpoison\":0,\"asyncstack\":0,\"presymbolicated\":true,",
		FF_GECKO_VERSION, interval, (double)c->t0 / 1e6);
	fputs("\"product\":", f);
	json_str(f, title && *title ? title : "sfprof");
	if (host) {
		fputs(",\"oscpu\":", f);
		json_str(f, host);
	}
	fputs(",\"categories\":["
	      "{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	      "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}",
	      f);
	if (c->off_event == FF_NONE) {
		fputs("],\"markerSchema\":[]", f);
	} else {
		fputs(",{\"name\":\"Off-CPU\",\"color\":\"blue\","
		      "\"subcategories\":[\"Other\"]}]", f);
		fputs(",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":"
		      "\"ms\",\"threadCPUDelta\":\"\u00b5s\"}", f);
		fputs(",\"markerSchema\":[{\"name\":\"OffCPU\",\"display\":"
		      "[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
		      "\"tooltipLabel\":\"{marker.name}: blocked {marker.data.blockedMs}\","
		      "\"tableLabel\":\"blocked {marker.data.blockedMs}\","
		      "\"chartLabel\":\"{marker.data.blockedMs}\","
		      "\"data\":[{\"key\":\"blockedMs\",\"label\":\"Blocked\","
		      "\"format\":\"milliseconds\",\"searchable\":false}]}]", f);
	}
	fputs("},\n\"libs\":[],\"processes\":[],"
	      "\"pausedRanges\":[],\n\"threads\":[", f);
}

int sfp_export_firefox(const struct sfp_profile *p, FILE *out,
		       const struct sfp_export_opts *opts)
{
	struct ff_ctx c = { .p = p, .out = out };
	struct ff_thread *t = &c.th;
	size_t n = sfp_profile__nr_samples(p), i, j, k;
	struct ff_order *ord = NULL;
	uint32_t *idx = NULL;
	uint64_t proc_first = 0, t_all = 0;
	int err = 0;

	c.user_only = SFP_OPTS_GET(opts, sfp_export_opts, user_only, false);
	pick_off_cpu(&c);
	c.nlocs = sfp_profile__nr_locs(p);
	c.nnodes = sfp_profile__nr_nodes(p);
	if (n > UINT32_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		uint64_t tm = s->time;

		/* The format is a timeline with a row per sample and no
		 * weights: a merged sample (merge_samples) has lost the
		 * times of the samples it stands for. */
		if (s->count > 1) {
			pr_warn("firefox: the profile was loaded with "
				"merge_samples: each sample's time is needed");
			return -EINVAL;
		}

		/* an off-CPU block's marker starts where the block began */
		if (is_off(&c, s) && s->period < tm &&
		    !(c.sum_stamp && tm == c.sum_stamp))
			tm -= s->period;
		if (tm && (!c.t0 || tm < c.t0))
			c.t0 = tm;
		/* the end: the last sample or block, not the sums' stamp (the
		 * recording's last record, after every sample: the profiler's
		 * range ends at the last sample, and would leave them out) */
		if (s->time < 0xffffffff00000000ull && s->time > t_all)
			t_all = s->time;
		if (s->time < 0xffffffff00000000ull && s->time > c.t_end &&
		    !(c.sum_stamp && s->time == c.sum_stamp && is_off(&c, s)))
			c.t_end = s->time;
	}
	if (!c.t_end)
		c.t_end = t_all;
	ord = calloc(n + 1, sizeof(*ord));
	idx = calloc(n + 1, sizeof(*idx));
	t->loc_frame = malloc((c.nlocs + 1) * sizeof(*t->loc_frame));
	t->touched_locs = malloc((c.nlocs + 1) * sizeof(*t->touched_locs));
	t->node_stack = malloc((c.nnodes + 1) * sizeof(*t->node_stack));
	t->node_done = calloc(c.nnodes + 1, 1);
	t->touched_nodes = malloc((c.nnodes + 1) * sizeof(*t->touched_nodes));
	if (!ord || !idx || !t->loc_frame || !t->touched_locs ||
	    !t->node_stack || !t->node_done || !t->touched_nodes) {
		err = -ENOMEM;
		goto out;
	}
	memset(t->loc_frame, 0xff, (c.nlocs + 1) * sizeof(*t->loc_frame));
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		ord[i] = (struct ff_order){ s->pid, s->tid, track_event(&c, s),
					    (uint32_t)i };
	}
	/* threads by (pid, tid); each thread's samples stay in time order */
	qsort(ord, n, sizeof(*ord), cmp_order);

	write_meta(&c, opts);
	for (i = 0; i < n; i = j) {
		const char *pname = NULL;

		/* the first time of a process, at its first thread */
		if (c.off_event != FF_NONE && (!i || ord[i].pid != ord[i - 1].pid)) {
			for (k = i; k < n && ord[k].pid == ord[i].pid; k++)
				idx[k - i] = ord[k].idx;
			proc_first = first_time(&c, idx, k - i);
		}

		for (j = i; j < n && ord[j].pid == ord[i].pid &&
			    ord[j].tid == ord[i].tid &&
			    ord[j].event == ord[i].event; j++)
			idx[j - i] = ord[j].idx;
		/* the process is named after its main thread (tid == pid)
		 * when it has samples, else after this thread */
		for (k = i; k < n && ord[k].pid == ord[i].pid && !pname; k++)
			if (ord[k].tid == ord[k].pid)
				pname = sfp_profile__string(p,
					sfp_profile__sample(p, ord[k].idx)->comm);
		for (k = i; k > 0 && ord[k - 1].pid == ord[i].pid && !pname; k--)
			if (ord[k - 1].tid == ord[k - 1].pid)
				pname = sfp_profile__string(p,
					sfp_profile__sample(p, ord[k - 1].idx)->comm);
		if (!pname)
			pname = sfp_profile__string(p,
				sfp_profile__sample(p, ord[i].idx)->comm);
		err = write_thread(&c, idx, j - i, pname ? pname : "",
				   proc_first, i == 0);
		if (err)
			goto out;
	}
	fputs("\n]}\n", out);
	if (ferror(out))
		err = -EIO;
out:
	free(ord);
	free(idx);
	exp_strtab__free(&t->st);
	free(t->frames);
	free(t->stacks);
	free(t->loc_frame);
	free(t->touched_locs);
	free(t->node_stack);
	free(t->node_done);
	free(t->touched_nodes);
	free(t->path);
	return err;
}
