// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the requests of `sfprof symbolize --listen`
 * (src/symbolize/service.c) as the listener hands them over: the checks
 * of content type and encoding, the gzip body under its limit,
 * protobuf-c's decoding of a PushRequest or an OTLP request, the bounds
 * on series, samples and labels, then each profile named through the
 * shared store (store.c: no file is found here, every build-id takes the
 * "not found" path and is remembered).  Every request must get an
 * answer: a status and a reason, 2xx or 4xx (5xx only for memory).
 *
 * Input: byte 0 says what the rest is -- bit 0 an OTLP request (else a
 * Connect Push), bit 1 sent with Content-Encoding: gzip -- then the body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/service.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const dirs[] = { "/nonexistent/sfprof-fuzz", NULL };
	static struct symz_store *store;
	static struct symz_service *sv;
	struct agent_listen_req rq = { 0 };

	if (!sv) {
		struct symz_store_opts so = {
			.memory = 1 << 20, .debug_dirs = dirs,
			.debuginfod = SFP_DEBUGINFOD_OFF,
		};
		struct symz_service_opts o = {
			.max_profile = 16 << 20, .max_series = 16,
			.max_samples = 16, .max_labels = 16,
			.timeout_ms = 1000, .check_only = true,
		};

		if (symz_store_new(&so, &store))
			abort();
		o.store = store;
		if (symz_service_new(&o, &sv))
			abort();
	}
	if (!size)
		return 0;
	rq.url = data[0] & 1 ? "/v1development/profiles" :
			       "/push.v1.PusherService/Push";
	rq.content_type = data[0] & 1 ? "application/x-protobuf" :
					"application/proto";
	rq.content_encoding = data[0] & 2 ? "gzip" : NULL;
	rq.body = data + 1;
	rq.len = size - 1;
	symz_service_post(sv, &rq);
	if (!rq.reply || rq.status < 200 || rq.status >= 600 ||
	    (rq.status >= 300 && rq.status < 400))
		abort();
	free(rq.reply);
	return 0;
}
