/* SPDX-License-Identifier: MIT */
/*
 * Inside a struct sfp_profile: the interned tables behind the public
 * accessors, and the hooks the loader uses to fill them.  The tables grow
 * while a file is loaded; pointers that the public structs carry (strings,
 * loc lines) are fixed up once loading is done (sfp_profile_finish()).
 */
#ifndef SFP_PROFILE_INT_H
#define SFP_PROFILE_INT_H

#include <sfprof/profile.h>
#include <sfprof/symbols.h>

#include "common/htab.h"
#include "common/internal.h"

#define SFP_PROFILE_NONE UINT32_MAX

/*
 * The tables' indexes are common/htab.h's.  (The two busiest tables,
 * locs and nodes, have indexes of their own that hold the key in the
 * slot: a probe then reads no row, one cache miss less for every frame
 * and stack node of a file.)
 */

/* Strings live in chunks so that a string's address never moves. */
struct sfp_strchunk {
	struct sfp_strchunk *next;
	size_t used, cap;
	char data[];
};

struct sfp_profile {
	/*
	 * The load's symbolizer with opts->keep_files, kept until the
	 * profile is freed: its DSOs' mappings go with it, one munmap()
	 * each.  A command that exits without freeing the profile leaves
	 * them to the exit's single pass over the address space.
	 */
	struct sfp_symbolizer *sym;
	struct sfp_strchunk *chunks;
	const char **strs;
	size_t nr_strs, cap_strs;
	struct sfp_htab str_tab;

	struct sfp_profile_mapping *maps;
	uint32_t *map_key;		/* per mapping: the machine's dso index
					 * (user) or the path's string (kernel) */
	size_t nr_maps, cap_maps;
	struct sfp_htab map_tab;

	struct sfp_profile_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct sfp_htab func_tab;

	struct sfp_profile_loc *locs;
	size_t *loc_line0;		/* first line of each loc in `lines` */
	size_t nr_locs, cap_locs;
	struct sfp_loc_index {
		struct sfp_loc_slot {
			uint64_t ip;
			uint32_t mapping;
			uint32_t idx;	/* SFP_PROFILE_NONE: empty */
		} *slots;
		size_t cap, n;
	} loc_tab;

	struct sfp_profile_line *lines;
	size_t nr_lines, cap_lines;

	struct sfp_profile_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct sfp_node_index {
		struct sfp_node_slot {
			uint32_t parent, loc;
			uint32_t idx;	/* SFP_PROFILE_NONE: empty */
		} *slots;
		size_t cap, n;
	} node_tab;

	struct sfp_profile_sample *samples;
	size_t nr_samples, cap_samples;

	struct sfp_profile_event *events;
	size_t nr_events;

	const char *hostname;		/* interned, NULL if absent */
	const char *cmdline;
	struct sfp_profile_lost lost;
};

/* Grow an array so that it holds at least `need` entries. */
SFP_HIDDEN int sfp_profile_grow(void **arr, size_t *cap, size_t need,
				size_t elem);

SFP_HIDDEN int sfp_profile_new(struct sfp_profile **out);

/* Intern a string; *idx receives its index.  Return: 0, -ENOMEM. */
SFP_HIDDEN int sfp_profile_intern(struct sfp_profile *p, const char *s,
				  uint32_t *idx);
/* A copy of s of its own, not interned: a pointer no other string
 * compares equal to (NULL on -ENOMEM). */
SFP_HIDDEN const char *sfp_profile_str_copy(struct sfp_profile *p,
					    const char *s);
/* The index of s if it is interned: 0, or -ENOENT. */
SFP_HIDDEN int sfp_profile_find_str(const struct sfp_profile *p,
				    const char *s, uint32_t *idx);
/* The interned copy of s (NULL on -ENOMEM). */
SFP_HIDDEN const char *sfp_profile_str(struct sfp_profile *p, const char *s);

/*
 * Mapping of a user frame: key is the machine's dso index; for kernel
 * mappings the string index of the path.  m holds the entry to add when
 * the key is new (path/build-id/kind).  Return: index or -ENOMEM.
 */
SFP_HIDDEN int64_t sfp_profile_mapping(struct sfp_profile *p, uint32_t key,
				       const struct sfp_profile_mapping *m);
/* The mapping sfp_profile_mapping() would answer for (key, m's kind,
 * start, end, pgoff) if it exists, else SFP_PROFILE_NONE; m's path and
 * build-id are not looked at. */
SFP_HIDDEN uint32_t sfp_profile_find_mapping(const struct sfp_profile *p,
					     uint32_t key,
					     const struct sfp_profile_mapping *m);
/* f's strings must be interned. */
SFP_HIDDEN int64_t sfp_profile_func(struct sfp_profile *p,
				    const struct sfp_profile_func *f);
/* The loc of (mapping, ip), SFP_PROFILE_NONE if not interned yet. */
SFP_HIDDEN uint32_t sfp_profile_find_loc(const struct sfp_profile *p,
					 uint32_t mapping, uint64_t ip);
SFP_HIDDEN int64_t sfp_profile_add_loc(struct sfp_profile *p,
				       const struct sfp_profile_loc *l,
				       const struct sfp_profile_line *lines,
				       size_t nr_lines);
/*
 * Replace the lines of an interned loc (its inline chain, read after the
 * loc was first made from a frame that did not need it) and set its
 * dwarf_name.  Return: 0, -EINVAL, -ENOMEM.
 */
SFP_HIDDEN int sfp_profile_set_loc_lines(struct sfp_profile *p, uint32_t loc,
					 const struct sfp_profile_line *lines,
					 size_t nr_lines,
					 const char *dwarf_name);
/* Child of parent through loc.  Return: node index or -ENOMEM. */
SFP_HIDDEN int64_t sfp_profile_node(struct sfp_profile *p, uint32_t parent,
				    uint32_t loc);
SFP_HIDDEN int sfp_profile_add_sample(struct sfp_profile *p,
				      const struct sfp_profile_sample *s);

/* Point each loc at its lines (call once the tables stop growing). */
SFP_HIDDEN void sfp_profile_finish(struct sfp_profile *p);

#endif /* SFP_PROFILE_INT_H */
