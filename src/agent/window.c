// SPDX-License-Identifier: MIT
/*
 * A window of the agent as pprof or as OTLP: the live profile of one
 * service's samples (profile/live.h), encoded by the pprof or the OTLP
 * exporter with the window's wall-clock start and length and its labels.
 * Each format is written from the profile's tables; neither is made from
 * the other.
 */
#include "agent/agent.h"
#include "export/otlp-window.h"
#include "export/pprof-window.h"
#include "profile/live.h"

int agent_window_encode(struct sfp_live_profile *lp, uint64_t start_ns,
			uint64_t end_ns, bool gzip,
			const char *const (*labels)[2], size_t nr_labels,
			void **out, size_t *len)
{
	const struct sfp_profile *p = sfp_live_profile__finish(lp);
	struct sfp_pprof_window x = {
		.time_nanos = (int64_t)start_ns,
		.duration_nanos = (int64_t)(end_ns - start_ns),
		.gzip = gzip,
		.labels = labels,
		.nr_labels = nr_labels,
	};

	if (!p)
		return -ENOMEM;
	return sfp_pprof_encode(p, &x, out, len);
}

int agent_window_encode_otlp(struct sfp_live_profile *lp,
			     const struct agent_window_otlp *w, void **out,
			     size_t *len)
{
	const struct sfp_profile *p = sfp_live_profile__finish(lp);
	struct sfp_otlp_window x = {
		.time_nanos = w->start_ns,
		.duration_nanos = w->end_ns - w->start_ns,
		.seq = w->seq,
		.labels = w->labels,
		.nr_labels = w->nr_labels,
		.resource = w->resource,
		.nr_resource = w->nr_resource,
	};

	if (!p)
		return -ENOMEM;
	return sfp_otlp_encode(p, &x, out, len);
}
