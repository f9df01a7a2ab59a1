/* SPDX-License-Identifier: MIT */
/*
 * The function name GNU addr2line (BFD) gives an address that DWARF has
 * line numbers for but no function (assembly): perf 6.1 names such a
 * frame's "(inlined)" line by it (tools/sfprof/script.c).
 */
#ifndef SFP_SYMBOLS_BFD_NAME_H
#define SFP_SYMBOLS_BFD_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

struct sfp_symbolizer_dso;
struct sfp_inline_frame;

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

/*
 * sfp_symbolizer_dso__inlines() with the names GNU addr2line gives the
 * levels (DWARF's, but in C++ and the like the symbol table's for an
 * innermost function without a linkage name, the first time addr2line
 * meets it: see sfp_dwarf_a2l_names()).  Stateful as addr2line is: ask
 * each address once, in the order perf meets them.
 */
SFP_HIDDEN int sfp_symbolizer_dso__a2l_inlines(struct sfp_symbolizer_dso *dso,
					       uint64_t vaddr,
					       struct sfp_inline_frame *frames,
					       size_t max);

/* The same from the ELF e's own tables (.symtab, else .dynsym); *start
 * (may be NULL) the symbol's address. */
struct sfp_elf;
SFP_HIDDEN const char *sfp_elf_bfd_name(struct sfp_elf *e, uint64_t vaddr,
					uint64_t *start);

#endif /* SFP_SYMBOLS_BFD_NAME_H */
