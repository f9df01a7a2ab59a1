// SPDX-License-Identifier: MIT
/*
 * perf map files (/tmp/perf-PID.map), written by JITs: one
 * "START SIZE name" line per function, START and SIZE in hex (with or
 * without 0x), the name running to the end of the line.
 */
#include "symbols/symtab.h"

int sfp_perfmap_parse(struct sfp_symtab *t, const char *buf, size_t len,
		      const char *what)
{
	const char *p = buf, *end = buf + len;
	unsigned long lineno = 0, bad = 0;
	int added = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *name;
		uint64_t start, size;
		size_t nlen;

		if (!eol)
			eol = end;
		lineno++;
		if (!sfp_sym_parse_hex(&q, eol, &start) || q == eol || *q != ' ')
			goto bad;
		q++;
		if (!sfp_sym_parse_hex(&q, eol, &size) || q == eol || *q != ' ')
			goto bad;
		name = q + 1;
		nlen = (size_t)(eol - name);
		if (nlen && name[nlen - 1] == '\r')
			nlen--;
		if (!nlen || memchr(name, 0, nlen))
			goto bad;
		name = sfp_strpool_add(&t->pool, name, nlen);
		if (!name || sfp_symtab_add(t, start, size, name,
					    SFP_SYM_JIT | SFP_SYM_GLOBAL))
			return -ENOMEM;
		added++;
		p = eol + 1;
		continue;
bad:
		if (eol > p && bad++ < 3)
			pr_warn("%s:%lu: not a perf map line (START SIZE name)",
				what, lineno);
		p = eol + 1;
	}
	if (bad > 3)
		pr_warn("%s: %lu bad lines skipped in all", what, bad);
	return added;
}
