// SPDX-License-Identifier: MIT
/*
 * The DWARF sections of an ELF file, decompressed, as a small ELF image in
 * memory for libdw.
 *
 * Debian's debug files (libc6-dbg and the rest) compress their DWARF.
 * dwarf_begin_elf() inflates every debug section it knows, through
 * libelf and zlib, before the first lookup: 57 ms for libc's 4 MB debug
 * file on this machine, two thirds of a whole `sfprof report` of a
 * 10k-sample dwarf-mode file with inline frames.  Here only the sections
 * the inline and line lookups read are inflated -- not the location
 * lists, macros, call frames or name indexes -- with libdeflate (2.5x
 * zlib's speed here) or zstd, and the largest ones on a second thread.
 * The image is an ELF header, the sections and their headers; libdw
 * reads it with elf_memory().
 *
 * Only 64-bit little-endian files of the host's order, not relocatable
 * objects, and not files that point at a supplementary DWARF file (dwz's
 * .gnu_debugaltlink, .debug_sup: libdw finds those by the file's path,
 * which an image in memory does not have).  For anything else, and when
 * no section libdw would read is compressed, the caller opens the file as
 * it is.
 */
#include <libdeflate.h>
#include <pthread.h>
#include <zstd.h>

#include "common/cursor.h"
#include "elf/elf.h"
#include "symbols/internal.h"

/* Beyond this the file is called hostile rather than big. */
#define IMAGE_MAX (1ull << 30)
#define MAX_SECTIONS 64
/* Less compressed data than this is not worth a thread. */
#define THREAD_MIN (256u << 10)

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

struct part {
	GElf_Shdr shdr;		/* the file's header of the section */
	const char *name;
	uint64_t file_off;	/* where the section starts, for messages */
	const uint8_t *src;	/* its bytes in the file (after Chdr) */
	size_t src_len;
	uint32_t ch_type;	/* 0: stored as is */
	uint64_t size, align;	/* uncompressed */
	uint64_t off;		/* in the image */
	int err;
};

struct work {
	struct part *parts;
	size_t n;
	uint8_t *image;
	bool second;		/* the worker thread's share */
	bool *share;		/* per part: true if the worker's */
};

/* The sections libdw reads for DIEs, ranges, names and lines. */
static bool wanted(const char *name)
{
	static const char *const skip[] = {
		".debug_loc", ".debug_loclists", ".debug_macro",
		".debug_macinfo", ".debug_frame", ".debug_pubnames",
		".debug_pubtypes", ".debug_gnu_pubnames",
		".debug_gnu_pubtypes", ".debug_names",
	};
	size_t i;

	if (strncmp(name, ".debug_", 7))
		return false;
	for (i = 0; i < ARRAY_SIZE(skip); i++)
		if (!strcmp(name, skip[i]))
			return false;
	return true;
}

static int inflate_part(struct part *p, uint8_t *out,
			struct libdeflate_decompressor **dec)
{
	size_t got = 0;

	if (!p->ch_type) {
		memcpy(out, p->src, p->size);
		return 0;
	}
	if (p->ch_type == ELFCOMPRESS_ZLIB) {
		if (!*dec && !(*dec = libdeflate_alloc_decompressor()))
			return -ENOMEM;
		if (libdeflate_zlib_decompress(*dec, p->src, p->src_len, out,
					       p->size, &got) !=
			    LIBDEFLATE_SUCCESS || got != p->size)
			return -EBADMSG;
		return 0;
	}
	got = ZSTD_decompress(out, p->size, p->src, p->src_len);
	return ZSTD_isError(got) || got != p->size ? -EBADMSG : 0;
}

static void *inflate_share(void *arg)
{
	struct work *w = arg;
	struct libdeflate_decompressor *dec = NULL;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->share[i] == w->second)
			w->parts[i].err = inflate_part(&w->parts[i],
						       w->image + w->parts[i].off,
						       &dec);
	if (dec)
		libdeflate_free_decompressor(dec);
	return NULL;
}

/*
 * A compressed section starts with Elf64_Chdr: type, reserved, size,
 * alignment.  Return 0, or -ENOENT for a kind libdw should judge itself.
 */
static int read_chdr(struct sfp_elf *e, struct part *p)
{
	struct sfp_cursor c;
	uint32_t type, reserved;
	uint64_t size, align;

	sfp_cursor_init(&c, p->src, p->src_len, false);
	if (sfp_cursor_u32(&c, &type) || sfp_cursor_u32(&c, &reserved) ||
	    sfp_cursor_u64(&c, &size) || sfp_cursor_u64(&c, &align)) {
		pr_warn("%s: %s at offset %#llx: compressed section shorter than its header",
			sfp_elf_name(e), p->name,
			(unsigned long long)p->file_off);
		return -EBADMSG;
	}
	if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD)
		return -ENOENT;
	if (size > IMAGE_MAX) {
		pr_warn("%s: %s at offset %#llx: claims %llu bytes uncompressed",
			sfp_elf_name(e), p->name,
			(unsigned long long)p->file_off,
			(unsigned long long)size);
		return -EBADMSG;
	}
	p->ch_type = type;
	p->size = size;
	p->align = align;
	p->src += 24;
	p->src_len -= 24;
	return 0;
}

/* The sections to carry; -ENOENT when the file is one to open as it is. */
static int collect(struct sfp_elf *e, struct part *parts, size_t *n)
{
	const uint8_t *file;
	size_t file_size, i, count = 0;
	bool compressed = false;

	if (!sfp_elf_is_64(e) || sfp_elf_big_endian(e) ||
	    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ ||
	    sfp_elf_type(e) == ET_REL)
		return -ENOENT;
	file = sfp_elf_image(e, &file_size);
	for (i = 1; i < sfp_elf_num_sections(e); i++) {
		struct sfp_elf_section sec;
		struct part *p;
		int err;

		if (sfp_elf_section(e, i, &sec))
			return -ENOENT;
		if (!strcmp(sec.name, ".gnu_debugaltlink") ||
		    !strcmp(sec.name, ".debug_sup") ||
		    !strncmp(sec.name, ".zdebug_", 8))
			return -ENOENT;
		if (!wanted(sec.name) || sec.type == SHT_NOBITS)
			continue;
		if (count == MAX_SECTIONS || sec.offset > file_size ||
		    sec.size > file_size - sec.offset)
			return -ENOENT;	/* libdw's checks, libdw's words */
		p = &parts[count];
		memset(p, 0, sizeof(*p));
		if (!gelf_getshdr(elf_getscn(sfp_elf_handle(e), i), &p->shdr))
			return -ENOENT;
		p->name = sec.name;
		p->file_off = sec.offset;
		p->src = file + sec.offset;
		p->src_len = sec.size;
		p->size = sec.size;
		p->align = p->shdr.sh_addralign;
		if (sec.flags & SHF_COMPRESSED) {
			if ((err = read_chdr(e, p)))
				return err;
			compressed = true;
		}
		count++;
	}
	*n = count;
	return compressed ? 0 : -ENOENT;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * Lay the image out: header, sections, .shstrtab, section headers.
 * Return its size, or 0 if it would pass IMAGE_MAX.
 */
static uint64_t layout(struct part *parts, size_t n, uint64_t *strtab_off,
		       uint64_t *strtab_len, uint64_t *shoff)
{
	uint64_t off = sizeof(Elf64_Ehdr), names = 1 + sizeof(".shstrtab");
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t a = parts[i].align;

		/* libdw reads DWARF byte by byte; 8 keeps any u64 natural */
		a = a && !(a & (a - 1)) && a <= 4096 ? a : 8;
		off = align_up(off, a < 8 ? 8 : a);
		parts[i].off = off;
		off += parts[i].size;
		names += strlen(parts[i].name) + 1;
		if (off > IMAGE_MAX)
			return 0;
	}
	*strtab_off = off;
	*strtab_len = names;
	*shoff = align_up(off + names, 8);
	return *shoff + (n + 2) * sizeof(Elf64_Shdr);
}

static void write_headers(struct sfp_elf *e, struct part *parts, size_t n,
			  uint8_t *img, uint64_t strtab_off,
			  uint64_t strtab_len, uint64_t shoff)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);
	char *names = (char *)img + strtab_off;
	size_t i, pos = 1;

	memcpy(eh, sfp_elf_image(e, &(size_t){ 0 }), sizeof(*eh));
	eh->e_phoff = 0;
	eh->e_phnum = 0;
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)(n + 2);
	eh->e_shstrndx = (Elf64_Half)(n + 1);
	memset(sh, 0, (n + 2) * sizeof(*sh));
	names[0] = 0;
	for (i = 0; i < n; i++) {
		const struct part *p = &parts[i];
		Elf64_Shdr *s = &sh[i + 1];

		s->sh_name = (Elf64_Word)pos;
		memcpy(names + pos, p->name, strlen(p->name) + 1);
		pos += strlen(p->name) + 1;
		s->sh_type = p->shdr.sh_type;
		s->sh_flags = p->shdr.sh_flags & ~(uint64_t)SHF_COMPRESSED;
		s->sh_addr = p->shdr.sh_addr;
		s->sh_offset = p->off;
		s->sh_size = p->size;
		s->sh_addralign = p->align ? p->align : 1;
		s->sh_entsize = p->shdr.sh_entsize;
	}
	sh[n + 1].sh_name = (Elf64_Word)pos;
	memcpy(names + pos, ".shstrtab", sizeof(".shstrtab"));
	sh[n + 1].sh_type = SHT_STRTAB;
	sh[n + 1].sh_offset = strtab_off;
	sh[n + 1].sh_size = strtab_len;
	sh[n + 1].sh_addralign = 1;
}

/* Split the parts between this thread and a worker, biggest first. */
static void share_out(const struct part *parts, size_t n, bool *share)
{
	uint64_t mine = 0, theirs = 0;
	bool done[MAX_SECTIONS] = { false };
	size_t k, i;

	for (k = 0; k < n; k++) {
		size_t big = n;

		for (i = 0; i < n; i++)
			if (!done[i] && (big == n ||
					 parts[i].src_len > parts[big].src_len))
				big = i;
		done[big] = true;
		share[big] = theirs < mine;
		if (share[big])
			theirs += parts[big].src_len;
		else
			mine += parts[big].src_len;
	}
}

int sfp_dwarf_image(struct sfp_elf *e, void **image, size_t *size)
{
	struct part parts[MAX_SECTIONS];
	bool share[MAX_SECTIONS] = { false };
	struct work w = { .parts = parts, .share = share }, tw;
	uint64_t strtab_off, strtab_len, shoff, total, packed = 0;
	pthread_t worker;
	bool threaded = false;
	size_t i;
	int err;

	*image = NULL;
	*size = 0;
	if ((err = collect(e, parts, &w.n)))
		return err;
	total = layout(parts, w.n, &strtab_off, &strtab_len, &shoff);
	if (!total)
		return -ENOENT;
	w.image = calloc(1, total);
	if (!w.image)
		return -ENOMEM;
	write_headers(e, parts, w.n, w.image, strtab_off, strtab_len, shoff);
	for (i = 0; i < w.n; i++)
		packed += parts[i].ch_type ? parts[i].src_len : 0;
	if (packed >= THREAD_MIN) {
		share_out(parts, w.n, share);
		tw = w;
		tw.second = true;
		threaded = !pthread_create(&worker, NULL, inflate_share, &tw);
		if (!threaded)
			memset(share, 0, sizeof(share));
	}
	inflate_share(&w);
	if (threaded)
		pthread_join(worker, NULL);
	for (i = 0; i < w.n; i++) {
		if (parts[i].err == -ENOMEM) {
			free(w.image);
			return -ENOMEM;
		}
		if (parts[i].err) {
			pr_warn("%s: %s at offset %#llx: bad %s data",
				sfp_elf_name(e), parts[i].name,
				(unsigned long long)parts[i].file_off,
				parts[i].ch_type == ELFCOMPRESS_ZLIB ? "zlib" :
								       "zstd");
			free(w.image);
			return -EBADMSG;
		}
	}
	*image = w.image;
	*size = total;
	return 0;
}
