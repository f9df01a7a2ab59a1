// SPDX-License-Identifier: MIT
/*
 * The sorted symbol table and the ELF symbol-table reader.
 *
 * Aliases (several symbols at one address) are resolved the way perf's
 * choose_best_symbol() does, so that our names match `perf report`:
 * a symbol with a size beats one without, then non-weak beats weak, then
 * global beats local, then fewer leading underscores, then the longer
 * name, then the first in table order (as perf).
 * When neither alias has a size (kallsyms, asm without .size), perf first
 * closes sizes up to the next symbol, which leaves every alias but the
 * last one in table order empty: so the last one wins, here too.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cursor.h"
#include "elf/elf.h"
#include "symbols/symtab.h"

struct sfp_strchunk {
	struct sfp_strchunk *next;
	size_t used;
	size_t cap;
	char data[];
};

/*
 * A pool's chunks grow from STRCHUNK_FIRST to STRCHUNK_SIZE, doubling:
 * most pools hold a few names (a PLT's IRELATIVE targets, a small
 * program's demangled names), and a first chunk of 64 KiB cost the agent
 * 64 KiB for each file it symbolized, a container's ld.so among them.  A
 * big table reaches full-size chunks after seven small ones.
 */
#define STRCHUNK_FIRST 512u
#define STRCHUNK_SIZE (64u << 10)

const char *sfp_strpool_add(struct sfp_strpool *p, const char *s, size_t len)
{
	struct sfp_strchunk *c = p->head;
	char *r;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = !c ? STRCHUNK_FIRST
			   : c->cap < STRCHUNK_SIZE ? c->cap * 2 : STRCHUNK_SIZE;

		if (cap < len + 1)
			cap = len + 1;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = p->head;
		p->head = c;
	}
	r = c->data + c->used;
	memcpy(r, s, len);
	r[len] = 0;
	c->used += len + 1;
	return r;
}

void sfp_strpool_free(struct sfp_strpool *p)
{
	while (p->head) {
		struct sfp_strchunk *n = p->head->next;

		free(p->head);
		p->head = n;
	}
}

int sfp_symtab_reserve(struct sfp_symtab *t, size_t more)
{
	struct sfp_sym *n;
	size_t cap;

	if (more > SFP_SYMTAB_MAX || t->nr > SFP_SYMTAB_MAX - more)
		return -E2BIG;
	if (t->cap - t->nr >= more)
		return 0;
	cap = t->nr + more;
	n = realloc(t->syms, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->syms = n;
	t->cap = cap;
	return 0;
}

int sfp_symtab_add(struct sfp_symtab *t, uint64_t start, uint64_t size,
		   const char *name, uint32_t flags)
{
	struct sfp_sym *s;
	int err;

	if (t->nr == t->cap) {
		size_t more = t->cap ? t->cap : 256;

		if (more > SFP_SYMTAB_MAX - t->nr)
			more = SFP_SYMTAB_MAX - t->nr;
		if (!more)
			return -E2BIG;
		if ((err = sfp_symtab_reserve(t, more)))
			return err;
	}
	s = &t->syms[t->nr++];
	s->start = start;
	s->size = size;
	s->name = name;
	s->demangled = NULL;
	s->dso = NULL;
	s->flags = flags;
	s->seq = (uint32_t)(t->nr - 1);
	return 0;
}

static unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* <0: a is the better alias, >0: b is (perf's choose_best_symbol()). */
static int alias_cmp(const struct sfp_sym *a, const struct sfp_sym *b)
{
	bool az = a->size == 0 || (a->flags & SFP_SYM_SIZE_GUESSED);
	bool bz = b->size == 0 || (b->flags & SFP_SYM_SIZE_GUESSED);
	unsigned int ua, ub;
	size_t la, lb;

	/* A JIT reuses addresses: the newest entry of its map wins. */
	if ((a->flags & b->flags & SFP_SYM_JIT) && a->seq != b->seq)
		return a->seq > b->seq ? -1 : 1;
	if (az != bz)
		return az ? 1 : -1;
	if (az && a->seq != b->seq)
		return a->seq > b->seq ? -1 : 1;
	if (!!(a->flags & SFP_SYM_WEAK) != !!(b->flags & SFP_SYM_WEAK))
		return (a->flags & SFP_SYM_WEAK) ? 1 : -1;
	if (!!(a->flags & SFP_SYM_GLOBAL) != !!(b->flags & SFP_SYM_GLOBAL))
		return (a->flags & SFP_SYM_GLOBAL) ? -1 : 1;
	/*
	 * perf compares the names as it holds them: demangled, without
	 * parameters ("operator new[]" beats "operator new", where _Znam
	 * and _Znwm tie).  Only aliases get this far, so the demangling is
	 * rare.
	 */
	{
		char *da = sfp_demangle_no_params(a->name);
		char *db = sfp_demangle_no_params(b->name);
		const char *na = da ? da : a->name, *nb = db ? db : b->name;

		ua = leading_underscores(na);
		ub = leading_underscores(nb);
		la = strlen(na);
		lb = strlen(nb);
		free(da);
		free(db);
	}
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (la != lb)
		return la > lb ? -1 : 1;
	/* perf keeps the first in table order. */
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct sfp_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return alias_cmp(a, b);
}

/*
 * Stable LSD radix sort of the symbols by start, a byte per pass, only
 * the bytes in which starts differ (a DSO's span 3 or 4).  glibc's qsort
 * with sym_cmp through a function pointer was 8 % of a system-wide script
 * (hundreds of DSOs, libLLVM's 100k symbols among them).
 *
 * A key is one word: the start's offset from the lowest start above the
 * symbol's index, so equal starts keep table order without a pass over
 * the index bits.  The symbols are then put in place by following the
 * permutation's cycles.  Fresh memory is what costs here (a first touch
 * of a page faults): 16 bytes a symbol, where (start, index) pairs and a
 * second table took 80.  Return: false without memory, or when a key
 * would not fit a word (the caller then sorts with qsort).
 */
static bool sort_by_start(struct sfp_symtab *t)
{
	uint64_t lo = UINT64_MAX, hi = 0, any = 0, all = UINT64_MAX, diff;
	uint64_t *src, *dst, *tmp, mask;
	size_t i, n = t->nr, cnt[256];
	unsigned int shift, ibits = 1;

	for (i = 0; i < n; i++) {
		lo = t->syms[i].start < lo ? t->syms[i].start : lo;
		hi = t->syms[i].start > hi ? t->syms[i].start : hi;
	}
	while (ibits < 64 && (n - 1) >> ibits)
		ibits++;
	if (ibits >= 64 || ((hi - lo) >> (64 - ibits)))
		return false;
	mask = ((uint64_t)1 << ibits) - 1;
	src = malloc(2 * n * sizeof(*src));
	if (!src)
		return false;
	dst = src + n;
	for (i = 0; i < n; i++) {
		src[i] = (t->syms[i].start - lo) << ibits | i;
		any |= src[i];
		all &= src[i];
	}
	diff = (any ^ all) & ~mask;
	for (shift = ibits & ~7u; shift < 64; shift += 8) {
		size_t sum = 0, c;

		if (!((diff >> shift) & 0xff))
			continue;
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i] >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
		tmp = src;
		src = dst;
		dst = tmp;
	}
	/* position i takes the symbol now at src[i] & mask */
	for (i = 0; i < n; i++)
		src[i] &= mask;
	for (i = 0; i < n; i++) {
		struct sfp_sym keep;
		size_t j = i, k;

		if (src[i] == i)
			continue;
		keep = t->syms[i];
		while ((k = (size_t)src[j]) != i) {
			t->syms[j] = t->syms[k];
			src[j] = j;
			j = k;
		}
		t->syms[j] = keep;
		src[j] = j;
	}
	free(src < dst ? src : dst);
	return true;
}

void sfp_symtab_finish(struct sfp_symtab *t)
{
	size_t i, n = 0;

	if (!t->nr)
		return;
	/*
	 * kallsyms comes in address order already, only aliases (equal
	 * starts) in file order; other tables are put in that order by
	 * start.  sym_cmp is a total order (seq breaks every tie), so
	 * sorting each run of equal starts then gives exactly what qsort of
	 * the whole would.
	 */
	for (i = 0; i + 1 < t->nr; i++)
		if (t->syms[i].start > t->syms[i + 1].start)
			break;
	if (i + 1 < t->nr && !sort_by_start(t)) {
		qsort(t->syms, t->nr, sizeof(*t->syms), sym_cmp);
	} else {
		for (i = 0; i < t->nr; i = n) {
			for (n = i + 1; n < t->nr &&
			     t->syms[n].start == t->syms[i].start; n++)
				;
			if (n - i > 1)
				qsort(&t->syms[i], n - i, sizeof(*t->syms),
				      sym_cmp);
		}
		n = 0;
	}
	/* The best alias sorts first among equal starts: keep it only. */
	for (i = 0; i < t->nr; i++) {
		if (n && t->syms[n - 1].start == t->syms[i].start) {
			struct sfp_sym *k = &t->syms[n - 1];

			/* A guessed size may still learn from a real one. */
			if ((k->flags & SFP_SYM_SIZE_GUESSED) &&
			    !(t->syms[i].flags & SFP_SYM_SIZE_GUESSED) &&
			    t->syms[i].size) {
				k->size = t->syms[i].size;
				k->flags &= ~SFP_SYM_SIZE_GUESSED;
			}
			continue;
		}
		t->syms[n++] = t->syms[i];
	}
	t->nr = n;
	/* Sizes we do not know run to the next symbol (bounded by the guess). */
	for (i = 0; i + 1 < n; i++) {
		struct sfp_sym *s = &t->syms[i];
		uint64_t gap = t->syms[i + 1].start - s->start;

		if ((s->flags & SFP_SYM_SIZE_GUESSED) && s->size > gap)
			s->size = gap;
	}
}

struct sfp_sym *sfp_symtab_find(struct sfp_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr;
	struct sfp_sym *s;

	if (t->psyms)
		return sfp_symtab_packed_find(t, addr);
	if (t->layered)
		return sfp_symtab_layered_find(t, addr);

	/* Last symbol with start <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	if (addr - s->start < s->size || addr == s->start)
		return s;
	return NULL;
}

void sfp_symtab_free(struct sfp_symtab *t)
{
	sfp_symtab_packed_free(t);
	free(t->segs);
	free(t->syms);
	sfp_strpool_free(&t->pool);
	memset(t, 0, sizeof(*t));
}

/* Section table entries we need to bound zero-size symbols. */
struct sec_bound {
	uint64_t addr;
	uint64_t size;
	bool exec;
	bool text;	/* perf's elf_sec__is_text(): "text" in the name */
};

static int load_symbols(struct sfp_symtab *t, struct sfp_elf *e,
			const struct sfp_elf_section *sec,
			const struct sec_bound *secs, size_t nsecs)
{
	struct sfp_elf_section strsec;
	const uint8_t *data, *strs;
	size_t size, strsize, entsize, i, nsyms;
	bool is64 = sfp_elf_is_64(e);
	struct sfp_cursor c;
	Elf_Scn *scn;
	GElf_Shdr sh;
	size_t bad_names = 0;
	int err, added = 0;

	err = sfp_elf_section_data(e, sec, &data, &size);
	if (err)
		return err == -ENODATA ? 0 : err;
	if (!size)
		return 0;
	/* sh_link names the string table; sfp_elf_section() lacks it. */
	scn = elf_getscn(sfp_elf_handle(e), sec->index);
	if (!scn || !gelf_getshdr(scn, &sh) ||
	    sfp_elf_section(e, sh.sh_link, &strsec)) {
		pr_warn("%s: %s: bad string table link", sfp_elf_name(e),
			sec->name);
		return -EBADMSG;
	}
	err = sfp_elf_section_data(e, &strsec, &strs, &strsize);
	if (err) {
		pr_warn("%s: %s: string table %s unreadable", sfp_elf_name(e),
			sec->name, strsec.name);
		return -EBADMSG;
	}
	/*
	 * libelf hands symbol data over in the host's layout (it converts
	 * from the file's byte order), so no swapping here.
	 */
	entsize = is64 ? 24 : 16;
	nsyms = size / entsize;
	/*
	 * Room for every entry at once: growing by doubling touched (and
	 * copied) twice the pages, and a fresh page costs a fault; the
	 * entries that are not functions leave their pages untouched.
	 */
	if (sfp_symtab_reserve(t, nsyms) == -ENOMEM)
		return -ENOMEM;
	sfp_cursor_init(&c, data, nsyms * entsize, false);
	for (i = 0; i < nsyms; i++) {
		uint32_t name, v32, s32;
		uint64_t value, symsize;
		uint8_t info, other, type, bind;
		uint16_t shndx;
		const char *nm;
		uint32_t flags = 0;

		if (sfp_cursor_seek(&c, i * entsize) || sfp_cursor_u32(&c, &name))
			return -EBADMSG;
		if (is64) {
			if (sfp_cursor_u8(&c, &info) || sfp_cursor_u8(&c, &other) ||
			    sfp_cursor_u16(&c, &shndx) ||
			    sfp_cursor_u64(&c, &value) ||
			    sfp_cursor_u64(&c, &symsize))
				return -EBADMSG;
		} else {
			if (sfp_cursor_u32(&c, &v32) || sfp_cursor_u32(&c, &s32) ||
			    sfp_cursor_u8(&c, &info) || sfp_cursor_u8(&c, &other) ||
			    sfp_cursor_u16(&c, &shndx))
				return -EBADMSG;
			value = v32;
			symsize = s32;
		}
		type = GELF_ST_TYPE(info);
		bind = GELF_ST_BIND(info);
		if (shndx == SHN_UNDEF || value == 0)
			continue;
		/*
		 * Code labels count as functions, as perf's
		 * elf_sym__is_label() has them: an untyped, visible symbol
		 * in a section named *text* (ld.so's entry `_start` and
		 * `_dl_start_user`, in assembly without .type).
		 */
		if (type == STT_NOTYPE) {
			uint8_t vis = GELF_ST_VISIBILITY(other);

			/* (not the linker's end markers past the code:
			 * `_etext`, `__bss_start`, nothing runs there) */
			if (shndx >= nsecs || !secs[shndx].text ||
			    vis == STV_HIDDEN || vis == STV_INTERNAL ||
			    value < secs[shndx].addr ||
			    value - secs[shndx].addr >= secs[shndx].size)
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		if (name >= strsize) {
			/* Name the first; count the rest (no flood). */
			if (!bad_names++)
				pr_warn("%s: %s: symbol %zu (file offset %#llx) name offset %#x outside %s",
					sfp_elf_name(e), sec->name, i,
					(unsigned long long)(sec->offset + i * entsize),
					name, strsec.name);
			continue;
		}
		nm = (const char *)strs + name;
		if (strnlen(nm, strsize - name) == strsize - name || !*nm)
			continue;	/* unterminated or empty */
		if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
			flags |= SFP_SYM_GLOBAL;
		else if (bind == STB_WEAK)
			flags |= SFP_SYM_WEAK;
		if (!symsize) {
			/* Bound the guess by the end of the symbol's section. */
			flags |= SFP_SYM_SIZE_GUESSED;
			symsize = 0;
			if (shndx < nsecs && value >= secs[shndx].addr &&
			    value - secs[shndx].addr < secs[shndx].size)
				symsize = secs[shndx].addr + secs[shndx].size - value;
		}
		err = sfp_symtab_add(t, value, symsize, nm, flags);
		if (err)
			return err;
		added++;
	}
	if (bad_names > 1)
		pr_warn("%s: %s: %zu symbols with names outside %s skipped",
			sfp_elf_name(e), sec->name, bad_names, strsec.name);
	return added;
}

bool sfp_elf_has_symtab(const struct sfp_elf *e)
{
	struct sfp_elf_section sec;

	return !sfp_elf_find_section(e, NULL, SHT_SYMTAB, &sec);
}

int sfp_symtab_load_elf(struct sfp_symtab *t, struct sfp_elf *e,
			unsigned int which)
{
	size_t i, n = sfp_elf_num_sections(e);
	struct sec_bound *secs;
	struct sfp_elf_section sec;
	int err, total = 0;

	if (n > (1u << 20)) {
		pr_warn("%s: %zu sections is too many", sfp_elf_name(e), n);
		return -EBADMSG;
	}
	secs = calloc(n ? n : 1, sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (sfp_elf_section(e, i, &sec))
			continue;
		secs[i].addr = sec.addr;
		secs[i].size = sec.size;
		secs[i].exec = sec.flags & SHF_EXECINSTR;
		secs[i].text = sec.name && strstr(sec.name, "text");
	}
	for (i = 1; i < n; i++) {
		if (sfp_elf_section(e, i, &sec))
			continue;
		if (!((sec.type == SHT_SYMTAB && (which & SFP_LOAD_SYMTAB)) ||
		      (sec.type == SHT_DYNSYM && (which & SFP_LOAD_DYNSYM))))
			continue;
		err = load_symbols(t, e, &sec, secs, n);
		if (err < 0) {
			free(secs);
			return err;
		}
		total += err;
	}
	free(secs);
	return total;
}

int sfp_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = NULL;
	int fd, err = 0;

	*buf = NULL;
	*len = 0;
	/*
	 * Non-blocking and regular files only: a FIFO planted as
	 * /tmp/perf-PID.map must not hang us.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	{
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			pr_warn("%s: not a regular file", path);
			return -EINVAL;
		}
	}
	/* /proc files report size 0: read until EOF into a growing buffer. */
	for (;;) {
		ssize_t r;

		if (!b || cap - n < 4096) {
			char *nb;

			if (b)
				cap *= 2;
			if (cap > max + 4096) {
				err = -EFBIG;
				break;
			}
			nb = realloc(b, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* Hex numbers of kallsyms and perf map lines (see symtab.h). */
/* digit value + 1; 0: not a hex digit */
static const unsigned char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

bool sfp_sym_parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t r = 0;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	/* a table: this loop runs over every address of kallsyms */
	for (; s < end; s++) {
		int d = hexval[(unsigned char)*s] - 1;

		if (d < 0)
			break;
		if (++digits > 16)
			return false;
		r = r << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*p = s;
	*v = r;
	return true;
}
