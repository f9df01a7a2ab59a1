// SPDX-License-Identifier: MIT
/*
 * perf's build-id cache: `perf record` copies every DSO it saw to
 * ~/.debug/.build-id/<xx>/<rest>/elf, and perf report/script read that
 * copy first, so a binary rebuilt or deleted after recording still
 * resolves.  We do the same for the DSOs whose build-id the file records.
 */
#include <unistd.h>

#include "perf/machine.h"

SFP_HIDDEN const char *sfp_perf_dso_path(const struct sfp_perf_header_info *h,
					 const char *name, const uint8_t *id,
					 size_t id_len, char *buf, size_t len)
{
	const char *home = getenv("HOME");
	size_t i, j, n;
	char hex[41];

	if (!home || !name || name[0] != '/')
		return name;
	for (i = 0; !id_len && h && i < h->nr_build_ids; i++)
		if (!strcmp(h->build_ids[i].filename, name)) {
			id = h->build_ids[i].id;
			id_len = h->build_ids[i].size;
		}
	if (!id_len || id_len > 20)
		return name;
	for (j = 0; j < id_len; j++)
		snprintf(hex + 2 * j, 3, "%02x", id[j]);
	n = (size_t)snprintf(buf, len, "%s/.debug/.build-id/%.2s/%s/elf", home,
			     hex, hex + 2);
	if (n >= len || access(buf, R_OK))
		return name;
	return buf;
}

SFP_HIDDEN void sfp_perf_dso_build_id(const struct sfp_perf_header_info *h,
				      const struct sfp_pdso *d,
				      const uint8_t **id, size_t *len)
{
	size_t i;

	*id = NULL;
	*len = 0;
	if (d->build_id_size) {
		*id = d->build_id;
		*len = d->build_id_size;
		return;
	}
	for (i = 0; h && i < h->nr_build_ids; i++)
		if (h->build_ids[i].size && h->build_ids[i].size <= 20 &&
		    !strcmp(h->build_ids[i].filename, d->name)) {
			*id = h->build_ids[i].id;
			*len = h->build_ids[i].size;
			return;
		}
}
