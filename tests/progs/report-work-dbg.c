// SPDX-License-Identifier: MIT
/* report-work.c with DWARF (see progs.mk): source lines and the inlined
 * body() for the profile's srclines tests. */
#include "report-work.c"
