// SPDX-License-Identifier: MIT
/*
 * The pull listener (libmicrohttpd, a thread per connection):
 *
 *   GET /debug/pprof/profile?seconds=N[&pid=P]
 *       Go net/http/pprof's contract: block N seconds (default 30), then
 *       answer the samples of that span as a gzip-compressed pprof
 *       Profile; pid= keeps one process.  A bad or too large N is a 400,
 *       as Go answers it.
 *   GET /debug/pprof/offcpu?seconds=N[&pid=P]
 *       the same for off-CPU time (`agent --off-cpu`): the blocks that
 *       ended in the span, off_cpu/nanoseconds; a 404 without --off-cpu.
 *   GET /metrics    Prometheus text format (metrics.c)
 *   GET /healthz    "ok"
 *
 * A request thread never touches the sampling state: it queues its pull
 * for the main loop, which builds the profile from the samples it routes
 * anyway and signals when the span is over.  The threads wait, sampling
 * goes on.
 *
 * libmicrohttpd.so.12 is dlopen()ed by the first --listen, not linked:
 * it brings GnuTLS and eight more libraries (p11-kit, nettle, gmp ...)
 * whose loading and constructors cost every sfprof run a few ms of CPU,
 * a fifth of `sfprof report` on a small file, though only the agent's
 * listener uses it.  The pointers take their types from microhttpd.h,
 * so a mismatch is a compile error.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

#define MAX_CONNECTIONS 32
#define DEFAULT_SECONDS 30

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} dl;

#define MHD_start_daemon dl.start_daemon
#define MHD_stop_daemon dl.stop_daemon
#define MHD_get_daemon_info dl.get_daemon_info
#define MHD_create_response_from_buffer dl.create_response_from_buffer
#define MHD_add_response_header dl.add_response_header
#define MHD_queue_response dl.queue_response
#define MHD_destroy_response dl.destroy_response
#define MHD_lookup_connection_value dl.lookup_connection_value

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static int mhd_rc = -ENOSYS;

static void mhd_load(void)
{
	/* never dlclose()d: a daemon's threads run its code until stopped */
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		pr_warn("--listen: cannot load " MHD_SONAME
			" (install libmicrohttpd12): %s", dlerror());
		return;
	}
#define SYM(f, name)							\
	if (!(dl.f = (__typeof__(dl.f))dlsym(lib, name))) {		\
		pr_warn("--listen: " MHD_SONAME " lacks " name);	\
		return;							\
	}
	SYM(start_daemon, "MHD_start_daemon")
	SYM(stop_daemon, "MHD_stop_daemon")
	SYM(get_daemon_info, "MHD_get_daemon_info")
	SYM(create_response_from_buffer, "MHD_create_response_from_buffer")
	SYM(add_response_header, "MHD_add_response_header")
	SYM(queue_response, "MHD_queue_response")
	SYM(destroy_response, "MHD_destroy_response")
	SYM(lookup_connection_value, "MHD_lookup_connection_value")
#undef SYM
	mhd_rc = 0;
}

struct agent_listener {
	struct MHD_Daemon *d;
	struct agent_shared *sh;
	uint16_t port;
};

uint16_t agent_listener__port(const struct agent_listener *l)
{
	return l->port;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status,
			      const char *type, void *body, size_t len,
			      enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_OK && !strcmp(type, "application/octet-stream"))
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned int status,
			    const char *msg)
{
	return answer(c, status, "text/plain; charset=utf-8", (void *)msg,
		      strlen(msg), MHD_RESPMEM_MUST_COPY);
}

/* A decimal number with nothing else; false for anything else. */
static bool parse_num(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > max)
			return false;
	}
	*v = n;
	return true;
}

static enum MHD_Result profile(struct agent_listener *l,
			       struct MHD_Connection *c, bool off_cpu)
{
	struct agent_shared *sh = l->sh;
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "seconds");
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "pid");
	struct agent_pull *p;
	uint64_t secs = DEFAULT_SECONDS, v;
	char msg[160];
	enum MHD_Result ret;

	if (s && (!parse_num(s, UINT32_MAX, &secs) || !secs)) {
		snprintf(msg, sizeof(msg), "bad seconds '%.40s'\n", s);
		return text(c, MHD_HTTP_BAD_REQUEST, msg);
	}
	if (secs > sh->max_seconds) {
		snprintf(msg, sizeof(msg), "profile duration %llu s exceeds "
			 "the agent's limit of %llu s\n",
			 (unsigned long long)secs,
			 (unsigned long long)sh->max_seconds);
		return text(c, MHD_HTTP_BAD_REQUEST, msg);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	p->seconds = secs;
	p->off_cpu = off_cpu;
	if (pid) {
		if (!parse_num(pid, INT32_MAX, &v) || !v) {
			free(p);
			snprintf(msg, sizeof(msg), "bad pid '%.40s'\n", pid);
			return text(c, MHD_HTTP_BAD_REQUEST, msg);
		}
		p->pid = (uint32_t)v;
	}
	pthread_mutex_lock(&sh->lock);
	if (sh->stopping) {
		pthread_mutex_unlock(&sh->lock);
		free(p);
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "the agent is stopping\n");
	}
	p->next = sh->incoming;
	sh->incoming = p;
	{
		uint64_t one = 1;

		/* the loop may sleep for a second: the pull's span starts
		 * when the loop takes it */
		(void)!write(sh->wake_fd, &one, sizeof(one));
	}
	while (!p->done)
		pthread_cond_wait(&sh->cond, &sh->lock);
	pthread_mutex_unlock(&sh->lock);
	if (p->err) {
		snprintf(msg, sizeof(msg), "could not make the profile: %s\n",
			 sfp_strerror(p->err));
		ret = text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
		free(p->body);
	} else {
		ret = answer(c, MHD_HTTP_OK, "application/octet-stream",
			     p->body, p->len, MHD_RESPMEM_MUST_FREE);
	}
	free(p);
	return ret;
}

static enum MHD_Result metrics(struct agent_listener *l,
			       struct MHD_Connection *c)
{
	struct agent_metrics m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	pthread_mutex_lock(&l->sh->lock);
	m = l->sh->metrics;
	pthread_mutex_unlock(&l->sh->lock);
	f = open_memstream(&buf, &len);
	if (!f)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	agent_metrics_write(f, &m);
	if (fclose(f)) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return answer(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		      buf, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct agent_listener *l = cls;

	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(l, c, false);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return l->sh->off_cpu ? profile(l, c, true) :
			text(c, MHD_HTTP_NOT_FOUND, "no off-CPU profiles: the "
			     "agent runs without --off-cpu\n");
	if (!strcmp(url, "/metrics"))
		return metrics(l, c);
	if (!strcmp(url, "/healthz"))
		return text(c, MHD_HTTP_OK, "ok\n");
	return text(c, MHD_HTTP_NOT_FOUND,
		    "not found; try /debug/pprof/profile?seconds=N, "
		    "/metrics, /healthz\n");
}

/* "ADDR:PORT", "[V6]:PORT" or ":PORT" (127.0.0.1). */
static int parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len, bool *v6)
{
	char host[128];
	const char *colon;
	uint64_t port;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(e - s - 1), s + 1);
		colon = e + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	}
	if (!parse_num(colon + 1, 65535, &port))
		return -EINVAL;
	if (!host[0])
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		*v6 = true;
		return 0;
	}
	return -EINVAL;
}

int agent_listener__start(const char *addr, struct agent_shared *sh,
			  struct agent_listener **out)
{
	struct agent_listener *l;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	socklen_t slen;
	bool v6;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_ERROR_LOG;

	*out = NULL;
	pthread_once(&mhd_once, mhd_load);
	if (mhd_rc)
		return mhd_rc;
	if (parse_addr(addr, &ss, &slen, &v6)) {
		pr_warn("--listen: '%s' is not ADDR:PORT (127.0.0.1:6060, "
			"[::1]:6060, :6060)", addr);
		return -EINVAL;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sh = sh;
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, 0u,
				MHD_OPTION_END);
	if (!l->d) {
		pr_warn("--listen %s: cannot listen there (in use, or not an "
			"address of this machine)", addr);
		free(l);
		return -EADDRINUSE;
	}
	info = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);
	l->port = info ? info->port : 0;
	*out = l;
	return 0;
}

void agent_listener__stop(struct agent_listener **lp)
{
	struct agent_listener *l = *lp;

	if (!l)
		return;
	MHD_stop_daemon(l->d);
	free(l);
	*lp = NULL;
}
