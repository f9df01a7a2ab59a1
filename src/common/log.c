// SPDX-License-Identifier: MIT
/* The library never prints: diagnostics go to the application's callback. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static sfp_log_fn log_fn;
static void *log_ctx;
static enum sfp_log_level log_level = SFP_LOG_WARN;

sfp_log_fn sfp_set_log(sfp_log_fn fn, void *ctx)
{
	sfp_log_fn old = log_fn;

	log_fn = fn;
	log_ctx = ctx;
	return old;
}

void sfp_set_log_level(enum sfp_log_level level)
{
	log_level = level;
}

/* warnings and errors logged so far, heard or not */
static _Atomic unsigned long nr_warnings;

unsigned long sfp_log_warnings(void)
{
	return nr_warnings;
}

void sfp_log(enum sfp_log_level level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int saved = errno;	/* logging must not disturb the caller's errno */

	if (level <= SFP_LOG_WARN)
		nr_warnings++;
	if (!log_fn || level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(level, buf, log_ctx);
	errno = saved;
}
