// SPDX-License-Identifier: MIT
/*
 * jitdump files (jit-PID.dump), written by JITs for perf (V8's
 * --perf-prof, JVMTI agents): a file header, then records, each with a
 * type, a total size and a timestamp.  The layout is the one the kernel's
 * tools/perf/util/jitdump.h describes (learnt from it, not copied):
 *
 *   header  u32 magic "JiTD" (0x4A695444 in the writer's byte order),
 *           u32 version, u32 header size, u32 ELF machine, u32 pad,
 *           u32 pid, u64 timestamp, u64 flags (bit 0: timestamps are the
 *           CPU's counter, else CLOCK_MONOTONIC)
 *   record  u32 id, u32 total size (with this header), u64 timestamp
 *     0 CODE_LOAD   u32 pid, u32 tid, u64 vma, u64 code_addr,
 *                   u64 code_size, u64 code_index, name (NUL), code bytes
 *     1 CODE_MOVE   u32 pid, u32 tid, u64 vma, u64 old_code_addr,
 *                   u64 new_code_addr, u64 code_size, u64 code_index
 *     2 DEBUG_INFO  line tables (not used for names)
 *     3 CLOSE       the end
 *     4 UNWINDING_INFO  an .eh_frame/.eh_frame_hdr blob for the code
 *                   loaded next (counted; see docs/jit.md)
 *
 * Every load (and move) becomes a symbol in file order, and the table is
 * finished layered (symtab-layers.c): the newest record covering an
 * address names it.  A record cut short at the end of the file (the JIT
 * is still writing, or was killed) ends the parse without an error: what
 * came before it stands, and the stats say so.
 */
#include <inttypes.h>

#include "common/cursor.h"
#include "symbols/symtab.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1
#define JIT_CODE_DEBUG_INFO 2
#define JIT_CODE_CLOSE 3
#define JIT_CODE_UNWINDING_INFO 4

/* A code index and the name its load gave, for moves. */
struct idx_name {
	uint64_t index;
	const char *name;
	size_t sym;		/* the load's symbol (file order) */
};

struct move {
	uint64_t index;
	size_t sym;		/* the symbol the move added (name NULL) */
};

static uint32_t bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}

static int idx_cmp(const void *pa, const void *pb)
{
	const struct idx_name *a = pa, *b = pb;

	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return a->sym < b->sym ? -1 : a->sym > b->sym;
}

/* The name of the last load of index before symbol sym, or NULL. */
static const char *moved_name(const struct idx_name *l, size_t n,
			      uint64_t index, size_t sym)
{
	size_t lo = 0, hi = n;
	const char *name = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && l[lo].index == index && l[lo].sym < sym; lo++)
		name = l[lo].name;
	return name;
}

/* Name the moves after their loads; drop those without one. */
static void resolve_moves(struct sfp_symtab *t, struct idx_name *loads,
			  size_t nloads, const struct move *moves,
			  size_t nmoves, struct sfp_jitdump_stats *st)
{
	size_t i, k;

	qsort(loads, nloads, sizeof(*loads), idx_cmp);
	for (i = 0; i < nmoves; i++) {
		t->syms[moves[i].sym].name = moved_name(loads, nloads,
							moves[i].index,
							moves[i].sym);
		if (!t->syms[moves[i].sym].name)
			st->moves_unmatched++;
	}
	for (i = k = 0; i < t->nr; i++)
		if (t->syms[i].name)
			t->syms[k++] = t->syms[i];
	t->nr = k;
}

int sfp_jitdump_parse(struct sfp_symtab *t, const uint8_t *buf, size_t len,
		      const char *what, struct sfp_jitdump_stats *st)
{
	struct idx_name *loads = NULL;
	struct move *moves = NULL;
	size_t nloads = 0, capl = 0, nmoves = 0, capm = 0;
	uint32_t magic, version = 0, hsize = 0;
	uint64_t flags = 0;
	struct sfp_cursor c;
	bool swap;
	int err = 0;

	memset(st, 0, sizeof(*st));
	sfp_cursor_init(&c, buf, len, false);
	if (sfp_cursor_u32(&c, &magic)) {
		pr_warn("%s: offset 0: too short for a jitdump header", what);
		return -EBADMSG;
	}
	if (magic != JITDUMP_MAGIC && bswap32(magic) != JITDUMP_MAGIC) {
		pr_warn("%s: offset 0: not a jitdump (magic %#x)", what, magic);
		return -EBADMSG;
	}
	swap = magic != JITDUMP_MAGIC;
	sfp_cursor_init(&c, buf, len, swap);
	if (sfp_cursor_skip(&c, 4) || sfp_cursor_u32(&c, &version) ||
	    sfp_cursor_u32(&c, &hsize) || sfp_cursor_skip(&c, 12 + 8) ||
	    sfp_cursor_u64(&c, &flags) || hsize < 40 || hsize > len) {
		pr_warn("%s: offset 0: bad jitdump header (size %u of %zu bytes)",
			what, hsize, len);
		return -EBADMSG;
	}
	st->version = version;
	st->flags = flags;
	sfp_cursor_seek(&c, hsize);
	while (sfp_cursor_left(&c)) {
		size_t off = sfp_cursor_off(&c);
		uint32_t id, size;
		uint64_t ts;
		struct sfp_cursor r;

		if (sfp_cursor_u32(&c, &id) || sfp_cursor_u32(&c, &size) ||
		    sfp_cursor_u64(&c, &ts) || size < 16 ||
		    size - 16 > sfp_cursor_left(&c)) {
			st->truncated_at = off;
			st->truncated = true;
			break;
		}
		sfp_cursor_init(&r, c.pos, size - 16, swap);
		sfp_cursor_skip(&c, size - 16);
		st->records++;
		switch (id) {
		case JIT_CODE_LOAD:
		case JIT_CODE_MOVE: {
			uint64_t vma, addr, naddr = 0, csize, index;
			const char *name = NULL;
			const uint8_t *nul;
			uint32_t pid, tid;

			if (sfp_cursor_u32(&r, &pid) || sfp_cursor_u32(&r, &tid) ||
			    sfp_cursor_u64(&r, &vma) || sfp_cursor_u64(&r, &addr) ||
			    (id == JIT_CODE_MOVE && sfp_cursor_u64(&r, &naddr)) ||
			    sfp_cursor_u64(&r, &csize) ||
			    sfp_cursor_u64(&r, &index))
				goto bad;
			if (id == JIT_CODE_LOAD) {
				nul = memchr(r.pos, 0, sfp_cursor_left(&r));
				if (!nul || nul == r.pos)
					goto bad;
				name = sfp_strpool_add(&t->pool,
						       (const char *)r.pos,
						       (size_t)(nul - r.pos));
				if (!name) {
					err = -ENOMEM;
					goto out;
				}
				if (nloads == capl) {
					size_t nc = capl ? 2 * capl : 256;
					void *p = realloc(loads, nc * sizeof(*loads));

					if (!p) {
						err = -ENOMEM;
						goto out;
					}
					loads = p;
					capl = nc;
				}
				loads[nloads].index = index;
				loads[nloads].name = name;
				loads[nloads].sym = t->nr;
				nloads++;
				st->loads++;
			} else {
				if (nmoves == capm) {
					size_t nc = capm ? 2 * capm : 64;
					void *p = realloc(moves, nc * sizeof(*moves));

					if (!p) {
						err = -ENOMEM;
						goto out;
					}
					moves = p;
					capm = nc;
				}
				moves[nmoves].index = index;
				moves[nmoves].sym = t->nr;
				nmoves++;
				addr = naddr;
				st->moves++;
			}
			err = sfp_symtab_add(t, addr, csize, name,
					     SFP_SYM_JIT | SFP_SYM_GLOBAL);
			if (err)
				goto out;
			break;
		}
		case JIT_CODE_DEBUG_INFO:
			st->debug_info++;
			break;
		case JIT_CODE_UNWINDING_INFO:
			st->unwinding_info++;
			break;
		case JIT_CODE_CLOSE:
			st->closed = true;
			break;
		default:
			st->unknown++;
			break;
		}
		continue;
bad:
		if (st->bad++ < 3)
			pr_warn("%s: offset %zu: bad jitdump record (type %u, %u bytes)",
				what, off, id, size);
	}
	if (st->bad > 3)
		pr_warn("%s: %" PRIu64 " bad records skipped in all", what, st->bad);
	resolve_moves(t, loads, nloads, moves, nmoves, st);
out:
	free(loads);
	free(moves);
	return err;
}
