// SPDX-License-Identifier: MIT
/*
 * The shared SFrame vectors: dumps must equal the producing binutils'
 * objdump --sframe byte for byte; every row must be found by lookup;
 * gaps must give -ENOENT; the JSON dump must parse.
 */
#include "sframe-test-util.h"

static struct sfp_sframe *open_vec(const struct vec *v)
{
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = v->section_base,
		 .name = v->name);
	struct sfp_sframe *sf = NULL;

	if (!ASSERT_OK(sfp_sframe__open_mem(v->content, v->size, &o, &sf))) {
		sfp_test_fail_at(__FILE__, __LINE__, "%s does not open", v->name);
		return NULL;
	}
	return sf;
}

TEST(sframe_vectors_dump_golden)
{
	size_t n, i, ok = 0;
	char **names = vec_list(&n);

	if (!names || !n) {
		test_skip("no vectors in %s", test_vectors_dir());
		return;
	}
	ASSERT_EQ(n, 81);
	for (i = 0; i < n; i++) {
		struct sfp_sframe *sf;
		struct vec v;
		char *out;

		if (vec_load(names[i], &v))
			continue;
		sf = open_vec(&v);
		if (sf) {
			out = dump_str(sf, false);
			if (ASSERT_NOT_NULL(out) && text_eq(v.name, v.expected, out))
				ok++;
			free(out);
		}
		sfp_sframe__free(&sf);
		vec_free(&v);
	}
	ASSERT_EQ(ok, n);
	free_names(names);
}

/* Another function covering pc besides fi? */
static bool covered_elsewhere(const struct sfp_sframe *sf, uint32_t fi,
			      uint64_t pc)
{
	uint32_t k, n = sfp_sframe__num_funcs(sf);

	for (k = 0; k < n; k++) {
		struct sfp_sframe_func f;

		sfp_sframe__func(sf, k, &f);
		if (k != fi && pc - f.start < f.size)
			return true;
	}
	return false;
}

static bool check_rows(const struct sfp_sframe *sf, const char *name)
{
	uint32_t i, j, n = sfp_sframe__num_funcs(sf);
	bool ok = true;

	for (i = 0; i < n; i++) {
		struct sfp_sframe_func fn;
		struct sfp_sframe_row r, got;

		ASSERT_OK(sfp_sframe__func(sf, i, &fn));
		for (j = 0; j < fn.num_rows; j++) {
			uint64_t pc;

			ASSERT_OK(sfp_sframe__row(sf, i, j, &r));
			if (r.start >= r.end)
				continue;	/* empty or beyond the function */
			pc = fn.pc_type == SFP_SFRAME_PC_MASK ? fn.start + r.start
							      : r.start;
			if (pc - fn.start >= fn.size || covered_elsewhere(sf, i, pc))
				continue;
			if (!ASSERT_OK(sfp_sframe__find(sf, pc, &got)) ||
			    !ASSERT_EQ(got.func_idx, i) || !ASSERT_EQ(got.row_idx, j) ||
			    !ASSERT_OK(sfp_sframe__find(sf, pc + (r.end - r.start) - 1,
							 &got)) ||
			    !ASSERT_EQ(got.row_idx, j)) {
				sfp_test_fail_at(__FILE__, __LINE__, "%s: func %u row %u (pc 0x%llx)",
						 name, i, j, (unsigned long long)pc);
				ok = false;
			}
			if (fn.pc_type == SFP_SFRAME_PC_MASK && fn.rep_size &&
			    fn.size >= 2u * fn.rep_size) {
				/* The same row one block later. */
				if (!ASSERT_OK(sfp_sframe__find(sf, pc + fn.rep_size, &got)) ||
				    !ASSERT_EQ(got.row_idx, j))
					ok = false;
			}
		}
		/* Just past the end: no function unless another starts there. */
		if (fn.size && !covered_elsewhere(sf, i, fn.start + fn.size) &&
		    !ASSERT_ERR(sfp_sframe__find(sf, fn.start + fn.size, &got),
				-ENOENT))
			ok = false;
		if (!covered_elsewhere(sf, i, fn.start - 1) &&
		    !ASSERT_ERR(sfp_sframe__find(sf, fn.start - 1, &got), -ENOENT))
			ok = false;
	}
	return ok;
}

TEST(sframe_vectors_lookup)
{
	size_t n, i, with_rows = 0;
	char **names = vec_list(&n);

	if (!names || !n) {
		test_skip("no vectors in %s", test_vectors_dir());
		return;
	}
	for (i = 0; i < n; i++) {
		struct sfp_sframe *sf;
		struct vec v;

		if (vec_load(names[i], &v))
			continue;
		sf = open_vec(&v);
		if (sf) {
			struct sfp_sframe_info info;

			sfp_sframe__info(sf, &info);
			with_rows += info.num_fres > 0;
			check_rows(sf, v.name);
		}
		sfp_sframe__free(&sf);
		vec_free(&v);
	}
	ASSERT_GE(with_rows, 60);
	free_names(names);
}

/* With a bias every address moves, lookups subtract it. */
TEST(sframe_vectors_bias)
{
	char path[512];
	struct sfp_sframe *sf = NULL, *sb = NULL;
	struct sfp_sframe_row a, b;
	struct sfp_sframe_func f0, f1;
	struct vec v;

	snprintf(path, sizeof(path), "%s/test-x86_64-2.45.json", test_vectors_dir());
	if (vec_load(path, &v))
		return;
	{
		SFP_OPTS(sfp_sframe_opts, o, .section_addr = v.section_base);
		SFP_OPTS(sfp_sframe_opts, ob, .section_addr = v.section_base,
			 .bias = 0x7f0000000000ull);

		if (!ASSERT_OK(sfp_sframe__open_mem(v.content, v.size, &o, &sf)) ||
		    !ASSERT_OK(sfp_sframe__open_mem(v.content, v.size, &ob, &sb)))
			goto out;
	}
	ASSERT_OK(sfp_sframe__func(sf, 2, &f0));
	ASSERT_OK(sfp_sframe__func(sb, 2, &f1));
	ASSERT_EQ(f1.start, f0.start + 0x7f0000000000ull);
	ASSERT_OK(sfp_sframe__find(sf, f0.start + 2, &a));
	ASSERT_OK(sfp_sframe__find(sb, f1.start + 2, &b));
	ASSERT_EQ(a.row_idx, b.row_idx);
	ASSERT_EQ(b.start, a.start + 0x7f0000000000ull);
	ASSERT_ERR(sfp_sframe__find(sb, f0.start + 2, &b), -ENOENT);
out:
	sfp_sframe__free(&sf);
	sfp_sframe__free(&sb);
	vec_free(&v);
}

/* The JSON dump parses and agrees with the API. */
TEST(sframe_vectors_json)
{
	size_t n, i;
	char **names = vec_list(&n);

	if (!names || !n) {
		test_skip("no vectors");
		return;
	}
	for (i = 0; i < n; i++) {
		struct sfp_json *root = NULL;
		struct sfp_sframe *sf;
		struct vec v;
		char *out;

		if (vec_load(names[i], &v))
			continue;
		sf = open_vec(&v);
		out = sf ? dump_str(sf, true) : NULL;
		if (out && ASSERT_OK(sfp_json_parse(out, strlen(out), NULL, &root))) {
			const struct sfp_json *fns = sfp_json_get(root, "functions");
			uint64_t addr = 1;

			ASSERT_EQ(sfp_json_len(fns), sfp_sframe__num_funcs(sf));
			ASSERT_OK(sfp_json_u64(sfp_json_get(sfp_json_get(root, "header"),
							    "section_addr"), &addr));
			ASSERT_EQ(addr, v.section_base);
			if (sfp_json_len(fns)) {
				struct sfp_sframe_func f;
				uint64_t st = 0;

				sfp_sframe__func(sf, 0, &f);
				ASSERT_OK(sfp_json_u64(sfp_json_get(sfp_json_at(fns, 0),
								    "start"), &st));
				ASSERT_EQ(st, f.start);
				ASSERT_EQ(sfp_json_len(sfp_json_get(sfp_json_at(fns, 0),
								    "rows")), f.num_rows);
			}
		}
		sfp_json_free(&root);
		free(out);
		sfp_sframe__free(&sf);
		vec_free(&v);
	}
	free_names(names);
}

/*
 * Every truncation of every vector is rejected as corrupt (and never
 * read past), and every single-byte corruption either opens as a valid
 * table that then dumps and looks up cleanly, or fails with -EBADMSG or
 * -EOPNOTSUPP.  A deterministic slice of what the fuzzer does, run under
 * ASan+UBSan by make check.
 */
TEST(sframe_vectors_truncate_and_flip)
{
	size_t n, i, opened = 0, rejected = 0;
	char **names = vec_list(&n);
	FILE *devnull = fopen("/dev/null", "w");

	if (!names || !n || !devnull) {
		test_skip("no vectors or no /dev/null");
		free_names(names);
		if (devnull)
			fclose(devnull);
		return;
	}
	for (i = 0; i < n; i++) {
		struct vec v;
		size_t len, pos;

		if (vec_load(names[i], &v))
			continue;
		for (len = 1; len < v.size; len++) {
			struct sfp_sframe *sf = NULL;
			/* A private buffer of exactly len bytes, so ASan sees
			 * any read past the end. */
			uint8_t *cut = malloc(len);
			int err;

			if (!cut)
				break;
			memcpy(cut, v.content, len);
			err = sfp_sframe__open_mem(cut, len, NULL, &sf);
			free(cut);
			sfp_sframe__free(&sf);
			if (!ASSERT_EQ(err, -EBADMSG)) {
				sfp_test_fail_at(__FILE__, __LINE__, "%s cut at %zu", v.name, len);
				break;
			}
		}
		for (pos = 0; pos < v.size; pos++) {
			struct sfp_sframe *sf = NULL;
			struct sfp_sframe_row r;
			uint8_t save = v.content[pos];
			int err;

			v.content[pos] ^= 0xa5;
			err = sfp_sframe__open_mem(v.content, v.size, NULL, &sf);
			v.content[pos] = save;
			if (!err) {
				uint32_t k, nf = sfp_sframe__num_funcs(sf);

				opened++;
				sfp_sframe__dump(sf, devnull);
				sfp_sframe__dump_json(sf, devnull);
				for (k = 0; k < nf; k++) {
					struct sfp_sframe_func f;

					sfp_sframe__func(sf, k, &f);
					sfp_sframe__find(sf, f.start, &r);
					sfp_sframe__find(sf, f.start + f.size - 1, &r);
				}
			} else {
				rejected++;
				if (err != -EBADMSG && !ASSERT_EQ(err, -EOPNOTSUPP))
					sfp_test_fail_at(__FILE__, __LINE__, "%s byte %zu", v.name, pos);
			}
			sfp_sframe__free(&sf);
		}
		vec_free(&v);
	}
	/* Both outcomes must occur, or the corruption did not bite. */
	ASSERT_GE(opened, 100);
	ASSERT_GE(rejected, 100);
	fclose(devnull);
	free_names(names);
}
