/* SPDX-License-Identifier: MIT */
/*
 * Naming the native frames of profiles taken elsewhere (sfprof
 * symbolize): a pprof or OTLP profile whose locations carry addresses and
 * whose mappings carry build-ids comes back with functions, file:line and
 * inlined frames filled in.  Frames already named and frames that cannot
 * be named are left exactly as they were, so that a profile can go
 * through twice, and mixed profiles (interpreter frames named by the
 * agent, native ones not) keep what they had.
 *
 *   fill.c    one profile's mappings resolved once each (by build-id
 *             only: a file is its build-id), addresses to frames, and
 *             the account of what was named from where
 *   pprof.c   perftools.profiles.Profile in and out
 *   otlp.c    OTLP ExportProfilesServiceRequest in and out
 *   store.c   the service's tables (sfprof symbolize --listen): one per
 *             build-id for every request, loaded once however many ask
 *             at the same moment, the least recently used let go past
 *             a byte budget
 *   service.c the service's requests: Pyroscope Connect Push and OTLP
 *             in, named, handed to the agent's sinks
 */
#ifndef SFP_SYMBOLIZE_H
#define SFP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"
#include "sfprof/symbols.h"

/* a build-id in bytes: as long as the symbolizer takes them */
#define SYMZ_BUILD_ID_MAX 64

/* Where a frame's name came from. */
enum symz_source {
	SYMZ_SRC_FILE,		/* the file at its own path on this host */
	SYMZ_SRC_DEBUG_DIR,	/* a debug directory (/usr/lib/debug ...) */
	SYMZ_SRC_BUILDID_CACHE,	/* the build-id cache or --symfs */
	SYMZ_SRC_DEBUGINFOD,	/* fetched from a debuginfod server */
	SYMZ_SRC__NR,
};

SFP_HIDDEN const char *symz_source_name(enum symz_source src);

/* A build-id no file was found for, and the locations it left unnamed. */
struct symz_missing {
	char build_id[2 * SYMZ_BUILD_ID_MAX + 1];
	char *path;		/* the mapping's file name, as given */
	int err;		/* why: -ENOENT not found, other -errno */
	uint64_t locations;
};

/* The account of one profile (or of many, added up). */
struct symz_stats {
	uint64_t locations;	/* all locations of the profile */
	uint64_t already;	/* had names: left alone */
	uint64_t not_native;	/* no mapping, or one without a build-id */
	uint64_t named;		/* named now */
	uint64_t unnamed;	/* a file, but no symbol covers the address */
	uint64_t missing;	/* their build-id's file was not found */
	uint64_t by_source[SYMZ_SRC__NR];	/* named, by where from */
	uint64_t inlined;	/* inlined frames added */
	struct symz_missing *miss;
	size_t nr_miss, cap_miss;
	/* the last pprof profile's time_nanos and duration_nanos */
	int64_t time_ns, duration_ns;
};

SFP_HIDDEN void symz_stats_free(struct symz_stats *st);

/* A mapping as a profile gives it; build_id as hex text. */
struct symz_mapping {
	const char *path;
	const char *build_id;
	uint64_t start, limit, offset;
};

/* One frame of a location, innermost first; strings owned by the
 * symbolizer (valid until it is freed). */
struct symz_frame {
	const char *name;		/* demangled */
	const char *system_name;	/* as in the symbol table */
	const char *file;		/* NULL unknown */
	unsigned int line, column;
};

#define SYMZ_MAX_FRAMES 64

struct symz_store;
struct symz_entry;

/*
 * Where a profile's mappings are resolved: the caller's own symbolizer
 * (file mode: one thread), or the service's shared store, whose loads
 * another request started are waited for until deadline_ns
 * (CLOCK_MONOTONIC) at most.
 */
struct symz_lookup {
	struct sfp_symbolizer *s;
	struct symz_store *store;	/* non-NULL: s is not used */
	uint64_t deadline_ns;
};

/* A mapping resolved to its file, once per profile. */
struct symz_map {
	struct sfp_symbolizer_dso *dso;	/* NULL: see err */
	int err;
	enum symz_source src;
	size_t miss;			/* index in stats->miss, err only */
	struct symz_entry *ent;		/* store: the reference held */
};

/* The store's references of maps[0..n) given back (file mode: none). */
SFP_HIDDEN void symz_maps_release(struct symz_map *maps, size_t n);

/*
 * symz_resolve() - find the file of mapping m (by its build-id; a mapping
 * without one is not native to us and is never guessed by its path).
 * Return: 0 and out->dso; -ENODATA no build-id; other -errno (recorded in
 * st->miss with the mapping's path).
 */
SFP_HIDDEN int symz_resolve(const struct symz_lookup *lk,
			    const struct symz_mapping *m,
			    struct symz_stats *st, struct symz_map *out);

/*
 * symz_name_loc() - the frames of one location at @addr of mapping @m
 * (@mp and *@done: its resolution, made on first use), each outcome
 * counted in @st: a location named (by source, inlined frames), not
 * native, in a file not found, unnamed.
 * Return: the number of frames in @fr (> 0), or 0: nothing to add.
 */
SFP_HIDDEN int symz_name_loc(const struct symz_lookup *lk,
			     const struct symz_mapping *m,
			     struct symz_map *mp, bool *done, uint64_t addr,
			     struct symz_stats *st, struct symz_frame *fr,
			     size_t max);

/*
 * The wrapping both formats share.  symz_unwrap(): @in, gunzipped into
 * *@raw when it is gzip (at most @max_len bytes), as *@pb, *@pb_len.
 * symz_wrap(): @packed (taken over) as the output, gzipped when @gz.
 * symz_take_strings(): the strings interned in @t appended to a string
 * table (*@table of *@n), moved, not copied.  0 or -errno.
 */
SFP_HIDDEN int symz_unwrap(const void *in, size_t len, size_t max_len,
			   void **raw, const void **pb, size_t *pb_len,
			   char *why, size_t why_len);
SFP_HIDDEN int symz_wrap(void *packed, size_t n, bool gz, void **out,
			 size_t *out_len);
struct exp_strtab;
SFP_HIDDEN int symz_take_strings(struct exp_strtab *t, char ***table,
				 size_t *n);

/*
 * symz_frames() - the frames at runtime address addr of a resolved
 * mapping: the real function last, the inlined ones before it.
 * Return: the number of frames (>= 1), or -ENOENT nothing covers addr.
 */
SFP_HIDDEN int symz_frames(const struct symz_mapping *m, const struct symz_map *mp,
			   uint64_t addr, struct symz_frame *out, size_t max);

/*
 * symz_pprof() - name the native frames of a pprof profile.
 * @in, @len: the profile, gzipped or not (the result is packed the same
 *            way); it unpacks to at most @max_len bytes.
 * @out, @out_len: receive the named profile (malloc()ed).
 * @st: counts added to (the caller frees st->miss).
 * @why: the reason for a refusal (where in the profile, what is wrong).
 * Return: 0; -EBADMSG not a valid pprof profile; -EFBIG over @max_len;
 * -ENOMEM.
 */
SFP_HIDDEN int symz_pprof(const struct symz_lookup *lk, const void *in,
			  size_t len,
			  size_t max_len, void **out, size_t *out_len,
			  struct symz_stats *st, char *why, size_t why_len);

/*
 * symz_otlp() - the same for an OTLP ExportProfilesServiceRequest
 * (profiles v1development): locations without lines whose mapping has a
 * process.executable.build_id.gnu attribute are named.
 */
SFP_HIDDEN int symz_otlp(const struct symz_lookup *lk, const void *in,
			 size_t len,
			 size_t max_len, void **out, size_t *out_len,
			 struct symz_stats *st, char *why, size_t why_len);

/* --- store.c: the service's shared tables --- */

struct symz_store_opts {
	uint64_t memory;		/* bytes of tables kept (0: 512 MB) */
	const char *const *debug_dirs;	/* as sfp_symbolizer_opts */
	int debuginfod;			/* SFP_DEBUGINFOD_* */
	uint32_t debuginfod_timeout_ms;	/* one build-id's fetch */
	uint32_t retry_ms;		/* a build-id not found is looked
					   for again after (0: 60 s) */
	/* The calling thread's net heap bytes (any origin: differences
	 * count); NULL: a table costs its files' sizes only. */
	int64_t (*heap_now)(void);
};

struct symz_store_stats {
	uint64_t tables;	/* loaded and kept now */
	uint64_t bytes;		/* their cost (store.c says how counted) */
	uint64_t heap_bytes;	/* ... of which their heap, measured */
	bool heap_measured;	/* o.heap_now was given */
	uint64_t loads;		/* lookups of a build-id's files made */
	uint64_t load_failures;	/* ... that found nothing */
	uint64_t hits;		/* requests served by a table kept */
	uint64_t waits;		/* ... that waited for another's load */
	uint64_t wait_timeouts;	/* ... and gave up at their deadline */
	uint64_t evictions;	/* tables let go for the budget */
	uint64_t evicted_bytes;
	uint64_t flushes;	/* SIGHUP: everything let go */
};

SFP_HIDDEN int symz_store_new(const struct symz_store_opts *o,
			      struct symz_store **out);
SFP_HIDDEN void symz_store_free(struct symz_store *st);
SFP_HIDDEN void symz_store_stats(struct symz_store *st,
				 struct symz_store_stats *out);
/* Let go of every table (those in use when their last user is done). */
SFP_HIDDEN void symz_store_flush(struct symz_store *st);
/*
 * symz_store_get() - the table of build-id @id (@len bytes), loaded by
 * this call if nobody has it, else waited for until @deadline_ns.
 * out->dso, ->src and ->ent (a reference: symz_store_put()) on success.
 * Return: 0, -ETIMEDOUT (another's load outlasted the deadline), or the
 * lookup's -errno (-ENOENT not found).
 */
SFP_HIDDEN int symz_store_get(struct symz_store *st, const char *path,
			      const uint8_t *id, size_t len,
			      uint64_t deadline_ns, struct symz_map *out);
SFP_HIDDEN void symz_store_put(struct symz_entry *e);
/* Lookups in an entry's table are one at a time (a symbolizer is not
 * thread-safe); the strings they give stay valid while referenced. */
SFP_HIDDEN void symz_entry_lock(struct symz_entry *e);
SFP_HIDDEN void symz_entry_unlock(struct symz_entry *e);
SFP_HIDDEN enum symz_source symz_classify(struct sfp_symbolizer_dso *dso,
					  const char *given);

#endif /* SFP_SYMBOLIZE_H */
