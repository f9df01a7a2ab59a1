/* SPDX-License-Identifier: MIT */
/*
 * sfprof: definitions shared by every public header.
 *
 * Conventions of the whole API:
 *  - Functions returning int return 0 (or a non-negative count) on success
 *    and a negative errno on failure.  Pointer-returning functions return
 *    NULL and set errno.
 *  - Three errors keep their meaning everywhere:
 *      -ENOENT      no information for this address / no such entry;
 *      -EBADMSG     the input is corrupt (details go to the log callback);
 *      -EOPNOTSUPP  the input is valid but uses something we do not support.
 *  - Options structs are size-versioned: the first member is `size_t sz`,
 *    callers initialise them with SFP_OPTS(), and a NULL pointer means
 *    "all defaults".  Fields are only ever appended.
 *  - The library never prints.  Diagnostics go to a log callback that the
 *    application installs with sfp_set_log().
 */
#ifndef SFPROF_COMMON_H
#define SFPROF_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SFP_API
#define SFP_API __attribute__((visibility("default")))
#endif

#define SFPROF_VERSION_MAJOR 0
#define SFPROF_VERSION_MINOR 1

/*
 * SFP_OPTS(type, name, ...) declares an options struct with its size set
 * and every field not named zero:
 *
 *   SFP_OPTS(sfp_sframe_opts, o, .section_addr = 0x1000);
 */
#define SFP_OPTS(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

enum sfp_log_level {
	SFP_LOG_WARN = 0,
	SFP_LOG_INFO = 1,
	SFP_LOG_DEBUG = 2,
};

/* Receives one formatted diagnostic line (no trailing newline). */
typedef void (*sfp_log_fn)(enum sfp_log_level level, const char *msg,
			   void *ctx);

/*
 * Install the log callback.  NULL restores the default, which discards
 * everything.  Returns the previous callback.  Not thread-safe against
 * concurrent logging; call it once at start-up.
 */
SFP_API sfp_log_fn sfp_set_log(sfp_log_fn fn, void *ctx);

/* Highest level passed to the callback (default SFP_LOG_WARN). */
SFP_API void sfp_set_log_level(enum sfp_log_level level);

/*
 * Describe a (negative or positive) error code returned by the library.
 * Never returns NULL; the string is static.
 */
SFP_API const char *sfp_strerror(int err);

/* Library version as "MAJOR.MINOR". */
SFP_API const char *sfp_version(void);

/* The name perf gives its --off-cpu event, which sfprof record --off-cpu
 * and the agent's off-CPU windows write too (the one spelling of it:
 * readers go by sfp_profile_event_kind()). */
#define SFP_OFF_CPU_EVENT_NAME "offcpu-time"

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_COMMON_H */
