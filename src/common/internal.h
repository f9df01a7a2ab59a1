/* SPDX-License-Identifier: MIT */
/*
 * What the library's components share and applications never see:
 * logging, options-struct checks, byte-order helpers and the rule that
 * every error is a negative errno.
 */
#ifndef SFP_INTERNAL_H
#define SFP_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/common.h>

#define SFP_HIDDEN __attribute__((visibility("hidden")))

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define sfp_likely(x) __builtin_expect(!!(x), 1)
#define sfp_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * SFP_NEVER(cond): a defensive check for something the surrounding code
 * already rules out.  Aborts in debug builds so tests find the broken
 * invariant, and stays a plain check in release builds.
 */
#ifdef SFP_DEBUG_BUILD
#define SFP_NEVER(cond) ((cond) ? (__builtin_trap(), 1) : 0)
#else
#define SFP_NEVER(cond) sfp_unlikely(cond)
#endif

/* --- Logging: everything goes through the application's callback. --- */

SFP_HIDDEN void sfp_log(enum sfp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Warnings (and errors) logged so far, whether or not anyone listens:
 * a caller compares two readings to learn whether work in between warned. */
SFP_HIDDEN unsigned long sfp_log_warnings(void);
#define pr_warn(fmt, ...) sfp_log(SFP_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) sfp_log(SFP_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) sfp_log(SFP_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* --- Size-versioned options structs. --- */

/*
 * True when the caller's struct (of size opts->sz) is acceptable: at least
 * the `sz` member, and any bytes beyond what this library's struct holds
 * are zero (a newer caller may set only fields we know).
 *
 * The check starts at sizeof(struct TYPE), not at the end of the last
 * field: SFP_OPTS() cannot promise that tail padding is zero, and a
 * caller built against this very header has sz == sizeof(struct TYPE).
 */
SFP_HIDDEN bool sfp_opts_valid(const void *opts, size_t known_sz,
			       const char *type_name);

/* End of the last field this library knows (TYPE##__last_field). */
#define SFP_OPTS_KNOWN_SZ(TYPE)                                  \
	(offsetof(struct TYPE, TYPE##__last_field) +             \
	 sizeof(((struct TYPE *)0)->TYPE##__last_field))

#define SFP_OPTS_VALID(opts, TYPE)                                   \
	({                                                            \
		const struct TYPE *v_ = (opts);                       \
		!v_ || sfp_opts_valid(v_, sizeof(struct TYPE), #TYPE); \
	})

/* Read field FLD of opts, or DFLT when opts is NULL or too short. */
#define SFP_OPTS_GET(opts, TYPE, FLD, DFLT)                          \
	({                                                            \
		const struct TYPE *o_ = (opts);                       \
		(o_ && o_->sz >= offsetof(struct TYPE, FLD) +         \
				 sizeof(o_->FLD))                     \
			? o_->FLD                                     \
			: (DFLT);                                     \
	})

/* --- Byte order. --- */

static inline uint16_t sfp_bswap16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t sfp_bswap32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t sfp_bswap64(uint64_t v) { return __builtin_bswap64(v); }

/* --- Strings. --- */

/* snprintf() that says whether everything fitted (paths cut short are
 * not used) */
static inline bool __attribute__((format(printf, 3, 4)))
sfp_fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	int r;

	va_start(ap, f);
	r = vsnprintf(buf, n, f, ap);
	va_end(ap);
	return r >= 0 && (size_t)r < n;
}

/* FNV-1a, 64-bit: a name for a key that has none shorter (a path, a
 * file without a build-id) */
static inline uint64_t sfp_fnv1a64(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* --- Checked arithmetic. --- */

#define sfp_add_overflow(a, b, res) __builtin_add_overflow(a, b, res)
#define sfp_mul_overflow(a, b, res) __builtin_mul_overflow(a, b, res)

/* Functions that make overflow bugs easy are not used in this library. */
#pragma GCC poison strcpy strcat sprintf vsprintf gets

#endif /* SFP_INTERNAL_H */
