/* SPDX-License-Identifier: MIT */
/*
 * A profile as pprof's model sees it, worked out once for every encoder
 * that writes that model (pprof.c, and otlp.c, whose OTLP request says
 * the same as the pprof would): the samples merged by (stack, pid, tid,
 * comm) with one value per sample type, the locs, functions and
 * mappings their stacks use, and the mappings' order, main binary first.
 * The encoders then only differ in the wire format they write.
 */
#ifndef SFP_EXPORT_PPROF_MODEL_H
#define SFP_EXPORT_PPROF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/profile.h>

#include "common/internal.h"

/* One merged sample: the key the profile's samples merge by, its stack. */
struct exp_model_sample {
	uint32_t node, pid, tid, comm;	/* comm: the profile's string index */
	size_t first_loc;		/* its locs in exp_model.stack_locs */
	size_t nr_locs;			/* leaf first */
};

/* What a mapping's used locs tell about its symbols. */
struct exp_model_map {
	bool used, has_functions, has_filenames, has_lines, has_inline;
};

struct exp_model {
	const struct sfp_profile *p;
	/* sample types: [0] (samples, count), then one per event */
	size_t nr_types;
	const char **type, **unit;
	int cpu_event;			/* event index shown as "cpu", or -1 */
	/* per event: its fixed period (-c), 0 when sampled by frequency.
	 * perf leaves PERF_SAMPLE_PERIOD out of fixed-period samples, and
	 * the model then reports a period of 1 */
	uint64_t *fixed_period;

	struct exp_model_sample *samples;	/* sorted by key */
	size_t nr_samples;
	int64_t *values;		/* nr_samples rows of nr_types */
	uint32_t *stack_locs;		/* every sample's locs back to back */
	size_t nr_stack_locs;

	uint8_t *loc_used, *func_used;	/* by the profile's indices */
	struct exp_model_map *maps;
	uint32_t *map_order;		/* used mappings as written */
	size_t nr_map_order;

	int64_t duration;		/* first sample to last, ns */
	int64_t period;			/* of event 0 */
};

/*
 * exp_model__build() - work out @p's model
 * @user_only: leave kernel locs out of the stacks
 *
 * Return: 0 or -ENOMEM.  exp_model__free() either way.
 */
SFP_HIDDEN int exp_model__build(struct exp_model *m,
				const struct sfp_profile *p, bool user_only);
SFP_HIDDEN void exp_model__free(struct exp_model *m);

/* The model's sample I: its values, one per sample type. */
static inline const int64_t *exp_model__values(const struct exp_model *m,
					       size_t i)
{
	return &m->values[i * m->nr_types];
}

/* The model's sample I: its stack, leaf first. */
static inline const uint32_t *exp_model__stack(const struct exp_model *m,
					       size_t i)
{
	return &m->stack_locs[m->samples[i].first_loc];
}

/* A build-id as lowercase hex ("" when the mapping has none). */
#define EXP_BUILD_ID_HEX (2 * sizeof(((struct sfp_profile_mapping *)0)->build_id) + 1)
SFP_HIDDEN void exp_model__build_id(const struct sfp_profile_mapping *mp,
				    char hex[EXP_BUILD_ID_HEX]);

/*
 * A function's name and system name as the model writes them: an
 * unresolved one as "[libc.so.6]" (perf report's and the folded export's
 * way), not one "[unknown]" for all DSOs.  @buf holds that form.
 */
SFP_HIDDEN void exp_model__func_names(const struct sfp_profile_func *f,
				      char *buf, size_t sz, const char **name,
				      const char **system_name);

#endif /* SFP_EXPORT_PPROF_MODEL_H */
