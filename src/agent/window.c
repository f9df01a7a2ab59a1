// SPDX-License-Identifier: MIT
/*
 * One aggregate of the agent: a profile model (src/profile/) filled
 * sample by sample through the same code that loads perf.data files
 * (sfp_profile_loader_sample(): perf script's frames, symbolized on the
 * host), and encoded by the pprof exporter with the window's wall-clock
 * start and length.
 *
 * Interning at the sample, not at the window's end, is what lets a
 * process that exits mid-window keep its frames: its maps are dropped
 * from the machine model at its EXIT record.  Each aggregate owns its
 * tables and is freed once encoded, so a window costs what its distinct
 * stacks cost, whatever ran before.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "export/export-int.h"
#include "profile/load.h"

struct agent_agg {
	struct sfp_profile_loader ld;
	uint64_t samples;
	uint32_t pid;		/* the one pid seen, UINT32_MAX: several */
	uint64_t freq;
	bool off_cpu;		/* offcpu-time samples: blocked ns */
};

int agent_agg__new(const struct agent_agg_ctx *c, struct agent_agg **out)
{
	struct agent_agg *a = calloc(1, sizeof(*a));
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	err = sfp_profile_new(&a->ld.p);
	if (err) {
		free(a);
		return err;
	}
	a->ld.m = c->m;
	a->ld.sym = c->sym;
	a->ld.no_symbols = c->no_symbols;
	a->ld.live = true;
	a->ld.max_depth = 1024;
	a->freq = c->freq;
	a->off_cpu = c->off_cpu;
	*out = a;
	return 0;
}

int agent_agg__add(struct agent_agg *a, const struct sfp_perf_event *ev,
		   enum sfp_stitch_how how)
{
	int err = sfp_profile_loader_sample(&a->ld, ev, how);

	if (err)
		return err;
	a->samples++;
	if (!a->pid)
		a->pid = ev->sample.pid ? ev->sample.pid : UINT32_MAX;
	else if (a->pid != ev->sample.pid)
		a->pid = UINT32_MAX;
	return 0;
}

const struct sfp_profile *agent_agg__profile(const struct agent_agg *a)
{
	return a->ld.p;
}

uint64_t agent_agg__samples(const struct agent_agg *a)
{
	return a->samples;
}

uint32_t agent_agg__pid(const struct agent_agg *a)
{
	return a->pid == UINT32_MAX ? 0 : a->pid;
}

void agent_agg__drop_symbols(struct agent_agg *a, struct sfp_symbolizer *sym)
{
	size_t i;

	/* the old symbolizer is freed next: its handles and itself */
	a->ld.sym = sym;

	for (i = 0; i < a->ld.cap_dh; i++) {
		a->ld.dh[i].h = NULL;
		a->ld.dh[i].tried = false;
	}
}

int agent_agg__encode(struct agent_agg *a, uint64_t start_ns, uint64_t end_ns,
		      bool gzip, const char *const (*labels)[2], size_t nr_labels,
		      void **out, size_t *len)
{
	struct sfp_profile *p = a->ld.p;
	struct sfp_pprof_window x = {
		.time_nanos = (int64_t)start_ns,
		.duration_nanos = (int64_t)(end_ns - start_ns),
		.gzip = gzip,
		.labels = labels,
		.nr_labels = nr_labels,
	};

	/* one event: cpu-clock at the agent's frequency, which the pprof
	 * writer turns into cpu/nanoseconds with period 1e9 / freq */
	if (!p->events) {
		p->events = calloc(1, sizeof(*p->events));
		if (!p->events)
			return -ENOMEM;
		/* or offcpu-time, which the pprof writer turns into
		 * off_cpu/nanoseconds (each sample's period its blocked
		 * ns), also the period type */
		p->events[0].name = sfp_profile_str(p, a->off_cpu ?
						    SFP_OFF_CPU_EVENT_NAME :
						    "cpu-clock");
		if (!p->events[0].name)
			return -ENOMEM;
		p->events[0].kind = a->off_cpu ? SFP_PROFILE_EV_OFF_CPU :
						 SFP_PROFILE_EV_CLOCK;
		if (!a->off_cpu)
			p->events[0].sample_freq = a->freq;
		p->nr_events = 1;
		sfp_profile_finish(p);
	}
	return sfp_pprof_encode(p, &x, out, len);
}

void agent_agg__free(struct agent_agg **ap)
{
	struct agent_agg *a = *ap;

	if (!a)
		return;
	sfp_profile__free(&a->ld.p);
	sfp_profile_loader_release(&a->ld);
	free(a);
	*ap = NULL;
}
