// SPDX-License-Identifier: MIT
/*
 * report --threads: where each thread's wall-clock time went, as far as
 * the recording saw it -- on a CPU (the periods of cpu-clock/task-clock
 * samples, in ns) or blocked (the periods of offcpu-time samples, the
 * blocked ns of record --off-cpu).  What neither counts is the time a
 * thread was runnable but preempted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"

struct th {
	uint32_t pid, tid, comm;
	uint64_t on, off;
};

static int cmp_th(const void *a, const void *b)
{
	const struct th *x = a, *y = b;
	uint64_t sx = x->on + x->off, sy = y->on + y->off;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int sfp_report_print_threads(const struct sfp_profile *p, bool plain, FILE *out)
{
	size_t n = sfp_profile__nr_samples(p), nev = sfp_profile__nr_events(p);
	size_t i, j, nth = 0, cap = 0;
	struct th *th = NULL;
	uint8_t *kind;		/* per event: 0 other, 1 on-CPU, 2 off-CPU */
	int err = 0;

	kind = calloc(nev ? nev : 1, 1);
	if (!kind)
		return -ENOMEM;
	for (i = 0; i < nev; i++) {
		enum sfp_profile_event_kind k =
			sfp_profile__event(p, (uint32_t)i)->kind;

		kind[i] = k == SFP_PROFILE_EV_CLOCK ? 1 :
			  k == SFP_PROFILE_EV_OFF_CPU ? 2 : 0;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		if (s->event >= nev || !kind[s->event])
			continue;
		/* threads are few: a linear search keeps it simple */
		for (j = 0; j < nth && th[j].tid != s->tid; j++)
			;
		if (j == nth) {
			if (nth == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct th *t = realloc(th, nc * sizeof(*t));

				if (!t) {
					err = -ENOMEM;
					goto out;
				}
				th = t;
				cap = nc;
			}
			memset(&th[nth], 0, sizeof(*th));
			th[nth].pid = s->pid;
			th[nth++].tid = s->tid;
		}
		th[j].comm = s->comm;
		if (kind[s->event] == 1)
			th[j].on += s->period;
		else
			th[j].off += s->period;
	}
	if (nth)
		qsort(th, nth, sizeof(*th), cmp_th);
	if (plain) {
		struct sfp_profile_lost l;

		sfp_profile__lost(p, &l);
		fprintf(out, "# sfprof report threads 1\n");
		/* what the recording lost: records, chunks, samples */
		if (l.records || l.samples)
			fprintf(out, "lost\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
				"\n", l.records, l.chunks, l.samples);
		fprintf(out, "columns\tpid\ttid\tcomm\ton_ns\toff_ns\t"
			"total_ns\n");
	} else {
		fprintf(out, "# Per thread: on-CPU (cpu-clock/task-clock), off-CPU "
			"(offcpu-time: blocked), in ms\n");
		sfp_rep_print_lost(p, out);
		fprintf(out, "#\n#     pid      tid  %-16s %12s %12s %12s %6s\n",
			"comm", "on-CPU", "off-CPU", "on+off", "off%");
	}
	for (i = 0; i < nth; i++) {
		const char *comm = sfp_profile__string(p, th[i].comm);
		uint64_t sum = th[i].on + th[i].off;

		if (!comm || !*comm)
			comm = "[unknown]";
		if (plain)
			fprintf(out, "thread\t%u\t%u\t%s\t%" PRIu64 "\t%" PRIu64
				"\t%" PRIu64 "\n", th[i].pid, th[i].tid, comm,
				th[i].on, th[i].off, sum);
		else
			fprintf(out, "  %7u  %7u  %-16s %12.3f %12.3f %12.3f %5.1f%%\n",
				th[i].pid, th[i].tid, comm, (double)th[i].on / 1e6,
				(double)th[i].off / 1e6, (double)sum / 1e6,
				sum ? 100.0 * (double)th[i].off / (double)sum : 0.0);
	}
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	free(th);
	free(kind);
	return err;
}
