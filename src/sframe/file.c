// SPDX-License-Identifier: MIT
/*
 * Opening SFrame tables from files: ELF objects, sfprof table files (a
 * small container around a raw section, docs/sframe-file.md) and raw
 * section blobs.  The kind is told from the first bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/outfile.h"
#include "elf/elf.h"
#include "sframe/sframe_int.h"

/* Container layout (all little-endian); see docs/sframe-file.md. */
#define SFT_MAGIC "SFPSFRM\0"
#define SFT_MAGIC_LEN 8
#define SFT_VERSION 1
#define SFT_HDR_SIZE 112
#define SFT_OFF_VERSION 8
#define SFT_OFF_HDR_SIZE 12
#define SFT_OFF_SECTION_ADDR 16
#define SFT_OFF_SECTION_SIZE 24
#define SFT_OFF_CRC 32
#define SFT_OFF_BUILD_ID_LEN 36
#define SFT_OFF_BUILD_ID 40
#define SFT_BUILD_ID_MAX 64

/* Files larger than this are not SFrame tables we want to load whole. */
#define SFT_MAX_FILE (1ull << 30)

/*
 * CRC-32 (IEEE, as zlib's crc32()): zlib's table-driven version; a bit at
 * a time, checking the cached tables of libc and ld.so was ~5 % of an
 * `sfprof script` run.
 */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uLong crc = crc32(0, NULL, 0);

	while (n) {
		uInt chunk = n > 0x40000000u ? 0x40000000u : (uInt)n;

		crc = crc32(crc, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return (uint32_t)crc;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* The whole of the regular file open at fd (the caller closes fd). */
static int read_whole_fd(int fd, const char *path, uint8_t **buf,
			 size_t *size)
{
	struct stat st;
	uint8_t *b = NULL;
	size_t got = 0;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		pr_warn("%s: not a regular file", path);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > SFT_MAX_FILE) {
		pr_warn("%s: %lld bytes is too large for an SFrame table",
			path, (long long)st.st_size);
		return -EFBIG;
	}
	b = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!b)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			free(b);
			return err;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	*buf = b;
	*size = got;
	return 0;
}

static int read_whole(const char *path, uint8_t **buf, size_t *size)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_whole_fd(fd, path, buf, size);
	close(fd);
	return err;
}

/* The first bytes of a file, to tell ELF from the rest without reading a
 * large ELF twice. */
static int read_magic(const char *path, uint8_t *buf, size_t len, size_t *got)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	do
		r = read(fd, buf, len);
	while (r < 0 && errno == EINTR);
	close(fd);
	if (r < 0)
		return -errno;
	*got = (size_t)r;
	return 0;
}

static int open_elf(const char *path, const struct sfp_sframe_opts *opts,
		    struct sfp_sframe **out)
{
	SFP_OPTS(sfp_sframe_opts, o,
		 .bias = SFP_OPTS_GET(opts, sfp_sframe_opts, bias, 0),
		 .name = path);
	struct sfp_elf_section sec;
	struct sfp_elf *e = NULL;
	const uint8_t *data;
	size_t size, i, n;
	int err;

	err = sfp_elf_open(path, &e);
	if (err) {
		pr_warn("%s: cannot open as ELF: %s", path, sfp_strerror(err));
		return err == -ENOEXEC ? -EBADMSG : err;
	}
	if (!sfp_elf_find_section(e, NULL, SHT_GNU_SFRAME, &sec) ||
	    !sfp_elf_find_section(e, ".sframe", 0, &sec)) {
		err = sfp_elf_section_data(e, &sec, &data, &size);
		if (err) {
			pr_warn("%s: section %s: cannot read its contents: %s",
				path, sec.name, sfp_strerror(err));
			if (err == -ENODATA)
				err = -EBADMSG;
			goto out;
		}
		o.section_addr = sec.addr;
		err = sfp_sframe__open_mem(data, size, &o, out);
		goto out;
	}
	n = sfp_elf_num_phdrs(e);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_GNU_SFRAME)
			continue;
		if (ph.p_filesz > SIZE_MAX ||
		    sfp_elf_vaddr_data(e, ph.p_vaddr, (size_t)ph.p_filesz, &data)) {
			pr_warn("%s: PT_GNU_SFRAME [0x%llx, +0x%llx) is not backed by the file",
				path, (unsigned long long)ph.p_vaddr,
				(unsigned long long)ph.p_filesz);
			err = -EBADMSG;
			goto out;
		}
		o.section_addr = ph.p_vaddr;
		err = sfp_sframe__open_mem(data, (size_t)ph.p_filesz, &o, out);
		goto out;
	}
	pr_warn("%s: no .sframe section and no PT_GNU_SFRAME segment", path);
	err = -ENOENT;
out:
	sfp_elf_close(&e);
	return err;
}

static int open_container(const char *path, const uint8_t *buf, size_t size,
			  const struct sfp_sframe_opts *opts,
			  struct sfp_sframe **out)
{
	SFP_OPTS(sfp_sframe_opts, o,
		 .bias = SFP_OPTS_GET(opts, sfp_sframe_opts, bias, 0),
		 .name = path);
	uint32_t ver, hdr, crc;
	uint64_t sec_size;

	if (size < SFT_HDR_SIZE) {
		pr_warn("%s: offset 0: truncated sfprof table header (%zu bytes)",
			path, size);
		return -EBADMSG;
	}
	ver = get_le32(buf + SFT_OFF_VERSION);
	if (ver != SFT_VERSION) {
		pr_warn("%s: offset 0x%x: unsupported sfprof table version %u",
			path, SFT_OFF_VERSION, ver);
		return -EOPNOTSUPP;
	}
	hdr = get_le32(buf + SFT_OFF_HDR_SIZE);
	sec_size = get_le64(buf + SFT_OFF_SECTION_SIZE);
	if (hdr < SFT_HDR_SIZE || hdr > size || sec_size != size - hdr) {
		pr_warn("%s: offset 0x%x: header size %u / section size %llu do not match the file size %zu",
			path, SFT_OFF_HDR_SIZE, hdr,
			(unsigned long long)sec_size, size);
		return -EBADMSG;
	}
	if (buf[SFT_OFF_BUILD_ID_LEN] > SFT_BUILD_ID_MAX) {
		pr_warn("%s: offset 0x%x: build-id length %u exceeds %d", path,
			SFT_OFF_BUILD_ID_LEN, buf[SFT_OFF_BUILD_ID_LEN],
			SFT_BUILD_ID_MAX);
		return -EBADMSG;
	}
	crc = crc32_ieee(buf + hdr, (size_t)sec_size);
	if (crc != get_le32(buf + SFT_OFF_CRC)) {
		pr_warn("%s: offset 0x%x: checksum 0x%08x does not match the section (0x%08x)",
			path, SFT_OFF_CRC, get_le32(buf + SFT_OFF_CRC), crc);
		return -EBADMSG;
	}
	o.section_addr = get_le64(buf + SFT_OFF_SECTION_ADDR);
	return sfp_sframe__open_mem(buf + hdr, (size_t)sec_size, &o, out);
}

int sframe_open_table_fd(int fd, const char *name,
			 const struct sfp_sframe_opts *opts,
			 struct sfp_sframe **out)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	int err;

	*out = NULL;
	err = read_whole_fd(fd, name, &buf, &size);
	if (err)
		return err;
	if (size >= SFT_MAGIC_LEN && !memcmp(buf, SFT_MAGIC, SFT_MAGIC_LEN)) {
		err = open_container(name, buf, size, opts, out);
	} else {
		pr_warn("%s: offset 0: not an sfprof table file", name);
		err = -EBADMSG;
	}
	free(buf);
	return err;
}

int sfp_sframe__open_file(const char *path, const struct sfp_sframe_opts *opts,
			  struct sfp_sframe **out)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!path || !SFP_OPTS_VALID(opts, sfp_sframe_opts))
		return -EINVAL;
	{
		uint8_t magic[4];
		size_t got = 0;

		err = read_magic(path, magic, sizeof(magic), &got);
		if (!err && got == 4 && !memcmp(magic, "\177ELF", 4))
			return open_elf(path, opts, out);
	}
	err = read_whole(path, &buf, &size);
	if (err) {
		pr_warn("%s: cannot read: %s", path, strerror(-err));
		return err;
	}
	if (size >= SFT_MAGIC_LEN && !memcmp(buf, SFT_MAGIC, SFT_MAGIC_LEN)) {
		err = open_container(path, buf, size, opts, out);
	} else {
		SFP_OPTS(sfp_sframe_opts, o,
			 .section_addr = SFP_OPTS_GET(opts, sfp_sframe_opts,
						      section_addr, 0),
			 .bias = SFP_OPTS_GET(opts, sfp_sframe_opts, bias, 0),
			 .name = path);
		err = sfp_sframe__open_mem(buf, size, &o, out);
	}
	free(buf);
	return err;
}

int sfp_sframe__write_file(const char *path, const void *section, size_t size,
			   const struct sfp_sframe_file_opts *opts)
{
	uint8_t hdr[SFT_HDR_SIZE] = { 0 };
	const uint8_t *bid;
	size_t bid_len;
	struct sfp_outfile o;
	FILE *f;
	int err = 0;

	if (!path || (!section && size) ||
	    !SFP_OPTS_VALID(opts, sfp_sframe_file_opts))
		return -EINVAL;
	bid = SFP_OPTS_GET(opts, sfp_sframe_file_opts, build_id, NULL);
	bid_len = SFP_OPTS_GET(opts, sfp_sframe_file_opts, build_id_len, 0);
	if (bid_len > SFT_BUILD_ID_MAX || (bid_len && !bid))
		return -EINVAL;
	memcpy(hdr, SFT_MAGIC, SFT_MAGIC_LEN);
	put_le32(hdr + SFT_OFF_VERSION, SFT_VERSION);
	put_le32(hdr + SFT_OFF_HDR_SIZE, SFT_HDR_SIZE);
	put_le64(hdr + SFT_OFF_SECTION_ADDR,
		 SFP_OPTS_GET(opts, sfp_sframe_file_opts, section_addr, 0));
	put_le64(hdr + SFT_OFF_SECTION_SIZE, size);
	put_le32(hdr + SFT_OFF_CRC, crc32_ieee(section, size));
	hdr[SFT_OFF_BUILD_ID_LEN] = (uint8_t)bid_len;
	if (bid_len)
		memcpy(hdr + SFT_OFF_BUILD_ID, bid, bid_len);

	/* beside PATH, renamed when complete: a failure leaves what was
	 * there; never through a symlink (common/outfile.h) */
	err = sfp_outfile_open(&o, path, 0, 0666);
	if (err)
		return err;
	f = sfp_outfile_stdio(&o);
	if (!f) {
		sfp_outfile_abort(&o);
		return -ENOMEM;
	}
	if (fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr) ||
	    (size && fwrite(section, 1, size, f) != size)) {
		err = o.werr ? o.werr : -EIO;
		sfp_outfile_abort(&o);
		return err;
	}
	return sfp_outfile_commit(&o);
}
