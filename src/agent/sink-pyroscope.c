/* SPDX-License-Identifier: MIT */
/*
 * The Pyroscope sink.
 *
 * Default: the Connect API, POST BASE/push.v1.PusherService/Push (BASE's
 * query, if any, after it: sink-url.c), one
 * PushRequest per window with one series: labels __name__=process_cpu
 * (off_cpu for an off-CPU window: `agent --off-cpu`) and the window's labels (service_name first), one sample whose rawProfile
 * is the window's pprof, gzip.  The body is the binary protobuf
 * (Content-Type: application/proto, Connect's unary encoding) rather than
 * its JSON form: the pprof goes in as it is instead of base64 (a third
 * larger), and the message is packed by protobuf-c from the schema
 * (src/agent/proto/pyroscope-push.proto) instead of printed by hand.
 *
 * legacy_ingest: POST BASE/ingest?name=SERVICE{k=v,...}&from=S&until=S&
 * format=pprof with the gzip pprof as the body, for servers (and
 * proxies) that only take the old API; an off-CPU window goes there under
 * the same name, told apart by its pprof's sample type (off_cpu).
 *
 * X-Scope-OrgID carries the tenant; credentials come from a file
 * (sink-http.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "common/gzip.h"
#include "agent/sink-int.h"
#include "pyroscope-push.pb-c.h"

struct pyro_sink {
	struct sink_http *http;
	struct sink_url url;	/* the base URL, checked (sink-url.c) */
	char *push_url;
	char *tenant_hdr;	/* "X-Scope-OrgID: ..." or NULL */
	bool legacy;
	uint64_t id_salt;
};

static int pyro_init(struct agent_sink *s, const struct agent_sink_opts *o,
		     void **priv)
{
	struct pyro_sink *p = calloc(1, sizeof(*p));
	char why[256];
	int err;

	if (!p)
		return -ENOMEM;
	err = sink_url_parse(o->target, &p->url, why, sizeof(why));
	if (err) {
		if (err == -EINVAL)
			pr_warn("sink pyroscope: '%s' is not a usable URL: %s",
				o->target, why);
		free(p);
		return err;
	}
	p->push_url = sink_url_make(&p->url, "/push.v1.PusherService/Push",
				    NULL);
	if (!p->push_url)
		goto nomem;
	if (o->tenant && *o->tenant) {
		if (strpbrk(o->tenant, "\r\n")) {
			pr_warn("sink pyroscope: the tenant has a line break");
			err = -EINVAL;
			goto fail;
		}
		if (asprintf(&p->tenant_hdr, "X-Scope-OrgID: %s", o->tenant) < 0) {
			p->tenant_hdr = NULL;
			goto nomem;
		}
	}
	p->legacy = o->legacy_ingest;
	p->id_salt = sink_now_ns() ^ ((uint64_t)getpid() << 40);
	err = sink_http_new(s, o->auth_file, &p->http);
	if (err)
		goto fail;
	*priv = p;
	return 0;
nomem:
	err = -ENOMEM;
fail:
	sink_url_free(&p->url);
	free(p->push_url);
	free(p->tenant_hdr);
	free(p);
	return err;
}

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer: distinct inputs, unrelated-looking outputs.
	 * Not sfp_hash64(): a UUID takes all 64 bits, that returns 32. */
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* A version-4 UUID from the sink's random salt and the window's number. */
static void make_uuid(char out[37], uint64_t salt, uint64_t seq)
{
	uint64_t a = mix64(salt ^ (seq << 1));
	uint64_t b = mix64(mix64(salt) ^ (seq << 1 | 1));

	a = (a & ~0xF000ull) | 0x4000ull;
	b = (b & ~(3ull << 62)) | (2ull << 62);
	snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx",
		 (unsigned int)(a >> 32), (unsigned int)(a >> 16) & 0xffff,
		 (unsigned int)a & 0xffff, (unsigned int)(b >> 48),
		 (unsigned long long)(b & 0xffffffffffffull));
}

static enum sink_result push_connect(struct agent_sink *s,
				     struct pyro_sink *p,
				     const struct sink_item *it,
				     const void *gz, size_t gz_len)
{
	Sfppush__PushRequest req = SFPPUSH__PUSH_REQUEST__INIT;
	Sfppush__RawProfileSeries series = SFPPUSH__RAW_PROFILE_SERIES__INIT;
	Sfppush__RawProfileSeries *sp = &series;
	Sfppush__RawSample sample = SFPPUSH__RAW_SAMPLE__INIT;
	Sfppush__RawSample *samp = &sample;
	Sfppush__LabelPair *lp = calloc(it->nr_labels + 1, sizeof(*lp));
	Sfppush__LabelPair **lpp = calloc(it->nr_labels + 1, sizeof(*lpp));
	const char *hdrs[4] = { "Content-Type: application/proto",
				"Connect-Protocol-Version: 1", NULL, NULL };
	char id[37];
	uint8_t *body = NULL;
	size_t len, n = 0;
	enum sink_result r = SINK_RETRY;

	if (!lp || !lpp)
		goto out;
	sfppush__label_pair__init(&lp[n]);
	lp[n].name = (char *)"__name__";
	lp[n].value = it->name ? it->name : (char *)"process_cpu";
	lpp[n] = &lp[n];
	n++;
	for (size_t i = 0; i < it->nr_labels; i++, n++) {
		sfppush__label_pair__init(&lp[n]);
		lp[n].name = it->keys[i];
		lp[n].value = it->values[i];
		lpp[n] = &lp[n];
	}
	make_uuid(id, p->id_salt, it->seq);
	sample.raw_profile.data = (uint8_t *)gz;
	sample.raw_profile.len = gz_len;
	sample.id = id;
	series.n_labels = n;
	series.labels = lpp;
	series.n_samples = 1;
	series.samples = &samp;
	req.n_series = 1;
	req.series = &sp;
	len = sfppush__push_request__get_packed_size(&req);
	body = malloc(len ? len : 1);
	if (!body)
		goto out;
	sfppush__push_request__pack(&req, body);
	hdrs[2] = p->tenant_hdr;
	r = sink_http_post(p->http, p->push_url, hdrs, body, len);
out:
	free(body);
	free(lp);
	free(lpp);
	return r;
}

/* name=SERVICE{k=v,...} for /ingest, URL-escaped. */
static enum sink_result push_ingest(struct agent_sink *s, struct pyro_sink *p,
				    const struct sink_item *it,
				    const void *gz, size_t gz_len)
{
	const char *hdrs[3] = { "Content-Type: application/octet-stream",
				p->tenant_hdr, NULL };
	const char *svc = sink_item_label(it, "service_name");
	char *name = NULL, *url = NULL, *esc = NULL, *q = NULL;
	size_t nlen = 0;
	FILE *m = open_memstream(&name, &nlen);
	enum sink_result r = SINK_RETRY;
	bool first = true;

	if (!m)
		return SINK_RETRY;
	fprintf(m, "%s{", svc ? svc : "unknown");
	for (size_t i = 0; i < it->nr_labels; i++) {
		if (!strcmp(it->keys[i], "service_name"))
			continue;
		fprintf(m, "%s%s=%s", first ? "" : ",", it->keys[i],
			it->values[i]);
		first = false;
	}
	fputc('}', m);
	if (fclose(m))
		goto out;
	esc = sink_http_escape(name);
	if (!esc)
		goto out;
	/* from/until: whole seconds that cover the window. */
	if (asprintf(&q, "name=%s&from=%llu&until=%llu&format=pprof&spyName=sfprof",
		     esc, (unsigned long long)(it->start_ns / 1000000000ull),
		     (unsigned long long)((it->end_ns + 999999999ull) /
					  1000000000ull)) < 0) {
		q = NULL;
		goto out;
	}
	/* the base URL's own query first: BASE/ingest?x=1&name=... */
	url = sink_url_make(&p->url, "/ingest", q);
	if (!url)
		goto out;
	r = sink_http_post(p->http, url, hdrs, gz, gz_len);
out:
	free(q);
	free(esc);
	free(name);
	free(url);
	return r;
}

static enum sink_result pyro_deliver(struct agent_sink *s, void *priv,
				     const struct sink_item *it)
{
	struct pyro_sink *p = priv;
	void *gz;
	size_t gz_len;
	enum sink_result r;

	if (sfp_gzip(it->pprof, it->pprof_len, &gz, &gz_len))
		return SINK_RETRY;
	r = p->legacy ? push_ingest(s, p, it, gz, gz_len) :
			push_connect(s, p, it, gz, gz_len);
	free(gz);
	return r;
}

static void pyro_fini(void *priv)
{
	struct pyro_sink *p = priv;

	if (!p)
		return;
	sink_http_free(p->http);
	sink_url_free(&p->url);
	free(p->push_url);
	free(p->tenant_hdr);
	free(p);
}

const struct sink_backend sink_pyroscope_backend = {
	.name = "pyroscope",
	.init = pyro_init,
	.deliver = pyro_deliver,
	.fini = pyro_fini,
};
