/* SPDX-License-Identifier: MIT */
/*
 * The OpenTelemetry sink: each window, an OTLP
 * ExportProfilesServiceRequest, is posted, gzip, as
 * application/x-protobuf to BASE/v1development/profiles (OTLP/HTTP, the
 * HTTP mapping of the profiles service).  A URL whose path already ends
 * in /v1development/profiles is used as it is; a query stays after the
 * path (sink-url.c).
 *
 * The agent hands it requests written from its profiles (export/otlp.c),
 * and sfprof symbolize --listen the ones it was sent: those are sent as
 * they are.  A pprof window -- the files of sfprof push, the Pyroscope
 * pushes symbolize --listen forwards -- is converted (otlp-convert.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "agent/sink-int.h"

#define OTLP_PATH "/v1development/profiles"

struct otlp_sink {
	struct sink_http *http;
	char *url;
	char *tenant_hdr;
};

static int otlp_init(struct agent_sink *s, const struct agent_sink_opts *o,
		     void **priv)
{
	struct otlp_sink *p = calloc(1, sizeof(*p));
	struct sink_url u;
	char why[256];
	int err;

	if (!p)
		return -ENOMEM;
	err = sink_url_parse(o->target, &u, why, sizeof(why));
	if (err) {
		if (err == -EINVAL)
			pr_warn("sink otlp: '%s' is not a usable URL: %s",
				o->target, why);
		free(p);
		return err;
	}
	p->url = sink_url_make(&u, sink_url_path_ends(&u, OTLP_PATH) ? NULL :
			       OTLP_PATH, NULL);
	sink_url_free(&u);
	if (!p->url) {
		err = -ENOMEM;
		goto fail;
	}
	/* Multi-tenant OTLP receivers (Pyroscope's among them) read it too. */
	if (o->tenant && *o->tenant) {
		if (strpbrk(o->tenant, "\r\n")) {
			err = -EINVAL;
			goto fail;
		}
		if (asprintf(&p->tenant_hdr, "X-Scope-OrgID: %s", o->tenant) < 0) {
			p->tenant_hdr = NULL;
			err = -ENOMEM;
			goto fail;
		}
	}
	err = sink_http_new(s, o->auth_file, &p->http);
	if (err)
		goto fail;
	*priv = p;
	return 0;
fail:
	free(p->url);
	free(p->tenant_hdr);
	free(p);
	return err;
}

static enum sink_result otlp_deliver(struct agent_sink *s, void *priv,
				     const struct sink_item *it)
{
	struct otlp_sink *p = priv;
	const char *hdrs[4] = { "Content-Type: application/x-protobuf",
				"Content-Encoding: gzip", p->tenant_hdr, NULL };
	void *req = NULL, *gz = NULL;
	size_t req_len, gz_len;
	enum sink_result r;
	int err;

	if (it->otlp) {		/* made already: sent as it is */
		err = sfp_gzip(it->pprof, it->pprof_len, &gz, &gz_len);
		if (err)
			return SINK_RETRY;
		r = sink_http_post(p->http, p->url, hdrs, gz, gz_len);
		free(gz);
		return r;
	}
	err = otlp_convert(it, &req, &req_len);
	if (err == -EINVAL) {
		pr_warn("sink otlp: window %llu: its pprof does not convert; not sent",
			(unsigned long long)it->seq);
		return SINK_GIVE_UP;
	}
	if (err)
		return SINK_RETRY;
	err = sfp_gzip(req, req_len, &gz, &gz_len);
	free(req);
	if (err)
		return SINK_RETRY;
	r = sink_http_post(p->http, p->url, hdrs, gz, gz_len);
	free(gz);
	return r;
}

static void otlp_fini(void *priv)
{
	struct otlp_sink *p = priv;

	if (!p)
		return;
	sink_http_free(p->http);
	free(p->url);
	free(p->tenant_hdr);
	free(p);
}

const struct sink_backend sink_otlp_backend = {
	.name = "otlp",
	.init = otlp_init,
	.deliver = otlp_deliver,
	.fini = otlp_fini,
};
