// SPDX-License-Identifier: MIT
/*
 * A profile filled from live events (live.h): the file loader's per-sample
 * state without a file behind it.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/live.h"
#include "profile/load.h"

struct sfp_live_profile {
	struct sfp_profile_loader ld;
	uint64_t samples;
	uint32_t pid;		/* the one pid seen, UINT32_MAX: several */
	uint64_t freq;
	bool off_cpu;
};

int sfp_live_profile__new(const struct sfp_live_profile_opts *o,
			  struct sfp_live_profile **out)
{
	struct sfp_live_profile *lp;
	int err;

	*out = NULL;
	if (!SFP_OPTS_VALID(o, sfp_live_profile_opts))
		return -EINVAL;
	lp = calloc(1, sizeof(*lp));
	if (!lp)
		return -ENOMEM;
	err = sfp_profile_new(&lp->ld.p);
	if (err) {
		free(lp);
		return err;
	}
	lp->ld.m = SFP_OPTS_GET(o, sfp_live_profile_opts, m, NULL);
	lp->ld.sym = SFP_OPTS_GET(o, sfp_live_profile_opts, sym, NULL);
	lp->ld.no_symbols = SFP_OPTS_GET(o, sfp_live_profile_opts, no_symbols,
					 false);
	/* the processes run: their files are read through /proc/PID/root */
	lp->ld.live = true;
	lp->ld.max_depth = 1024;
	lp->freq = SFP_OPTS_GET(o, sfp_live_profile_opts, freq, 0);
	lp->off_cpu = SFP_OPTS_GET(o, sfp_live_profile_opts, off_cpu, false);
	*out = lp;
	return 0;
}

int sfp_live_profile__add(struct sfp_live_profile *lp,
			  const struct sfp_perf_event *ev,
			  enum sfp_stitch_how how)
{
	int err = sfp_profile_loader_sample(&lp->ld, ev, how);

	if (err)
		return err;
	lp->samples++;
	if (!lp->pid)
		lp->pid = ev->sample.pid ? ev->sample.pid : UINT32_MAX;
	else if (lp->pid != ev->sample.pid)
		lp->pid = UINT32_MAX;
	return 0;
}

uint64_t sfp_live_profile__samples(const struct sfp_live_profile *lp)
{
	return lp->samples;
}

uint32_t sfp_live_profile__pid(const struct sfp_live_profile *lp)
{
	return lp->pid == UINT32_MAX ? 0 : lp->pid;
}

const struct sfp_profile *
sfp_live_profile__profile(const struct sfp_live_profile *lp)
{
	return lp->ld.p;
}

const struct sfp_profile *sfp_live_profile__finish(struct sfp_live_profile *lp)
{
	struct sfp_profile *p = lp->ld.p;

	if (p->events)
		return p;
	p->events = calloc(1, sizeof(*p->events));
	if (!p->events)
		return NULL;
	/* cpu-clock, which the pprof writer turns into cpu/nanoseconds
	 * with period 1e9 / freq; or offcpu-time, off_cpu/nanoseconds
	 * (each sample's period its blocked ns), also the period type */
	p->events[0].name = sfp_profile_str(p, lp->off_cpu ?
					    SFP_OFF_CPU_EVENT_NAME :
					    "cpu-clock");
	if (!p->events[0].name) {
		free(p->events);
		p->events = NULL;
		return NULL;
	}
	p->events[0].kind = lp->off_cpu ? SFP_PROFILE_EV_OFF_CPU :
					  SFP_PROFILE_EV_CLOCK;
	if (!lp->off_cpu)
		p->events[0].sample_freq = lp->freq;
	p->nr_events = 1;
	sfp_profile_finish(p);
	return p;
}

uint32_t sfp_live_profile__file_key(const struct sfp_live_profile *lp,
				    size_t i)
{
	return lp->ld.p->map_key[i];
}

void sfp_live_profile__set_symbolizer(struct sfp_live_profile *lp,
				      struct sfp_symbolizer *sym)
{
	size_t i;

	lp->ld.sym = sym;
	for (i = 0; i < lp->ld.cap_dh; i++) {
		lp->ld.dh[i].h = NULL;
		lp->ld.dh[i].tried = false;
	}
}

void sfp_live_profile__free(struct sfp_live_profile **lpp)
{
	struct sfp_live_profile *lp = *lpp;

	if (!lp)
		return;
	sfp_profile__free(&lp->ld.p);
	sfp_profile_loader_release(&lp->ld);
	free(lp);
	*lpp = NULL;
}
