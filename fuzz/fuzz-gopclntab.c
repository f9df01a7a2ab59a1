// SPDX-License-Identifier: MIT
/*
 * Fuzz the Go function table readers (src/elf/gopclntab.c, and over it
 * src/symbols/gopclntab.c and src/cfi/go.c): the input as a table in
 * either byte order (every header field, function table entry, _func
 * record and pc-value table comes from it), and as an ELF file whose
 * table is found by section name or by the header search.  Every symbol
 * added must name a string that ends inside the input; every pc-value run
 * must lie inside its function; every row made from SP deltas inside its
 * function, with a CFA of at least SP+8.
 */
#include <stddef.h>
#include <stdint.h>

#include "cfi/convert.h"
#include "elf/elf.h"
#include "elf/gopclntab.h"
#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (4u << 20)

static void check(struct sfp_symtab *t, const uint8_t *lo, size_t size)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		const char *n = t->syms[i].name;

		/* names point into the input, terminated there */
		if (lo && ((const uint8_t *)n < lo ||
			   (const uint8_t *)n >= lo + size ||
			   !memchr(n, 0, size - (size_t)((const uint8_t *)n - lo))))
			__builtin_trap();
	}
	sfp_symtab_finish(t);
	for (i = 0; i < t->nr && i < 64; i++) {
		(void)sfp_symtab_find(t, t->syms[i].start);
		(void)sfp_symtab_find(t, t->syms[i].start + t->syms[i].size);
	}
}

/* Every function's SP-delta runs, in order, inside the function. */
static void pc_values(const uint8_t *data, size_t size, bool swap)
{
	struct sfp_gotab t;
	struct sfp_gofunc f;
	struct sfp_gopcv it;
	const char *why;
	uint64_t i, s, e, last;
	int64_t v;

	if (sfp_gotab_open(&t, data, size, swap, 0x401000, &why))
		return;
	for (i = 0; i < t.nfunc && i < 4096; i++) {
		if (sfp_gotab_func(&t, i, &f) ||
		    sfp_gopcv_init(&it, &t, &f, f.pcsp))
			continue;
		last = f.entry;
		while (sfp_gopcv_next(&it, &s, &e, &v) > 0) {
			if (s != last || e < s || e > f.end)
				__builtin_trap();
			last = e;
		}
	}
}

static int go_row_check(void *ctx, const struct sfp_sframe_func *fn,
			const struct sfp_sframe_row *rows)
{
	uint32_t i;

	(void)ctx;
	for (i = 0; i < fn->num_rows; i++)
		if (rows[i].start >= rows[i].end || rows[i].end > fn->size ||
		    (!(rows[i].flags & SFP_ROW_RA_UNDEFINED) &&
		     rows[i].cfa.offset < 8) ||
		    (i && rows[i].start < rows[i - 1].end))
			__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_go_stats gs;
	struct sfp_gopclntab_stats st;
	struct sfp_symtab t = { 0 };
	struct sfp_elf *e = NULL;
	int swap;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	for (swap = 0; swap < 2; swap++) {
		int r = sfp_gopclntab_parse(&t, data, size, swap, 0x401000,
					    "fuzz", 0, &st);

		if (r >= 0 && ((uint64_t)r != st.added ||
			       st.added + st.bad != st.nfunc))
			__builtin_trap();
		check(&t, data, size);
		sfp_symtab_free(&t);
		pc_values(data, size, swap);
	}
	if (!sfp_elf_open_mem(data, size, "fuzz", &e)) {
		(void)sfp_gopclntab_load(&t, e, &st);
		check(&t, NULL, 0);
		sfp_symtab_free(&t);
		(void)cfi_go_amd64(e, 3, go_row_check, NULL, &gs);
		sfp_elf_close(&e);
	}
	return 0;
}
