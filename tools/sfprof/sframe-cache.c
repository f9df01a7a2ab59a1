// SPDX-License-Identifier: MIT
/* `sfprof sframe cache list|clear`: the cache of tables built from CFI. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sfprof/cfi.h>

#include "cli.h"

static void cache_usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof sframe cache list|clear|dir\n"
		"\n"
		"The cache of SFrame tables built from DWARF CFI, keyed by build-id:\n"
		"$SFPROF_CACHE_DIR, else $XDG_CACHE_HOME/sfprof, else ~/.cache/sfprof.\n"
		"\n"
		"  list    one line per table: size, date, ok/BAD, file name\n"
		"  clear   remove every table\n"
		"  dir     print the cache directory\n");
}

static int print_entry(const struct sfp_sframe_cache_entry *e, void *ctx)
{
	char when[32] = "?";
	time_t t = (time_t)e->mtime;
	struct tm tm;
	int *n = ctx;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	printf("%10llu  %s  %-3s  %s\n", (unsigned long long)e->size, when,
	       e->valid ? "ok" : "BAD", e->file);
	(*n)++;
	return 0;
}

int cmd_sframe_cache(int argc, char **argv)
{
	char dir[4096];
	int err, n = 0;

	if (argc != 2) {
		cache_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cache_usage(stdout);
		return 0;
	}
	err = sfp_sframe_cache__dir(NULL, dir, sizeof(dir));
	if (err) {
		cli_err("no cache directory: %s", sfp_strerror(err));
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "dir")) {
		printf("%s\n", dir);
		return 0;
	}
	if (!strcmp(argv[1], "list")) {
		err = sfp_sframe_cache__list(NULL, print_entry, &n);
		if (err == -ENOENT)
			err = 0;
		if (err) {
			cli_err("%s: %s", dir, sfp_strerror(err));
			return EXIT_USAGE;
		}
		printf("%d table%s in %s\n", n, n == 1 ? "" : "s", dir);
		return 0;
	}
	if (!strcmp(argv[1], "clear")) {
		err = sfp_sframe_cache__clear(NULL);
		if (err < 0) {
			cli_err("%s: %s", dir, sfp_strerror(err));
			return EXIT_USAGE;
		}
		printf("removed %d file%s from %s\n", err, err == 1 ? "" : "s",
		       dir);
		return 0;
	}
	cache_usage(stderr);
	return EXIT_USAGE;
}
