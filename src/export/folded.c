// SPDX-License-Identifier: MIT
/*
 * Folded stacks, the input of flamegraph.pl and inferno-flamegraph:
 *
 *   comm;root_func;...;leaf_func COUNT
 *
 * one line per distinct stack, sorted (byte order) and merged, COUNT the
 * number of samples -- or, for the off-CPU event (offcpu-time, asked for
 * by name with opts->event), the nanoseconds blocked there, as bcc's
 * offcputime -f sums its times per stack.  The naming follows stackcollapse-perf.pl so that a
 * file from either tool draws the same graph:
 *   - the thread's comm comes first, spaces turned into '_';
 *   - an unresolved frame is "[dso basename]" ("[unknown]" when the DSO is
 *     unknown too);
 *   - inlined functions are frames of their own, outermost first;
 *   - with opts->annotate_kind: "_[k]" after kernel frames, "_[j]" after
 *     JIT frames (perf-PID.map), "_[i]" after inlined callees;
 *   - ';' inside a name becomes ':' (it separates frames), and control
 *     characters become '_' (a line is one record).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export-int.h"
#include "export/walk.h"

struct fold_key {
	uint32_t comm, node;
	uint64_t count;
};

struct fold_line {
	char *text;
	uint64_t count;
};

static int cmp_key(const void *a, const void *b)
{
	const struct fold_key *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct fold_line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

/* Append a name, made safe for the one-line ';'-separated record. */
static void add_clean(struct exp_str *b, const char *s, bool comm)
{
	for (; *s; s++) {
		char c = *s;

		if (c == ';')
			c = ':';
		else if ((unsigned char)c < 0x20 || c == 0x7f ||
			 (comm && c == ' '))
			c = '_';
		exp_str__add(b, &c, 1);
	}
}

static bool is_jit_dso(const char *dso)
{
	return dso && !strncmp(dso, "/tmp/perf-", 10) &&
	       strstr(dso, ".map") != NULL;
}

static void add_frame(struct exp_str *b, const struct sfp_profile *p,
		      const struct sfp_profile_loc *loc, uint32_t line,
		      bool annotate)
{
	char buf[512];

	exp_str__add(b, ";", 1);
	add_clean(b, exp_frame_name(p, loc, line, buf, sizeof(buf)), false);
	if (!annotate)
		return;
	if (exp_loc_is_kernel(p, loc))
		exp_str__adds(b, "_[k]");
	else if (is_jit_dso(exp_frame_dso(p, loc, line)))
		exp_str__adds(b, "_[j]");
	else if (line + 1 < loc->nr_lines)	/* inlined into the next line */
		exp_str__adds(b, "_[i]");
}

static int fold_one(const struct sfp_profile *p, const struct fold_key *k,
		    struct exp_stack *st, bool user_only, bool annotate,
		    char **out)
{
	struct exp_str b = { 0 };
	const char *comm = sfp_profile__string(p, k->comm);
	size_t i;
	int err;

	add_clean(&b, comm && *comm ? comm : "[unknown]", true);
	err = exp_stack__get(st, p, k->node, user_only);
	if (err)
		goto out;
	/* root first: the stack comes leaf first, and a loc's lines
	 * innermost first */
	for (i = st->n; i-- > 0;) {
		const struct sfp_profile_loc *loc = sfp_profile__loc(p, st->locs[i]);
		uint32_t l;

		if (SFP_NEVER(!loc || !loc->nr_lines))
			continue;
		for (l = loc->nr_lines; l-- > 0;)
			add_frame(&b, p, loc, l, annotate);
	}
	err = b.err;
out:
	if (err) {
		exp_str__free(&b);
		return err;
	}
	*out = b.s;
	return 0;
}

int sfp_export_folded(const struct sfp_profile *p, FILE *out,
		      const struct sfp_export_opts *opts)
{
	bool user_only = SFP_OPTS_GET(opts, sfp_export_opts, user_only, false);
	bool annotate = SFP_OPTS_GET(opts, sfp_export_opts, annotate_kind, false);
	const char *event = SFP_OPTS_GET(opts, sfp_export_opts, event, NULL);
	size_t n = sfp_profile__nr_samples(p), nk = 0, nl = 0, nin = 0, i;
	struct fold_key *keys = NULL;
	struct fold_line *lines = NULL;
	struct exp_stack st = { 0 };
	int err = 0;

	if (!n)
		return 0;
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		const struct sfp_profile_event *ev =
			sfp_profile__event(p, s->event);
		const char *name = ev && ev->name ? ev->name : "";
		bool off_cpu = ev && ev->kind == SFP_PROFILE_EV_OFF_CPU;

		if (event ? strcmp(name, event) : off_cpu)
			continue;
		keys[nin].comm = s->comm;
		keys[nin].node = s->stack;
		/* (a merged sample stands for count samples) */
		keys[nin++].count = off_cpu ? s->period : s->count;
	}
	/* one line per distinct (comm, stack) first: far fewer strings */
	qsort(keys, nin, sizeof(*keys), cmp_key);
	for (i = 0; i < nin; i++) {
		if (nk && !cmp_key(&keys[nk - 1], &keys[i]))
			keys[nk - 1].count += keys[i].count;
		else
			keys[nk++] = keys[i];
	}
	lines = calloc(nk, sizeof(*lines));
	if (!lines) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nk; i++) {
		err = fold_one(p, &keys[i], &st, user_only, annotate,
			       &lines[i].text);
		if (err)
			goto out;
		lines[i].count = keys[i].count;
		nl++;
	}
	/* different stacks can fold to the same names (same function at
	 * other addresses, kernel frames left out): merge them */
	qsort(lines, nl, sizeof(*lines), cmp_line);
	for (i = 0; i < nl; i++) {
		uint64_t c = lines[i].count;

		while (i + 1 < nl && !strcmp(lines[i].text, lines[i + 1].text))
			c += lines[++i].count;
		if (fprintf(out, "%s %" PRIu64 "\n", lines[i].text, c) < 0) {
			err = -EIO;
			goto out;
		}
	}
out:
	for (i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	free(keys);
	exp_stack__free(&st);
	return err;
}
