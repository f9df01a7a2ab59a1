// SPDX-License-Identifier: MIT
/*
 * The requests of `sfprof symbolize --listen`: what the agent's sinks
 * send, named, handed to the agent's sinks.
 *
 *   POST /push.v1.PusherService/Push   Pyroscope's Connect push, as the
 *        pyroscope sink sends it: a PushRequest (application/proto),
 *        each series' samples a gzip (or plain) pprof Profile.  Each
 *        profile is named and becomes one window of the series' labels
 *        (__name__ as the window's name) for every sink.
 *   POST /v1development/profiles       OTLP/HTTP profiles, as the OTLP
 *        sink sends it: an ExportProfilesServiceRequest
 *        (application/x-protobuf, Content-Encoding gzip or none).  Named,
 *        it goes to the OTLP sink as it is (there is no OTLP-to-pprof
 *        conversion: with only --pyroscope it is refused, 501).
 *
 * Checked before anything is forwarded, each failure a 4xx whose body
 * says what and where: the content type and encoding, the gzip stream
 * (a member may unpack to max_profile bytes at most), the protobuf
 * (protobuf-c, through the schema), the counts (series, samples, labels),
 * each profile (symz_pprof()/symz_otlp() check every index they follow).
 * A request is forwarded whole or not at all.
 *
 * Naming goes through the shared store (store.c); a request waits for a
 * table another request is loading until its own deadline (timeout_ms
 * from its arrival), then leaves those frames unnamed and says so in the
 * account.  Forwarding never waits: agent_sink__submit() queues a copy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agent/agent.h"
#include "common/clock.h"
#include "common/gzip.h"
#include "otlp-profiles.pb-c.h"
#include "pyroscope-push.pb-c.h"
#include "symbolize/service.h"

#define PUSH_PATH "/push.v1.PusherService/Push"
#define OTLP_PATH "/v1development/profiles"

struct symz_service {
	struct symz_service_opts o;
	pthread_mutex_t lock;
	struct symz_service_stats st;
};

int symz_service_new(const struct symz_service_opts *o,
		     struct symz_service **out)
{
	struct symz_service *sv;

	*out = NULL;
	if (!o->store || (!o->pyroscope && !o->otlp && !o->check_only) ||
	    !o->max_profile ||
	    !o->max_series || !o->max_samples || !o->max_labels)
		return -EINVAL;
	sv = calloc(1, sizeof(*sv));
	if (!sv)
		return -ENOMEM;
	sv->o = *o;
	pthread_mutex_init(&sv->lock, NULL);
	*out = sv;
	return 0;
}

void symz_service_free(struct symz_service *sv)
{
	if (!sv)
		return;
	pthread_mutex_destroy(&sv->lock);
	free(sv);
}

void symz_service_stats(struct symz_service *sv, struct symz_service_stats *out)
{
	pthread_mutex_lock(&sv->lock);
	*out = sv->st;
	pthread_mutex_unlock(&sv->lock);
}

static void reply(struct agent_listen_req *rq, unsigned int status,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void reply(struct agent_listen_req *rq, unsigned int status,
		  const char *fmt, ...)
{
	va_list ap;

	rq->status = status;
	va_start(ap, fmt);
	if (vasprintf(&rq->reply, fmt, ap) < 0)
		rq->reply = NULL;
	va_end(ap);
}

/* media type without parameters, case-insensitive */
static bool is_type(const char *ct, const char *want)
{
	size_t n = strlen(want);

	if (!ct)
		return false;
	while (*ct == ' ')
		ct++;
	return !strncasecmp(ct, want, n) &&
	       (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

/*
 * The body as protobuf bytes: Content-Encoding gzip (or none, or
 * identity) undone.  Return: 0 (*raw to free), or a 4xx already set.
 */
static int body_bytes(struct symz_service *sv, struct agent_listen_req *rq,
		      void **raw, const void **pb, size_t *len)
{
	const char *ce = rq->content_encoding;
	int err;

	*raw = NULL;
	*pb = rq->body;
	*len = rq->len;
	if (!ce || !*ce || !strcasecmp(ce, "identity"))
		return 0;
	if (strcasecmp(ce, "gzip")) {
		reply(rq, 415, "Content-Encoding '%.40s' is not taken: gzip "
		      "or none\n", ce);
		return -EINVAL;
	}
	err = sfp_gunzip(rq->body, rq->len, sv->o.max_profile, raw, len);
	if (err) {
		reply(rq, err == -EFBIG ? 413 : 400, "the gzip body %s\n",
		      err == -EFBIG ? "unpacks to more than the limit "
				      "(--max-profile)" :
				      "is not a whole gzip stream");
		return err;
	}
	*pb = *raw;
	return 0;
}

/* The named profiles of one push, until all are checked and named. */
struct push_out {
	void *pprof;
	size_t len;
	size_t series;
	int64_t time_ns, duration_ns;
};

static void count_account(struct symz_service *sv, const struct symz_stats *a)
{
	size_t i;

	pthread_mutex_lock(&sv->lock);
	sv->st.locations += a->locations;
	sv->st.named += a->named;
	sv->st.already += a->already;
	sv->st.not_native += a->not_native;
	sv->st.unnamed += a->unnamed;
	sv->st.missing += a->missing;
	sv->st.inlined += a->inlined;
	for (i = 0; i < SYMZ_SRC__NR; i++)
		sv->st.by_source[i] += a->by_source[i];
	pthread_mutex_unlock(&sv->lock);
}

static void count_submit(struct symz_service *sv, int err)
{
	pthread_mutex_lock(&sv->lock);
	if (err)
		sv->st.submit_failed++;
	else
		sv->st.forwarded++;
	pthread_mutex_unlock(&sv->lock);
}

static void push(struct symz_service *sv, struct agent_listen_req *rq,
		 uint64_t deadline)
{
	struct symz_lookup lk = { .store = sv->o.store, .deadline_ns = deadline };
	Sfppush__PushRequest *req = NULL;
	struct push_out *outs = NULL;
	struct symz_stats acct = { 0 };
	size_t nr_out = 0, total = 0, i, j, k;
	const void *pb;
	void *raw = NULL;
	size_t pb_len;
	char why[256];
	int err;

	if (!is_type(rq->content_type, "application/proto") &&
	    !is_type(rq->content_type, "application/x-protobuf")) {
		reply(rq, 415, "Content-Type '%.60s': the Connect push is "
		      "taken as application/proto (binary), not JSON\n",
		      rq->content_type ? rq->content_type : "");
		return;
	}
	if (body_bytes(sv, rq, &raw, &pb, &pb_len))
		return;
	req = sfppush__push_request__unpack(NULL, pb_len, pb);
	if (!req) {
		reply(rq, 400, "not a PushRequest: protobuf-c could not "
		      "decode its %zu bytes\n", pb_len);
		goto out;
	}
	if (!req->n_series || req->n_series > sv->o.max_series) {
		reply(rq, 400, "%zu series: 1 to %u are taken\n",
		      req->n_series, sv->o.max_series);
		goto out;
	}
	for (i = 0; i < req->n_series; i++) {
		if (req->series[i]->n_labels > sv->o.max_labels) {
			reply(rq, 400, "series %zu: %zu labels, more than "
			      "%u\n", i, req->series[i]->n_labels,
			      sv->o.max_labels);
			goto out;
		}
		total += req->series[i]->n_samples;
	}
	if (total > sv->o.max_samples) {
		reply(rq, 400, "%zu samples, more than %u in one push\n",
		      total, sv->o.max_samples);
		goto out;
	}
	outs = calloc(total ? total : 1, sizeof(*outs));
	if (!outs) {
		reply(rq, 503, "out of memory\n");
		goto out;
	}
	for (i = 0; i < req->n_series; i++) {
		Sfppush__RawProfileSeries *se = req->series[i];

		for (j = 0; j < se->n_samples; j++) {
			ProtobufCBinaryData *b = &se->samples[j]->raw_profile;
			void *plain = NULL, *named = NULL;
			size_t plain_len = b->len, named_len = 0;
			const void *p = b->data;

			if (sfp_is_gzip(b->data, b->len)) {
				err = sfp_gunzip(b->data, b->len,
						 sv->o.max_profile, &plain,
						 &plain_len);
				if (err) {
					reply(rq, err == -EFBIG ? 413 : 400,
					      "series %zu sample %zu: the "
					      "profile %s\n", i, j,
					      err == -EFBIG ?
					      "unpacks to more than the limit "
					      "(--max-profile)" :
					      "is not a whole gzip stream");
					goto out;
				}
				p = plain;
			}
			err = symz_pprof(&lk, p, plain_len, sv->o.max_profile,
					 &named, &named_len, &acct, why,
					 sizeof(why));
			free(plain);
			if (err) {
				reply(rq, err == -ENOMEM ? 503 : 400,
				      "series %zu sample %zu: not a pprof "
				      "profile sfprof can name: %s\n", i, j,
				      why);
				goto out;
			}
			outs[nr_out].pprof = named;
			outs[nr_out].len = named_len;
			outs[nr_out].series = i;
			outs[nr_out].time_ns = acct.time_ns;
			outs[nr_out].duration_ns = acct.duration_ns;
			nr_out++;
		}
	}
	/* all checked and named: now forwarded, each to every sink */
	for (k = 0; k < nr_out; k++) {
		Sfppush__RawProfileSeries *se = req->series[outs[k].series];
		struct agent_label lab[se->n_labels ? se->n_labels : 1];
		struct agent_window w = { .labels = lab };

		for (j = 0; j < se->n_labels; j++) {
			const char *n = se->labels[j]->name;

			if (!strcmp(n, "__name__")) {
				if (strcmp(se->labels[j]->value, "process_cpu"))
					w.name = se->labels[j]->value;
				continue;
			}
			lab[w.nr_labels].key = n;
			lab[w.nr_labels].value = se->labels[j]->value;
			w.nr_labels++;
		}
		w.start_ns = outs[k].time_ns > 0 ? (uint64_t)outs[k].time_ns : 0;
		w.end_ns = w.start_ns + (outs[k].duration_ns > 0 ?
					 (uint64_t)outs[k].duration_ns : 0);
		w.pprof = outs[k].pprof;
		w.pprof_len = outs[k].len;
		if (sv->o.pyroscope)
			count_submit(sv, agent_sink__submit(sv->o.pyroscope, &w));
		if (sv->o.otlp)
			count_submit(sv, agent_sink__submit(sv->o.otlp, &w));
	}
	count_account(sv, &acct);
	reply(rq, 200, "%zu profiles named: %llu of %llu locations, %llu "
	      "in files not found\n", nr_out, (unsigned long long)acct.named,
	      (unsigned long long)acct.locations,
	      (unsigned long long)acct.missing);
out:
	for (k = 0; outs && k < nr_out; k++)
		free(outs[k].pprof);
	free(outs);
	symz_stats_free(&acct);
	if (req)
		sfppush__push_request__free_unpacked(req, NULL);
	free(raw);
}

static void otlp(struct symz_service *sv, struct agent_listen_req *rq,
		 uint64_t deadline)
{
	struct symz_lookup lk = { .store = sv->o.store, .deadline_ns = deadline };
	struct symz_stats acct = { 0 };
	struct agent_window w = { .otlp = true };
	void *raw = NULL, *named = NULL;
	const void *pb;
	size_t pb_len, named_len = 0;
	char why[256];
	int err;

	if (!sv->o.otlp && !sv->o.check_only) {
		reply(rq, 501, "OTLP requests are forwarded to --otlp only, "
		      "and this service has none\n");
		return;
	}
	if (!is_type(rq->content_type, "application/x-protobuf") &&
	    !is_type(rq->content_type, "application/protobuf")) {
		reply(rq, 415, "Content-Type '%.60s': OTLP/HTTP is taken as "
		      "application/x-protobuf (binary), not JSON\n",
		      rq->content_type ? rq->content_type : "");
		return;
	}
	if (body_bytes(sv, rq, &raw, &pb, &pb_len))
		return;
	err = symz_otlp(&lk, pb, pb_len, sv->o.max_profile, &named,
			&named_len, &acct, why, sizeof(why));
	if (err) {
		reply(rq, err == -ENOMEM ? 503 : 400, "not an OTLP profiles "
		      "request sfprof can name: %s\n", why);
		goto out;
	}
	w.pprof = named;
	w.pprof_len = named_len;
	if (sv->o.otlp)
		count_submit(sv, agent_sink__submit(sv->o.otlp, &w));
	count_account(sv, &acct);
	reply(rq, 200, "named: %llu of %llu locations, %llu in files not "
	      "found\n", (unsigned long long)acct.named,
	      (unsigned long long)acct.locations,
	      (unsigned long long)acct.missing);
out:
	symz_stats_free(&acct);
	free(named);
	free(raw);
}

void symz_service_post(void *ctx, struct agent_listen_req *rq)
{
	struct symz_service *sv = ctx;
	uint64_t deadline = sfp_mono_ns() + (uint64_t)sv->o.timeout_ms * 1000000ull;
	bool is_push = !strcmp(rq->url, PUSH_PATH);

	if (rq->too_big)
		reply(rq, 413, "the body is larger than the %zu bytes allowed "
		      "(--max-body)\n", rq->max_body);
	else if (is_push)
		push(sv, rq, deadline);
	else if (!strcmp(rq->url, OTLP_PATH))
		otlp(sv, rq, deadline);
	else
		reply(rq, 404, "not found; POST " PUSH_PATH " or " OTLP_PATH
		      "\n");
	pthread_mutex_lock(&sv->lock);
	if (rq->status >= 200 && rq->status < 300)
		sv->st.requests_ok[is_push ? 0 : 1]++;
	else if (rq->status >= 400 && rq->status < 500)
		sv->st.requests_refused++;
	else
		sv->st.requests_failed++;
	pthread_mutex_unlock(&sv->lock);
}

static void metric(FILE *f, const char *name, const char *type,
		   const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name,
		type, name, (unsigned long long)v);
}

/*
 * /metrics: the service's own families (sfprof_symbolize_*), then the
 * sinks', the listener's and the process's as the agent names them, so
 * that one dashboard reads both.
 */
void symz_service_metrics(void *ctx, FILE *f, const struct agent_listen_stats *l)
{
	static const char *const src_label[SYMZ_SRC__NR] = {
		[SYMZ_SRC_FILE] = "file", [SYMZ_SRC_DEBUG_DIR] = "debug_dir",
		[SYMZ_SRC_BUILDID_CACHE] = "buildid_cache",
		[SYMZ_SRC_DEBUGINFOD] = "debuginfod",
	};
	struct symz_service *sv = ctx;
	struct symz_service_stats s;
	struct symz_store_stats t;
	struct agent_metrics m = { 0 };
	size_t i;

	symz_service_stats(sv, &s);
	symz_store_stats(sv->o.store, &t);
	fprintf(f, "# HELP sfprof_symbolize_requests_total Requests answered, "
		"by what they were and how.\n# TYPE "
		"sfprof_symbolize_requests_total counter\n");
	fprintf(f, "sfprof_symbolize_requests_total{kind=\"push\",result=\"ok\"} %llu\n",
		(unsigned long long)s.requests_ok[0]);
	fprintf(f, "sfprof_symbolize_requests_total{kind=\"otlp\",result=\"ok\"} %llu\n",
		(unsigned long long)s.requests_ok[1]);
	fprintf(f, "sfprof_symbolize_requests_total{kind=\"any\",result=\"refused\"} %llu\n",
		(unsigned long long)s.requests_refused);
	fprintf(f, "sfprof_symbolize_requests_total{kind=\"any\",result=\"failed\"} %llu\n",
		(unsigned long long)s.requests_failed);
	metric(f, "sfprof_symbolize_windows_forwarded_total", "counter",
	       "Named profiles queued to a sink (one per sink).", s.forwarded);
	metric(f, "sfprof_symbolize_windows_not_queued_total", "counter",
	       "Named profiles a sink refused to queue (counted failed "
	       "there too).", s.submit_failed);
	metric(f, "sfprof_symbolize_locations_total", "counter",
	       "Locations of the profiles received.", s.locations);
	fprintf(f, "# HELP sfprof_symbolize_locations_named_total Locations "
		"named, by where the names came from.\n# TYPE "
		"sfprof_symbolize_locations_named_total counter\n");
	for (i = 0; i < SYMZ_SRC__NR; i++)
		fprintf(f, "sfprof_symbolize_locations_named_total{source=\"%s\"} %llu\n",
			src_label[i], (unsigned long long)s.by_source[i]);
	metric(f, "sfprof_symbolize_locations_already_named_total", "counter",
	       "Locations that came named: left alone.", s.already);
	metric(f, "sfprof_symbolize_locations_not_native_total", "counter",
	       "Locations without a mapping or a build-id.", s.not_native);
	metric(f, "sfprof_symbolize_locations_unnamed_total", "counter",
	       "Locations whose file was found, no symbol covering them.",
	       s.unnamed);
	metric(f, "sfprof_symbolize_locations_file_not_found_total", "counter",
	       "Locations left unnamed: their build-id's files were not "
	       "found (or another request's load outlasted the deadline).",
	       s.missing);
	metric(f, "sfprof_symbolize_inlined_frames_total", "counter",
	       "Inlined frames added.", s.inlined);
	metric(f, "sfprof_symbolize_tables", "gauge",
	       "Symbol tables kept (one per build-id).", t.tables);
	metric(f, "sfprof_symbolize_tables_bytes", "gauge",
	       "What the tables kept cost, against --memory (the files they "
	       "map and their heap).", t.bytes);
	metric(f, "sfprof_symbolize_tables_heap_bytes", "gauge",
	       "... of it their heap, as measured.", t.heap_bytes);
	metric(f, "sfprof_symbolize_tables_heap_measured", "gauge",
	       "1 if the tables' heap is measured, 0 if this build counts "
	       "their files only.", t.heap_measured);
	metric(f, "sfprof_symbolize_table_loads_total", "counter",
	       "Lookups of a build-id's files (each one once however many "
	       "requests asked at that moment).", t.loads);
	metric(f, "sfprof_symbolize_table_load_failures_total", "counter",
	       "... of them that found nothing.", t.load_failures);
	metric(f, "sfprof_symbolize_table_hits_total", "counter",
	       "Requests served by a table loaded or being loaded already.",
	       t.hits);
	metric(f, "sfprof_symbolize_table_waits_total", "counter",
	       "Requests that waited for another request's load.", t.waits);
	metric(f, "sfprof_symbolize_table_wait_timeouts_total", "counter",
	       "... that gave up at their deadline (frames left unnamed).",
	       t.wait_timeouts);
	metric(f, "sfprof_symbolize_table_evictions_total", "counter",
	       "Tables let go, least recently used first, for --memory.",
	       t.evictions);
	metric(f, "sfprof_symbolize_table_evicted_bytes_total", "counter",
	       "What the tables let go cost.", t.evicted_bytes);
	metric(f, "sfprof_symbolize_table_flushes_total", "counter",
	       "Times every table was let go (SIGHUP).", t.flushes);
	if (sv->o.pyroscope) {
		agent_sink__stats(sv->o.pyroscope, &m.sinks[m.nr_sinks].st);
		snprintf(m.sinks[m.nr_sinks].name, sizeof(m.sinks[0].name),
			 "%s", agent_sink__name(sv->o.pyroscope));
		m.nr_sinks++;
	}
	if (sv->o.otlp) {
		agent_sink__stats(sv->o.otlp, &m.sinks[m.nr_sinks].st);
		snprintf(m.sinks[m.nr_sinks].name, sizeof(m.sinks[0].name),
			 "%s", agent_sink__name(sv->o.otlp));
		m.nr_sinks++;
	}
	agent_metrics_write_sinks(f, &m);
	agent_metrics_write_listen(f, l);
	agent_metrics_write_process(f);
}
