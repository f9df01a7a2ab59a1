// SPDX-License-Identifier: MIT
/*
 * CIE/FDE parsing for .eh_frame and .debug_frame, and the pointer
 * encodings they use.  The two formats differ in small ways that matter:
 *  - CIE id: 0 in .eh_frame, all ones in .debug_frame;
 *  - FDE's CIE pointer: relative to the field itself in .eh_frame, a
 *    section offset in .debug_frame;
 *  - addresses: encoded per the CIE's 'R' augmentation in .eh_frame,
 *    plain address-sized words in .debug_frame;
 *  - a zero length word ends .eh_frame (a terminator), but is only an
 *    empty entry in .debug_frame.
 */
#include "cfi/cfi.h"
#include "cfi/dwarf.h"
#include "common/cursor.h"

#include <inttypes.h>

static uint64_t sext(uint64_t v, unsigned int bits)
{
	uint64_t m = (uint64_t)1 << (bits - 1);

	return (v ^ m) - m;
}

int cfi_read_encoded(const struct cfi_section *sec, struct sfp_cursor *c,
		     uint8_t enc, uint8_t addr_size, uint64_t func_base,
		     uint64_t *val)
{
	uint64_t field_addr = sec->vaddr + sfp_cursor_off(c);
	uint64_t v = 0, base = 0;
	int err = 0;

	if (enc == DW_EH_PE_omit)
		return -EBADMSG;
	if ((enc & 0x70) == DW_EH_PE_aligned) {
		/* The value sits at the next address-size boundary. */
		uint64_t a = addr_size, mis = field_addr % a;

		if (mis && sfp_cursor_skip(c, a - mis))
			return -EBADMSG;
		field_addr = sec->vaddr + sfp_cursor_off(c);
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		if (addr_size == 8) {
			err = sfp_cursor_u64(c, &v);
		} else {
			uint32_t w = 0;

			err = sfp_cursor_u32(c, &w);
			v = w;
		}
		break;
	case DW_EH_PE_uleb128:
		err = sfp_cursor_uleb(c, &v);
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2: {
		uint16_t w = 0;

		err = sfp_cursor_u16(c, &w);
		v = (enc & 0x0f) == DW_EH_PE_sdata2 ? sext(w, 16) : w;
		break;
	}
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4: {
		uint32_t w = 0;

		err = sfp_cursor_u32(c, &w);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? sext(w, 32) : w;
		break;
	}
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		err = sfp_cursor_u64(c, &v);
		break;
	case DW_EH_PE_sleb128: {
		int64_t s = 0;

		err = sfp_cursor_sleb(c, &s);
		v = (uint64_t)s;
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	if (err)
		return -EBADMSG;

	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_aligned:
		base = 0;
		break;
	case DW_EH_PE_pcrel:
		base = field_addr;
		break;
	case DW_EH_PE_textrel:
		base = sec->text_base;
		break;
	case DW_EH_PE_datarel:
		base = sec->data_base;
		break;
	case DW_EH_PE_funcrel:
		base = func_base;
		break;
	default:
		return -EOPNOTSUPP;
	}
	v += base;
	if (addr_size == 4)
		v &= 0xffffffffu;

	if (enc & DW_EH_PE_indirect) {
		uint64_t p;

		if (!sec->read_ptr || sec->read_ptr(sec->ctx, v, addr_size, &p))
			return -EBADMSG;
		v = p;
	}
	*val = v;
	return 0;
}

/*
 * Read an entry's length and its id/CIE-pointer word.  On return c spans
 * the entry's body after the id, *id_pos is the id's section offset and
 * *next the offset of the following entry.  *is_cie says which it is.
 * Return 1 for a zero terminator, 0 ok, -EBADMSG.
 */
static int read_entry_head(const struct cfi_section *sec, uint64_t off,
			   struct sfp_cursor *c, uint64_t *next,
			   uint64_t *id_pos, uint64_t *id, bool *is64)
{
	struct sfp_cursor h;
	uint32_t len32;
	uint64_t len;

	sfp_cursor_init(&h, sec->data, sec->size, sec->swap);
	if (sfp_cursor_seek(&h, off) || sfp_cursor_u32(&h, &len32))
		return -EBADMSG;
	*is64 = false;
	if (len32 == 0xffffffffu) {
		if (sfp_cursor_u64(&h, &len))
			return -EBADMSG;
		*is64 = true;
	} else if (len32 >= 0xfffffff0u) {
		return -EBADMSG;	/* reserved */
	} else {
		len = len32;
	}
	if (len == 0) {
		*next = sfp_cursor_off(&h);
		return 1;
	}
	if (len > sfp_cursor_left(&h))
		return -EBADMSG;
	*next = sfp_cursor_off(&h) + len;
	/* The body, alone, from the id onwards; base stays the section. */
	c->base = sec->data;
	c->pos = h.pos;
	c->end = h.pos + len;
	c->swap = sec->swap;
	*id_pos = sfp_cursor_off(c);
	/* .eh_frame keeps a 4-byte CIE pointer even with 64-bit lengths. */
	if (*is64 && sec->kind == CFI_DEBUG_FRAME) {
		if (sfp_cursor_u64(c, id))
			return -EBADMSG;
	} else {
		uint32_t w = 0;

		if (sfp_cursor_u32(c, &w))
			return -EBADMSG;
		*id = w;
		/* .debug_frame's 32-bit CIE id is 0xffffffff. */
		if (sec->kind == CFI_DEBUG_FRAME && w == 0xffffffffu)
			*id = ~(uint64_t)0;
	}
	return 0;
}

static bool head_is_cie(const struct cfi_section *sec, uint64_t id)
{
	return sec->kind == CFI_EH_FRAME ? id == 0 : id == ~(uint64_t)0;
}

int cfi_parse_cie(const struct cfi_section *sec, uint64_t off,
		  struct cfi_cie *cie)
{
	struct sfp_cursor c;
	uint64_t next, id_pos, id;
	const char *aug;
	size_t aug_len;
	bool is64;
	int err;

	err = read_entry_head(sec, off, &c, &next, &id_pos, &id, &is64);
	if (err)
		return err > 0 ? -EBADMSG : err;
	if (!head_is_cie(sec, id))
		return -EBADMSG;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->fde_enc = DW_EH_PE_absptr;
	cie->lsda_enc = DW_EH_PE_omit;
	cie->addr_size = sec->addr_size;
	if (sfp_cursor_u8(&c, &cie->version))
		return -EBADMSG;
	if (cie->version != 1 && cie->version != 3 && cie->version != 4)
		return -EOPNOTSUPP;

	aug = (const char *)c.pos;
	aug_len = strnlen(aug, sfp_cursor_left(&c));
	if (aug_len == sfp_cursor_left(&c))
		return -EBADMSG;	/* not terminated */
	sfp_cursor_skip(&c, aug_len + 1);

	/* "eh": an old GCC field, one address-sized word. */
	if (aug_len >= 2 && aug[0] == 'e' && aug[1] == 'h') {
		if (sfp_cursor_skip(&c, sec->addr_size))
			return -EBADMSG;
	}
	if (cie->version == 4) {
		if (sfp_cursor_u8(&c, &cie->addr_size) ||
		    sfp_cursor_u8(&c, &cie->seg_size))
			return -EBADMSG;
		if ((cie->addr_size != 4 && cie->addr_size != 8) ||
		    cie->seg_size != 0)
			return -EOPNOTSUPP;
	}
	{
		int64_t da = 0;

		if (sfp_cursor_uleb(&c, &cie->code_align) ||
		    sfp_cursor_sleb(&c, &da))
			return -EBADMSG;
		cie->data_align = da;
	}
	if (cie->version == 1) {
		uint8_t r = 0;

		if (sfp_cursor_u8(&c, &r))
			return -EBADMSG;
		cie->ra_col = r;
	} else if (sfp_cursor_uleb(&c, &cie->ra_col)) {
		return -EBADMSG;
	}
	/* Absurd factors would make advance/offset arithmetic overflow. */
	if (cie->code_align == 0 || cie->code_align > 0xffff ||
	    cie->data_align < -0xffff || cie->data_align > 0xffff)
		return -EBADMSG;

	if (aug_len && aug[0] == 'z') {
		uint64_t alen;
		struct sfp_cursor a;

		if (sfp_cursor_uleb(&c, &alen) || alen > sfp_cursor_left(&c))
			return -EBADMSG;
		a = c;
		a.end = c.pos + alen;
		sfp_cursor_skip(&c, alen);
		cie->has_z = true;
		for (size_t i = 1; i < aug_len; i++) {
			switch (aug[i]) {
			case 'R':
				if (sfp_cursor_u8(&a, &cie->fde_enc))
					return -EBADMSG;
				break;
			case 'L':
				if (sfp_cursor_u8(&a, &cie->lsda_enc))
					return -EBADMSG;
				break;
			case 'P': {
				uint8_t penc = 0;

				if (sfp_cursor_u8(&a, &penc))
					return -EBADMSG;
				/* A personality routine we only skip: an
				 * indirect one must not be dereferenced. */
				err = cfi_read_encoded(sec, &a,
						       penc & ~DW_EH_PE_indirect,
						       cie->addr_size, 0,
						       &cie->personality);
				if (err)
					return err;
				break;
			}
			case 'S':
				cie->signal = true;
				break;
			case 'B':
				cie->pauth_b_key = true;
				break;
			case 'G':
				cie->tagged = true;
				break;
			default:
				/* 'z' tells us the data length: the rest of
				 * the augmentation can be ignored safely. */
				i = aug_len;
				break;
			}
		}
	} else if (aug_len && strcmp(aug, "eh") != 0) {
		/* Without 'z' an unknown augmentation has unknown size. */
		return -EOPNOTSUPP;
	}
	cie->insns = c.pos;
	cie->insns_len = sfp_cursor_left(&c);
	cie->insns_off = sfp_cursor_off(&c);
	return 0;
}

/* The body of an FDE whose head was read; cie already resolved. */
static int parse_fde_body(const struct cfi_section *sec, struct sfp_cursor *c,
			  struct cfi_fde *fde)
{
	const struct cfi_cie *cie = &fde->cie;
	uint8_t enc = sec->kind == CFI_EH_FRAME ? cie->fde_enc
						 : DW_EH_PE_absptr;
	int err;

	err = cfi_read_encoded(sec, c, enc, cie->addr_size, 0, &fde->pc_begin);
	if (err)
		return err;
	/* The range has the value format of the encoding, never relative. */
	err = cfi_read_encoded(sec, c, enc & 0x0f, cie->addr_size, 0,
			       &fde->pc_range);
	if (err)
		return err;
	if (cie->has_z) {
		uint64_t alen;
		struct sfp_cursor a;

		if (sfp_cursor_uleb(c, &alen) || alen > sfp_cursor_left(c))
			return -EBADMSG;
		a = *c;
		a.end = c->pos + alen;
		sfp_cursor_skip(c, alen);
		if (cie->lsda_enc != DW_EH_PE_omit && alen) {
			/* Skip the value; never dereference it. */
			err = cfi_read_encoded(sec, &a,
					       cie->lsda_enc & ~DW_EH_PE_indirect,
					       cie->addr_size, fde->pc_begin,
					       &fde->lsda);
			if (err)
				return err;
		}
	}
	fde->insns = c->pos;
	fde->insns_len = sfp_cursor_left(c);
	fde->insns_off = sfp_cursor_off(c);
	return 0;
}

/* Section offset of the CIE an FDE head refers to. */
static int fde_cie_off(const struct cfi_section *sec, uint64_t id_pos,
		       uint64_t id, uint64_t *cie_off)
{
	if (sec->kind == CFI_EH_FRAME) {
		if (id > id_pos)
			return -EBADMSG;
		*cie_off = id_pos - id;
	} else {
		*cie_off = id;
	}
	if (*cie_off >= sec->size)
		return -EBADMSG;
	return 0;
}

int cfi_parse_fde(const struct cfi_section *sec, uint64_t off,
		  struct cfi_fde *fde)
{
	struct sfp_cursor c;
	uint64_t next, id_pos, id, cie_off;
	bool is64;
	int err;

	err = read_entry_head(sec, off, &c, &next, &id_pos, &id, &is64);
	if (err)
		return err > 0 ? -EBADMSG : err;
	if (head_is_cie(sec, id))
		return -EBADMSG;
	err = fde_cie_off(sec, id_pos, id, &cie_off);
	if (err)
		return err;
	memset(fde, 0, sizeof(*fde));
	fde->off = off;
	err = cfi_parse_cie(sec, cie_off, &fde->cie);
	if (err)
		return err;
	return parse_fde_body(sec, &c, fde);
}

void cfi_iter_init(struct cfi_iter *it, const struct cfi_section *sec)
{
	memset(it, 0, sizeof(*it));
	it->sec = sec;
}

const char *cfi_section_label(const struct cfi_section *sec)
{
	return sec->kind == CFI_DEBUG_FRAME ? ".debug_frame" : ".eh_frame";
}

int cfi_iter_next(struct cfi_iter *it, struct cfi_fde *fde)
{
	const struct cfi_section *sec = it->sec;

	while (!it->done) {
		struct sfp_cursor c;
		uint64_t off = it->pos, next, id_pos, id, cie_off;
		bool is64;
		int err;

		if (off >= sec->size) {
			it->done = true;
			break;
		}
		err = read_entry_head(sec, off, &c, &next, &id_pos, &id, &is64);
		if (err < 0) {
			pr_warn("%s: %s offset 0x%" PRIx64
				": bad CFI entry length (truncated, reserved, or past the section end 0x%"
				PRIx64 "); stopping", sec->name,
				cfi_section_label(sec), off, (uint64_t)sec->size);
			it->done = true;
			return err;
		}
		it->pos = next;
		if (err > 0) {
			/* Zero length: the terminator of .eh_frame. */
			if (sec->kind == CFI_EH_FRAME)
				it->done = true;
			continue;
		}
		if (head_is_cie(sec, id))
			continue;
		if (it->nfdes >= CFI_MAX_FDES) {
			pr_warn("%s: more than %u FDEs; stopping", sec->name,
				CFI_MAX_FDES);
			it->done = true;
			return -E2BIG;
		}
		it->nfdes++;
		memset(fde, 0, sizeof(*fde));
		fde->off = off;
		err = fde_cie_off(sec, id_pos, id, &cie_off);
		if (!err) {
			unsigned int slot = (unsigned int)(cie_off >> 2) %
					    ARRAY_SIZE(it->cache);

			if (it->cache[slot].valid &&
			    it->cache[slot].off == cie_off) {
				fde->cie = it->cache[slot].cie;
			} else {
				err = cfi_parse_cie(sec, cie_off, &fde->cie);
				if (!err) {
					it->cache[slot].off = cie_off;
					it->cache[slot].valid = true;
					it->cache[slot].cie = fde->cie;
				}
			}
		}
		if (!err)
			err = parse_fde_body(sec, &c, fde);
		if (err) {
			pr_warn("%s: %s offset 0x%" PRIx64 ": FDE: %s",
				sec->name, cfi_section_label(sec), off,
				err == -EOPNOTSUPP ? "unsupported CIE/encoding"
						   : "malformed");
			return err;
		}
		return 1;
	}
	return 0;
}

/* --- .eh_frame_hdr --- */

static size_t enc_size(uint8_t enc, uint8_t addr_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;	/* variable size: no binary search table */
	}
}

int cfi_hdr_parse(const struct cfi_section *sec, struct cfi_hdr *hdr)
{
	struct sfp_cursor c;
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	int err;

	memset(hdr, 0, sizeof(*hdr));
	sfp_cursor_init(&c, sec->data, sec->size, sec->swap);
	if (sfp_cursor_u8(&c, &ver) || sfp_cursor_u8(&c, &ptr_enc) ||
	    sfp_cursor_u8(&c, &cnt_enc) || sfp_cursor_u8(&c, &tab_enc))
		return -EBADMSG;
	if (ver != 1)
		return -EOPNOTSUPP;
	err = cfi_read_encoded(sec, &c, ptr_enc, sec->addr_size, 0,
			       &hdr->eh_frame_ptr);
	if (err)
		return err;
	if (cnt_enc == DW_EH_PE_omit || tab_enc == DW_EH_PE_omit)
		return 0;
	err = cfi_read_encoded(sec, &c, cnt_enc, sec->addr_size, 0,
			       &hdr->fde_count);
	if (err)
		return err;
	hdr->table_enc = tab_enc;
	hdr->entry_size = 2 * enc_size(tab_enc, sec->addr_size);
	if (!hdr->entry_size || (tab_enc & DW_EH_PE_indirect))
		return -EOPNOTSUPP;
	if (hdr->fde_count > sfp_cursor_left(&c) / hdr->entry_size)
		return -EBADMSG;
	hdr->table = c.pos;
	return 0;
}

int cfi_hdr_entry(const struct cfi_section *sec, const struct cfi_hdr *hdr,
		  uint64_t idx, uint64_t *pc, uint64_t *fde_addr)
{
	struct sfp_cursor c;
	int err;

	if (idx >= hdr->fde_count)
		return -ENOENT;
	sfp_cursor_init(&c, sec->data, sec->size, sec->swap);
	if (sfp_cursor_seek(&c, (uint64_t)(hdr->table - sec->data) +
					idx * hdr->entry_size))
		return -EBADMSG;
	err = cfi_read_encoded(sec, &c, hdr->table_enc, sec->addr_size, 0, pc);
	if (!err)
		err = cfi_read_encoded(sec, &c, hdr->table_enc, sec->addr_size,
				       0, fde_addr);
	return err;
}
