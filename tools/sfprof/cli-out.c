// SPDX-License-Identifier: MIT
/*
 * A subcommand's -o file through common/outfile.h: written beside its
 * path and renamed into place when the job succeeded, so a failed job
 * leaves what was there before; '-' is standard output.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "common/outfile.h"

FILE *cli_out_open(struct cli_out *o, const char *path)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return o->f;
	}
	/* an ordinary file's mode: what fopen() would have made */
	err = sfp_outfile_open(&o->of, path, 0, 0666);
	if (err) {
		cli_err("cannot create %s: %s", path, strerror(-err));
		o->io_failed = true;
		return NULL;
	}
	o->f = sfp_outfile_stdio(&o->of);
	if (!o->f) {
		cli_err("%s: out of memory", path);
		sfp_outfile_abort(&o->of);
		o->io_failed = true;
	}
	return o->f;
}

int cli_out_finish(struct cli_out *o, int err)
{
	if (o->f == stdout) {
		if (fflush(stdout) && !err) {
			err = -errno;
			o->io_failed = true;
			cli_err("writing standard output: %s", strerror(errno));
		}
		return err;
	}
	if (err) {
		/* the job failed; if it was a write, say which errno */
		if (o->of.werr) {
			err = o->of.werr;
			o->io_failed = true;
			cli_err("cannot write %s: %s", o->path, strerror(-err));
		}
		sfp_outfile_abort(&o->of);
		return err;
	}
	err = sfp_outfile_commit(&o->of);
	if (err) {
		o->io_failed = true;
		cli_err("cannot write %s: %s", o->path, strerror(-err));
	}
	return err;
}

bool cli_out_is_input(const char *out, const char *in)
{
	struct stat so, si;

	if (!strcmp(out, "-") || !strcmp(in, "-") || stat(out, &so) ||
	    stat(in, &si) || !S_ISREG(so.st_mode))
		return false;
	if (so.st_dev != si.st_dev || so.st_ino != si.st_ino)
		return false;
	cli_err("-o %s is the input file %s; not replacing it (give another "
		"output name)", out, in);
	return true;
}
