// SPDX-License-Identifier: MIT
/*
 * Source lines and inline chains from DWARF, through libdw (elfutils).
 *
 * On first use the address ranges of every compile unit are collected
 * into a sorted array (not from .debug_aranges, which newer compilers may
 * omit), so that finding the CU of an address is a binary search.  The
 * inline chain comes from dwarf_getscopes(): each DW_TAG_inlined_subroutine
 * scope's DW_AT_call_file/call_line is the location in the next outer
 * function.  libdw parses the untrusted DWARF itself, with its own bounds
 * checks; we only read what it hands back.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elf/elf.h"
#include "symbols/internal.h"

struct cu_range {
	uint64_t lo, hi;	/* [lo, hi) */
	Dwarf_Off cu_off;	/* offset of the CU DIE */
};

/* Interned demangled names, keyed by the DWARF string's address. */
struct name_slot {
	const char *raw;
	const char *name;
};

struct sfp_dwarf {
	Dwarf *dw;
	struct cu_range *ranges;
	size_t nranges;
	struct name_slot *names;
	size_t nnames_cap;	/* power of two */
	size_t nnames;
	struct sfp_strpool pool;
};

/* Cap on CU ranges collected (per DSO) before we call the DWARF hostile. */
#define DW_MAX_RANGES (16u << 20)

static int range_cmp(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static int add_range(struct sfp_dwarf *d, size_t *cap, uint64_t lo,
		     uint64_t hi, Dwarf_Off off)
{
	if (lo >= hi)
		return 0;
	if (d->nranges == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct cu_range *n;

		if (d->nranges >= DW_MAX_RANGES)
			return -E2BIG;
		n = realloc(d->ranges, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->ranges = n;
		*cap = ncap;
	}
	d->ranges[d->nranges].lo = lo;
	d->ranges[d->nranges].hi = hi;
	d->ranges[d->nranges].cu_off = off;
	d->nranges++;
	return 0;
}

static int index_cus(struct sfp_dwarf *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cap = 0;
	int err;

	while (dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie,
			       &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			err = add_range(d, &cap, lo, hi, dwarf_dieoffset(&cudie));
			if (err)
				return err;
		}
	}
	qsort(d->ranges, d->nranges, sizeof(*d->ranges), range_cmp);
	return 0;
}

int sfp_dwarf_open(struct sfp_elf *e, struct sfp_dwarf **out)
{
	struct sfp_elf_section sec;
	struct sfp_dwarf *d;
	int err;

	*out = NULL;
	if (sfp_elf_find_section(e, ".debug_info", 0, &sec) ||
	    sec.type == SHT_NOBITS)
		return -ENOENT;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->dw = dwarf_begin_elf(sfp_elf_handle(e), DWARF_C_READ, NULL);
	if (!d->dw) {
		pr_warn("%s: cannot read DWARF: %s", sfp_elf_name(e),
			dwarf_errmsg(-1));
		free(d);
		return -EBADMSG;
	}
	err = index_cus(d);
	if (err) {
		sfp_dwarf_free(&d);
		return err;
	}
	*out = d;
	return 0;
}

void sfp_dwarf_free(struct sfp_dwarf **dp)
{
	struct sfp_dwarf *d = dp ? *dp : NULL;

	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	free(d->ranges);
	free(d->names);
	sfp_strpool_free(&d->pool);
	free(d);
	*dp = NULL;
}

/* The CU DIE covering addr.  Ranges may overlap: take the innermost. */
static bool find_cu(struct sfp_dwarf *d, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi = d->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over ranges starting at or before addr. */
	while (lo-- > 0) {
		const struct cu_range *r = &d->ranges[lo];

		if (addr < r->hi)
			return dwarf_offdie(d->dw, r->cu_off, cudie) != NULL;
		if (d->nranges - lo > 64)
			break;	/* ranges do not nest this deep in practice */
	}
	return false;
}

static const char *intern_name(struct sfp_symbolizer *s, struct sfp_dwarf *d,
			       const char *raw)
{
	size_t mask, i;
	char *dm;
	const char *name;

	if (!raw)
		return NULL;
	if (d->nnames * 2 >= d->nnames_cap) {
		size_t ncap = d->nnames_cap ? d->nnames_cap * 2 : 256, k;
		struct name_slot *n = calloc(ncap, sizeof(*n));

		if (!n)
			return raw;
		for (k = 0; k < d->nnames_cap; k++) {
			if (!d->names[k].raw)
				continue;
			i = ((uintptr_t)d->names[k].raw >> 3) & (ncap - 1);
			while (n[i].raw)
				i = (i + 1) & (ncap - 1);
			n[i] = d->names[k];
		}
		free(d->names);
		d->names = n;
		d->nnames_cap = ncap;
	}
	mask = d->nnames_cap - 1;
	for (i = ((uintptr_t)raw >> 3) & mask; d->names[i].raw;
	     i = (i + 1) & mask)
		if (d->names[i].raw == raw)
			return d->names[i].name;
	name = raw;
	dm = s->no_demangle ? NULL : sfp_demangle(raw);
	if (dm) {
		name = sfp_strpool_add(&d->pool, dm, strlen(dm));
		free(dm);
		if (!name)
			return raw;
	}
	d->names[i].raw = raw;
	d->names[i].name = name;
	d->nnames++;
	return name;
}

static const char *die_name(struct sfp_symbolizer *s, struct sfp_dwarf *d,
			    Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *raw = NULL;

	/* The linkage name carries the C++ scope; demangled it reads well. */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		raw = dwarf_formstring(&attr);
	if (!raw)
		raw = dwarf_diename(die);
	return intern_name(s, d, raw);
}

static bool die_udata(Dwarf_Die *die, unsigned int at, Dwarf_Word *v)
{
	Dwarf_Attribute attr;

	return dwarf_attr(die, at, &attr) && dwarf_formudata(&attr, v) == 0;
}

int sfp_dwarf_inlines(struct sfp_symbolizer *s, struct sfp_dwarf *d,
		      uint64_t vaddr, struct sfp_inline_frame *frames,
		      size_t max)
{
	Dwarf_Die cudie, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, nf = 0;
	Dwarf_Line *line;
	const char *file = NULL;
	unsigned int lineno = 0, col = 0;
	int nscopes, i;

	if (!find_cu(d, vaddr, &cudie))
		return -ENOENT;
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		int l = 0, c = 0;

		file = dwarf_linesrc(line, NULL, NULL);
		if (!dwarf_lineno(line, &l) && l > 0)
			lineno = (unsigned int)l;
		if (!dwarf_linecol(line, &c) && c > 0)
			col = (unsigned int)c;
	}
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	nscopes = dwarf_getscopes(&cudie, vaddr, &scopes);
	/*
	 * Past an inlined instance, dwarf_getscopes() continues with the
	 * abstract definition's parents; the callers are the concrete
	 * parents, which dwarf_getscopes_die() on the innermost function
	 * scope gives.
	 */
	for (i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Die inner = scopes[i], *chain = NULL;

			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inner, &chain);
			scopes = chain;
			break;
		}
	}
	for (i = 0; i < nscopes; i++) {
		Dwarf_Die *sc = &scopes[i];
		int tag = dwarf_tag(sc);
		Dwarf_Word cf, cl, cc;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		/*
		 * After an inlined instance libdw lists the scopes of its
		 * abstract definition (a subprogram with DW_AT_inline):
		 * those are no frame of their own.
		 */
		if (tag == DW_TAG_subprogram && dwarf_hasattr(sc, DW_AT_inline))
			continue;
		if (nf < max) {
			frames[nf].name = die_name(s, d, sc);
			frames[nf].file = file;
			frames[nf].line = lineno;
			frames[nf].column = col;
			frames[nf].inlined = tag == DW_TAG_inlined_subroutine;
		}
		nf++;
		if (tag == DW_TAG_subprogram)
			break;
		/* The next frame stands at this one's call site. */
		file = NULL;
		lineno = col = 0;
		if (files && die_udata(sc, DW_AT_call_file, &cf) && cf < nfiles)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		if (die_udata(sc, DW_AT_call_line, &cl) && cl <= UINT32_MAX)
			lineno = (unsigned int)cl;
		if (die_udata(sc, DW_AT_call_column, &cc) && cc <= UINT32_MAX)
			col = (unsigned int)cc;
	}
	free(scopes);
	if (!nf) {
		/* No function scope (e.g. assembly with line info only). */
		if (!file)
			return -ENOENT;
		if (max) {
			frames[0].name = NULL;
			frames[0].file = file;
			frames[0].line = lineno;
			frames[0].column = col;
			frames[0].inlined = false;
		}
		nf = 1;
	}
	return nf > INT32_MAX ? INT32_MAX : (int)nf;
}
