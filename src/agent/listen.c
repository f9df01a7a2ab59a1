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
 * Or, for another server of the same limits (sfprof symbolize --listen:
 * agent_shared.svc set), POST bodies handed whole to the service's
 * handler on the connection's thread, its /metrics, and /healthz.
 *
 * A request thread never touches the sampling state: it queues its pull
 * for the main loop, which builds the profile from the samples it routes
 * anyway and signals when the span is over.  The threads wait, sampling
 * goes on.
 *
 * Nobody may lock the listener out (docs/agent.md, "Pull delivery"):
 * - at most lim.max_conn connections at once; the one past it is closed
 *   at accept, counted and said at most once a minute;
 * - a connection must bring a complete request within lim.timeout_s of
 *   opening (or of its last answer): the watchdog thread shuts down the
 *   socket of one that does not (idle, or a slowloris trickling bytes,
 *   which libmicrohttpd's inactivity timeout would never end);
 * - at most lim.max_pulls pulls wait at once, below max_conn, so that
 *   /metrics and /healthz always have room; one more is a 503;
 * - a pull whose client went away (the socket's peer closed: POLLRDHUP,
 *   as Go's net/http cancels the request's context) ends at once, not at
 *   the end of its span;
 * - libmicrohttpd's own messages go through the library's log callback
 *   (MHD_OPTION_EXTERNAL_LOGGER), prefixed, at most one a minute.
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
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "common/clock.h"

#define DEFAULT_SECONDS 30
/* Request threads only format short answers and wait: a small stack,
 * so that hundreds of connections reserve little address space. */
#define CONN_STACK_SIZE (256u << 10)
#define LOG_EVERY_NS (60ull * 1000000000ull)

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
	__typeof__(MHD_get_connection_info) *get_connection_info;
} dl;

#define MHD_start_daemon dl.start_daemon
#define MHD_stop_daemon dl.stop_daemon
#define MHD_get_daemon_info dl.get_daemon_info
#define MHD_create_response_from_buffer dl.create_response_from_buffer
#define MHD_add_response_header dl.add_response_header
#define MHD_queue_response dl.queue_response
#define MHD_destroy_response dl.destroy_response
#define MHD_lookup_connection_value dl.lookup_connection_value
#define MHD_get_connection_info dl.get_connection_info

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
	SYM(get_connection_info, "MHD_get_connection_info")
#undef SYM
	mhd_rc = 0;
}

/* One open connection, the watchdog's view of it. */
struct conn {
	struct conn *next, *prev;
	int fd;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns: a whole request by then */
	bool busy;		/* a request is being answered: no deadline */
	bool shut;		/* the watchdog ended it */
};

struct agent_listener {
	struct MHD_Daemon *d;
	struct agent_shared *sh;
	uint16_t port;
	struct agent_listen_limits lim;
	/* guards what follows */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* the watchdog: a deadline came, or stop */
	pthread_t watchdog;
	bool watchdog_running, stopping;
	struct conn *conns;
	struct agent_listen_stats st;
	uint64_t refused_log_ns, refused_since_log;
	/* libmicrohttpd's messages (their own lock: any of its threads) */
	pthread_mutex_t log_lock;
	uint64_t mhd_log_ns, mhd_since_log;
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

/*
 * Wait until the loop has answered P (true) or the client went away
 * (false: P is then the loop's to free).  The socket is watched for its
 * peer's close only (POLLRDHUP), not for input: a pipelined request's
 * bytes would wake the poll again and again.
 */
static bool wait_pull(struct agent_shared *sh, struct agent_pull *p, int fd)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = p->done_fd, .events = POLLIN },
			{ .fd = fd, .events = POLLRDHUP },
		};
		bool gone;
		int n = poll(pfd, fd >= 0 ? 2 : 1, -1);

		if (n < 0 && errno != EINTR)
			pfd[1].revents = POLLERR;	/* cannot watch: end */
		gone = fd >= 0 && (pfd[1].revents & (POLLRDHUP | POLLHUP |
						      POLLERR | POLLNVAL));
		pthread_mutex_lock(&sh->lock);
		if (p->done) {
			pthread_mutex_unlock(&sh->lock);
			return true;
		}
		if (gone) {
			uint64_t one = 1;

			p->abandoned = true;
			pthread_mutex_unlock(&sh->lock);
			(void)!write(sh->wake_fd, &one, sizeof(one));
			return false;
		}
		pthread_mutex_unlock(&sh->lock);
	}
}

static int conn_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
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
	bool answered;

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
	/* pulls hold their connection for their span: at most max_pulls,
	 * so that the rest of the connections stay for everything else */
	pthread_mutex_lock(&l->lock);
	if (l->st.pulls_waiting >= l->lim.max_pulls) {
		l->st.pulls_refused++;
		pthread_mutex_unlock(&l->lock);
		free(p);
		snprintf(msg, sizeof(msg), "%u pulls are in progress, the "
			 "agent's limit (--max-pulls); try again later\n",
			 l->lim.max_pulls);
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	l->st.pulls_waiting++;
	pthread_mutex_unlock(&l->lock);
	p->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->done_fd < 0) {
		ret = text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			   "out of file descriptors\n");
		free(p);
		goto out;
	}
	pthread_mutex_lock(&sh->lock);
	if (sh->stopping) {
		pthread_mutex_unlock(&sh->lock);
		close(p->done_fd);
		free(p);
		ret = text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			   "the agent is stopping\n");
		goto out;
	}
	p->next = sh->incoming;
	sh->incoming = p;
	{
		uint64_t one = 1;

		/* the loop may sleep for a second: the pull's span starts
		 * when the loop takes it */
		(void)!write(sh->wake_fd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&sh->lock);
	/* (libmicrohttpd's inactivity timeout is not checked while this
	 * waits, and MHD_queue_response() counts as activity: the answer
	 * gets the whole timeout, however long the span) */
	answered = wait_pull(sh, p, conn_fd(c));
	if (!answered) {
		pthread_mutex_lock(&l->lock);
		l->st.pulls_abandoned++;
		pthread_mutex_unlock(&l->lock);
		ret = MHD_NO;		/* close the connection */
		goto out;
	}
	close(p->done_fd);
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
out:
	pthread_mutex_lock(&l->lock);
	l->st.pulls_waiting--;
	pthread_mutex_unlock(&l->lock);
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
	pthread_mutex_lock(&l->lock);
	m.listen = l->st;
	m.have_listen = true;
	pthread_mutex_unlock(&l->lock);
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

/* A POST's body as it arrives (a service's request). */
struct post_body {
	char *buf;
	size_t len, cap;
	bool too_big;		/* past svc->max_body: the rest is not kept */
};

static void mark_busy(struct agent_listener *l, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;

	if (cn) {
		/* the request is complete: no deadline while it is answered */
		pthread_mutex_lock(&l->lock);
		cn->busy = true;
		pthread_mutex_unlock(&l->lock);
	}
}

static enum MHD_Result service_metrics(struct agent_listener *l,
				       struct MHD_Connection *c)
{
	const struct agent_listen_service *svc = l->sh->svc;
	struct agent_listen_stats ls;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	pthread_mutex_lock(&l->lock);
	ls = l->st;
	pthread_mutex_unlock(&l->lock);
	f = open_memstream(&buf, &len);
	if (!f)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	svc->metrics(svc->ctx, f, &ls);
	if (fclose(f)) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return answer(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		      buf, len, MHD_RESPMEM_MUST_FREE);
}

/*
 * A service's POST: libmicrohttpd calls once with the headers, then with
 * each piece of the body, then once more with none.  The whole request
 * must arrive within the watchdog's time (the connection is busy only
 * from then on), and no more than max_body is kept.
 */
static enum MHD_Result service_post(struct agent_listener *l,
				    struct MHD_Connection *c, const char *url,
				    const char *upload, size_t *upload_size,
				    void **con_cls)
{
	const struct agent_listen_service *svc = l->sh->svc;
	struct post_body *pb = *con_cls;
	struct agent_listen_req rq = { 0 };
	enum MHD_Result ret;

	if (!pb) {
		const char *cl = MHD_lookup_connection_value(
			c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		uint64_t n;

		pb = calloc(1, sizeof(*pb));
		if (!pb)
			return MHD_NO;
		/* too large by its length: read and dropped, then a 413
		 * (clients that send the whole body before reading the
		 * answer would see a reset, not the reason) */
		if (cl && (!parse_num(cl, UINT64_MAX / 10, &n) ||
			   n > svc->max_body))
			pb->too_big = true;
		*con_cls = pb;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (pb->too_big)
			return MHD_YES;
		if (n > svc->max_body - pb->len) {
			pb->too_big = true;
			free(pb->buf);
			pb->buf = NULL;
			return MHD_YES;
		}
		if (pb->len + n > pb->cap) {
			size_t nc = pb->cap ? pb->cap : 64 << 10;
			char *nb;

			while (nc < pb->len + n)
				nc *= 2;
			if (nc > svc->max_body)
				nc = svc->max_body;
			nb = realloc(pb->buf, nc);
			if (!nb)
				return MHD_NO;
			pb->buf = nb;
			pb->cap = nc;
		}
		memcpy(pb->buf + pb->len, upload, n);
		pb->len += n;
		return MHD_YES;
	}
	mark_busy(l, c);
	rq.too_big = pb->too_big;
	rq.max_body = svc->max_body;
	rq.url = url;
	rq.content_type = MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	rq.content_encoding = MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
	rq.body = pb->buf ? pb->buf : "";
	rq.len = pb->len;
	svc->post(svc->ctx, &rq);
	if (rq.reply)
		ret = answer(c, rq.status ? rq.status : MHD_HTTP_OK,
			     "text/plain; charset=utf-8", rq.reply,
			     strlen(rq.reply), MHD_RESPMEM_MUST_FREE);
	else
		ret = text(c, rq.status ? rq.status : MHD_HTTP_OK, "");
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct agent_listener *l = cls;
	const struct agent_listen_service *svc = l->sh->svc;

	(void)version;
	if (svc && !strcmp(method, "POST"))
		return service_post(l, c, url, upload, upload_size, con_cls);
	mark_busy(l, c);
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			    svc ? "GET or POST only\n" : "GET only\n");
	if (!strcmp(url, "/healthz"))
		return text(c, MHD_HTTP_OK, "ok\n");
	if (svc)
		return !strcmp(url, "/metrics") ? service_metrics(l, c) :
			text(c, MHD_HTTP_NOT_FOUND, "not found; POST "
			     "/push.v1.PusherService/Push or "
			     "/v1development/profiles, GET /metrics, "
			     "/healthz\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(l, c, false);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return l->sh->off_cpu ? profile(l, c, true) :
			text(c, MHD_HTTP_NOT_FOUND, "no off-CPU profiles: the "
			     "agent runs without --off-cpu\n");
	if (!strcmp(url, "/metrics"))
		return metrics(l, c);
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

/* libmicrohttpd's messages, through the library's log callback: at most
 * one a minute, saying how many were held back. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct agent_listener *l = cls;
	uint64_t now = sfp_mono_ns(), held;
	char buf[256];
	size_t n;

	pthread_mutex_lock(&l->log_lock);
	if (l->mhd_log_ns && now - l->mhd_log_ns < LOG_EVERY_NS) {
		l->mhd_since_log++;
		pthread_mutex_unlock(&l->log_lock);
		return;
	}
	held = l->mhd_since_log;
	l->mhd_log_ns = now;
	l->mhd_since_log = 0;
	pthread_mutex_unlock(&l->log_lock);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	if (held)
		pr_warn("--listen: libmicrohttpd: %s (and %llu more messages "
			"in the minute before; at most one a minute)", buf,
			(unsigned long long)held);
	else
		pr_warn("--listen: libmicrohttpd: %s (at most one message a "
			"minute)", buf);
}

/* At accept: one more connection than the limit is closed, counted. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr,
				     socklen_t addrlen)
{
	struct agent_listener *l = cls;
	uint64_t now, n;

	(void)addr;
	(void)addrlen;
	pthread_mutex_lock(&l->lock);
	if (l->st.connections < l->lim.max_conn) {
		pthread_mutex_unlock(&l->lock);
		return MHD_YES;
	}
	l->st.refused++;
	l->refused_since_log++;
	now = sfp_mono_ns();
	if (l->refused_log_ns && now - l->refused_log_ns < LOG_EVERY_NS) {
		pthread_mutex_unlock(&l->lock);
		return MHD_NO;
	}
	n = l->refused_since_log;
	l->refused_log_ns = now;
	l->refused_since_log = 0;
	pthread_mutex_unlock(&l->lock);
	pr_warn("--listen: refused %llu connection(s): %u open, the limit "
		"(--listen-connections); counted in "
		"sfprof_agent_listen_refused_total, said at most once a minute",
		(unsigned long long)n, l->lim.max_conn);
	return MHD_NO;
}

/* Called on the accepting thread (STARTED, right after accept_policy
 * allowed it) and on the cleaning one (CLOSED, before the socket is
 * closed: the watchdog never shuts down a reused descriptor). */
static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	struct agent_listener *l = cls;
	struct conn *cn;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		cn = calloc(1, sizeof(*cn));
		pthread_mutex_lock(&l->lock);
		l->st.connections++;
		if (cn) {
			cn->fd = conn_fd(c);
			cn->deadline = sfp_mono_ns() +
				       (uint64_t)l->lim.timeout_s * 1000000000ull;
			cn->next = l->conns;
			if (l->conns)
				l->conns->prev = cn;
			l->conns = cn;
			pthread_cond_signal(&l->cond);
		}
		pthread_mutex_unlock(&l->lock);
		*socket_context = cn;
		return;
	}
	cn = *socket_context;
	pthread_mutex_lock(&l->lock);
	l->st.connections--;
	if (cn) {
		if (cn->prev)
			cn->prev->next = cn->next;
		else
			l->conns = cn->next;
		if (cn->next)
			cn->next->prev = cn->prev;
	}
	pthread_mutex_unlock(&l->lock);
	free(cn);
	*socket_context = NULL;
}

/* A request answered (or given up): the next one has lim.timeout_s. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct agent_listener *l = cls;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;

	if (con_cls && *con_cls) {	/* a service's POST body */
		struct post_body *pb = *con_cls;

		free(pb->buf);
		free(pb);
		*con_cls = NULL;
	}
	pthread_mutex_lock(&l->lock);
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		l->st.timeouts++;	/* an answer nobody read */
	if (cn) {
		cn->busy = false;
		cn->deadline = sfp_mono_ns() +
			       (uint64_t)l->lim.timeout_s * 1000000000ull;
		pthread_cond_signal(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
}

/*
 * The watchdog: a connection without a complete request by its deadline
 * (idle, or sending it a byte at a time) has its socket shut down; its
 * thread then reads the end and closes it.
 */
static void *watchdog_main(void *arg)
{
	struct agent_listener *l = arg;

	pthread_setname_np(pthread_self(), "sfp-listen-dog");
	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		uint64_t now = sfp_mono_ns(), next = UINT64_MAX;
		struct conn *cn;

		for (cn = l->conns; cn; cn = cn->next) {
			if (cn->busy || cn->shut || cn->fd < 0)
				continue;
			if (cn->deadline <= now) {
				shutdown(cn->fd, SHUT_RDWR);
				cn->shut = true;
				l->st.timeouts++;
			} else if (cn->deadline < next) {
				next = cn->deadline;
			}
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&l->cond, &l->lock);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)(next / 1000000000ull),
				.tv_nsec = (long)(next % 1000000000ull),
			};

			pthread_cond_timedwait(&l->cond, &l->lock, &ts);
		}
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void listener_free(struct agent_listener *l)
{
	if (l->watchdog_running) {
		pthread_mutex_lock(&l->lock);
		l->stopping = true;
		pthread_cond_signal(&l->cond);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->watchdog, NULL);
	}
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	pthread_mutex_destroy(&l->log_lock);
	free(l);
}

int agent_listener__start(const char *addr,
			  const struct agent_listen_limits *lim,
			  struct agent_shared *sh,
			  struct agent_listener **out)
{
	struct agent_listener *l;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	pthread_condattr_t ca;
	socklen_t slen;
	bool v6;
	/* poll(), not select(): descriptors past FD_SETSIZE work */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
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
	if (!lim->max_conn || !lim->timeout_s || !lim->max_pulls ||
	    lim->max_pulls >= lim->max_conn ||
	    (sh->svc && (!sh->svc->max_body || !sh->svc->post ||
			 !sh->svc->metrics)))
		return -EINVAL;
	if (v6)
		flags |= MHD_USE_IPv6;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sh = sh;
	l->lim = *lim;
	pthread_mutex_init(&l->lock, NULL);
	pthread_mutex_init(&l->log_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&l->watchdog, NULL, watchdog_main, l)) {
		listener_free(l);
		return -EAGAIN;
	}
	l->watchdog_running = true;
	/*
	 * The limit is ours (accept_policy, which counts and says): the
	 * library's own is a little higher, so that it never refuses first
	 * with a line of its own.  Its inactivity timeout, a second past
	 * the watchdog's, ends an answer that nobody reads.
	 */
	l->d = MHD_start_daemon(flags, 0, accept_policy, l, on_request, l,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, lim->max_conn + 4,
				MHD_OPTION_CONNECTION_TIMEOUT,
				lim->timeout_s + 1,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
				MHD_OPTION_THREAD_STACK_SIZE,
				sh->svc && sh->svc->stack_size ?
				sh->svc->stack_size : (size_t)CONN_STACK_SIZE,
				MHD_OPTION_END);
	if (!l->d) {
		pr_warn("--listen %s: cannot listen there (in use, or not an "
			"address of this machine)", addr);
		listener_free(l);
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
	listener_free(l);
	*lp = NULL;
}
