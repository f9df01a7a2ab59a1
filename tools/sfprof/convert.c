// SPDX-License-Identifier: MIT
/*
 * `sfprof convert`: rewrite a perf.data file with its user call chains in
 * one of two forms:
 *
 *  --deferred (default)  the Linux 6.19 ABI: a sample's chain ends in
 *                        PERF_CONTEXT_USER_DEFERRED, cookie and the user
 *                        frames travel in PERF_RECORD_CALLCHAIN_DEFERRED
 *                        records, one per kernel entry as the kernel does
 *                        (the deferral engine, defer/engine.c, decides the
 *                        cookies; record/encode.c writes the records);
 *  --inline              the classic PERF_CONTEXT_USER part in every
 *                        sample, which every perf version reads.
 *
 * Inputs: perf's frame-pointer files (-g), perf's dwarf-mode files (the
 * stack snapshots are unwound with sfprof's unwinder and dropped), and
 * files in either form (deferred input is stitched first, like perf 6.19).
 * The output carries the build-ids of the DSOs its samples hit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/perf.h>
#include <sfprof/stitch.h>

#include "cli.h"
#include "elf/elf.h"
#include "perf/dwarf.h"
#include "perf/machine.h"
#include "record/encode.h"

#define MAX_CHAIN 4096

struct conv;
static int out_write(struct conv *c, const void *rec, size_t size);

/*
 * A place in the output, in push order (see "input order" below): the
 * bytes the event at that place wrote, once it has been handled.
 */
struct oslot {
	size_t off, len;	/* in conv.arena */
	bool done;
};

struct conv {
	const char *in_path, *out_path;
	bool deferred;
	struct sfp_perf_reader *rd;
	struct sfp_perf_writer *w;
	struct sfp_machine *m;
	struct sfp_perf_unwinder *uw;
	struct sfp_perf_attr *oattr;	/* output attrs, by evsel index */
	size_t nr_evsels;
	size_t track;			/* evsel carrying deferred records */
	bool dwarf;
	struct sfp_defer_engine *eng;	/* --deferred: cookies and records */
	uint64_t *chain, *user;
	size_t user_cap;
	uint8_t *buf;
	int out_err;	/* the output's error: an I/O error, not bad input */
	/* input order: places from push index q_base on, q_head written */
	struct sfp_stitcher *st;
	struct oslot *q;
	size_t q_head, q_n, q_cap;
	uint64_t q_base, next_pos;
	size_t cur;			/* place being written; NO_SLOT: the file */
	uint8_t *arena;
	size_t a_len, a_cap;
	/* counts for the summary */
	uint64_t nr_samples, nr_records, nr_unwound, nr_no_user;
};

#define NO_SLOT ((size_t)-1)

static int file_write(struct conv *c, const void *rec, size_t size)
{
	int err = sfp_perf_writer__write(c->w, rec, size);

	if (err && err != -EINVAL && !c->out_err)
		c->out_err = err;
	return err;
}

/* A record to the output (or to its place); a failure is the output's. */
static int out_write(struct conv *c, const void *rec, size_t size)
{
	struct oslot *o;

	if (c->cur == NO_SLOT)
		return file_write(c, rec, size);
	if (c->a_len + size > c->a_cap) {
		size_t cap = c->a_cap ? c->a_cap : 1 << 16;
		uint8_t *n;

		while (cap < c->a_len + size)
			cap *= 2;
		if (!(n = realloc(c->arena, cap)))
			return -ENOMEM;
		c->arena = n;
		c->a_cap = cap;
	}
	o = &c->q[c->cur];
	if (!o->len)
		o->off = c->a_len;	/* one event's records are contiguous */
	memcpy(c->arena + c->a_len, rec, size);
	c->a_len += size;
	o->len += size;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof convert -i IN -o OUT [--deferred|--inline]\n"
"\n"
"Rewrite a perf.data file (perf's -g or --call-graph dwarf files, or\n"
"sfprof's) with user call chains in the 6.19 deferred form or inline.\n"
"\n"
"  -i, --input FILE   input perf.data ('-': pipe-mode stream on stdin)\n"
"  -o, --output FILE  output perf.data (may be the input: it is written\n"
"                     beside it and renamed; an existing FILE is kept as\n"
"                     FILE.old, as perf does)\n"
"      --deferred     PERF_RECORD_CALLCHAIN_DEFERRED form (default)\n"
"      --inline       classic PERF_CONTEXT_USER chains (any perf reads it)\n"
"  -h, --help         this text\n");
}

/* --- setup ---------------------------------------------------------------- */

static int setup_writer(struct conv *c)
{
	const struct sfp_perf_header_info *h = sfp_perf_reader__header(c->rd);
	size_t i, n = sfp_perf_reader__nr_evsels(c->rd);
	bool have_track = false;
	int err;

	SFP_OPTS(sfp_perf_writer_opts, wo, .hostname = h->hostname,
		 .osrelease = h->osrelease, .arch = h->arch,
		 .cmdline = h->cmdline, .nr_cmdline = h->nr_cmdline,
		 .keep_old = true);
	if (!n) {
		cli_err("%s: no events declared", c->in_path);
		return -EBADMSG;
	}
	c->oattr = calloc(n, sizeof(*c->oattr));
	if (!c->oattr)
		return -ENOMEM;
	c->nr_evsels = n;
	for (i = 0; i < n; i++) {
		const struct sfp_perf_evsel *e = sfp_perf_reader__evsel(c->rd, i);
		struct sfp_perf_attr *a = &c->oattr[i];

		*a = e->attr;
		if (a->sample_type & (SFP_PERF_SAMPLE_REGS_USER |
				      SFP_PERF_SAMPLE_STACK_USER)) {
			c->dwarf = true;
			a->sample_type &= ~(SFP_PERF_SAMPLE_REGS_USER |
					    SFP_PERF_SAMPLE_STACK_USER);
			a->sample_regs_user = 0;
			a->sample_stack_user = 0;
			a->flags &= ~SFP_PERF_ATTR_FLAG_EXCLUDE_CALLCHAIN_USER;
		}
		a->flags &= ~(SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN |
			      SFP_PERF_ATTR_FLAG_DEFER_OUTPUT);
		if (c->deferred && (a->sample_type & SFP_PERF_SAMPLE_CALLCHAIN))
			a->flags |= SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN;
		if (!have_track && (a->flags & SFP_PERF_ATTR_FLAG_MMAP)) {
			c->track = i;
			have_track = true;
		}
	}
	if (c->deferred) {
		struct sfp_perf_attr *t = &c->oattr[c->track];

		/* the record's tid comes from its sample_id trailer */
		if (!(t->flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL) ||
		    !(t->sample_type & SFP_PERF_SAMPLE_TID)) {
			cli_err("%s: events lack sample_id_all with tids; use --inline",
				c->in_path);
			return -EOPNOTSUPP;
		}
		t->flags |= SFP_PERF_ATTR_FLAG_DEFER_OUTPUT;
	}
	err = sfp_perf_writer__open(c->out_path, &wo, &c->w);
	if (err) {
		c->out_err = err;
		return err;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_perf_evsel *e = sfp_perf_reader__evsel(c->rd, i);

		err = sfp_perf_writer__add_evsel(c->w, &c->oattr[i], e->ids,
						 e->nr_ids, e->name);
		if (err < 0)
			return err;
	}
	return 0;
}

static void mark_hits(struct conv *c, uint32_t pid, const uint64_t *ips,
		      uint64_t nr)
{
	uint64_t i;

	for (i = 0; i < nr; i++) {
		const struct sfp_pmap *map;

		if (ips[i] >= SFP_PERF_CONTEXT_MAX)
			continue;
		map = sfp_machine__find(c->m, pid, ips[i]);
		if (map)
			sfp_machine__dso(c->m, map->dso)->hit = true;
	}
}

/* --- samples ---------------------------------------------------------------- */

static int put_user(struct conv *c, uint64_t *nu, uint64_t ip)
{
	if (*nu >= MAX_CHAIN)
		return 0;	/* deeper than any record can hold: cut */
	c->user[(*nu)++] = ip;
	return 0;
}

/* A sample with its rewritten chain (c->chain, nk entries). */
static int write_sample(struct conv *c, const struct sfp_perf_event *ev,
			struct sfp_perf_sample *o, uint64_t nk)
{
	const struct sfp_perf_attr *a = &c->oattr[ev->evsel->idx];
	int size;

	o->ips = c->chain;
	o->nr_ips = nk;
	size = sfp_perf_write_sample(a, ev->misc, o, c->buf, 65536);
	if (size == -EINVAL && nk > 16) {
		/* too deep for one record: keep the innermost frames */
		o->nr_ips = 16;
		size = sfp_perf_write_sample(a, ev->misc, o, c->buf, 65536);
	}
	if (size < 0)
		return size;
	return out_write(c, c->buf, (size_t)size);
}

/* What on_sample hands the engine with a sample (its priv). */
struct pass {
	const struct sfp_perf_event *ev;
	struct sfp_perf_sample *o;
	uint64_t nk;	/* kernel part already in c->chain */
};

/* The engine's unwind: never called, every sample carries its chain. */
static int defer_unwind(void *ctx, const struct sfp_defer_sample *s,
			uint64_t *ips, size_t max)
{
	(void)ctx, (void)s, (void)ips, (void)max;
	return -EINVAL;
}

static int defer_sample(void *ctx, const struct sfp_defer_sample *s,
			const struct sfp_defer_user *u)
{
	struct conv *c = ctx;
	const struct pass *p = s->priv;
	uint64_t nk = p->nk;

	c->chain[nk++] = SFP_PERF_CONTEXT_USER_DEFERRED;
	c->chain[nk++] = u->cookie;
	return write_sample(c, p->ev, p->o, nk);
}

/* The record goes out on the tracking event, as the kernel's does. */
static int defer_record(void *ctx, const struct sfp_defer_origin *o,
			uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct conv *c = ctx;
	const struct sfp_perf_attr *t = &c->oattr[c->track];
	const struct sfp_perf_evsel *te = sfp_perf_reader__evsel(c->rd, c->track);
	struct perf_event_attr pa = {
		.sample_type = t->sample_type,
		.sample_id_all = !!(t->flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL),
	};
	int n = sfp_record_encode_deferred(&pa, te->nr_ids ? te->ids[0] : 0, o,
					   cookie, ips, nr, c->buf, 65536);

	if (n < 0)
		return n;
	c->nr_records++;
	return out_write(c, c->buf, (size_t)n);
}

static const struct sfp_defer_ops defer_ops = {
	.unwind = defer_unwind,
	.emit_sample = defer_sample,
	.emit_deferred = defer_record,
};

static int on_sample(struct conv *c, const struct sfp_perf_event *ev)
{
	const struct sfp_perf_sample *s = &ev->sample;
	const struct sfp_perf_attr *a = &c->oattr[ev->evsel->idx];
	struct sfp_perf_sample o = *s;
	uint64_t nk = 0, nu = 0, i, n = s->nr_ips;
	bool in_user = false, user_part = false;
	size_t nr_end = (size_t)n;
	int size, err;

	c->nr_samples++;
	/* a context value nobody knows: keep the chain as it is (perf
	 * shows such a sample without a chain) */
	for (i = 0; i < n; i++)
		if (s->ips[i] >= SFP_PERF_CONTEXT_MAX && s->ips[i] != SFP_PERF_CONTEXT_HV &&
		    s->ips[i] != SFP_PERF_CONTEXT_KERNEL &&
		    s->ips[i] != SFP_PERF_CONTEXT_USER &&
		    s->ips[i] != SFP_PERF_CONTEXT_USER_DEFERRED &&
		    s->ips[i] != SFP_PERF_CONTEXT_GUEST &&
		    s->ips[i] != SFP_PERF_CONTEXT_GUEST_KERNEL &&
		    s->ips[i] != SFP_PERF_CONTEXT_GUEST_USER) {
			o.user_regs_abi = 0;
			o.user_stack_size = 0;
			size = sfp_perf_write_sample(a, ev->misc, &o, c->buf, 65536);
			if (size < 0)
				return size;
			return out_write(c, c->buf, (size_t)size);
		}
	/* an unmerged deferred chain: its user part is gone for good */
	if (s->deferred && n >= 2)
		nr_end = (size_t)n - 2;
	for (i = 0; i < nr_end; i++) {
		uint64_t ip = s->ips[i];

		if (ip == SFP_PERF_CONTEXT_USER ||
		    ip == SFP_PERF_CONTEXT_USER_DEFERRED) {
			in_user = true;
			user_part = true;
			continue;
		}
		if (ip >= SFP_PERF_CONTEXT_MAX)
			in_user = false;
		if (in_user)
			put_user(c, &nu, ip);
		else if (nk < MAX_CHAIN)
			c->chain[nk++] = ip;
	}
	if (!user_part && c->uw && sfp_perf_sample_has_snapshot(s)) {
		uint64_t *ips = NULL;
		size_t cap = 0;
		int k = sfp_perf_unwinder__unwind(c->uw, ev, &ips, &cap, false);

		for (i = 0; k > 0 && i < (uint64_t)k; i++)
			put_user(c, &nu, ips[i]);
		if (k > 0)
			c->nr_unwound++;
		free(ips);
		if (k < 0)
			return k;
	}
	if (!nu)
		c->nr_no_user++;
	mark_hits(c, s->pid, c->chain, nk);
	mark_hits(c, s->pid, c->user, nu);

	o.user_regs_abi = 0;
	o.user_stack_size = 0;
	if (c->deferred && nu &&
	    (a->flags & SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN)) {
		/* the engine decides the cookie (one per kernel entry) and
		 * writes the sample through defer_sample */
		struct pass pp = { ev, &o, nk };
		struct sfp_defer_sample ds = {
			.pid = s->pid, .tid = s->tid, .cpu = s->cpu,
			.time = s->time, .has_user = true,
			.kernel_mode = (ev->misc & SFP_PERF_MISC_CPUMODE_MASK) ==
				       SFP_PERF_MISC_KERNEL,
			.user_known = true, .user_ips = c->user,
			.nr_user_ips = (size_t)nu, .priv = &pp,
		};

		return sfp_defer_engine__add(c->eng, &ds);
	}
	if (nu) {
		/* written inline: the tid's pending entry ends before it */
		if (c->eng && (err = sfp_defer_engine__task_exit(c->eng, s->tid)))
			return err;
		c->chain[nk++] = SFP_PERF_CONTEXT_USER;
		memcpy(c->chain + nk, c->user, (size_t)nu * 8);
		nk += nu;
	}
	return write_sample(c, ev, &o, nk);
}

static int handle(struct conv *c, const struct sfp_perf_event *ev)
{
	int err;

	if (!c->w && (err = setup_writer(c)))
		return err;
	if (ev->type == SFP_PERF_RECORD_SAMPLE)
		return ev->evsel ? on_sample(c, ev) : 0;
	if (ev->type == SFP_PERF_RECORD_CALLCHAIN_DEFERRED)
		return 0;	/* unmatched: its samples were flushed */
	if ((err = sfp_machine__event(c->m, ev)))
		return err;
	if (c->uw && (err = sfp_perf_unwinder__event(c->uw, ev)))
		return err;
	return out_write(c, ev->raw, ev->size);
}

/* --- input order ---------------------------------------------------------- */

/*
 * The stitcher hands a deferred sample over when its record comes, after
 * the events that followed it.  Written then, a sample would swap places
 * with a sample of another thread taken in the same nanosecond, and perf
 * orders such ties by their place in the file.  So while a sample waits,
 * the output of every later event is kept at its place (push index), and
 * the places are written in order as the oldest ones fill.  A sample that
 * waits forever (its thread exited in the kernel) would hold the whole
 * rest of the file: past Q_MAX places or A_MAX bytes the waiting places
 * are given up, and such a sample is written when it comes, as before.
 */
#define Q_MAX ((size_t)1 << 20)
#define A_MAX ((size_t)256 << 20)

static int q_add(struct conv *c, uint64_t pos)
{
	if (!c->q_n)
		c->q_base = pos;
	if (c->q_n == c->q_cap) {
		size_t cap = c->q_cap ? c->q_cap * 2 : 1024;
		struct oslot *n = realloc(c->q, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->q = n;
		c->q_cap = cap;
	}
	c->q[c->q_n++] = (struct oslot){ 0 };
	return 0;
}

/*
 * With many threads some sample nearly always waits, and the queue never
 * runs empty: once half of it is written, the places still to write move
 * to the front and their bytes to a new arena, in place order.
 */
static int q_compact(struct conv *c)
{
	size_t i, live = c->q_n - c->q_head, len = 0, cap;
	uint8_t *n;

	for (i = c->q_head; i < c->q_n; i++)
		len += c->q[i].len;
	cap = len > c->a_cap / 2 ? len : c->a_cap / 2;
	n = malloc(cap ? cap : 1 << 16);
	if (!n)
		return -ENOMEM;
	len = 0;
	for (i = c->q_head; i < c->q_n; i++) {
		struct oslot *o = &c->q[i];

		if (o->len)
			memcpy(n + len, c->arena + o->off, o->len);
		o->off = len;
		len += o->len;
	}
	free(c->arena);
	c->arena = n;
	c->a_cap = cap ? cap : 1 << 16;
	c->a_len = len;
	memmove(c->q, c->q + c->q_head, live * sizeof(*c->q));
	c->q_base += c->q_head;
	c->q_head = 0;
	c->q_n = live;
	return 0;
}

/* Write the filled places at the front; all of them with give_up. */
static int q_drain(struct conv *c, bool give_up)
{
	int err;

	while (c->q_head < c->q_n && (c->q[c->q_head].done || give_up)) {
		const struct oslot *o = &c->q[c->q_head++];
		size_t at = o->off, end = o->off + o->len;

		while (at < end) {
			uint16_t sz;

			memcpy(&sz, c->arena + at + 6, 2);
			if ((err = file_write(c, c->arena + at, sz)))
				return err;
			at += sz;
		}
	}
	if (c->q_head == c->q_n) {
		c->q_base += c->q_n;
		c->q_head = c->q_n = 0;
		c->a_len = 0;
	} else if (c->q_head >= 1024 && c->q_head * 2 >= c->q_n) {
		return q_compact(c);
	}
	return 0;
}

static int on_event(void *ctx, const struct sfp_perf_event *ev,
		    enum sfp_stitch_how how)
{
	struct conv *c = ctx;
	uint64_t pos = sfp_stitcher__position(c->st);
	int err;

	(void)how;
	c->cur = NO_SLOT;
	if (c->q_n && pos >= c->q_base && pos - c->q_base < c->q_n)
		c->cur = (size_t)(pos - c->q_base);
	err = handle(c, ev);
	if (c->cur != NO_SLOT)
		c->q[c->cur].done = true;
	c->cur = NO_SLOT;
	return err;
}

/* Push one event through the stitcher, keeping its place. */
static int push(struct conv *c, const struct sfp_perf_event *ev)
{
	const struct sfp_stitch_stats *ss = sfp_stitcher__stats(c->st);
	uint64_t pos = c->next_pos++, waited = ss->nr_waited;
	bool placed = false;
	int err;

	if (c->q_n) {
		if ((err = q_add(c, pos)))
			return err;
		placed = true;
	}
	if ((err = sfp_stitcher__push(c->st, ev)))
		return err;
	if (ss->nr_waited != waited) {
		/* it waits: its place stays open */
		if (!placed && (err = q_add(c, pos)))
			return err;
	} else if (placed) {
		c->q[pos - c->q_base].done = true; /* a record: no output */
	}
	return q_drain(c, c->q_n - c->q_head > Q_MAX || c->a_len > A_MAX);
}

/* --- build-ids ------------------------------------------------------------ */

static void add_build_ids(struct conv *c)
{
	const struct sfp_perf_header_info *h = sfp_perf_reader__header(c->rd);
	size_t i, j, n = sfp_machine__nr_dsos(c->m);

	for (i = 0; i < n; i++) {
		struct sfp_pdso *d = sfp_machine__dso(c->m, (uint32_t)i);
		const uint8_t *id = d->build_id_size ? d->build_id : NULL;
		size_t len = d->build_id_size;
		struct sfp_elf *e = NULL;

		if (!d->hit)
			continue;
		for (j = 0; !id && j < h->nr_build_ids; j++)
			if (!strcmp(h->build_ids[j].filename, d->name)) {
				id = h->build_ids[j].id;
				len = h->build_ids[j].size;
			}
		if (!id && d->name[0] == '/' && !sfp_elf_open(d->name, &e)) {
			const uint8_t *bid;
			size_t bl;

			if (!sfp_elf_build_id(e, &bid, &bl) && bl && bl <= 20)
				sfp_perf_writer__add_build_id(c->w, SFP_PERF_MISC_USER,
							      -1, bid, bl, d->name);
			sfp_elf_close(&e);
			continue;
		}
		if (id && len)
			sfp_perf_writer__add_build_id(c->w,
						      d->kernel ? SFP_PERF_MISC_KERNEL :
								  SFP_PERF_MISC_USER,
						      -1, id, len, d->name);
	}
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "deferred", no_argument, NULL, 'D' },
		{ "inline", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct conv c = { .deferred = true };
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	int opt, err, ret = 0;

	optind = 1;
	cli_batch_heap();
	while ((opt = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			c.in_path = optarg;
			break;
		case 'o':
			c.out_path = optarg;
			break;
		case 'D':
			c.deferred = true;
			break;
		case 'I':
			c.deferred = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || !c.in_path || !c.out_path) {
		cli_err("convert: -i and -o are required");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(c.out_path, "-")) {
		cli_err("convert: -o -: writing perf.data to standard output "
			"(pipe mode) is not supported; give a file name");
		return EXIT_USAGE;
	}
	if (!cli_check_input("convert", NULL, c.in_path))
		return EXIT_USAGE;
	err = sfp_perf_reader__open(c.in_path, NULL, &c.rd);
	if (err) {
		cli_err("%s: %s", c.in_path, sfp_strerror(err));
		return err == -EBADMSG || err == -EOPNOTSUPP ? EXIT_INVALID :
							       EXIT_USAGE;
	}
	if (sfp_perf_reader__header(c.rd)->swapped) {
		cli_err("%s: files of the other byte order cannot be converted",
			c.in_path);
		ret = EXIT_INVALID;
		goto out;
	}
	c.chain = malloc((MAX_CHAIN * 2 + 4) * sizeof(uint64_t));
	c.user = malloc(MAX_CHAIN * sizeof(uint64_t));
	c.buf = malloc(65536);
	if (!c.chain || !c.user || !c.buf || sfp_machine__new(&c.m) ||
	    sfp_perf_unwinder__new(sfp_perf_reader__header(c.rd), &c.uw) ||
	    sfp_stitcher__new(NULL, on_event, &c, &st) ||
	    (c.deferred &&
	     sfp_defer_engine__new(&defer_ops, &c, false, 0, &c.eng))) {
		cli_err("convert: out of memory");
		ret = EXIT_USAGE;
		goto out;
	}
	c.st = st;
	c.cur = NO_SLOT;
	while ((err = sfp_perf_reader__next(c.rd, &ev)) > 0)
		if ((err = push(&c, ev)))
			break;
	if (!err)
		err = sfp_stitcher__flush(st);
	if (!err)
		err = q_drain(&c, true);
	if (!err && !c.w)
		err = setup_writer(&c);
	if (!err && c.eng)
		err = sfp_defer_engine__flush(c.eng);
	if (c.out_err) {
		cli_err("cannot write %s: %s", c.out_path, strerror(-c.out_err));
		ret = EXIT_USAGE;
		goto out;
	}
	if (err) {
		cli_err("convert: %s: %s", c.in_path, sfp_strerror(err));
		ret = err == -ENOMEM || err == -EIO || err == -ENOSPC ?
			      EXIT_USAGE : EXIT_INVALID;
		goto out;
	}
	add_build_ids(&c);
	err = sfp_perf_writer__close(&c.w);
	if (err) {
		cli_err("cannot write %s: %s", c.out_path, strerror(-err));
		ret = EXIT_USAGE;
		goto out;
	}
	if (sfp_perf_reader__stats(c.rd)->nr_bad_records) {
		cli_err("%s: %" PRIu64 " malformed records skipped", c.in_path,
			sfp_perf_reader__stats(c.rd)->nr_bad_records);
		ret = EXIT_INVALID;
	}
	fprintf(stderr, "sfprof convert: %" PRIu64 " samples (%" PRIu64
		" unwound from stack snapshots, %" PRIu64
		" without user frames), %" PRIu64 " deferred records\n",
		c.nr_samples, c.nr_unwound, c.nr_no_user, c.nr_records);
out:
	sfp_perf_writer__free(&c.w);
	sfp_stitcher__free(&st);
	sfp_perf_unwinder__free(&c.uw);
	sfp_machine__free(&c.m);
	sfp_perf_reader__free(&c.rd);
	sfp_defer_engine__free(&c.eng);
	free(c.q);
	free(c.arena);
	free(c.oattr);
	free(c.chain);
	free(c.user);
	free(c.buf);
	return ret;
}
