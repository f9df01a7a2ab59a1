// SPDX-License-Identifier: MIT
/* main() for every unit-test binary: runs the TEST()s it was linked with. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/common.h>

#include "test.h"

#define MAX_TESTS 1024

static struct {
	const char *name;
	sfp_test_fn fn;
} tests[MAX_TESTS];
static int num_tests;
static int cur_failed;
static char cur_skip[256];
static const char *cur_name;

void sfp_test_register(const char *name, sfp_test_fn fn)
{
	if (num_tests == MAX_TESTS) {
		fprintf(stderr, "too many tests\n");
		exit(2);
	}
	tests[num_tests].name = name;
	tests[num_tests].fn = fn;
	num_tests++;
}

void sfp_test_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "  %s:%d: %s: ", file, line, cur_name);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	cur_failed++;
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur_skip, sizeof(cur_skip), fmt, ap);
	va_end(ap);
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

const char *test_data_dir(void)
{
	return env_or("SFP_TEST_DATA", "tests/data");
}

const char *test_vectors_dir(void)
{
	return env_or("SFP_TEST_VECTORS", "../shared/testdata/sframe-vectors");
}

const char *test_tmp_dir(void)
{
	static char dir[512];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/%s",
			 env_or("SFP_TEST_TMP", "/tmp"), "sfprof-unit");
		mkdir(dir, 0700);
	}
	return dir;
}

static void log_to_stderr(enum sfp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	if (getenv("SFP_TEST_VERBOSE"))
		fprintf(stderr, "libsfprof: %s\n", msg);
}

int main(int argc, char **argv)
{
	int i, j, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sfp_set_log(log_to_stderr, NULL);
	sfp_set_log_level(SFP_LOG_DEBUG);
	for (i = 0; i < num_tests; i++) {
		bool selected = argc < 2;

		for (j = 1; j < argc; j++)
			if (strstr(tests[i].name, argv[j]))
				selected = true;
		if (!selected)
			continue;
		cur_name = tests[i].name;
		cur_failed = 0;
		cur_skip[0] = 0;
		tests[i].fn();
		if (cur_failed) {
			printf("FAIL: %s\n", cur_name);
			failed++;
		} else if (cur_skip[0]) {
			printf("SKIP: %s (%s)\n", cur_name, cur_skip);
		} else {
			printf("PASS: %s\n", cur_name);
		}
	}
	return failed ? 1 : 0;
}
