/* SPDX-License-Identifier: MIT */
/*
 * What the two comparisons with GNU as --gsframe (test-cfi-gas.c on this
 * machine's x86-64 output, test-cfi-gas-aarch64.c on the cross
 * toolchain's) share: the executable's function symbols by nm, to name
 * gas's FDEs; the list of functions where gas 2.40 is wrong on purpose;
 * the equality of two register rules.
 */
#ifndef SFP_TEST_GAS_COMPARE_H
#define SFP_TEST_GAS_COMPARE_H

#include <stdio.h>
#include <string.h>

#include <sfprof/sframe.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* A function where sfprof differs from gas 2.40 on purpose, and why. */
struct gas_bug {
	const char *name;
	const char *why;
};

struct sym {
	uint64_t addr;
	char name[64];
};

static struct sym syms[512];
static size_t nsyms;

/* The text symbols of @exe, read with @nm ("nm" or a cross nm). */
static void load_syms(const char *nm, const char *exe)
{
	char cmd[1200], line[256];
	FILE *p;

	nsyms = 0;
	snprintf(cmd, sizeof(cmd), "%s --defined-only '%s'", nm, exe);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (nsyms < ARRAY_SIZE(syms) && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char t, n[64];

		if (sscanf(line, "%llx %c %63s", &a, &t, n) == 3 &&
		    (t == 't' || t == 'T')) {
			syms[nsyms].addr = a;
			snprintf(syms[nsyms].name, sizeof(syms[0].name), "%s", n);
			nsyms++;
		}
	}
	pclose(p);
}

static const char *sym_at(uint64_t a)
{
	for (size_t i = 0; i < nsyms; i++)
		if (syms[i].addr == a)
			return syms[i].name;
	return "?";
}

/* Why gas is wrong for @name, or NULL when it is not known to be. */
static const char *gas_known_bug(const struct gas_bug *bugs, size_t n,
				 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(bugs[i].name, name))
			return bugs[i].why;
	return NULL;
}

static bool same_loc(const struct sfp_loc *a, const struct sfp_loc *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == SFP_LOC_NONE)
		return true;
	return a->reg == b->reg && a->offset == b->offset;
}

#endif /* SFP_TEST_GAS_COMPARE_H */
