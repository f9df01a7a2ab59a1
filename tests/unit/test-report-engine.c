// SPDX-License-Identifier: MIT
/*
 * The report engine (src/report) on a real recording of the known
 * workload (sfprof record of tests/progs/report-work), read back from its
 * plain output: self shares add up to 100 %, children are never below
 * self and grow toward the root along main -> run -> work -> hot_leaf,
 * and the event totals are the profile's.  Plus perf's --time and --sort
 * argument syntax, with exact error codes.
 */
#include <errno.h>

#include "profile-test.h"
#include "report/report.h"

static struct sfp_profile *load_workload(void)
{
	static int state;
	struct sfp_profile *p = NULL;
	char path[512], cmd[1024];

	pt_tmp(path, sizeof(path), "report-work.data");
	if (!state) {
		snprintf(cmd, sizeof(cmd),
			 "%s record -F 1000 -o %%1$s -- %s/report-work 400",
			 pt_sfprof(), pt_progs());
		state = pt_record(path, cmd) ? 1 : -1;
	}
	if (state < 0) {
		PT_SFPROF_FAILED("sfprof record of report-work failed");
		return NULL;
	}
	if (!ASSERT_OK(sfp_profile__load(path, NULL, &p)))
		return NULL;
	return p;
}

struct ent {
	char name[256];
	double over, self;
};

/* The plain report of p under o: its entries and the event's total. */
static size_t run_plain(const struct sfp_profile *p, struct sfp_report_opts *o,
			struct ent *e, size_t max, unsigned long long *total)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&buf, &len);

	o->plain = true;
	if (!ASSERT_NOT_NULL(f))
		return 0;
	ASSERT_OK(sfp_report_print(p, o, f));
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[256];
		double a, b;

		if (sscanf(line, "event\t%*s\t%*u\t%llu", total) == 1)
			continue;
		if (n < max &&
		    sscanf(line, "entry\t%*u\t%lf\t%lf\t%*u\t%*u\t%*u\t%*c\t%255[^\t]",
			   &a, &b, name) == 3) {
			snprintf(e[n].name, sizeof(e[n].name), "%s", name);
			e[n].over = a;
			e[n].self = b;
			n++;
		}
	}
	free(buf);
	return n;
}

static const struct ent *find(const struct ent *e, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

static struct ent ents[4096];

TEST(report_self_adds_up)
{
	struct sfp_profile *p = load_workload();
	struct sfp_report_opts o = {
		.keys = { SFP_REPORT_SYM }, .nr_keys = 1,
		.graph = SFP_REPORT_NONE,
	};
	unsigned long long total = 0, sum = 0;
	double s = 0;
	size_t n, i;

	if (!p)
		return;
	n = run_plain(p, &o, ents, 4096, &total);
	for (i = 0; i < sfp_profile__nr_samples(p); i++)
		sum += sfp_profile__sample(p, i)->period;
	ASSERT_EQ(total, sum);
	for (i = 0; i < n; i++) {
		s += ents[i].self;
		if (i && !ASSERT_TRUE(ents[i].over <= ents[i - 1].over))
			break;
	}
	/* each share is rounded to 0.01 */
	ASSERT_TRUE(s > 100.0 - 0.005 * (double)n - 0.01 &&
		    s < 100.0 + 0.005 * (double)n + 0.01);
	ASSERT_STREQ(ents[0].name, "hot_leaf");
	sfp_profile__free(&p);
}

TEST(report_children_along_the_path)
{
	struct sfp_profile *p = load_workload();
	struct sfp_report_opts o = {
		.children = true,
		.keys = { SFP_REPORT_SYM }, .nr_keys = 1,
		.graph = SFP_REPORT_GRAPH, .graph_limit = 0.5,
	};
	const struct ent *m, *r, *w, *h, *wa;
	unsigned long long total = 0;
	size_t n, i;

	if (!p)
		return;
	n = run_plain(p, &o, ents, 4096, &total);
	for (i = 0; i < n; i++)
		if (!ASSERT_TRUE(ents[i].over + 1e-9 >= ents[i].self))
			goto out;
	m = find(ents, n, "main");
	r = find(ents, n, "run");
	w = find(ents, n, "work");
	h = find(ents, n, "hot_leaf");
	wa = find(ents, n, "warm");
	if (!ASSERT_NOT_NULL(m) || !ASSERT_NOT_NULL(r) || !ASSERT_NOT_NULL(w) ||
	    !ASSERT_NOT_NULL(h) || !ASSERT_NOT_NULL(wa))
		goto out;
	ASSERT_TRUE(m->over >= r->over && r->over >= w->over &&
		    w->over >= h->self);
	/* run is above work and warm: its children hold both */
	ASSERT_TRUE(r->over + 0.02 >= w->over + wa->over);
	/* hot_leaf does 2/3 of the two leaves' work (of all samples less:
	 * under ASan, LeakSanitizer's exit-time scan takes its share) */
	ASSERT_TRUE(h->self >= 0.58 * (h->self + wa->self) &&
		    h->self <= 0.75 * (h->self + wa->self));
	ASSERT_TRUE(h->self + wa->self >= 50);
	ASSERT_TRUE(r->self < 2 && w->self < 2 && m->self < 2);
out:
	sfp_profile__free(&p);
}

/* --tid of a thread that does not exist: nothing, same total. */
TEST(report_filters_keep_the_base)
{
	struct sfp_profile *p = load_workload();
	static const uint32_t none[] = { 0xfffffff0u };
	struct sfp_report_opts o = {
		.keys = { SFP_REPORT_SYM }, .nr_keys = 1,
		.graph = SFP_REPORT_NONE,
	};
	unsigned long long t1 = 0, t2 = 0;
	size_t n;

	if (!p)
		return;
	run_plain(p, &o, ents, 4096, &t1);
	o.tids = none;
	o.nr_tids = 1;
	n = run_plain(p, &o, ents, 4096, &t2);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(t1, t2);
	/* a time window that holds nothing: no total either */
	o.nr_tids = 0;
	o.has_time = true;
	o.time_start = 1;
	o.time_stop = 2;
	n = run_plain(p, &o, ents, 4096, &t2);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(t2, 0);
	sfp_profile__free(&p);
}

TEST(report_parse_time)
{
	uint64_t a, b;

	ASSERT_OK(sfp_report_parse_time("10.5,11", &a, &b));
	ASSERT_EQ(a, 10500000000ull);
	ASSERT_EQ(b, 11000000000ull);
	ASSERT_OK(sfp_report_parse_time(",5.000000001", &a, &b));
	ASSERT_EQ(a, 0);
	ASSERT_EQ(b, 5000000001ull);
	ASSERT_OK(sfp_report_parse_time("7,", &a, &b));
	ASSERT_EQ(a, 7000000000ull);
	ASSERT_EQ(b, 0);
	ASSERT_OK(sfp_report_parse_time("12345.678901", &a, &b));
	ASSERT_EQ(a, 12345678901000ull);
	ASSERT_ERR(sfp_report_parse_time("1.1234567891,2", &a, &b), -EINVAL);
	ASSERT_ERR(sfp_report_parse_time("3,2", &a, &b), -EINVAL);
	ASSERT_ERR(sfp_report_parse_time("abc", &a, &b), -EINVAL);
	ASSERT_ERR(sfp_report_parse_time("", &a, &b), -EINVAL);
	ASSERT_ERR(sfp_report_parse_time("1,2,3", &a, &b), -EINVAL);
	ASSERT_ERR(sfp_report_parse_time("99999999999999999999,", &a, &b),
		   -EINVAL);
}

TEST(report_parse_sort)
{
	struct sfp_report_opts o = { 0 };

	ASSERT_OK(sfp_report_parse_sort("sym,dso", &o));
	ASSERT_EQ(o.nr_keys, 2);
	ASSERT_EQ(o.keys[0], SFP_REPORT_SYM);
	ASSERT_EQ(o.keys[1], SFP_REPORT_DSO);
	ASSERT_OK(sfp_report_parse_sort("pid,comm,symbol", &o));
	ASSERT_EQ(o.nr_keys, 3);
	ASSERT_EQ(o.keys[0], SFP_REPORT_PID);
	ASSERT_EQ(o.keys[2], SFP_REPORT_SYM);
	ASSERT_ERR(sfp_report_parse_sort("bogus", &o), -EINVAL);
	ASSERT_ERR(sfp_report_parse_sort("sym,", &o), -EINVAL);
	ASSERT_ERR(sfp_report_parse_sort("", &o), -EINVAL);
	ASSERT_ERR(sfp_report_parse_sort("sy", &o), -EINVAL);
	ASSERT_ERR(sfp_report_parse_sort("sym,dso,comm,pid,sym", &o), -EINVAL);
}
