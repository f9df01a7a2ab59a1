// SPDX-License-Identifier: MIT
/*
 * Kernel symbols from /proc/kallsyms ("ADDR TYPE NAME[\t[MODULE]]"),
 * text symbols only (t, T, w, W).  kallsyms has no sizes: each symbol runs
 * to the next one, bounded by _etext for the core kernel and by the
 * module's end (from /proc/modules: "NAME SIZE REFS DEPS STATE ADDR") for
 * module symbols.  Without a module extent a symbol runs to the next one
 * of its own module; the last one (e.g. a [bpf] program) gets one page.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cachedir.h"
#include "common/filecache.h"
#include "common/idmap.h"
#include "symbols/kallsyms.h"

#define KSYM_LAST_GUESS 4096

struct kmod {
	const char *name;	/* in the table's pool */
	size_t name_len;
	uint64_t start;
	uint64_t size;
};

/*
 * Eight lowercase hex digits as one little-endian word (first digit in the
 * low byte), eight at a time; false if any byte is not [0-9a-f].
 */
static bool hex8_swar(uint64_t x, uint32_t *v)
{
	const uint64_t ones = 0x0101010101010101ull, top = ones << 7;
	uint64_t digit, alpha, d;

	if (x & top)
		return false;
	/* b + (0x80 - k) has its top bit set iff b >= k (b < 0x80: no
	 * carry into the next byte) */
	digit = (x + ones * (0x80 - '0')) & ~(x + ones * (0x80 - '9' - 1));
	alpha = (x + ones * (0x80 - 'a')) & ~(x + ones * (0x80 - 'f' - 1));
	if (((digit | alpha) & top) != top)
		return false;
	d = (x & ones * 0x0f) + ((x >> 6) & ones) * 9;
	/* pairs, then quads, then the eight digits (first = most significant) */
	d = ((d & 0x0f000f000f000f00ull) >> 8) | ((d & 0x000f000f000f000full) << 4);
	d = ((d & 0x00ff000000ff0000ull) >> 16) | ((d & 0x000000ff000000ffull) << 8);
	d = ((d & 0x0000ffff00000000ull) >> 32) | ((d & 0x000000000000ffffull) << 16);
	*v = (uint32_t)d;
	return true;
}

/*
 * The 16 hex digits every line of a 64-bit kallsyms starts with, without
 * a branch per digit: 120k lines made the general parser a tenth of a
 * `sfprof script` run.  False: not 16 lowercase digits (the caller falls
 * back to sfp_sym_parse_hex()).
 */
static bool hex16(const char *s, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t a, b;
	uint32_t hi, lo;

	memcpy(&a, s, 8);
	memcpy(&b, s + 8, 8);
	if (!hex8_swar(a, &hi) || !hex8_swar(b, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
#else
	const char *q = s;

	return sfp_sym_parse_hex(&q, s + 16, v) && q == s + 16;
#endif
}

/* One "ADDR TYPE NAME[\tMODULE]" line. */
struct kline {
	uint64_t addr;
	const char *name, *mod;	/* mod: after the tab, or NULL */
	size_t nlen, mlen;
	char type;
};

/* Parse the line [p, eol).  False: not a symbol line (skipped). */
static bool parse_line(const char *p, const char *eol, struct kline *l)
{
	const char *q = p, *tab;

	if (eol - q >= 20 && q[16] == ' ' && q[18] == ' ' && hex16(q, &l->addr))
		q += 16;
	else if (!sfp_sym_parse_hex(&q, eol, &l->addr) || eol - q < 4 ||
		 q[0] != ' ' || q[2] != ' ')
		return false;
	l->type = q[1];
	l->name = q + 3;
	l->nlen = (size_t)(eol - l->name);
	l->mod = NULL;
	l->mlen = 0;
	tab = memchr(l->name, '\t', l->nlen);
	if (tab) {
		l->nlen = (size_t)(tab - l->name);
		l->mod = tab + 1;
		l->mlen = (size_t)(eol - l->mod);
	}
	return l->nlen != 0;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static uint32_t type_flags(char type)
{
	uint32_t flags = SFP_SYM_KERNEL | SFP_SYM_SIZE_GUESSED;

	if (type == 'T' || type == 'W')
		flags |= SFP_SYM_GLOBAL;
	if (type == 'w' || type == 'W')
		flags |= SFP_SYM_WEAK;
	return flags;
}

static bool parse_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t r = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (r > (UINT64_MAX - 9) / 10)
			return false;
		r = r * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = r;
	return true;
}

/* Fields of one /proc/modules line. */
static bool parse_module(const char *p, const char *eol, struct kmod *m)
{
	const char *name = p;
	int field;

	while (p < eol && *p != ' ')
		p++;
	if (p == name || p == eol)
		return false;
	m->name = name;
	m->name_len = (size_t)(p - name);
	p++;
	if (!parse_dec(&p, eol, &m->size))
		return false;
	/* Skip refcount, deps and state to reach the address. */
	for (field = 0; field < 4; field++) {
		while (p < eol && *p != ' ')
			p++;
		while (p < eol && *p == ' ')
			p++;
	}
	return sfp_sym_parse_hex(&p, eol, &m->start);
}

static int load_modules(const char *buf, size_t len, struct kmod **out,
			size_t *nr)
{
	const char *p = buf, *end = buf + len;
	struct kmod *mods = NULL;
	size_t n = 0, cap = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		struct kmod m;

		if (!eol)
			eol = end;
		if (parse_module(p, eol, &m) && m.start) {
			if (n == cap) {
				struct kmod *nm;

				cap = cap ? cap * 2 : 64;
				if (cap > (1u << 20))
					break;
				nm = realloc(mods, cap * sizeof(*nm));
				if (!nm) {
					free(mods);
					return -ENOMEM;
				}
				mods = nm;
			}
			mods[n++] = m;
		}
		p = eol + 1;
	}
	*out = mods;
	*nr = n;
	return 0;
}

static const struct kmod *find_module(const struct kmod *mods, size_t nr,
				      const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (mods[i].name_len == len && !memcmp(mods[i].name, name, len))
			return &mods[i];
	return NULL;
}

/*
 * Upper bound of a module symbol's size: to its module's end when
 * /proc/modules lists the module and the symbol lies inside it; else
 * unknown (*noext): up to the next symbol (trimmed by finish), capped
 * later if that is another module's.
 */
static uint64_t mod_bound(const struct kmod *mods, size_t nmods, uint64_t addr,
			  const char *mod, size_t mlen, bool *noext)
{
	const struct kmod *km;

	*noext = true;
	/* "[ext4]": strip the brackets to find its extent. */
	if (mlen >= 2 && mod[0] == '[' && mod[mlen - 1] == ']') {
		km = find_module(mods, nmods, mod + 1, mlen - 2);
		if (km && addr >= km->start && addr - km->start < km->size) {
			*noext = false;
			return km->start + km->size - addr;
		}
	}
	return UINT64_MAX - addr;
}

int sfp_kallsyms_parse(struct sfp_symtab *t, const char *buf, size_t len,
		       const char *modules, size_t modules_len)
{
	const char *p = buf, *end = buf + len;
	struct kmod *mods = NULL;
	size_t nmods = 0;
	uint64_t etext = 0;
	const char *last_mod = NULL, *last_mod_str = NULL;
	size_t last_mod_len = 0;
	size_t first = t->nr, i;
	int err, added = 0;

	if (modules) {
		err = load_modules(modules, modules_len, &mods, &nmods);
		if (err)
			return err;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *name, *mod;
		struct kline l;
		size_t nlen, mlen;
		uint64_t addr, bound;
		uint32_t flags;
		char type;

		if (!eol)
			eol = end;
		if (!parse_line(q, eol, &l))
			goto next;
		addr = l.addr;
		type = l.type;
		name = l.name;
		nlen = l.nlen;
		mod = l.mod;
		mlen = l.mlen;
		if (nlen == 6 && !memcmp(name, "_etext", 6))
			etext = addr;
		if (!is_text(type))
			goto next;
		if (!addr)
			goto next;	/* kptr_restrict hides addresses */
		flags = type_flags(type);
		if (mod) {
			bool noext;

			bound = mod_bound(mods, nmods, addr, mod, mlen, &noext);
			if (noext)
				flags |= SFP_SYM_NO_EXTENT;
			/* Consecutive symbols of one module share the string. */
			if (!last_mod || last_mod_len != mlen ||
			    memcmp(last_mod, mod, mlen)) {
				last_mod_str = sfp_strpool_add(&t->pool, mod, mlen);
				if (!last_mod_str) {
					err = -ENOMEM;
					goto out;
				}
				last_mod = mod;
				last_mod_len = mlen;
			}
		} else {
			bound = 0;	/* set below, once _etext is known */
		}
		name = sfp_strpool_add(&t->pool, name, nlen);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		err = sfp_symtab_add(t, addr, bound, name, flags);
		if (err)
			goto out;
		t->syms[t->nr - 1].dso = mod ? last_mod_str : NULL;
		added++;
next:
		p = eol + 1;
	}
	/* Core kernel symbols end by _etext at the latest. */
	for (i = first; i < t->nr; i++) {
		struct sfp_sym *s = &t->syms[i];

		if (s->dso || s->size)
			continue;
		s->size = etext > s->start ? etext - s->start : KSYM_LAST_GUESS;
	}
	err = added;
out:
	free(mods);
	return err;
}


void sfp_kallsyms_fixup(struct sfp_symtab *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		struct sfp_sym *s = &t->syms[i];
		const struct sfp_sym *n = i + 1 < t->nr ? &t->syms[i + 1] : NULL;

		if (!(s->flags & SFP_SYM_NO_EXTENT))
			continue;
		s->flags &= ~SFP_SYM_NO_EXTENT;
		if (n && n->dso && s->dso && !strcmp(n->dso, s->dso))
			continue;	/* finish() ended it at its successor */
		if (s->size > KSYM_LAST_GUESS)
			s->size = KSYM_LAST_GUESS;
	}
}

/* --- the lazy index (kallsyms.h) ----------------------------------------- */

/*
 * The index holds only the offsets of the text-symbol lines, and only of
 * lines in the form the kernel writes on 64-bit ("%016lx %c %s"): there,
 * the 16 lowercase hex digits sort as text exactly as the addresses sort
 * as numbers, so the one pass over the file compares them as two
 * big-endian words and checks they are hex digits, without converting
 * anything; a lookup converts the ~17 lines its binary search visits.
 * A text symbol in any other form declines the index (the full parse
 * takes it); text symbols out of address order are sorted once.
 */
struct kmat {			/* a materialized symbol, by entry index */
	uint32_t idx;		/* first: the id table's key */
	struct sfp_sym *sym;
};

struct sfp_kallsyms_index {
	char *buf, *modules;
	size_t len;
	bool mapped;		/* buf is a mapping of the file, not malloc()ed */
	uint32_t *e;		/* line offsets of the text symbols: malloc()ed,
				 * or in `cached` */
	struct sfp_fc_entry cached;	/* the mapped cache entry e lies in */
	size_t n;
	struct kmod *mods;
	size_t nmods;
	uint64_t etext;
	struct sfp_idmap mat;	/* struct kmat by entry index */
	struct sfp_symtab tab;	/* its pool holds the names we hand out */
	/* the address of every STRIDE-th entry, parsed with the index:
	 * a search narrows to STRIDE entries without parsing, instead of
	 * parsing the hex of each of ~17 entries (7 % of a system-wide
	 * script) */
	uint64_t *coarse;
	size_t ncoarse;
	/* the addresses of all STRIDE entries of a window, parsed the first
	 * time a look-up lands in it (win[c]: window c, or NULL): a binary
	 * search over the lines was six dependent cache misses in cold text,
	 * 1.2 us a look-up and 2 of the 48 ms of a report of a 319k-sample
	 * system-wide file; its 1505 look-ups land in 216 windows, whose
	 * lines read in order are what the hardware prefetches best */
	uint64_t **win;
};

#define STRIDE 64

#define ZEROS 0x3030303030303030ull	/* "00000000" as a key word */

/* Eight lowercase hex digits?  (as hex8_swar, without converting) */
static bool hex8_ok(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, top = ones << 7;
	uint64_t digit, alpha;

	digit = (x + ones * (0x80 - '0')) & ~(x + ones * (0x80 - '9' - 1));
	alpha = (x + ones * (0x80 - 'a')) & ~(x + ones * (0x80 - 'f' - 1));
	return !(x & top) && ((digit | alpha) & top) == top;
}

/* A line "%016lx %c ..." with lowercase digits: its sort key (the digits
 * as big-endian words compare like the address). */
static bool canonical(const char *p, const char *eol, uint64_t key[2])
{
	uint64_t a, b;

	if (eol - p < 20 || p[16] != ' ' || p[18] != ' ')
		return false;
	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!hex8_ok(a) || !hex8_ok(b))
		return false;
	key[0] = __builtin_bswap64(a);
	key[1] = __builtin_bswap64(b);
	return true;
#else
	(void)key;
	return false;	/* big-endian hosts: the full parse */
#endif
}

/* Address, type, name and module of indexed line i. */
static void ent_line(const struct sfp_kallsyms_index *k, size_t i,
		     struct kline *l)
{
	const char *p = k->buf + k->e[i], *end = k->buf + k->len;
	const char *eol = memchr(p + 19, '\n', (size_t)(end - p - 19));

	/* the index took only lines parse_line() reads this way; an index
	 * read back from the cache is only known to point inside the file,
	 * so a line that does not parse is an empty, nameless one */
	if (!parse_line(p, eol ? eol : end, l))
		*l = (struct kline){ .name = p, .type = ' ' };
}

static uint64_t ent_addr(const struct sfp_kallsyms_index *k, size_t i)
{
	uint64_t a = 0;

	hex16(k->buf + k->e[i], &a);
	return a;
}

/* The parsed addresses of window c (entries [c * STRIDE, ...)), or NULL
 * without memory (the caller parses the lines it needs). */
static const uint64_t *window(struct sfp_kallsyms_index *k, size_t c)
{
	size_t i, first = c * STRIDE, nr = k->n - first;
	uint64_t *w;

	if (!k->win && !(k->win = calloc(k->ncoarse, sizeof(*k->win))))
		return NULL;
	if (k->win[c])
		return k->win[c];
	if (nr > STRIDE)
		nr = STRIDE;
	w = malloc(nr * sizeof(*w));
	if (!w)
		return NULL;
	for (i = 0; i < nr; i++)
		w[i] = ent_addr(k, first + i);
	k->win[c] = w;
	return w;
}

/* ent_addr() from the parsed window when it has been parsed */
static uint64_t addr_of(const struct sfp_kallsyms_index *k, size_t i)
{
	const uint64_t *w = k->win ? k->win[i / STRIDE] : NULL;

	return w ? w[i % STRIDE] : ent_addr(k, i);
}

static bool key_less(const uint64_t a[2], const uint64_t b[2])
{
	return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* An entry out of the file's address order, with its sort key. */
struct xent {
	uint64_t key[2];
	uint32_t off;
};

static int xent_cmp(const void *pa, const void *pb)
{
	const struct xent *a = pa, *b = pb;

	if (key_less(a->key, b->key))
		return -1;
	if (key_less(b->key, a->key))
		return 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/*
 * A mapped file is let go behind the scan: every line is read once here,
 * later look-ups read a few lines each, and the whole 5 MiB of a cached
 * kallsyms resident at once was a third of a small report's peak RSS.
 * The mapping is clean and private: a page dropped is read again if a
 * look-up needs it.
 */
#define KALLSYMS_DROP (1u << 20)

static void drop_behind(const char *buf, size_t off, size_t *dropped)
{
	size_t upto = off & ~(size_t)(KALLSYMS_DROP - 1);

	if (upto >= *dropped + 2 * KALLSYMS_DROP) {
		(void)madvise((char *)buf + *dropped, upto - *dropped,
			      MADV_DONTNEED);
		*dropped = upto;
	}
}

/*
 * Put the entries in address order, equal addresses in file order (the
 * order the full parse's stable sort gives, so the last alias still
 * wins).  A live kallsyms is sorted but for the few symbols the kernel
 * lists after the modules: BPF programs ("[bpf]"), ftrace trampolines.
 * Declining the index for them made every system-wide tool that loads a
 * BPF program (the agent, record's bpf-defer) read and parse all of
 * kallsyms whole: ~0.2 s of CPU.  So the sorted run is kept in place,
 * the entries that break it are sorted apart, and the two are merged.
 * Its passes read the lines in file order: a mapped file goes behind.
 */
static int sort_entries(struct sfp_kallsyms_index *k, const char *buf,
			bool mapped)
{
	struct xent *x = NULL, *nx;
	size_t n = k->n, nm = 0, nr = 0, cap = 0, i, a, b, dropped = 0;
	uint64_t last[2] = { 0, 0 }, key[2] = { 0, 0 };
	uint32_t *m;

	for (i = 0; i < n; i++) {
		if (mapped)
			drop_behind(buf, k->e[i], &dropped);
		/* every entry passed canonical() on its full line */
		canonical(buf + k->e[i], buf + k->e[i] + 20, key);
		if (nm && key_less(key, last)) {
			if (nr == cap) {
				cap = cap ? cap * 2 : 64;
				nx = realloc(x, cap * sizeof(*x));
				if (!nx) {
					free(x);
					return -ENOMEM;
				}
				x = nx;
			}
			x[nr].key[0] = key[0];
			x[nr].key[1] = key[1];
			x[nr++].off = k->e[i];
			continue;
		}
		last[0] = key[0];
		last[1] = key[1];
		k->e[nm++] = k->e[i];
	}
	qsort(x, nr, sizeof(*x), xent_cmp);
	m = malloc(n * sizeof(*m));
	if (!m) {
		free(x);
		return -ENOMEM;
	}
	dropped = 0;
	for (a = b = i = 0; i < n; i++) {
		bool main_first = b == nr;

		if (mapped && a < nm)
			drop_behind(buf, k->e[a], &dropped);
		if (!main_first && a < nm) {
			canonical(buf + k->e[a], buf + k->e[a] + 20, key);
			main_first = key_less(key, x[b].key) ||
				     (!key_less(x[b].key, key) &&
				      k->e[a] < x[b].off);
		}
		m[i] = main_first ? k->e[a++] : x[b++].off;
	}
	free(x);
	free(k->e);
	k->e = m;
	return 0;
}

/*
 * The parsed address of every STRIDE-th entry, searched before the lines
 * (without it, look-ups run on: a failed malloc costs only speed).
 */
static void build_coarse(struct sfp_kallsyms_index *k, bool mapped)
{
	size_t i, dropped = 0;

	k->ncoarse = (k->n + STRIDE - 1) / STRIDE;
	k->coarse = malloc(k->ncoarse * sizeof(*k->coarse));
	for (i = 0; k->coarse && i < k->ncoarse; i++) {
		if (mapped)
			drop_behind(k->buf, k->e[i * STRIDE], &dropped);
		k->coarse[i] = ent_addr(k, i * STRIDE);
	}
}

/* An empty index (NULL: no memory). */
static struct sfp_kallsyms_index *index_alloc(void)
{
	struct sfp_kallsyms_index *k = calloc(1, sizeof(*k));

	/* 256 slots at a load of 1/2: what the table had by hand */
	if (k)
		sfp_idmap_init(&k->mat, sizeof(struct kmat), 256, 50);
	return k;
}

static int index_new(char *buf, size_t len, char *modules, size_t modules_len,
		     bool mapped, struct sfp_kallsyms_index **out)
{
	struct sfp_kallsyms_index *k;
	const char *p = buf, *end = buf + len;
	size_t dropped = 0;
	uint64_t prev[2] = { 0, 0 };
	bool unsorted = false;
	size_t cap;
	int err;

	*out = NULL;
	if (len > UINT32_MAX)
		return -EAGAIN;	/* offsets are 32-bit */
	k = index_alloc();
	if (!k)
		return -ENOMEM;
	/* ~45 bytes a line in practice: one allocation, rarely a second */
	cap = len / 40 + 16;
	k->e = malloc(cap * sizeof(*k->e));
	if (!k->e) {
		err = -ENOMEM;
		goto fail;
	}
	if (modules) {
		err = load_modules(modules, modules_len, &k->mods, &k->nmods);
		if (err)
			goto fail;
	}
	while (p < end) {
		const char *eol, *name;
		uint64_t key[2];
		struct kline l;
		char type;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (!canonical(p, eol, key)) {
			/* any other form: fine unless it is a text symbol */
			if (!parse_line(p, eol, &l))
				goto next;
			if (l.nlen == 6 && !memcmp(l.name, "_etext", 6))
				k->etext = l.addr;
			if (is_text(l.type) && l.addr) {
				err = -EAGAIN;
				goto fail;
			}
			goto next;
		}
		type = p[17];
		name = p + 19;
		if (name == eol || *name == '\t')
			goto next;	/* no name: not a symbol line */
		if (eol - name >= 6 && name[0] == '_' &&
		    !memcmp(name, "_etext", 6) &&
		    (eol - name == 6 || name[6] == '\t'))
			hex16(p, &k->etext);
		if (!is_text(type) || (key[0] == ZEROS && key[1] == ZEROS))
			goto next;	/* not text, or address 0 (hidden) */
		if (k->n >= SFP_SYMTAB_MAX) {
			err = -EAGAIN;	/* the full parse says what is wrong */
			goto fail;
		}
		if (key_less(key, prev))
			unsorted = true;
		prev[0] = key[0];
		prev[1] = key[1];
		if (k->n == cap) {
			uint32_t *ne = realloc(k->e, cap * 2 * sizeof(*ne));

			if (!ne) {
				err = -ENOMEM;
				goto fail;
			}
			k->e = ne;
			cap *= 2;
		}
		k->e[k->n++] = (uint32_t)(p - buf);
next:
		p = eol + 1;
		if (mapped)
			drop_behind(buf, (size_t)(p - buf), &dropped);
	}
	if (!k->n) {
		err = -EAGAIN;	/* the full parse says why */
		goto fail;
	}
	if (unsorted && (err = sort_entries(k, buf, mapped)))
		goto fail;
	k->buf = buf;
	k->len = len;
	build_coarse(k, mapped);
	if (mapped)	/* look-ups read the lines they need again */
		(void)madvise(buf, len, MADV_DONTNEED);
	k->modules = modules;
	*out = k;
	return 0;
fail:
	free(k->e);
	free(k->mods);
	free(k);
	return err;
}

int sfp_kallsyms_index__new(char *buf, size_t len, char *modules,
			    size_t modules_len,
			    struct sfp_kallsyms_index **out)
{
	return index_new(buf, len, modules, modules_len, false, out);
}

/* Last entry with the same address as entry i (the alias that wins). */
static size_t last_alias(const struct sfp_kallsyms_index *k, size_t i)
{
	uint64_t a = addr_of(k, i);

	while (i + 1 < k->n && addr_of(k, i + 1) == a)
		i++;
	return i;
}

/*
 * Build the symbol of entry i (the last of its address), with the size
 * the full parse gives it: its bound (to _etext, to its module's end, or
 * unknown), trimmed to the next symbol; a module symbol of unknown extent
 * whose successor is not of its module gets at most a page.
 */
static struct sfp_sym *materialize(struct sfp_kallsyms_index *k, size_t i)
{
	struct kline l;
	bool noext = false;
	uint64_t size;
	struct sfp_sym *s;

	ent_line(k, i, &l);
	if (l.mod)
		size = mod_bound(k->mods, k->nmods, l.addr, l.mod, l.mlen,
				 &noext);
	else
		size = k->etext > l.addr ? k->etext - l.addr : KSYM_LAST_GUESS;
	if (i + 1 < k->n && size > addr_of(k, i + 1) - l.addr)
		size = addr_of(k, i + 1) - l.addr;
	if (noext) {
		bool same = false;

		if (i + 1 < k->n) {
			struct kline nl;

			ent_line(k, last_alias(k, i + 1), &nl);
			/* as strcmp() of the pooled copies: a NUL in the
			 * text ends the name there */
			if (nl.mod) {
				size_t a = strnlen(l.mod, l.mlen);
				size_t b = strnlen(nl.mod, nl.mlen);

				same = a == b && !memcmp(nl.mod, l.mod, a);
			}
		}
		if (!same && size > KSYM_LAST_GUESS)
			size = KSYM_LAST_GUESS;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->start = l.addr;
	s->size = size;
	s->flags = type_flags(l.type);
	s->seq = (uint32_t)i;
	s->name = sfp_strpool_add(&k->tab.pool, l.name, l.nlen);
	if (l.mod)
		s->dso = sfp_strpool_add(&k->tab.pool, l.mod, l.mlen);
	if (!s->name || (l.mod && !s->dso)) {
		free(s);
		return NULL;
	}
	return s;
}

/* The materialized symbol of entry i, made on first use. */
static struct sfp_sym *mat_get(struct sfp_kallsyms_index *k, size_t i)
{
	struct kmat *e = sfp_idmap_find(&k->mat, (uint32_t)i);
	struct sfp_sym *s;

	if (e)
		return e->sym;
	s = materialize(k, i);
	if (!s)
		return NULL;
	e = sfp_idmap_add(&k->mat, (uint32_t)i);
	if (!e) {
		free(s);
		return NULL;
	}
	e->sym = s;
	return s;
}

struct sfp_sym *sfp_kallsyms_index__find(struct sfp_kallsyms_index *k,
					 uint64_t addr, struct sfp_symtab **tab)
{
	size_t lo = 0, hi = k->n;
	const uint64_t *w = NULL;
	struct sfp_sym *s;

	*tab = &k->tab;
	if (k->coarse) {
		size_t clo = 0, chi = k->ncoarse;

		/* the last sampled entry with start <= addr, c: the answer
		 * is in [c * STRIDE, (c + 1) * STRIDE) */
		while (clo < chi) {
			size_t mid = clo + (chi - clo) / 2;

			if (k->coarse[mid] <= addr)
				clo = mid + 1;
			else
				chi = mid;
		}
		if (!clo)
			return NULL;
		lo = (clo - 1) * STRIDE + 1;
		if (clo * STRIDE < hi)
			hi = clo * STRIDE;
		w = window(k, clo - 1);
	}
	/* the last entry with start <= addr: the winning alias of its start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((w ? w[mid % STRIDE] : ent_addr(k, mid)) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = mat_get(k, lo - 1);
	if (s && (addr - s->start < s->size || addr == s->start))
		return s;
	return NULL;
}

/* kallsyms of big configs is ~10 MiB; more is not a kallsyms we index */
#define KALLSYMS_MAP_MAX (256u << 20)

/*
 * The index of a file (perf's cached copy of kallsyms) kept in the cache
 * directory (common/filecache.h: tied to the file's size, mtime, inode
 * and device): the one pass over 5 MiB of text was a quarter of a small
 * report (2.5 of 10 ms of CPU on a 32k-sample system-wide file), for an
 * index that only changes with the file.  Part 0 is a header and the
 * sorted line offsets, part 1 the coarse addresses.
 */
#define KX_SUFFIX ".ksyms"
#define KX_GEN 1
#define KX_BUDGET (64ull << 20)
#define KX_MAGIC 0x5849534bu	/* "KSIX" */

struct kx_head {
	uint32_t magic, version;
	uint64_t n, etext, ncoarse;
};

static bool kx_name(const char *path, const struct stat *st, char *name,
		    size_t len)
{
	return sfp_fmt(name, len, "%016llx-%llx" KX_SUFFIX,
		       (unsigned long long)sfp_fnv1a64(path, strlen(path)),
		       (unsigned long long)st->st_size);
}

/*
 * The index from the cache, over buf (the file, mapped): 0, or -errno
 * with nothing taken (the caller indexes the text itself).  The entry
 * passed its CRC and matches the file; its numbers are still checked
 * against the file before use: every offset leaves room for a line's
 * fixed part, as the scan's lines did.
 */
static int kx_load(const char *dir, const char *path, const struct stat *st,
		   char *buf, size_t len, char *mods, size_t modslen,
		   struct sfp_kallsyms_index **out)
{
	struct sfp_fc_entry ent;
	struct sfp_fc_src src;
	struct kx_head h;
	struct sfp_kallsyms_index *k = NULL;
	const uint8_t *p;
	char name[64];
	size_t i;
	int err;

	if (!kx_name(path, st, name, sizeof(name)))
		return -ENAMETOOLONG;
	sfp_fc_src_init(&src, "KSYMS", KX_GEN, st, NULL, 0);
	err = sfp_fc_load(dir, name, &src, &ent);
	if (err)
		return err;
	p = ent.map;
	err = -EBADMSG;
	if (ent.size[0] < sizeof(h))
		goto out;
	memcpy(&h, p, sizeof(h));
	if (h.magic != KX_MAGIC || h.version != 1 || !h.n ||
	    h.n > SFP_SYMTAB_MAX || ent.size[0] != sizeof(h) + h.n * 4 ||
	    h.ncoarse != (h.n + STRIDE - 1) / STRIDE ||
	    ent.size[1] != h.ncoarse * 8 || len < 20)
		goto out;
	err = -ENOMEM;
	k = index_alloc();
	if (!k || !(k->coarse = malloc(h.ncoarse * sizeof(*k->coarse))))
		goto out;
	/*
	 * The offsets are used where they lie, 4-aligned after the 32-byte
	 * head: a copy was ~120 fresh pages, and a fresh page costs a fault
	 * (the coarse addresses may sit at any 4-byte boundary: copied).
	 */
	k->e = (uint32_t *)(void *)(p + sizeof(h));
	memcpy(k->coarse, p + ent.size[0], h.ncoarse * 8);
	err = -EBADMSG;
	for (i = 0; i < h.n; i++)
		if (k->e[i] > len - 20)
			goto out;
	if (mods && (err = load_modules(mods, modslen, &k->mods, &k->nmods)))
		goto out;
	k->n = h.n;
	k->ncoarse = h.ncoarse;
	k->etext = h.etext;
	k->buf = buf;
	k->len = len;
	k->modules = mods;
	k->cached = ent;
	ent.map = NULL;
	*out = k;
	k = NULL;
	err = 0;
out:
	if (err == -EBADMSG)
		pr_info("%s: cached kallsyms index does not fit the file; indexing it again",
			path);
	if (k) {
		free(k->coarse);
		free(k->mods);
		free(k);
	}
	sfp_fc_unmap(&ent);
	return err;
}

static void kx_store(const char *dir, const char *path, const struct stat *st,
		     const struct sfp_kallsyms_index *k)
{
	struct kx_head h = { KX_MAGIC, 1, k->n, k->etext, k->ncoarse };
	struct sfp_fc_src src;
	uint8_t *p0;
	char name[64];

	if (!k->coarse || !kx_name(path, st, name, sizeof(name)))
		return;
	p0 = malloc(sizeof(h) + k->n * 4);
	if (!p0)
		return;
	memcpy(p0, &h, sizeof(h));
	memcpy(p0 + sizeof(h), k->e, k->n * 4);
	sfp_fc_src_init(&src, "KSYMS", KX_GEN, st, NULL, 0);
	sfp_fc_store(dir, name, KX_SUFFIX, &src, p0, sizeof(h) + k->n * 4,
		     k->coarse, k->ncoarse * 8, KX_BUDGET);
	free(p0);
}

/*
 * /proc/kallsyms has no size and cannot be mapped: read into the heap
 * (8 MiB on a distribution kernel), the copy the index points into stayed
 * resident for the process's life -- half of a small agent's RSS, for the
 * few lines its look-ups read.  So it is copied, 64 KiB at a time, into an
 * unlinked file in the cache directory and mapped like perf's cached copy:
 * the scan lets pages go behind it and a look-up faults in the page of its
 * lines.  Not possible (no cache directory, no O_TMPFILE there): -errno,
 * and the heap copy it is.
 */
static int copy_to_tmp(const char *path, const char *cache_dir, char **buf,
		       size_t *len)
{
	char chunk[65536];
	size_t done = 0;
	int in, fd, err = 0;
	void *m;

	if (!cache_dir || sfp_cachedir_ensure(cache_dir))
		return -ENOENT;
	fd = open(cache_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = read(in, chunk, sizeof(chunk)), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		if (done + (size_t)n > KALLSYMS_MAP_MAX) {
			err = -EFBIG;
			break;
		}
		while (w < n) {
			ssize_t k = write(fd, chunk + w, (size_t)(n - w));

			if (k <= 0) {
				err = k < 0 ? -errno : -EIO;
				goto out;
			}
			w += k;
		}
		done += (size_t)n;
	}
	if (!err && !done)
		err = -ENODATA;
	if (!err) {
		m = mmap(NULL, done, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
		} else {
			*buf = m;
			*len = done;
		}
	}
out:
	if (in >= 0)
		close(in);
	close(fd);
	return err;
}

int sfp_kallsyms_index__open(const char *path, const char *modules_path,
			     const char *cache_dir,
			     struct sfp_kallsyms_index **out)
{
	char *buf = NULL, *mods = NULL;
	size_t len = 0, modslen = 0;
	bool mapped = false, copied = false;
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EAGAIN;	/* the full parse says what is wrong */
	}
	/*
	 * A regular file with a size (perf's cached copy): mapped, not
	 * copied into fresh memory (5 MiB of page faults and copying were
	 * most of the load).  /proc/kallsyms says size 0: read it.
	 */
	if (st.st_size > 0 && (uint64_t)st.st_size <= KALLSYMS_MAP_MAX) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);

		if (m != MAP_FAILED) {
			buf = m;
			len = (size_t)st.st_size;
			mapped = true;
		}
	}
	close(fd);
	if (!mapped && !copy_to_tmp(path, cache_dir, &buf, &len)) {
		mapped = true;
		copied = true;
	}
	if (!mapped && (err = sfp_read_file(path, KALLSYMS_MAP_MAX, &buf, &len)))
		return err;
	if (modules_path &&
	    sfp_read_file(modules_path, KALLSYMS_MAP_MAX, &mods, &modslen))
		mods = NULL;	/* no module list: sizes guessed */
	/* only a file that stays put can have its index kept */
	err = mapped && !copied && cache_dir ? kx_load(cache_dir, path, &st, buf, len,
					    mods, modslen, out) :
				    -ENOENT;
	if (err) {
		err = index_new(buf, len, mods, modslen, mapped, out);
		if (!err && mapped && !copied && cache_dir)
			kx_store(cache_dir, path, &st, *out);
	}
	if (err) {
		if (mapped)
			munmap(buf, len);
		else
			free(buf);
		free(mods);
		return err;
	}
	(*out)->mapped = mapped;
	return 0;
}

size_t sfp_kallsyms_index__release_pages(struct sfp_kallsyms_index *k)
{
	size_t n = 0;

	/* both only read once indexed: the file's text, the cached line
	 * offsets (a private mapping of the cache entry) */
	if (k && k->mapped && !madvise(k->buf, k->len, MADV_DONTNEED))
		n += k->len;
	if (k && k->cached.map &&
	    !madvise(k->cached.map, k->cached.size[0] + k->cached.size[1],
		     MADV_DONTNEED))
		n += k->cached.size[0] + k->cached.size[1];
	return n;
}

void sfp_kallsyms_index__free(struct sfp_kallsyms_index **kp)
{
	struct sfp_kallsyms_index *k;
	struct kmat *m;
	size_t i, pos = 0;

	if (!kp || !*kp)
		return;
	k = *kp;
	while ((m = sfp_idmap_next(&k->mat, &pos)))
		free(m->sym);
	sfp_idmap_free(&k->mat);
	for (i = 0; k->win && i < k->ncoarse; i++)
		free(k->win[i]);
	free(k->win);
	free(k->coarse);
	sfp_symtab_free(&k->tab);
	if (k->cached.map)
		sfp_fc_unmap(&k->cached);
	else
		free(k->e);
	free(k->mods);
	free(k->modules);
	if (k->mapped)
		munmap(k->buf, k->len);
	else
		free(k->buf);
	free(k);
	*kp = NULL;
}
