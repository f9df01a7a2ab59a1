// SPDX-License-Identifier: MIT
/*
 * Fuzz the symbolizer's parsers on arbitrary bytes: the input as an ELF
 * (.symtab/.dynsym, PLT stubs and relocations, .gnu_debugdata with its
 * embedded ELF), and the same bytes as a perf map and as kallsyms text.
 * DWARF is left to libdw's own fuzzing.
 */
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"
#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (4u << 20)

static void probe(struct sfp_symtab *t, const uint8_t *data, size_t size)
{
	size_t i;

	sfp_symtab_finish(t);
	/* Addresses at, inside and between symbols, plus input-driven ones. */
	for (i = 0; i < t->nr && i < 64; i++) {
		(void)sfp_symtab_find(t, t->syms[i].start);
		(void)sfp_symtab_find(t, t->syms[i].start + t->syms[i].size);
	}
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		(void)sfp_symtab_find(t, a);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sfp_symtab t = { 0 };
	struct sfp_elf *e = NULL, *mini = NULL;
	size_t half;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (!sfp_elf_open_mem(data, size, "fuzz", &e)) {
		(void)sfp_symtab_load_elf(&t, e, SFP_LOAD_SYMTAB | SFP_LOAD_DYNSYM);
		(void)sfp_symtab_load_plt(&t, e);
		if (!sfp_minidebuginfo_open(e, &mini))
			(void)sfp_symtab_load_elf(&t, mini,
						  SFP_LOAD_SYMTAB | SFP_LOAD_DYNSYM);
		probe(&t, data, size);
		sfp_symtab_free(&t);
		sfp_elf_close(&mini);
		sfp_elf_close(&e);
	}
	(void)sfp_perfmap_parse(&t, (const char *)data, size, "fuzz");
	probe(&t, data, size);
	sfp_symtab_free(&t);
	/* First half as kallsyms, second as /proc/modules. */
	half = size / 2;
	(void)sfp_kallsyms_parse(&t, (const char *)data, half,
				 (const char *)data + half, size - half);
	probe(&t, data, size);
	sfp_symtab_free(&t);
	return 0;
}
