/* SPDX-License-Identifier: MIT */
/*
 * A lazy view of kallsyms: an index of the text symbols' addresses and
 * line offsets, built in one pass over the text without copying names or
 * building a symbol table; a lookup materializes just the symbol it finds,
 * with the name, size, module and flags that sfp_kallsyms_parse() +
 * sfp_symtab_finish() + sfp_kallsyms_fixup() would have given it.
 *
 * Served only when the text symbols come in address order (as the kernel
 * writes them); otherwise the caller parses the text whole.
 */
#ifndef SFP_SYMBOLS_KALLSYMS_H
#define SFP_SYMBOLS_KALLSYMS_H

#include "symbols/symtab.h"

struct sfp_kallsyms_index;

/*
 * Index kallsyms text buf (len bytes) and /proc/modules text (may be
 * NULL).  On success the index owns both buffers (malloc()ed; freed with
 * the index).  Return: 0; -EAGAIN the text cannot be served lazily (not in
 * address order, no text symbols, ...: the caller keeps the buffers and
 * parses them with sfp_kallsyms_parse()); -ENOMEM.
 */
SFP_HIDDEN int sfp_kallsyms_index__new(char *buf, size_t len, char *modules,
				       size_t modules_len,
				       struct sfp_kallsyms_index **out);

/*
 * Index the kallsyms file at path (mapped if it is a regular file with a
 * size, else read) with the module list at modules_path (may be NULL or
 * unreadable: sizes guessed).  cache_dir (may be NULL): where the index
 * of a mapped file is kept between runs.  Return: 0; -EAGAIN the text
 * cannot be served lazily or the file is not a regular file (the caller
 * reads and parses it whole, and reports what is wrong); -errno from
 * open/read; -ENOMEM.
 */
SFP_HIDDEN int sfp_kallsyms_index__open(const char *path,
					const char *modules_path,
					const char *cache_dir,
					struct sfp_kallsyms_index **out);

/*
 * The symbol holding addr, or NULL.  *tab: the table whose pool
 * sfp_symbolizer_fill() may use for this symbol.  The symbol stays valid
 * as long as the index.
 */
SFP_HIDDEN struct sfp_sym *sfp_kallsyms_index__find(struct sfp_kallsyms_index *k,
						    uint64_t addr,
						    struct sfp_symtab **tab);

/*
 * Give back the resident pages of the mapped kallsyms file and of the
 * cached index (twenty containers' system calls touched 0.6 MB more of
 * them in the agent); read again when next looked at.  Return: bytes of
 * mappings given back (0 for a text read into memory).
 */
SFP_HIDDEN size_t sfp_kallsyms_index__release_pages(struct sfp_kallsyms_index *k);

SFP_HIDDEN void sfp_kallsyms_index__free(struct sfp_kallsyms_index **k);

#endif /* SFP_SYMBOLS_KALLSYMS_H */
