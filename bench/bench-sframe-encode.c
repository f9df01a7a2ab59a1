// SPDX-License-Identifier: MIT
/*
 * Encoding cost: sfprof's builder (add_func + write) next to libsframe's
 * encoder (sframe_encoder_add_funcdesc/add_fre/write) on the same rows, in
 * one run.
 *
 * Debian's libsframe (binutils 2.40) writes only SFrame version 1, so it
 * encodes v1 while sfprof encodes v2 and v3; the work per row is the same
 * (pick the word size, store start, info and words).  For libsframe the
 * caller has to pick word sizes and pack fre_info itself, as GNU as does;
 * that is timed with it.  The table: 50,000 AMD64 functions of 32..2048
 * bytes with 2..12 rows (SP- and FP-based CFA, FP saved or not, 1- and
 * 2-byte words), given in address order.  Each encoder runs 5 rounds; the
 * best is reported.  Every output is decoded by sfprof and checked to hold
 * the same rows first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sframe-api.h>
#include <sfprof/sframe.h>

#define NFUNCS 50000
#define ROUNDS 5
#define SECTION_ADDR 0x400000ull
#define TEXT_START 0x401000ull

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

struct func {
	struct sfp_sframe_func fn;
	struct sfp_sframe_row *rows;
};

static struct func *funcs;
static size_t total_rows;

static void make_table(void)
{
	uint64_t pc = TEXT_START;

	funcs = calloc(NFUNCS, sizeof(*funcs));
	if (!funcs)
		abort();
	for (int i = 0; i < NFUNCS; i++) {
		struct func *f = &funcs[i];
		uint32_t size = 32 + rnd() % 2017, n = 2 + rnd() % 11, at = 0;

		f->fn.start = pc;
		f->fn.size = size;
		f->fn.num_rows = n;
		f->rows = calloc(n, sizeof(*f->rows));
		if (!f->rows)
			abort();
		for (uint32_t j = 0; j < n; j++) {
			struct sfp_sframe_row *r = &f->rows[j];
			bool fp_based = j > 1 && (rnd() & 1);

			if (j)
				at += 1 + rnd() % ((size - at) / (n - j) + 1);
			if (at >= size)
				at = size - 1;
			if (j && at <= f->rows[j - 1].start - pc) {
				n = f->fn.num_rows = j;
				break;
			}
			r->start = pc + at;
			r->cfa.kind = SFP_LOC_REG;
			r->cfa.reg = fp_based ? SFP_DWARF_AMD64_FP
					      : SFP_DWARF_AMD64_SP;
			r->cfa.offset = fp_based ? 16 : 8 + 8 * (int32_t)(rnd() % 40);
			r->ra.kind = SFP_LOC_CFA_DEREF;
			r->ra.flags = SFP_LOC_F_FIXED;
			r->ra.offset = -8;
			if (j) {
				r->fp.kind = SFP_LOC_CFA_DEREF;
				r->fp.offset = -16;
			}
		}
		total_rows += f->fn.num_rows;
		pc += size + rnd() % 16;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sfprof_encode(uint8_t version, void **buf, size_t *size)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = version,
		 .section_addr = SECTION_ADDR);
	struct sfp_sframe_builder *b = NULL;
	int err = sfp_sframe_builder__new(&o, &b);

	for (int i = 0; !err && i < NFUNCS; i++)
		err = sfp_sframe_builder__add_func(b, &funcs[i].fn,
						   funcs[i].rows,
						   funcs[i].fn.num_rows);
	if (!err)
		err = sfp_sframe_builder__write(b, buf, size);
	sfp_sframe_builder__free(&b);
	return err;
}

static int fits8(int32_t v) { return v >= -128 && v <= 127; }

/* What GNU as does before it calls libsframe: pack each FRE. */
static int libsframe_encode(void **buf, size_t *size)
{
	sframe_encoder_ctx *e;
	int err = 0;
	char *out;

	e = sframe_encode(SFRAME_VERSION_1, SFRAME_F_FDE_SORTED,
			  SFRAME_ABI_AMD64_ENDIAN_LITTLE, 0, -8, &err);
	if (!e)
		return -1;
	for (int i = 0; i < NFUNCS; i++) {
		const struct func *f = &funcs[i];
		uint32_t last = f->rows[f->fn.num_rows - 1].start - f->fn.start;
		unsigned int fre_type = last <= 0xff ? SFRAME_FRE_TYPE_ADDR1
				      : last <= 0xffff ? SFRAME_FRE_TYPE_ADDR2
						       : SFRAME_FRE_TYPE_ADDR4;
		unsigned char info = sframe_fde_create_func_info(
			fre_type, SFRAME_FDE_TYPE_PCINC);

		/* v1: start relative to the section. */
		if (sframe_encoder_add_funcdesc(e, (int32_t)(f->fn.start - SECTION_ADDR),
						f->fn.size, info, f->fn.num_rows))
			goto fail;
		for (uint32_t j = 0; j < f->fn.num_rows; j++) {
			const struct sfp_sframe_row *r = &f->rows[j];
			sframe_frame_row_entry fre = { 0 };
			int n = r->fp.kind ? 2 : 1;
			bool small = fits8(r->cfa.offset) && fits8(r->fp.offset);

			fre.fre_start_addr = (uint32_t)(r->start - f->fn.start);
			if (small) {
				int8_t w[2] = { (int8_t)r->cfa.offset,
						(int8_t)r->fp.offset };
				memcpy(fre.fre_offsets, w, n);
			} else {
				int16_t w[2] = { (int16_t)r->cfa.offset,
						 (int16_t)r->fp.offset };
				memcpy(fre.fre_offsets, w, 2 * n);
			}
			fre.fre_info = SFRAME_V1_FRE_INFO(
				r->cfa.reg == SFP_DWARF_AMD64_SP ? SFRAME_BASE_REG_SP
								 : SFRAME_BASE_REG_FP,
				n, small ? SFRAME_FRE_OFFSET_1B : SFRAME_FRE_OFFSET_2B);
			if (sframe_encoder_add_fre(e, (unsigned int)i, &fre))
				goto fail;
		}
	}
	out = sframe_encoder_write(e, size, &err);
	if (!out)
		goto fail;
	/* The buffer belongs to the encoder context: copy it out. */
	*buf = malloc(*size);
	if (!*buf)
		goto fail;
	memcpy(*buf, out, *size);
	sframe_encoder_free(&e);
	return 0;
fail:
	sframe_encoder_free(&e);
	return -1;
}

/* The output decodes (with sfprof) to the rows that went in. */
static int check(const char *who, const void *buf, size_t size)
{
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = SECTION_ADDR);
	struct sfp_sframe *sf = NULL;
	int bad = 0;

	if (sfp_sframe__open_mem(buf, size, &o, &sf)) {
		fprintf(stderr, "%s: output does not decode\n", who);
		return -1;
	}
	for (uint32_t i = 0; i < NFUNCS && !bad; i++) {
		struct sfp_sframe_func fn;

		if (sfp_sframe__func(sf, i, &fn) || fn.start != funcs[i].fn.start ||
		    fn.num_rows != funcs[i].fn.num_rows) {
			bad = 1;
			break;
		}
		for (uint32_t j = 0; j < fn.num_rows; j++) {
			struct sfp_sframe_row r;
			const struct sfp_sframe_row *w = &funcs[i].rows[j];

			if (sfp_sframe__row(sf, i, j, &r) || r.start != w->start ||
			    r.cfa.reg != w->cfa.reg || r.cfa.offset != w->cfa.offset ||
			    r.fp.kind != w->fp.kind || r.fp.offset != w->fp.offset) {
				bad = 1;
				break;
			}
		}
	}
	sfp_sframe__free(&sf);
	if (bad)
		fprintf(stderr, "%s: output does not hold the input rows\n", who);
	return bad ? -1 : 0;
}

typedef int (*enc_fn)(void **buf, size_t *size);
static int enc_v2(void **b, size_t *s) { return sfprof_encode(2, b, s); }
static int enc_v3(void **b, size_t *s) { return sfprof_encode(3, b, s); }

static double best_of(const char *who, enc_fn fn, size_t *size)
{
	double best = 1e30;

	for (int k = 0; k < ROUNDS; k++) {
		void *buf = NULL;
		double t0 = now(), t;

		if (fn(&buf, size)) {
			fprintf(stderr, "%s: encoding failed\n", who);
			exit(1);
		}
		t = now() - t0;
		if (k == 0 && check(who, buf, *size))
			exit(1);
		free(buf);
		if (t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	size_t s2, s3, s1;
	double t2, t3, t1;

	make_table();
	t2 = best_of("sfprof v2", enc_v2, &s2);
	t3 = best_of("sfprof v3", enc_v3, &s3);
	t1 = best_of("libsframe 2.40 v1", libsframe_encode, &s1);
	printf("encode %d functions, %zu rows (best of %d):\n", NFUNCS,
	       total_rows, ROUNDS);
	printf("  sfprof v2          %7.1f ms  %5.1f ns/row  %zu bytes\n",
	       t2 * 1e3, t2 * 1e9 / total_rows, s2);
	printf("  sfprof v3          %7.1f ms  %5.1f ns/row  %zu bytes\n",
	       t3 * 1e3, t3 * 1e9 / total_rows, s3);
	printf("  libsframe 2.40 v1  %7.1f ms  %5.1f ns/row  %zu bytes\n",
	       t1 * 1e3, t1 * 1e9 / total_rows, s1);
	printf("  ratio libsframe/sfprof(v3): %.2fx\n", t1 / t3);
	return 0;
}
