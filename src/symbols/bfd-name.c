// SPDX-License-Identifier: MIT
/*
 * GNU addr2line's name for code that DWARF gives lines but no function
 * (see bfd-name.h).  BFD walks the whole symbol table in file order for
 * it; so do we, once per such address (script keeps the answer).
 */
#include "common/cursor.h"
#include "elf/elf.h"
#include "symbols/bfd-name.h"
#include "symbols/internal.h"

static const char *a2l_sym(void *arg, uint64_t vaddr, uint64_t *start);

struct best {
	const char *name;
	uint64_t off, size;
	uint8_t type;
};

/* BFD's better_fit(): is (off, size, type) a better name for addr? */
static bool better(const struct best *b, uint64_t off, uint64_t size,
		   uint8_t type, uint64_t addr)
{
	bool bf = b->type == STT_FUNC || b->type == STT_GNU_IFUNC;
	bool sf = type == STT_FUNC || type == STT_GNU_IFUNC;

	if (off > addr || off < b->off)
		return false;
	if (off > b->off || !b->name)
		return true;
	/* the best so far stops short of addr: the one reaching further */
	if (b->off + b->size <= addr)
		return size > b->size;
	if (off + size <= addr)
		return false;
	if (bf != sf)
		return sf;
	if ((b->type == STT_NOTYPE) != (type == STT_NOTYPE))
		return b->type == STT_NOTYPE;
	return size < b->size;
}

static const char *scan(struct sfp_elf *e, const struct sfp_elf_section *sec,
			size_t shndx, uint64_t addr, uint64_t *start)
{
	struct sfp_elf_section strsec;
	const uint8_t *data, *strs;
	size_t size, strsize, entsize, nsyms, i;
	bool is64 = sfp_elf_is_64(e);
	struct best b = { 0 };
	struct sfp_cursor c;
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (sfp_elf_section_data(e, sec, &data, &size))
		return NULL;
	scn = elf_getscn(sfp_elf_handle(e), sec->index);
	if (!scn || !gelf_getshdr(scn, &sh) ||
	    sfp_elf_section(e, sh.sh_link, &strsec) ||
	    sfp_elf_section_data(e, &strsec, &strs, &strsize))
		return NULL;
	entsize = is64 ? 24 : 16;
	nsyms = size / entsize;
	sfp_cursor_init(&c, data, nsyms * entsize, false);
	for (i = 1; i < nsyms; i++) {
		uint32_t name, v32, s32;
		uint64_t value, symsize;
		uint8_t info, other, type;
		uint16_t ndx;
		const char *nm;

		if (sfp_cursor_seek(&c, i * entsize) ||
		    sfp_cursor_u32(&c, &name))
			return NULL;
		if (is64) {
			if (sfp_cursor_u8(&c, &info) ||
			    sfp_cursor_u8(&c, &other) ||
			    sfp_cursor_u16(&c, &ndx) ||
			    sfp_cursor_u64(&c, &value) ||
			    sfp_cursor_u64(&c, &symsize))
				return NULL;
		} else {
			if (sfp_cursor_u32(&c, &v32) ||
			    sfp_cursor_u32(&c, &s32) ||
			    sfp_cursor_u8(&c, &info) ||
			    sfp_cursor_u8(&c, &other) ||
			    sfp_cursor_u16(&c, &ndx))
				return NULL;
			value = v32;
			symsize = s32;
		}
		type = GELF_ST_TYPE(info);
		if (ndx != shndx || type == STT_SECTION || type == STT_FILE ||
		    type == STT_OBJECT || type == STT_TLS ||
		    type == STT_COMMON || name >= strsize)
			continue;
		/* annobin's markers: hidden local untyped, size 0 */
		if (!symsize && GELF_ST_BIND(info) == STB_LOCAL &&
		    type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY(other) == STV_HIDDEN)
			continue;
		nm = (const char *)strs + name;
		if (!*nm || strnlen(nm, strsize - name) == strsize - name)
			continue;
		if (!symsize)
			symsize = 1;
		if (better(&b, value, symsize, type, addr)) {
			b.name = nm;
			b.off = value;
			b.size = symsize;
			b.type = type;
		}
	}
	if (b.name && start)
		*start = b.off;
	return b.name;
}

const char *sfp_symbolizer_dso__bfd_name(struct sfp_symbolizer_dso *dso,
					 uint64_t vaddr)
{
	return a2l_sym(dso->same ? dso->same : dso, vaddr, NULL);
}

static struct sfp_elf *a2l_elf(struct sfp_symbolizer_dso *d)
{
	return d->debug && sfp_elf_has_symtab(d->debug) ? d->debug : d->elf;
}

static const char *a2l_sym(void *arg, uint64_t vaddr, uint64_t *start)
{
	struct sfp_elf *e = a2l_elf(arg);

	return e ? sfp_elf_bfd_name(e, vaddr, start) : NULL;
}

int sfp_symbolizer_dso__a2l_inlines(struct sfp_symbolizer_dso *dso,
				    uint64_t vaddr,
				    struct sfp_inline_frame *frames, size_t max)
{
	struct sfp_symbolizer_dso *d = dso->same ? dso->same : dso;
	int n = sfp_symbolizer_dso__inlines(dso, vaddr, frames, max);

	if (n > 0 && d->dw)
		sfp_dwarf_a2l_names(d->dw, vaddr, frames,
				    (size_t)n < max ? (size_t)n : max, a2l_sym,
				    d);
	return n;
}

const char *sfp_elf_bfd_name(struct sfp_elf *e, uint64_t vaddr,
			     uint64_t *start)
{
	struct sfp_elf_section sec, tab;
	size_t i, n, shndx = 0;

	n = sfp_elf_num_sections(e);
	/* the first allocated section holding the address (addr2line's) */
	for (i = 1; i < n && !shndx; i++)
		if (!sfp_elf_section(e, i, &sec) && (sec.flags & SHF_ALLOC) &&
		    vaddr >= sec.addr && vaddr - sec.addr < sec.size)
			shndx = i;
	if (!shndx)
		return NULL;
	if (sfp_elf_find_section(e, NULL, SHT_SYMTAB, &tab) &&
	    sfp_elf_find_section(e, NULL, SHT_DYNSYM, &tab))
		return NULL;
	return scan(e, &tab, shndx, vaddr, start);
}
