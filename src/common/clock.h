/* SPDX-License-Identifier: MIT */
/*
 * Clock readings in nanoseconds: the one helper the components share
 * (eight files had a copy of their own).
 */
#ifndef SFP_COMMON_CLOCK_H
#define SFP_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sfp_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC: the events' clock (use_clockid) and every timeout's */
static inline uint64_t sfp_mono_ns(void)
{
	return sfp_clock_ns(CLOCK_MONOTONIC);
}

#endif
