// SPDX-License-Identifier: MIT
/*
 * Printing a report: perf report --stdio's layout (header comments,
 * "Children  Self  <key columns>" lines, a call graph under each entry),
 * or the plain format of docs/report.md for scripts.
 */
#include <inttypes.h>
#include <string.h>

#include "report/report-int.h"

static double pct(uint64_t v, uint64_t total)
{
	return sfp_rep_pct(v, total);
}

/* snprintf(buf, len, "%s%s", a, b) without the format parsing. */
static void cat2(char *buf, size_t len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (!len)
		return;
	if (la >= len)
		la = len - 1;
	memcpy(buf, a, la);
	if (lb >= len - la)
		lb = len - la - 1;
	memcpy(buf + la, b, lb);
	buf[la + lb] = 0;
}

/* fprintf(out, "  %-*s", w, s) without the format parsing. */
static void put_col(FILE *out, const char *s, size_t w)
{
	size_t n = strlen(s);

	static const char sp[] = "                                ";

	fputs("  ", out);
	fwrite(s, 1, n, out);
	while (n < w) {
		size_t k = w - n < sizeof(sp) - 1 ? w - n : sizeof(sp) - 1;

		fwrite(sp, 1, k, out);
		n += k;
	}
}

/*
 * "  %7.2f%%" of v's share of the total.  A system-wide report has 100k
 * entries, most of them a sample or two: the same few values, whose
 * printf_fp formatting was most of the printing.  The text is a
 * function of v (total is fixed), so recent ones are kept.
 */
#define PCT_SLOTS 256

struct pct_cache {
	uint64_t total;
	struct {
		uint64_t v;
		bool used;
		char text[24];
	} e[PCT_SLOTS];
};

static const char *pct_text(struct pct_cache *c, uint64_t v)
{
	size_t i = (size_t)((v * 0x9e3779b97f4a7c15ull) >> 56) % PCT_SLOTS;

	if (!c->e[i].used || c->e[i].v != v) {
		snprintf(c->e[i].text, sizeof(c->e[i].text), "  %7.2f%%",
			 pct(v, c->total));
		c->e[i].v = v;
		c->e[i].used = true;
	}
	return c->e[i].text;
}

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

static const char *key_title(enum sfp_report_key k)
{
	switch (k) {
	case SFP_REPORT_SYM:
		return "Symbol";
	case SFP_REPORT_DSO:
		return "Shared Object";
	case SFP_REPORT_COMM:
		return "Command";
	case SFP_REPORT_PID:
		return "Pid:Command";
	}
	return "?";
}

static const char *key_name(enum sfp_report_key k)
{
	static const char *const n[] = { "sym", "dso", "comm", "pid" };

	return n[k];
}

/* The text of one key column of an entry. */
static void key_text(const struct rep *r, const struct rep_entry *e,
		     enum sfp_report_key k, bool plain, char *buf, size_t len)
{
	const struct sfp_profile_func *f = sfp_rep_func(r->p, e->loc);
	const char *comm = sfp_profile__string(r->p, e->comm);

	switch (k) {
	case SFP_REPORT_SYM:
		if (plain && (sfp_rep_sym(r->p, e->loc) & SYM_UNKNOWN_BIT))
			snprintf(buf, len, "0x%016" PRIx64,
				 sfp_profile__loc(r->p, e->loc)->addr);
		else if (e->line >= 0)
			snprintf(buf, len, "%s%s (inlined)", plain ? "" : "[.] ",
				 sfp_rep_fname(r->p, e->loc, e->line));
		else if (plain)
			cat2(buf, len, f->name, "");
		else if (sfp_rep_sym(r->p, e->loc) & SYM_UNKNOWN_BIT)
			snprintf(buf, len, "[%c] 0x%016" PRIx64,
				 f->kind == SFP_PROFILE_KERNEL ? 'k' : '.',
				 sfp_profile__loc(r->p, e->loc)->addr);
		else
			cat2(buf, len,
			     f->kind == SFP_PROFILE_KERNEL ? "[k] " : "[.] ",
			     f->name);
		break;
	case SFP_REPORT_DSO:
		cat2(buf, len, plain ? f->dso : basename_of(f->dso), "");
		break;
	case SFP_REPORT_COMM:
		cat2(buf, len, comm ? comm : "", "");
		break;
	case SFP_REPORT_PID:
		snprintf(buf, len, "%d:%s", (int)e->tid, comm ? comm : "");
		break;
	}
}

/*
 * A frame's name in call graphs; an unresolved one is its address, as
 * perf prints it ("%#lx" of the runtime address).  The buffer holds one
 * name at a time: each is printed before the next is asked for.
 */
static const char *frame_name(const struct rep *r, uint32_t loc, int32_t line)
{
	static char buf[4096];
	const struct sfp_profile_func *f = sfp_rep_func(r->p, loc);

	if (line >= 0) {
		snprintf(buf, sizeof(buf), "%s (inlined)",
			 sfp_rep_fname(r->p, loc, line));
		return buf;
	}
	if (strcmp(f->name, "[unknown]"))
		return f->name;
	snprintf(buf, sizeof(buf), "%#" PRIx64, sfp_profile__loc(r->p, loc)->ip);
	return buf;
}

/* --- graph mode: perf's tree of branches with percentages --- */

static int gcmp(const void *a, const void *b, void *ctx)
{
	const struct rep *cmp_rep = ctx;
	const struct rep_gnode *x = &cmp_rep->g[*(const uint32_t *)a];
	const struct rep_gnode *y = &cmp_rep->g[*(const uint32_t *)b];

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	/* ties: the branch made first first, as perf's callchain tree */
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Children of node n at or above the graph limit, heaviest first. */
static size_t kids(const struct rep *r, uint32_t n, uint32_t **out)
{
	size_t cnt = 0, i = 0;
	uint32_t c, *v;

	for (c = r->g[n].first_child; c != SFP_PROFILE_NONE; c = r->g[c].next)
		cnt++;
	v = malloc((cnt ? cnt : 1) * sizeof(*v));
	*out = v;
	if (!v)
		return 0;
	for (c = r->g[n].first_child; c != SFP_PROFILE_NONE; c = r->g[c].next)
		if (pct(r->g[c].period, r->total) >= r->o->graph_limit)
			v[i++] = c;
	qsort_r(v, i, sizeof(*v), gcmp, (void *)r);
	return i;
}

static int print_sub(const struct rep *r, FILE *out, uint32_t n,
		     const char *prefix, int depth)
{
	uint32_t *v;
	size_t nk = kids(r, n, &v), j;
	char *np;
	size_t pl = strlen(prefix);
	int err = 0;

	if (!v)
		return -ENOMEM;
	if (depth > 4096)	/* a bound on recursion, far above real stacks */
		goto out;
	if (nk == 1 && r->g[v[0]].period == r->g[n].period) {
		fprintf(out, "%s%s\n", prefix, frame_name(r, r->g[v[0]].loc, r->g[v[0]].line));
		err = print_sub(r, out, v[0], prefix, depth + 1);
		goto out;
	}
	if (!nk)
		goto out;
	np = malloc(pl + 64);
	if (!np) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(out, "%s|\n", prefix);
	for (j = 0; j < nk && !err; j++) {
		bool last = j + 1 == nk;
		char p[32];

		snprintf(p, sizeof(p), "%.2f%%", pct(r->g[v[j]].period, r->total));

		fprintf(out, "%s%s--%s--%s\n", prefix, last ? " " : "|", p,
			frame_name(r, r->g[v[j]].loc, r->g[v[j]].line));
		/* perf indents what follows a branch by a fixed 11 columns,
		 * whatever the width of its percentage */
		memcpy(np, prefix, pl);
		np[pl] = last ? ' ' : '|';
		memset(np + pl + 1, ' ', 10);
		np[pl + 11] = 0;
		err = print_sub(r, out, v[j], np, depth + 1);
		if (!last)
			fprintf(out, "%s|\n", prefix);
	}
	free(np);
out:
	free(v);
	return err;
}

static int print_graph(const struct rep *r, FILE *out, const struct rep_entry *e)
{
	uint32_t *v, top = e->graph;
	size_t nk;
	int err;

	if (top == SFP_PROFILE_NONE)
		return 0;
	nk = kids(r, top, &v);
	if (!v)
		return -ENOMEM;
	/* as perf: sorting by symbol first, a single root that is the
	 * entry's own symbol is not shown again; the graph starts below */
	if (nk == 1 && r->o->keys[0] == SFP_REPORT_SYM &&
	    sfp_rep_fsym(r->p, r->g[v[0]].loc, r->g[v[0]].line) ==
	    sfp_rep_fsym(r->p, e->loc, e->line)) {
		top = v[0];
		free(v);
		nk = kids(r, top, &v);
		if (!v)
			return -ENOMEM;
	}
	/* nothing to draw when every path is below the threshold */
	if (!nk) {
		free(v);
		return 0;
	}
	if (nk == 1 && r->g[v[0]].period == r->g[top].period) {
		fprintf(out, "            |\n            ---%s\n",
			frame_name(r, r->g[v[0]].loc, r->g[v[0]].line));
		err = print_sub(r, out, v[0], "               ", 0);
	} else {
		err = print_sub(r, out, top, "            ", 0);
	}
	free(v);
	fprintf(out, "\n");
	return err;
}

/* --- flat and folded: every path that ends somewhere, heaviest first --- */

static int print_paths(const struct rep *r, FILE *out, uint32_t n,
		       uint32_t *path, size_t depth, bool folded,
		       const char *lead)
{
	uint64_t below = 0;
	uint32_t *v, c;
	size_t nk, j;
	int err = 0;

	if (depth >= 4096)
		return 0;
	for (c = r->g[n].first_child; c != SFP_PROFILE_NONE; c = r->g[c].next)
		below += r->g[c].period;
	if (depth && r->g[n].period > below &&
	    pct(r->g[n].period - below, r->total) >= r->o->graph_limit) {
		double q = pct(r->g[n].period - below, r->total);

		if (folded) {
			fprintf(out, "%s%.2f%% ", lead, q);
			for (j = 0; j < depth; j++)
				fprintf(out, "%s%s", j ? ";" : "",
					frame_name(r, r->g[path[j]].loc, r->g[path[j]].line));
			fprintf(out, "\n");
		} else {
			fprintf(out, "%s%.2f%%\n", lead, q);
			for (j = 0; j < depth; j++)
				fprintf(out, "%s    %s\n", lead,
					frame_name(r, r->g[path[j]].loc, r->g[path[j]].line));
			fprintf(out, "\n");
		}
	}
	nk = kids(r, n, &v);
	if (!v)
		return -ENOMEM;
	for (j = 0; j < nk && !err; j++) {
		path[depth] = v[j];
		err = print_paths(r, out, v[j], path, depth + 1, folded, lead);
	}
	free(v);
	return err;
}

/* A plain-format field: tabs and line breaks (never in real symbol
 * names, but the format promises none) become spaces. */
static void plain_put(FILE *out, const char *v)
{
	for (; *v; v++)
		fputc(*v == '\t' || *v == '\n' || *v == '\r' ? ' ' : *v, out);
}

/* The plain format's "path" lines: folded paths with raw periods. */
static int plain_paths(const struct rep *r, FILE *out, uint32_t n,
		       uint32_t *path, size_t depth, size_t entry_no)
{
	uint64_t below = 0;
	uint32_t *v, c;
	size_t nk, j;
	int err = 0;

	if (depth >= 4096)
		return 0;
	for (c = r->g[n].first_child; c != SFP_PROFILE_NONE; c = r->g[c].next)
		below += r->g[c].period;
	if (depth && r->g[n].period > below &&
	    pct(r->g[n].period - below, r->total) >= r->o->graph_limit) {
		fprintf(out, "path\t%zu\t%.2f\t%" PRIu64 "\t", entry_no,
			pct(r->g[n].period - below, r->total),
			r->g[n].period - below);
		for (j = 0; j < depth; j++) {
			if (j)
				fputc(';', out);
			plain_put(out, frame_name(r, r->g[path[j]].loc, r->g[path[j]].line));
		}
		fprintf(out, "\n");
	}
	nk = kids(r, n, &v);
	if (!v)
		return -ENOMEM;
	for (j = 0; j < nk && !err; j++) {
		path[depth] = v[j];
		err = plain_paths(r, out, v[j], path, depth + 1, entry_no);
	}
	free(v);
	return err;
}

void sfp_rep_print_lost(const struct sfp_profile *p, FILE *out)
{
	struct sfp_profile_lost l;

	sfp_profile__lost(p, &l);
	if (l.samples)
		fprintf(out, "# Total Lost Samples: %" PRIu64 "\n", l.samples);
	if (l.records)
		fprintf(out, "# Lost records: %" PRIu64 " in %" PRIu64
			" chunks (the recorder's rings overflowed: what they "
			"held is missing)\n", l.records, l.chunks);
}

static int print_stdio(const struct rep *r, FILE *out, const char *ev_name)
{
	const struct sfp_report_opts *o = r->o;
	size_t w[SFP_REPORT_MAX_KEYS], i, k;
	char buf[4096];
	uint32_t *path = NULL;
	struct pct_cache *pc = calloc(1, sizeof(*pc));
	int err = 0;

	if (!pc)
		return -ENOMEM;
	pc->total = r->total;
	/* perf's unit_number__scnprintf(): 970, 1K, 12M */
	if (r->nr_samples >= 1000000)
		fprintf(out, "#\n# Samples: %" PRIu64 "M of event '%s'\n",
			r->nr_samples / 1000000, ev_name);
	else if (r->nr_samples >= 1000)
		fprintf(out, "#\n# Samples: %" PRIu64 "K of event '%s'\n",
			r->nr_samples / 1000, ev_name);
	else
		fprintf(out, "#\n# Samples: %" PRIu64 "  of event '%s'\n",
			r->nr_samples, ev_name);
	fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", r->total);
	/*
	 * Column widths from every entry, shown or not, as perf does.  An
	 * entry whose symbol is unresolved (the sample's, whatever the sort
	 * keys) also widens the dso column to 16, an address's hex digits,
	 * unless --dsos is given (perf's hists__set_unres_dso_col_len()).
	 */
	for (k = 0; k < o->nr_keys; k++) {
		w[k] = strlen(key_title(o->keys[k]));
		for (i = 0; i < r->nr_e; i++) {
			const struct rep_entry *e = &r->e[i];

			if (!(o->children ? e->children : e->self))
				continue;
			key_text(r, e, o->keys[k], false, buf, sizeof(buf));
			if (strlen(buf) > w[k])
				w[k] = strlen(buf);
			if (o->keys[k] == SFP_REPORT_DSO && !o->nr_dsos &&
			    e->line < 0 && w[k] < 16 &&
			    (sfp_rep_sym(r->p, e->loc) & SYM_UNKNOWN_BIT))
				w[k] = 16;
		}
	}
	fprintf(out, o->children ? "# Children      Self" : "# Overhead");
	for (k = 0; k < o->nr_keys; k++)
		fprintf(out, "  %-*s", k + 1 < o->nr_keys ? (int)w[k] : 0,
			key_title(o->keys[k]));
	fprintf(out, o->children ? "\n# ........  ........" : "\n# ........");
	for (k = 0; k < o->nr_keys; k++) {
		size_t d;

		fprintf(out, "  ");
		for (d = 0; d < w[k] && d < 64; d++)
			fputc('.', out);
	}
	fprintf(out, "\n#\n");
	if (o->graph == SFP_REPORT_FLAT || o->graph == SFP_REPORT_FOLDED) {
		path = malloc(4096 * sizeof(*path));
		if (!path) {
			free(pc);
			return -ENOMEM;
		}
	}
	for (i = 0; i < r->nr_order && !err; i++) {
		const struct rep_entry *e = &r->e[r->order[i]];

		if (o->children)
			fputs(pct_text(pc, e->children), out);
		fputs(pct_text(pc, e->self), out);
		for (k = 0; k < o->nr_keys; k++) {
			key_text(r, e, o->keys[k], false, buf, sizeof(buf));
			put_col(out, buf, k + 1 < o->nr_keys ? w[k] : 0);
		}
		fputc('\n', out);
		switch (o->graph) {
		case SFP_REPORT_GRAPH:
			err = print_graph(r, out, e);
			break;
		case SFP_REPORT_FLAT:
		case SFP_REPORT_FOLDED:
			if (e->graph == SFP_PROFILE_NONE)
				break;
			err = print_paths(r, out, e->graph, path, 0,
					  o->graph == SFP_REPORT_FOLDED,
					  "            ");
			if (o->graph == SFP_REPORT_FOLDED)
				fprintf(out, "\n");
			break;
		case SFP_REPORT_NONE:
			break;
		}
	}
	free(path);
	free(pc);
	fprintf(out, "\n");
	return err;
}

static int print_plain(const struct rep *r, FILE *out, const char *ev_name)
{
	const struct sfp_report_opts *o = r->o;
	uint32_t *path = malloc(4096 * sizeof(*path));
	char buf[4096];
	size_t i, k;
	int err = 0;

	if (!path)
		return -ENOMEM;
	fprintf(out, "event\t");
	plain_put(out, ev_name);
	fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\n", r->nr_samples, r->total);
	fprintf(out, "columns\tentry\toverhead%%\tself%%\toverhead\tself\tsamples\tkind");
	for (k = 0; k < o->nr_keys; k++)
		fprintf(out, "\t%s", key_name(o->keys[k]));
	fprintf(out, "\n");
	for (i = 0; i < r->nr_order && !err; i++) {
		const struct rep_entry *e = &r->e[r->order[i]];
		const struct sfp_profile_func *f = sfp_rep_func(r->p, e->loc);

		fprintf(out, "entry\t%zu\t%.2f\t%.2f\t%" PRIu64 "\t%" PRIu64
			     "\t%" PRIu64 "\t%c",
			i + 1, pct(o->children ? e->children : e->self, r->total),
			pct(e->self, r->total), o->children ? e->children : e->self,
			e->self, e->nr_samples,
			f->kind == SFP_PROFILE_KERNEL ? 'k' : 'u');
		for (k = 0; k < o->nr_keys; k++) {
			key_text(r, e, o->keys[k], true, buf, sizeof(buf));
			fputc('\t', out);
			plain_put(out, buf);
		}
		fprintf(out, "\n");
		if (o->graph != SFP_REPORT_NONE && e->graph != SFP_PROFILE_NONE)
			err = plain_paths(r, out, e->graph, path, 0, i + 1);
	}
	free(path);
	return err;
}

int sfp_report_print(const struct sfp_profile *p,
		     const struct sfp_report_opts *o, FILE *out)
{
	size_t ev, nev = sfp_profile__nr_events(p), i, n = sfp_profile__nr_samples(p);
	uint64_t nr_unmerged = 0, nr_trunc = 0;
	int err = 0;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		nr_unmerged += s->unmerged ? s->count : 0;
		nr_trunc += s->truncated ? s->count : 0;
	}
	if (o->plain)
		fprintf(out, "# sfprof report plain 1\n");
	else {
		fprintf(out, "# To display the perf.data header info, please use --header/--header-only options.\n#\n");
		if (nr_unmerged)
			fprintf(out, "# %" PRIu64 " samples without their deferred user callchain\n",
				nr_unmerged);
		if (nr_trunc)
			fprintf(out, "# %" PRIu64 " stacks truncated\n", nr_trunc);
		sfp_rep_print_lost(p, out);
	}
	for (ev = 0; ev < nev && !err; ev++) {
		struct rep r = { .p = p, .o = o, .event = (uint32_t)ev };
		const char *name = sfp_profile__event(p, (uint32_t)ev)->name;
		bool any = false;

		for (i = 0; i < n && !any; i++)
			any = sfp_profile__sample(p, i)->event == ev;
		if (!any)
			continue;
		err = sfp_rep_build(&r);
		if (!err && o->graph != SFP_REPORT_NONE)
			err = sfp_rep_graphs(&r);
		if (!err)
			err = o->plain ? print_plain(&r, out, name) :
					 print_stdio(&r, out, name);
		sfp_rep_free(&r);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
