// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the OTLP sink's converter (src/agent/otlp-convert.c) on a
 * pprof Profile it did not make: protobuf-c's decoding, then every index
 * (string, mapping, function, location ids) checked before use.  What it
 * builds must decode again as an ExportProfilesServiceRequest whose
 * dictionary tables start with their zero entries.
 *
 * The sinks' check (agent_pprof_check(), src/agent/pprof-check.c) on the
 * same bytes: bounds-checked, and never letting through what the
 * converter then refuses as inconsistent.
 *
 * Input: an uncompressed pprof Profile.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink-int.h"
#include "otlp-profiles.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char k0[] = "service_name", v0[] = "svc", k1[] = "pid", v1[] = "7";
	char *keys[] = { k0, k1 }, *values[] = { v0, v1 };
	struct sink_item it = {
		.keys = keys, .values = values, .nr_labels = 2,
		.start_ns = 1, .end_ns = 2, .pprof = (void *)data,
		.pprof_len = size,
	};
	Sfpotlp__ExportProfilesServiceRequest *req;
	void *out;
	size_t len;
	char why[256];
	int checked = agent_pprof_check(data, size, why, sizeof(why));
	int err = otlp_convert(&it, &out, &len);

	if (!checked && err == -EINVAL)
		abort();	/* the check let through what cannot convert */
	if (err)
		return 0;
	req = sfpotlp__export_profiles_service_request__unpack(NULL, len, out);
	if (!req || !req->dictionary || !req->dictionary->n_string_table ||
	    *req->dictionary->string_table[0] ||
	    !req->dictionary->n_stack_table || !req->dictionary->n_mapping_table)
		abort();
	sfpotlp__export_profiles_service_request__free_unpacked(req, NULL);
	free(out);
	return 0;
}
