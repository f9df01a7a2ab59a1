// SPDX-License-Identifier: MIT
/*
 * A JIT's symbol table: entries that overlap.
 *
 * A JIT writes a perf-map line (or a jitdump code-load record) each time
 * it puts code somewhere; when it moves or replaces code (V8 does both
 * under --perf-basic-prof) the new entry overlaps older ones, and nothing
 * says the old ones are gone.  The code at an address is what the JIT
 * wrote there last, so the newest entry covering an address names it.
 * Where the newest entry is shorter than an older one, the rest of the
 * older one has not been rewritten (as far as the file tells) and keeps
 * its name, instead of falling into a gap ("[unknown]").
 *
 * The table is flattened once into non-overlapping segments by a sweep
 * over the entries' boundaries with a heap of the entries open there
 * (newest on top), then looked up by binary search.
 */
#include "symbols/symtab.h"

/* The end of s's range: a size of 0 covers the start only. */
static uint64_t sym_end(const struct sfp_sym *s)
{
	uint64_t n = s->size ? s->size : 1;

	return s->start > UINT64_MAX - n ? UINT64_MAX : s->start + n;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* An entry's start and index, sorted by start (ties: the heap decides). */
struct start_idx {
	uint64_t start;
	uint32_t idx;
};

static int by_start(const void *pa, const void *pb)
{
	const struct start_idx *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Max-heap of entry indices: the newest (highest seq) on top. */
static bool newer(const struct sfp_sym *syms, uint32_t a, uint32_t b)
{
	return syms[a].seq > syms[b].seq;
}

static void heap_push(const struct sfp_sym *syms, uint32_t *h, size_t *n,
		      uint32_t v)
{
	size_t i = (*n)++;

	while (i && newer(syms, v, h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(const struct sfp_sym *syms, uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && newer(syms, h[c + 1], h[c]))
			c++;
		if (!newer(syms, h[c], v))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

int sfp_symtab_finish_layered(struct sfp_symtab *t)
{
	size_t n = t->nr, npts = 0, i, k, next = 0, hn = 0, ns = 0;
	uint64_t *pts = NULL;
	struct start_idx *order = NULL;
	uint32_t *heap = NULL;
	struct sfp_symseg *segs = NULL;

	free(t->segs);
	t->segs = NULL;
	t->nsegs = 0;
	t->layered = true;
	if (!n)
		return 0;
	if (n > UINT32_MAX / 2)
		return -E2BIG;
	pts = malloc(2 * n * sizeof(*pts));
	order = malloc(n * sizeof(*order));
	heap = malloc(n * sizeof(*heap));
	/* every boundary starts at most one segment */
	segs = malloc(2 * n * sizeof(*segs));
	if (!pts || !order || !heap || !segs)
		goto nomem;
	for (i = 0; i < n; i++) {
		t->syms[i].seq = (uint32_t)i;
		pts[npts++] = t->syms[i].start;
		pts[npts++] = sym_end(&t->syms[i]);
		order[i].start = t->syms[i].start;
		order[i].idx = (uint32_t)i;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	for (i = k = 0; i < npts; i++)
		if (!k || pts[k - 1] != pts[i])
			pts[k++] = pts[i];
	npts = k;
	qsort(order, n, sizeof(*order), by_start);
	/* [pts[i], pts[i + 1]) is named by the newest entry open there */
	for (i = 0; i + 1 < npts; i++) {
		uint64_t lo = pts[i], hi = pts[i + 1];
		uint32_t top;

		while (next < n && order[next].start == lo)
			heap_push(t->syms, heap, &hn, order[next++].idx);
		while (hn && sym_end(&t->syms[heap[0]]) <= lo)
			heap_pop(t->syms, heap, &hn);
		if (!hn)
			continue;
		top = heap[0];
		if (ns && segs[ns - 1].sym == top && segs[ns - 1].hi == lo) {
			segs[ns - 1].hi = hi;
			continue;
		}
		segs[ns].lo = lo;
		segs[ns].hi = hi;
		segs[ns].sym = top;
		ns++;
	}
	free(pts);
	free(order);
	free(heap);
	t->segs = segs;
	t->nsegs = ns;
	return 0;
nomem:
	free(pts);
	free(order);
	free(heap);
	free(segs);
	return -ENOMEM;
}

/* The segment holding addr (sfp_symtab_find() of a layered table). */
struct sfp_sym *sfp_symtab_layered_find(struct sfp_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->segs[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nsegs || t->segs[lo].lo > addr)
		return NULL;
	return &t->syms[t->segs[lo].sym];
}
