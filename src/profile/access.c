// SPDX-License-Identifier: MIT
/*
 * Read-only accessors of a loaded profile.  Out-of-range indices give
 * NULL (or 0 entries) rather than undefined behaviour: reports walk these
 * tables with indices taken from other rows.
 */
#include <string.h>

#include "profile/profile-int.h"

size_t sfp_profile__nr_samples(const struct sfp_profile *p)
{
	return p ? p->nr_samples : 0;
}

const struct sfp_profile_sample *sfp_profile__sample(const struct sfp_profile *p,
						     size_t idx)
{
	return p && idx < p->nr_samples ? &p->samples[idx] : NULL;
}

size_t sfp_profile__nr_nodes(const struct sfp_profile *p)
{
	return p ? p->nr_nodes : 0;
}

const struct sfp_profile_node *sfp_profile__node(const struct sfp_profile *p,
						 uint32_t idx)
{
	return p && idx < p->nr_nodes ? &p->nodes[idx] : NULL;
}

size_t sfp_profile__nr_locs(const struct sfp_profile *p)
{
	return p ? p->nr_locs : 0;
}

const struct sfp_profile_loc *sfp_profile__loc(const struct sfp_profile *p,
					       uint32_t idx)
{
	return p && idx < p->nr_locs ? &p->locs[idx] : NULL;
}

size_t sfp_profile__nr_funcs(const struct sfp_profile *p)
{
	return p ? p->nr_funcs : 0;
}

const struct sfp_profile_func *sfp_profile__func(const struct sfp_profile *p,
						 uint32_t idx)
{
	return p && idx < p->nr_funcs ? &p->funcs[idx] : NULL;
}

size_t sfp_profile__nr_mappings(const struct sfp_profile *p)
{
	return p ? p->nr_maps : 0;
}

const struct sfp_profile_mapping *
sfp_profile__mapping(const struct sfp_profile *p, uint32_t idx)
{
	return p && idx < p->nr_maps ? &p->maps[idx] : NULL;
}

size_t sfp_profile__nr_events(const struct sfp_profile *p)
{
	return p ? p->nr_events : 0;
}

const struct sfp_profile_event *sfp_profile__event(const struct sfp_profile *p,
						   uint32_t idx)
{
	return p && idx < p->nr_events ? &p->events[idx] : NULL;
}

const char *sfp_profile__string(const struct sfp_profile *p, uint32_t idx)
{
	return p && idx < p->nr_strs ? p->strs[idx] : NULL;
}

const char *sfp_profile__hostname(const struct sfp_profile *p)
{
	return p ? p->hostname : NULL;
}

const char *sfp_profile__cmdline(const struct sfp_profile *p)
{
	return p ? p->cmdline : NULL;
}

void sfp_profile__lost(const struct sfp_profile *p,
		       struct sfp_profile_lost *lost)
{
	if (p)
		*lost = p->lost;
	else
		memset(lost, 0, sizeof(*lost));
}

size_t sfp_profile__stack(const struct sfp_profile *p, uint32_t node,
			  uint32_t *locs, size_t max)
{
	size_t n = 0;

	if (!p || node >= p->nr_nodes)
		return 0;
	/* parents always have smaller indices, so this walk ends */
	while (node != 0 && node < p->nr_nodes) {
		if (n < max)
			locs[n] = p->nodes[node].loc;
		n++;
		node = p->nodes[node].parent;
	}
	return n;
}
