// SPDX-License-Identifier: MIT
/*
 * Fuzz target: `sfprof symbolize` on a pprof profile (src/symbolize/):
 * the check, protobuf-c's decoding, every mapping and string index the
 * filler follows, the placeholders it frees and the functions and
 * strings it appends.  Whatever it writes must pass the same check and
 * decode again.  No file is found here (no debug directory, no
 * debuginfod, paths checked by build-id), so every mapping with a
 * build-id takes the "not found" path and the rest is left alone.
 *
 * The same bytes as an OTLP ExportProfilesServiceRequest (symz_otlp):
 * what it writes must decode again.
 *
 * Input: a pprof Profile or an OTLP request, gzipped or not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink.h"
#include "common/gzip.h"
#include "otlp-profiles.pb-c.h"
#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const dirs[] = { "/nonexistent/sfprof-fuzz", NULL };
	static struct sfp_symbolizer *s;
	struct symz_stats st = { 0 };
	void *out = NULL, *raw = NULL;
	size_t len = 0, raw_len;
	char why[256];
	struct symz_lookup lk;

	if (!s) {
		SFP_OPTS(sfp_symbolizer_opts, so, .debug_dirs = dirs,
			 .srclines = true, .no_cache = true,
			 .debuginfod = SFP_DEBUGINFOD_OFF,
			 .flags = SFP_SYMBOLIZER_DEBUG_AS_CODE);

		if (sfp_symbolizer__new(&so, &s))
			abort();
	}
	lk = (struct symz_lookup){ .s = s };
	if (!symz_pprof(&lk, data, size, 64 << 20, &out, &len, &st, why,
			sizeof(why))) {
		if (sfp_is_gzip(out, len)) {
			if (sfp_gunzip(out, len, 256 << 20, &raw, &raw_len))
				abort();
		} else {
			raw = out;
			raw_len = len;
			out = NULL;
		}
		if (agent_pprof_check(raw, raw_len, why, sizeof(why)))
			abort();	/* we wrote what we would refuse */
		if (st.named + st.already + st.not_native + st.unnamed +
		    st.missing != st.locations)
			abort();	/* every location counted once */
	}
	symz_stats_free(&st);
	free(out);
	free(raw);
	out = raw = NULL;
	memset(&st, 0, sizeof(st));
	if (!symz_otlp(&lk, data, size, 64 << 20, &out, &len, &st, why,
		       sizeof(why))) {
		Sfpotlp__ExportProfilesServiceRequest *req;

		if (sfp_is_gzip(out, len)) {
			if (sfp_gunzip(out, len, 256 << 20, &raw, &raw_len))
				abort();
		} else {
			raw = out;
			raw_len = len;
			out = NULL;
		}
		req = sfpotlp__export_profiles_service_request__unpack(
			NULL, raw_len, raw);
		if (!req)
			abort();
		sfpotlp__export_profiles_service_request__free_unpacked(req,
									NULL);
		if (st.named + st.already + st.not_native + st.unnamed +
		    st.missing != st.locations)
			abort();
	}
	symz_stats_free(&st);
	free(out);
	free(raw);
	return 0;
}
