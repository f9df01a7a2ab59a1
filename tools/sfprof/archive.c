// SPDX-License-Identifier: MIT
/*
 * `sfprof archive`: pack what a recording needs to be read on another
 * machine, as `perf archive` does: a tar.bz2 of the build-id cache
 * entries (the .build-id/xx/rest links and the <path>/<build-id>
 * directories they point at) of every DSO the file names in its
 * HEADER_BUILD_ID section.  Unpacked into a build-id directory, or given
 * to `sfprof report --symfs`, it names the frames after the binaries (or
 * their containers) are gone.  tar(1) does the packing, from a file list.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "cli.h"
#include "perf/buildid-cache.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof archive [-i FILE] [-o ARCHIVE] [--buildid-dir DIR]\n"
"\n"
"Pack the build-id cache entries of the DSOs a perf.data file names (its\n"
"build-id list) into a tar.bz2, like perf archive, for reading the\n"
"recording elsewhere: unpack it into a build-id directory\n"
"(tar xf ARCHIVE -C ~/.debug) or into any DIR and run\n"
"'sfprof report --symfs DIR' (or --buildid-dir DIR).\n"
"\n"
"  -i, --input FILE       perf.data file (default: perf.data)\n"
"  -o, --output ARCHIVE   archive to write (default: FILE.tar.bz2)\n"
"      --buildid-dir DIR  build-id cache to read (default $PERF_BUILDID_DIR,\n"
"                         else ~/.debug)\n"
"  -h, --help             this text\n"
"Exit: 0 ok, 1 nothing to pack or tar failed, 2 usage or I/O error.\n");
}

/* Add a cache entry's link and directory (relative to dir) to the list. */
static int add_entry(FILE *list, const char *dir, const uint8_t *id,
		     size_t len)
{
	char link[PATH_MAX], target[PATH_MAX], real_dir[PATH_MAX];
	size_t dl;

	if (sfp_buildid_cache_path(dir, id, len, NULL, link, sizeof(link)) ||
	    !realpath(dir, real_dir) || !realpath(link, target))
		return -ENOENT;
	dl = strlen(real_dir);
	if (strncmp(target, real_dir, dl) || target[dl] != '/')
		return -ENOENT;	/* points out of the cache: not ours */
	fprintf(list, "%s\n%s\n", link + strlen(dir) + 1, target + dl + 1);
	return 0;
}

static int run_tar(const char *out, const char *dir, const char *list)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("tar", "tar", "-c", "-j", "-f", out, "-C", dir, "-T", list,
		       (char *)NULL);
		fprintf(stderr, "sfprof archive: cannot run tar: %s\n",
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

int cmd_archive(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "buildid-dir", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "perf.data", *output = NULL, *bdir = NULL;
	const struct sfp_perf_header_info *h;
	struct sfp_perf_reader *rd = NULL;
	char dir[PATH_MAX], list[] = "/tmp/sfprof-archive.XXXXXX";
	char *outbuf = NULL;
	size_t i, nr = 0, missing = 0;
	FILE *lf = NULL;
	int c, fd, err, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'B':
			bdir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_err("archive: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (bdir)
		sfp_buildid_set_dirs(bdir, NULL);
	if (sfp_buildid_dir(dir, sizeof(dir))) {
		cli_err("archive: no build-id directory (set HOME or give "
			"--buildid-dir)");
		return EXIT_USAGE;
	}
	if (!output) {
		if (asprintf(&outbuf, "%s.tar.bz2", input) < 0)
			return EXIT_USAGE;
		output = outbuf;
	}
	err = sfp_perf_reader__open(input, NULL, &rd);
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		ret = err == -EBADMSG ? EXIT_INVALID : EXIT_USAGE;
		goto out;
	}
	h = sfp_perf_reader__header(rd);
	fd = mkstemp(list);
	if (fd < 0 || !(lf = fdopen(fd, "w"))) {
		cli_err("archive: temporary file: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		list[0] = 0;
		ret = EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < h->nr_build_ids; i++) {
		if (!add_entry(lf, dir, h->build_ids[i].id,
			       h->build_ids[i].size))
			nr++;
		else
			missing++;
	}
	if (fclose(lf)) {
		lf = NULL;
		cli_err("archive: %s: %s", list, strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	lf = NULL;
	if (!nr) {
		cli_err("archive: none of the %zu build-ids of %s is in %s",
			h->nr_build_ids, input, dir);
		ret = EXIT_INVALID;
		goto out;
	}
	err = run_tar(output, dir, list);
	if (err) {
		cli_err("archive: tar failed writing %s", output);
		unlink(output);
		ret = EXIT_INVALID;
		goto out;
	}
	fprintf(stderr, "sfprof archive: %zu DSOs from %s packed into %s",
		nr, dir, output);
	if (missing)
		fprintf(stderr, " (%zu named by the file are not in the cache)",
			missing);
	fprintf(stderr, "\nRead it elsewhere: tar xf %s -C DIR; "
		"sfprof report -i %s --symfs DIR\n", output, input);
out:
	if (lf)
		fclose(lf);
	if (list[0])
		unlink(list);
	sfp_perf_reader__free(&rd);
	free(outbuf);
	return ret;
}
