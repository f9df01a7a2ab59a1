// SPDX-License-Identifier: MIT
/*
 * The Go function table's layout (gopclntab.h).
 *
 * The header, after the magic: two zero bytes, the pc quantum, the
 * pointer size; then words of pointer size: the function count, the file
 * count, (1.18+) the text start, and the offsets (from the table's
 * start) of the function name table, the compilation-unit table, the
 * file table, the pc-value tables and the function table.  The function
 * table holds nfunc + 1 entries (the last one the end of the text), each
 * an entry pc and the offset of the function's _func record, whose fields
 * are, for every layout read here: the entry (pointer, or from 1.18 a
 * 32-bit offset), the name's offset in the name table, the arguments'
 * size, the deferreturn pc, then the offsets of its pc-value tables (SP
 * delta, file, line), two counts, and after them (1.20+: after the start
 * line) the funcID and flag bytes.  A function runs from its entry to the
 * next one's, as the runtime and addr2line take it.
 *
 * A pc-value table is a run of (value delta, pc delta) pairs of unsigned
 * varints from the function's entry and the value -1: the value delta is
 * zigzag-coded, the pc delta counts quanta, and the new value holds up to
 * the new pc.  A value delta of 0 past the first pair ends the table.
 */
#include "elf/elf.h"
#include "elf/gopclntab.h"

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

int sfp_gotab_open(struct sfp_gotab *t, const uint8_t *data, size_t size,
		   bool swap, uint64_t text_fallback, const char **why)
{
	struct sfp_cursor c;
	uint32_t magic;
	uint8_t pad1, pad2, quantum, ptrsize;
	uint64_t nfiles, cuoff, fileoff;

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	t->swap = swap;
	sfp_cursor_init(&c, data, size, swap);
	*why = "header truncated";
	if (sfp_cursor_u32(&c, &magic) || sfp_cursor_u8(&c, &pad1) ||
	    sfp_cursor_u8(&c, &pad2) || sfp_cursor_u8(&c, &quantum) ||
	    sfp_cursor_u8(&c, &ptrsize))
		return -EBADMSG;
	t->version = magic_version(magic);
	*why = "not a Go function table (bad magic)";
	if (!t->version)
		return -EBADMSG;
	*why = "bad header (padding, pc quantum or pointer size)";
	if (pad1 || pad2 || (quantum != 1 && quantum != 2 && quantum != 4) ||
	    (ptrsize != 4 && ptrsize != 8))
		return -EBADMSG;
	if (t->version == 102) {
		*why = "Go 1.2-1.15 table layout, not read";
		return -ENOTSUP;
	}
	t->ptrsize = ptrsize;
	t->quantum = quantum;
	*why = "header truncated";
	if (read_word(&c, ptrsize, &t->nfunc) ||
	    read_word(&c, ptrsize, &nfiles) ||
	    (t->version >= 118 && read_word(&c, ptrsize, &t->text_start)) ||
	    read_word(&c, ptrsize, &t->nameoff) ||
	    read_word(&c, ptrsize, &cuoff) ||
	    read_word(&c, ptrsize, &fileoff) ||
	    read_word(&c, ptrsize, &t->pcoff) ||
	    read_word(&c, ptrsize, &t->funcoff))
		return -EBADMSG;
	*why = "table offset outside the table";
	if (t->nameoff >= size || cuoff > size || fileoff > size ||
	    t->pcoff > size || t->funcoff >= size)
		return -EBADMSG;
	*why = "function count does not fit the table";
	if (t->nfunc > (1u << 26) ||
	    (t->nfunc + 1) * (t->version >= 118 ? 8 : 2 * ptrsize) >
		    size - t->funcoff)
		return -EBADMSG;
	/*
	 * The text start is in the header from 1.18 on (a linker that
	 * leaves it to a relocation may write 0: then the caller's, the
	 * start of .text, right for binaries that hold Go code only).
	 */
	if (t->version >= 118 && !t->text_start) {
		t->text_start = text_fallback;
		t->text_guessed = true;
	}
	return 0;
}

/* Function table entry i: its entry offset (or pc) and _func offset. */
static int read_entry(struct sfp_cursor *c, const struct sfp_gotab *t,
		      uint64_t i, uint64_t *entry, uint64_t *func)
{
	if (t->version >= 118) {
		uint32_t e, f;

		if (sfp_cursor_seek(c, t->funcoff + i * 8) ||
		    sfp_cursor_u32(c, &e) || sfp_cursor_u32(c, &f))
			return -EBADMSG;
		*entry = e;
		*func = f;
		return 0;
	}
	if (sfp_cursor_seek(c, t->funcoff + i * 2 * t->ptrsize) ||
	    read_word(c, t->ptrsize, entry) || read_word(c, t->ptrsize, func))
		return -EBADMSG;
	return 0;
}

int sfp_gotab_func(const struct sfp_gotab *t, uint64_t i,
		   struct sfp_gofunc *f)
{
	struct sfp_cursor c;
	uint64_t entry, next, func, fentry, noff;
	uint32_t e32, word[5];
	int32_t nameoff;
	uint8_t id_flag[2];
	const void *nul;
	size_t k;

	memset(f, 0, sizeof(*f));
	sfp_cursor_init(&c, t->data, t->size, t->swap);
	if (i >= t->nfunc || read_entry(&c, t, i, &entry, &func) ||
	    read_entry(&c, t, i + 1, &next, &fentry))
		return -EBADMSG;
	f->rec = t->funcoff + func;
	/* _func: entry, name, args, deferreturn, pcsp, pcfile, pcln,
	 * npcdata, cuOffset, (1.20+) startLine, funcID, flag */
	if (sfp_cursor_seek(&c, f->rec))
		return -EBADMSG;
	if (t->version >= 118) {
		if (sfp_cursor_u32(&c, &e32))
			return -EBADMSG;
		fentry = e32;
	} else if (read_word(&c, t->ptrsize, &fentry)) {
		return -EBADMSG;
	}
	if (sfp_cursor_i32(&c, &nameoff))
		return -EBADMSG;
	for (k = 0; k < 5; k++)	/* args .. pcln */
		if (sfp_cursor_u32(&c, &word[k]))
			return -EBADMSG;
	if (sfp_cursor_skip(&c, t->version >= 120 ? 12 : 8) ||
	    sfp_cursor_bytes(&c, id_flag, 2))
		return -EBADMSG;
	if (fentry != entry || next < entry || nameoff < 0)
		return -EBADMSG;
	noff = t->nameoff + (uint64_t)nameoff;
	if (noff >= t->size)
		return -EBADMSG;
	f->name = (const char *)t->data + noff;
	nul = memchr(f->name, 0, t->size - noff);
	if (!nul || nul == f->name)
		return -EBADMSG;
	f->entry = t->text_start + entry;
	f->end = t->text_start + next;
	f->pcsp = word[2];
	f->funcid = id_flag[0];
	f->flag = id_flag[1];
	return 0;
}

int sfp_gopcv_init(struct sfp_gopcv *it, const struct sfp_gotab *t,
		   const struct sfp_gofunc *f, uint32_t off)
{
	if (!off || t->pcoff + off >= t->size)
		return -EBADMSG;
	sfp_cursor_init(&it->c, t->data + t->pcoff + off,
			t->size - t->pcoff - off, t->swap);
	it->quantum = t->quantum;
	it->pc = f->entry;
	it->limit = f->end;
	it->val = -1;
	it->first = true;
	return 0;
}

int sfp_gopcv_next(struct sfp_gopcv *it, uint64_t *start, uint64_t *end,
		   int64_t *val)
{
	uint64_t uv, pcd;

	if (sfp_cursor_uleb(&it->c, &uv) || uv > UINT32_MAX)
		return -EBADMSG;
	if (!uv && !it->first)
		return 0;
	if (sfp_cursor_uleb(&it->c, &pcd) || pcd > UINT32_MAX)
		return -EBADMSG;
	it->first = false;
	/* zigzag: the low bit is the sign */
	it->val += (uv & 1) ? -(int64_t)(uv >> 1) - 1 : (int64_t)(uv >> 1);
	*start = it->pc;
	it->pc += pcd * it->quantum;
	if (it->pc > it->limit || it->val < INT32_MIN || it->val > INT32_MAX)
		return -EBADMSG;
	*end = it->pc;
	*val = it->val;
	return 1;
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
		struct sfp_gotab t;
		const char *why;
		uint32_t m;
		int err;

		memcpy(&m, d + off, 4);
		if (swap)
			m = __builtin_bswap32(m);
		if (!magic_version(m))
			continue;
		err = sfp_gotab_open(&t, d + off, n - off, swap, 0, &why);
		if (err && err != -ENOTSUP)
			continue;
		*data = d + off;
		*size = n - off;
		*file_off = sec.offset + off;
		return 0;
	}
	return -ENOENT;
}

int sfp_gotab_find(struct sfp_elf *e, const uint8_t **data, size_t *size,
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

int sfp_gotab_load(struct sfp_elf *e, struct sfp_gotab *t, uint64_t *file_off)
{
	struct sfp_elf_section text;
	const uint8_t *data;
	uint64_t text_addr = 0;
	const char *why;
	size_t size;
	bool swap;
	int err;

	*file_off = 0;
	err = sfp_gotab_find(e, &data, &size, file_off, &swap);
	if (err == -EBADMSG)
		pr_warn("%s: Go function table unreadable", sfp_elf_name(e));
	if (err)
		return err;
	if (!sfp_elf_find_section(e, ".text", 0, &text))
		text_addr = text.addr;
	err = sfp_gotab_open(t, data, size, swap, text_addr, &why);
	if (err)
		pr_warn("%s: Go function table at file offset %#llx: %s",
			sfp_elf_name(e), (unsigned long long)*file_off, why);
	return err;
}
