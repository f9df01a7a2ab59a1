// SPDX-License-Identifier: MIT
/*
 * One mapping to one file, by build-id; one address to its frames.
 *
 * A mapping is looked up by its build-id alone: the symbolizer tries the
 * path the profile gives (it may be the same file on this host, checked
 * by build-id), then copies by build-id in the debug directories, the
 * build-id cache and --symfs, then debuginfod; with
 * SFP_SYMBOLIZER_DEBUG_AS_CODE a debug file stands in for a binary this
 * host has not got.  A mapping without a build-id is left alone: its path
 * names some file on the host that took the profile, and a file of the
 * same name here is no evidence of being the same file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "export/strtab.h"
#include "perf/buildid-cache.h"
#include "symbolize/symbolize.h"

const char *symz_source_name(enum symz_source src)
{
	static const char *const names[SYMZ_SRC__NR] = {
		[SYMZ_SRC_FILE] = "the file at its path",
		[SYMZ_SRC_DEBUG_DIR] = "debug directories",
		[SYMZ_SRC_BUILDID_CACHE] = "build-id cache",
		[SYMZ_SRC_DEBUGINFOD] = "debuginfod",
	};

	return src < SYMZ_SRC__NR ? names[src] : "?";
}

void symz_stats_free(struct symz_stats *st)
{
	size_t i;

	for (i = 0; i < st->nr_miss; i++)
		free(st->miss[i].path);
	free(st->miss);
	st->miss = NULL;
	st->nr_miss = st->cap_miss = 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* hex text to bytes; 0 bytes for anything that is not an even-length
 * hex string of 2..SYMZ_BUILD_ID_MAX bytes */
static size_t parse_build_id(const char *hex, uint8_t *id)
{
	size_t n = hex ? strlen(hex) : 0, i;

	if (n < 4 || n % 2 || n > 2 * SYMZ_BUILD_ID_MAX)
		return 0;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return 0;
		id[i] = (uint8_t)(hi << 4 | lo);
	}
	return n / 2;
}

static bool under(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	return n && !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Where the file that names the frames was found. */
enum symz_source symz_classify(struct sfp_symbolizer_dso *dso,
				 const char *given)
{
	const char *p = sfp_symbolizer_dso__debug_path(dso);
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	char dir[4096];

	if (!p)
		p = sfp_symbolizer_dso__path(dso);
	if (!p)
		return SYMZ_SRC_FILE;
	if ((env && under(p, env)) || strstr(p, "/debuginfod_client") ||
	    strstr(p, "/.debuginfod_client_cache/"))
		return SYMZ_SRC_DEBUGINFOD;
	if ((!sfp_buildid_dir(dir, sizeof(dir)) && under(p, dir)) ||
	    under(p, sfp_buildid_symfs()))
		return SYMZ_SRC_BUILDID_CACHE;
	if (!strcmp(p, given))
		return SYMZ_SRC_FILE;
	return SYMZ_SRC_DEBUG_DIR;
}

static size_t note_missing(struct symz_stats *st, const struct symz_mapping *m,
			   int err)
{
	struct symz_missing *x;
	size_t i;

	for (i = 0; i < st->nr_miss; i++)
		if (!strcmp(st->miss[i].build_id, m->build_id))
			return i;
	if (st->nr_miss == st->cap_miss) {
		size_t nc = st->cap_miss ? 2 * st->cap_miss : 8;

		x = realloc(st->miss, nc * sizeof(*x));
		if (!x)
			return SIZE_MAX;
		st->miss = x;
		st->cap_miss = nc;
	}
	x = &st->miss[st->nr_miss];
	memset(x, 0, sizeof(*x));
	snprintf(x->build_id, sizeof(x->build_id), "%s", m->build_id);
	x->path = strdup(m->path ? m->path : "");
	x->err = err;
	return st->nr_miss++;
}

int symz_resolve(const struct symz_lookup *lk, const struct symz_mapping *m,
		 struct symz_stats *st, struct symz_map *out)
{
	uint8_t id[SYMZ_BUILD_ID_MAX];
	size_t len = parse_build_id(m->build_id, id);
	int err;

	memset(out, 0, sizeof(*out));
	out->miss = SIZE_MAX;
	if (!len) {
		out->err = -ENODATA;
		return out->err;
	}
	if (lk->store) {
		err = symz_store_get(lk->store, m->path && *m->path ? m->path :
				     "[unknown]", id, len, lk->deadline_ns,
				     out);
		if (!err)
			return 0;
		out->err = err;
		out->miss = note_missing(st, m, err);
		return err;
	}
	/* pid -1: no process of this host mapped it */
	err = sfp_symbolizer__get_dso(lk->s, -1, m->path && *m->path ? m->path :
				      "[unknown]", id, len, &out->dso);
	if (err) {
		out->dso = NULL;
		out->err = err;
		out->miss = note_missing(st, m, err);
		return err;
	}
	out->src = symz_classify(out->dso, m->path ? m->path : "");
	return 0;
}

void symz_maps_release(struct symz_map *maps, size_t n)
{
	size_t i;

	for (i = 0; maps && i < n; i++)
		if (maps[i].ent) {
			symz_store_put(maps[i].ent);
			maps[i].ent = NULL;
			maps[i].dso = NULL;
		}
}

int symz_frames(const struct symz_mapping *m, const struct symz_map *mp,
		uint64_t addr, struct symz_frame *out, size_t max)
{
	struct sfp_inline_frame in[SYMZ_MAX_FRAMES];
	struct sfp_symbol sym;
	uint64_t vaddr;
	int n, i, k = 0;

	if (!mp->dso || !max ||
	    sfp_symbolizer_dso__vaddr(mp->dso, m->start, m->offset, addr,
				      &vaddr) ||
	    sfp_symbolizer_dso__find(mp->dso, vaddr, &sym))
		return -ENOENT;
	n = sfp_symbolizer_dso__inlines(mp->dso, vaddr, in, SYMZ_MAX_FRAMES);
	if (n > SYMZ_MAX_FRAMES)
		n = SYMZ_MAX_FRAMES;
	/* the inlined frames, innermost first, then the real function */
	for (i = 0; i < n - 1 && (size_t)k < max - 1; i++) {
		if (!in[i].inlined || !in[i].name)
			continue;
		out[k].name = in[i].name;
		out[k].system_name = in[i].name;
		out[k].file = in[i].file;
		out[k].line = in[i].line;
		out[k].column = in[i].column;
		k++;
	}
	/* The real function by its DWARF name where DWARF covers it, as
	 * addr2line and llvm-symbolizer name it (agent_hot, where the
	 * symbol table says agent_hot.constprop.0); the symbol's own name
	 * is kept as the system name. */
	out[k].name = n > 0 && in[n - 1].name ? in[n - 1].name : sym.name;
	out[k].system_name = sym.raw_name ? sym.raw_name : sym.name;
	if (n > 0) {
		out[k].file = in[n - 1].file;
		out[k].line = in[n - 1].line;
		out[k].column = in[n - 1].column;
	} else {
		out[k].file = sym.file;
		out[k].line = sym.line;
		out[k].column = 0;
	}
	return k + 1;
}

int symz_name_loc(const struct symz_lookup *lk, const struct symz_mapping *m,
		  struct symz_map *mp, bool *done, uint64_t addr,
		  struct symz_stats *st, struct symz_frame *fr, size_t max)
{
	int n;

	if (!*done) {
		*done = true;
		symz_resolve(lk, m, st, mp);
	}
	if (!mp->dso) {
		if (mp->err == -ENODATA) {	/* a build-id we cannot read */
			st->not_native++;
			return 0;
		}
		st->missing++;
		if (mp->miss < st->nr_miss)
			st->miss[mp->miss].locations++;
		return 0;
	}
	/* a shared table answers one lookup at a time */
	if (mp->ent)
		symz_entry_lock(mp->ent);
	n = symz_frames(m, mp, addr, fr, max);
	if (mp->ent)
		symz_entry_unlock(mp->ent);
	if (n <= 0) {
		st->unnamed++;
		return 0;
	}
	st->named++;
	st->by_source[mp->src]++;
	st->inlined += (uint64_t)n - 1;
	return n;
}

int symz_unwrap(const void *in, size_t len, size_t max_len, void **raw,
		const void **pb, size_t *pb_len, char *why, size_t why_len)
{
	int err;

	*raw = NULL;
	*pb = in;
	*pb_len = len;
	if (!sfp_is_gzip(in, len))
		return 0;
	err = sfp_gunzip(in, len, max_len, raw, pb_len);
	if (err) {
		snprintf(why, why_len, "%s", err == -EFBIG ?
			 "unpacks to more than the size limit" :
			 "not a whole gzip stream");
		return err;
	}
	*pb = *raw;
	return 0;
}

int symz_wrap(void *packed, size_t n, bool gz, void **out, size_t *out_len)
{
	int err;

	if (!gz) {
		*out = packed;
		*out_len = n;
		return 0;
	}
	err = sfp_gzip(packed, n, out, out_len);
	free(packed);
	return err;
}

int symz_take_strings(struct exp_strtab *t, char ***table, size_t *n)
{
	char **nt;
	size_t i;

	if (!t->n)
		return 0;
	nt = realloc(*table, (*n + t->n) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	*table = nt;
	for (i = 0; i < t->n; i++) {
		nt[(*n)++] = t->strs[i];
		t->strs[i] = NULL;
	}
	t->n = 0;
	return 0;
}
