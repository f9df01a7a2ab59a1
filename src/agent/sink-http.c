/* SPDX-License-Identifier: MIT */
/*
 * HTTP for the push sinks, through Debian's libcurl.  One easy handle per
 * sink (its delivery thread is the only user), so connections are kept
 * alive between windows.  A request never outlives close()'s deadline:
 * the transfer's time limit is cut to what is left, and the progress
 * callback aborts it once the deadline has passed (a backend that accepts
 * and never reads cannot hold the agent).
 */
#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink-int.h"

#define LOG_EVERY_NS (60ull * 1000000000ull)

struct sink_http {
	struct agent_sink *s;
	CURL *curl;
	char *userpwd;		/* basic auth */
	char *bearer;		/* "Authorization: Bearer ..." */
	char err[CURL_ERROR_SIZE];
	bool failing;		/* a retryable error was logged */
	uint64_t last_refused_log_ns;
	uint64_t refused_since_log;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int read_auth_file(struct sink_http *h, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f) {
		int err = -errno;
		pr_warn("sink: cannot open credentials file '%s': %s", path,
			strerror(-err));
		return err;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	if (!*buf) {
		pr_warn("sink: credentials file '%s' is empty", path);
		return -EINVAL;
	}
	if (strchr(buf, ':'))
		h->userpwd = strdup(buf);
	else if (asprintf(&h->bearer, "Authorization: Bearer %s", buf) < 0)
		h->bearer = NULL;
	explicit_bzero(buf, sizeof(buf));
	return h->userpwd || h->bearer ? 0 : -ENOMEM;
}

static int xfer_cb(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		   curl_off_t un)
{
	struct sink_http *h = p;

	return sink_past_deadline(h->s) ? 1 : 0;
}

static size_t discard_cb(char *ptr, size_t size, size_t n, void *p)
{
	return size * n;
}

int sink_http_new(struct agent_sink *s, const char *auth_file,
		  struct sink_http **out)
{
	struct sink_http *h;
	int err;

	*out = NULL;
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK)
		return -ENOMEM;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->s = s;
	if (auth_file && (err = read_auth_file(h, auth_file))) {
		sink_http_free(h);
		return err;
	}
	h->curl = curl_easy_init();
	if (!h->curl) {
		sink_http_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void sink_http_free(struct sink_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	if (h->userpwd) {
		explicit_bzero(h->userpwd, strlen(h->userpwd));
		free(h->userpwd);
	}
	if (h->bearer) {
		explicit_bzero(h->bearer, strlen(h->bearer));
		free(h->bearer);
	}
	free(h);
}

enum sink_result sink_http_post(struct sink_http *h, const char *url,
				const char *const *headers, const void *body,
				size_t len)
{
	struct curl_slist *hl = NULL, *t;
	long budget = sink_request_budget_ms(h->s), status = 0;
	enum sink_result r;
	CURLcode rc;

	/* No "Expect: 100-continue": one round trip, and a body either way. */
	hl = curl_slist_append(hl, "Expect:");
	for (size_t i = 0; hl && headers && headers[i]; i++)
		if ((t = curl_slist_append(hl, headers[i])))
			hl = t;
	if (hl && h->bearer && (t = curl_slist_append(hl, h->bearer)))
		hl = t;
	if (!hl)
		return SINK_RETRY;

	CURL *c = h->curl;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, budget);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, budget);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xfer_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_cb);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->err);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sfprof-agent");
	/* Only http and https, and no redirects to elsewhere. */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	if (h->userpwd) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, h->userpwd);
	}
	h->err[0] = 0;
	rc = curl_easy_perform(c);
	curl_slist_free_all(hl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);

	if (rc != CURLE_OK) {
		r = SINK_RETRY;
		if (!h->failing)
			pr_warn("sink: POST %s: %s; retrying with backoff",
				url, h->err[0] ? h->err : curl_easy_strerror(rc));
		h->failing = true;
	} else if (status >= 200 && status < 300) {
		if (h->failing)
			pr_info("sink: POST %s: delivering again (HTTP %ld)",
				url, status);
		h->failing = false;
		r = SINK_DELIVERED;
	} else if (status >= 500 || status == 429 || status == 408) {
		r = SINK_RETRY;
		if (!h->failing)
			pr_warn("sink: POST %s: HTTP %ld; retrying with backoff",
				url, status);
		h->failing = true;
	} else {
		uint64_t now = sink_now_ns();

		r = SINK_GIVE_UP;
		h->refused_since_log++;
		if (!h->last_refused_log_ns ||
		    now - h->last_refused_log_ns >= LOG_EVERY_NS) {
			pr_warn("sink: POST %s: HTTP %ld: window not accepted, not retried (%llu such)",
				url, status,
				(unsigned long long)h->refused_since_log);
			h->last_refused_log_ns = now;
			h->refused_since_log = 0;
		}
	}
	return r;
}
