/* SPDX-License-Identifier: MIT */
/*
 * Output files that are never half-written, never truncated before the
 * job ran and never followed through a planted symlink.
 *
 * A regular output is written to a temporary file beside it
 * ("PATH.tmp-XXXXXX", created O_EXCL, so no link is followed) and renamed
 * over PATH when it is complete; a failed job removes only that
 * temporary.  rename() replaces a symlink at PATH instead of writing
 * through it, and an input read from PATH (mapped, or open) keeps its old
 * contents: `convert -i F -o F` works.  A target that is not a regular
 * file (a device such as /dev/null or /dev/full, a FIFO, a terminal) or
 * that is this process's standard output or error (`-o /dev/stdout`,
 * whatever it points to) is written in place and never removed.
 *
 * With SFP_OUTFILE_KEEP_OLD an existing non-empty PATH (or a symlink
 * there) is renamed to PATH.old when the new file takes its place, as
 * perf keeps perf.data.old.
 *
 * A writer that must leave a readable file behind if it is killed (a
 * recording) calls sfp_outfile_publish() once the job really started:
 * the temporary takes PATH's place then and is written on where it is.
 */
#ifndef SFP_OUTFILE_H
#define SFP_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

#include "common/internal.h"

/* Existing PATH becomes PATH.old (perf's perf.data.old). */
#define SFP_OUTFILE_KEEP_OLD 0x1
/* The writer seeks (pwrite of a header): refuse pipes with -ESPIPE. */
#define SFP_OUTFILE_SEEKABLE 0x2
/* No fsync at commit: a stream of small files that a crash of the
 * machine may lose (the agent's windows), where a disk flush per file
 * cost more than making it.  Still renamed into place whole. */
#define SFP_OUTFILE_NO_SYNC 0x4

struct sfp_outfile {
	char *path;		/* what the user named */
	char *tmp;		/* the temporary; NULL when written in place */
	int fd;
	FILE *f;		/* sfp_outfile_stdio()'s stream, if asked for */
	unsigned int flags;
	bool in_place;		/* device, FIFO, our stdout: never removed */
	bool published;		/* tmp now lives at path */
	int werr;		/* first write error seen through f (-errno) */
};

/*
 * Create the output for PATH with permissions MODE (less the umask).
 * Return: 0 or -errno (-EISDIR: PATH is a directory; -ESPIPE: a pipe
 * with SFP_OUTFILE_SEEKABLE; -EEXIST: with SFP_OUTFILE_KEEP_OLD, PATH.old
 * is a directory that PATH could not be renamed onto, said through the
 * log); nothing is created or changed on error.
 */
SFP_HIDDEN int sfp_outfile_open(struct sfp_outfile *o, const char *path,
				unsigned int flags, mode_t mode);

/*
 * A stdio stream on the output (buffered; write errors are kept with
 * their errno for sfp_outfile_commit()).  NULL: out of memory.
 */
SFP_HIDDEN FILE *sfp_outfile_stdio(struct sfp_outfile *o);

/* Move the unfinished file to PATH now (PATH.old kept as asked). */
SFP_HIDDEN int sfp_outfile_publish(struct sfp_outfile *o);

/*
 * Finish: flush, fsync (unless SFP_OUTFILE_NO_SYNC), close, and rename
 * into place.  On error the
 * temporary is removed (a published or in-place file is left as it is).
 * Return: 0 or -errno of the first failure (a write error seen by the
 * stream first).  The struct is released either way.
 */
SFP_HIDDEN int sfp_outfile_commit(struct sfp_outfile *o);

/* Give up: close; remove the temporary unless it was published. */
SFP_HIDDEN void sfp_outfile_abort(struct sfp_outfile *o);

/* The name being written (the temporary until published). */
static inline const char *sfp_outfile_cur_name(const struct sfp_outfile *o)
{
	return o->tmp && !o->published ? o->tmp : o->path;
}

#endif /* SFP_OUTFILE_H */
