// SPDX-License-Identifier: MIT
/*
 * The perf.data and stitching API through the shared library (a missing
 * export fails the link): read a real perf-recorded file, stitch it.
 */
#include <errno.h>
#include <stdio.h>

#include <sfprof/perf.h>
#include <sfprof/stitch.h>

#include "test.h"

static int count(void *ctx, const struct sfp_perf_event *ev,
		 enum sfp_stitch_how how)
{
	(void)how;
	if (ev->type == SFP_PERF_RECORD_SAMPLE)
		++*(int *)ctx;
	return 0;
}

TEST(api_perf_read_and_stitch)
{
	struct sfp_perf_reader *r = NULL;
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	char path[4096];
	int n = 0, err;

	snprintf(path, sizeof(path), "%s/perf/deferred.data", test_data_dir());
	if (!ASSERT_OK(sfp_perf_reader__open(path, NULL, &r)) ||
	    !ASSERT_OK(sfp_stitcher__new(NULL, count, &n, &st)))
		goto out;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0)
		ASSERT_OK(sfp_stitcher__push(st, ev));
	ASSERT_EQ(err, 0);
	ASSERT_OK(sfp_stitcher__flush(st));
	ASSERT_GE(n, 1);
	ASSERT_EQ(sfp_stitcher__stats(st)->nr_merged, n);
	ASSERT_EQ(sfp_stitcher__stats(st)->nr_leftover, 0);
	ASSERT_STREQ(sfp_perf_record_name(SFP_PERF_RECORD_CALLCHAIN_DEFERRED),
		     "CALLCHAIN_DEFERRED");
	ASSERT_ERR(sfp_perf_reader__next(NULL, &ev), -EINVAL);
out:
	sfp_stitcher__free(&st);
	sfp_perf_reader__free(&r);
	ASSERT_TRUE(r == NULL && st == NULL);
}
