// SPDX-License-Identifier: MIT
/*
 * One frame address -> one interned location, symbolized the way `perf
 * script` (and so `sfprof script`) names it:
 *
 *  - kernel frames (kernel context, or any address in the kernel half):
 *    kallsyms, raw names, the module's "[name]" as dso;
 *  - user frames: the recorded mapping holding the address, the file read
 *    from perf's build-id cache when it has a copy, printed address = file
 *    offset (ip - start + pgoff), names demangled without parameters
 *    (perf's default), "[unknown]" without offset when nothing covers it;
 *  - addresses in no mapping: "[unknown]" in "[unknown]", printed raw.
 *
 * Each distinct (mapping, address) is symbolized once; recursion and hot
 * loops repeat return addresses, so most frames are a hash lookup.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "perf/buildid-cache.h"
#include "perf/machine.h"
#include "profile/load.h"
#include "symbols/jitdump.h"

static const char *const unknown = "[unknown]";
static const char *const kernel_dso = "[kernel.kallsyms]";

int sfp_profile_kallsyms_cache(const struct sfp_perf_header_info *h,
			       char *buf, size_t len)
{
	char dir[4096];
	size_t i, j;
	int n;

	if (!h || sfp_buildid_dir(dir, sizeof(dir)))
		return -ENOENT;
	for (i = 0; i < h->nr_build_ids; i++) {
		const struct sfp_perf_build_id *b = &h->build_ids[i];
		char hex[41];

		if (!b->filename || strcmp(b->filename, kernel_dso) || !b->size ||
		    b->size > 20)
			continue;
		for (j = 0; j < b->size; j++)
			snprintf(hex + 2 * j, 3, "%02x", b->id[j]);
		n = snprintf(buf, len, "%s/[kernel.kallsyms]/%s/kallsyms",
			     dir, hex);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		return access(buf, R_OK) ? -ENOENT : 0;
	}
	return -ENOENT;
}

/* The header's build-id for a file name (perf's HEADER_BUILD_ID). */
static void header_build_id(const struct sfp_perf_header_info *h,
			    const char *name, struct sfp_profile_mapping *m)
{
	const uint8_t *id;
	size_t len;

	sfp_perf_header_build_id(h, name, &id, &len);
	if (id) {
		memcpy(m->build_id, id, len);
		m->build_id_size = (uint8_t)len;
	}
}

/* perf's name for a user symbol: demangled without parameters. */
static const char *user_name(struct sfp_profile *p, const char *raw)
{
	char *dm = sfp_demangle_no_params(raw);
	const char *s;

	if (!dm)
		return sfp_profile_str(p, raw);
	s = sfp_profile_str(p, dm);
	free(dm);
	return s;
}

static int64_t kernel_mapping(struct sfp_profile *p, struct sfp_profile_loader *ld,
			      const char *dso)
{
	struct sfp_profile_mapping m = {
		.start = SFP_KERNEL_START,
		.end = UINT64_MAX,
		.kind = SFP_PROFILE_KERNEL,
	};
	uint32_t key;

	if (sfp_profile_intern(p, dso, &key))
		return -ENOMEM;
	m.path = p->strs[key];
	header_build_id(ld->hdr, dso, &m);
	return sfp_profile_mapping(p, key, &m);
}

/*
 * A running process's file whose MMAP2 carried no build-id (the agent
 * samples without attr.build_id: see sfp_record_opts.no_build_id): the
 * file's own note, read once per DSO through the process's root, so that
 * a container's file is the one read.  A process already gone (a
 * compiler that ran 50 ms) leaves the path as the host sees it, used only
 * when its device and inode are the ones the MMAP2 gave: a wrong file's
 * build-id would be worse than none.
 */
static void live_build_id(struct sfp_pdso *d, uint32_t pid)
{
	char path[4096];
	struct sfp_elf *e;
	const uint8_t *id;
	size_t len;

	if (d->build_id_read || d->name[0] != '/')
		return;
	d->build_id_read = true;
	if ((size_t)snprintf(path, sizeof(path), "/proc/%u/root%s", pid,
			     d->name) >= sizeof(path))
		return;
	if (sfp_elf_open(path, &e)) {
		struct stat st;

		if (!d->ino || stat(d->name, &st) || st.st_dev != d->dev ||
		    st.st_ino != d->ino || sfp_elf_open(d->name, &e))
			return;
	}
	if (!sfp_elf_build_id(e, &id, &len) && len && len <= 20) {
		memcpy(d->build_id, id, len);
		d->build_id_size = (uint8_t)len;
	}
	sfp_elf_close(&e);
}

/*
 * The dso string of the functions of machine DSO di (mapping mi): the
 * mapping's interned path for the first file of its name, else a copy of
 * its own, so that two files at one path (containers of different
 * images, a binary replaced while it ran) never share a function entry.
 * The load's end names such copies apart (profile/load.c).
 */
static const char *user_dso_str(struct sfp_profile *p,
				struct sfp_profile_loader *ld, uint32_t di,
				const struct sfp_pdso *d, uint32_t mi)
{
	size_t cap = ld->cap_dso_str, i;

	if (d->first_of_name == di)
		return p->maps[mi].path;
	if (di >= ld->cap_dso_str) {
		if (sfp_profile_grow((void **)&ld->dso_str, &cap,
				     (size_t)di + 1, sizeof(*ld->dso_str)))
			return NULL;
		for (i = ld->cap_dso_str; i < cap; i++)
			ld->dso_str[i] = NULL;
		ld->cap_dso_str = cap;
	}
	if (!ld->dso_str[di])
		ld->dso_str[di] = sfp_profile_str_copy(p, d->name);
	return ld->dso_str[di];
}

/* Symbol handle of a user mapping's file, loaded once per mapping. */
static struct sfp_symbolizer_dso *mapping_dso(struct sfp_profile *p,
					      struct sfp_profile_loader *ld,
					      uint32_t mi, uint32_t pid)
{
	const struct sfp_profile_mapping *m = &p->maps[mi];
	char buf[4096];
	const char *path;
	size_t old = ld->cap_dh, i;

	if (mi >= ld->cap_dh) {
		if (sfp_profile_grow((void **)&ld->dh, &old, (size_t)mi + 1,
				     sizeof(*ld->dh)))
			return NULL;
		for (i = ld->cap_dh; i < old; i++) {
			ld->dh[i].h = NULL;
			ld->dh[i].tried = false;
		}
		ld->cap_dh = old;
	}
	if (ld->dh[mi].tried)
		return ld->dh[mi].h;
	ld->dh[mi].tried = true;
	/* files and the vDSO: perf leaves [heap], [stack], //anon alone */
	if (!m->path || ld->no_symbols ||
	    (m->path[0] != '/' && strcmp(m->path, "[vdso]")))
		return NULL;
	path = sfp_perf_dso_path(ld->hdr, m->path, m->build_id,
				 m->build_id_size, buf, sizeof(buf));
	if (!ld->live && m->kind != SFP_PROFILE_KERNEL &&
	    sfp_perf_dso_unverifiable(ld->hdr,
				      sfp_machine__dso(ld->m, p->map_key[mi]),
				      path)) {
		/* said, as script says it: the frames stay unnamed */
		pr_warn("%s: several files at this path in the recording and "
			"no build-id tells which this mapping was: its frames "
			"are left unnamed", m->path);
		return NULL;
	}
	/* With the recorded build-id: a file rebuilt or replaced since must
	 * not lend its names (perf refuses it as well); the symbolizer then
	 * looks for a copy by build-id (the cache, debug directories).  For
	 * the vDSO, ours stands in when the recorded build-id is its own. */
	/* Through the process (its root, its map_files) too when the file
	 * has a recorded build-id that no cached copy gave: the process of
	 * a perf.data file may still run, in a container whose file at this
	 * path is not the host's; only the recorded build-id is taken (a
	 * recycled pid finds none). */
	if (sfp_symbolizer__get_dso(ld->sym,
				    ld->live || (m->build_id_size &&
						 path == m->path && pid &&
						 pid != (uint32_t)-1)
					    ? (int)pid
					    : -1,
				    path, m->build_id, m->build_id_size,
				    &ld->dh[mi].h))
		ld->dh[mi].h = NULL;
	return ld->dh[mi].h;
}

/*
 * The inline chain at vaddr as the lines of a user loc, innermost first,
 * the last one the real function `outer` (as its symbol names it).
 *
 * With source files (opts->srclines): each level's file, inlined levels
 * named as DWARF names them.  Without (opts->dwarf_inlines, perf
 * report's inlined frames): no files, so that the real function keeps
 * the identity it has in locs made without the chain, and inlined levels
 * demangled as perf demangles symbols (perf's new_inline_sym()); a chain
 * longer than the lines kept loses middle levels, never the real function.
 * *dwarf_name: DWARF's name of the real function, demangled so, or NULL.
 *
 * Return: 0, 1 no DWARF covers vaddr (the symbol's line only), -ENOMEM.
 */
static int user_lines(struct sfp_profile *p, struct sfp_symbolizer_dso *dh,
		      uint64_t vaddr, const struct sfp_profile_func *outer,
		      bool files, struct sfp_profile_line *lines, size_t max,
		      size_t *nr, const char **dwarf_name)
{
	struct sfp_inline_frame fr[SFP_PROFILE_MAX_INLINE];
	int n = sfp_symbolizer_dso__inlines(dh, vaddr, fr, ARRAY_SIZE(fr));
	int64_t fi;
	size_t i, k;

	*dwarf_name = NULL;
	if (n <= 0)
		return 1;
	k = (size_t)n < ARRAY_SIZE(fr) ? (size_t)n : ARRAY_SIZE(fr);
	if (k > max)
		k = max;
	if (!fr[k - 1].inlined && fr[k - 1].name &&
	    !(*dwarf_name = user_name(p, fr[k - 1].name)))
		return -ENOMEM;
	for (i = 0; i < k; i++) {
		struct sfp_profile_func f = *outer;
		bool real = files ? i + 1 == k && !fr[i].inlined : i + 1 == k;

		if (files && fr[i].file &&
		    !(f.file = sfp_profile_str(p, fr[i].file)))
			return -ENOMEM;
		if (!real) {
			/* an inlined function: DWARF's name for it (perf's
			 * "??" when it has none) */
			const char *nm = fr[i].name ? fr[i].name
					 : files ? unknown : "??";

			f.name = f.raw_name = sfp_profile_str(p, nm);
			if (!files && f.raw_name)
				f.name = user_name(p, nm);
			if (!f.name || !f.raw_name)
				return -ENOMEM;
			f.start_line = 0;
		}
		fi = sfp_profile_func(p, &f);
		if (fi < 0)
			return (int)fi;
		lines[i].func = (uint32_t)fi;
		/* the real function's own line, where the chain is cut */
		lines[i].line = real && fr[i].inlined ? 0 : fr[i].line;
	}
	*nr = k;
	return 0;
}

static int add_loc(struct sfp_profile *p, const struct sfp_profile_loc *l,
		   const struct sfp_profile_func *f,
		   const struct sfp_profile_line *lines, size_t nr,
		   uint32_t line, uint32_t *out)
{
	struct sfp_profile_line one;
	int64_t r;

	if (!nr) {
		r = sfp_profile_func(p, f);
		if (r < 0)
			return (int)r;
		one.func = (uint32_t)r;
		one.line = line;
		lines = &one;
		nr = 1;
	}
	r = sfp_profile_add_loc(p, l, lines, nr);
	if (r < 0)
		return (int)r;
	*out = (uint32_t)r;
	return 0;
}

/*
 * A location named by a symbol as its source spells it (kallsyms, a JIT's
 * perf map: no demangling, as perf prints them), or [unknown] without one.
 */
static int add_raw_named_loc(struct sfp_profile *p, struct sfp_profile_loc *l,
			     struct sfp_profile_func *f,
			     const struct sfp_symbol *sym, uint32_t *out)
{
	const char *raw = NULL;

	if (sym) {
		raw = sym->raw_name ? sym->raw_name : sym->name;
		l->sym_off = sym->offset;
	}
	f->name = f->raw_name = sfp_profile_str(p, raw ? raw : unknown);
	if (!f->name)
		return -ENOMEM;
	return add_loc(p, l, f, NULL, 0, 0, out);
}

static int kernel_frame(struct sfp_profile *p, struct sfp_profile_loader *ld,
			uint64_t ip, uint32_t *out)
{
	struct sfp_profile_func f = { .kind = SFP_PROFILE_KERNEL };
	struct sfp_profile_loc l = { .ip = ip, .addr = ip };
	struct sfp_symbol sym;
	const struct sfp_ksym *ks = sfp_machine__ksym(ld->m, ip);
	bool found;
	const char *dso;
	int64_t mi;
	uint32_t li;

	if (ks) {	/* a BPF program (KSYMBOL): its name is its DSO's */
		sym = (struct sfp_symbol){ .name = ks->name,
					   .start = ks->start,
					   .size = ks->end - ks->start,
					   .offset = ip - ks->start,
					   .dso = ks->name };
		found = true;
	} else {
		found = !ld->no_symbols &&
			!sfp_symbolizer__kernel(ld->sym, ip, &sym);
	}
	dso = found && sym.dso ? sym.dso : kernel_dso;
	mi = kernel_mapping(p, ld, dso);

	if (mi < 0)
		return (int)mi;
	li = sfp_profile_find_loc(p, (uint32_t)mi, ip);
	if (li != SFP_PROFILE_NONE) {
		*out = li;
		return 0;
	}
	l.mapping = (uint32_t)mi;
	f.dso = p->maps[mi].path;
	/* perf keeps kernel names as kallsyms has them */
	return add_raw_named_loc(p, &l, &f, found ? &sym : NULL, out);
}

/* Whether loc li's inline chain was read; marks it read.  -ENOMEM. */
static int chain_seen(struct sfp_profile_loader *ld, uint32_t li)
{
	size_t cap = ld->cap_chain_read;

	if (li >= ld->cap_chain_read) {
		if (sfp_profile_grow((void **)&ld->chain_read, &cap,
				     (size_t)li + 1, sizeof(*ld->chain_read)))
			return -ENOMEM;
		memset(ld->chain_read + ld->cap_chain_read, 0,
		       (cap - ld->cap_chain_read) * sizeof(*ld->chain_read));
		ld->cap_chain_read = cap;
	}
	if (ld->chain_read[li])
		return 1;
	ld->chain_read[li] = true;
	return 0;
}

/*
 * perf report's inlined frames for a frame of the dwarf unwinder that hit
 * loc li, made before without them: its inline chain, read once per loc.
 */
static int dwarf_chain(struct sfp_profile *p, struct sfp_profile_loader *ld,
		       const struct sfp_pmap *pm, uint32_t mi, uint32_t li,
		       uint32_t pid)
{
	struct sfp_profile_line lines[SFP_PROFILE_MAX_INLINE];
	const struct sfp_profile_loc *l = &p->locs[li];
	struct sfp_profile_func outer;
	struct sfp_symbolizer_dso *dh;
	const char *dn;
	uint64_t vaddr;
	size_t nr = 0;
	int err = chain_seen(ld, li);

	if (err)
		return err < 0 ? err : 0;
	outer = p->funcs[p->lines[p->loc_line0[li] + l->nr_lines - 1].func];
	/* perf expands resolved frames only: it needs their symbol */
	if (!strcmp(outer.name, unknown))
		return 0;
	dh = mapping_dso(p, ld, mi, pid);
	if (!dh || sfp_symbolizer_dso__vaddr(dh, pm->start, pm->pgoff, l->ip,
					     &vaddr))
		return 0;
	err = user_lines(p, dh, vaddr, &outer, false, lines, ARRAY_SIZE(lines),
			 &nr, &dn);
	if (err)
		return err < 0 ? err : 0;
	if (nr == 1 && !dn)
		return 0;
	return sfp_profile_set_loc_lines(p, li, lines, nr, dn);
}

static int frame_uncached(struct sfp_profile *p, struct sfp_profile_loader *ld,
			  uint32_t pid, uint64_t ip, bool kernel, bool dwarf,
			  uint32_t *out);

/* The frame cache starts small and doubles while it fills, up to
 * MAX: a profile of a few hundred samples (an agent's window of one
 * service, made every 10 s for each) zeroed 512 KiB for a full-sized
 * one each time, a tenth of the agent's loop on a machine with many
 * services; a report of a big file reaches the full size after its
 * first thousands of frames. */
#define FRAME_CACHE_MIN_BITS 8
#define FRAME_CACHE_MAX_BITS 14

/*
 * A frame's loc depends on its ip and, for user frames, on the process's
 * maps (sfp_machine__pid_gen() counts their changes; the machine-wide
 * generation, bumped by any process's mmap, voided the user entries of a
 * system-wide file all the time: a third of its report was this miss
 * path), for kernel frames on the KSYMBOL ranges
 * (sfp_machine__ksym_gen()): the same key gives the same loc, so recent
 * ones are remembered.  A kernel frame was a kallsyms search every time,
 * even when its loc existed (the mapping comes from the symbol's module):
 * 9 % of a system-wide report.  A dwarf frame that wants its inline chain
 * takes only an entry made by a lookup that wanted it too (that lookup
 * read the chain of the loc): a loc first met in a non-dwarf frame has
 * not had its chain read.
 */
int sfp_profile_frame(struct sfp_profile *p, struct sfp_profile_loader *ld,
		      uint32_t pid, uint64_t ip, bool kernel, bool dwarf,
		      uint32_t *out)
{
	struct sfp_frame_cache_ent *e;
	uint64_t gen = kernel ? sfp_machine__ksym_gen(ld->m) :
				sfp_machine__pid_gen(ld->m, pid) + 1;
	bool chain = !kernel && dwarf && ld->dwarf_inlines && !ld->srclines;
	int err;

	if (kernel)
		pid = 0;
	if (ld->fcache && ld->fcache_bits < FRAME_CACHE_MAX_BITS &&
	    ld->fcache_fill >= ((uint32_t)1 << ld->fcache_bits) / 2) {
		/*
		 * Half full: twice the size, the entries moved over.  Left
		 * behind, they were all looked up again: 5.7k of the 7.6k
		 * misses of a 319k-sample system-wide report.
		 */
		size_t i, old = (size_t)1 << ld->fcache_bits;
		size_t mask = 2 * old - 1;
		struct sfp_frame_cache_ent *n = calloc(2 * old, sizeof(*n));

		if (n) {
			ld->fcache_fill = 0;
			for (i = 0; i < old; i++) {
				const struct sfp_frame_cache_ent *o =
					&ld->fcache[i];
				struct sfp_frame_cache_ent *d;

				if (!o->loc1)
					continue;
				d = &n[sfp_hash64(o->ip ^ o->gen, o->pid) & mask];
				if (!d->loc1)
					ld->fcache_fill++;
				*d = *o;
			}
			free(ld->fcache);
			ld->fcache = n;
			ld->fcache_bits++;
		}
	}
	if (!ld->fcache) {
		ld->fcache = calloc((size_t)1 << FRAME_CACHE_MIN_BITS,
				    sizeof(*ld->fcache));
		if (!ld->fcache)
			return frame_uncached(p, ld, pid, ip, kernel, dwarf,
					      out);
		ld->fcache_bits = FRAME_CACHE_MIN_BITS;
		ld->fcache_fill = 0;
	}
	e = &ld->fcache[sfp_hash64(ip ^ gen, pid) &
			(((size_t)1 << ld->fcache_bits) - 1)];
	if (e->gen == gen && e->ip == ip && e->pid == pid && e->loc1 &&
	    (e->chain || !chain)) {
		*out = e->loc1 - 1;
		return 0;
	}
	err = frame_uncached(p, ld, pid, ip, kernel, dwarf, out);
	if (!err) {
		if (!e->loc1)
			ld->fcache_fill++;
		e->ip = ip;
		e->gen = gen;
		e->pid = pid;
		e->loc1 = *out + 1;
		e->chain = chain;
	}
	return err;
}

static int frame_uncached(struct sfp_profile *p, struct sfp_profile_loader *ld,
			  uint32_t pid, uint64_t ip, bool kernel, bool dwarf,
			  uint32_t *out)
{
	struct sfp_profile_func f = { .kind = SFP_PROFILE_USER };
	struct sfp_profile_loc l = { .ip = ip, .addr = ip };
	const struct sfp_pmap *pm;
	struct sfp_profile_mapping m = { .kind = SFP_PROFILE_USER };
	struct sfp_symbolizer_dso *dh;
	struct sfp_symbol sym;
	struct sfp_pdso *d;
	uint64_t vaddr;
	uint32_t li, line = 0;
	int64_t mi;
	int err;
	/* perf report expands the frames of its dwarf unwinder only */
	bool chain = dwarf && ld->dwarf_inlines && !ld->srclines;

	if (kernel)
		return kernel_frame(p, ld, ip, out);
	/* a kernel address in a user context (garbage a frame-pointer
	 * walk found): perf looks in the process's maps only */
	pm = ip >= SFP_KERNEL_START ? NULL : sfp_machine__find(ld->m, pid, ip);
	if (!pm) {
		li = sfp_profile_find_loc(p, SFP_PROFILE_NONE, ip);
		if (li != SFP_PROFILE_NONE) {
			*out = li;
			return 0;
		}
		l.mapping = SFP_PROFILE_NONE;
		f.name = f.raw_name = f.dso = sfp_profile_str(p, unknown);
		if (!f.name)
			return -ENOMEM;
		return add_loc(p, &l, &f, NULL, 0, 0, out);
	}
	d = sfp_machine__dso(ld->m, pm->dso);
	m.start = pm->start;
	m.end = pm->end;
	m.pgoff = pm->pgoff;
	if (ld->live && !d->build_id_size && !d->jit)
		live_build_id(d, pid);
	/* a known mapping: no path interning and no search of the header's
	 * build-ids (a strcmp per DSO) for every new frame in it */
	mi = sfp_profile_find_mapping(p, pm->dso, &m);
	if (mi == SFP_PROFILE_NONE) {
		if (!(m.path = sfp_profile_str(p, d->name)))
			return -ENOMEM;
		if (d->build_id_size && d->build_id_size <= 20) {
			memcpy(m.build_id, d->build_id, d->build_id_size);
			m.build_id_size = d->build_id_size;
		} else if (!d->name_shared) {
			/* (see sfp_perf_dso_build_id()) */
			header_build_id(ld->hdr, d->name, &m);
		}
		mi = sfp_profile_mapping(p, pm->dso, &m);
		if (mi < 0)
			return (int)mi;
	}
	li = sfp_profile_find_loc(p, (uint32_t)mi, ip);
	if (li != SFP_PROFILE_NONE) {
		*out = li;
		return chain && !d->jit ? dwarf_chain(p, ld, pm, (uint32_t)mi, li,
						    pid)
					: 0;
	}
	l.mapping = (uint32_t)mi;
	l.addr = ip - pm->start + pm->pgoff;
	if (!(f.dso = user_dso_str(p, ld, pm->dso, d, (uint32_t)mi)))
		return -ENOMEM;
	if (d->jit) {
		/* perf's /tmp/perf-PID.map: named by the JIT's jitdump when
		 * the process mapped one (what perf inject --jit reads), else
		 * by its map; the address as is */
		const char *dump = sfp_machine__jitdump(ld->m, pid);

		l.addr = ip;
		err = sfp_symbolizer__jit_frame(ld->sym, (int)pid, dump, ip,
						&sym);
		return add_raw_named_loc(p, &l, &f, err ? NULL : &sym, out);
	}
	dh = mapping_dso(p, ld, (uint32_t)mi, pid);
	if (dh && !sfp_symbolizer_dso__vaddr(dh, pm->start, pm->pgoff, ip,
					     &vaddr) &&
	    !sfp_symbolizer_dso__find(dh, vaddr, &sym)) {
		const char *raw = sym.raw_name ? sym.raw_name : sym.name;

		if (!raw)
			raw = unknown;
		f.raw_name = sfp_profile_str(p, raw);
		f.name = user_name(p, raw);
		if (!f.raw_name || !f.name)
			return -ENOMEM;
		l.sym_off = sym.offset;
		if (ld->srclines) {
			if (sym.file && !(f.file = sfp_profile_str(p, sym.file)))
				return -ENOMEM;
			line = sym.line;
		}
		if (ld->srclines || chain) {
			struct sfp_profile_line lines[SFP_PROFILE_MAX_INLINE];
			size_t nr = 0;

			err = user_lines(p, dh, vaddr, &f, ld->srclines, lines,
					 ARRAY_SIZE(lines), &nr, &l.dwarf_name);
			if (err < 0)
				return err;
			err = add_loc(p, &l, &f, lines, err ? 0 : nr, line, out);
			if (err || !chain)
				return err;
			return chain_seen(ld, *out) < 0 ? -ENOMEM : 0;
		}
	} else {
		f.name = f.raw_name = sfp_profile_str(p, unknown);
		if (!f.name)
			return -ENOMEM;
	}
	return add_loc(p, &l, &f, NULL, 0, line, out);
}
