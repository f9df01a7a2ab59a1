// SPDX-License-Identifier: MIT
/*
 * Fuzz the Go function table reader (src/symbols/gopclntab.c): the input
 * as a table in either byte order (every header field, function table
 * entry and _func record comes from it), and as an ELF file whose table
 * is found by section name or by the header search.  Every symbol added
 * must lie inside the input's address range claims and name a string
 * that ends inside the input.
 */
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
	}
	if (!sfp_elf_open_mem(data, size, "fuzz", &e)) {
		(void)sfp_gopclntab_load(&t, e, &st);
		check(&t, NULL, 0);
		sfp_symtab_free(&t);
		sfp_elf_close(&e);
	}
	return 0;
}
