// SPDX-License-Identifier: MIT
/*
 * `sfprof script`: print the samples of a perf.data file in the layout of
 * `perf script` with callchains:
 *
 *   comm  tid [cpu]  secs.usecs:     period event:
 *   \t<addr> <sym>+0x<off> (<dso>)
 *
 * Addresses are printed as perf 6.1 prints them: inside a mapped file, the
 * file offset (ip - map start + pgoff); kernel and unmapped addresses raw.
 * Deferred user callchains are stitched like perf 6.19 (off with
 * --no-merge-callchains, which also prints the deferred records).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include <sfprof/perf.h>
#include <sfprof/stitch.h>
#include <sfprof/symbols.h>

#include "cli.h"
#include "common/htab.h"
#include "perf/buildid-cache.h"
#include "perf/machine.h"
#include "perf/dwarf.h"
#include "perf/callchain.h"
#include "symbols/bfd-name.h"
#include "symbols/jitdump.h"

#define FC_BITS 12
#define WHO_SLOTS 64
#define FC_LINE 104	/* longer lines are built every time */

struct script {
	struct sfp_perf_reader *rd;
	struct sfp_machine *m;
	struct sfp_symbolizer *sym;
	struct sfp_symbolizer_dso **dcache;	/* by machine dso index */
	int *dcache_err;
	size_t dcache_len;
	struct sfp_perf_unwinder *uw;
	int name_width;
	bool no_merge;
	FILE *out;
	/* our own output buffer: stdio's per-call bookkeeping was a fifth
	 * of a big run (one call per piece of each frame line) */
	char *ob;
	size_t on;
	size_t flushes;
	bool ob_err;
	uint64_t *chain;
	size_t chain_len;
	/* frame lines already built, by (pid, ip, pid's map generation):
	 * recursion and hot loops repeat the same return addresses, and a
	 * hit is then two memcpy()s instead of a map search, a symbol
	 * lookup and the formatting */
	struct fc_ent {
		uint64_t ip, gen;
		uint32_t pid;
		uint16_t len;		/* 0: empty */
		char line[FC_LINE];	/* "%16lx sym+0xoff (dso)\n" */
	} *fcache;
	/* the leading "comm tid [cpu] " columns per thread slot, and the
	 * seconds of the last time stamp: rebuilt only when they change */
	struct who_ent {
		uint64_t gen;		/* the machine's comm_gen then */
		uint32_t tid, cpu;
		bool has_cpu, chain;
		uint8_t len;		/* 0: empty */
		char comm[32];
		char out[80];
	} who[WHO_SLOTS];
	/* the "period event: " columns of the last sample, by what makes
	 * them (in a system-wide file: the same for every sample) */
	struct mid_ent {
		const struct sfp_perf_evsel *evsel;
		uint64_t period;
		int name_width;
		bool has_period;
		uint8_t len;		/* 0: empty */
		char out[96];
	} mid;
	uint64_t secs;
	char secs_str[24];
	size_t secs_len;
	/* demangled names by the symbolizer's (stable) raw-name pointer */
	struct dm_ent { const char *raw; char *name; } *dm;
	size_t dm_cap, dm_n;
	struct sfp_htab dm_index;
	/* perf's "(inlined)" lines (on unless --no-inline): the inline
	 * chain of each (DSO, address) a dwarf-unwound frame hit, read
	 * once; see inline_chain() */
	bool no_inline;
	struct ic_ent {
		uint64_t vaddr;
		uint32_t dso;		/* machine DSO index + 1; 0: empty */
		uint32_t n;		/* levels; 0: none (a plain frame) */
		const char **names;	/* innermost first, perf's names */
	} *ic;			/* by hand: see ic_slot() for why */
	size_t ic_cap, ic_n;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof script [-i FILE] [--no-merge-callchains] [--[no-]inline]\n"
"                     [--[no-]debuginfod]\n"
"\n"
"Print the samples of a perf.data file with their call chains, in the\n"
"layout of `perf script`.\n"
"\n"
"  -i, --input FILE          perf.data file (default: perf.data; '-': a\n"
"                            pipe-mode stream on standard input)\n"
"      --no-merge-callchains show samples with deferred user callchains\n"
"                            unmerged and print the deferred records\n"
"      --no-inline           no \"(inlined)\" lines: by default a frame that\n"
"                            the dwarf unwinder found (perf record\n"
"                            --call-graph dwarf) is printed as its inline\n"
"                            chain from the DSO's DWARF, as perf script does\n"
"      --buildid-dir DIR     build-id cache to read DSO copies from (default\n"
"                            $PERF_BUILDID_DIR, else ~/.debug)\n"
"      --symfs DIR           look for files under DIR too: an unpacked\n"
"                            'sfprof archive' (its .build-id) or a copy of the\n"
"                            recorded machine's files\n");
	cli_debuginfod_usage(f, 28);
	fprintf(f,
"  -h, --help                this text\n");
}

static const char *event_name(const struct sfp_perf_evsel *e)
{
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy",
	};
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
	};

	if (!e)
		return "[unknown]";
	if (e->name)
		return e->name;
	if (e->attr.type == 1 && e->attr.config < ARRAY_SIZE(sw))
		return sw[e->attr.config];
	if (e->attr.type == 0 && e->attr.config < ARRAY_SIZE(hw))
		return hw[e->attr.config];
	return "[unknown]";
}

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * The symbol handle of DSO idx, first met in a sample of process pid.
 * A file with a recorded build-id that the build-id cache lacks is looked
 * for through that process (/proc/PID/root, map_files) while it runs: a
 * container's file at a path where the host has another build.  The
 * symbolizer takes it only with the recorded build-id (a recycled pid or
 * another host's recording finds none, never a wrong one).
 */
static struct sfp_symbolizer_dso *dso_handle(struct script *s, uint32_t idx,
					     const struct sfp_pdso *d,
					     uint32_t pid)
{
	if (idx >= s->dcache_len) {
		size_t n = (idx + 1) * 2, i;
		void *a = realloc(s->dcache, n * sizeof(*s->dcache));
		void *b;

		if (!a)
			return NULL;
		s->dcache = a;
		b = realloc(s->dcache_err, n * sizeof(*s->dcache_err));
		if (!b)
			return NULL;
		s->dcache_err = b;
		for (i = s->dcache_len; i < n; i++) {
			s->dcache[i] = NULL;
			s->dcache_err[i] = 0;
		}
		s->dcache_len = n;
	}
	if (!s->dcache[idx] && !s->dcache_err[idx]) {
		const struct sfp_perf_header_info *h =
			sfp_perf_reader__header(s->rd);
		char buf[4096];
		const char *path = sfp_perf_dso_path(h, d->name, d->build_id,
						     d->build_id_size, buf,
						     sizeof(buf));
		const uint8_t *id = NULL;
		size_t idlen = 0;
		int err;

		/* the recorded build-id (the MMAP2 record's, else the header's
		 * table): never a replaced file's names; the vDSO's own
		 * stands in when the recorded one is its */
		sfp_perf_dso_build_id(h, d, &id, &idlen);
		err = sfp_perf_dso_unverifiable(h, d, path)
			      ? -ESTALE
			      : sfp_symbolizer__get_dso(
					s->sym,
					idlen && path == d->name && pid ? (int)pid
									: -1,
					path, id, idlen, &s->dcache[idx]);

		if (err)
			s->dcache_err[idx] = err;
	}
	return s->dcache[idx];
}

/*
 * perf 6.1 demangles without parameters or return types (DMGL_NO_OPTS
 * unless -v): "pop_scope", not "pop_scope()".  Kernel names stay raw.
 */
static bool dm_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct script *s = ctx;

	return s->dm[idx].raw == key;
}

static const char *perf_demangle(struct script *s, const char *raw)
{
	uint32_t hash, i;
	struct dm_ent *e;

	if (!raw || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return raw ? raw : "[unknown]";
	hash = sfp_hash64((uintptr_t)raw, 0);
	i = sfp_htab_find(&s->dm_index, hash, dm_row_is, s, raw);
	if (i != SFP_HTAB_NONE)
		return s->dm[i].name ? s->dm[i].name : raw;
	if (SFP_HTAB_ROWS_RESERVE(s->dm, s->dm_cap, s->dm_n + 1) ||
	    sfp_htab_add(&s->dm_index, hash, (uint32_t)s->dm_n))
		return raw;
	e = &s->dm[s->dm_n++];
	e->raw = raw;
	e->name = cplus_demangle(raw, DMGL_NO_OPTS);
	return e->name ? e->name : raw;
}

static const char *perf_name(struct script *s, const struct sfp_symbol *sym)
{
	return perf_demangle(s, sym->raw_name ? sym->raw_name : sym->name);
}

#define OB_CAP (1u << 18)

static void ob_flush(struct script *s)
{
	if (s->on && fwrite(s->ob, 1, s->on, s->out) != s->on)
		s->ob_err = true;
	s->on = 0;
	s->flushes++;
}

/* Room for n more bytes (n <= OB_CAP). */
static char *ob_room(struct script *s, size_t n)
{
	if (OB_CAP - s->on < n)
		ob_flush(s);
	return s->ob + s->on;
}

static void ob_put(struct script *s, const char *p, size_t n)
{
	if (n > OB_CAP / 2) {
		ob_flush(s);
		if (fwrite(p, 1, n, s->out) != n)
			s->ob_err = true;
		return;
	}
	memcpy(ob_room(s, n), p, n);
	s->on += n;
}

static void ob_str(struct script *s, const char *p)
{
	ob_put(s, p, strlen(p));
}

static void ob_char(struct script *s, char c)
{
	*ob_room(s, 1) = c;
	s->on++;
}

/* printf into the buffer (the per-sample header; cold next to frames) */
__attribute__((format(printf, 2, 3)))
static void ob_printf(struct script *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf)) {
		ob_put(s, buf, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big) {
			s->ob_err = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		ob_put(s, big, (size_t)n);
		free(big);
	}
}

static const char dec2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal of v, zero-padded to at least zeros digits; returns end. */
static char *put_dec(char *p, uint64_t v, int zeros)
{
	char t[24], *e = t + sizeof(t), *q = e;
	size_t n;

	/* two digits per division (by a constant: a multiply) */
	while (v >= 100) {
		q -= 2;
		memcpy(q, dec2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, dec2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	n = (size_t)(e - q);
	while (zeros-- > (int)n)
		*p++ = '0';
	memcpy(p, q, n);
	return p + n;
}

/* str right-aligned in width, like "%*s" */
static void ob_pad(struct script *s, const char *str, size_t len, int width)
{
	if (width > 0 && (size_t)width > len) {
		size_t pad = (size_t)width - len;

		if (pad > OB_CAP / 2)	/* (absurd widths: a piece at a time) */
			pad = OB_CAP / 2;
		memset(ob_room(s, pad), ' ', pad);
		s->on += pad;
		ob_pad(s, str, len, width - (int)pad);
		return;
	}
	ob_put(s, str, len);
}

/* Lowercase hex of v, right-aligned in width (0: no padding); returns end. */
static char *put_hex(char *p, uint64_t v, int width)
{
	char t[16];
	int n = 0;

	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (width-- > n)
		*p++ = ' ';
	while (n)
		*p++ = t[--n];
	return p;
}

/*
 * One frame line, "<prefix>%16lx <name>[+0x<off>] (<dso>)\n", built by
 * hand: printf's format parsing was the largest cost of a big script run.
 */
static void emit_frame(struct script *s, const char *prefix, uint64_t addr,
		       const char *name, bool has_off, uint64_t off,
		       const char *dso)
{
	size_t np = strlen(prefix), nn = strlen(name), nd = strlen(dso);
	/* prefix, 16+ hex digits, ' ', name, "+0x" 16, " (", dso, ")\n" */
	size_t need = np + nn + nd + 64;
	char *p0, *p;

	if (need > OB_CAP / 2) {	/* absurd names: piecewise */
		char buf[64];

		p = put_hex(buf, addr, 16);
		ob_str(s, prefix);
		ob_put(s, buf, (size_t)(p - buf));
		ob_char(s, ' ');
		ob_put(s, name, nn);
		if (has_off) {
			ob_put(s, "+0x", 3);
			p = put_hex(buf, off, 0);
			ob_put(s, buf, (size_t)(p - buf));
		}
		ob_put(s, " (", 2);
		ob_put(s, dso, nd);
		ob_put(s, ")\n", 2);
		return;
	}
	p0 = p = ob_room(s, need);
	memcpy(p, prefix, np);
	p = put_hex(p + np, addr, 16);
	*p++ = ' ';
	memcpy(p, name, nn);
	p += nn;
	if (has_off) {
		memcpy(p, "+0x", 3);
		p = put_hex(p + 3, off, 0);
	}
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, dso, nd);
	p += nd;
	*p++ = ')';
	*p++ = '\n';
	s->on += (size_t)(p - p0);
}

/* One frame line, uncached: "<prefix>%16lx sym+0xoff (dso)\n". */
static void build_frame(struct script *s, uint32_t pid, uint64_t ip,
			bool kernel, const char *prefix)
{
	struct sfp_symbol sym;

	if (kernel) {
		const struct sfp_ksym *ks = sfp_machine__ksym(s->m, ip);

		if (ks)		/* a BPF program: its name is its DSO's */
			emit_frame(s, prefix, ip, ks->name, true,
				   ip - ks->start, ks->name);
		else if (!sfp_symbolizer__kernel(s->sym, ip, &sym))
			emit_frame(s, prefix, ip,
				   sym.raw_name ? sym.raw_name : sym.name, true,
				   sym.offset,
				   sym.dso ? sym.dso : "[kernel.kallsyms]");
		else
			emit_frame(s, prefix, ip, "[unknown]", false, 0,
				   "[kernel.kallsyms]");
		return;
	}
	{
		/*
		 * A kernel address where the chain says user (garbage a
		 * frame-pointer walk found on the stack) is no kernel frame
		 * for perf either: it looks in the process's maps only.
		 */
		const struct sfp_pmap *map = ip >= SFP_KERNEL_START ? NULL :
					     sfp_machine__find(s->m, pid, ip);
		struct sfp_symbolizer_dso *dh;
		struct sfp_pdso *d;
		uint64_t vaddr, addr;

		if (!map) {
			emit_frame(s, prefix, ip, "[unknown]", false, 0,
				   "[unknown]");
			return;
		}
		d = sfp_machine__dso(s->m, map->dso);
		d->hit = true;
		if (d->jit) {
			/* perf's identity map: the address itself */
			/* named by the jitdump the process mapped, if any
			 * (what perf inject --jit reads), else its map */
			if (!sfp_symbolizer__jit_frame(
				    s->sym, (int)pid,
				    sfp_machine__jitdump(s->m, pid), ip, &sym))
				emit_frame(s, prefix, ip,
					   sym.raw_name ? sym.raw_name : sym.name,
					   true, sym.offset, d->name);
			else
				emit_frame(s, prefix, ip, "[unknown]", false, 0,
					   d->name);
			return;
		}
		addr = ip - map->start + map->pgoff;
		dh = sfp_perf_dso_has_symbols(d) ? dso_handle(s, map->dso, d, pid) :
						   NULL;
		if (dh && !sfp_symbolizer_dso__vaddr(dh, map->start, map->pgoff,
						     ip, &vaddr) &&
		    !sfp_symbolizer_dso__find(dh, vaddr, &sym))
			emit_frame(s, prefix, addr, perf_name(s, &sym), true,
				   sym.offset, d->name);
		else
			emit_frame(s, prefix, addr, "[unknown]", false, 0,
				   d->name);
	}
}

/* A missed line: build it in the output buffer, keep a copy if it fits. */
static __attribute__((noinline)) void
frame_miss(struct script *s, struct fc_ent *fc, uint32_t pid, uint64_t ip,
	   bool k, const char *prefix, uint64_t gen)
{
	size_t start, n, flushes;

	if (OB_CAP - s->on < OB_CAP / 2)
		ob_flush(s);
	start = s->on;
	flushes = s->flushes;
	build_frame(s, pid, ip, k, prefix);
	n = s->on - start;
	if (s->flushes != flushes || !prefix[0] || prefix[1] ||
	    n - 1 > sizeof(fc->line)) {
		fc->len = 0;	/* too long, or flushed on the way */
		return;
	}
	memcpy(fc->line, s->ob + start + 1, n - 1);
	fc->len = (uint16_t)(n - 1);
	fc->ip = ip;
	fc->pid = pid;
	fc->gen = gen;
}

/*
 * One frame line through the line cache.  Kernel lines do not depend on
 * the maps, only on the KSYMBOL ranges (their generation is in the key);
 * user lines do: ugen is the generation of the sample's process's maps
 * + 1, taken once per sample (the machine-wide one changed with every
 * mmap of any process: in a system-wide file nearly every user line
 * missed).  Inline: this runs for every frame, and a hit is a few
 * compares and one copy.
 */
static inline __attribute__((always_inline)) void
print_frame(struct script *s, uint32_t pid, uint64_t ip, bool kernel,
	    const char *prefix, uint64_t ugen)
{
	bool k = kernel;
	uint64_t gen = k ? sfp_machine__ksym_gen(s->m) : ugen;
	struct fc_ent *fc;
	char *p;

	/* nor on the process: one entry serves every task (a system-wide
	 * file's kernel paths recur across hundreds of pids, and each miss
	 * is a kallsyms search: 17 % of script on such a file) */
	if (k)
		pid = 0;

	fc = &s->fcache[(ip ^ (ip >> FC_BITS) ^ pid * 0x9e3779b1u) &
			((1u << FC_BITS) - 1)];
	if (fc->len && fc->ip == ip && fc->pid == pid && fc->gen == gen &&
	    prefix[0] && !prefix[1]) {
		/* a constant-size copy (inline moves, no call); only len of
		 * it counts */
		p = ob_room(s, 1 + sizeof(fc->line));
		p[0] = prefix[0];
		memcpy(p + 1, fc->line, sizeof(fc->line));
		s->on += 1 + fc->len;
		return;
	}
	frame_miss(s, fc, pid, ip, k, prefix, gen);
}

/*
 * perf 6.1's inlined frames (machine.c append_inlines(), srcline.c): for
 * each frame its dwarf unwinder found, in a DSO perf has a symbol for,
 * it asks `addr2line -f -i` (Debian builds perf without libbfd) about
 * the address in the file its symbols came from (the debug file when
 * there is one).  When addr2line knows the source line, the frame is
 * replaced by one line per level of the answer, innermost first, each
 * named by its (demangled) function and at the frame's address and
 * offset; a level named as the frame's symbol is printed as the frame
 * itself ("sym+0xoff (dso)"), every other one "name+0xoff (inlined)".
 * No line known ("??:0"): the plain frame.  The chain comes from our
 * DWARF reader (the names addr2line gives: linkage name, else DW_AT_name;
 * an inlined level without a name "??"); where DWARF has line numbers
 * but no function (assembly), or the innermost function has no linkage
 * name in C++ and the like, addr2line names the code by the symbol
 * table (sfp_symbolizer_dso__bfd_name()).
 */
#define IC_MAX_LEVELS 64

/* Not sfp_htab: every dwarf-unwound frame probes this; rows beside the
 * index and sfp_hash64() cost 0.3 % more instructions (callgrind, a
 * dwarf file), where the entry in the slot is one load. */
static struct ic_ent *ic_slot(struct script *s, uint32_t dso, uint64_t vaddr)
{
	size_t i, mask;

	if ((s->ic_n + 1) * 2 > s->ic_cap) {
		size_t ncap = s->ic_cap ? s->ic_cap * 2 : 1024, j;
		struct ic_ent *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (j = 0; j < s->ic_cap; j++) {
			const struct ic_ent *e = &s->ic[j];

			if (!e->dso)
				continue;
			for (i = (e->vaddr * 0x9e3779b97f4a7c15ull ^ e->dso) &
				 (ncap - 1);
			     n[i].dso; i = (i + 1) & (ncap - 1))
				;
			n[i] = *e;
		}
		free(s->ic);
		s->ic = n;
		s->ic_cap = ncap;
	}
	mask = s->ic_cap - 1;
	for (i = (vaddr * 0x9e3779b97f4a7c15ull ^ (dso + 1)) & mask; s->ic[i].dso;
	     i = (i + 1) & mask)
		if (s->ic[i].dso == dso + 1 && s->ic[i].vaddr == vaddr)
			return &s->ic[i];
	return &s->ic[i];
}

/* The inline chain of vaddr in dh as perf names its levels; NULL: out of
 * memory (the caller prints the plain frame). */
static const struct ic_ent *inline_chain(struct script *s, uint32_t dso,
					 struct sfp_symbolizer_dso *dh,
					 uint64_t vaddr)
{
	struct sfp_inline_frame fr[IC_MAX_LEVELS];
	struct ic_ent *e = ic_slot(s, dso, vaddr);
	size_t k, i;
	int n;

	if (!e)
		return NULL;
	if (e->dso)
		return e;
	e->dso = dso + 1;
	e->vaddr = vaddr;
	e->n = 0;
	e->names = NULL;
	s->ic_n++;
	n = sfp_symbolizer_dso__a2l_inlines(dh, vaddr, fr, ARRAY_SIZE(fr));
	/* addr2line's "??:0": no line for the address, no chain */
	if (n <= 0 || (!fr[0].file && !fr[0].line))
		return e;
	k = (size_t)n < ARRAY_SIZE(fr) ? (size_t)n : ARRAY_SIZE(fr);
	e->names = calloc(k, sizeof(*e->names));
	if (!e->names)
		return e;
	for (i = 0; i < k; i++) {
		const char *nm = fr[i].name;

		if (!nm && n == 1 && !fr[0].inlined)
			nm = sfp_symbolizer_dso__bfd_name(dh, vaddr);
		e->names[i] = nm ? perf_demangle(s, nm) : "??";
	}
	e->n = (uint32_t)k;
	return e;
}

/* A frame of the dwarf unwinder: its inline chain, else the plain line. */
static void print_unwound(struct script *s, uint32_t pid, uint64_t ip,
			  uint64_t ugen)
{
	const struct sfp_pmap *map = ip >= SFP_KERNEL_START ? NULL :
				     sfp_machine__find(s->m, pid, ip);
	struct sfp_symbolizer_dso *dh;
	const struct ic_ent *e;
	struct sfp_symbol sym;
	struct sfp_pdso *d;
	uint64_t vaddr;
	const char *base;
	uint32_t i;

	if (!map)
		goto plain;
	d = sfp_machine__dso(s->m, map->dso);
	/* perf asks addr2line about files only: not "[vdso]", not JIT
	 * code or its perf-PID.map */
	if (d->jit || d->name[0] == '[' || !sfp_perf_dso_has_symbols(d) ||
	    !(dh = dso_handle(s, map->dso, d, pid)) ||
	    sfp_symbolizer_dso__vaddr(dh, map->start, map->pgoff, ip, &vaddr) ||
	    sfp_symbolizer_dso__find(dh, vaddr, &sym) ||
	    !(e = inline_chain(s, map->dso, dh, vaddr)) || !e->n)
		goto plain;
	d->hit = true;
	base = perf_name(s, &sym);
	for (i = 0; i < e->n; i++) {
		bool real = !strcmp(e->names[i], base);

		emit_frame(s, "\t", ip - map->start + map->pgoff, e->names[i],
			   true, sym.offset, real ? d->name : "inlined");
	}
	return;
plain:
	print_frame(s, pid, ip, false, "\t", ugen);
}

/*
 * perf reads kernel symbols from its build-id cache copy of kallsyms
 * (~/.debug/[kernel.kallsyms]/<build-id>/kallsyms, saved at record time)
 * when the file names the kernel's build-id; so do we, which is also much
 * cheaper than having the kernel generate /proc/kallsyms.
 */
static const char *cached_kallsyms(struct sfp_perf_reader *rd, char *buf,
				   size_t len)
{
	const struct sfp_perf_header_info *h = sfp_perf_reader__header(rd);
	const char *home = getenv("HOME");
	size_t i, j;

	if (!home)
		return NULL;
	for (i = 0; i < h->nr_build_ids; i++) {
		const struct sfp_perf_build_id *b = &h->build_ids[i];
		char hex[41];

		if (strcmp(b->filename, "[kernel.kallsyms]") || !b->size)
			continue;
		for (j = 0; j < b->size && j < 20; j++)
			snprintf(hex + 2 * j, 3, "%02x", b->id[j]);
		snprintf(buf, len, "%s/.debug/[kernel.kallsyms]/%s/kallsyms",
			 home, hex);
		return access(buf, R_OK) ? NULL : buf;
	}
	return NULL;
}

/* "%06u" of v < 1000000, two digits at a time */
static char *put_usec(char *p, uint32_t v)
{
	memcpy(p, dec2 + 2 * (v / 10000), 2);
	memcpy(p + 2, dec2 + 2 * (v / 100 % 100), 2);
	memcpy(p + 4, dec2 + 2 * (v % 100), 2);
	return p + 6;
}

/* "comm  tid [cpu] " built by hand, as printf would ("%16s " or "%s ",
 * "%5d ", "[%03u] "), into t (room for a comm shorter than 32 bytes);
 * returns the length */
static size_t build_who(char *t, const char *comm, int tid, bool chain,
			bool has_cpu, uint32_t cpu)
{
	size_t cl = strlen(comm), n = 0;
	char d[24], *p;

	if (!chain)
		while (n + cl < 16)
			t[n++] = ' ';
	memcpy(t + n, comm, cl);
	n += cl;
	t[n++] = ' ';
	if (tid < 0) {
		d[0] = '-';
		p = put_dec(d + 1, (uint64_t)-(int64_t)tid, 0);
	} else {
		p = put_dec(d, (uint64_t)tid, 0);
	}
	{
		size_t dl = (size_t)(p - d);

		while (dl < 5) {
			t[n++] = ' ';
			dl++;
		}
		memcpy(t + n, d, (size_t)(p - d));
		n += (size_t)(p - d);
	}
	t[n++] = ' ';
	if (has_cpu) {
		t[n++] = '[';
		p = put_dec(t + n, cpu, 3);
		n = (size_t)(p - t);
		t[n++] = ']';
		t[n++] = ' ';
	}
	return n;
}

static void print_start(struct script *s, const struct sfp_perf_event *ev,
			bool chain)
{
	const struct sfp_perf_sample *sm = &ev->sample;
	bool has_cpu = sm->present & SFP_PERF_SAMPLE_CPU;
	struct who_ent *w = &s->who[sm->tid % WHO_SLOTS];
	const char *comm;
	char t[48], *p;
	uint64_t us, secs;

	/* the same thread on the same CPU, and no thread named, made or
	 * gone since: the same leading columns, without even the comm's
	 * look-up */
	if (w->len && w->gen == sfp_machine__comm_gen(s->m) &&
	    w->tid == sm->tid && w->cpu == sm->cpu &&
	    w->has_cpu == has_cpu && w->chain == chain) {
		ob_put(s, w->out, w->len);
		goto time;
	}
	comm = sfp_machine__comm(s->m, sm->tid);
	w->gen = sfp_machine__comm_gen(s->m);	/* (after: it may make one) */
	/* else compared: a COMM record may have renamed the thread */
	if (!w->len || w->tid != sm->tid || w->cpu != sm->cpu ||
	    w->has_cpu != has_cpu || w->chain != chain ||
	    strncmp(w->comm, comm, sizeof(w->comm))) {
		if (strnlen(comm, sizeof(w->comm)) < sizeof(w->comm)) {
			w->len = (uint8_t)build_who(w->out, comm, (int)sm->tid,
						    chain, has_cpu, sm->cpu);
			w->tid = sm->tid;
			w->cpu = sm->cpu;
			w->has_cpu = has_cpu;
			w->chain = chain;
			memcpy(w->comm, comm, strlen(comm) + 1);
		} else {	/* longer than any COMM: piecewise */
			w->len = 0;
			ob_pad(s, comm, strlen(comm), chain ? 0 : 16);
			ob_char(s, ' ');
			ob_put(s, t + 1, build_who(t, "", (int)sm->tid, true,
						   has_cpu, sm->cpu) - 1);
			goto time;
		}
	}
	ob_put(s, w->out, w->len);
time:
	if (sm->present & SFP_PERF_SAMPLE_TIME) {
		/* "%12s: " of "secs.usecs" */
		us = sm->time / 1000;
		secs = us / 1000000;
		if (!s->secs_len || secs != s->secs) {
			p = put_dec(s->secs_str, secs, 0);
			s->secs_len = (size_t)(p - s->secs_str);
			s->secs = secs;
		}
		memcpy(t, s->secs_str, s->secs_len);
		p = t + s->secs_len;
		*p++ = '.';
		p = put_usec(p, (uint32_t)(us % 1000000));
		ob_pad(s, t, (size_t)(p - t), 12);
		ob_put(s, ": ", 2);
	}
}

/* "%10lu %*s: " of period and event name, kept for the next sample */
static void print_mid(struct script *s, const struct sfp_perf_event *ev)
{
	const struct sfp_perf_sample *sm = &ev->sample;
	bool has_period = sm->present & SFP_PERF_SAMPLE_PERIOD;
	struct mid_ent *m = &s->mid;
	size_t start = s->on, flushes = s->flushes, n;

	if (m->len && m->evsel == ev->evsel && m->has_period == has_period &&
	    (!has_period || m->period == sm->period) &&
	    m->name_width == s->name_width) {
		ob_put(s, m->out, m->len);
		return;
	}
	if (has_period) {
		char t[24], *p = put_dec(t, sm->period, 0);

		ob_pad(s, t, (size_t)(p - t), 10);
		ob_char(s, ' ');
	}
	{
		const char *en = event_name(ev->evsel);

		ob_pad(s, en, strlen(en), s->name_width);
		ob_put(s, ": ", 2);
	}
	n = s->on - start;
	m->len = 0;
	if (s->flushes != flushes || n > sizeof(m->out))
		return;		/* not kept: flushed on the way, or long */
	memcpy(m->out, s->ob + start, n);
	m->len = (uint8_t)n;
	m->evsel = ev->evsel;
	m->period = sm->period;
	m->has_period = has_period;
	m->name_width = s->name_width;
}

static int print_sample(struct script *s, const struct sfp_perf_event *ev)
{
	const struct sfp_perf_sample *sm = &ev->sample;
	bool has_chain = sm->present & SFP_PERF_SAMPLE_CALLCHAIN;
	struct sfp_perf_chain_walk w;
	uint64_t ip, i;
	uint64_t ugen = sfp_machine__pid_gen(s->m, sm->pid) + 1;
	int ufr;

	print_start(s, ev, has_chain);
	print_mid(s, ev);
	if (!has_chain) {
		/* perf looks the sample's address up in the maps of its
		 * cpumode, then in those of the address's own (the kernel's
		 * above SFP_KERNEL_START) */
		print_frame(s, sm->pid, sm->ip, sm->ip >= SFP_KERNEL_START,
			    " ", ugen);
		ob_char(s, '\n');
		return 0;
	}
	ob_char(s, '\n');
	/* the entries perf shows (its rules: perf/callchain.h) */
	sfp_perf_chain__begin(&w, sm);
	while (sfp_perf_chain__next(&w, &ip)) {
		if (sfp_perf_chain__at_cookie(&w))
			emit_frame(s, "\t", ip, "(cookie)", false, 0,
				   "[unknown]");
		else
			print_frame(s, sm->pid, ip, w.kernel, "\t", ugen);
	}
	/* perf's dwarf mode: the user part is unwound from the snapshot */
	if (s->uw && sfp_perf_chain__unwind_user(&w, sm)) {
		ufr = sfp_perf_unwinder__unwind(s->uw, ev, &s->chain, &s->chain_len, true);
		if (ufr < 0)
			return ufr;	/* unknown arch, no memory */
		for (i = 0; ufr > 0 && i < (uint64_t)ufr; i++) {
			if (s->no_inline)
				print_frame(s, sm->pid, s->chain[i], false,
					    "\t", ugen);
			else
				print_unwound(s, sm->pid, s->chain[i], ugen);
		}
	}
	ob_char(s, '\n');
	return 0;
}

static int print_deferred(struct script *s, const struct sfp_perf_event *ev)
{
	uint64_t ugen = sfp_machine__pid_gen(s->m, ev->sample.pid) + 1, i;

	print_start(s, ev, true);
	ob_printf(s, "DEFERRED CALLCHAIN [cookie: %" PRIx64 "]\n",
		ev->deferred.cookie);
	for (i = 0; i < ev->deferred.nr; i++)
		if (ev->deferred.ips[i] < SFP_PERF_CONTEXT_MAX)
			print_frame(s, ev->sample.pid, ev->deferred.ips[i], false,
				    "\t", ugen);
	ob_char(s, '\n');
	return 0;
}

static int on_event(void *ctx, const struct sfp_perf_event *ev,
		    enum sfp_stitch_how how)
{
	struct script *s = ctx;
	int err;

	(void)how;
	switch (ev->type) {
	case SFP_PERF_RECORD_SAMPLE:
		return print_sample(s, ev);
	case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
		return print_deferred(s, ev);
	default:
		err = sfp_machine__event(s->m, ev);
		if (!err && s->uw)
			err = sfp_perf_unwinder__event(s->uw, ev);
		return err;
	}
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "no-merge-callchains", no_argument, NULL, 'M' },
		{ "inline", no_argument, NULL, 'n' },
		{ "no-inline", no_argument, NULL, 'N' },
		CLI_DEBUGINFOD_LONGOPTS,
		{ "buildid-dir", required_argument, NULL, 'B' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "perf.data";
	char kpath[4096];
	struct script s = { .out = stdout };
	struct cli_debuginfod di = { 0 };
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	const struct sfp_perf_stats *stats;
	int c, err, ret = 0;
	size_t i;

	optind = 1;
	cli_batch_heap();
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (cli_debuginfod_opt(&di, c, optarg)) {
		case 1:
			continue;
		case -1:
			return EXIT_USAGE;
		}
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'M':
			s.no_merge = true;
			break;
		case 'n':
		case 'N':
			s.no_inline = c == 'N';
			break;
		case 'B':
		case 'S':
			if (sfp_buildid_set_dirs(c == 'B' ? optarg : NULL,
						 c == 'S' ? optarg : NULL))
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_err("script: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!cli_check_input("script", NULL, input))
		return EXIT_USAGE;
	cli_batch_heap_for(input);
	s.ob = malloc(OB_CAP);
	s.fcache = calloc(1u << FC_BITS, sizeof(*s.fcache));
	if (!s.ob || !s.fcache) {
		cli_err("script: %s", sfp_strerror(-ENOMEM));
		free(s.ob);
		free(s.fcache);
		return EXIT_USAGE;
	}
	err = sfp_perf_reader__open(input, NULL, &s.rd);
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		free(s.ob);
		free(s.fcache);
		return err == -EBADMSG || err == -EOPNOTSUPP ? EXIT_INVALID :
							       EXIT_USAGE;
	}
	SFP_OPTS(sfp_stitch_opts, so, .no_merge = s.no_merge);
	SFP_OPTS(sfp_symbolizer_opts, symo, .no_demangle = true,
		 .kallsyms_path = cached_kallsyms(s.rd, kpath, sizeof(kpath)),
		 .debuginfod = di.mode, .debuginfod_timeout_ms = di.timeout_ms);
	if ((err = sfp_machine__new(&s.m)) ||
	    (err = sfp_symbolizer__new(&symo, &s.sym)) ||
	    (err = sfp_stitcher__new(&so, on_event, &s, &st)) ||
	    (sfp_perf_unwinder__wanted(s.rd) &&
	     (err = sfp_perf_unwinder__new(sfp_perf_reader__header(s.rd), &s.uw)))) {
		cli_err("script: %s", sfp_strerror(err));
		ret = EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < sfp_perf_reader__nr_evsels(s.rd); i++) {
		int w = (int)strlen(event_name(sfp_perf_reader__evsel(s.rd, i)));

		if (w > s.name_width)
			s.name_width = w;
	}
	while ((err = sfp_perf_reader__next(s.rd, &ev)) > 0) {
		/* pipe mode: events may be declared as the stream goes */
		if (ev->evsel) {
			int w = (int)strlen(event_name(ev->evsel));

			if (w > s.name_width)
				s.name_width = w;
		}
		if ((err = sfp_stitcher__push(st, ev)))
			break;
	}
	if (!err)
		err = sfp_stitcher__flush(st);
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		ret = err == -ENOMEM || err == -EIO ? EXIT_USAGE : EXIT_INVALID;
	}
	stats = sfp_perf_reader__stats(s.rd);
	cli_say_lost(input, stats->nr_lost,
		     stats->nr_records[SFP_PERF_RECORD_LOST],
		     stats->nr_lost_samples);
	if (!ret && stats->nr_bad_records) {
		cli_err("%s: %" PRIu64 " malformed records skipped", input,
			stats->nr_bad_records);
		ret = EXIT_INVALID;
	}
	if (sfp_symbolizer__mismatched(s.sym))
		cli_err("%s: %" PRIu64 " files left unnamed: the files at their "
			"paths (in the recorded processes' roots and on this "
			"host) have other build-ids than the recording gives, "
			"and no copy was found (build-id cache, debug "
			"directories)", input, sfp_symbolizer__mismatched(s.sym));
	/* files the recording cannot tell apart: said, not guessed */
	for (i = 0; i < s.dcache_len; i++) {
		const struct sfp_pdso *d = sfp_machine__dso(s.m, (uint32_t)i);
		size_t j, n = 0, all;
		bool said = false;	/* with an earlier file of the name */

		if (s.dcache_err[i] != -ESTALE)
			continue;
		for (j = 0; j < s.dcache_len; j++) {
			if (s.dcache_err[j] != -ESTALE ||
			    sfp_machine__dso(s.m, (uint32_t)j)->first_of_name !=
				    d->first_of_name)
				continue;
			said |= j < i;
			n++;
		}
		if (said)
			continue;
		/* all files of the name, not only those left unnamed: one of
		 * them may have been told apart by its device and inode */
		for (j = 0, all = 0; j < sfp_machine__nr_dsos(s.m); j++)
			all += sfp_machine__dso(s.m, (uint32_t)j)->first_of_name ==
			       d->first_of_name;
		if (all > n)
			cli_err("%s: %s is %zu different files in this "
				"recording (containers, or replaced while it "
				"ran) and no build-id tells %zu of them apart: "
				"their frames are left unnamed", input,
				d->name, all, n);
		else
			cli_err("%s: %s is %zu different files in this "
				"recording (containers, or replaced while it "
				"ran) and no build-id tells them apart: their "
				"frames are left unnamed", input, d->name, n);
	}
	ob_flush(&s);
	if (fflush(stdout) || s.ob_err) {
		cli_err("script: write error");
		ret = EXIT_USAGE;
	}
out:
	if (!cli_free_at_exit())
		return ret;
	sfp_perf_unwinder__free(&s.uw);
	sfp_stitcher__free(&st);
	sfp_symbolizer__free(&s.sym);
	sfp_machine__free(&s.m);
	sfp_perf_reader__free(&s.rd);
	free(s.ob);
	free(s.fcache);
	free(s.dcache);
	free(s.dcache_err);
	free(s.chain);
	for (i = 0; i < s.dm_n; i++)
		free(s.dm[i].name);
	free(s.dm);
	sfp_htab_free(&s.dm_index);
	for (i = 0; i < s.ic_cap; i++)
		free(s.ic[i].names);
	free(s.ic);
	return ret;
}
