/* SPDX-License-Identifier: MIT */
/* `sfprof symbolize --listen`: what symbolize.c parsed, for
 * symbolize-listen.c. */
#ifndef SFP_CLI_SYMBOLIZE_LISTEN_H
#define SFP_CLI_SYMBOLIZE_LISTEN_H

#include <stdbool.h>
#include <stdint.h>

struct symz_listen_opts {
	const char *listen;
	const char *pyroscope, *otlp;	/* at least one */
	const char *auth_file, *tenant;
	const char *const *debug_dirs;
	int debuginfod;
	uint32_t timeout_ms;		/* a request's wait, a fetch's time */
	uint64_t memory;		/* --memory */
	size_t max_body, max_profile;
	size_t queue_bytes;
	unsigned int max_conn, listen_timeout_s;
	double flush_s;
	bool quiet;
};

/* Serve until SIGINT/SIGTERM.  Return: the exit code. */
int symz_listen(const struct symz_listen_opts *lo);

#endif
