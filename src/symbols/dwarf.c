// SPDX-License-Identifier: MIT
/*
 * Source lines and inline chains from DWARF, through libdw (elfutils).
 *
 * On first use the address ranges of every compile unit are collected
 * into a sorted array (not from .debug_aranges, which newer compilers may
 * omit), so that finding the CU of an address is a binary search.  The
 * first lookup in a CU walks its DIE tree once and indexes every concrete
 * function instance (DW_TAG_subprogram and DW_TAG_inlined_subroutine with
 * code): its ranges, sorted, each with a link to the smallest range
 * enclosing it, and its parent instance.  A lookup is then a binary
 * search plus a walk up the links, instead of dwarf_getscopes()' walk of
 * the whole CU per address.  Each inlined instance's DW_AT_call_file /
 * call_line is the location in the next outer frame.  libdw parses the
 * untrusted DWARF itself, with its own bounds checks; we only read what
 * it hands back, and cap the depth and size of what we index.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "common/cursor.h"
#include "common/htab.h"
#include "elf/elf.h"
#include "symbols/internal.h"

struct cu_range {
	uint64_t lo, hi;	/* [lo, hi) */
	uint32_t cu;		/* index into sfp_dwarf.cus */
};

#define NONE UINT32_MAX

/* One concrete function instance of a CU. */
struct fn_inst {
	Dwarf_Off die_off;
	uint32_t parent;	/* enclosing instance, or NONE */
	bool inlined;
	bool name_done;
	bool a2l_seen;		/* sfp_dwarf_a2l_names(): addr2line's state */
	const char *name;	/* resolved on first use */
	const char *a2l_name;	/* the symbol name addr2line took for it */
	uint32_t call_file, call_line, call_col;
};

/* One address range of an instance. */
struct fn_range {
	uint64_t lo, hi;
	uint32_t fn;		/* index into cu_index.fns */
	uint32_t up;		/* smallest range enclosing this one, or NONE */
	uint32_t depth;
};

struct cu_index {
	Dwarf_Off off;		/* the CU DIE */
	bool built;
	struct fn_inst *fns;
	size_t nfns, fns_cap;
	struct fn_range *ranges;
	size_t nranges, ranges_cap;
};

/* Interned demangled names, keyed by the DWARF string's address. */
struct name_row {
	const char *raw;
	const char *name;
};

struct sfp_dwarf {
	Dwarf *dw;
	void *image;		/* decompressed sections, or NULL */
	size_t image_size;
	bool image_mapped;	/* from the cache: munmap(), not free() */
	bool image_new;		/* inflated now: to be cached */
	const void *saved_index;	/* the cache's copy of ranges/cus */
	size_t saved_index_size;
	Elf *image_elf;		/* elf_memory() of image */
	char *name;		/* the ELF's, for messages */
	struct cu_range *ranges;
	size_t nranges;
	struct cu_index *cus;
	size_t ncus;
	struct name_row *names;
	size_t nnames, names_cap;
	struct sfp_htab name_index;	/* names by raw's address */
	struct sfp_strpool pool;
};

/* Caps (per DSO / per CU) before we call the DWARF hostile. */
#define DW_MAX_RANGES (16u << 20)
#define DW_MAX_CUS (4u << 20)
#define DW_MAX_FNS (8u << 20)
#define DW_MAX_DEPTH 128

static int range_cmp(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static int add_range(struct sfp_dwarf *d, size_t *cap, uint64_t lo,
		     uint64_t hi, uint32_t cu)
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
	d->ranges[d->nranges].cu = cu;
	d->nranges++;
	return 0;
}

static int index_cus(struct sfp_dwarf *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cap = 0, cus_cap = 0;
	int err;

	while (dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie,
			       &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		if (d->ncus == cus_cap) {
			struct cu_index *n;

			if (d->ncus >= DW_MAX_CUS)
				return -E2BIG;
			cus_cap = cus_cap ? cus_cap * 2 : 64;
			n = realloc(d->cus, cus_cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			d->cus = n;
		}
		memset(&d->cus[d->ncus], 0, sizeof(d->cus[0]));
		d->cus[d->ncus].off = dwarf_dieoffset(&cudie);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			err = add_range(d, &cap, lo, hi, (uint32_t)d->ncus);
			if (err)
				return err;
		}
		d->ncus++;
	}
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), range_cmp);
	return 0;
}

/*
 * The CU index as kept in the cache beside the image (host order; the
 * image itself is only made for files of the host's order):
 *
 *	u32 magic, u32 version, u64 ncus, u64 nranges,
 *	ncus x u64 CU DIE offset, nranges x (u64 lo, u64 hi, u32 cu)
 */
#define INDEX_MAGIC 0x58495543u	/* "CUIX" */
#define INDEX_VERSION 1u

static void *save_index(const struct sfp_dwarf *d, size_t *size)
{
	size_t n = 24 + d->ncus * 8 + d->nranges * 20, i;
	uint8_t *b = malloc(n), *p = b;
	uint32_t hdr[2] = { INDEX_MAGIC, INDEX_VERSION };
	uint64_t counts[2] = { d->ncus, d->nranges };

	if (!b)
		return NULL;
	memcpy(p, hdr, 8);
	memcpy(p + 8, counts, 16);
	p += 24;
	for (i = 0; i < d->ncus; i++, p += 8)
		memcpy(p, &(uint64_t){ d->cus[i].off }, 8);
	for (i = 0; i < d->nranges; i++, p += 20) {
		memcpy(p, &d->ranges[i].lo, 8);
		memcpy(p + 8, &d->ranges[i].hi, 8);
		memcpy(p + 16, &d->ranges[i].cu, 4);
	}
	*size = n;
	return b;
}

/*
 * Take the index from the cache's bytes.  They passed the CRC, but are
 * read like any file: counts within the caps and the size, every range
 * non-empty, sorted and naming a CU that exists.  Return 0, or -EBADMSG
 * (the caller builds the index itself).
 */
static int load_index(struct sfp_dwarf *d, const void *buf, size_t size)
{
	struct sfp_cursor c;
	uint32_t magic, version;
	uint64_t ncus, nranges, i;

	sfp_cursor_init(&c, buf, size, false);
	if (sfp_cursor_u32(&c, &magic) || sfp_cursor_u32(&c, &version) ||
	    sfp_cursor_u64(&c, &ncus) || sfp_cursor_u64(&c, &nranges) ||
	    magic != INDEX_MAGIC || version != INDEX_VERSION ||
	    ncus > DW_MAX_CUS || nranges > DW_MAX_RANGES ||
	    sfp_cursor_left(&c) != ncus * 8 + nranges * 20)
		return -EBADMSG;
	d->cus = calloc(ncus ? ncus : 1, sizeof(*d->cus));
	d->ranges = malloc((nranges ? nranges : 1) * sizeof(*d->ranges));
	if (!d->cus || !d->ranges)
		goto bad;
	for (i = 0; i < ncus; i++)
		if (sfp_cursor_u64(&c, &d->cus[i].off))
			goto bad;
	for (i = 0; i < nranges; i++) {
		struct cu_range *r = &d->ranges[i];

		if (sfp_cursor_u64(&c, &r->lo) || sfp_cursor_u64(&c, &r->hi) ||
		    sfp_cursor_u32(&c, &r->cu) || r->lo >= r->hi ||
		    r->cu >= ncus ||
		    (i && range_cmp(&d->ranges[i - 1], r) > 0))
			goto bad;
	}
	d->ncus = ncus;
	d->nranges = nranges;
	return 0;
bad:
	free(d->cus);
	free(d->ranges);
	d->cus = NULL;
	d->ranges = NULL;
	return -EBADMSG;
}

static void free_image(struct sfp_dwarf *d)
{
	if (d->image_mapped)
		sfp_dwarf_cache_unmap(d->image, d->image_size,
				      d->saved_index_size);
	else
		free(d->image);
	d->image = NULL;
	d->image_mapped = false;
	d->saved_index = NULL;
	d->saved_index_size = 0;
}

/* libdw on d->image; on failure the image is let go */
static Dwarf *begin_image(struct sfp_dwarf *d)
{
	Dwarf *dw;

	d->image_elf = elf_memory(d->image, d->image_size);
	dw = d->image_elf ? dwarf_begin_elf(d->image_elf, DWARF_C_READ, NULL) :
			    NULL;
	if (!dw) {
		if (d->image_elf)
			elf_end(d->image_elf);
		d->image_elf = NULL;
		free_image(d);
	}
	return dw;
}

/*
 * libdw on the decompressed image when the file's DWARF is compressed
 * (the cache's copy, else inflated now and then kept there); NULL to open
 * the file itself.
 */
static Dwarf *open_image(struct sfp_dwarf *d, struct sfp_elf *e,
			 const struct sfp_dwarf_cache *cache)
{
	Dwarf *dw;

	if (!sfp_dwarf_cache_load(cache, e, &d->image, &d->image_size,
				  &d->saved_index, &d->saved_index_size)) {
		d->image_mapped = true;
		if ((dw = begin_image(d)))
			return dw;
		/* it passed its CRC but libdw will not have it: made by
		 * something else than this code; made again and replaced */
		pr_info("%s: cached DWARF image unreadable; rebuilding",
			sfp_elf_name(e));
	}
	if (sfp_dwarf_image(e, &d->image, &d->image_size))
		return NULL;
	d->image_new = true;
	return begin_image(d);
}

int sfp_dwarf_open(struct sfp_elf *e, const struct sfp_dwarf_cache *cache,
		   struct sfp_dwarf **out)
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
	d->name = strdup(sfp_elf_name(e));
	if (!d->name) {
		free(d);
		return -ENOMEM;
	}
	d->dw = open_image(d, e, cache);
	if (!d->dw)
		d->dw = dwarf_begin_elf(sfp_elf_handle(e), DWARF_C_READ, NULL);
	if (!d->dw) {
		pr_warn("%s: cannot read DWARF: %s", sfp_elf_name(e),
			dwarf_errmsg(-1));
		sfp_dwarf_free(&d);
		return -EBADMSG;
	}
	if (!d->saved_index ||
	    load_index(d, d->saved_index, d->saved_index_size)) {
		err = index_cus(d);
		if (err) {
			sfp_dwarf_free(&d);
			return err;
		}
		/* a cached image whose index was not fit to use: the entry
		 * is stored again, with the index just built */
		if (d->saved_index)
			d->image_new = true;
	}
	if (d->image_new && d->image_elf) {
		size_t n = 0;
		void *idx = save_index(d, &n);

		sfp_dwarf_cache_store(cache, e, d->image, d->image_size, idx,
				      idx ? n : 0);
		free(idx);
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
	if (d->image_elf)
		elf_end(d->image_elf);
	free_image(d);
	free(d->name);
	free(d->ranges);
	for (size_t i = 0; i < d->ncus; i++) {
		free(d->cus[i].fns);
		free(d->cus[i].ranges);
	}
	free(d->cus);
	free(d->names);
	sfp_htab_free(&d->name_index);
	sfp_strpool_free(&d->pool);
	free(d);
	*dp = NULL;
}

/* The CU covering addr.  Ranges may overlap: take the innermost. */
static struct cu_index *find_cu(struct sfp_dwarf *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nranges, steps = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over ranges starting at or before addr. */
	while (lo-- > 0 && steps++ < 64) {
		const struct cu_range *r = &d->ranges[lo];

		if (addr < r->hi)
			return &d->cus[r->cu];
	}
	return NULL;
}

static bool die_udata(Dwarf_Die *die, unsigned int at, Dwarf_Word *v)
{
	Dwarf_Attribute attr;

	return dwarf_attr(die, at, &attr) && dwarf_formudata(&attr, v) == 0;
}

static int add_fn(struct cu_index *c, Dwarf_Die *die, uint32_t parent,
		  bool inlined, uint32_t *idx)
{
	struct fn_inst *f;
	Dwarf_Word v;

	if (c->nfns == c->fns_cap) {
		size_t cap = c->fns_cap ? c->fns_cap * 2 : 64;
		struct fn_inst *n;

		if (c->nfns >= DW_MAX_FNS)
			return -E2BIG;
		n = realloc(c->fns, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->fns = n;
		c->fns_cap = cap;
	}
	f = &c->fns[c->nfns];
	memset(f, 0, sizeof(*f));
	f->die_off = dwarf_dieoffset(die);
	f->parent = parent;
	f->inlined = inlined;
	if (inlined) {
		f->call_file = die_udata(die, DW_AT_call_file, &v) &&
			       v < UINT32_MAX ? (uint32_t)v : UINT32_MAX;
		f->call_line = die_udata(die, DW_AT_call_line, &v) &&
			       v <= UINT32_MAX ? (uint32_t)v : 0;
		f->call_col = die_udata(die, DW_AT_call_column, &v) &&
			      v <= UINT32_MAX ? (uint32_t)v : 0;
	}
	*idx = (uint32_t)c->nfns++;
	return 0;
}

static int add_fn_range(struct cu_index *c, uint64_t lo, uint64_t hi,
			uint32_t fn, uint32_t depth)
{
	if (lo >= hi)
		return 0;
	if (c->nranges == c->ranges_cap) {
		size_t cap = c->ranges_cap ? c->ranges_cap * 2 : 64;
		struct fn_range *n;

		if (c->nranges >= DW_MAX_FNS)
			return -E2BIG;
		n = realloc(c->ranges, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->ranges = n;
		c->ranges_cap = cap;
	}
	c->ranges[c->nranges].lo = lo;
	c->ranges[c->nranges].hi = hi;
	c->ranges[c->nranges].fn = fn;
	c->ranges[c->nranges].up = NONE;
	c->ranges[c->nranges].depth = depth;
	c->nranges++;
	return 0;
}

/* DIEs whose children may hold function instances with code. */
static bool is_container(int tag)
{
	switch (tag) {
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

static int walk_dies(struct cu_index *c, Dwarf_Die *parent_die,
		     uint32_t parent_fn, uint32_t depth)
{
	Dwarf_Die child;
	int r, err;

	if (depth > DW_MAX_DEPTH)
		return 0;	/* deeper nesting is not real code */
	r = dwarf_child(parent_die, &child);
	while (r == 0) {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			uint32_t fn = NONE;

			while ((off = dwarf_ranges(&child, off, &base, &lo,
						   &hi)) > 0) {
				if (fn == NONE) {
					err = add_fn(c, &child, parent_fn,
						     tag == DW_TAG_inlined_subroutine,
						     &fn);
					if (err)
						return err;
				}
				err = add_fn_range(c, lo, hi, fn, depth);
				if (err)
					return err;
			}
			/* Abstract instances (no code) hold no frames. */
			if (fn != NONE) {
				err = walk_dies(c, &child, fn, depth + 1);
				if (err)
					return err;
			}
		} else if (is_container(tag)) {
			err = walk_dies(c, &child, parent_fn, depth + 1);
			if (err)
				return err;
		}
		r = dwarf_siblingof(&child, &child);
	}
	return 0;
}

static int fn_range_cmp(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)	/* outer (longer) first */
		return a->hi > b->hi ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	/*
	 * Two instances with one range (gas 2.40 gives each alias of an
	 * assembly function a DW_TAG_subprogram: glibc's
	 * __memmove_avx512_unaligned_erms and __memcpy_...): the later DIE
	 * sorts last and is the one found, as binutils' addr2line (and so
	 * perf) names it.  Not left to qsort(), which is not stable.
	 */
	return a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* Index a CU's function instances; link each range to its encloser. */
static int build_cu_index(struct sfp_dwarf *d, struct cu_index *c)
{
	Dwarf_Die cudie;
	uint32_t *stack = NULL;
	size_t sp = 0, i;
	int err;

	c->built = true;
	if (!dwarf_offdie(d->dw, c->off, &cudie))
		return -EBADMSG;
	err = walk_dies(c, &cudie, NONE, 0);
	if (err)
		return err;
	if (!c->nranges)
		return 0;
	qsort(c->ranges, c->nranges, sizeof(*c->ranges), fn_range_cmp);
	stack = malloc(c->nranges * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (i = 0; i < c->nranges; i++) {
		struct fn_range *r = &c->ranges[i];

		while (sp && c->ranges[stack[sp - 1]].hi <= r->lo)
			sp--;
		r->up = sp ? stack[sp - 1] : NONE;
		stack[sp++] = (uint32_t)i;
	}
	free(stack);
	return 0;
}

/* The innermost instance whose range holds addr, or NONE. */
static uint32_t find_fn(const struct cu_index *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nranges;
	uint32_t j, steps = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NONE;
	/*
	 * The last range starting at or before addr, or the nearest range
	 * enclosing it, is the innermost one holding addr (a sibling before
	 * it that held addr would enclose it).
	 */
	for (j = (uint32_t)(lo - 1); j != NONE && steps++ < DW_MAX_DEPTH * 4;
	     j = c->ranges[j].up)
		if (addr < c->ranges[j].hi)
			return c->ranges[j].fn;
	return NONE;
}

static bool name_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_dwarf *d = ctx;

	return d->names[idx].raw == key;
}

static const char *intern_name(struct sfp_symbolizer *s, struct sfp_dwarf *d,
			       const char *raw)
{
	uint32_t hash, i;
	char *dm;
	const char *name;

	if (!raw)
		return NULL;
	hash = sfp_hash64((uintptr_t)raw, 0);
	i = sfp_htab_find(&d->name_index, hash, name_row_is, d, raw);
	if (i != SFP_HTAB_NONE)
		return d->names[i].name;
	if (SFP_HTAB_ROWS_RESERVE(d->names, d->names_cap, d->nnames + 1))
		return raw;
	name = raw;
	dm = sfp_symbolizer_demangle(s, raw);
	if (dm) {
		name = sfp_strpool_add(&d->pool, dm, strlen(dm));
		free(dm);
		if (!name)
			return raw;
	}
	if (sfp_htab_add(&d->name_index, hash, (uint32_t)d->nnames))
		return name;	/* unremembered: demangled again next time */
	d->names[d->nnames].raw = raw;
	d->names[d->nnames].name = name;
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

static const char *fn_name(struct sfp_symbolizer *s, struct sfp_dwarf *d,
			   struct fn_inst *f)
{
	Dwarf_Die die;

	if (!f->name_done) {
		f->name_done = true;
		if (dwarf_offdie(d->dw, f->die_off, &die))
			f->name = die_name(s, d, &die);
	}
	return f->name;
}

int sfp_dwarf_inlines(struct sfp_symbolizer *s, struct sfp_dwarf *d,
		      uint64_t vaddr, struct sfp_inline_frame *frames,
		      size_t max)
{
	struct cu_index *c = find_cu(d, vaddr);
	Dwarf_Die cudie;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, nf = 0;
	Dwarf_Line *line;
	const char *file = NULL;
	unsigned int lineno = 0, col = 0;
	uint32_t fn;

	if (!c || !dwarf_offdie(d->dw, c->off, &cudie))
		return -ENOENT;
	if (!c->built) {
		int err = build_cu_index(d, c);

		if (err)
			pr_warn("%s: DWARF CU at .debug_info offset %#llx: function index incomplete (%s)",
				d->name, (unsigned long long)c->off,
				sfp_strerror(err));
	}
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		int l = 0, cc = 0;

		file = dwarf_linesrc(line, NULL, NULL);
		if (!dwarf_lineno(line, &l) && l > 0)
			lineno = (unsigned int)l;
		if (!dwarf_linecol(line, &cc) && cc > 0)
			col = (unsigned int)cc;
	}
	fn = find_fn(c, vaddr);
	if (fn != NONE && dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	/* Innermost first; the first non-inlined instance ends the chain. */
	while (fn != NONE && fn < c->nfns && nf <= DW_MAX_DEPTH) {
		struct fn_inst *f = &c->fns[fn];

		if (nf < max) {
			frames[nf].name = fn_name(s, d, f);
			frames[nf].file = file;
			frames[nf].line = lineno;
			frames[nf].column = col;
			frames[nf].inlined = f->inlined;
		}
		nf++;
		if (!f->inlined)
			break;
		/* The next frame stands at this one's call site. */
		file = files && f->call_file < nfiles ?
		       dwarf_filesrc(files, f->call_file, NULL, NULL) : NULL;
		lineno = f->call_line;
		col = f->call_col;
		fn = f->parent;
	}
	if (!nf) {
		/* No function instance (e.g. assembly with line info only). */
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
	return (int)nf;
}

/*
 * The names GNU addr2line (binutils 2.40, what perf 6.1 runs) gives the
 * levels of vaddr's chain, over what sfp_dwarf_inlines() put in frames
 * (n of them).  BFD takes DW_AT_name for a linkage name only in languages
 * without mangling (C, assembly).  In C++, D, Rust or Java, the first time
 * a function instance without DW_AT_linkage_name (directly or through its
 * origin or specification) is the innermost level of a lookup, addr2line
 * prints the ELF symbol covering the address (bfd_name(), given the
 * address), and keeps that symbol as the instance's name when it starts
 * where the instance does; later lookups print the instance's name
 * (_bfd_dwarf2_find_nearest_line()).  perf keeps one addr2line per DSO
 * for the whole run and asks it each address once, in the order it meets
 * them: so does script, which makes the same answers.
 */
void sfp_dwarf_a2l_names(struct sfp_dwarf *d, uint64_t vaddr,
			 struct sfp_inline_frame *frames, size_t n,
			 const char *(*bfd_name)(void *, uint64_t, uint64_t *),
			 void *arg)
{
	struct cu_index *c = find_cu(d, vaddr);
	Dwarf_Attribute attr;
	Dwarf_Die cudie, die;
	uint32_t fn;
	size_t i;

	if (!c || !c->built || !dwarf_offdie(d->dw, c->off, &cudie))
		return;
	switch (dwarf_srclang(&cudie)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_D:
	case DW_LANG_Rust:
	case DW_LANG_Java:
		break;
	default:
		return;
	}
	fn = find_fn(c, vaddr);
	for (i = 0; fn != NONE && fn < c->nfns && i < n; i++) {
		struct fn_inst *f = &c->fns[fn];

		if (!i && !f->a2l_seen) {
			f->a2l_seen = true;
			if (dwarf_offdie(d->dw, f->die_off, &die) &&
			    !dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr) &&
			    !dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &attr)) {
				Dwarf_Addr lo = 0;
				uint64_t start = 0;
				const char *sym = bfd_name(arg, vaddr, &start);

				if (sym) {
					frames[0].name = sym;
					if (!dwarf_lowpc(&die, &lo) && lo == start)
						f->a2l_name = sym;
					goto next;
				}
			}
		}
		if (f->a2l_name)
			frames[i].name = f->a2l_name;
next:
		if (!f->inlined)
			break;
		fn = f->parent;
	}
}
