// SPDX-License-Identifier: MIT
/*
 * ELF → SFrame: pick the CFI (.eh_frame, else .debug_frame here or in a
 * separate debug file), interpret and convert every FDE, add the PLT FDEs,
 * drop overlaps, and write the section.
 *
 * Each function goes to the SFrame encoder as soon as it is converted:
 * its rows (56 bytes each here) live only until then, and the encoder
 * keeps a few bytes per row.  A large binary has a million rows, and
 * this runs inside the long-lived agent, whose peak memory is the peak
 * of its biggest table build.  Overlaps can only be judged once every
 * function is known; the losers are then dropped from the encoder.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cfi/build.h"
#include "cfi/convert.h"
#include "cfi/dwarf.h"
#include "elf/elf.h"
#include "sframe/builder.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

struct range {
	uint64_t lo, hi;
};

struct out_func {
	struct sfp_sframe_func fn;
	size_t seq;		/* order of addition: ties keep it */
	size_t enc_idx;		/* its index in the encoder */
	bool enc_failed;	/* the encoder refused it (said why) */
	bool from_cfi;
	bool from_go;
	bool flex;
};

/* What differs between the machines we convert CFI for. */
struct cfi_arch {
	uint16_t machine;		/* EM_* */
	const struct cfi_track *track;
	int (*convert)(const struct cfi_fde *fde, const struct cfi_rows *rows,
		       uint8_t version, struct sfp_sframe_row *out,
		       size_t *nout, bool *flex, enum sfp_cfi_skip *why);
	/* PLT stubs → FDEs (0: not recognised, the PLT keeps its CFI). */
	int (*plt)(const char *name, uint64_t addr, const uint8_t *data,
		   size_t size, struct cfi_plt_func *out);
	uint8_t abi_le, abi_be;		/* SFrame ABI by ELF byte order */
};

static const struct cfi_arch arches[] = {
	{ EM_X86_64, &cfi_amd64_track, cfi_convert_amd64, cfi_plt_amd64,
	  SFP_SFRAME_ABI_AMD64_LE, 0 },
	{ EM_AARCH64, &cfi_aarch64_track, cfi_convert_aarch64, cfi_plt_aarch64,
	  SFP_SFRAME_ABI_AARCH64_LE, SFP_SFRAME_ABI_AARCH64_BE },
};

struct build_ctx {
	struct sfp_elf *elf;
	const struct cfi_arch *arch;
	const char *name;
	uint8_t version;
	bool no_plt, no_debug_frame, go_pclntab;
	const char *debug_dir;

	struct range text[64];
	size_t ntext;
	struct range plt[4];	/* sections replaced by PLT FDEs */
	size_t nplt;

	struct out_func *funcs;
	size_t nfuncs, capfuncs;
	size_t nknown;		/* funcs[0, nknown) sorted: from .eh_frame */
	struct sfp_sframe_builder *enc;
	size_t nenc;		/* functions the encoder took */
	struct sfp_sframe_row *rows;	/* one function's, reused */
	size_t caprows;
	size_t nrows;		/* rows of all functions so far */
	struct cfi_rows crows;
	struct sfp_build_stats st;
};

static int elf_read_ptr(void *ctx, uint64_t vaddr, unsigned int size,
			uint64_t *val)
{
	const struct sfp_elf *e = ctx;
	const uint8_t *p;
	uint32_t v32;

	if (sfp_elf_vaddr_data(e, vaddr, size, &p))
		return -ENOENT;
	if (size == 8) {
		memcpy(val, p, 8);
		if (sfp_elf_big_endian(e) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
			*val = sfp_bswap64(*val);
	} else {
		memcpy(&v32, p, 4);
		if (sfp_elf_big_endian(e) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
			v32 = sfp_bswap32(v32);
		*val = v32;
	}
	return 0;
}

/* --- Executable ranges. --- */

static void collect_text(struct build_ctx *b)
{
	size_t n = sfp_elf_num_sections(b->elf), i, nsec = 0;
	uint64_t sec_bytes = 0, seg_bytes = 0;

	for (i = 1; i < n; i++) {
		struct sfp_elf_section s;

		if (sfp_elf_section(b->elf, i, &s) || s.type != SHT_PROGBITS ||
		    (s.flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
			    (SHF_ALLOC | SHF_EXECINSTR) ||
		    !s.size || s.addr + s.size < s.addr)
			continue;
		if (nsec < ARRAY_SIZE(b->text))
			b->text[nsec] = (struct range){ s.addr, s.addr + s.size };
		nsec++;
		sec_bytes += s.size;
	}
	if (nsec && nsec <= ARRAY_SIZE(b->text)) {
		b->ntext = nsec;
		b->st.text_bytes = sec_bytes;
		return;
	}
	/* No section headers (or too many code sections): the executable
	 * load segments bound the FDEs instead. */
	n = sfp_elf_num_phdrs(b->elf);
	for (i = 0; i < n && b->ntext < ARRAY_SIZE(b->text); i++) {
		GElf_Phdr ph;

		if (sfp_elf_phdr(b->elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_memsz ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		b->text[b->ntext++] = (struct range){ ph.p_vaddr,
						      ph.p_vaddr + ph.p_memsz };
		seg_bytes += ph.p_memsz;
	}
	b->st.text_bytes = nsec ? sec_bytes : seg_bytes;
}

static bool in_text(const struct build_ctx *b, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < b->ntext; i++)
		if (lo >= b->text[i].lo && hi <= b->text[i].hi)
			return true;
	return false;
}

static bool in_plt(const struct build_ctx *b, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < b->nplt; i++)
		if (lo < b->plt[i].hi && hi > b->plt[i].lo)
			return true;
	return false;
}

/* --- Output accumulation. --- */

/* All rows of one object: ~2 GiB of rows is beyond any real binary. */
#define MAX_TOTAL_ROWS (1u << 25)

/* Room for one function's rows in b->rows. */
static int reserve_rows(struct build_ctx *b, size_t need)
{
	size_t cap = b->caprows ? b->caprows : 1024;
	struct sfp_sframe_row *p;

	if (b->nrows + need > MAX_TOTAL_ROWS)
		return -E2BIG;
	if (need <= b->caprows)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(b->rows, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	b->rows = p;
	b->caprows = cap;
	return 0;
}

static struct out_func *new_func(struct build_ctx *b)
{
	if (b->nfuncs == b->capfuncs) {
		size_t cap = b->capfuncs ? b->capfuncs * 2 : 256;
		struct out_func *p = realloc(b->funcs, cap * sizeof(*p));

		if (!p)
			return NULL;
		b->funcs = p;
		b->capfuncs = cap;
	}
	memset(&b->funcs[b->nfuncs], 0, sizeof(b->funcs[0]));
	b->funcs[b->nfuncs].seq = b->nfuncs;
	return &b->funcs[b->nfuncs++];
}

/*
 * A function and its rows into the encoder.  Its refusal is said (by the
 * encoder) and counted when the function is judged, after the overlaps,
 * as it always was.
 */
static int add_func(struct build_ctx *b, const struct sfp_sframe_func *fn,
		    const struct sfp_sframe_row *rows, bool from_cfi, bool flex)
{
	struct out_func *f = new_func(b);
	int err;

	if (!f)
		return -ENOMEM;
	f->fn = *fn;
	f->from_cfi = from_cfi;
	f->flex = flex;
	err = sfp_sframe_builder__add_func(b->enc, fn,
					   fn->num_rows ? rows : NULL,
					   fn->num_rows);
	if (err == -ENOMEM)
		return err;
	if (err) {
		f->enc_failed = true;
		return 0;
	}
	f->enc_idx = b->nenc++;
	b->nrows += fn->num_rows;
	return 0;
}

/* --- PLT. --- */

static int add_plts(struct build_ctx *b)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct cfi_plt_func pf[CFI_PLT_MAX_FUNCS];
		struct sfp_elf_section s;
		const uint8_t *d;
		size_t n;
		int k;

		if (sfp_elf_find_section(b->elf, names[i], SHT_PROGBITS, &s) ||
		    !(s.flags & SHF_EXECINSTR) ||
		    sfp_elf_section_data(b->elf, &s, &d, &n))
			continue;
		k = b->arch->plt(names[i], s.addr, d, n, pf);
		if (k <= 0) {
			pr_debug("%s: %s: stubs not recognised; using its CFI",
				 b->name, names[i]);
			continue;
		}
		for (int j = 0; j < k; j++) {
			int err = add_func(b, &pf[j].fn, pf[j].rows, false,
					   false);

			if (err)
				return err;
		}
		b->plt[b->nplt++] = (struct range){ s.addr, s.addr + n };
	}
	return 0;
}

/* --- CFI sections. --- */

/* Is there already a function starting at pc (from .eh_frame)? */
static bool known_start(const struct build_ctx *b, uint64_t pc)
{
	size_t lo = 0, hi = b->nknown;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->funcs[mid].fn.start < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nknown && b->funcs[lo].fn.start == pc;
}

static void skip(struct build_ctx *b, enum sfp_cfi_skip why)
{
	b->st.skipped[why]++;
}

static int convert_fde(struct build_ctx *b, const struct cfi_section *sec,
		       const struct cfi_fde *fde)
{
	enum sfp_cfi_skip why = SFP_CFI_SKIP_BAD_CFI;
	struct sfp_sframe_func fn;
	size_t n = 0;
	bool flex = false;
	int err;

	/* .debug_frame after .eh_frame only fills the gaps. */
	if (b->nknown && known_start(b, fde->pc_begin))
		return 0;
	b->st.fdes++;
	b->st.fde_bytes += fde->pc_range;
	if (!fde->pc_range) {
		skip(b, SFP_CFI_SKIP_EMPTY);
		return 0;
	}
	if (fde->pc_begin + fde->pc_range < fde->pc_begin ||
	    !in_text(b, fde->pc_begin, fde->pc_begin + fde->pc_range)) {
		skip(b, SFP_CFI_SKIP_OUTSIDE_TEXT);
		return 0;
	}
	if (in_plt(b, fde->pc_begin, fde->pc_begin + fde->pc_range)) {
		skip(b, SFP_CFI_SKIP_PLT);
		return 0;
	}
	if (fde->pc_range > UINT32_MAX) {
		skip(b, SFP_CFI_SKIP_TOO_BIG);
		return 0;
	}
	err = cfi_run(sec, fde, b->arch->track, &b->crows);
	if (err == -ENOMEM)
		return err;
	if (err) {
		skip(b, err == -EOPNOTSUPP ? SFP_CFI_SKIP_UNKNOWN_OP
		     : err == -E2BIG   ? SFP_CFI_SKIP_TOO_BIG
				       : SFP_CFI_SKIP_BAD_CFI);
		return 0;
	}
	err = reserve_rows(b, b->crows.n);
	if (err == -E2BIG) {
		skip(b, SFP_CFI_SKIP_TOO_BIG);
		return 0;
	}
	if (err)
		return err;
	err = b->arch->convert(fde, &b->crows, b->version, b->rows, &n,
			       &flex, &why);
	if (err) {
		/* A signal trampoline still deserves an FDE in v3: its
		 * signal bit tells the unwinder to read the signal frame
		 * (gas 2.46 does the same). */
		if (!fde->cie.signal || b->version < 3) {
			skip(b, fde->cie.signal ? SFP_CFI_SKIP_SIGNAL : why);
			return 0;
		}
		n = 0;
		flex = false;
	}
	fn = (struct sfp_sframe_func){
		.start = fde->pc_begin,
		.size = (uint32_t)fde->pc_range,
		.num_rows = (uint32_t)n,
		.pc_type = SFP_SFRAME_PC_INC,
		.fde_type = flex ? SFP_SFRAME_FDE_FLEX : SFP_SFRAME_FDE_DEFAULT,
		.signal = fde->cie.signal && b->version >= 3,
		.pauth_key = fde->cie.pauth_b_key &&
			     b->arch->machine == EM_AARCH64,
	};
	return add_func(b, &fn, b->rows, true, flex);
}

static int convert_section(struct build_ctx *b, const struct cfi_section *sec)
{
	struct cfi_iter *it;
	struct cfi_fde fde;
	int rc, err = 0;

	it = malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	cfi_iter_init(it, sec);
	while ((rc = cfi_iter_next(it, &fde)) != 0) {
		if (rc < 0) {
			b->st.fdes++;
			skip(b, rc == -E2BIG ? SFP_CFI_SKIP_TOO_BIG
					     : SFP_CFI_SKIP_BAD_CFI);
			continue;
		}
		err = convert_fde(b, sec, &fde);
		if (err)
			break;
	}
	free(it);
	return err;
}

static void section_bases(struct sfp_elf *e, struct cfi_section *cs)
{
	struct sfp_elf_section s;

	if (!sfp_elf_find_section(e, ".text", 0, &s))
		cs->text_base = s.addr;
	if (!sfp_elf_find_section(e, ".got", 0, &s))
		cs->data_base = s.addr;
}

/* Check .eh_frame_hdr against what we parsed; warn on disagreement. */
static void check_hdr(struct build_ctx *b, const struct cfi_section *eh,
		      uint32_t nfdes)
{
	struct sfp_elf_section s;
	struct cfi_section hs;
	struct cfi_hdr hdr;
	const uint8_t *d;
	size_t n;
	uint64_t prev = 0;

	if (sfp_elf_find_section(b->elf, ".eh_frame_hdr", 0, &s) ||
	    sfp_elf_section_data(b->elf, &s, &d, &n))
		return;
	hs = (struct cfi_section){ .data = d, .size = n, .vaddr = s.addr,
				   .data_base = s.addr, .addr_size = eh->addr_size,
				   .swap = eh->swap, .name = b->name };
	if (cfi_hdr_parse(&hs, &hdr)) {
		pr_warn("%s: .eh_frame_hdr is malformed; ignored", b->name);
		return;
	}
	if (hdr.eh_frame_ptr != eh->vaddr)
		pr_warn("%s: .eh_frame_hdr points at 0x%" PRIx64
			", .eh_frame is at 0x%" PRIx64, b->name,
			hdr.eh_frame_ptr, eh->vaddr);
	if (hdr.fde_count && hdr.fde_count != nfdes)
		pr_info("%s: .eh_frame_hdr lists %" PRIu64 " FDEs, .eh_frame has %u",
			b->name, hdr.fde_count, nfdes);
	for (uint64_t i = 0; i < hdr.fde_count; i++) {
		uint64_t pc, fa;

		if (cfi_hdr_entry(&hs, &hdr, i, &pc, &fa) || pc < prev) {
			pr_warn("%s: .eh_frame_hdr table entry %" PRIu64
				" is bad or out of order", b->name, i);
			return;
		}
		prev = pc;
	}
}

/* .eh_frame from its section, else through PT_GNU_EH_FRAME. */
static int find_eh_frame(struct build_ctx *b, struct cfi_section *cs)
{
	struct sfp_elf_section s;
	size_t n, i;

	if (!sfp_elf_find_section(b->elf, ".eh_frame", 0, &s) &&
	    s.type == SHT_PROGBITS &&
	    !sfp_elf_section_data(b->elf, &s, &cs->data, &cs->size)) {
		cs->vaddr = s.addr;
		return 0;
	}
	n = sfp_elf_num_phdrs(b->elf);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph, lp;
		struct cfi_section hs;
		struct cfi_hdr hdr;
		const uint8_t *d;

		if (sfp_elf_phdr(b->elf, i, &ph) || ph.p_type != PT_GNU_EH_FRAME ||
		    ph.p_filesz > (1u << 30) ||
		    sfp_elf_vaddr_data(b->elf, ph.p_vaddr, ph.p_filesz, &d))
			continue;
		hs = (struct cfi_section){ .data = d, .size = ph.p_filesz,
					   .vaddr = ph.p_vaddr,
					   .data_base = ph.p_vaddr,
					   .addr_size = cs->addr_size,
					   .swap = cs->swap, .name = b->name };
		if (cfi_hdr_parse(&hs, &hdr))
			return -ENOENT;
		/* .eh_frame runs to its terminator, at most to the end of
		 * the load segment holding it. */
		for (size_t j = 0; j < n; j++) {
			if (sfp_elf_phdr(b->elf, j, &lp) || lp.p_type != PT_LOAD ||
			    hdr.eh_frame_ptr < lp.p_vaddr ||
			    hdr.eh_frame_ptr >= lp.p_vaddr + lp.p_filesz)
				continue;
			cs->size = lp.p_vaddr + lp.p_filesz - hdr.eh_frame_ptr;
			if (sfp_elf_vaddr_data(b->elf, hdr.eh_frame_ptr,
					       cs->size, &cs->data))
				return -ENOENT;
			cs->vaddr = hdr.eh_frame_ptr;
			return 0;
		}
	}
	return -ENOENT;
}

static int debug_frame_of(struct build_ctx *b, struct sfp_elf *e,
			  const char *name, uint32_t src)
{
	struct sfp_elf_section s;
	struct cfi_section cs = {
		.kind = CFI_DEBUG_FRAME, .addr_size = sfp_elf_is_64(e) ? 8 : 4,
		.swap = sfp_elf_big_endian(e) !=
			(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__),
		.name = name,
	};
	uint32_t before = b->st.fdes;
	int err;

	if (sfp_elf_find_section(e, ".debug_frame", 0, &s) ||
	    s.type != SHT_PROGBITS ||
	    sfp_elf_section_data(e, &s, &cs.data, &cs.size))
		return -ENOENT;
	err = convert_section(b, &cs);
	if (err)
		return err;
	if (b->st.fdes != before)
		b->st.sources |= src;
	return b->st.fdes != before ? 0 : -ENOENT;
}

static uint32_t file_crc(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t buf[65536];
	uLong crc = crc32(0, NULL, 0);
	ssize_t r;

	if (fd < 0)
		return 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)r);
	close(fd);
	return (uint32_t)crc;
}

/* Try one candidate separate debug file. */
static int try_debug_file(struct build_ctx *b, const char *path,
			  const uint8_t *want_id, size_t want_len,
			  bool check_crc, uint32_t crc)
{
	struct sfp_elf *d = NULL;
	const uint8_t *id;
	size_t len;
	int err;

	if (access(path, R_OK))
		return -ENOENT;
	if (check_crc && file_crc(path) != crc) {
		pr_debug("%s: CRC does not match the debuglink", path);
		return -ENOENT;
	}
	if (sfp_elf_open(path, &d))
		return -ENOENT;
	if (want_id && (sfp_elf_build_id(d, &id, &len) || len != want_len ||
			memcmp(id, want_id, len))) {
		sfp_elf_close(&d);
		return -ENOENT;
	}
	err = debug_frame_of(b, d, path, SFP_CFI_SRC_DEBUG_FILE);
	sfp_elf_close(&d);
	return err;
}


static int separate_debug(struct build_ctx *b)
{
	char path[4096];
	const uint8_t *id;
	size_t len;
	const char *link;
	uint32_t crc;

	if (!sfp_elf_build_id(b->elf, &id, &len) && len >= 2 && len <= 64) {
		int o = snprintf(path, sizeof(path), "%s/.build-id/%02x/",
				 b->debug_dir, id[0]);

		for (size_t i = 1; i < len && o < (int)sizeof(path) - 8; i++)
			o += snprintf(path + o, sizeof(path) - o, "%02x", id[i]);
		snprintf(path + o, sizeof(path) - o, ".debug");
		if (!try_debug_file(b, path, id, len, false, 0))
			return 0;
	}
	if (!sfp_elf_debuglink(b->elf, &link, &crc) && !strchr(link, '/')) {
		char dir[4096];
		const char *slash = strrchr(b->name, '/');
		int dl = slash ? (int)(slash - b->name) : 1;

		if (!sfp_fmt(dir, sizeof(dir), "%.*s", dl,
			      slash ? b->name : "."))
			return -ENOENT;
		if (sfp_fmt(path, sizeof(path), "%s/%s", dir, link) &&
		    strcmp(path, b->name) &&
		    !try_debug_file(b, path, NULL, 0, true, crc))
			return 0;
		if (sfp_fmt(path, sizeof(path), "%s/.debug/%s", dir, link) &&
		    !try_debug_file(b, path, NULL, 0, true, crc))
			return 0;
		if (sfp_fmt(path, sizeof(path), "%s%s%s/%s", b->debug_dir,
			     dir[0] == '/' ? "" : "/", dir, link) &&
		    !try_debug_file(b, path, NULL, 0, true, crc))
			return 0;
	}
	return -ENOENT;
}

static int cmp_func(const void *x, const void *y);

/*
 * .eh_frame first; then .debug_frame (of the file, else of a separate
 * debug file) for the functions .eh_frame does not describe -- a program
 * built with -g -fno-asynchronous-unwind-tables still carries the crt
 * files' .eh_frame, and everything else only in .debug_frame.
 */
static int collect_cfi(struct build_ctx *b)
{
	struct cfi_section eh = {
		.kind = CFI_EH_FRAME, .addr_size = sfp_elf_is_64(b->elf) ? 8 : 4,
		.swap = sfp_elf_big_endian(b->elf) !=
			(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__),
		.read_ptr = elf_read_ptr, .ctx = b->elf, .name = b->name,
	};
	int err;

	if (!find_eh_frame(b, &eh)) {
		section_bases(b->elf, &eh);
		err = convert_section(b, &eh);
		if (err)
			return err;
		if (b->st.fdes) {
			b->st.sources |= SFP_CFI_SRC_EH_FRAME;
			check_hdr(b, &eh, b->st.fdes);
		}
	}
	if (b->no_debug_frame)
		return b->st.fdes ? 0 : -ENOENT;
	/* funcs is NULL while empty: qsort() must not see it (nonnull). */
	if (b->nfuncs > 1)
		qsort(b->funcs, b->nfuncs, sizeof(b->funcs[0]), cmp_func);
	b->nknown = b->nfuncs;
	err = debug_frame_of(b, b->elf, b->name, SFP_CFI_SRC_DEBUG_FRAME);
	if (err == -ENOENT && !sfp_elf_find_section(b->elf, ".debug_frame", 0,
						     &(struct sfp_elf_section){ 0 }))
		return 0;	/* has one, nothing new in it */
	if (err == -ENOENT)
		err = separate_debug(b);
	if (err == -ENOENT && b->st.fdes)
		err = 0;
	return err;
}

/* --- Go. --- */

static int go_emit(void *ctx, const struct sfp_sframe_func *fn,
		   const struct sfp_sframe_row *rows)
{
	struct build_ctx *b = ctx;
	int err;

	if (!in_text(b, fn->start, fn->start + fn->size))
		return 0;
	if (b->nrows + fn->num_rows > MAX_TOTAL_ROWS)
		return -E2BIG;
	/* (added after the PLT's and the CFI's functions: those win an
	 * overlap, see encode()) */
	err = add_func(b, fn, rows, false, false);
	if (!err)
		b->funcs[b->nfuncs - 1].from_go = true;
	return err;
}

/* Go functions from the SP deltas of the Go function table (cfi/go.c):
 * for the code of a Go binary, which has no CFI. */
static int collect_go(struct build_ctx *b)
{
	struct cfi_go_stats gs;
	int err;

	if (!b->go_pclntab || b->arch->machine != EM_X86_64)
		return 0;
	err = cfi_go_amd64(b->elf, b->version, go_emit, b, &gs);
	if (err)
		return err;
	if (gs.funcs || gs.topframe)
		b->st.sources |= SFP_CFI_SRC_GOPCLNTAB;
	b->st.go_left = gs.left + gs.bad;
	return 0;
}

/* --- Ordering and encoding. --- */

static int cmp_func(const void *x, const void *y)
{
	const struct out_func *a = x, *c = y;

	if (a->fn.start != c->fn.start)
		return a->fn.start < c->fn.start ? -1 : 1;
	/* Keep the first added (PLT, then .eh_frame) ahead. */
	return a->seq < c->seq ? -1 : a->seq > c->seq;
}

/* Functions converted from CFI so far (the rest are PLT FDEs). */
static size_t cfi_funcs(const struct build_ctx *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nfuncs; i++)
		n += b->funcs[i].from_cfi;
	return n;
}

/* Where the section goes: past the highest loaded byte, 8-aligned. */
static uint64_t pick_section_addr(struct sfp_elf *e)
{
	size_t n = sfp_elf_num_phdrs(e);
	uint64_t end = 0;

	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!sfp_elf_phdr(e, i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr + ph.p_memsz > end)
			end = ph.p_vaddr + ph.p_memsz;
	}
	if (!end) {
		/* Relocatable objects: past the highest section. */
		size_t ns = sfp_elf_num_sections(e);

		for (size_t i = 1; i < ns; i++) {
			struct sfp_elf_section s;

			if (!sfp_elf_section(e, i, &s) && (s.flags & SHF_ALLOC) &&
			    s.addr + s.size > end)
				end = s.addr + s.size;
		}
	}
	return (end + 7) & ~(uint64_t)7;
}

/*
 * Judge the functions in address order: of overlapping ones the first
 * (lowest start, then PLT before .eh_frame before .debug_frame) wins and
 * the others leave the encoder; then write the section.
 */
static int encode(struct build_ctx *b, void **section, size_t *size)
{
	uint64_t last_end = 0;
	int err;

	if (b->nfuncs > 1)	/* (funcs is NULL while empty) */
		qsort(b->funcs, b->nfuncs, sizeof(b->funcs[0]), cmp_func);
	for (size_t i = 0; i < b->nfuncs; i++) {
		struct out_func *f = &b->funcs[i];

		/* Overlapping FDEs would make lookups ambiguous. */
		if (f->fn.start < last_end) {
			if (f->from_cfi)
				skip(b, SFP_CFI_SKIP_OVERLAP);
			if (!f->enc_failed) {
				err = sfp_sframe_builder__drop(b->enc, f->enc_idx);
				if (err)
					return err;
			}
			continue;
		}
		if (f->enc_failed) {
			if (f->from_cfi)
				skip(b, SFP_CFI_SKIP_ENCODER);
			continue;
		}
		last_end = f->fn.start + f->fn.size;
		b->st.covered_bytes += f->fn.size;
		b->st.rows += f->fn.num_rows;
		if (f->from_cfi) {
			b->st.emitted++;
			b->st.flex += f->flex;
		} else if (f->from_go) {
			b->st.go_fdes++;
		} else {
			b->st.plt_fdes++;
		}
	}
	return sfp_sframe_builder__write(b->enc, section, size);
}

int cfi_build_elf(struct sfp_elf *e, const struct sfp_build_opts *opts,
		  void **section, size_t *size, uint64_t *section_addr,
		  struct sfp_build_stats *stats)
{
	const struct cfi_arch *arch = NULL;
	struct build_ctx *b;
	uint64_t addr;
	int err;

	*section = NULL;
	*size = 0;
	if (!SFP_OPTS_VALID(opts, sfp_build_opts))
		return -EINVAL;
	if (stats && (stats->sz < sizeof(size_t) ||
		      stats->sz > sizeof(struct sfp_build_stats)))
		return -EINVAL;
	if (stats) {
		/* Zero counts on every early error too. */
		size_t sz = stats->sz;

		memset(stats, 0, sz);
		stats->sz = sz;
	}
	if (sfp_elf_type(e) == ET_REL) {
		/* FDE addresses of a .o are relocations against sections
		 * that all start at 0: there is no address space yet. */
		pr_warn("%s: relocatable object: its CFI addresses are not resolved until link time",
			sfp_elf_name(e));
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (arches[i].machine == sfp_elf_machine(e) &&
		    sfp_elf_is_64(e) &&
		    (!sfp_elf_big_endian(e) || arches[i].abi_be))
			arch = &arches[i];
	if (!arch) {
		pr_warn("%s: machine %u (%s-bit, %s-endian): only x86-64 and AArch64 (LP64) CFI can be converted",
			sfp_elf_name(e), sfp_elf_machine(e),
			sfp_elf_is_64(e) ? "64" : "32",
			sfp_elf_big_endian(e) ? "big" : "little");
		return -EOPNOTSUPP;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->elf = e;
	b->arch = arch;
	b->name = sfp_elf_name(e);
	b->version = SFP_OPTS_GET(opts, sfp_build_opts, version, 0);
	if (!b->version)
		b->version = 3;
	b->no_plt = SFP_OPTS_GET(opts, sfp_build_opts, no_plt, false);
	b->no_debug_frame = SFP_OPTS_GET(opts, sfp_build_opts, no_debug_frame,
					 false);
	b->debug_dir = SFP_OPTS_GET(opts, sfp_build_opts, debug_dir, NULL);
	b->go_pclntab = SFP_OPTS_GET(opts, sfp_build_opts, go_pclntab, false);
	if (!b->debug_dir)
		b->debug_dir = DEFAULT_DEBUG_DIR;
	if (b->version != 2 && b->version != 3) {
		err = -EOPNOTSUPP;
		goto out;
	}
	b->st.sz = sizeof(b->st);
	addr = pick_section_addr(e);
	{
		SFP_OPTS(sfp_sframe_builder_opts, bo, .version = b->version,
			 .abi = sfp_elf_big_endian(e) ? arch->abi_be
						      : arch->abi_le,
			 .section_addr = addr);

		err = sfp_sframe_builder__new(&bo, &b->enc);
		if (err)
			goto out;
	}
	collect_text(b);
	if (!b->no_plt) {
		err = add_plts(b);
		if (err)
			goto out;
	}
	err = collect_cfi(b);
	if (err && err != -ENOENT)
		goto out;
	{
		int gerr = collect_go(b);

		if (gerr) {
			err = gerr;
			goto out;
		}
	}
	if (b->st.skipped[SFP_CFI_SKIP_BAD_CFI] && !cfi_funcs(b)) {
		/* Not "no CFI": CFI that could not be read is bad input,
		 * whatever PLT FDEs there are (the parser said where). */
		pr_warn("%s: none of its CFI could be used: %u malformed FDE%s or CFI entr%s",
			b->name, b->st.skipped[SFP_CFI_SKIP_BAD_CFI],
			b->st.skipped[SFP_CFI_SKIP_BAD_CFI] == 1 ? "" : "s",
			b->st.skipped[SFP_CFI_SKIP_BAD_CFI] == 1 ? "y" : "ies");
		err = -EBADMSG;
		goto out;
	}
	if (err == -ENOENT && !b->nfuncs) {
		pr_info("%s: no usable CFI (.eh_frame or .debug_frame) or Go function table",
			b->name);
		goto out;
	}
	/* the interpreter's and the converter's scratch rows are done
	 * with: not held while the section is written */
	cfi_rows_free(&b->crows);
	free(b->rows);
	b->rows = NULL;
	b->caprows = 0;
	err = encode(b, section, size);
	if (!err)
		*section_addr = addr;
out:
	if (stats) {
		size_t sz = stats->sz;

		memcpy(stats, &b->st, sz);
		stats->sz = sz;
	}
	cfi_rows_free(&b->crows);
	sfp_sframe_builder__free(&b->enc);
	free(b->funcs);
	free(b->rows);
	free(b);
	return err;
}

int sfp_sframe__build_from_elf(const char *path,
			       const struct sfp_build_opts *opts,
			       void **section, size_t *size,
			       uint64_t *section_addr,
			       struct sfp_build_stats *stats)
{
	struct sfp_elf *e = NULL;
	int err;

	if (!path || !section || !size || !section_addr)
		return -EINVAL;
	err = sfp_elf_open(path, &e);
	if (err) {
		pr_warn("%s: cannot open as ELF: %s", path, sfp_strerror(err));
		return err == -ENOEXEC ? -EBADMSG : err;
	}
	err = cfi_build_elf(e, opts, section, size, section_addr, stats);
	sfp_elf_close(&e);
	return err;
}

int sfp_sframe__build_from_elf_mem(const void *image, size_t isize,
				   const char *name,
				   const struct sfp_build_opts *opts,
				   void **section, size_t *size,
				   uint64_t *section_addr,
				   struct sfp_build_stats *stats)
{
	struct sfp_elf *e = NULL;
	int err;

	if (!image || !section || !size || !section_addr)
		return -EINVAL;
	err = sfp_elf_open_mem(image, isize, name ? name : "(memory)", &e);
	if (err)
		return err == -ENOEXEC ? -EBADMSG : err;
	err = cfi_build_elf(e, opts, section, size, section_addr, stats);
	sfp_elf_close(&e);
	return err;
}

int sfp_sframe__build_table_file(const char *elf_path, const char *out_path,
				 const struct sfp_build_opts *opts,
				 struct sfp_build_stats *stats)
{
	SFP_OPTS(sfp_sframe_file_opts, fo);
	struct sfp_elf *e = NULL;
	const uint8_t *id;
	size_t size = 0, idlen;
	void *sec = NULL;
	int err;

	if (!elf_path || !out_path)
		return -EINVAL;
	err = sfp_elf_open(elf_path, &e);
	if (err) {
		pr_warn("%s: cannot open as ELF: %s", elf_path,
			sfp_strerror(err));
		return err == -ENOEXEC ? -EBADMSG : err;
	}
	err = cfi_build_elf(e, opts, &sec, &size, &fo.section_addr, stats);
	if (err)
		goto out;
	if (!sfp_elf_build_id(e, &id, &idlen) && idlen <= 64) {
		fo.build_id = id;
		fo.build_id_len = idlen;
	}
	err = sfp_sframe__write_file(out_path, sec, size, &fo);
	if (err)
		pr_warn("%s: cannot write the table: %s", out_path,
			sfp_strerror(err));
out:
	free(sec);
	sfp_elf_close(&e);
	return err;
}
