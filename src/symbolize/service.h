/* SPDX-License-Identifier: MIT */
/*
 * `sfprof symbolize --listen`: the requests (service.c) on the agent's
 * listener (src/agent/listen.c), named through the shared store
 * (store.c), forwarded through the agent's sinks (src/agent/sink.c).
 */
#ifndef SFP_SYMBOLIZE_SERVICE_H
#define SFP_SYMBOLIZE_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/agent.h"
#include "symbolize/symbolize.h"

struct symz_service_opts {
	struct symz_store *store;
	struct agent_sink *pyroscope;	/* NULL: none (at least one) */
	struct agent_sink *otlp;
	size_t max_profile;	/* bytes a gzip body or profile unpacks to */
	unsigned int max_series;	/* series of one push */
	unsigned int max_samples;	/* profiles of one push */
	unsigned int max_labels;	/* labels of one series */
	uint32_t timeout_ms;	/* waiting for another request's load */
	bool check_only;	/* no sink needed, nothing forwarded (the
				   fuzz target) */
};

struct symz_service_stats {
	uint64_t requests_ok[2];	/* [0] Push, [1] OTLP */
	uint64_t requests_refused;	/* 4xx */
	uint64_t requests_failed;	/* 5xx */
	uint64_t forwarded;		/* windows queued to a sink */
	uint64_t submit_failed;		/* ... that the sink refused */
	/* the account of every request named, added up (symz_stats) */
	uint64_t locations, named, already, not_native, unnamed, missing;
	uint64_t inlined, by_source[SYMZ_SRC__NR];
};

struct symz_service;

SFP_HIDDEN int symz_service_new(const struct symz_service_opts *o,
				struct symz_service **out);
SFP_HIDDEN void symz_service_free(struct symz_service *sv);
SFP_HIDDEN void symz_service_stats(struct symz_service *sv,
				   struct symz_service_stats *out);
/* agent_listen_service.post, ctx the service */
SFP_HIDDEN void symz_service_post(void *ctx, struct agent_listen_req *rq);
/* agent_listen_service.metrics, ctx the service */
SFP_HIDDEN void symz_service_metrics(void *ctx, FILE *f,
				     const struct agent_listen_stats *l);

#endif
