/* SPDX-License-Identifier: MIT */
/*
 * Inside the sinks: what sink.c (queue, delivery thread, retries, stats)
 * asks of each backend (files, Pyroscope, OTLP), and the helpers they
 * share (HTTP through libcurl, gzip).
 */
#ifndef SFP_AGENT_SINK_INT_H
#define SFP_AGENT_SINK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sink.h"

/* One queued window: a private copy of what the submitter passed. */
struct sink_item {
	struct sink_item *next;
	char **keys, **values;	/* the labels */
	size_t nr_labels;
	uint64_t start_ns, end_ns;
	void *pprof;
	size_t pprof_len;
	size_t cost;		/* bytes charged to the queue's budget */
	uint64_t seq;		/* 0, 1, ... in submission order */
	char *name;		/* agent_window.name, NULL: CPU time */
	bool otlp;		/* agent_window.otlp: pprof is an OTLP request */
};

/* What one delivery attempt came to. */
enum sink_result {
	SINK_DELIVERED,
	SINK_RETRY,		/* connect error, timeout, 5xx, 429: again later */
	SINK_GIVE_UP,		/* the backend refused it for good (4xx) */
};

struct sink_backend {
	const char *name;
	/* Set up from the sink's options; *PRIV is passed back. */
	int (*init)(struct agent_sink *s, const struct agent_sink_opts *o,
		    void **priv);
	enum sink_result (*deliver)(struct agent_sink *s, void *priv,
				    const struct sink_item *it);
	void (*fini)(void *priv);
};

/* Each sink's backend, in its file (sinks.def). */
#define AGENT_SINK(kind, opt, arg, backend, help)			\
	extern const struct sink_backend backend;
#include "agent/sinks.def"
#undef AGENT_SINK

/* The value of label KEY of IT, or NULL. */
SFP_HIDDEN const char *sink_item_label(const struct sink_item *it,
				       const char *key);

/* CLOCK_MONOTONIC in ns. */
SFP_HIDDEN uint64_t sink_now_ns(void);
/*
 * Milliseconds one request may take now: the sink's timeout, cut to what
 * is left before close()'s deadline (at least 1).
 */
SFP_HIDDEN long sink_request_budget_ms(struct agent_sink *s);
/* True once close()'s deadline has passed: abandon the request. */
SFP_HIDDEN bool sink_past_deadline(struct agent_sink *s);
SFP_HIDDEN const char *sink_target(const struct agent_sink *s);


/* --- HTTP (sink-http.c) --- */
struct sink_http;

/*
 * A client for the sink's URLs: one libcurl easy handle (connections are
 * kept alive between windows) with the credentials of AUTH_FILE (NULL:
 * none): a first line "user:password" is basic auth, anything else a
 * bearer token.  The file is read here, once; nothing comes from argv.
 */
SFP_HIDDEN int sink_http_new(struct agent_sink *s, const char *auth_file,
			     struct sink_http **out);
SFP_HIDDEN void sink_http_free(struct sink_http *h);
/* s URL-encoded (malloc()ed; free()), NULL if libcurl is missing or on
 * -ENOMEM. */
SFP_HIDDEN char *sink_http_escape(const char *s);
/*
 * POST BODY to URL with the extra HEADERS (NULL-terminated "Name: value"
 * lines).  Classifies the outcome: 2xx delivered; connect errors,
 * timeouts, 5xx and 429 retried; other statuses given up on, logged
 * with the URL and status (at most once a minute).
 */
SFP_HIDDEN enum sink_result sink_http_post(struct sink_http *h,
					   const char *url,
					   const char *const *headers,
					   const void *body, size_t len);

/* --- URLs (sink-url.c) --- */
struct sink_url {
	char *origin;		/* "http://host:port" */
	char *path;		/* "" or "/a/b", without a trailing '/' */
	char *query;		/* what followed '?', NULL if nothing */
};

/*
 * Check URL (http or https, a host, a port in 1..65535, a path and
 * query of RFC 3986's characters, no credentials, no fragment) and split
 * it.  Return: 0, -EINVAL with what is wrong and at which offset in WHY,
 * or -ENOMEM.
 */
SFP_HIDDEN int sink_url_parse(const char *url, struct sink_url *u, char *why,
			      size_t why_len);
/* ORIGIN PATH API_PATH [?QUERY[&EXTRA]]: malloc()ed, NULL on -ENOMEM. */
SFP_HIDDEN char *sink_url_make(const struct sink_url *u, const char *api_path,
			       const char *extra_query);
SFP_HIDDEN bool sink_url_path_ends(const struct sink_url *u,
				   const char *suffix);
SFP_HIDDEN void sink_url_free(struct sink_url *u);

/* --- OTLP conversion (otlp-convert.c) --- */
/*
 * For a window that comes as pprof (sfprof push, symbolize --listen's
 * Pyroscope pushes; the agent's own are OTLP already, export/otlp.c):
 * decode the window's pprof and build the ExportProfilesServiceRequest
 * with the same stacks (one Profile per pprof sample type), resource
 * attributes from the window's labels.  Return: 0 or -errno (-EINVAL: the
 * pprof does not decode or its indices are inconsistent).
 */
SFP_HIDDEN int otlp_convert(const struct sink_item *it, void **out,
			    size_t *out_len);

#endif
