// SPDX-License-Identifier: MIT
/*
 * C++ (Itanium ABI) and Rust (legacy and v0) demangling through
 * libiberty's cplus_demangle(), the same code c++filt and perf use.  With
 * DMGL_AUTO it tries Rust first (legacy Rust names are valid Itanium
 * names too, and the Rust demangler strips their hash suffix).
 */
#include <libiberty/demangle.h>

#include "symbols/symtab.h"

static char *demangle(const char *name, int flags)
{
	if (!name || name[0] != '_')
		return NULL;
	/* Only names that look mangled: _Z... (C++, legacy Rust), _R... (v0). */
	if (name[1] != 'Z' && name[1] != 'R')
		return NULL;
	return cplus_demangle(name, DMGL_AUTO | flags);
}

char *sfp_demangle(const char *name)
{
	return demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

/* perf's default (DMGL_NO_OPTS): names without parameters. */
char *sfp_demangle_no_params(const char *name)
{
	return demangle(name, DMGL_NO_OPTS);
}
