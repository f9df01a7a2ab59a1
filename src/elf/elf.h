/* SPDX-License-Identifier: MIT */
/*
 * ELF access for the other components, on top of libelf.
 *
 * A `struct sfp_elf` is an opened object (file or memory image).  Section
 * contents are returned as pointers into libelf's (read-only) view and stay
 * valid until sfp_elf_close(); compressed sections (SHF_COMPRESSED) are
 * decompressed on first access.  All sizes and offsets come from untrusted
 * headers: they are checked against the file's size before use, and every
 * consumer parses the bytes it gets with a bounds-checked cursor.
 */
#ifndef SFP_ELF_H
#define SFP_ELF_H

#include <gelf.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

struct sfp_elf;

struct sfp_elf_section {
	const char *name;	/* "" when the name table is bad */
	size_t index;
	uint32_t type;		/* SHT_* */
	uint64_t flags;		/* SHF_* */
	uint64_t addr;		/* sh_addr */
	uint64_t offset;	/* sh_offset */
	uint64_t size;		/* sh_size (compressed size if compressed) */
};

/*
 * Open an ELF file.  Return: 0; -ENOEXEC not ELF; -EBADMSG corrupt ELF
 * headers; -errno from open().  The name is kept for messages.
 */
SFP_HIDDEN int sfp_elf_open(const char *path, struct sfp_elf **out);

/*
 * sfp_elf_open() for files named by untrusted input (perf.data, debug
 * links, maps files): regular files only, so that a FIFO or device
 * cannot block or feed us endlessly.  Return: as sfp_elf_open();
 * -ENOEXEC not a regular file; -errno from stat().
 */
SFP_HIDDEN int sfp_open_regular_elf(const char *path, struct sfp_elf **out);

/* Open an image in memory; the bytes are copied. */
SFP_HIDDEN int sfp_elf_open_mem(const void *data, size_t size,
				const char *name, struct sfp_elf **out);

SFP_HIDDEN void sfp_elf_close(struct sfp_elf **e);

/*
 * Give back the pages of e's file that this process has read (its
 * symbol, string and relocation sections stay resident after a table is
 * made from them: 12 MB of libLLVM's 110 MB).  They are clean copies of
 * the page cache, so the next read faults them in again, unchanged;
 * every pointer into the image stays valid.  Only for an image mapped
 * from a file in this host's byte order (libelf may convert a foreign
 * file's headers in place; a memory image is our own copy).
 * Return: bytes of the mapping given back, 0 where nothing was done.
 */
SFP_HIDDEN size_t sfp_elf_release_pages(struct sfp_elf *e);

SFP_HIDDEN const char *sfp_elf_name(const struct sfp_elf *e);
/* fstat() of the opened file; -ENOENT for an image in memory. */
SFP_HIDDEN int sfp_elf_stat(const struct sfp_elf *e, struct stat *st);
SFP_HIDDEN Elf *sfp_elf_handle(const struct sfp_elf *e);
SFP_HIDDEN uint16_t sfp_elf_machine(const struct sfp_elf *e);	/* EM_* */
SFP_HIDDEN uint16_t sfp_elf_type(const struct sfp_elf *e);	/* ET_* */
SFP_HIDDEN bool sfp_elf_is_64(const struct sfp_elf *e);
SFP_HIDDEN bool sfp_elf_big_endian(const struct sfp_elf *e);
/* The whole file image and its size. */
SFP_HIDDEN const uint8_t *sfp_elf_image(const struct sfp_elf *e, size_t *size);

SFP_HIDDEN size_t sfp_elf_num_sections(const struct sfp_elf *e);
/* Return: 0, -ENOENT out of range, -EBADMSG corrupt header. */
SFP_HIDDEN int sfp_elf_section(const struct sfp_elf *e, size_t idx,
			       struct sfp_elf_section *out);

/*
 * First section with this name (NULL: any) and type (0: any).
 * Return: 0 or -ENOENT.
 */
SFP_HIDDEN int sfp_elf_find_section(const struct sfp_elf *e, const char *name,
				    uint32_t type, struct sfp_elf_section *out);

/*
 * Contents of a section (decompressed if needed).  NOBITS sections and
 * sections reaching past the end of the file fail.
 * Return: 0; -ENODATA NOBITS; -EBADMSG out of the file or bad compression.
 */
SFP_HIDDEN int sfp_elf_section_data(struct sfp_elf *e,
				    const struct sfp_elf_section *sec,
				    const uint8_t **data, size_t *size);

SFP_HIDDEN size_t sfp_elf_num_phdrs(const struct sfp_elf *e);
SFP_HIDDEN int sfp_elf_phdr(const struct sfp_elf *e, size_t idx,
			    GElf_Phdr *out);

/*
 * File bytes backing [vaddr, vaddr + len) through a PT_LOAD segment.
 * Return: 0, -ENOENT not inside one segment's file-backed part.
 */
SFP_HIDDEN int sfp_elf_vaddr_data(const struct sfp_elf *e, uint64_t vaddr,
				  size_t len, const uint8_t **data);

/*
 * The NT_GNU_BUILD_ID note (from PT_NOTE segments or SHT_NOTE sections).
 * Return: 0; -ENOENT none.  *id points into the image.
 */
SFP_HIDDEN int sfp_elf_build_id(const struct sfp_elf *e, const uint8_t **id,
				size_t *len);

/* .gnu_debuglink: file name and CRC.  Return: 0 or -ENOENT. */
SFP_HIDDEN int sfp_elf_debuglink(struct sfp_elf *e, const char **name,
				 uint32_t *crc);

/* Lowest p_vaddr - p_offset over PT_LOAD with offset 0 (the load base). */
SFP_HIDDEN int sfp_elf_load_base(const struct sfp_elf *e, uint64_t *base);

#endif /* SFP_ELF_H */
