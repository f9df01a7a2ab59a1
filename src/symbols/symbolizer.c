// SPDX-License-Identifier: MIT
/*
 * The symbolizer object: options, the DSO cache, loading a DSO's symbols
 * from every source, and lookups.
 *
 * DSOs are cached by (caller's path, pid, build-id) in a chained hash
 * table; failures are cached as well so a missing file costs one attempt.
 * When a file with the same build-id is already loaded under another path
 * (a container's copy of a host library, or a build-id match through the
 * debug directories), the new entry shares the loaded one.
 */
#include <limits.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cachedir.h"
#include "elf/buildid.h"
#include "elf/elf.h"
#include "perf/buildid-cache.h"
#include "symbols/internal.h"
#include "symbols/kallsyms.h"

static const char *const default_debug_dirs[] = { "/usr/lib/debug", NULL };

/* See the header: SFP_OPTS() leaves tail padding uninitialised. */
_Static_assert(sizeof(struct sfp_symbolizer_opts) ==
	       SFP_OPTS_KNOWN_SZ(sfp_symbolizer_opts),
	       "sfp_symbolizer_opts must end without padding");

static char *xstrdup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

int sfp_symbolizer__new(const struct sfp_symbolizer_opts *opts,
			struct sfp_symbolizer **out)
{
	const char *const *dirs;
	struct sfp_symbolizer *s;
	char *home_cache = NULL;
	const char *symfs = NULL;
	size_t i, n;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_symbolizer_opts))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	dirs = SFP_OPTS_GET(opts, sfp_symbolizer_opts, debug_dirs, NULL);
	if (!dirs) {
		char bdir[PATH_MAX];

		dirs = default_debug_dirs;
		/* perf's build-id cache, where perf and sfprof record keep
		 * copies ($PERF_BUILDID_DIR, else ~/.debug), and an
		 * unpacked archive given as --symfs. */
		if (!sfp_buildid_dir(bdir, sizeof(bdir)) &&
		    !(home_cache = strdup(bdir)))
			goto nomem;
		symfs = sfp_buildid_symfs();
	}
	for (n = 0; dirs[n]; n++)
		if (n >= 64)
			goto inval;
	s->debug_dirs = calloc(n + 3, sizeof(char *));
	if (!s->debug_dirs)
		goto nomem;
	for (i = 0; i < n; i++)
		if (!(s->debug_dirs[i] = strdup(dirs[i])))
			goto nomem;
	if (home_cache)
		s->debug_dirs[n++] = home_cache;
	home_cache = NULL;
	if (symfs && !(s->debug_dirs[n] = strdup(symfs)))
		goto nomem;
	s->pid = SFP_OPTS_GET(opts, sfp_symbolizer_opts, pid, 0);
	if (s->pid < 0)
		goto inval;
	s->no_demangle = SFP_OPTS_GET(opts, sfp_symbolizer_opts, no_demangle,
				      false);
	s->srclines = SFP_OPTS_GET(opts, sfp_symbolizer_opts, srclines, false);
	s->demangle_no_params = SFP_OPTS_GET(opts, sfp_symbolizer_opts,
					     demangle_no_params, false);
	s->no_debug_files = SFP_OPTS_GET(opts, sfp_symbolizer_opts,
					 no_debug_files, false);
	s->debug_file_as_code = SFP_OPTS_GET(opts, sfp_symbolizer_opts,
					     flags, 0) &
				SFP_SYMBOLIZER_DEBUG_AS_CODE;
	s->release_pages = SFP_OPTS_GET(opts, sfp_symbolizer_opts, flags, 0) &
			   SFP_SYMBOLIZER_RELEASE_PAGES;
	switch (sfp_debuginfod_new(SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						debuginfod,
						SFP_DEBUGINFOD_AUTO),
				   SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						debuginfod_timeout_ms, 0),
				   &s->debuginfod)) {
	case 0:
		break;
	case -ENOMEM:
		goto nomem;
	default:
		goto inval;
	}
	s->kallsyms_path = xstrdup_or(SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						   kallsyms_path, NULL),
				      "/proc/kallsyms");
	s->modules_path = xstrdup_or(SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						  modules_path, NULL),
				     "/proc/modules");
	s->perf_map_dir = xstrdup_or(SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						  perf_map_dir, NULL), "/tmp");
	if (!s->kallsyms_path || !s->modules_path || !s->perf_map_dir)
		goto nomem;
	if (!SFP_OPTS_GET(opts, sfp_symbolizer_opts, no_cache, false)) {
		const char *root = SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						cache_dir, NULL);
		char cdir[4096];

		/* no directory (no HOME): no cache, not an error */
		if (!sfp_cachedir_path(root, "dwarf", cdir, sizeof(cdir)) &&
		    !(s->dwarf_cache.dir = strdup(cdir)))
			goto nomem;
		if (!sfp_cachedir_path(root, "kallsyms", cdir, sizeof(cdir)) &&
		    !(s->ksyms_cache_dir = strdup(cdir)))
			goto nomem;
		if (!sfp_cachedir_path(root, "symtab", cdir, sizeof(cdir)) &&
		    !(s->symtab_cache_dir = strdup(cdir)))
			goto nomem;
		s->symtab_cache_budget = SFP_OPTS_GET(opts,
						      sfp_symbolizer_opts,
						      cache_budget, 0);
		s->dwarf_cache.budget = SFP_OPTS_GET(opts, sfp_symbolizer_opts,
						     cache_budget, 0);
	}
	*out = s;
	return 0;
inval:
	free(home_cache);
	sfp_symbolizer__free(&s);
	return -EINVAL;
nomem:
	free(home_cache);
	sfp_symbolizer__free(&s);
	return -ENOMEM;
}

static void dso_free(struct sfp_symbolizer_dso *d)
{
	free(d->key);
	free(d->path);
	free(d->debug_path);
	sfp_symtab_free(&d->tab);
	sfp_dwarf_free(&d->dw);
	sfp_elf_close(&d->mini);
	sfp_elf_close(&d->debug);
	sfp_elf_close(&d->elf);
	free(d->segs);
	free(d);
}

void sfp_symbolizer__free(struct sfp_symbolizer **sp)
{
	struct sfp_symbolizer *s = sp ? *sp : NULL;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ndsos; i++)
		dso_free(s->dsos[i]);
	free(s->dsos);
	sfp_htab_free(&s->dso_index);
	free(s->owners);
	sfp_htab_free(&s->owner_index);
	while (s->jit) {
		struct sfp_jitmap *j = s->jit;

		s->jit = j->next;
		sfp_symtab_free(&j->tab);
		free(j->path);
		free(j);
	}
	sfp_symtab_free(&s->kernel);
	sfp_kallsyms_index__free(&s->kidx);
	sfp_strpool_free(&s->pool);
	sfp_debuginfod_free(&s->debuginfod);
	if (s->debug_dirs)
		for (i = 0; s->debug_dirs[i]; i++)
			free(s->debug_dirs[i]);
	free(s->debug_dirs);
	free(s->dwarf_cache.dir);
	free(s->ksyms_cache_dir);
	free(s->symtab_cache_dir);
	free(s->kallsyms_path);
	free(s->modules_path);
	free(s->perf_map_dir);
	free(s);
	*sp = NULL;
}

/* A key's hash: its path and pid (the build-id is left to the compare:
 * one path in one process seldom has two). */
static uint32_t key_hash(const char *path, int pid)
{
	return sfp_hash64((uint32_t)pid, sfp_hash_str(path));
}

struct dso_want {
	const char *path;
	int pid;
	const uint8_t *id;
	size_t len;
};

static bool dso_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_symbolizer *s = ctx;
	const struct sfp_symbolizer_dso *d = s->dsos[idx];
	const struct dso_want *w = key;

	return d->key_pid == w->pid && d->build_id_len == w->len &&
	       (!w->len || !memcmp(d->build_id, w->id, w->len)) &&
	       !strcmp(d->key, w->path);
}

/* Does the ELF's build-id equal id (or is there nothing to compare)? */
static bool build_id_ok(struct sfp_elf *e, const uint8_t *id, size_t len)
{
	const uint8_t *fid;
	size_t flen;

	if (!id || !len)
		return true;
	if (sfp_elf_build_id(e, &fid, &flen))
		return false;
	return flen == len && !memcmp(fid, id, len);
}

/* A build-id's hash: its first bytes are well mixed already (a
 * build-id is a digest of the file). */
static uint32_t id_hash(const uint8_t *id, size_t len)
{
	uint64_t w = 0;

	memcpy(&w, id, len < sizeof(w) ? len : sizeof(w));
	return sfp_hash64(w, (uint32_t)len);
}

struct id_want {
	const uint8_t *id;
	size_t len;
};

static bool owner_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_symbolizer *s = ctx;
	const struct sfp_symbolizer_dso *d = s->owners[idx];
	const struct id_want *w = key;

	return !d->err && !d->same && d->file_id_len == w->len &&
	       !memcmp(d->file_id, w->id, w->len);
}

/* An already loaded DSO with this build-id, to share its tables. */
static struct sfp_symbolizer_dso *find_by_build_id(struct sfp_symbolizer *s,
						   const uint8_t *id,
						   size_t len)
{
	uint32_t i;

	if (!id || !len)
		return NULL;
	i = sfp_htab_find(&s->owner_index, id_hash(id, len), owner_row_is, s,
			  &(struct id_want){ id, len });
	return i != SFP_HTAB_NONE ? s->owners[i] : NULL;
}

/* Index a loaded entry by its file's build-id (no memory: it is found
 * by path only). */
static void index_build_id(struct sfp_symbolizer *s,
			   struct sfp_symbolizer_dso *d)
{
	struct id_want w = { d->file_id, d->file_id_len };
	uint32_t h = id_hash(w.id, w.len);
	uint32_t i = sfp_htab_find(&s->owner_index, h, owner_row_is, s, &w);

	/* A second file of that build-id is found from now on, as the
	 * chains this index replaced found the newest entry first. */
	if (i != SFP_HTAB_NONE) {
		s->owners[i] = d;
		return;
	}
	if (SFP_HTAB_ROWS_RESERVE(s->owners, s->owners_cap, s->nowners + 1) ||
	    sfp_htab_add(&s->owner_index, h, (uint32_t)s->nowners))
		return;
	s->owners[s->nowners++] = d;
}

/*
 * "[vdso]": the kernel maps the same vDSO image into every process of one
 * ABI, so our own copy (AT_SYSINFO_EHDR) stands in for the target's when
 * the build-ids agree (or none is given).  The image is a complete ELF
 * file: its size is where the section headers end.
 */
static int open_vdso(const uint8_t *id, size_t len, struct sfp_elf **out,
		     char **out_path)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	GElf_Ehdr eh64;
	uint64_t size;
	int err;

	if (!base)
		return -ENOENT;
	memcpy(&eh64, base, sizeof(eh64));	/* our own vDSO is 64-bit */
	if (memcmp(eh64.e_ident, ELFMAG, SELFMAG) ||
	    eh64.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	size = eh64.e_shoff + (uint64_t)eh64.e_shnum * eh64.e_shentsize;
	if (size < sizeof(eh64) || size > (1u << 20))
		return -ENOENT;
	err = sfp_elf_open_mem(base, size, "[vdso]", out);
	if (err)
		return err;
	if (!build_id_ok(*out, id, len)) {
		sfp_elf_close(out);
		return -ENOENT;
	}
	*out_path = strdup("[vdso]");
	if (!*out_path) {
		sfp_elf_close(out);
		return -ENOMEM;
	}
	return 0;
}

/* Open path (trying pid's root first), checking the build-id. */
static int open_code_file(struct sfp_symbolizer *s, int pid, const char *path,
			  const uint8_t *id, size_t len, struct sfp_elf **out,
			  char **out_path, char *root, size_t root_size)
{
	char buf[PATH_MAX + 64];
	size_t plen = strlen(path);
	const char *suffix = " (deleted)";
	size_t slen = strlen(suffix);
	int err, first_err = -ENOENT, attempt;
	bool mismatch = false;	/* a file with another build-id was seen */

	root[0] = 0;
	if (pid > 0)
		snprintf(root, root_size, "/proc/%d/root", pid);

	if (!strcmp(path, "[vdso]")) {
		err = open_vdso(id, len, out, out_path);
		if (err != -ENOENT || !id || !len)
			return err;
		/* Another kernel's vDSO: maybe a copy by build-id. */
		return sfp_debugfile_by_build_id(s, root, id, len, false, out,
						 out_path);
	}
	/* perf records unlinked-but-mapped files with this suffix. */
	if (plen > slen && !strcmp(path + plen - slen, suffix))
		plen -= slen;
	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	for (attempt = 0; attempt < 2; attempt++) {
		int n;

		if (attempt == 0) {
			/* In its mount namespace, else (replaced, deleted)
			 * the inode it maps, with the build-id checked. */
			if (pid <= 0)
				continue;
			err = sfp_proc_mapped_file(pid, path, 0, 0, id, len,
						   buf, sizeof(buf));
			if (err) {
				mismatch |= err == -ESTALE;
				continue;
			}
			n = (int)strlen(buf);
		} else {
			n = snprintf(buf, sizeof(buf), "%.*s", (int)plen, path);
		}
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		err = sfp_open_regular_elf(buf, out);
		if (err) {
			if (first_err == -ENOENT)
				first_err = err;
			continue;
		}
		if (!build_id_ok(*out, id, len)) {
			pr_debug("%s: build-id differs from the one expected",
				 buf);
			mismatch = true;
			sfp_elf_close(out);
			continue;
		}
		*out_path = strdup(buf);
		if (!*out_path) {
			sfp_elf_close(out);
			return -ENOMEM;
		}
		if (attempt == 1)
			root[0] = 0;	/* found on our side after all */
		return 0;
	}
	/* Not where the caller said: a copy with this build-id will do. */
	if (id && len && !sfp_debugfile_by_build_id(s, root, id, len, false,
						    out, out_path))
		return 0;
	/* A profile from another host: its debug file stands in. */
	if (s->debug_file_as_code && id && len &&
	    (!sfp_debugfile_by_build_id(s, root, id, len, true, out,
					out_path) ||
	     (s->debuginfod &&
	      !sfp_debuginfod_find_debuginfo(s->debuginfod, id, len, out,
					     out_path)))) {
		s->debug_as_code++;
		return 0;
	}
	if (mismatch) {
		/* never used: a file's names at another build's addresses
		 * are wrong names, not missing ones */
		s->mismatched++;
		pr_debug("%s: only files with another build-id than the "
			 "expected one found (pid %d): not used", path, pid);
	}
	return first_err;
}

/*
 * Where the symbols come from, as perf chooses: the full .symtab of the
 * separate debug file, else the file's own .symtab; only when neither
 * exists, .dynsym plus MiniDebugInfo (which holds just the functions
 * .dynsym lacks).  PLT stubs always come from the file itself.
 */
static int make_symbols(struct sfp_symbolizer_dso *d);

static int load_symbols(struct sfp_symbolizer *s, struct sfp_symbolizer_dso *d)
{
	unsigned long warned;
	int err;

	if (!s->no_debug_files &&
	    !sfp_debugfile_find(s, d->elf, d->path, d->key, d->root, &d->debug,
				&d->debug_path) &&
	    !sfp_elf_has_symtab(d->debug)) {
		/* Kept for DWARF; symbols come from elsewhere. */
		pr_debug("%s: no .symtab in debug file %s", d->path,
			 d->debug_path);
	}
	s->tables_loaded++;
	if (!sfp_symtab_cache_load(s, d))
		return 0;
	warned = sfp_log_warnings();
	err = make_symbols(d);
	if (!err && sfp_log_warnings() == warned)
		sfp_symtab_cache_store(s, d);
	return err;
}

/*
 * Go binaries are mostly stripped, but keep the runtime's function table
 * (.gopclntab): its functions name the addresses that no ELF symbol
 * covers (all of a stripped Go binary's, none of an unstripped one's,
 * whose .symtab names the same functions).  d->tab is finished.  A
 * damaged table was warned about by the parser and is left out.
 * Return: 0; -ENOMEM; -E2BIG.
 */
static int add_go_functions(struct sfp_symbolizer_dso *d)
{
	struct sfp_symtab go = { 0 };
	struct sfp_gopclntab_stats st;
	size_t i, n = 0;
	int err;

	err = sfp_gopclntab_load(&go, d->elf, &st);
	if (err == -ENOMEM || err == -E2BIG) {
		sfp_symtab_free(&go);
		return err;
	}
	if (err <= 0) {
		sfp_symtab_free(&go);
		return 0;
	}
	/* Those no ELF symbol covers (looked up before any is added). */
	err = 0;
	for (i = 0; i < go.nr; i++)
		if (!sfp_symtab_find(&d->tab, go.syms[i].start))
			go.syms[n++] = go.syms[i];
	pr_debug("%s: %zu of %llu functions of its Go %u.%u table named by it",
		 d->path, n, (unsigned long long)st.nfunc, st.version / 100,
		 st.version % 100);
	if (n)
		err = sfp_symtab_reserve(&d->tab, n);
	if (n && !err)
		for (i = 0; i < n && !err; i++)
			err = sfp_symtab_add(&d->tab, go.syms[i].start,
					     go.syms[i].size, go.syms[i].name,
					     go.syms[i].flags);
	sfp_symtab_free(&go);
	if (err)
		return err;
	if (n)
		sfp_symtab_finish(&d->tab);
	return 0;
}

/* d's table from its ELF files: debug file, code file, PLT stubs, and
 * a Go binary's function table. */
static int make_symbols(struct sfp_symbolizer_dso *d)
{
	int err;

	if (d->debug && sfp_elf_has_symtab(d->debug)) {
		err = sfp_symtab_load_elf(&d->tab, d->debug, SFP_LOAD_SYMTAB);
		if (err >= 0)
			goto plt;
		pr_warn("%s: symbols unreadable (%s), ignoring them",
			d->debug_path, sfp_strerror(err));
		sfp_symtab_free(&d->tab);
	}
	if (sfp_elf_has_symtab(d->elf)) {
		err = sfp_symtab_load_elf(&d->tab, d->elf, SFP_LOAD_SYMTAB);
		if (err < 0)
			return err;
		goto plt;
	}
	err = sfp_symtab_load_elf(&d->tab, d->elf, SFP_LOAD_DYNSYM);
	if (err < 0)
		return err;
	err = sfp_minidebuginfo_open(d->elf, &d->mini);
	if (!err) {
		err = sfp_symtab_load_elf(&d->tab, d->mini,
					  SFP_LOAD_SYMTAB | SFP_LOAD_DYNSYM);
		if (err < 0)
			pr_warn("%s: MiniDebugInfo symbols unreadable", d->path);
	} else if (err != -ENOENT) {
		pr_warn("%s: MiniDebugInfo unusable (%s)", d->path,
			sfp_strerror(err));
	}
plt:
	err = sfp_symtab_load_plt(&d->tab, d->elf);
	if (err < 0)
		return err;
	sfp_symtab_finish(&d->tab);
	return add_go_functions(d);
}

static int read_segs(struct sfp_symbolizer_dso *d);

int sfp_symbolizer__get_dso(struct sfp_symbolizer *s, int pid,
			    const char *path, const uint8_t *build_id,
			    size_t build_id_len,
			    struct sfp_symbolizer_dso **out)
{
	struct sfp_symbolizer_dso *d, *same;
	const uint8_t *fid;
	size_t flen;
	uint32_t h, row;
	int err;

	if (!s || !path || !out || build_id_len > SFP_BUILD_ID_MAX ||
	    (build_id_len && !build_id))
		return -EINVAL;
	*out = NULL;
	if (pid == 0)
		pid = s->pid;
	if (pid < 0)
		pid = 0;
	h = key_hash(path, pid);
	row = sfp_htab_find(&s->dso_index, h, dso_row_is, s,
			    &(struct dso_want){ path, pid, build_id,
						build_id_len });
	if (row != SFP_HTAB_NONE) {
		d = s->dsos[row];
		if (d->err)
			return d->err;
		*out = d;
		return 0;
	}
	if (SFP_HTAB_ROWS_RESERVE(s->dsos, s->dsos_cap, s->ndsos + 1))
		return -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->s = s;
	d->key = strdup(path);
	if (!d->key || sfp_htab_add(&s->dso_index, h, (uint32_t)s->ndsos)) {
		free(d->key);
		free(d);
		return -ENOMEM;
	}
	d->key_pid = pid;
	d->key_hash = h;
	if (build_id_len)
		memcpy(d->build_id, build_id, build_id_len);
	d->build_id_len = build_id_len;
	s->dsos[s->ndsos++] = d;

	same = find_by_build_id(s, build_id, build_id_len);
	if (same && same != d) {
		d->same = same;
		*out = d;
		return 0;
	}
	err = open_code_file(s, pid, path, build_id, build_id_len, &d->elf,
			     &d->path, d->root, sizeof(d->root));
	if (err)
		goto fail;
	/* Learn the build-id so that other paths to this file share it. */
	if (!build_id_len && !sfp_elf_build_id(d->elf, &fid, &flen) &&
	    flen <= SFP_BUILD_ID_MAX) {
		same = find_by_build_id(s, fid, flen);
		if (same) {
			sfp_elf_close(&d->elf);
			free(d->path);
			d->path = NULL;
			d->same = same;
			*out = d;
			return 0;
		}
	}
	err = load_symbols(s, d);
	if (!err)
		err = read_segs(d);
	if (err)
		goto fail;
	if (!sfp_elf_build_id(d->elf, &fid, &flen) && flen &&
	    flen <= SFP_BUILD_ID_MAX) {
		char hex[2 * SFP_BUILD_ID_MAX + 1];

		memcpy(d->file_id, fid, flen);
		d->file_id_len = flen;
		index_build_id(s, d);
		/* one line per table: tests count them by build-id */
		for (size_t i = 0; i < flen; i++)
			snprintf(hex + 2 * i, 3, "%02x", fid[i]);
		pr_debug("symbols of %s (build-id %s) loaded from %s", path,
			 hex, d->path);
	}
	if (s->release_pages) {
		sfp_elf_release_pages(d->elf);
		if (d->debug)
			sfp_elf_release_pages(d->debug);
	}
	*out = d;
	return 0;
fail:
	/* Keep the entry with its error: the next call answers at once. */
	d->err = err;
	free(d->segs);
	d->segs = NULL;
	d->nsegs = 0;
	sfp_symtab_free(&d->tab);
	sfp_elf_close(&d->mini);
	sfp_elf_close(&d->debug);
	sfp_elf_close(&d->elf);
	return err;
}

size_t sfp_symbolizer__release_pages(struct sfp_symbolizer *s)
{
	struct sfp_symbolizer_dso *d;
	size_t i, n = 0;

	if (!s)
		return 0;
	for (i = 0; i < s->ndsos; i++) {
		d = s->dsos[i];
		if (d->elf)
			n += sfp_elf_release_pages(d->elf);
		if (d->debug)
			n += sfp_elf_release_pages(d->debug);
		n += sfp_symtab_packed_release_pages(&d->tab);
	}
	return n + sfp_kallsyms_index__release_pages(s->kidx);
}

uint64_t sfp_symbolizer__tables_loaded(const struct sfp_symbolizer *s)
{
	return s ? s->tables_loaded : 0;
}

uint64_t sfp_symbolizer__mismatched(const struct sfp_symbolizer *s)
{
	return s ? s->mismatched : 0;
}

static int cmp_pid(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return a < b ? -1 : a > b;
}

size_t sfp_symbolizer__forget_pids(struct sfp_symbolizer *s, const int *pids,
				   size_t n)
{
	struct sfp_jitmap **jp;
	size_t i, kept = 0, gone = 0;
	int *set;

	if (!s || !pids || !n)
		return 0;
	/* one pass over the entries, each pid looked up in a sorted copy */
	set = malloc(n * sizeof(*set));
	if (!set)
		return 0;
	memcpy(set, pids, n * sizeof(*set));
	qsort(set, n, sizeof(*set), cmp_pid);
	for (i = 0; i < s->ndsos; i++) {
		struct sfp_symbolizer_dso *d = s->dsos[i];

		/* owners stay: entries of other pids may share them,
		 * and only owners are in the build-id index */
		if ((d->same || d->err) && d->key_pid > 0 &&
		    bsearch(&d->key_pid, set, n, sizeof(*set), cmp_pid)) {
			dso_free(d);
			gone++;
			continue;
		}
		s->dsos[kept++] = d;
	}
	if (kept < s->ndsos) {
		/* rows moved: index them again (into the slots the index
		 * has, which held more: no allocation, no failure) */
		s->ndsos = kept;
		sfp_htab_clear(&s->dso_index);
		for (i = 0; i < kept; i++)
			(void)sfp_htab_add(&s->dso_index, s->dsos[i]->key_hash,
					   (uint32_t)i);
	}
	for (jp = &s->jit; *jp;) {
		struct sfp_jitmap *j = *jp;

		if (j->pid > 0 &&
		    bsearch(&j->pid, set, n, sizeof(*set), cmp_pid)) {
			*jp = j->next;
			sfp_symtab_free(&j->tab);
			free(j->path);
			free(j);
			gone++;
			continue;
		}
		jp = &j->next;
	}
	free(set);
	return gone;
}

/* The entry that holds the data. */
static struct sfp_symbolizer_dso *dso_impl(struct sfp_symbolizer_dso *d)
{
	return d->same ? d->same : d;
}

void sfp_symbolizer_fill(struct sfp_symbolizer *s, struct sfp_symtab *t,
			 struct sfp_sym *sym, uint64_t addr, const char *dso,
			 struct sfp_symbol *out)
{
	if (!sym->demangled) {
		char *dm = sfp_symbolizer_demangle(s, sym->name);

		sym->demangled = sym->name;
		if (dm) {
			const char *p = sfp_strpool_add(&t->pool, dm, strlen(dm));

			if (p)
				sym->demangled = p;
			free(dm);
		}
	}
	memset(out, 0, sizeof(*out));
	out->name = sym->demangled;
	out->raw_name = sym->name;
	out->start = sym->start;
	out->size = sym->size;
	out->offset = addr - sym->start;
	out->dso = sym->dso ? sym->dso : dso;
	out->flags = sym->flags & ~SFP_SYM_NO_EXTENT;
}

int sfp_symbolizer_dso__find(struct sfp_symbolizer_dso *dso, uint64_t vaddr,
			     struct sfp_symbol *out)
{
	struct sfp_symbolizer_dso *d;
	struct sfp_sym *sym;

	if (!dso || !out)
		return -EINVAL;
	d = dso_impl(dso);
	sym = sfp_symtab_find(&d->tab, vaddr);
	if (!sym)
		return -ENOENT;
	sfp_symbolizer_fill(d->s, &d->tab, sym, vaddr, dso->key, out);
	if (d->s->srclines) {
		struct sfp_inline_frame f;

		if (sfp_symbolizer_dso__inlines(dso, vaddr, &f, 1) > 0) {
			out->file = f.file;
			out->line = f.line;
		}
	}
	return 0;
}

int sfp_symbolizer__dso(struct sfp_symbolizer *s, const char *path,
			const uint8_t *build_id, size_t build_id_len,
			uint64_t vaddr, struct sfp_symbol *out)
{
	struct sfp_symbolizer_dso *d;
	int err;

	err = sfp_symbolizer__get_dso(s, 0, path, build_id, build_id_len, &d);
	if (err)
		return err;
	return sfp_symbolizer_dso__find(d, vaddr, out);
}

/*
 * A separate debug file standing in for a binary we could not find keeps
 * the program headers but not the file offsets (the code segment has
 * p_filesz 0 and a bogus offset).  Then assume the usual layout of GNU ld and
 * lld output, file offset = vaddr - (lowest segment's page): right for
 * the code segments perf samples; a data segment placed at another page
 * offset (GNU ld's RELRO) would come out wrong.
 */
static bool offsets_lost(struct sfp_elf *e, uint64_t *base)
{
	bool any = false, lost = true;
	GElf_Phdr ph;
	size_t i, n = sfp_elf_num_phdrs(e);

	for (i = 0; i < n; i++) {
		uint64_t b;

		if (sfp_elf_phdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* Code segments always have file bytes in a real binary. */
		if ((ph.p_flags & PF_X) && ph.p_filesz)
			lost = false;
		b = ph.p_vaddr & ~(uint64_t)0xfff;
		if (!any || b < *base)
			*base = b;
		any = true;
	}
	return any && lost;
}

/* d's PT_LOAD headers into d->segs, when d is loaded (so that lookups
 * only read it).  Return: 0, -ENOMEM. */
static int read_segs(struct sfp_symbolizer_dso *d)
{
	size_t i, n = sfp_elf_num_phdrs(d->elf);
	GElf_Phdr ph;

	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct sfp_load_seg *g = &d->segs[d->nsegs];

		if (sfp_elf_phdr(d->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		g->vaddr = ph.p_vaddr;
		g->offset = ph.p_offset;
		g->filesz = ph.p_filesz;
		g->memsz = ph.p_memsz;
		d->nsegs++;
	}
	d->segs_lost = offsets_lost(d->elf, &d->segs_base);
	return 0;
}

int sfp_symbolizer_dso__vaddr(struct sfp_symbolizer_dso *dso,
			      uint64_t map_start, uint64_t map_pgoff,
			      uint64_t addr, uint64_t *vaddr)
{
	struct sfp_symbolizer_dso *d;
	uint64_t off;
	size_t i;
	int pass;

	if (!dso || !vaddr)
		return -EINVAL;
	d = dso_impl(dso);
	if (addr < map_start)
		return -ENOENT;
	if (sfp_add_overflow(addr - map_start, map_pgoff, &off))
		return -ENOENT;
	if (d->segs_lost) {
		uint64_t va;

		if (sfp_add_overflow(d->segs_base, off, &va))
			return -ENOENT;
		for (i = 0; i < d->nsegs; i++) {
			const struct sfp_load_seg *g = &d->segs[i];

			if (va >= g->vaddr && va - g->vaddr < g->memsz) {
				*vaddr = va;
				return 0;
			}
		}
		return -ENOENT;
	}
	/* File-backed parts first: segments may share a page of the file. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < d->nsegs; i++) {
			const struct sfp_load_seg *g = &d->segs[i];
			uint64_t len = pass ? g->memsz : g->filesz;

			if (off < g->offset || off - g->offset >= len)
				continue;
			*vaddr = g->vaddr + (off - g->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int sfp_symbolizer_dso__inlines(struct sfp_symbolizer_dso *dso, uint64_t vaddr,
				struct sfp_inline_frame *frames, size_t max)
{
	struct sfp_symbolizer_dso *d;

	if (!dso || (!frames && max))
		return -EINVAL;
	d = dso_impl(dso);
	if (!d->dw_tried) {
		d->dw_tried = true;
		/* DWARF lives in the debug file when there is one. */
		if (!d->debug ||
		    sfp_dwarf_open(d->debug, &d->s->dwarf_cache, &d->dw))
			(void)sfp_dwarf_open(d->elf, &d->s->dwarf_cache, &d->dw);
	}
	if (!d->dw)
		return -ENOENT;
	return sfp_dwarf_inlines(d->s, d->dw, vaddr, frames, max);
}

const char *sfp_symbolizer_dso__path(const struct sfp_symbolizer_dso *dso)
{
	return dso->same ? dso->same->path : dso->path;
}

const char *sfp_symbolizer_dso__debug_path(const struct sfp_symbolizer_dso *dso)
{
	const struct sfp_symbolizer_dso *d = dso->same ? dso->same : dso;

	return d->debug_path ? d->debug_path : d->path;
}

size_t sfp_symbolizer_dso__num_symbols(const struct sfp_symbolizer_dso *dso)
{
	return (dso->same ? dso->same : dso)->tab.nr;
}
