// SPDX-License-Identifier: MIT
/*
 * Corpus replay without libFuzzer: runs LLVMFuzzerTestOneInput over every
 * file named on the command line.  `make check` uses it (under ASan+UBSan
 * in the sanitizer tier); `make fuzz` links the same targets with
 * libFuzzer instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs larger than this are not interesting and only slow the replay. */
#define MAX_INPUT (16u << 20)

int main(int argc, char **argv)
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		size_t len;

		if (!f) {
			perror(argv[i]);
			return 2;
		}
		buf = malloc(MAX_INPUT);
		if (!buf) {
			fclose(f);
			return 2;
		}
		len = fread(buf, 1, MAX_INPUT, f);
		fclose(f);
		/* Hand over an exact-size copy so ASan sees overreads. */
		uint8_t *exact = malloc(len ? len : 1);
		if (!exact) {
			free(buf);
			return 2;
		}
		for (size_t k = 0; k < len; k++)
			exact[k] = buf[k];
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
