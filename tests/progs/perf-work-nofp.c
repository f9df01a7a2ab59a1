// SPDX-License-Identifier: MIT
/* perf-work.c built without frame pointers (see progs.mk). */
#include "perf-work.c"
