// SPDX-License-Identifier: MIT
/* ELF access on top of libelf; see elf.h for the contracts. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cursor.h"
#include "elf/elf.h"

struct sfp_elf {
	Elf *elf;
	int fd;			/* -1 for memory images */
	void *mem;		/* our copy of a memory image */
	void *map;		/* or our private mapping of the file */
	size_t map_len;
	char *name;
	const uint8_t *image;
	size_t image_size;
	GElf_Ehdr ehdr;
	size_t shnum;
	size_t shstrndx;
	size_t phnum;
};

static int elf_lib_init(void)
{
	static int done;

	if (!done) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return -ENOSYS;
		done = 1;
	}
	return 0;
}

static int elf_setup(struct sfp_elf *e)
{
	if (elf_kind(e->elf) != ELF_K_ELF)
		return -ENOEXEC;
	e->image = (const uint8_t *)elf_rawfile(e->elf, &e->image_size);
	if (!gelf_getehdr(e->elf, &e->ehdr) || !e->image) {
		pr_warn("%s: bad ELF header: %s", e->name, elf_errmsg(-1));
		return -EBADMSG;
	}
	if (elf_getshdrnum(e->elf, &e->shnum) ||
	    elf_getphdrnum(e->elf, &e->phnum)) {
		pr_warn("%s: bad section/segment count: %s", e->name,
			elf_errmsg(-1));
		return -EBADMSG;
	}
	/* A truncated file (a copy cut short, a download that stopped)
	 * loses its section headers first: libelf then counts no sections
	 * (it checks e_shoff against the size and gives 0), and every lookup
	 * would say "not found" instead of what is wrong.  The header's own
	 * count (at least the first entry, when it is 0 and e_shoff is set:
	 * extended numbering) must fit. */
	if (e->ehdr.e_shoff &&
	    (e->ehdr.e_shoff > e->image_size ||
	     (uint64_t)(e->ehdr.e_shnum ? e->ehdr.e_shnum : 1) *
			     e->ehdr.e_shentsize >
		     e->image_size - e->ehdr.e_shoff)) {
		pr_warn("%s: offset 0x%llx: section header table (%u entries) "
			"beyond the end of the file (%zu bytes): truncated",
			e->name, (unsigned long long)e->ehdr.e_shoff,
			(unsigned int)e->ehdr.e_shnum, e->image_size);
		return -EBADMSG;
	}
	if (e->phnum && (e->ehdr.e_phoff > e->image_size ||
			 (uint64_t)e->phnum * e->ehdr.e_phentsize >
				 e->image_size - e->ehdr.e_phoff)) {
		pr_warn("%s: offset 0x%llx: program header table (%zu entries) "
			"beyond the end of the file (%zu bytes): truncated",
			e->name, (unsigned long long)e->ehdr.e_phoff, e->phnum,
			e->image_size);
		return -EBADMSG;
	}
	if (elf_getshdrstrndx(e->elf, &e->shstrndx))
		e->shstrndx = SHN_UNDEF;	/* names will read as "" */
	return 0;
}

int sfp_elf_open(const char *path, struct sfp_elf **out)
{
	struct sfp_elf *e;
	struct stat st;
	int err;

	*out = NULL;
	err = elf_lib_init();
	if (err)
		return err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->name = strdup(path);
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (!e->name) {
		err = -ENOMEM;
		goto fail;
	}
	/*
	 * A private mapping: decompressing a section must not write the
	 * file.  Ours rather than libelf's, so that release_pages() knows
	 * the image is the file's pages and not a copy libelf read into
	 * the heap; where a file cannot be mapped libelf reads it.
	 */
	if (!fstat(e->fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		e->map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE, e->fd, 0);
		if (e->map == MAP_FAILED)
			e->map = NULL;
		else
			e->map_len = (size_t)st.st_size;
	}
	e->elf = e->map ? elf_memory(e->map, e->map_len)
			: elf_begin(e->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!e->elf) {
		err = -ENOEXEC;
		goto fail;
	}
	err = elf_setup(e);
	if (err)
		goto fail;
	*out = e;
	return 0;
fail:
	sfp_elf_close(&e);
	return err;
}

int sfp_open_regular_elf(const char *path, struct sfp_elf **out)
{
	struct stat st;

	*out = NULL;
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	return sfp_elf_open(path, out);
}

int sfp_elf_open_mem(const void *data, size_t size, const char *name,
		     struct sfp_elf **out)
{
	struct sfp_elf *e;
	int err;

	*out = NULL;
	err = elf_lib_init();
	if (err)
		return err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = -1;
	e->name = strdup(name ? name : "(memory)");
	e->mem = malloc(size ? size : 1);
	if (!e->name || !e->mem) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(e->mem, data, size);
	e->elf = elf_memory(e->mem, size);
	if (!e->elf) {
		err = -ENOEXEC;
		goto fail;
	}
	err = elf_setup(e);
	if (err)
		goto fail;
	*out = e;
	return 0;
fail:
	sfp_elf_close(&e);
	return err;
}

void sfp_elf_close(struct sfp_elf **ep)
{
	struct sfp_elf *e = ep ? *ep : NULL;

	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->map)
		munmap(e->map, e->map_len);
	if (e->fd >= 0)
		close(e->fd);
	free(e->mem);
	free(e->name);
	free(e);
	*ep = NULL;
}

size_t sfp_elf_release_pages(struct sfp_elf *e)
{
	bool native = e && e->ehdr.e_ident[EI_DATA] ==
				   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
					    ? ELFDATA2LSB
					    : ELFDATA2MSB);

	if (!native || !e->map ||
	    madvise(e->map, e->map_len, MADV_DONTNEED))
		return 0;
	return e->map_len;
}

const char *sfp_elf_name(const struct sfp_elf *e) { return e->name; }

int sfp_elf_stat(const struct sfp_elf *e, struct stat *st)
{
	if (e->fd < 0)
		return -ENOENT;
	return fstat(e->fd, st) ? -errno : 0;
}

Elf *sfp_elf_handle(const struct sfp_elf *e) { return e->elf; }
uint16_t sfp_elf_machine(const struct sfp_elf *e) { return e->ehdr.e_machine; }
uint16_t sfp_elf_type(const struct sfp_elf *e) { return e->ehdr.e_type; }
bool sfp_elf_is_64(const struct sfp_elf *e)
{
	return e->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
}
bool sfp_elf_big_endian(const struct sfp_elf *e)
{
	return e->ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
}

const uint8_t *sfp_elf_image(const struct sfp_elf *e, size_t *size)
{
	*size = e->image_size;
	return e->image;
}

size_t sfp_elf_num_sections(const struct sfp_elf *e) { return e->shnum; }

int sfp_elf_section(const struct sfp_elf *e, size_t idx,
		    struct sfp_elf_section *out)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	const char *name = NULL;

	if (idx >= e->shnum)
		return -ENOENT;
	scn = elf_getscn(e->elf, idx);
	if (!scn || !gelf_getshdr(scn, &sh))
		return -EBADMSG;
	if (e->shstrndx != SHN_UNDEF)
		name = elf_strptr(e->elf, e->shstrndx, sh.sh_name);
	out->name = name ? name : "";
	out->index = idx;
	out->type = sh.sh_type;
	out->flags = sh.sh_flags;
	out->addr = sh.sh_addr;
	out->offset = sh.sh_offset;
	out->size = sh.sh_size;
	return 0;
}

int sfp_elf_find_section(const struct sfp_elf *e, const char *name,
			 uint32_t type, struct sfp_elf_section *out)
{
	size_t i;

	for (i = 1; i < e->shnum; i++) {
		if (sfp_elf_section(e, i, out))
			continue;
		if (name && strcmp(out->name, name))
			continue;
		if (type && out->type != type)
			continue;
		return 0;
	}
	return -ENOENT;
}

int sfp_elf_section_data(struct sfp_elf *e, const struct sfp_elf_section *sec,
			 const uint8_t **data, size_t *size)
{
	Elf_Scn *scn;
	Elf_Data *d;

	if (sec->type == SHT_NOBITS)
		return -ENODATA;
	if (sec->offset > e->image_size ||
	    sec->size > e->image_size - sec->offset) {
		pr_warn("%s: section %s [%#llx, +%#llx) lies outside the file",
			e->name, sec->name, (unsigned long long)sec->offset,
			(unsigned long long)sec->size);
		return -EBADMSG;
	}
	scn = elf_getscn(e->elf, sec->index);
	if (!scn)
		return -EBADMSG;
	if ((sec->flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) {
		pr_warn("%s: cannot decompress %s: %s", e->name, sec->name,
			elf_errmsg(-1));
		return -EBADMSG;
	}
	d = elf_getdata(scn, NULL);
	if (!d) {
		pr_warn("%s: cannot read %s: %s", e->name, sec->name,
			elf_errmsg(-1));
		return -EBADMSG;
	}
	*data = d->d_buf;
	*size = d->d_size;
	if (!*data && *size)
		return -EBADMSG;
	return 0;
}

size_t sfp_elf_num_phdrs(const struct sfp_elf *e) { return e->phnum; }

int sfp_elf_phdr(const struct sfp_elf *e, size_t idx, GElf_Phdr *out)
{
	if (idx >= e->phnum)
		return -ENOENT;
	return gelf_getphdr(e->elf, idx, out) ? 0 : -EBADMSG;
}

int sfp_elf_vaddr_data(const struct sfp_elf *e, uint64_t vaddr, size_t len,
		       const uint8_t **data)
{
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		uint64_t off;

		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		off = vaddr - ph.p_vaddr;
		if (len > ph.p_filesz - off)
			return -ENOENT;
		off += ph.p_offset;
		if (off > e->image_size || len > e->image_size - off)
			return -ENOENT;
		*data = e->image + off;
		return 0;
	}
	return -ENOENT;
}

/* Walk the notes in [p, p + size) looking for NT_GNU_BUILD_ID. */
static int find_build_id_note(const struct sfp_elf *e, const uint8_t *p,
			      size_t size, const uint8_t **id, size_t *len)
{
	struct sfp_cursor c;

	sfp_cursor_init(&c, p, size, sfp_elf_big_endian(e) !=
				  (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__));
	while (sfp_cursor_left(&c) >= 12) {
		uint32_t namesz, descsz, type;
		const uint8_t *name;

		if (sfp_cursor_u32(&c, &namesz) || sfp_cursor_u32(&c, &descsz) ||
		    sfp_cursor_u32(&c, &type))
			break;
		name = c.pos;
		if (sfp_cursor_skip(&c, ((size_t)namesz + 3) & ~(size_t)3))
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(name, "GNU", 4) && descsz > 0 && descsz <= 64 &&
		    descsz <= sfp_cursor_left(&c)) {
			*id = c.pos;
			*len = descsz;
			return 0;
		}
		if (sfp_cursor_skip(&c, ((size_t)descsz + 3) & ~(size_t)3))
			break;
	}
	return -ENOENT;
}

int sfp_elf_build_id(const struct sfp_elf *e, const uint8_t **id, size_t *len)
{
	struct sfp_elf_section sec;
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > e->image_size ||
		    ph.p_filesz > e->image_size - ph.p_offset)
			continue;
		if (!find_build_id_note(e, e->image + ph.p_offset, ph.p_filesz,
					id, len))
			return 0;
	}
	for (i = 1; i < e->shnum; i++) {
		if (sfp_elf_section(e, i, &sec) || sec.type != SHT_NOTE)
			continue;
		if (sec.offset > e->image_size ||
		    sec.size > e->image_size - sec.offset)
			continue;
		if (!find_build_id_note(e, e->image + sec.offset, sec.size, id,
					len))
			return 0;
	}
	return -ENOENT;
}

int sfp_elf_debuglink(struct sfp_elf *e, const char **name, uint32_t *crc)
{
	struct sfp_elf_section sec;
	const uint8_t *d;
	size_t size, n;
	struct sfp_cursor c;

	if (sfp_elf_find_section(e, ".gnu_debuglink", 0, &sec) ||
	    sfp_elf_section_data(e, &sec, &d, &size))
		return -ENOENT;
	n = strnlen((const char *)d, size);
	if (n == 0 || n == size)
		return -ENOENT;
	sfp_cursor_init(&c, d, size, sfp_elf_big_endian(e) !=
				 (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__));
	/* The CRC follows the name's NUL, aligned to 4. */
	if (sfp_cursor_seek(&c, (n + 4) & ~(size_t)3) || sfp_cursor_u32(&c, crc))
		return -ENOENT;
	*name = (const char *)d;
	return 0;
}

int sfp_elf_load_base(const struct sfp_elf *e, uint64_t *base)
{
	GElf_Phdr ph;
	bool found = false;
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		uint64_t b;

		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		b = ph.p_vaddr - ph.p_offset;
		if (!found || b < *base)
			*base = b;
		found = true;
	}
	return found ? 0 : -ENOENT;
}
