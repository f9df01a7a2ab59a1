/* SPDX-License-Identifier: MIT */
/*
 * HTTP for the push sinks, through Debian's libcurl.  One easy handle per
 * sink (its delivery thread is the only user), so connections are kept
 * alive between windows.  A request never outlives close()'s deadline:
 * the transfer's time limit is cut to what is left, and the progress
 * callback aborts it once the deadline has passed (a backend that accepts
 * and never reads cannot hold the agent).
 *
 * libcurl.so.4 is dlopen()ed by the first sink that needs it, not linked:
 * its TLS, Kerberos and LDAP dependencies cost every sfprof run ~20 ms of
 * CPU in the dynamic loader and their constructors (a third of `sfprof
 * script` on a small file), though only the agent's push sinks use it.
 * The function pointers take their types from curl.h, so a mismatch is
 * a compile error; the type-checking macros of curl.h are off because
 * the calls go through those pointers.
 */
#define CURL_DISABLE_TYPECHECK 1
#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
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

#define CURL_SONAME "libcurl.so.4"

static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_escape) *easy_escape;
	__typeof__(curl_free) *free;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} dl;

/* (curl.h has these two as macros of themselves) */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init dl.global_init
#define curl_easy_init dl.easy_init
#define curl_easy_cleanup dl.easy_cleanup
#define curl_easy_reset dl.easy_reset
#define curl_easy_setopt dl.easy_setopt
#define curl_easy_perform dl.easy_perform
#define curl_easy_getinfo dl.easy_getinfo
#define curl_easy_strerror dl.easy_strerror
#define curl_easy_escape dl.easy_escape
#define curl_free dl.free
#define curl_slist_append dl.slist_append
#define curl_slist_free_all dl.slist_free_all

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc = -ENOSYS;

static void curl_init_once(void)
{
	void *lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		pr_warn("sink: cannot load " CURL_SONAME " (install libcurl4): %s",
			dlerror());
		return;
	}
#define SYM(f, name)							\
	if (!(dl.f = (__typeof__(dl.f))dlsym(lib, name))) {		\
		pr_warn("sink: " CURL_SONAME " lacks " name);		\
		return;							\
	}
	SYM(global_init, "curl_global_init")
	SYM(easy_init, "curl_easy_init")
	SYM(easy_cleanup, "curl_easy_cleanup")
	SYM(easy_reset, "curl_easy_reset")
	SYM(easy_setopt, "curl_easy_setopt")
	SYM(easy_perform, "curl_easy_perform")
	SYM(easy_getinfo, "curl_easy_getinfo")
	SYM(easy_strerror, "curl_easy_strerror")
	SYM(easy_escape, "curl_easy_escape")
	SYM(free, "curl_free")
	SYM(slist_append, "curl_slist_append")
	SYM(slist_free_all, "curl_slist_free_all")
#undef SYM
	/* never dlclose()d: libcurl's global state lives until exit */
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ?
			       0 : -ENOMEM;
}

char *sink_http_escape(const char *s)
{
	char *esc, *r = NULL;
	CURL *c;

	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc || !(c = curl_easy_init()))
		return NULL;
	esc = curl_easy_escape(c, s, 0);
	curl_easy_cleanup(c);
	if (esc) {
		r = strdup(esc);
		curl_free(esc);
	}
	return r;
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
	if (curl_init_rc)
		return curl_init_rc;
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
