// SPDX-License-Identifier: MIT
/*
 * MiniDebugInfo: Fedora and others strip binaries but keep the local
 * function symbols in an xz-compressed ELF inside the .gnu_debugdata
 * section.  Decompress it with liblzma and open the result.
 */
#include <lzma.h>

#include "elf/elf.h"
#include "symbols/symtab.h"

/* The embedded ELF is symbols only; anything bigger is hostile. */
#define MINIDEBUG_MAX (256u << 20)

int sfp_minidebuginfo_open(struct sfp_elf *e, struct sfp_elf **out)
{
	struct sfp_elf_section sec;
	lzma_stream strm = LZMA_STREAM_INIT;
	const uint8_t *in;
	size_t in_len, cap = 0;
	uint8_t *buf = NULL;
	lzma_ret ret;
	int err;

	*out = NULL;
	if (sfp_elf_find_section(e, ".gnu_debugdata", 0, &sec))
		return -ENOENT;
	err = sfp_elf_section_data(e, &sec, &in, &in_len);
	if (err)
		return err == -ENODATA ? -ENOENT : err;
	if (lzma_stream_decoder(&strm, MINIDEBUG_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = in_len;
	do {
		if (strm.avail_out == 0) {
			size_t ncap = cap ? cap * 2 : (in_len < (1u << 20) ?
						       4 * in_len + 4096 : in_len * 2);
			uint8_t *nb;

			if (ncap > MINIDEBUG_MAX)
				ncap = MINIDEBUG_MAX;
			if (ncap <= cap) {
				pr_warn("%s: .gnu_debugdata inflates beyond %u bytes",
					sfp_elf_name(e), MINIDEBUG_MAX);
				err = -EBADMSG;
				goto out;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
			strm.next_out = buf + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret != LZMA_STREAM_END) {
		pr_warn("%s: .gnu_debugdata: xz error %d at input offset %llu",
			sfp_elf_name(e), (int)ret,
			(unsigned long long)strm.total_in);
		err = ret == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
		goto out;
	}
	err = sfp_elf_open_mem(buf, strm.total_out, ".gnu_debugdata", out);
	if (err == -ENOEXEC)
		err = -EBADMSG;
out:
	lzma_end(&strm);
	free(buf);
	return err;
}
