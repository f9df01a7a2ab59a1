// SPDX-License-Identifier: MIT
/*
 * Fuzz target: .eh_frame / .debug_frame / .eh_frame_hdr parsing, the row
 * interpreter and the AMD64 and AArch64 conversions, plus the PLT stub
 * decoders.
 *
 * Input: [u8 mode][u64 vaddr, LE][section bytes].  mode bit 0 selects
 * .debug_frame, bit 1 4-byte addresses, bit 2 SFrame v2 rules (else v3),
 * bit 4 the AArch64 register set and conversion (else AMD64).
 * Mode bit 3: the bytes are a whole ELF image for
 * sfp_sframe__build_from_elf_mem(); whatever it builds must decode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "cfi/cfi.h"
#include "cfi/convert.h"

#define MAX_INPUT (256u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_rows rows = { 0 };
	struct sfp_sframe_row *out = NULL;
	struct cfi_section sec;
	struct cfi_iter *it;
	struct cfi_fde fde;
	struct cfi_hdr hdr;
	struct cfi_plt_func pf[CFI_PLT_MAX_FUNCS];
	const struct cfi_track *track;
	uint64_t vaddr;
	uint8_t mode;
	bool a64;
	int rc, n = 0;

	if (size < 9 || size > MAX_INPUT)
		return 0;
	mode = data[0];
	memcpy(&vaddr, data + 1, 8);
	data += 9;
	size -= 9;
	if (mode & 8) {
		SFP_OPTS(sfp_build_opts, bo, .version = (mode & 4) ? 2 : 3,
			 .no_debug_frame = true);
		SFP_OPTS(sfp_sframe_opts, so);
		struct sfp_sframe *sf = NULL;
		void *blob = NULL;
		size_t bsize = 0;

		if (!sfp_sframe__build_from_elf_mem(data, size, "fuzz", &bo,
						    &blob, &bsize,
						    &so.section_addr, NULL)) {
			/* The encoder's output must always decode. */
			if (sfp_sframe__open_mem(blob, bsize, &so, &sf))
				__builtin_trap();
			sfp_sframe__free(&sf);
		}
		free(blob);
		return 0;
	}
	sec = (struct cfi_section){
		.data = data, .size = size, .vaddr = vaddr,
		.text_base = vaddr ^ 0x1000, .data_base = vaddr ^ 0x2000,
		.kind = (mode & 1) ? CFI_DEBUG_FRAME : CFI_EH_FRAME,
		.addr_size = (mode & 2) ? 4 : 8, .name = "fuzz",
	};
	a64 = mode & 16;
	track = a64 ? &cfi_aarch64_track : &cfi_amd64_track;
	it = malloc(sizeof(*it));
	if (!it)
		return 0;
	cfi_iter_init(it, &sec);
	while ((rc = cfi_iter_next(it, &fde)) != 0 && n++ < 4096) {
		size_t nout;
		bool flex;
		enum sfp_cfi_skip why;

		if (rc < 0)
			continue;
		if (fde.pc_range > (1u << 20))
			fde.pc_range = 1u << 20;	/* keep rows bounded */
		if (cfi_run(&sec, &fde, track, &rows))
			continue;
		out = realloc(out, (rows.n ? rows.n : 1) * sizeof(*out));
		if (!out)
			break;
		(a64 ? cfi_convert_aarch64 : cfi_convert_amd64)(
			&fde, &rows, (mode & 4) ? 2 : 3, out, &nout, &flex,
			&why);
		for (size_t i = 0; i < rows.n; i++) {
			uint16_t reg;
			int64_t off;
			bool deref;

			cfi_expr_simple(rows.rows[i].cfa.expr,
					rows.rows[i].cfa.expr_len, &reg, &off,
					&deref);
		}
	}
	if (!cfi_hdr_parse(&sec, &hdr))
		for (uint64_t i = 0; i < hdr.fde_count && i < 4096; i++) {
			uint64_t pc, fa;

			if (cfi_hdr_entry(&sec, &hdr, i, &pc, &fa))
				break;
		}
	cfi_plt_amd64(".plt", vaddr, data, size, pf);
	cfi_plt_amd64(".plt.got", vaddr, data, size, pf);
	cfi_plt_aarch64(".plt", vaddr, data, size, pf);
	free(out);
	free(it);
	cfi_rows_free(&rows);
	return 0;
}
