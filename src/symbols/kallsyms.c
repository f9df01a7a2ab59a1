// SPDX-License-Identifier: MIT
/*
 * Kernel symbols from /proc/kallsyms ("ADDR TYPE NAME[\t[MODULE]]"),
 * text symbols only (t, T, w, W).  kallsyms has no sizes: each symbol runs
 * to the next one, bounded by _etext for the core kernel and by the
 * module's end (from /proc/modules: "NAME SIZE REFS DEPS STATE ADDR") for
 * module symbols.  Without a module extent a symbol runs to the next one
 * of its own module; the last one (e.g. a [bpf] program) gets one page.
 */
#include "symbols/symtab.h"

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
		const char *q = p, *name, *mod = NULL;
		size_t nlen, mlen = 0;
		uint64_t addr, bound;
		uint32_t flags = SFP_SYM_KERNEL | SFP_SYM_SIZE_GUESSED;
		char type;

		if (!eol)
			eol = end;
		if (eol - q >= 20 && q[16] == ' ' && q[18] == ' ' &&
		    hex16(q, &addr))
			q += 16;
		else if (!sfp_sym_parse_hex(&q, eol, &addr) || eol - q < 4 ||
			 q[0] != ' ' || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		nlen = (size_t)(eol - name);
		{
			const char *tab = memchr(name, '\t', nlen);

			if (tab) {
				nlen = (size_t)(tab - name);
				mod = tab + 1;
				mlen = (size_t)(eol - mod);
			}
		}
		if (!nlen)
			goto next;
		if (nlen == 6 && !memcmp(name, "_etext", 6))
			etext = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			goto next;
		if (!addr)
			goto next;	/* kptr_restrict hides addresses */
		if (type == 'T' || type == 'W')
			flags |= SFP_SYM_GLOBAL;
		if (type == 'w' || type == 'W')
			flags |= SFP_SYM_WEAK;
		bound = KSYM_LAST_GUESS;
		if (mod) {
			/*
			 * Unknown extent: up to the next symbol (trimmed by
			 * finish), capped later if that is another module's.
			 */
			bound = UINT64_MAX - addr;
			flags |= SFP_SYM_NO_EXTENT;
			const struct kmod *km;

			/* "[ext4]": strip the brackets to find its extent. */
			if (mlen >= 2 && mod[0] == '[' && mod[mlen - 1] == ']') {
				km = find_module(mods, nmods, mod + 1, mlen - 2);
				if (km && addr >= km->start &&
				    addr - km->start < km->size) {
					bound = km->start + km->size - addr;
					flags &= ~SFP_SYM_NO_EXTENT;
				}
			}
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
