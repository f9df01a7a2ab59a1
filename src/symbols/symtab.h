/* SPDX-License-Identifier: MIT */
/*
 * Internals of the symbolizer: a sorted symbol table per source, the
 * parsers that fill it (ELF symbol tables, PLT stubs, kallsyms, perf maps),
 * debug-file discovery and DWARF access.
 *
 * A table is filled with sfp_symtab_add() in any order, then
 * sfp_symtab_finish() sorts it, keeps one symbol per start address (the
 * alias perf would show) and closes zero sizes up to the next symbol.
 * Lookups are a binary search over the finished array.
 */
#ifndef SFP_SYMBOLS_SYMTAB_H
#define SFP_SYMBOLS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/symbols.h>

#include "common/internal.h"

struct sfp_elf;

/* Bump allocator for names we make or copy; freed all at once. */
struct sfp_strpool {
	struct sfp_strchunk *head;
};

SFP_HIDDEN const char *sfp_strpool_add(struct sfp_strpool *p, const char *s,
				       size_t len);
SFP_HIDDEN void sfp_strpool_free(struct sfp_strpool *p);

struct sfp_sym {
	uint64_t start;
	uint64_t size;		/* SFP_SYM_SIZE_GUESSED: upper bound until
				 * finish() trims it to the next symbol */
	const char *name;	/* raw name, owned elsewhere (ELF or pool) */
	const char *demangled;	/* set on first lookup; NULL not yet */
	const char *dso;	/* per-symbol DSO name (kernel modules), or NULL */
	uint32_t flags;		/* SFP_SYM_* */
	uint32_t seq;		/* order of addition (alias tie-break) */
};

/* A finished table's symbol as the symbol cache keeps it. */
struct sfp_psym {
	uint64_t start;
	uint64_t size;
	uint32_t name;		/* offset in the names part */
	uint32_t flags;
};

struct sfp_symtab {
	struct sfp_sym *syms;
	size_t nr;
	size_t cap;
	struct sfp_strpool pool;
	/*
	 * Or, read back from the symbol cache (symtab-packed.c): nr packed
	 * symbols used where they are mapped, and a struct sfp_sym made for
	 * each on its first lookup (syms stays NULL).
	 */
	const struct sfp_psym *psyms;
	const char *pnames;
	void *pmap;		/* the mapping, pmap_len bytes */
	size_t pmap_len;
	struct sfp_sym **mat;	/* made symbols, open addressing by index
				 * (by hand: see made() for why) */
	size_t mat_cap, mat_n;
	/*
	 * Or, a JIT's table (sfp_symtab_finish_layered()): syms in the order
	 * the JIT wrote them, and the address ranges each one names now.
	 */
	struct sfp_symseg *segs;
	size_t nsegs;
	bool layered;
};

/* [lo, hi) is named by syms[sym]: the newest entry that covers it. */
struct sfp_symseg {
	uint64_t lo, hi;
	uint32_t sym;
};

/* Internal flag (never handed out): module symbol of unknown extent. */
#define SFP_SYM_NO_EXTENT (1u << 31)

/* More symbols than this in one table is taken as corrupt input. */
#define SFP_SYMTAB_MAX (64u << 20)

/* Room for @more further symbols: 0, -E2BIG or -ENOMEM. */
SFP_HIDDEN int sfp_symtab_reserve(struct sfp_symtab *t, size_t more);
SFP_HIDDEN int sfp_symtab_add(struct sfp_symtab *t, uint64_t start,
			      uint64_t size, const char *name, uint32_t flags);
SFP_HIDDEN void sfp_symtab_finish(struct sfp_symtab *t);
/*
 * Finish a JIT's table, whose entries overlap where the JIT replaced
 * code (symtab-layers.c): an address is named by the newest entry (the
 * last added) that covers it, whatever older entries cover it too, and
 * an older entry keeps naming the parts of it no newer entry covers.
 * A size of 0 covers its start only.  Return: 0; -ENOMEM (t then finds
 * nothing).
 */
SFP_HIDDEN int sfp_symtab_finish_layered(struct sfp_symtab *t);
SFP_HIDDEN struct sfp_sym *sfp_symtab_layered_find(struct sfp_symtab *t,
						   uint64_t addr);
SFP_HIDDEN struct sfp_sym *sfp_symtab_find(struct sfp_symtab *t,
					   uint64_t addr);
SFP_HIDDEN void sfp_symtab_free(struct sfp_symtab *t);

/*
 * The packed form of finished table t: part 0 a head and the symbols
 * (malloc()ed into *p0, *n0 bytes), part 1 the names (*p1, *n1).
 * Return: 0; -ENOMEM; -E2BIG (a name table over 4 GiB).
 */
SFP_HIDDEN int sfp_symtab_pack(const struct sfp_symtab *t, void **p0,
			       size_t *n0, void **p1, size_t *n1);
/*
 * Make t (empty) the packed table of the mapping map (len bytes: part 0
 * of n0 bytes, then part 1); t unmaps it when freed.  Every field is
 * checked: counts, sizes, sorted starts, names inside part 1 (whose last
 * byte must be NUL).  Return: 0; -EBADMSG (t is left empty and the
 * mapping with the caller).
 */
SFP_HIDDEN int sfp_symtab_unpack(struct sfp_symtab *t, void *map, size_t n0,
				 size_t n1);
/* sfp_symtab_find() of a packed table. */
SFP_HIDDEN struct sfp_sym *sfp_symtab_packed_find(struct sfp_symtab *t,
						  uint64_t addr);
SFP_HIDDEN void sfp_symtab_packed_free(struct sfp_symtab *t);
/* Give back the resident pages of a table read from the cache (they
 * are the file's, read again when next looked at); return the bytes. */
SFP_HIDDEN size_t sfp_symtab_packed_release_pages(struct sfp_symtab *t);

#define SFP_LOAD_SYMTAB 1u
#define SFP_LOAD_DYNSYM 2u

/*
 * Function symbols (STT_FUNC, STT_GNU_IFUNC, defined, non-zero address)
 * of e's .symtab and/or .dynsym (which: SFP_LOAD_*).  Names point into
 * e's data, so e must outlive the table.
 * Return: number added; -EBADMSG; -ENOMEM.
 */
SFP_HIDDEN int sfp_symtab_load_elf(struct sfp_symtab *t, struct sfp_elf *e,
				   unsigned int which);
SFP_HIDDEN bool sfp_elf_has_symtab(const struct sfp_elf *e);

/*
 * Synthetic "func@plt" symbols for the x86-64 PLT stubs (.plt, .plt.sec,
 * .plt.got) of e, named after the JUMP_SLOT/GLOB_DAT relocation of the
 * GOT slot each stub jumps through.  Return: number added (0 when none
 * or another machine); -ENOMEM.
 */
SFP_HIDDEN int sfp_symtab_load_plt(struct sfp_symtab *t, struct sfp_elf *e);

/* What sfp_gopclntab_parse() found (for messages and the tests). */
struct sfp_gopclntab_stats {
	unsigned int version;	/* 116, 118 or 120: the layout's Go version */
	bool text_guessed;	/* no text start in the header: .text's */
	uint64_t text_start;
	uint64_t nfunc;		/* functions the table lists */
	uint64_t added;		/* symbols added */
	uint64_t bad;		/* damaged entries skipped (and warned) */
};

/*
 * The functions of a Go function table (gopclntab.c: Go 1.16+ layouts)
 * of size bytes at data, in the file's byte order (swap: not ours), into
 * t, named as the table names them (`pkg.(*T).Method`), each up to the
 * next.  text_fallback: the text start when the header has none.  what
 * and file_off name the table in messages.  Damaged entries are skipped,
 * counted in st (may be NULL) and warned once.  Return: number added;
 * -EBADMSG a damaged header; -ENOTSUP an older layout; -ENOMEM; -E2BIG.
 */
SFP_HIDDEN int sfp_gopclntab_parse(struct sfp_symtab *t, const uint8_t *data,
				   size_t size, bool swap,
				   uint64_t text_fallback, const char *what,
				   uint64_t file_off,
				   struct sfp_gopclntab_stats *st);
/* elf/gopclntab.h's sfp_gotab_find() then _parse() into t.  Return: as those. */
SFP_HIDDEN int sfp_gopclntab_load(struct sfp_symtab *t, struct sfp_elf *e,
				  struct sfp_gopclntab_stats *st);

/*
 * The ELF inside e's .gnu_debugdata (xz).  Return: 0; -ENOENT no such
 * section; -EBADMSG bad xz or ELF; -ENOMEM.
 */
SFP_HIDDEN int sfp_minidebuginfo_open(struct sfp_elf *e, struct sfp_elf **out);

/*
 * Parse a perf map ("START SIZE name\n", hex, no 0x needed) into t.
 * Bad lines are skipped with a warning.  Return: entries added; -ENOMEM.
 */
SFP_HIDDEN int sfp_perfmap_parse(struct sfp_symtab *t, const char *buf,
				 size_t len, const char *what);

/* What a jitdump held (jitdump.c). */
struct sfp_jitdump_stats {
	uint32_t version;
	uint64_t flags;		/* bit 0: CPU-counter timestamps */
	uint64_t records, loads, moves, moves_unmatched, debug_info,
		 unwinding_info, unknown, bad;
	bool closed;		/* a CLOSE record came */
	bool truncated;		/* the last record runs past the end */
	size_t truncated_at;	/* its offset */
};

/*
 * Parse a jitdump (jit-PID.dump) into t: a symbol per code load and per
 * move, in file order (finish it with sfp_symtab_finish_layered()).
 * Bad records are skipped with a warning; a record cut short ends the
 * parse (st says where).  Return: 0; -EBADMSG not a jitdump (bad
 * header); -ENOMEM.
 */
SFP_HIDDEN int sfp_jitdump_parse(struct sfp_symtab *t, const uint8_t *buf,
				 size_t len, const char *what,
				 struct sfp_jitdump_stats *st);

/*
 * Parse /proc/kallsyms text (text symbols only) and /proc/modules text
 * (may be NULL) into t.  Return: entries added; -ENOMEM.
 */
SFP_HIDDEN int sfp_kallsyms_parse(struct sfp_symtab *t, const char *buf,
				  size_t len, const char *modules,
				  size_t modules_len);

/*
 * After sfp_symtab_finish() of a kallsyms table: a module symbol of
 * unknown extent whose successor is another module's stops after a page.
 */
SFP_HIDDEN void sfp_kallsyms_fixup(struct sfp_symtab *t);

/* Read a whole (small, maybe /proc) file.  Return: 0 or -errno. */
SFP_HIDDEN int sfp_read_file(const char *path, size_t max, char **buf,
			     size_t *len);

/*
 * Parse a hex number at *p (optional 0x, at most 16 digits) up to end and
 * move *p past it.  Return: false when there is no digit or too many.
 * Shared by the kallsyms and perf-map line parsers.
 */
SFP_HIDDEN bool sfp_sym_parse_hex(const char **p, const char *end, uint64_t *v);

#endif /* SFP_SYMBOLS_SYMTAB_H */
