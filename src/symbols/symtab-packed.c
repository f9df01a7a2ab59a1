// SPDX-License-Identifier: MIT
/*
 * A finished symbol table in the form the symbol cache keeps it, and
 * lookups in that form where it is mapped.
 *
 * Building libc's table from its debug file (10k ELF symbols read, 6.7k
 * kept, sorted, aliases resolved, PLT stubs named) was a sixth of a
 * 32k-sample report, and half of that was first touches of the 48-byte
 * struct sfp_sym array: a page fault each, ~10 us in this PVM guest.
 * Packed, a symbol is 24 bytes and a name offset; lookups binary-search
 * the mapping, and only the symbols a profile hits become a struct
 * sfp_sym (a report touches a few hundred of libc's thousands), kept in
 * a small table by index so that each is made once and its demangled
 * name is remembered as for a built table.
 *
 *	part 0:	u32 magic "SYMT", u32 version, u64 count,
 *		count x { u64 start, u64 size, u32 name, u32 flags }
 *	part 1:	the names, each NUL-terminated
 */
#include <sys/mman.h>

#include "symbols/symtab.h"

#define PACK_MAGIC 0x544d5953u	/* "SYMT" */
#define PACK_VERSION 1u
#define HEAD_SIZE 16u

struct pack_head {
	uint32_t magic;
	uint32_t version;
	uint64_t count;
};

int sfp_symtab_pack(const struct sfp_symtab *t, void **p0, size_t *n0,
		    void **p1, size_t *n1)
{
	struct pack_head h = { PACK_MAGIC, PACK_VERSION, t->nr };
	struct sfp_psym *ps;
	size_t i, names = 0, at = 0;
	char *nb;

	*p0 = *p1 = NULL;
	for (i = 0; i < t->nr; i++)
		names += strlen(t->syms[i].name) + 1;
	if (names > UINT32_MAX)
		return -E2BIG;
	*p0 = malloc(HEAD_SIZE + t->nr * sizeof(*ps));
	*p1 = nb = malloc(names ? names : 1);
	if (!*p0 || !nb) {
		free(*p0);
		free(nb);
		*p0 = *p1 = NULL;
		return -ENOMEM;
	}
	memcpy(*p0, &h, sizeof(h));
	ps = (struct sfp_psym *)(void *)((uint8_t *)*p0 + HEAD_SIZE);
	for (i = 0; i < t->nr; i++) {
		const struct sfp_sym *s = &t->syms[i];
		size_t len = strlen(s->name) + 1;

		ps[i] = (struct sfp_psym){ s->start, s->size, (uint32_t)at,
					   s->flags };
		memcpy(nb + at, s->name, len);
		at += len;
	}
	*n0 = HEAD_SIZE + t->nr * sizeof(*ps);
	*n1 = names;
	return 0;
}

int sfp_symtab_unpack(struct sfp_symtab *t, void *map, size_t n0, size_t n1)
{
	const struct sfp_psym *ps;
	const char *names;
	struct pack_head h;
	size_t i;

	if (n0 < HEAD_SIZE)
		return -EBADMSG;
	memcpy(&h, map, sizeof(h));
	if (h.magic != PACK_MAGIC || h.version != PACK_VERSION ||
	    h.count > SFP_SYMTAB_MAX ||
	    n0 != HEAD_SIZE + h.count * sizeof(*ps) ||
	    (h.count && (!n1 || ((const char *)map)[n0 + n1 - 1])))
		return -EBADMSG;
	/* 16-byte head in a page-aligned mapping: the entries are aligned */
	ps = (const struct sfp_psym *)(const void *)((const uint8_t *)map +
						     HEAD_SIZE);
	names = (const char *)map + n0;
	for (i = 0; i < h.count; i++)
		if (ps[i].name >= n1 ||
		    (i && ps[i].start <= ps[i - 1].start))
			return -EBADMSG;
	memset(t, 0, sizeof(*t));
	t->nr = h.count;
	t->psyms = ps;
	t->pnames = names;
	t->pmap = map;
	t->pmap_len = n0 + n1;
	return 0;
}

/*
 * The made symbol of packed entry i, made now if need be; NULL: no memory.
 * Not sfp_idmap: every lookup in a packed table probes this, and entry
 * numbers are dense, so i & mask spreads them with no hash; sfp_hash64()
 * and the used bitmap cost ~17 instructions a lookup (callgrind, script).
 */
static struct sfp_sym *made(struct sfp_symtab *t, size_t i)
{
	size_t k, mask;
	struct sfp_sym *s;

	if (t->mat_n * 2 >= t->mat_cap) {
		size_t ncap = t->mat_cap ? t->mat_cap * 2 : 256;
		struct sfp_sym **nm = calloc(ncap, sizeof(*nm));

		if (!nm)
			return NULL;
		for (k = 0; k < t->mat_cap; k++) {
			size_t j;

			if (!t->mat[k])
				continue;
			for (j = t->mat[k]->seq & (ncap - 1); nm[j];
			     j = (j + 1) & (ncap - 1))
				;
			nm[j] = t->mat[k];
		}
		free(t->mat);
		t->mat = nm;
		t->mat_cap = ncap;
	}
	mask = t->mat_cap - 1;
	for (k = i & mask; t->mat[k]; k = (k + 1) & mask)
		if (t->mat[k]->seq == i)
			return t->mat[k];
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	*s = (struct sfp_sym){
		.start = t->psyms[i].start,
		.size = t->psyms[i].size,
		.name = t->pnames + t->psyms[i].name,
		.flags = t->psyms[i].flags,
		.seq = (uint32_t)i,
	};
	t->mat[k] = s;
	t->mat_n++;
	return s;
}

struct sfp_sym *sfp_symtab_packed_find(struct sfp_symtab *t, uint64_t addr)
{
	const struct sfp_psym *p;
	size_t lo = 0, hi = t->nr;

	/* Last symbol with start <= addr, as sfp_symtab_find(). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->psyms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	p = &t->psyms[lo - 1];
	if (addr - p->start < p->size || addr == p->start)
		return made(t, lo - 1);
	return NULL;
}

size_t sfp_symtab_packed_release_pages(struct sfp_symtab *t)
{
	/* nothing writes the mapping: unpack() only points into it */
	if (!t->pmap || madvise(t->pmap, t->pmap_len, MADV_DONTNEED))
		return 0;
	return t->pmap_len;
}

void sfp_symtab_packed_free(struct sfp_symtab *t)
{
	size_t k;

	for (k = 0; k < t->mat_cap; k++)
		free(t->mat[k]);
	free(t->mat);
	t->mat = NULL;
	t->mat_cap = t->mat_n = 0;
	if (t->pmap)
		munmap(t->pmap, t->pmap_len);
	t->pmap = NULL;
	t->psyms = NULL;
	t->pnames = NULL;
}
