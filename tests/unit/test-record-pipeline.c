// SPDX-License-Identifier: MIT
/*
 * The whole producer on a real child: session -> address spaces ->
 * deferral engine -> unwinder -> output records, checked by reading the
 * output back: every sample's user part is found, stitched as perf 6.19
 * does, and compared with the functions of the program (by its symbol
 * table), and the deferred records obey the kernel's ordering rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sfprof/record.h>

#include "perf/perf-int.h"
#include "record/encode.h"
#include "record/pipeline.h"
#include "record/recorder.h"
#include "record/record.h"
#include "test.h"

struct out {
	uint64_t **recs;
	size_t n, cap;
};

static int collect(void *ctx, const void *rec, size_t size)
{
	struct out *o = ctx;

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 4096;
		o->recs = realloc(o->recs, o->cap * sizeof(*o->recs));
		if (!o->recs)
			return -ENOMEM;
	}
	o->recs[o->n] = malloc(size);
	if (!o->recs[o->n])
		return -ENOMEM;
	memcpy(o->recs[o->n++], rec, size);
	return 0;
}

static void out_free(struct out *o)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		free(o->recs[i]);
	free(o->recs);
}

struct func {
	char name[32];
	uint64_t lo, hi;
};

/* Address ranges of the named functions (prefix match: .constprop). */
static int find_funcs(const char *path, struct func *f, size_t nf)
{
	Elf_Scn *scn = NULL;
	size_t found = 0;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			nm = elf_strptr(e, sh.sh_link, sym.st_name);
			for (k = 0; nm && k < nf; k++) {
				size_t l = strlen(f[k].name);

				/* foo or foo.constprop.0, not foo.cold */
				if (!strncmp(nm, f[k].name, l) &&
				    (nm[l] == 0 || nm[l] == '.') &&
				    !strstr(nm + l, ".cold") && !f[k].hi) {
					f[k].lo = sym.st_value;
					f[k].hi = sym.st_value + sym.st_size;
					found++;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found == nf ? 0 : -ENOENT;
}

static int func_of(const struct func *f, size_t nf, uint64_t ip)
{
	size_t k;

	for (k = 0; k < nf; k++)
		if (ip >= f[k].lo && ip < f[k].hi)
			return (int)k;
	return -1;
}

/*
 * Is the user chain complete?  A sample in the leaf f[0] must show
 * f[0] -> f[1] -> f[2] -> main: adjacent frames for the flat program,
 * in order with libc frames between them for the qsort callback.  Any
 * other sample (the loop around the leaf, clock_gettime, a sanitizer's
 * interceptor) must still reach f[2] -> main.
 */
static bool chain_ok(const struct func *f, size_t nf, const uint64_t *ips,
		     size_t n, bool through_libc, uint64_t *leaf_top)
{
	size_t i, k;

	if (!n)
		return false;
	k = func_of(f, nf, ips[0]) == 0 ? 0 : 2;
	if (k == 0) {
		(*leaf_top)++;
		if (!through_libc) {
			for (k = 0; k < nf && k < n; k++)
				if (func_of(f, nf, ips[k]) != (int)k)
					return false;
			return k == nf;
		}
	}
	for (i = 0; i < n && k < nf; i++)
		if (func_of(f, nf, ips[i]) == (int)k)
			k++;
	if (k != nf && getenv("SFP_TEST_DEBUG")) {
		fprintf(stderr, "  incomplete:");
		for (i = 0; i < n && i < 12; i++)
			fprintf(stderr, " %#llx", (unsigned long long)ips[i]);
		fprintf(stderr, "\n");
	}
	return k == nf;
}

static char prog[512];

/* The child's path, in prog. */
static void prog_path(void)
{
	snprintf(prog, sizeof(prog), "%s/tests/progs/record-spin",
		 getenv("SFP_BUILD") ? getenv("SFP_BUILD") : "build");
}

/*
 * Record the child in mode for ms of its CPU time.  Its output goes to o
 * as records, or with on_event to that consumer as typed events.
 */
static int record_to(const char *mode, const char *ms, bool inline_mode,
		     uint64_t freq, struct out *o, sfp_rec_event_fn on_event,
		     void *ectx, struct sfp_record **rp,
		     struct sfp_rec_pipe **pp)
{
	char *argv[] = { prog, (char *)mode, (char *)ms, NULL };
	SFP_OPTS(sfp_record_opts, ro, .argv = argv, .freq = freq);
	SFP_OPTS(sfp_rec_pipe_opts, po, .inline_mode = inline_mode,
		 .on_event = on_event, .event_ctx = ectx);
	int err;

	prog_path();
	err = sfp_record__open(&ro, rp);
	if (err)
		return err;
	err = sfp_rec_pipe__new(*rp, &po, on_event ? NULL : collect,
				on_event ? NULL : o, pp);
	if (err)
		return err;
	err = sfp_record__start(*rp);
	while (!err && !sfp_record__done(*rp)) {
		sfp_record__poll(*rp, 50);
		err = sfp_record__read(*rp, false, sfp_rec_pipe__record, *pp);
		if (err > 0)
			err = 0;
	}
	sfp_record__stop(*rp);
	if (!err)
		err = sfp_record__read(*rp, true, sfp_rec_pipe__record, *pp);
	if (err >= 0)
		err = sfp_rec_pipe__finish(*pp);
	return err;
}

static int record(const char *mode, const char *ms, bool inline_mode,
		  uint64_t freq, struct out *o, struct sfp_record **rp,
		  struct sfp_rec_pipe **pp)
{
	return record_to(mode, ms, inline_mode, freq, o, NULL, NULL, rp, pp);
}

struct analysis {
	uint64_t leaf_top;
	uint64_t samples, child_user, in_main, full, deferred_recs, bad_order,
		missing_cookie, dup_cookie, regs_left, bytes;
};

#define MAX_COOKIES 100000
#define MAX_RES 200000

/* One sample of the child: when, and what its user chain showed. */
struct res {
	uint64_t time;
	bool ok, has_main;
};

/* Of the samples taken while main ran (from the first to the last sample
 * showing it), how many, and how many with a complete chain. */
static void judged_in_main(const struct res *res, size_t nres,
			   uint64_t *in_main, uint64_t *full)
{
	uint64_t tmin = UINT64_MAX, tmax = 0;
	size_t i;

	for (i = 0; i < nres; i++)
		if (res[i].has_main) {
			tmin = res[i].time < tmin ? res[i].time : tmin;
			tmax = res[i].time > tmax ? res[i].time : tmax;
		}
	for (i = 0; i < nres; i++)
		if (res[i].time >= tmin && res[i].time <= tmax) {
			(*in_main)++;
			*full += res[i].ok;
		}
}

static void judge(const struct func *f, size_t nf, const uint64_t *ips,
		  size_t n, bool through_libc, uint64_t time, struct res *res,
		  size_t *nres, uint64_t *leaf_top)
{
	size_t i;

	if (*nres >= MAX_RES)
		return;
	res[*nres].time = time;
	res[*nres].ok = chain_ok(f, nf, ips, n, through_libc, leaf_top);
	res[*nres].has_main = false;
	for (i = 0; i < n; i++)
		if (func_of(f, nf, ips[i]) == (int)nf - 1)
			res[*nres].has_main = true;
	(*nres)++;
}

/*
 * Walk the output like perf 6.19's stitcher: queue each deferred sample
 * per tid until its record arrives; check the record comes before the
 * tid's next sample, and judge the stitched user chain.  Samples taken
 * while main ran (from the first to the last sample showing main) must be
 * complete; the loader's and exit's samples before and after are not
 * main -> ... -> leaf stacks and are left out.
 */
static void analyse(const struct sfp_record *r, const struct sfp_rec_pipe *p,
		    const struct out *o, pid_t child, const struct func *f,
		    size_t nf, bool inline_mode, bool through_libc,
		    struct analysis *a)
{
	const struct perf_event_attr *oa = sfp_rec_pipe__out_attr(p, 0);
	uint64_t *cookies = calloc(MAX_COOKIES, sizeof(*cookies));
	struct res *res = calloc(MAX_RES, sizeof(*res));
	uint64_t pend_time[1024];
	size_t nc = 0, nres = 0, npend = 0, i, j;
	/* pending cookie (the child is single-threaded) */
	uint64_t pend_cookie = 0;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < o->n; i++) {
		const struct perf_event_header *h = (void *)o->recs[i];
		struct sfp_perf_sample s;

		a->bytes += h->size;
		if (h->type == 22) {	/* CALLCHAIN_DEFERRED */
			const uint64_t *d = o->recs[i];
			uint64_t cookie = d[1], nr = d[2];
			struct sfp_perf_sample id;

			a->deferred_recs++;
			for (j = 0; j < nc; j++)
				if (cookies[j] == cookie)
					a->dup_cookie++;
			if (nc < MAX_COOKIES)
				cookies[nc++] = cookie;
			sfp_record__decode_id(r, d, h->size, &id);
			if (id.pid != (uint32_t)child)
				continue;
			if (cookie != pend_cookie)
				a->missing_cookie++;
			for (j = 0; j < npend; j++)
				judge(f, nf, d + 3, nr, through_libc,
				      pend_time[j], res, &nres, &a->leaf_top);
			pend_cookie = 0;
			npend = 0;
			continue;
		}
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		a->samples++;
		if (oa->sample_type & PERF_SAMPLE_STACK_USER)
			a->regs_left++;
		/* The out attr has no regs/stack: parse with it. */
		if (sfp_record_decode_sample(oa, h, h->size, &s))
			continue;
		if (s.pid != (uint32_t)child || s.nr_ips < 2)
			continue;
		a->child_user++;
		if (inline_mode) {
			for (j = 0; j < s.nr_ips; j++)
				if (s.ips[j] == PERF_CONTEXT_USER)
					break;
			if (j < s.nr_ips)
				judge(f, nf, s.ips + j + 1,
				      s.nr_ips - j - 1, through_libc,
				      s.time, res, &nres, &a->leaf_top);
			else
				judge(f, nf, NULL, 0, through_libc, s.time,
				      res, &nres, &a->leaf_top);
			continue;
		}
		if (s.ips[s.nr_ips - 2] != (uint64_t)-640) {
			a->missing_cookie++;
			continue;
		}
		if (pend_cookie && s.ips[s.nr_ips - 1] != pend_cookie)
			a->bad_order++;	/* the record should have come first */
		pend_cookie = s.ips[s.nr_ips - 1];
		if (npend < 1024)
			pend_time[npend++] = s.time;
	}
	if (pend_cookie)
		a->missing_cookie++;
	judged_in_main(res, nres, &a->in_main, &a->full);
	free(res);
	free(cookies);
}

static void run_check(const char *mode, bool inline_mode)
{
	bool libc = !strcmp(mode, "cpu");
	struct func f[] = { { "flat_leaf", 0, 0 }, { "flat_mid", 0, 0 },
			    { "flat_outer", 0, 0 },
			    { "main", 0, 0 } };
	struct sfp_record *r = NULL;
	struct sfp_rec_pipe *p = NULL;
	struct sfp_rec_pipe_stats st;
	struct out o = { 0 };
	struct analysis a;
	int err;

	if (libc) {
		snprintf(f[0].name, sizeof(f[0].name), "cmp_leaf");
		snprintf(f[1].name, sizeof(f[1].name), "spin_sort");
		snprintf(f[2].name, sizeof(f[2].name), "spin_outer");
	}
	err = record(mode, "500", inline_mode, 999, &o, &r, &p);
	if (!ASSERT_OK(err))
		goto out;
	if (!ASSERT_OK(find_funcs(prog, f, 4)))
		goto out;
	analyse(r, p, &o, sfp_record__workload_pid(r), f, 4, inline_mode, libc,
		&a);
	/* The leaf case is really exercised: most samples are in the leaf. */
	ASSERT_GE(a.leaf_top * 2, a.in_main);
	sfp_rec_pipe__stats(p, &st);
	ASSERT_GE(a.child_user, 200);
	ASSERT_EQ(a.regs_left, 0);
	ASSERT_EQ(a.bad_order, 0);
	ASSERT_EQ(a.missing_cookie, 0);
	ASSERT_EQ(a.dup_cookie, 0);
	/*
	 * Most of the run is judged: the child spins 500 ms of its own CPU
	 * time at 999 Hz, so about 500 samples fall while main runs,
	 * whatever the load.  (Not a share of all its samples: the loader's
	 * and ASan's start-up before main and exit after it grow with the
	 * load -- 10.4 % of them in one ASan run beside two CPU hogs.)
	 */
	ASSERT_GE(a.in_main, 450);
	/* leaf -> mid -> outer -> main in at least 99% of the samples */
	ASSERT_GE(a.full * 100, a.in_main * 99);
	if (inline_mode)
		ASSERT_EQ(a.deferred_recs, 0);
	else
		ASSERT_EQ(a.deferred_recs, st.defer.deferred);
	ASSERT_EQ(st.samples, a.samples);
	ASSERT_EQ(st.bytes_out, a.bytes);
	/* No stack bytes: well under 1 KiB per sample. */
	ASSERT_TRUE(a.bytes / a.samples < 1024);
	fprintf(stderr, "  %s %s: full stacks in %llu of %llu samples in main "
		"(%llu samples in all)\n", mode,
		inline_mode ? "inline" : "deferred", (unsigned long long)a.full,
		(unsigned long long)a.in_main,
		(unsigned long long)a.child_user);
out:
	sfp_rec_pipe__free(&p);
	sfp_record__free(&r);
	out_free(&o);
}

TEST(pipeline_flat_program_full_stacks_deferred)
{
	run_check("flat", false);
}

TEST(pipeline_flat_program_full_stacks_inline)
{
	run_check("flat", true);
}

/* main -> spin_outer -> spin_sort -> qsort (libc) -> cmp_leaf: needs
 * libc's table (built from its .eh_frame) to get through qsort. */
TEST(pipeline_libc_callback_full_stacks_deferred)
{
	run_check("cpu", false);
}

TEST(pipeline_libc_callback_full_stacks_inline)
{
	run_check("cpu", true);
}

TEST(pipeline_syscall_heavy_dedups)
{
	struct sfp_record *r = NULL;
	struct sfp_rec_pipe *p = NULL;
	struct sfp_rec_pipe_stats st;
	struct out o = { 0 };

	if (!ASSERT_OK(record("sys", "600", false, 2000, &o, &r, &p)))
		goto out;
	sfp_rec_pipe__stats(p, &st);
	ASSERT_GE(st.defer.user_samples, 200);
	/* Long read()s: several samples per kernel entry share a record. */
	ASSERT_GE(st.defer.shared, 1);
	ASSERT_TRUE(st.defer.deferred < st.defer.user_samples);
	ASSERT_EQ(st.defer.deferred + st.defer.shared, st.defer.user_samples);
	fprintf(stderr, "  sys: %llu user samples, %llu deferred records\n",
		(unsigned long long)st.defer.user_samples,
		(unsigned long long)st.defer.deferred);
out:
	sfp_rec_pipe__free(&p);
	sfp_record__free(&r);
	out_free(&o);
}

/* What the typed events of one recording showed (an event consumer). */
struct evs {
	struct func f[4];
	struct res *res;
	size_t nres;
	uint64_t leaf_top;
	uint64_t samples, with_bytes, not_pass, deferred, mmap_prog, comm,
		exits, other;
	struct sfp_rec_pipe *const *pp;	/* set by record_to() */
	bool wrong_evsel;
};

static int on_event(void *ctx, const struct sfp_perf_event *ev,
		    enum sfp_stitch_how how)
{
	struct evs *e = ctx;
	size_t j;

	if (how != SFP_STITCH_PASS)
		e->not_pass++;
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		e->samples++;
		/* typed from the unwind: no record behind it */
		if (ev->raw || ev->size)
			e->with_bytes++;
		if (!ev->evsel || ev->evsel != sfp_rec_pipe__evsel(*e->pp, 0))
			e->wrong_evsel = true;
		if (ev->sample.deferred)
			e->deferred++;
		for (j = 0; j < ev->sample.nr_ips; j++)
			if (ev->sample.ips[j] == PERF_CONTEXT_USER)
				break;
		if (j < ev->sample.nr_ips)
			judge(e->f, 4, ev->sample.ips + j + 1,
			      ev->sample.nr_ips - j - 1, false,
			      ev->sample.time, e->res, &e->nres, &e->leaf_top);
		else
			judge(e->f, 4, NULL, 0, false, ev->sample.time,
			      e->res, &e->nres, &e->leaf_top);
		return 0;
	case PERF_RECORD_MMAP2:
		/* decoded from the kernel's bytes */
		if (ev->raw && ev->mmap.filename &&
		    strstr(ev->mmap.filename, "record-spin") &&
		    (ev->mmap.prot & PROT_EXEC))
			e->mmap_prog++;
		return 0;
	case PERF_RECORD_COMM:
		e->comm += ev->comm.comm && !strcmp(ev->comm.comm,
						    "record-spin");
		return 0;
	case PERF_RECORD_EXIT:
		e->exits++;
		return 0;
	case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
		e->deferred++;
		return 0;
	default:
		e->other++;
		return 0;
	}
}

/*
 * The agent's path: the pipeline hands a consumer typed events.  Each
 * sample comes with its whole chain, built from the unwind -- never
 * encoded into a record (no bytes behind it) -- and as complete as the
 * records' path makes it; the side-band comes decoded from the kernel's
 * bytes; nothing is deferred, nothing waits.
 */
TEST(pipeline_events_typed_whole_chains)
{
	struct evs e = { .f = { { "flat_leaf", 0, 0 }, { "flat_mid", 0, 0 },
				{ "flat_outer", 0, 0 }, { "main", 0, 0 } } };
	uint64_t in_main = 0, full = 0;
	struct sfp_record *r = NULL;
	struct sfp_rec_pipe *p = NULL;
	struct sfp_rec_pipe_stats st;
	int err;

	e.res = calloc(MAX_RES, sizeof(*e.res));
	if (!ASSERT_TRUE(e.res != NULL))
		return;
	/* p is set before the first event: the session starts the child
	 * only at sfp_record__start() */
	e.pp = &p;
	/* the functions are known before the events come */
	prog_path();
	if (!ASSERT_OK(find_funcs(prog, e.f, 4)))
		goto out;
	err = record_to("flat", "500", false, 999, NULL, on_event, &e, &r, &p);
	if (!ASSERT_OK(err))
		goto out;
	judged_in_main(e.res, e.nres, &in_main, &full);
	sfp_rec_pipe__stats(p, &st);
	ASSERT_EQ(e.samples, st.samples);
	ASSERT_GE(in_main, 450);
	ASSERT_GE(full * 100, in_main * 99);
	ASSERT_GE(e.leaf_top * 2, in_main);
	ASSERT_EQ(e.with_bytes, 0);
	ASSERT_FALSE(e.wrong_evsel);
	ASSERT_EQ(e.deferred, 0);
	ASSERT_EQ(st.defer.deferred, 0);
	ASSERT_EQ(e.not_pass, 0);
	ASSERT_GE(e.mmap_prog, 1);
	ASSERT_GE(e.comm, 1);
	ASSERT_GE(e.exits, 1);
	ASSERT_EQ(st.undecoded, 0);
	ASSERT_EQ(st.bytes_out, 0);
	fprintf(stderr, "  events: full stacks in %llu of %llu samples in "
		"main, %llu samples\n", (unsigned long long)full,
		(unsigned long long)in_main, (unsigned long long)e.samples);
out:
	sfp_rec_pipe__free(&p);
	sfp_record__free(&r);
	free(e.res);
}

/*
 * An MMAP2 record as the kernel writes it for a session without
 * attr.build_id (device 254:0, an inode) but with the build-id flag,
 * which the kernel leaves set in the header it shares between sessions
 * once another session's event asked for build-ids.
 */
static size_t mmap2_rec(const struct perf_event_attr *a, uint64_t *buf,
			bool flag, uint32_t maj, uint32_t min, uint64_t inode);

/* The last MMAP2 record the pipeline wrote, or NULL. */
static const struct perf_event_header *last_mmap2(const struct out *o)
{
	const struct perf_event_header *h = NULL;
	size_t i;

	for (i = 0; i < o->n; i++)
		if (((const struct perf_event_header *)o->recs[i])->type ==
		    PERF_RECORD_MMAP2)
			h = (const struct perf_event_header *)o->recs[i];
	return h;
}

static size_t stray_mmap2(const struct perf_event_attr *a, uint64_t *buf,
			  bool flag)
{
	return mmap2_rec(a, buf, flag, 254, 0, 332835);
}

/* An MMAP2 of libc from the kernel, device/inode layout unless flag. */
static size_t mmap2_rec(const struct perf_event_attr *a, uint64_t *buf,
			bool flag, uint32_t maj, uint32_t min, uint64_t inode)
{
	static const char name[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	size_t trailer = sfp_sample_id_size(a->sample_type);
	size_t nlen = (sizeof(name) + 7) & ~(size_t)7;
	size_t size = 8 + 64 + nlen + trailer;
	uint8_t *p = (uint8_t *)buf;
	struct perf_event_header h = {
		.type = PERF_RECORD_MMAP2,
		.misc = PERF_RECORD_MISC_USER |
			(flag ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
		.size = (uint16_t)size,
	};
	uint32_t u32[2] = { (uint32_t)getpid(), (uint32_t)getpid() };
	uint64_t u64[3] = { 0x7f0000000000ull, 0x1000, 0 };
	uint32_t dev[2] = { maj, min };
	uint64_t ino[2] = { inode, 0 };
	uint32_t pf[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };

	memset(buf, 0, size);
	memcpy(p, &h, 8);
	memcpy(p + 8, u32, 8);
	memcpy(p + 16, u64, 24);
	memcpy(p + 40, dev, 8);
	memcpy(p + 48, ino, 16);
	memcpy(p + 64, pf, 8);
	memcpy(p + 72, name, sizeof(name));
	return size;
}

/* A reader of a file that kept the stray flag (made by another tool)
 * reads the device and inode, not a build-id made of them. */
static void stray_decode(const struct perf_event_attr *a, const uint64_t *rec,
			 size_t size)
{
	struct sfp_perf_evsel e = { 0 };
	struct sfp_perf_event ev = { 0 };
	char str[256];

	e.attr.sample_type = a->sample_type;
	e.attr.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL;
	ev.type = SFP_PERF_RECORD_MMAP2;
	ev.misc = ((const struct perf_event_header *)rec)->misc;
	if (!ASSERT_OK(sfp_perf_record_decode(&e, (const uint8_t *)rec, size,
					      false, &ev, NULL, 0, str,
					      false)))
		return;
	ASSERT_EQ(ev.mmap.build_id_size, 0);
	ASSERT_EQ(ev.mmap.maj, 254);
	ASSERT_EQ(ev.mmap.ino, 332835);
	ASSERT_EQ(ev.misc & SFP_PERF_MISC_MMAP_BUILD_ID, 0);
	ASSERT_STREQ(ev.mmap.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

/* Without attr.build_id the session clears that stray flag, in what it
 * writes too; with attr.build_id the flag means what it says. */
TEST(pipeline_mmap2_stray_build_id_flag)
{
	char *argv[] = { "/bin/true", NULL };
	uint64_t buf[64];
	int pass;

	for (pass = 0; pass < 2; pass++) {
		SFP_OPTS(sfp_record_opts, ro, .argv = argv,
			 .no_build_id = pass == 0);
		SFP_OPTS(sfp_rec_pipe_opts, po);
		struct sfp_record *r = NULL;
		struct sfp_rec_pipe *p = NULL;
		struct sfp_rec_pipe_stats st;
		struct out o = { 0 };
		const struct perf_event_header *h;
		size_t size;

		if (!ASSERT_OK(sfp_record__open(&ro, &r)) ||
		    !ASSERT_OK(sfp_rec_pipe__new(r, &po, collect, &o, &p)))
			goto next;
		size = stray_mmap2(sfp_rec_pipe__out_attr(p, 0), buf, true);
		ASSERT_OK(sfp_rec_pipe__record(buf, size, 0, p));
		sfp_rec_pipe__stats(p, &st);
		h = last_mmap2(&o);
		if (!ASSERT_TRUE(h != NULL))
			goto next;
		ASSERT_EQ(h->size, size);
		if (pass == 0) {
			ASSERT_EQ(st.mmap_stray_build_id, 1);
			ASSERT_EQ(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID, 0);
			/* the rest as it came: device, inode, name */
			ASSERT_EQ(memcmp((const uint8_t *)h + 8,
					 (const uint8_t *)buf + 8, size - 8), 0);
			stray_decode(sfp_rec_pipe__out_attr(p, 0), buf, size);
		} else {
			ASSERT_EQ(st.mmap_stray_build_id, 0);
			ASSERT_TRUE(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		}
next:
		sfp_rec_pipe__free(&p);
		sfp_record__free(&r);
		out_free(&o);
	}
}

/*
 * record's sessions ask the kernel for no build-id (fill_build_ids): the
 * device/inode MMAP2 of libc leaves the pipeline in the build-id layout
 * with readelf's build-id; one whose inode is not the file's (replaced
 * since, gone) stays as it came, counted.
 */
TEST(pipeline_mmap2_build_id_filled)
{
	static const char libc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	char *argv[] = { "/bin/true", NULL };
	char want[64] = "", line[256];
	uint64_t buf[64];
	struct stat st;
	FILE *f;
	int pass;

	if (stat(libc, &st)) {
		test_skip("no %s", libc);
		return;
	}
	f = popen("readelf -n /usr/lib/x86_64-linux-gnu/libc.so.6", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "Build ID:"))
			sscanf(strstr(line, "Build ID:") + 9, "%63s", want);
	if (f)
		pclose(f);
	if (!*want) {
		test_skip("readelf gives no build-id for %s", libc);
		return;
	}
	for (pass = 0; pass < 2; pass++) {
		SFP_OPTS(sfp_record_opts, ro, .argv = argv, .no_build_id = true);
		SFP_OPTS(sfp_rec_pipe_opts, po, .fill_build_ids = true);
		struct sfp_record *r = NULL;
		struct sfp_rec_pipe *p = NULL;
		struct sfp_rec_pipe_stats st2;
		struct out o = { 0 };
		const struct perf_event_header *h = NULL;
		const uint8_t *b;
		char got[64] = "";
		size_t size, i;

		if (!ASSERT_OK(sfp_record__open(&ro, &r)) ||
		    !ASSERT_OK(sfp_rec_pipe__new(r, &po, collect, &o, &p)))
			goto next;
		size = mmap2_rec(sfp_rec_pipe__out_attr(p, 0), buf, false,
				 major(st.st_dev), minor(st.st_dev),
				 st.st_ino + (uint64_t)pass);
		ASSERT_OK(sfp_rec_pipe__record(buf, size, 0, p));
		sfp_rec_pipe__stats(p, &st2);
		h = last_mmap2(&o);
		if (!ASSERT_TRUE(h != NULL))
			goto next;
		ASSERT_EQ(h->size, size);
		b = (const uint8_t *)h;
		if (pass == 0) {
			ASSERT_EQ(st2.mmap_build_id_filled, 1);
			ASSERT_TRUE(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			for (i = 0; i < b[40] && i < 20; i++)
				snprintf(got + 2 * i, 3, "%02x", b[44 + i]);
			ASSERT_STREQ(got, want);
			/* name, prot, flags as they came */
			ASSERT_EQ(memcmp(b + 64, (const uint8_t *)buf + 64,
					 size - 64), 0);
		} else {
			ASSERT_EQ(st2.mmap_no_build_id, 1);
			ASSERT_EQ(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID, 0);
			ASSERT_EQ(memcmp(b + 8, (const uint8_t *)buf + 8,
					 size - 8), 0);
		}
next:
		sfp_rec_pipe__free(&p);
		sfp_record__free(&r);
		out_free(&o);
	}
}

/* What a bpf-defer pipeline's consumer got (typed events). */
struct stitched {
	uint64_t how[4];
	uint64_t samples, chains_ok;
	uint64_t deferred_left;		/* merged, yet still marked waiting */
};

static int on_stitched(void *ctx, const struct sfp_perf_event *ev,
		       enum sfp_stitch_how how)
{
	/* perf's merge: the chain but its cookie, the marker kept as the
	 * user part's context, then the record's frames */
	static const uint64_t whole[] = { PERF_CONTEXT_KERNEL,
					  0xffffffff81000010ULL,
					  (uint64_t)-640 /* USER_DEFERRED */,
					  0x401000, 0x401100, 0x401200 };
	struct stitched *s = ctx;

	if (ev->type != PERF_RECORD_SAMPLE)
		return 0;
	s->samples++;
	s->how[how]++;
	if (how == SFP_STITCH_MERGED && ev->sample.deferred)
		s->deferred_left++;
	if (how == SFP_STITCH_MERGED && ev->sample.nr_ips == 6 &&
	    !memcmp(ev->sample.ips, whole, sizeof(whole)))
		s->chains_ok++;
	return 0;
}

/*
 * bpf-defer in the agent's path: the BPF side's samples carry a cookie
 * and its user chains come as records of their own.  The pipeline
 * stitches them for its event consumer as perf 6.19 does: a chain onto
 * every waiting sample of its task and cookie, a sample of another
 * cookie on unmerged, what never got a chain delivered unmerged at the
 * end -- and no merged sample the consumer sees is still marked waiting.
 */
TEST(pipeline_events_bpf_defer_stitched)
{
	static const uint64_t kchain[] = { PERF_CONTEXT_KERNEL,
					   0xffffffff81000010ULL };
	static const uint64_t user[] = { 0x401000, 0x401100, 0x401200 };
	char *argv[] = { "/bin/true", NULL };
	SFP_OPTS(sfp_record_opts, ro, .argv = argv,
		 .call_graph = SFP_RECORD_CG_BPF_DEFER);
	struct stitched got;
	SFP_OPTS(sfp_rec_pipe_opts, po, .on_event = on_stitched,
		 .event_ctx = &got);
	struct sfp_defer_origin o = { 40, 41, 0, 2000 };
	struct sfp_perf_sample s;
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_DEFERRED,
				    .cookie = (1ULL << 32) | 7 };
	const struct perf_event_attr *oa;
	struct sfp_record *r = NULL;
	struct sfp_rec_pipe *p = NULL;
	uint64_t buf[512];
	int n, i;

	memset(&got, 0, sizeof(got));
	if (!ASSERT_OK(sfp_record__open(&ro, &r)) ||
	    !ASSERT_OK(sfp_rec_pipe__new(r, &po, NULL, NULL, &p)))
		goto out;
	oa = sfp_rec_pipe__out_attr(p, 0);
	memset(&s, 0, sizeof(s));
	s.misc = PERF_RECORD_MISC_KERNEL;
	s.ip = kchain[1];
	s.pid = 40;
	s.tid = 41;
	s.period = 1;
	s.ips = kchain;
	s.nr_ips = 2;
	/* two samples of one kernel entry, one of another task's */
	for (i = 0; i < 3; i++) {
		s.time = 1000 + (uint64_t)i;
		s.tid = i == 2 ? 42 : 41;
		n = sfp_record_encode_sample(oa, &s, &u, buf, sizeof(buf));
		if (!ASSERT_GE(n, 8) ||
		    !ASSERT_OK(sfp_rec_pipe__record(buf, (size_t)n, 0, p)))
			goto out;
	}
	ASSERT_EQ(got.samples, 0);	/* they wait for their chain */
	n = sfp_record_encode_deferred(oa, 0, &o, u.cookie, user, 3, buf,
				       sizeof(buf));
	if (!ASSERT_GE(n, 8) ||
	    !ASSERT_OK(sfp_rec_pipe__record(buf, (size_t)n, 0, p)))
		goto out;
	ASSERT_EQ(got.how[SFP_STITCH_MERGED], 2);
	ASSERT_EQ(got.chains_ok, 2);
	ASSERT_EQ(got.samples, 2);
	ASSERT_OK(sfp_rec_pipe__finish(p));
	ASSERT_EQ(got.samples, 3);
	ASSERT_EQ(got.how[SFP_STITCH_LEFTOVER], 1);
	ASSERT_EQ(got.deferred_left, 0);
out:
	sfp_rec_pipe__free(&p);
	sfp_record__free(&r);
}

/* A second source of records for the recorder: it counts what it is
 * asked and passes the session's records on to the pipeline. */
struct fake_source {
	struct sfp_rec_pipe *p;
	uint64_t records, polls, flushes, finishes;
	char order[16];			/* p(oll) f(lush) r(ead) F(inish) */
	size_t n_order;
	bool draining;
};

static void fake_mark(struct fake_source *f, char c)
{
	if (f->draining && f->n_order < sizeof(f->order) - 1)
		f->order[f->n_order++] = c;
}

static int fake_record(const void *rec, size_t size, int cpu, void *ctx)
{
	struct fake_source *f = ctx;

	f->records++;
	if (f->draining && (!f->n_order || f->order[f->n_order - 1] != 'r'))
		fake_mark(f, 'r');
	return sfp_rec_pipe__record(rec, size, cpu, f->p);
}

static int fake_poll(void *ctx)
{
	struct fake_source *f = ctx;

	f->polls++;
	fake_mark(f, 'p');
	return 0;
}

static int fake_flush(void *ctx)
{
	struct fake_source *f = ctx;

	f->flushes++;
	fake_mark(f, 'f');
	return 0;
}

static void fake_finish(void *ctx)
{
	struct fake_source *f = ctx;

	f->finishes++;
	fake_mark(f, 'F');
}

/* The CPU time process pid has used so far, in ms (-1: unknown). */
static long cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* after the comm's ')': state, then fields 4..13, then utime stime */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu", &ut, &st) != 2)
		return -1;
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/*
 * The recorder, as record and the agent run it: its reader thread moves
 * the rings' records into the session's queue and turns the events off
 * at stop_after_s; reading goes through the second source (polled first);
 * the end polls, flushes, reads the rest and finishes the source, in
 * that order; every sample reaches the pipeline.
 */
TEST(recorder_reader_source_and_end)
{
	char *argv[] = { prog, "flat", "1500", NULL };
	struct fake_source f;
	struct sfp_recorder_source src = {
		.ctx = &f, .record = fake_record, .poll = fake_poll,
		.flush = fake_flush, .finish = fake_finish,
	};
	SFP_OPTS(sfp_record_opts, ro, .argv = argv, .freq = 999);
	SFP_OPTS(sfp_rec_pipe_opts, po);
	SFP_OPTS(sfp_recorder_opts, rco, .stop_after_s = 0.4,
		 .thread_name = "sfp-test-rd", .source = &src);
	struct sfp_record *r = NULL;
	struct sfp_rec_pipe *p = NULL;
	struct sfp_recorder *rc = NULL;
	struct sfp_rec_pipe_stats st;
	struct out o = { 0 };
	int n, rounds = 0;
	long ran_ms = -1;

	memset(&f, 0, sizeof(f));
	prog_path();
	if (!ASSERT_OK(sfp_record__open(&ro, &r)) ||
	    !ASSERT_OK(sfp_rec_pipe__new(r, &po, collect, &o, &p)))
		goto out;
	f.p = p;
	if (!ASSERT_OK(sfp_recorder__new(r, p, &rco, &rc)) ||
	    !ASSERT_OK(sfp_record__start(r)))
		goto out;
	ASSERT_TRUE(sfp_recorder__start_reader(rc));
	/* the child spins 1.5 s of CPU; the reader stops the events at 0.4 s */
	while (!sfp_recorder__timed_out(rc) && rounds++ < 200) {
		usleep(50000);
		n = sfp_recorder__read(rc, false);
		if (!ASSERT_GE(n, 0))
			goto out;
	}
	/* what the child ran while the events were on, or a little more */
	ran_ms = cpu_ms(sfp_record__workload_pid(r));
	ASSERT_TRUE(sfp_recorder__timed_out(rc));
	ASSERT_TRUE(rounds >= 4 && rounds < 200);
	ASSERT_GE(f.polls, 4);
	sfp_recorder__stop(rc);
	ASSERT_FALSE(sfp_recorder__reader_running(rc));
	f.draining = true;
	if (!ASSERT_OK(sfp_recorder__drain(rc)) ||
	    !ASSERT_OK(sfp_rec_pipe__finish(p)))
		goto out;
	/* the rest may be nothing to read: no 'r' then */
	ASSERT_TRUE(!strcmp(f.order, "pfrF") || !strcmp(f.order, "pfF"));
	ASSERT_EQ(f.flushes, 1);
	ASSERT_EQ(f.finishes, 1);
	sfp_rec_pipe__stats(p, &st);
	ASSERT_EQ(st.records_in, f.records);
	/* a spinning child at 999 Hz for 0.4 s: a sample a ms of its CPU
	 * time, which a busy machine cuts (69 samples under a parallel
	 * build, 7 Dec 2026); its CPU time was read just after the events
	 * went off, so at least half of it was sampled, less a tick */
	ASSERT_TRUE(ran_ms >= 0);
	ASSERT_GE(st.samples, 1);
	ASSERT_GE(st.samples * 2 + 20, (uint64_t)ran_ms);
	fprintf(stderr, "  recorder: %llu records through the source, %llu "
		"samples, %d reads; the child ran %ld ms\n",
		(unsigned long long)f.records, (unsigned long long)st.samples,
		rounds, ran_ms);
out:
	sfp_recorder__free(&rc);
	sfp_rec_pipe__free(&p);
	sfp_record__free(&r);
	out_free(&o);
}
