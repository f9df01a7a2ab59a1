/* SPDX-License-Identifier: MIT */
/*
 * Naming JIT frames from a jitdump (jit-PID.dump) the process mapped;
 * for the profile loader, which learns the file's path from the
 * recording's MMAP records.
 */
#ifndef SFP_SYMBOLS_JITDUMP_H
#define SFP_SYMBOLS_JITDUMP_H

#include <stdint.h>

#include <sfprof/symbols.h>

#include "common/internal.h"

/*
 * An address in JIT code of process pid named from the jitdump at path
 * (the file the process mapped, jit-PID.dump): the newest code-load (or
 * move) record covering addr.  The file is read again when it has grown.
 * Return: 0; -ENOENT no such file or no record covers addr; -EBADMSG not
 * a jitdump; -ENOMEM.
 */
SFP_HIDDEN int sfp_symbolizer__jitdump(struct sfp_symbolizer *s, int pid,
				       const char *path, uint64_t addr,
				       struct sfp_symbol *out);

/*
 * A JIT frame of process pid as every reader names it: from the jitdump
 * (dump, NULL: none mapped) when a record covers addr, else from
 * perf-PID.map (sfp_symbolizer__jit()).  Return: as those.
 */
SFP_HIDDEN int sfp_symbolizer__jit_frame(struct sfp_symbolizer *s, int pid,
					 const char *dump, uint64_t addr,
					 struct sfp_symbol *out);

#endif /* SFP_SYMBOLS_JITDUMP_H */
