// SPDX-License-Identifier: MIT
/*
 * C++ (Itanium ABI) and Rust (legacy and v0) demangling through
 * libiberty's cplus_demangle(), the same code c++filt and perf use.  With
 * DMGL_AUTO it tries Rust first (legacy Rust names are valid Itanium
 * names too, and the Rust demangler strips their hash suffix).
 */
#include <libiberty/demangle.h>

#include "symbols/internal.h"

static char *demangle(const char *name, int flags)
{
	static const char plt[] = "@plt";
	size_t n, k = sizeof(plt) - 1;
	char *base, *dm, *out;
	size_t m;

	if (!name || name[0] != '_')
		return NULL;
	/* Only names that look mangled: _Z... (C++, legacy Rust), _R... (v0). */
	if (name[1] != 'Z' && name[1] != 'R')
		return NULL;
	n = strlen(name);
	if (n <= k || strcmp(name + n - k, plt))
		return cplus_demangle(name, DMGL_AUTO | flags);
	/* A synthetic stub name (plt.c): the demangler would drop the
	 * "@plt" and the stub would read as the function itself; perf
	 * prints "std::foo@plt" */
	if (!(base = strndup(name, n - k)))
		return NULL;
	dm = cplus_demangle(base, DMGL_AUTO | flags);
	free(base);
	if (!dm)
		return NULL;
	m = strlen(dm);
	out = malloc(m + k + 1);
	if (out) {
		memcpy(out, dm, m);
		memcpy(out + m, plt, k + 1);
	}
	free(dm);
	return out;
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

char *sfp_symbolizer_demangle(const struct sfp_symbolizer *s, const char *raw)
{
	if (s->no_demangle)
		return NULL;
	return s->demangle_no_params ? sfp_demangle_no_params(raw) :
				       sfp_demangle(raw);
}
