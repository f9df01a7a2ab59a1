// SPDX-License-Identifier: MIT
/*
 * Function names of Go binaries from the runtime's own function table
 * (the "pclntab"), which every Go binary keeps for tracebacks even when
 * it is stripped of .symtab (Debian's Go tools, most Go services in
 * images).  `go tool addr2line` names addresses from the same table.
 *
 * Layouts read (by the magic at the start of the table):
 *   0xfffffffa  Go 1.16-1.17: functab entries are (entry pc, func offset)
 *               pairs of pointer size, entry pcs absolute;
 *   0xfffffff0  Go 1.18-1.19, 0xfffffff1 Go 1.20+: a text start in the
 *               header and (entry offset, func offset) pairs of 32 bits.
 * Go 1.2-1.15 (0xfffffffb) is refused with a message, not guessed at.
 *
 * The header, after the magic: two zero bytes, the pc quantum, the
 * pointer size; then words of pointer size: the function count, the file
 * count, (1.18+) the text start, and the offsets (from the table's
 * start) of the function name table, the compilation-unit table, the
 * file table, the pc-value tables and the function table.  Each function
 * table entry points at a _func record whose second field is the offset
 * of its name in the name table.  A function runs from its entry to the
 * next one's, as the runtime and addr2line take it (alignment padding
 * included).
 *
 * Everything comes from the file, so every offset is checked through a
 * cursor; a damaged entry is skipped and counted, a damaged header
 * refuses the table, both said with the file offset.
 */
#include "common/cursor.h"
#include "elf/elf.h"
#include "symbols/symtab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu

static int read_word(struct sfp_cursor *c, unsigned int ptrsize,
		     uint64_t *v)
{
	uint32_t w = 0;
	int err;

	if (ptrsize == 8)
		return sfp_cursor_u64(c, v);
	err = sfp_cursor_u32(c, &w);
	*v = w;
	return err;
}

/* The version a magic stands for, 0 unknown. */
static unsigned int magic_version(uint32_t magic)
{
	switch (magic) {
	case MAGIC_116:
		return 116;
	case MAGIC_118:
		return 118;
	case MAGIC_120:
		return 120;
	case MAGIC_12:
		return 102;
	}
	return 0;
}

struct header {
	unsigned int version;
	unsigned int ptrsize;
	uint64_t nfunc, text_start, nameoff, funcoff;
};

/* Read and check the header; quiet (the magic search probes with it). */
static int read_header(const uint8_t *data, size_t size, bool swap,
		       struct header *h, const char **why)
{
	struct sfp_cursor c;
	uint32_t magic;
	uint8_t pad1, pad2, quantum, ptrsize;
	uint64_t nfiles, cuoff, fileoff, pcoff;

	sfp_cursor_init(&c, data, size, swap);
	*why = "header truncated";
	if (sfp_cursor_u32(&c, &magic) || sfp_cursor_u8(&c, &pad1) ||
	    sfp_cursor_u8(&c, &pad2) || sfp_cursor_u8(&c, &quantum) ||
	    sfp_cursor_u8(&c, &ptrsize))
		return -EBADMSG;
	h->version = magic_version(magic);
	*why = "not a Go function table (bad magic)";
	if (!h->version)
		return -EBADMSG;
	*why = "bad header (padding, pc quantum or pointer size)";
	if (pad1 || pad2 || (quantum != 1 && quantum != 2 && quantum != 4) ||
	    (ptrsize != 4 && ptrsize != 8))
		return -EBADMSG;
	if (h->version == 102) {
		*why = "Go 1.2-1.15 table layout, not read";
		return -ENOTSUP;
	}
	h->ptrsize = ptrsize;
	h->text_start = 0;
	*why = "header truncated";
	if (read_word(&c, ptrsize, &h->nfunc) ||
	    read_word(&c, ptrsize, &nfiles) ||
	    (h->version >= 118 && read_word(&c, ptrsize, &h->text_start)) ||
	    read_word(&c, ptrsize, &h->nameoff) ||
	    read_word(&c, ptrsize, &cuoff) ||
	    read_word(&c, ptrsize, &fileoff) ||
	    read_word(&c, ptrsize, &pcoff) ||
	    read_word(&c, ptrsize, &h->funcoff))
		return -EBADMSG;
	*why = "table offset outside the table";
	if (h->nameoff >= size || cuoff > size || fileoff > size ||
	    pcoff > size || h->funcoff >= size)
		return -EBADMSG;
	*why = "function count does not fit the table";
	if (h->nfunc > SFP_SYMTAB_MAX ||
	    (h->nfunc + 1) * (h->version >= 118 ? 8 : 2 * ptrsize) >
		    size - h->funcoff)
		return -EBADMSG;
	return 0;
}

/* A functab entry i: its entry address and its _func offset. */
static int read_entry(struct sfp_cursor *c, const struct header *h,
		      uint64_t i, uint64_t *entry, uint64_t *func)
{
	if (h->version >= 118) {
		uint32_t e, f;

		if (sfp_cursor_seek(c, h->funcoff + i * 8) ||
		    sfp_cursor_u32(c, &e) || sfp_cursor_u32(c, &f))
			return -EBADMSG;
		*entry = e;
		*func = f;
		return 0;
	}
	if (sfp_cursor_seek(c, h->funcoff + i * 2 * h->ptrsize) ||
	    read_word(c, h->ptrsize, entry) || read_word(c, h->ptrsize, func))
		return -EBADMSG;
	return 0;
}

/* The entry and name offset of the _func record at table offset at. */
static int func_bad_at(struct sfp_cursor *c, uint64_t at,
		       const struct header *h, uint64_t *entry,
		       int32_t *nameoff)
{
	if (sfp_cursor_seek(c, at))
		return -EBADMSG;
	if (h->version >= 118) {
		uint32_t e;

		if (sfp_cursor_u32(c, &e))
			return -EBADMSG;
		*entry = e;
	} else if (read_word(c, h->ptrsize, entry)) {
		return -EBADMSG;
	}
	return sfp_cursor_i32(c, nameoff);
}

int sfp_gopclntab_parse(struct sfp_symtab *t, const uint8_t *data,
			size_t size, bool swap, uint64_t text_fallback,
			const char *what, uint64_t file_off,
			struct sfp_gopclntab_stats *st)
{
	struct sfp_gopclntab_stats dummy;
	struct sfp_cursor c;
	struct header h;
	const char *why;
	uint64_t i, entry, next, func, base;
	int err;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	err = read_header(data, size, swap, &h, &why);
	if (err) {
		pr_warn("%s: Go function table at file offset %#llx: %s",
			what, (unsigned long long)file_off, why);
		return err;
	}
	st->version = h.version;
	st->nfunc = h.nfunc;
	/*
	 * The text start is in the header from 1.18 on (a linker that
	 * leaves it to a relocation may write 0: then the start of .text,
	 * right for binaries that hold Go code only).
	 */
	base = 0;
	if (h.version >= 118) {
		base = h.text_start;
		if (!base) {
			base = text_fallback;
			st->text_guessed = true;
		}
	}
	st->text_start = base;
	if (sfp_symtab_reserve(t, h.nfunc) == -ENOMEM)
		return -ENOMEM;
	sfp_cursor_init(&c, data, size, swap);
	if (read_entry(&c, &h, 0, &next, &func))
		return -EBADMSG;	/* (checked by read_header) */
	for (i = 0; i < h.nfunc; i++) {
		uint64_t fentry, noff, at;
		int32_t nameoff;
		const char *name;
		const void *nul;

		entry = next;
		at = h.funcoff + func;	/* this entry's _func */
		if (read_entry(&c, &h, i + 1, &next, &func))
			return -EBADMSG;	/* (checked by read_header) */
		/* The _func record: entry (pointer or 32-bit offset), name. */
		if (func_bad_at(&c, at, &h, &fentry, &nameoff))
			goto bad;
		if (fentry != entry || next < entry || nameoff < 0)
			goto bad;
		noff = h.nameoff + (uint64_t)nameoff;
		if (noff >= size)
			goto bad;
		name = (const char *)data + noff;
		nul = memchr(name, 0, size - noff);
		if (!nul || nul == name)
			goto bad;
		err = sfp_symtab_add(t, base + entry, next - entry, name,
				     SFP_SYM_GLOBAL);
		if (err)
			return err;
		st->added++;
		continue;
bad:
		/* Name the first; count them all (no flood). */
		if (!st->bad++)
			pr_warn("%s: Go function table at file offset %#llx: function %llu (record at table offset %#llx) damaged, skipped",
				what, (unsigned long long)file_off,
				(unsigned long long)i,
				(unsigned long long)at);
	}
	if (st->bad > 1)
		pr_warn("%s: Go function table at file offset %#llx: %llu of %llu functions damaged, skipped",
			what, (unsigned long long)file_off,
			(unsigned long long)st->bad,
			(unsigned long long)h.nfunc);
	return (int)st->added;
}

/* Does e say it was linked by Go (its build-id note or build info)? */
static bool linked_by_go(const struct sfp_elf *e)
{
	struct sfp_elf_section sec;

	return !sfp_elf_find_section(e, ".note.go.buildid", 0, &sec) ||
	       !sfp_elf_find_section(e, ".go.buildinfo", 0, &sec);
}

/* A header that reads (or is refused as too old) at an aligned offset
 * of sec's data, for the tables an external linker merged away. */
static int search(struct sfp_elf *e, const char *name, bool swap,
		  const uint8_t **data, size_t *size, uint64_t *file_off)
{
	struct sfp_elf_section sec;
	const uint8_t *d;
	size_t n, off;

	if (sfp_elf_find_section(e, name, 0, &sec) ||
	    sfp_elf_section_data(e, &sec, &d, &n))
		return -ENOENT;
	/* The Go linker aligns the table to 32 bytes; 8 is enough here. */
	for (off = 0; off + 16 <= n; off += 8) {
		struct header h;
		const char *why;
		uint32_t m;
		int err;

		memcpy(&m, d + off, 4);
		if (swap)
			m = __builtin_bswap32(m);
		if (m != MAGIC_116 && m != MAGIC_118 && m != MAGIC_120 &&
		    m != MAGIC_12)
			continue;
		err = read_header(d + off, n - off, swap, &h, &why);
		if (err && err != -ENOTSUP)
			continue;
		*data = d + off;
		*size = n - off;
		*file_off = sec.offset + off;
		return 0;
	}
	return -ENOENT;
}

int sfp_gopclntab_find(struct sfp_elf *e, const uint8_t **data, size_t *size,
		       uint64_t *file_off, bool *swap)
{
	static const char *const named[] = { ".gopclntab",
					     ".data.rel.ro.gopclntab" };
	struct sfp_elf_section sec;
	size_t i;

	*swap = sfp_elf_big_endian(e) != (__BYTE_ORDER__ ==
					  __ORDER_BIG_ENDIAN__);
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (sfp_elf_find_section(e, named[i], 0, &sec))
			continue;
		if (sfp_elf_section_data(e, &sec, data, size))
			return -EBADMSG;
		*file_off = sec.offset;
		return 0;
	}
	/* Externally linked (cgo) binaries: merged into read-only data. */
	if (!linked_by_go(e))
		return -ENOENT;
	if (!search(e, ".data.rel.ro", *swap, data, size, file_off) ||
	    !search(e, ".rodata", *swap, data, size, file_off))
		return 0;
	return -ENOENT;
}

int sfp_gopclntab_load(struct sfp_symtab *t, struct sfp_elf *e,
		       struct sfp_gopclntab_stats *st)
{
	struct sfp_elf_section text;
	const uint8_t *data;
	uint64_t off, text_addr = 0;
	size_t size;
	bool swap;
	int err;

	if (st)
		memset(st, 0, sizeof(*st));
	err = sfp_gopclntab_find(e, &data, &size, &off, &swap);
	if (err == -EBADMSG)
		pr_warn("%s: Go function table unreadable", sfp_elf_name(e));
	if (err)
		return err;
	if (!sfp_elf_find_section(e, ".text", 0, &text))
		text_addr = text.addr;
	return sfp_gopclntab_parse(t, data, size, swap, text_addr,
				   sfp_elf_name(e), off, st);
}
