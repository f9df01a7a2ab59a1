// SPDX-License-Identifier: MIT
/*
 * `sfprof convert`: rewrite a perf.data file with its user call chains in
 * one of two forms:
 *
 *  --deferred (default)  the Linux 6.19 ABI: a sample's chain ends in
 *                        PERF_CONTEXT_USER_DEFERRED, cookie and the user
 *                        frames travel in PERF_RECORD_CALLCHAIN_DEFERRED
 *                        records, one per kernel entry as the kernel does;
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

#define MAX_CHAIN 4096

struct conv;
static int out_write(struct conv *c, const void *rec, size_t size);

/* The user part of a tid's current kernel entry, not yet written. */
struct pending {
	uint32_t tid;
	bool used;
	bool kernel_entry;	/* sample taken in kernel mode */
	uint64_t cookie;
	struct sfp_perf_sample id;	/* sample_id fields of the record */
	uint64_t nr;
	uint64_t *ips;
	size_t cap;
};

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
	uint64_t cookie_ctr;
	struct pending *pend;
	size_t pend_cap, pend_n;
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

/* --- pending deferred records per tid ------------------------------------ */

static struct pending *pend_slot(struct conv *c, uint32_t tid, bool create)
{
	size_t i, mask;

	if ((c->pend_n + 1) * 2 > c->pend_cap && create) {
		size_t ocap = c->pend_cap, j, ncap = ocap ? ocap * 2 : 64;
		struct pending *old = c->pend, *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		c->pend = n;
		c->pend_cap = ncap;
		for (j = 0; j < ocap; j++) {
			if (!old[j].used)
				continue;
			for (i = (old[j].tid * 2654435761u) & (ncap - 1); n[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = old[j];
		}
		free(old);
	}
	if (!c->pend_cap)
		return NULL;
	mask = c->pend_cap - 1;
	for (i = (tid * 2654435761u) & mask; c->pend[i].used; i = (i + 1) & mask)
		if (c->pend[i].tid == tid)
			return &c->pend[i];
	if (!create)
		return NULL;
	c->pend[i].used = true;
	c->pend[i].tid = tid;
	c->pend[i].cookie = 0;
	c->pend_n++;
	return &c->pend[i];
}

/* Write a tid's pending PERF_RECORD_CALLCHAIN_DEFERRED. */
static int pend_flush(struct conv *c, struct pending *p)
{
	const struct sfp_perf_attr *a = &c->oattr[c->track];
	size_t off = 24, size;
	uint16_t misc = SFP_PERF_MISC_USER, sz;
	uint32_t type = SFP_PERF_RECORD_CALLCHAIN_DEFERRED;
	int n;

	if (!p->cookie)
		return 0;
	memcpy(c->buf, &type, 4);
	memcpy(c->buf + 4, &misc, 2);
	memcpy(c->buf + 8, &p->cookie, 8);
	memcpy(c->buf + 16, &p->nr, 8);
	memcpy(c->buf + off, p->ips, (size_t)p->nr * 8);
	off += (size_t)p->nr * 8;
	n = sfp_perf_write_sample_id(a, &p->id, c->buf + off, 65536 - off);
	if (n < 0)
		return n;
	size = off + (size_t)n;
	if (size > 65535)
		return -E2BIG;
	sz = (uint16_t)size;
	memcpy(c->buf + 6, &sz, 2);
	p->cookie = 0;
	c->nr_records++;
	return out_write(c, c->buf, size);
}

static int pend_flush_all(struct conv *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->pend_cap; i++)
		if (c->pend[i].used && (err = pend_flush(c, &c->pend[i])))
			return err;
	return 0;
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
		struct pending *p = pend_slot(c, s->tid, true);
		bool kernel = (ev->misc & SFP_PERF_MISC_CPUMODE_MASK) ==
			      SFP_PERF_MISC_KERNEL;

		if (!p)
			return -ENOMEM;
		/* the same kernel entry: one unwind, one cookie (as the
		 * kernel does for samples before the return to user) */
		if (!(p->cookie && kernel && p->kernel_entry && p->nr == nu &&
		      !memcmp(p->ips, c->user, (size_t)nu * 8))) {
			if ((err = pend_flush(c, p)))
				return err;
			if (p->cap < nu) {
				uint64_t *v = realloc(p->ips, (size_t)nu * 8);

				if (!v)
					return -ENOMEM;
				p->ips = v;
				p->cap = (size_t)nu;
			}
			memcpy(p->ips, c->user, (size_t)nu * 8);
			p->nr = nu;
			/* the kernel's form: counter << 32 | (cpu + 1), odd
			 * counter, never 0 */
			c->cookie_ctr += 2;
			p->cookie = ((c->cookie_ctr | 1) << 32) |
				    (uint32_t)(s->cpu + 1);
			p->kernel_entry = kernel;
		}
		p->id = *s;
		{
			const struct sfp_perf_evsel *te =
				sfp_perf_reader__evsel(c->rd, c->track);

			p->id.id = te->nr_ids ? te->ids[0] : s->id;
		}
		c->chain[nk++] = SFP_PERF_CONTEXT_USER_DEFERRED;
		c->chain[nk++] = p->cookie;
	} else if (nu) {
		struct pending *p = pend_slot(c, s->tid, false);

		if (p && (err = pend_flush(c, p)))
			return err;
		c->chain[nk++] = SFP_PERF_CONTEXT_USER;
		memcpy(c->chain + nk, c->user, (size_t)nu * 8);
		nk += nu;
	}
	o.ips = c->chain;
	o.nr_ips = nk;
	size = sfp_perf_write_sample(a, ev->misc, &o, c->buf, 65536);
	if (size == -EINVAL && nk > 16) {
		/* too deep for one record: keep the innermost frames */
		o.nr_ips = 16;
		size = sfp_perf_write_sample(a, ev->misc, &o, c->buf, 65536);
	}
	if (size < 0)
		return size;
	return out_write(c, c->buf, (size_t)size);
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
	size_t i;

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
	    sfp_stitcher__new(NULL, on_event, &c, &st)) {
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
	if (!err)
		err = pend_flush_all(&c);
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
	for (i = 0; i < c.pend_cap; i++)
		free(c.pend[i].ips);
	free(c.pend);
	free(c.q);
	free(c.arena);
	free(c.oattr);
	free(c.chain);
	free(c.user);
	free(c.buf);
	return ret;
}
