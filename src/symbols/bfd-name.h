/* SPDX-License-Identifier: MIT */
/*
 * The function name GNU addr2line (BFD) gives an address that DWARF has
 * line numbers for but no function (assembly): perf 6.1 names such a
 * frame's "(inlined)" line by it (tools/sfprof/script.c).
 */
#ifndef SFP_SYMBOLS_BFD_NAME_H
#define SFP_SYMBOLS_BFD_NAME_H

#include <stdint.h>

#include "common/internal.h"

struct sfp_symbolizer_dso;

/*
 * The raw name of the symbol BFD's _bfd_elf_find_function() picks for
 * link-time address vaddr of dso, from the symbol table addr2line reads
 * (the debug file's .symtab when perf's symbols came from it, else the
 * file's .symtab, else its .dynsym), or NULL.  Its rules: symbols of the
 * section holding vaddr that are not sections, files, objects or TLS;
 * the nearest start at or below vaddr; among equal starts one that
 * reaches vaddr, a function before an untyped label, the smaller size,
 * else the first in table order.  Valid while dso is.
 */
SFP_HIDDEN const char *sfp_symbolizer_dso__bfd_name(struct sfp_symbolizer_dso *dso,
						    uint64_t vaddr);

/* The same from the ELF e's own tables (.symtab, else .dynsym). */
struct sfp_elf;
SFP_HIDDEN const char *sfp_elf_bfd_name(struct sfp_elf *e, uint64_t vaddr);

#endif /* SFP_SYMBOLS_BFD_NAME_H */
