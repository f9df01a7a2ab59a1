// SPDX-License-Identifier: MIT
/*
 * Fuzz the symbolizer's parsers on arbitrary bytes: the input as an ELF
 * (.symtab/.dynsym, PLT stubs and relocations, .gnu_debugdata with its
 * embedded ELF, DWARF through libdw and our CU / function-instance
 * index), and the same bytes as a perf map, as a jitdump (both checked
 * against a brute-force reading) and as kallsyms text (parsed whole and
 * through the lazy index, which must agree).
 */
#include <stddef.h>
#include <stdint.h>

#include "elf/elf.h"
#include "symbols/bfd-name.h"
#include "symbols/internal.h"
#include "symbols/kallsyms.h"

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

/* Lines and inline chains at the symbols' addresses and inside them. */
static void probe_dwarf(struct sfp_elf *e, const struct sfp_symtab *t)
{
	static struct sfp_symbolizer *s;
	struct sfp_inline_frame fr[8];
	struct sfp_dwarf *dw = NULL;
	size_t i;

	if (!s && sfp_symbolizer__new(NULL, &s))
		return;
	if (sfp_dwarf_open(e, NULL, &dw))
		return;
	for (i = 0; i < t->nr && i < 64; i++) {
		(void)sfp_dwarf_inlines(s, dw, t->syms[i].start, fr, 8);
		(void)sfp_dwarf_inlines(s, dw, t->syms[i].start +
					t->syms[i].size / 2, fr, 8);
	}
	for (i = 0; i < 64; i++)
		(void)sfp_dwarf_inlines(s, dw, 0x1000 + 16 * i, fr, 8);
	sfp_dwarf_free(&dw);
}

/* addr2line's symbol-table names (bfd-name.c) at and around symbols. */
static void probe_bfd(struct sfp_elf *e, const struct sfp_symtab *t)
{
	size_t i;

	for (i = 0; i < t->nr && i < 32; i++) {
		(void)sfp_elf_bfd_name(e, t->syms[i].start, NULL);
		(void)sfp_elf_bfd_name(e, t->syms[i].start + 1, NULL);
	}
	(void)sfp_elf_bfd_name(e, 0x1000, NULL);
}

static bool same_sym(const struct sfp_sym *a, const struct sfp_sym *b)
{
	if (!a || !b)
		return a == b;
	return a->start == b->start && a->size == b->size &&
	       a->flags == b->flags && !strcmp(a->name, b->name) &&
	       (a->dso && b->dso ? !strcmp(a->dso, b->dso) : a->dso == b->dso);
}

/* The lazy kallsyms index answers what the full table t answers. */
static void kallsyms_index_agrees(struct sfp_symtab *t, const uint8_t *data,
				  size_t size, size_t half)
{
	struct sfp_kallsyms_index *k = NULL;
	struct sfp_symtab *tab;
	char *kb = malloc(half + 1), *mb = malloc(size - half + 1);
	size_t i;

	if (!kb || !mb)
		goto out;
	memcpy(kb, data, half);
	memcpy(mb, data + half, size - half);
	if (sfp_kallsyms_index__new(kb, half, mb, size - half, &k))
		goto out;
	kb = mb = NULL;		/* the index's now */
	for (i = 0; i < t->nr && i < 256; i++) {
		uint64_t a = t->syms[i].start, z = a + t->syms[i].size;

		if (!same_sym(sfp_symtab_find(t, a),
			      sfp_kallsyms_index__find(k, a, &tab)) ||
		    !same_sym(sfp_symtab_find(t, z),
			      sfp_kallsyms_index__find(k, z, &tab)) ||
		    !same_sym(sfp_symtab_find(t, a - 1),
			      sfp_kallsyms_index__find(k, a - 1, &tab)))
			__builtin_trap();
	}
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (!same_sym(sfp_symtab_find(t, a),
			      sfp_kallsyms_index__find(k, a, &tab)))
			__builtin_trap();
	}
out:
	sfp_kallsyms_index__free(&k);
	free(kb);
	free(mb);
}

/* The newest entry covering a (brute force), or NULL. */
static const struct sfp_sym *newest_covering(const struct sfp_symtab *t,
					     uint64_t a)
{
	size_t i;

	for (i = t->nr; i-- > 0;) {
		const struct sfp_sym *s = &t->syms[i];

		if (a >= s->start && a - s->start < (s->size ? s->size : 1))
			return s;
	}
	return NULL;
}

/* A JIT map's table finds what a brute-force reading of it finds. */
static void layered_agrees(struct sfp_symtab *t, const uint8_t *data,
			   size_t size)
{
	size_t i;

	if (t->nr > 4096 || sfp_symtab_finish_layered(t))
		return;
	for (i = 0; i < t->nr && i < 128; i++) {
		uint64_t a = t->syms[i].start, z = a + t->syms[i].size;

		if (sfp_symtab_find(t, a) != newest_covering(t, a) ||
		    sfp_symtab_find(t, z) != newest_covering(t, z) ||
		    sfp_symtab_find(t, z - 1) != newest_covering(t, z - 1) ||
		    sfp_symtab_find(t, a - 1) != newest_covering(t, a - 1))
			__builtin_trap();
	}
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		if (sfp_symtab_find(t, a) != newest_covering(t, a))
			__builtin_trap();
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
		probe_dwarf(e, &t);
		probe_bfd(e, &t);
		sfp_symtab_free(&t);
		sfp_elf_close(&mini);
		sfp_elf_close(&e);
	}
	(void)sfp_perfmap_parse(&t, (const char *)data, size, "fuzz");
	layered_agrees(&t, data, size);
	sfp_symtab_free(&t);
	{
		struct sfp_jitdump_stats st;

		(void)sfp_jitdump_parse(&t, data, size, "fuzz", &st);
		if (st.loads + st.moves - st.moves_unmatched != t.nr)
			__builtin_trap();
		layered_agrees(&t, data, size);
		sfp_symtab_free(&t);
	}
	/* First half as kallsyms, second as /proc/modules. */
	half = size / 2;
	(void)sfp_kallsyms_parse(&t, (const char *)data, half,
				 (const char *)data + half, size - half);
	sfp_symtab_finish(&t);
	sfp_kallsyms_fixup(&t);
	probe(&t, data, size);
	kallsyms_index_agrees(&t, data, size, half);
	sfp_symtab_free(&t);
	return 0;
}
