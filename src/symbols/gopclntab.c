// SPDX-License-Identifier: MIT
/*
 * Function names of Go binaries from the runtime's own function table
 * (the "pclntab", read by elf/gopclntab.c), which every Go binary keeps
 * for tracebacks even when it is stripped of .symtab (Debian's Go tools,
 * most Go services in images).  `go tool addr2line` names addresses from
 * the same table.  A function runs from its entry to the next one's, as
 * the runtime and addr2line take it (alignment padding included).  A
 * damaged entry is skipped and counted, a damaged header refuses the
 * table, both said with the file offset.
 */
#include "elf/elf.h"
#include "elf/gopclntab.h"
#include "symbols/symtab.h"

/* The functions of the opened table g into t (see _parse()). */
static int add_funcs(struct sfp_symtab *t, const struct sfp_gotab *g,
		     const char *what, uint64_t file_off,
		     struct sfp_gopclntab_stats *st)
{
	struct sfp_gofunc f;
	uint64_t i;
	int err;

	st->version = g->version;
	st->nfunc = g->nfunc;
	st->text_start = g->text_start;
	st->text_guessed = g->text_guessed;
	if (sfp_symtab_reserve(t, g->nfunc) == -ENOMEM)
		return -ENOMEM;
	for (i = 0; i < g->nfunc; i++) {
		if (sfp_gotab_func(g, i, &f)) {
			/* Name the first; count them all (no flood). */
			if (!st->bad++)
				pr_warn("%s: Go function table at file offset %#llx: function %llu (record at table offset %#llx) damaged, skipped",
					what, (unsigned long long)file_off,
					(unsigned long long)i,
					(unsigned long long)f.rec);
			continue;
		}
		err = sfp_symtab_add(t, f.entry, f.end - f.entry, f.name,
				     SFP_SYM_GLOBAL);
		if (err)
			return err;
		st->added++;
	}
	if (st->bad > 1)
		pr_warn("%s: Go function table at file offset %#llx: %llu of %llu functions damaged, skipped",
			what, (unsigned long long)file_off,
			(unsigned long long)st->bad,
			(unsigned long long)g->nfunc);
	return (int)st->added;
}

int sfp_gopclntab_parse(struct sfp_symtab *t, const uint8_t *data,
			size_t size, bool swap, uint64_t text_fallback,
			const char *what, uint64_t file_off,
			struct sfp_gopclntab_stats *st)
{
	struct sfp_gopclntab_stats dummy;
	struct sfp_gotab g;
	const char *why;
	int err;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	err = sfp_gotab_open(&g, data, size, swap, text_fallback, &why);
	if (err) {
		pr_warn("%s: Go function table at file offset %#llx: %s",
			what, (unsigned long long)file_off, why);
		return err;
	}
	return add_funcs(t, &g, what, file_off, st);
}

int sfp_gopclntab_load(struct sfp_symtab *t, struct sfp_elf *e,
		       struct sfp_gopclntab_stats *st)
{
	struct sfp_gopclntab_stats dummy;
	struct sfp_gotab g;
	uint64_t off;
	int err;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	err = sfp_gotab_load(e, &g, &off);
	if (err)
		return err;
	return add_funcs(t, &g, sfp_elf_name(e), off, st);
}
