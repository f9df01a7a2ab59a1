// SPDX-License-Identifier: MIT
/*
 * perf map files (/tmp/perf-PID.map), written by JITs: one
 * "START SIZE name" line per function, START and SIZE in hex (with or
 * without 0x), the name running to the end of the line.
 */
#include "symbols/symtab.h"

static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t r = 0;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (++digits > 16)
			return false;
		r = r << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*p = s;
	*v = r;
	return true;
}

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
		if (!parse_hex(&q, eol, &start) || q == eol || *q != ' ')
			goto bad;
		q++;
		if (!parse_hex(&q, eol, &size) || q == eol || *q != ' ')
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
