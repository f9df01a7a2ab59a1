// SPDX-License-Identifier: MIT
/*
 * Synthetic func@plt symbols for x86-64 PLT stubs.
 *
 * Rather than assume that stub i belongs to relocation i (which breaks
 * with .plt.sec, .plt.got and -z now layouts), each stub is decoded: it
 * contains one `jmp *disp32(%rip)` (ff 25, maybe after endbr64 / bnd),
 * whose target is a GOT slot, and the JUMP_SLOT or GLOB_DAT relocation of
 * that slot names the function.  This is also how binutils labels stubs,
 * so names agree with `objdump -d` (IRELATIVE slots too: "*ABS*+0x...").
 */
#include "common/cursor.h"
#include "elf/elf.h"
#include "symbols/symtab.h"

#ifndef R_X86_64_GLOB_DAT
#define R_X86_64_GLOB_DAT 6
#endif
#ifndef R_X86_64_JUMP_SLOT
#define R_X86_64_JUMP_SLOT 7
#endif
#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif

struct got_slot {
	uint64_t addr;
	const char *name;
};

struct got_map {
	struct got_slot *slots;
	size_t nr, cap;
};

static int got_add(struct got_map *m, uint64_t addr, const char *name)
{
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct got_slot *n;

		if (m->nr >= SFP_SYMTAB_MAX)
			return -E2BIG;
		n = realloc(m->slots, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->slots = n;
		m->cap = cap;
	}
	m->slots[m->nr].addr = addr;
	m->slots[m->nr].name = name;
	m->nr++;
	return 0;
}

static int slot_cmp(const void *pa, const void *pb)
{
	const struct got_slot *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const char *got_find(const struct got_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->slots[mid].addr == addr)
			return m->slots[mid].name;
		if (m->slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A relocation section's symbol table and its strings, found once. */
struct symref {
	const uint8_t *syms, *strs;
	size_t nsyms, nstrs;	/* bytes */
};

/* The symbol table in section symndx.  Return: false if unusable. */
static bool sym_table(struct sfp_elf *e, size_t symndx, struct symref *r)
{
	struct sfp_elf_section symsec, strsec;
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (sfp_elf_section(e, symndx, &symsec) ||
	    (symsec.type != SHT_DYNSYM && symsec.type != SHT_SYMTAB) ||
	    sfp_elf_section_data(e, &symsec, &r->syms, &r->nsyms) || !r->nsyms)
		return false;
	scn = elf_getscn(sfp_elf_handle(e), symndx);
	return scn && gelf_getshdr(scn, &sh) &&
	       !sfp_elf_section(e, sh.sh_link, &strsec) &&
	       !sfp_elf_section_data(e, &strsec, &r->strs, &r->nstrs);
}

/* Name of symbol idx of r, or NULL. */
static const char *sym_name(const struct symref *r, uint64_t idx)
{
	struct sfp_cursor c;
	uint32_t name;

	sfp_cursor_init(&c, r->syms, r->nsyms, false);	/* host layout */
	if (idx > r->nsyms / 24 || sfp_cursor_seek(&c, idx * 24) ||
	    sfp_cursor_u32(&c, &name) || name >= r->nstrs ||
	    strnlen((const char *)r->strs + name, r->nstrs - name) ==
		    r->nstrs - name ||
	    !r->strs[name])
		return NULL;
	return (const char *)r->strs + name;
}

/*
 * IRELATIVE slots (ifunc resolved at load time) have no symbol: name them
 * after the resolver's address as objdump does ("*ABS*+0x9f550").
 */
static const char *irelative_name(struct sfp_strpool *pool, int64_t addend)
{
	char buf[40];
	int n = snprintf(buf, sizeof(buf), "*ABS*+%#llx",
			 (unsigned long long)addend);

	return sfp_strpool_add(pool, buf, (size_t)n);
}

static int collect_got(struct sfp_elf *e, struct got_map *m,
		       struct sfp_strpool *pool)
{
	size_t i, n = sfp_elf_num_sections(e);
	struct sfp_elf_section sec;

	for (i = 1; i < n; i++) {
		const uint8_t *data;
		size_t size, k;
		struct sfp_cursor c;
		struct symref syms;
		bool have_syms;
		Elf_Scn *scn;
		GElf_Shdr sh;
		int err;

		if (sfp_elf_section(e, i, &sec) || sec.type != SHT_RELA)
			continue;
		scn = elf_getscn(sfp_elf_handle(e), i);
		if (!scn || !gelf_getshdr(scn, &sh) ||
		    sfp_elf_section_data(e, &sec, &data, &size) || !size)
			continue;
		/* once per section, not per relocation (a C++ library's
		 * .rela.dyn has 100k GLOB_DATs: this was 5 % of a
		 * system-wide script) */
		have_syms = sym_table(e, sh.sh_link, &syms);
		sfp_cursor_init(&c, data, size, false);	/* host layout */
		for (k = 0; k < size / 24; k++) {
			uint64_t off, info;
			int64_t addend;
			uint32_t type;
			const char *name;

			if (sfp_cursor_u64(&c, &off) || sfp_cursor_u64(&c, &info) ||
			    sfp_cursor_i64(&c, &addend))
				break;
			type = (uint32_t)ELF64_R_TYPE(info);
			if (type == R_X86_64_IRELATIVE)
				name = irelative_name(pool, addend);
			else if (type == R_X86_64_JUMP_SLOT ||
				 type == R_X86_64_GLOB_DAT)
				name = have_syms ? sym_name(&syms,
							    ELF64_R_SYM(info))
						 : NULL;
			else
				continue;
			if (!name)
				continue;
			err = got_add(m, off, name);
			if (err)
				return err;
		}
	}
	if (m->nr)
		qsort(m->slots, m->nr, sizeof(*m->slots), slot_cmp);
	return 0;
}

static int scan_stubs(struct sfp_symtab *t, struct sfp_elf *e,
		      const struct sfp_elf_section *sec, size_t entsize,
		      const struct got_map *m)
{
	const uint8_t *data;
	size_t size, off;
	int added = 0;

	if (sfp_elf_section_data(e, sec, &data, &size))
		return 0;
	for (off = 0; off + entsize <= size; off += entsize) {
		size_t j;

		for (j = 0; j + 6 <= entsize; j++) {
			struct sfp_cursor c;
			int32_t disp;
			uint64_t got;
			const char *name;
			char buf[512];
			const char *nm;
			int n;

			if (data[off + j] != 0xff || data[off + j + 1] != 0x25)
				continue;
			sfp_cursor_init(&c, data + off + j + 2, 4, false);
			if (sfp_cursor_i32(&c, &disp))
				break;
			got = sec->addr + off + j + 6 + (int64_t)disp;
			name = got_find(m, got);
			if (!name)
				break;
			n = snprintf(buf, sizeof(buf), "%s@plt", name);
			if (n < 0 || (size_t)n >= sizeof(buf))
				break;
			nm = sfp_strpool_add(&t->pool, buf, n);
			if (!nm || sfp_symtab_add(t, sec->addr + off, entsize, nm,
						  SFP_SYM_PLT | SFP_SYM_GLOBAL))
				return -ENOMEM;
			added++;
			break;
		}
	}
	return added;
}

/*
 * The lazy-binding header of .plt (`push GOT+8; jmp *GOT+16`, maybe after
 * endbr64) is no stub: objdump labels it `.plt`, and so do we (perf 6.1
 * stretches the size-less `_init` before it over it, "_init+0x26"; perf
 * 6.3 and later name it ".plt" too).  With .plt.sec the rest of .plt is
 * lazy trampolines without names: the symbol covers all of it then.
 */
static int add_plt_header(struct sfp_symtab *t, struct sfp_elf *e,
			  const struct sfp_elf_section *plt)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	struct sfp_elf_section sec;
	const uint8_t *data;
	size_t size, j = 0;
	uint64_t len = 16;

	if (sfp_elf_section_data(e, plt, &data, &size) || size < 16)
		return 0;
	if (!memcmp(data, endbr64, sizeof(endbr64)))
		j = sizeof(endbr64);
	if (data[j] != 0xff || data[j + 1] != 0x35)	/* push disp32(%rip) */
		return 0;
	if (!sfp_elf_find_section(e, ".plt.sec", SHT_PROGBITS, &sec))
		len = plt->size;
	return sfp_symtab_add(t, plt->addr, len, ".plt", SFP_SYM_PLT) ? -ENOMEM : 1;
}

int sfp_symtab_load_plt(struct sfp_symtab *t, struct sfp_elf *e)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got" };
	struct got_map m = { 0 };
	size_t i;
	int err, total = 0;

	if (sfp_elf_machine(e) != EM_X86_64 || !sfp_elf_is_64(e))
		return 0;
	err = collect_got(e, &m, &t->pool);
	if (err || !m.nr)
		goto out;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		struct sfp_elf_section sec;
		Elf_Scn *scn;
		GElf_Shdr sh;
		size_t entsize;

		if (sfp_elf_find_section(e, names[i], SHT_PROGBITS, &sec))
			continue;
		scn = elf_getscn(sfp_elf_handle(e), sec.index);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		/* Stubs are 16 bytes, except 8-byte .plt.got without IBT. */
		entsize = (sh.sh_entsize == 8 || sh.sh_entsize == 16) ?
			  sh.sh_entsize : 16;
		err = scan_stubs(t, e, &sec, entsize, &m);
		if (err < 0)
			goto out;
		total += err;
		if (i == 0) {
			err = add_plt_header(t, e, &sec);
			if (err < 0)
				goto out;
			total += err;
		}
	}
	err = total;
out:
	free(m.slots);
	return err;
}
