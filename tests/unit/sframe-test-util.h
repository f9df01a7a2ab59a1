/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for SFrame: load the shared vectors (with the library's own
 * JSON parser), build sections byte by byte, capture dumps.
 */
#ifndef SFP_SFRAME_TEST_UTIL_H
#define SFP_SFRAME_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/sframe.h>

#include "common/json.h"
#include "test.h"

struct vec {
	char name[1024];
	uint64_t section_base;
	uint8_t *content;
	size_t size;
	char *expected;		/* objdump text after the "Contents" line */
};

static inline void vec_free(struct vec *v)
{
	free(v->content);
	free(v->expected);
	memset(v, 0, sizeof(*v));
}

static inline char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t r;

		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = (cap + 4096) * 2);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (!r)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Return: 0, or -errno; on failure the test has been failed. */
static inline int vec_load(const char *path, struct vec *v)
{
	static const char marker[] = "Contents of the SFrame section .sframe:\n";
	const struct sfp_json *content, *gt;
	struct sfp_json *root = NULL;
	const char *g, *p;
	size_t len, i;
	char *text;
	int err;

	memset(v, 0, sizeof(*v));
	p = strrchr(path, '/');
	snprintf(v->name, sizeof(v->name), "%.*s", (int)sizeof(v->name) - 1,
		 p ? p + 1 : path);
	text = read_text(path, &len);
	if (!ASSERT_NOT_NULL(text))
		return -EIO;
	err = sfp_json_parse(text, len, NULL, &root);
	free(text);
	if (!ASSERT_OK(err))
		return err;
	content = sfp_json_get(root, "content");
	gt = sfp_json_get(root, "groundtruth");
	err = -EINVAL;
	if (!ASSERT_OK(sfp_json_u64(sfp_json_get(root, "section_base"),
				    &v->section_base)) ||
	    !ASSERT_TRUE(content && content->type == SFP_JSON_ARRAY) ||
	    !ASSERT_OK(sfp_json_str(gt, &g, NULL)))
		goto out;
	v->size = sfp_json_len(content);
	v->content = malloc(v->size ? v->size : 1);
	if (!v->content)
		goto out;
	for (i = 0; i < v->size; i++) {
		uint64_t b;

		if (sfp_json_u64(sfp_json_at(content, i), &b) || b > 255) {
			ASSERT_TRUE(!"content byte out of range");
			goto out;
		}
		v->content[i] = (uint8_t)b;
	}
	p = strstr(g, marker);
	v->expected = strdup(p ? p + strlen(marker) : "");
	err = v->expected ? 0 : -ENOMEM;
out:
	sfp_json_free(&root);
	return err;
}

/* Names of the vector files, sorted; NULL-terminated; free with
 * free_names(). */
static inline int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline char **vec_list(size_t *count)
{
	DIR *d = opendir(test_vectors_dir());
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	*count = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **p;

		if (l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		p = realloc(names, (n + 2) * sizeof(*names));
		if (!p)
			break;
		names = p;
		if (asprintf(&names[n], "%s/%s", test_vectors_dir(),
			     de->d_name) < 0)
			break;
		n++;
		names[n] = NULL;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(*names), cmp_str);
	*count = n;
	return names;
}

static inline void free_names(char **names)
{
	size_t i;

	for (i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* Dump into a malloc'd string. */
static inline char *dump_str(const struct sfp_sframe *sf, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (json)
		sfp_sframe__dump_json(sf, f);
	else
		sfp_sframe__dump(sf, f);
	fclose(f);
	return buf;
}

/* Report the first differing line of two texts as a test failure. */
static inline bool text_eq(const char *what, const char *exp, const char *act)
{
	size_t line = 1;
	const char *e = exp, *a = act;

	if (!strcmp(exp, act))
		return true;
	while (*e && *a && *e == *a) {
		if (*e == '\n')
			line++;
		e++;
		a++;
	}
	while (e > exp && e[-1] != '\n') {
		e--;
		a--;
	}
	sfp_test_fail_at(__FILE__, __LINE__,
			 "%s: dump differs at line %zu:\n  expected: %.*s\n  actual:   %.*s",
			 what, line, (int)strcspn(e, "\n"), e,
			 (int)strcspn(a, "\n"), a);
	return false;
}

/* --- Building sections in tests (little-endian unless swapped). --- */

struct sbuf {
	uint8_t b[4096];
	size_t n;
	bool be;
};

static inline void sb_u8(struct sbuf *s, uint8_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = v;
}

static inline void sb_uN(struct sbuf *s, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		sb_u8(s, (uint8_t)(s->be ? v >> (8 * (bytes - 1 - i))
					 : v >> (8 * i)));
}

static inline void sb_put_at(struct sbuf *s, size_t off, uint64_t v, int bytes)
{
	size_t save = s->n;

	s->n = off;
	sb_uN(s, v, bytes);
	s->n = save;
}

/* Header with counts to be patched later. */
static inline void sb_header(struct sbuf *s, uint8_t ver, uint8_t flags,
			     uint8_t abi, int8_t ffp, int8_t fra,
			     uint32_t nfdes, uint32_t nfres, uint32_t fre_len,
			     uint32_t fdeoff, uint32_t freoff)
{
	sb_uN(s, 0xdee2, 2);
	sb_u8(s, ver);
	sb_u8(s, flags);
	sb_u8(s, abi);
	sb_u8(s, (uint8_t)ffp);
	sb_u8(s, (uint8_t)fra);
	sb_u8(s, 0);
	sb_uN(s, nfdes, 4);
	sb_uN(s, nfres, 4);
	sb_uN(s, fre_len, 4);
	sb_uN(s, fdeoff, 4);
	sb_uN(s, freoff, 4);
}

#endif /* SFP_SFRAME_TEST_UTIL_H */
