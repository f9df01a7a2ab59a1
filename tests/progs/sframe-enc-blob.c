// SPDX-License-Identifier: MIT
/*
 * Test helper: write the raw .sframe bytes of one shared test vector
 * ({"section_base": N, "content": [bytes]}) to OUT and print the section
 * address, so that shell tests can run the CLI on real sections.
 *
 *   sframe-enc-blob VECTOR.json OUT.bin   → prints section_base
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"

int main(int argc, char **argv)
{
	struct sfp_json *doc = NULL;
	const struct sfp_json *content;
	uint64_t base = 0, b;
	char *text = NULL;
	size_t len = 0, cap = 0, i;
	FILE *f;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s VECTOR.json OUT.bin\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *n = realloc(text, cap = cap ? cap * 2 : 65536);

			if (!n)
				break;
			text = n;
		}
		got = fread(text + len, 1, cap - len, f);
		if (!got)
			break;
		len += got;
	}
	fclose(f);
	if (!text || sfp_json_parse(text, len, NULL, &doc) ||
	    sfp_json_u64(sfp_json_get(doc, "section_base"), &base) ||
	    !(content = sfp_json_get(doc, "content"))) {
		fprintf(stderr, "%s: not a test vector\n", argv[1]);
		goto out;
	}
	f = fopen(argv[2], "wb");
	if (!f) {
		perror(argv[2]);
		goto out;
	}
	for (i = 0; i < sfp_json_len(content); i++) {
		if (sfp_json_u64(sfp_json_at(content, i), &b) || b > 255)
			break;
		fputc((int)b, f);
	}
	if (fclose(f) || i != sfp_json_len(content)) {
		fprintf(stderr, "%s: bad content byte %zu\n", argv[1], i);
		goto out;
	}
	printf("%llu\n", (unsigned long long)base);
	rc = 0;
out:
	sfp_json_free(&doc);
	free(text);
	return rc;
}
