// SPDX-License-Identifier: MIT
/*
 * The push sinks' URLs, checked once when the sink starts and then put
 * together from their parts.
 *
 * A URL that can never work (no host, a port past 65535, an unclosed
 * IPv6 bracket, a space in the path) is refused at start with what is
 * wrong and where: sent as it is, libcurl fails on it every time and the
 * sink would retry it for ever as if the backend were down.  The check is
 * RFC 3986's syntax for http and https, stricter where a push target has
 * no use for the freedom: credentials belong in --auth-file, never in the
 * URL (it is printed in logs and /metrics), and a #fragment is never sent.
 *
 * Building: the API's path goes after the URL's own path, and the URL's
 * query after that (BASE/push.v1.PusherService/Push?x=1), not the path
 * pasted after the query.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink-int.h"

static bool is_unreserved(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* RFC 3986 pchar, and '/' (and '?' in a query). */
static bool is_path_char(char c, bool query)
{
	return is_unreserved(c) || strchr("!$&'()*+,;=:@/", c) ||
	       (query && c == '?');
}

/* Where in URL [from, to) a character not allowed there is, or -1; a
 * '%' must start %HH. */
static long bad_char(const char *url, size_t from, size_t to, bool query)
{
	for (size_t i = from; i < to; i++) {
		char c = url[i];

		if (c == '%') {
			if (i + 2 >= to || !is_hex(url[i + 1]) ||
			    !is_hex(url[i + 2]))
				return (long)i;
			i += 2;
			continue;
		}
		if (!c || !is_path_char(c, query))
			return (long)i;
	}
	return -1;
}

static void say_char(char *why, size_t len, const char *url, long at,
		     const char *where)
{
	unsigned char c = (unsigned char)url[at];

	if (c == '%')
		snprintf(why, len, "offset %ld: '%%' does not start a %%HH "
			 "escape in the %s", at, where);
	else if (c == ' ')
		snprintf(why, len, "offset %ld: a space in the %s (write it "
			 "as %%20)", at, where);
	else if (c < 0x20 || c >= 0x7f)
		snprintf(why, len, "offset %ld: byte 0x%02x in the %s (escape "
			 "it as %%HH)", at, c, where);
	else
		snprintf(why, len, "offset %ld: '%c' is not allowed in the %s "
			 "(escape it as %%%02X)", at, c, where, c);
}

int sink_url_parse(const char *url, struct sink_url *u, char *why,
		   size_t why_len)
{
	size_t p, host, host_end, auth_end, path_end;
	const char *colon;
	long bad;

	memset(u, 0, sizeof(*u));
	if (!strncasecmp(url, "http://", 7))
		p = 7;
	else if (!strncasecmp(url, "https://", 8))
		p = 8;
	else {
		snprintf(why, why_len, "not an http:// or https:// URL");
		return -EINVAL;
	}
	auth_end = p + strcspn(url + p, "/?#");
	host = p;
	if (memchr(url + p, '@', auth_end - p)) {
		snprintf(why, why_len, "credentials in the URL: give them in "
			 "a file (--auth-file), never on the command line");
		return -EINVAL;
	}
	if (host == auth_end) {
		snprintf(why, why_len, "offset %zu: no host", host);
		return -EINVAL;
	}
	if (url[host] == '[') {
		const char *rb = memchr(url + host, ']', auth_end - host);
		char a6[64];
		struct in6_addr in6;

		if (!rb) {
			snprintf(why, why_len, "offset %zu: '[' opens an IPv6 "
				 "address that no ']' closes", host);
			return -EINVAL;
		}
		host_end = (size_t)(rb - url) + 1;
		if (host_end - host - 2 >= sizeof(a6) ||
		    (snprintf(a6, sizeof(a6), "%.*s", (int)(host_end - host - 2),
			      url + host + 1),
		     inet_pton(AF_INET6, a6, &in6) != 1)) {
			snprintf(why, why_len, "offset %zu: '%.*s' is not an "
				 "IPv6 address", host + 1,
				 (int)(host_end - host - 2) > 64 ? 64 :
				 (int)(host_end - host - 2), url + host + 1);
			return -EINVAL;
		}
		if (host_end != auth_end && url[host_end] != ':') {
			snprintf(why, why_len, "offset %zu: '%c' after the IPv6 "
				 "address (want ':PORT' or the path)", host_end,
				 url[host_end]);
			return -EINVAL;
		}
	} else {
		colon = memchr(url + host, ':', auth_end - host);
		host_end = colon ? (size_t)(colon - url) : auth_end;
		if (host_end == host) {
			snprintf(why, why_len, "offset %zu: no host", host);
			return -EINVAL;
		}
		for (size_t i = host; i < host_end; i++)
			if (!is_unreserved(url[i])) {
				say_char(why, why_len, url, (long)i, "host");
				return -EINVAL;
			}
	}
	if (host_end < auth_end) {		/* ":PORT" */
		unsigned long port = 0;
		size_t i = host_end + 1;

		if (i == auth_end) {
			snprintf(why, why_len, "offset %zu: no port number "
				 "after ':'", i);
			return -EINVAL;
		}
		for (; i < auth_end; i++) {
			if (url[i] < '0' || url[i] > '9') {
				snprintf(why, why_len, "offset %zu: the port "
					 "is not a number", i);
				return -EINVAL;
			}
			port = port * 10 + (unsigned long)(url[i] - '0');
			if (port > 65535)
				break;
		}
		if (port < 1 || port > 65535) {
			snprintf(why, why_len, "offset %zu: port %.*s is not "
				 "in 1..65535", host_end + 1,
				 (int)(auth_end - host_end - 1) > 20 ? 20 :
				 (int)(auth_end - host_end - 1),
				 url + host_end + 1);
			return -EINVAL;
		}
	}
	path_end = auth_end + strcspn(url + auth_end, "?#");
	if ((bad = bad_char(url, auth_end, path_end, false)) >= 0) {
		say_char(why, why_len, url, bad, "path");
		return -EINVAL;
	}
	if (url[path_end] == '?') {
		size_t q_end = path_end + 1 + strcspn(url + path_end + 1, "#");

		if ((bad = bad_char(url, path_end + 1, q_end, true)) >= 0) {
			say_char(why, why_len, url, bad, "query");
			return -EINVAL;
		}
		if (q_end > path_end + 1 &&
		    !(u->query = strndup(url + path_end + 1,
					 q_end - path_end - 1)))
			return -ENOMEM;
		path_end = q_end;
	}
	if (url[path_end] == '#') {
		snprintf(why, why_len, "offset %zu: a fragment ('#...') is "
			 "never sent to the server", path_end);
		sink_url_free(u);
		return -EINVAL;
	}
	{
		size_t pe = auth_end + strcspn(url + auth_end, "?#");

		/* the path without its trailing '/': the API's path follows */
		while (pe > auth_end && url[pe - 1] == '/')
			pe--;
		u->origin = strndup(url, auth_end);
		u->path = strndup(url + auth_end, pe - auth_end);
	}
	if (!u->origin || !u->path) {
		sink_url_free(u);
		return -ENOMEM;
	}
	return 0;
}

bool sink_url_path_ends(const struct sink_url *u, const char *suffix)
{
	size_t n = strlen(u->path), m = strlen(suffix);

	return n >= m && !strcmp(u->path + n - m, suffix);
}

char *sink_url_make(const struct sink_url *u, const char *api_path,
		    const char *query)
{
	char *s;

	if (asprintf(&s, "%s%s%s%s%s%s%s", u->origin, u->path,
		     api_path ? api_path : "",
		     u->query || query ? "?" : "", u->query ? u->query : "",
		     u->query && query ? "&" : "", query ? query : "") < 0)
		return NULL;
	return s;
}

void sink_url_free(struct sink_url *u)
{
	free(u->origin);
	free(u->path);
	free(u->query);
	memset(u, 0, sizeof(*u));
}
