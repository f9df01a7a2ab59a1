// SPDX-License-Identifier: MIT
/*
 * sfp_sframe__open_file: raw blobs, sfprof table files (write, read back,
 * corruption), ELF files built by this machine's toolchain.
 */
#include <stdlib.h>
#include <unistd.h>

#include "sframe-test-util.h"

static char *tmp_path(const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", test_tmp_dir(), name) < 0)
		return NULL;
	return p;
}

static int write_bytes(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -errno;
	if (n && fwrite(b, 1, n, f) != n) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -EIO : 0;
}

static struct vec *load_one(const char *name, struct vec *v)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", test_vectors_dir(), name);
	return vec_load(path, v) ? NULL : v;
}

TEST(sframe_file_container_roundtrip)
{
	static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct sfp_sframe *a = NULL, *b = NULL;
	char *path = tmp_path("t.sfpt"), *da = NULL, *db = NULL;
	struct sfp_sframe_info info;
	struct vec v;

	if (!load_one("test-x86_64-2.46.json", &v)) {
		free(path);
		return;
	}
	{
		SFP_OPTS(sfp_sframe_file_opts, fo, .section_addr = v.section_base,
			 .build_id = bid, .build_id_len = sizeof(bid));
		SFP_OPTS(sfp_sframe_opts, o, .section_addr = v.section_base);

		if (!ASSERT_OK(sfp_sframe__write_file(path, v.content, v.size, &fo)) ||
		    !ASSERT_OK(sfp_sframe__open_file(path, NULL, &a)) ||
		    !ASSERT_OK(sfp_sframe__open_mem(v.content, v.size, &o, &b)))
			goto out;
	}
	sfp_sframe__info(a, &info);
	ASSERT_EQ(info.section_addr, v.section_base);
	da = dump_str(a, false);
	db = dump_str(b, false);
	if (da && db)
		text_eq("container dump", v.expected, da);
	sfp_sframe__free(&a);
	/* Flip one section byte: the checksum catches it. */
	{
		size_t n;
		char *raw = read_text(path, &n);

		if (ASSERT_NOT_NULL(raw)) {
			raw[n - 1] ^= 0x40;
			ASSERT_OK(write_bytes(path, raw, n));
			ASSERT_ERR(sfp_sframe__open_file(path, NULL, &a), -EBADMSG);
			raw[n - 1] ^= 0x40;
			raw[8] = 9;	/* container version */
			ASSERT_OK(write_bytes(path, raw, n));
			ASSERT_ERR(sfp_sframe__open_file(path, NULL, &a), -EOPNOTSUPP);
			raw[8] = 1;
			ASSERT_OK(write_bytes(path, raw, n - 1));	/* truncated */
			ASSERT_ERR(sfp_sframe__open_file(path, NULL, &a), -EBADMSG);
			ASSERT_OK(write_bytes(path, raw, 50));
			ASSERT_ERR(sfp_sframe__open_file(path, NULL, &a), -EBADMSG);
			free(raw);
		}
	}
	{
		SFP_OPTS(sfp_sframe_file_opts, bad, .build_id_len = 65,
			 .build_id = bid);
		ASSERT_ERR(sfp_sframe__write_file(path, v.content, v.size, &bad),
			   -EINVAL);
	}
out:
	free(da);
	free(db);
	sfp_sframe__free(&a);
	sfp_sframe__free(&b);
	unlink(path);
	free(path);
	vec_free(&v);
}

TEST(sframe_file_raw_and_errors)
{
	char *path = tmp_path("raw.sframe");
	struct sfp_sframe *sf = NULL;
	struct vec v;
	char *out;

	if (!load_one("test-x86_64-2.45.json", &v)) {
		free(path);
		return;
	}
	ASSERT_OK(write_bytes(path, v.content, v.size));
	{
		SFP_OPTS(sfp_sframe_opts, o, .section_addr = v.section_base);

		if (ASSERT_OK(sfp_sframe__open_file(path, &o, &sf))) {
			out = dump_str(sf, false);
			if (out)
				text_eq("raw file dump", v.expected, out);
			free(out);
		}
	}
	sfp_sframe__free(&sf);
	ASSERT_ERR(sfp_sframe__open_file("/nonexistent/x.sframe", NULL, &sf), -ENOENT);
	ASSERT_ERR(sfp_sframe__open_file(test_tmp_dir(), NULL, &sf), -EINVAL);
	ASSERT_OK(write_bytes(path, "\177ELFjunk", 8));
	ASSERT_ERR(sfp_sframe__open_file(path, NULL, &sf), -EBADMSG);
	ASSERT_OK(write_bytes(path, "", 0));
	if (ASSERT_OK(sfp_sframe__open_file(path, NULL, &sf)))
		ASSERT_EQ(sfp_sframe__num_funcs(sf), 0);
	sfp_sframe__free(&sf);
	unlink(path);
	free(path);
	vec_free(&v);
}

/* A real executable with .sframe from this machine's GNU as; the table
 * must cover main's own code. */
TEST(sframe_file_elf)
{
	char *src = tmp_path("e.c"), *exe = tmp_path("e"), *cmd = NULL;
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	int rc;

	if (!src || !exe || write_bytes(src, "int main(void){return 0;}\n", 26) ||
	    asprintf(&cmd, "gcc -O1 -Wa,--gsframe -o %s %s 2>/dev/null", exe, src) < 0)
		goto out;
	rc = system(cmd);
	if (rc) {
		test_skip("gcc/as without --gsframe");
		goto out;
	}
	if (!ASSERT_OK(sfp_sframe__open_file(exe, NULL, &sf)))
		goto out;
	sfp_sframe__info(sf, &info);
	ASSERT_NE(info.section_addr, 0);
	ASSERT_GE(sfp_sframe__num_funcs(sf), 1);
	ASSERT_TRUE(info.flags & 1);
	sfp_sframe__free(&sf);
	/* An ELF without SFrame: built without --gsframe, and with the
	 * section stripped in case the compiler emits it by default (then
	 * the PT_GNU_SFRAME segment would remain and point at other bytes;
	 * only test the plain case). */
	free(cmd);
	cmd = NULL;
	if (asprintf(&cmd, "gcc -O1 -o %s %s 2>/dev/null && ! readelf -lW %s | grep -q GNU_SFRAME",
		     exe, src, exe) > 0 && !system(cmd))
		ASSERT_ERR(sfp_sframe__open_file(exe, NULL, &sf), -ENOENT);
out:
	sfp_sframe__free(&sf);
	if (exe)
		unlink(exe);
	if (src)
		unlink(src);
	free(cmd);
	free(src);
	free(exe);
}
