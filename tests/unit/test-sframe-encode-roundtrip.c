// SPDX-License-Identifier: MIT
/*
 * decode(encode(x)) == x over the shared SFrame vectors: every section is
 * decoded, re-encoded as version 2 and as version 3, decoded again and
 * compared function by function and row by row (the semantic model of
 * include/sfprof/sframe.h).  Vectors that version 2 cannot express
 * (flexible FDEs, signal frames, RA-undefined rows) must fail as v2 with
 * -EOPNOTSUPP and still round-trip as v3.  The same again through the JSON
 * form (dump --json → JSON reader → encoder).
 *
 * Where the input was written by binutils in the output version (2.45:
 * v2 with PCREL; 2.46: v3), the encoder makes the same choices as GNU as
 * and ld, so the bytes must come out identical as well, except for where
 * each function's FRE block sits: ld puts the PLT's FREs last, the
 * encoder keeps FDE order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/sframe.h>

#include "common/json.h"
#include "sframe/json-read.h"
#include "test.h"

struct vector {
	char name[256];
	uint8_t *bytes;
	size_t size;
	uint64_t addr;
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf)
			*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* A vector file: {"section_base": N, "content": [bytes...], ...}. */
static bool load_vector(const char *dir, const char *file, struct vector *v)
{
	char path[1024];
	struct sfp_json *doc = NULL;
	const struct sfp_json *content;
	char *text;
	size_t len = 0, i;
	bool ok = false;

	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", file);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	text = read_file(path, &len);
	if (!ASSERT_NOT_NULL(text))
		return false;
	if (!ASSERT_OK(sfp_json_parse(text, len, NULL, &doc)))
		goto out;
	content = sfp_json_get(doc, "content");
	if (!ASSERT_OK(sfp_json_u64(sfp_json_get(doc, "section_base"),
				    &v->addr)) ||
	    !ASSERT_NOT_NULL(content))
		goto out;
	v->size = sfp_json_len(content);
	v->bytes = malloc(v->size + 1);
	if (!ASSERT_NOT_NULL(v->bytes))
		goto out;
	for (i = 0; i < v->size; i++) {
		uint64_t b = 256;

		sfp_json_u64(sfp_json_at(content, i), &b);
		if (!ASSERT_TRUE(b < 256))
			goto out;
		v->bytes[i] = (uint8_t)b;
	}
	ok = true;
out:
	sfp_json_free(&doc);
	free(text);
	return ok;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the *.json vectors; NULL (and a skip) when absent. */
static char **list_vectors(size_t *n)
{
	DIR *d = opendir(test_vectors_dir());
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d) {
		test_skip("no SFrame vectors at %s", test_vectors_dir());
		return NULL;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				break;
		}
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (names)
		qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* What version 2 cannot say. */
static bool needs_v3(const struct sfp_sframe *sf)
{
	struct sfp_sframe_func fn;
	struct sfp_sframe_row row;

	for (uint32_t i = 0; i < sfp_sframe__num_funcs(sf); i++) {
		sfp_sframe__func(sf, i, &fn);
		if (fn.fde_type == SFP_SFRAME_FDE_FLEX || fn.signal)
			return true;
		for (uint32_t j = 0; j < fn.num_rows; j++) {
			sfp_sframe__row(sf, i, j, &row);
			if (row.flags & SFP_ROW_RA_UNDEFINED)
				return true;
		}
	}
	return false;
}

/* Re-encode every function of sf with a builder for `version`. */
static int reencode(const struct sfp_sframe *sf, uint8_t version, void **buf,
		    size_t *size)
{
	struct sfp_sframe_info info;
	struct sfp_sframe_builder *b = NULL;
	struct sfp_sframe_row *rows = NULL;
	int err;

	sfp_sframe__info(sf, &info);
	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .version = version,
			 .abi = info.abi,
			 .fixed_fp_offset = info.fixed_fp_offset,
			 .fixed_ra_offset = info.fixed_ra_offset,
			 .no_fixed_ra = info.fixed_ra_offset == 0,
			 .section_addr = info.section_addr);

		err = sfp_sframe_builder__new(&o, &b);
	}
	for (uint32_t i = 0; !err && i < sfp_sframe__num_funcs(sf); i++) {
		struct sfp_sframe_func fn;

		sfp_sframe__func(sf, i, &fn);
		free(rows);
		rows = calloc(fn.num_rows + 1, sizeof(*rows));
		if (!rows) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t j = 0; j < fn.num_rows; j++)
			sfp_sframe__row(sf, i, j, &rows[j]);
		err = sfp_sframe_builder__add_func(b, &fn, rows, fn.num_rows);
	}
	if (!err)
		err = sfp_sframe_builder__write(b, buf, size);
	free(rows);
	sfp_sframe_builder__free(&b);
	return err;
}

static bool loc_eq(const struct sfp_loc *a, const struct sfp_loc *b)
{
	return a->kind == b->kind && a->flags == b->flags && a->reg == b->reg &&
	       a->offset == b->offset;
}

/*
 * Every function and row of a equals b's.  With any_fde_type, a function
 * may have become flexible (a v2 s390x register rule written as v3).
 */
static bool same_tables_x(const char *what, const struct sfp_sframe *a,
			  const struct sfp_sframe *b, bool any_fde_type)
{
	struct sfp_sframe_info ia, ib;
	uint32_t n = sfp_sframe__num_funcs(a);

	sfp_sframe__info(a, &ia);
	sfp_sframe__info(b, &ib);
	if (!ASSERT_EQ(ib.abi, ia.abi) ||
	    !ASSERT_EQ(ib.fixed_fp_offset, ia.fixed_fp_offset) ||
	    !ASSERT_EQ(ib.fixed_ra_offset, ia.fixed_ra_offset) ||
	    !ASSERT_EQ(ib.num_fdes, ia.num_fdes) ||
	    !ASSERT_EQ(ib.section_addr, ia.section_addr) ||
	    !ASSERT_EQ(ib.flags, SFP_SFRAME_F_FDE_SORTED |
				 SFP_SFRAME_F_FDE_FUNC_START_PCREL) ||
	    !ASSERT_EQ(sfp_sframe__num_funcs(b), n)) {
		printf("  in %s\n", what);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct sfp_sframe_func fa, fb;

		sfp_sframe__func(a, i, &fa);
		sfp_sframe__func(b, i, &fb);
		if (any_fde_type)
			fb.fde_type = fa.fde_type;
		if (fa.start != fb.start || fa.size != fb.size ||
		    fa.num_rows != fb.num_rows || fa.pc_type != fb.pc_type ||
		    fa.fde_type != fb.fde_type || fa.rep_size != fb.rep_size ||
		    fa.pauth_key != fb.pauth_key || fa.signal != fb.signal) {
			printf("  %s: function %u differs\n", what, i);
			return ASSERT_TRUE(false && "function differs");
		}
		for (uint32_t j = 0; j < fa.num_rows; j++) {
			struct sfp_sframe_row ra, rb;

			sfp_sframe__row(a, i, j, &ra);
			sfp_sframe__row(b, i, j, &rb);
			if (any_fde_type)
				rb.flags = (rb.flags & ~SFP_ROW_FLEX) |
					   (ra.flags & SFP_ROW_FLEX);
			if (ra.start != rb.start || ra.end != rb.end ||
			    ra.func_idx != rb.func_idx ||
			    ra.row_idx != rb.row_idx || ra.flags != rb.flags ||
			    !loc_eq(&ra.cfa, &rb.cfa) ||
			    !loc_eq(&ra.ra, &rb.ra) || !loc_eq(&ra.fp, &rb.fp)) {
				printf("  %s: function %u row %u differs\n",
				       what, i, j);
				return ASSERT_TRUE(false && "row differs");
			}
		}
	}
	return true;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Length of the FRE block at off: up to the next block or the end. */
static uint32_t block_len(const uint8_t *s, uint32_t nfdes, unsigned fde_sz,
			  uint32_t fre_len, uint32_t off)
{
	uint32_t end = fre_len;

	for (uint32_t i = 0; i < nfdes; i++) {
		uint32_t o = le32(s + 28 + i * fde_sz + (fde_sz == 20 ? 8 : 12));

		if (o > off && o < end)
			end = o;
	}
	return end - off;
}

/*
 * Same header, same FDEs except the FRE offsets, and the same bytes in
 * every function's FRE block (little-endian sections, as the vectors are).
 */
static bool same_bytes_but_layout(const uint8_t *a, size_t na,
				  const uint8_t *b, size_t nb)
{
	unsigned fde_sz = a[2] == 2 ? 20 : 16, off_at = fde_sz == 20 ? 8 : 12;
	uint32_t nfdes, fre_len, fres;

	if (na != nb || na < 28 || memcmp(a, b, 28))
		return false;
	nfdes = le32(a + 8);
	fre_len = le32(a + 16);
	fres = 28 + le32(a + 24);
	if (fres + (uint64_t)fre_len != na || 28 + (uint64_t)nfdes * fde_sz > fres)
		return false;
	for (uint32_t i = 0; i < nfdes; i++) {
		const uint8_t *fa = a + 28 + i * fde_sz, *fb = b + 28 + i * fde_sz;
		uint32_t oa = le32(fa + off_at), ob = le32(fb + off_at), la, lb;

		if (memcmp(fa, fb, off_at) ||
		    memcmp(fa + off_at + 4, fb + off_at + 4, fde_sz - off_at - 4))
			return false;
		if (oa >= fre_len || ob >= fre_len)
			return false;
		la = block_len(a, nfdes, fde_sz, fre_len, oa);
		lb = block_len(b, nfdes, fde_sz, fre_len, ob);
		if (la != lb || memcmp(a + fres + oa, b + fres + ob, la))
			return false;
	}
	return true;
}

static bool same_tables(const char *what, const struct sfp_sframe *a,
			const struct sfp_sframe *b)
{
	return same_tables_x(what, a, b, false);
}

/* Open a section we wrote; it must pass the decoder's validation. */
static struct sfp_sframe *open_ours(const char *what, const void *buf,
				    size_t size, uint64_t addr)
{
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = addr, .name = what);
	struct sfp_sframe *sf = NULL;

	if (!ASSERT_OK(sfp_sframe__open_mem(buf, size, &o, &sf)))
		printf("  %s: the re-encoded section does not decode\n", what);
	return sf;
}

TEST(roundtrip_all_vectors_v2_v3)
{
	size_t n = 0, done = 0, v2_refused = 0, empty = 0, same_bytes = 0;
	char **names = list_vectors(&n);

	for (size_t k = 0; k < n; k++) {
		struct vector v;
		struct sfp_sframe *sf = NULL;
		struct sfp_sframe_info info;
		SFP_OPTS(sfp_sframe_opts, o);

		if (!load_vector(test_vectors_dir(), names[k], &v))
			continue;
		if (!v.size) {	/* the linker dropped the section */
			empty++;
			free(v.bytes);
			continue;
		}
		o.section_addr = v.addr;
		o.name = v.name;
		if (!ASSERT_OK(sfp_sframe__open_mem(v.bytes, v.size, &o, &sf))) {
			printf("  %s does not decode\n", v.name);
			free(v.bytes);
			continue;
		}
		sfp_sframe__info(sf, &info);
		for (uint8_t ver = 2; ver <= 3; ver++) {
			char what[300];
			void *buf = NULL;
			size_t size = 0;
			struct sfp_sframe *again;
			int err;

			snprintf(what, sizeof(what), "%s as v%u", v.name, ver);
			err = reencode(sf, ver, &buf, &size);
			if (ver == 2 && needs_v3(sf)) {
				if (ASSERT_ERR(err, -EOPNOTSUPP))
					v2_refused++;
				else
					printf("  %s\n", what);
				free(buf);
				continue;
			}
			if (!ASSERT_OK(err)) {
				printf("  %s: encode failed\n", what);
				continue;
			}
			again = open_ours(what, buf, size, info.section_addr);
			if (again && same_tables(what, sf, again))
				done++;
			/* Same version and encoding as binutils wrote:
			 * the same bytes. */
			if (again && info.version == ver &&
			    (info.flags & SFP_SFRAME_F_FDE_FUNC_START_PCREL)) {
				if (ASSERT_TRUE(same_bytes_but_layout(
					    buf, size, v.bytes, v.size)))
					same_bytes++;
				else
					printf("  %s: bytes differ from binutils'\n",
					       what);
			}
			sfp_sframe__free(&again);
			free(buf);
		}
		sfp_sframe__free(&sf);
		free(v.bytes);
	}
	printf("  %zu vectors: %zu round trips, %zu refused as v2, %zu empty, "
	       "%zu byte-identical to binutils\n",
	       n, done, v2_refused, empty, same_bytes);
	if (names) {
		/* Every non-empty vector round-trips as v3, and as v2 unless
		 * it needs v3. */
		ASSERT_EQ(done + v2_refused, 2 * (n - empty));
		ASSERT_GE(v2_refused, 1);
		ASSERT_GE(same_bytes, 1);
	}
	free_names(names, n);
}

TEST(roundtrip_all_vectors_json)
{
	size_t n = 0, done = 0;
	char **names = list_vectors(&n);

	for (size_t k = 0; k < n; k++) {
		struct vector v;
		struct sfp_sframe *sf = NULL, *again = NULL;
		struct sfp_sframe_json_opts jo = { .version = 3 };
		SFP_OPTS(sfp_sframe_opts, o);
		char *json = NULL;
		size_t json_len = 0, size = 0;
		void *buf = NULL;
		uint64_t addr = 0;
		FILE *f;

		if (!load_vector(test_vectors_dir(), names[k], &v))
			continue;
		if (!v.size) {
			free(v.bytes);
			continue;
		}
		o.section_addr = v.addr;
		o.name = v.name;
		jo.name = v.name;
		if (!ASSERT_OK(sfp_sframe__open_mem(v.bytes, v.size, &o, &sf)))
			goto next;
		f = open_memstream(&json, &json_len);
		if (!ASSERT_NOT_NULL(f))
			goto next;
		ASSERT_OK(sfp_sframe__dump_json(sf, f));
		fclose(f);
		if (!ASSERT_OK(sfp_sframe_json__encode(json, json_len, &jo, &buf,
							&size, &addr))) {
			printf("  %s: JSON encode failed\n", v.name);
			goto next;
		}
		ASSERT_EQ(addr, v.addr);
		again = open_ours(v.name, buf, size, addr);
		if (again && same_tables(v.name, sf, again))
			done++;
next:
		sfp_sframe__free(&again);
		sfp_sframe__free(&sf);
		free(json);
		free(buf);
		free(v.bytes);
	}
	if (names)
		ASSERT_GE(done, 1);
	printf("  %zu vectors through JSON\n", done);
	free_names(names, n);
}

/*
 * The hand-built AArch64 (LE v1/v3, BE v2/v3) and s390x (BE v2) sections of
 * tests/data/sframe: the ABIs and byte orders the vectors lack.
 */
TEST(roundtrip_fixtures_other_abis)
{
	static const char *const files[] = {
		"aarch64-v3-le.sframe", "aarch64-v2-be.sframe",
		"aarch64-v1-le.sframe", "aarch64-v3-be.sframe",
		"s390x-v2-be.sframe",
	};
	size_t done = 0;

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		SFP_OPTS(sfp_sframe_opts, o, .section_addr = 0x10000);
		struct sfp_sframe *sf = NULL;
		struct sfp_sframe_info info;
		char path[1024];
		uint8_t *bytes;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/sframe/%s", test_data_dir(),
			 files[k]);
		bytes = (uint8_t *)read_file(path, &len);
		if (!ASSERT_NOT_NULL(bytes))
			continue;
		o.name = files[k];
		if (!ASSERT_OK(sfp_sframe__open_mem(bytes, len, &o, &sf))) {
			free(bytes);
			continue;
		}
		sfp_sframe__info(sf, &info);
		for (uint8_t ver = 2; ver <= 3; ver++) {
			struct sfp_sframe *again;
			char what[300];
			void *buf = NULL;
			size_t size = 0;

			snprintf(what, sizeof(what), "%s as v%u", files[k], ver);
			if (!ASSERT_OK(reencode(sf, ver, &buf, &size))) {
				printf("  %s: encode failed\n", what);
				continue;
			}
			/* Big-endian ABIs are written big-endian. */
			ASSERT_EQ(((uint8_t *)buf)[0],
				  info.abi == SFP_SFRAME_ABI_AARCH64_LE ? 0xe2
									: 0xde);
			again = open_ours(what, buf, size, info.section_addr);
			/* s390x v2 register rules need flexible FDEs in v3. */
			if (again &&
			    same_tables_x(what, sf, again,
					  info.abi == SFP_SFRAME_ABI_S390X_BE &&
						  info.version == 2 && ver == 3))
				done++;
			sfp_sframe__free(&again);
			free(buf);
		}
		sfp_sframe__free(&sf);
		free(bytes);
	}
	ASSERT_EQ(done, 2 * sizeof(files) / sizeof(files[0]));
}
