// SPDX-License-Identifier: MIT
/*
 * The symbolizer's debuginfod options: which modes are accepted, when
 * lookups happen at all, and that a server that refuses connections
 * costs one warning per symbolizer, however many DSOs lack debug info.
 * (tests/cli/run-debuginfod.sh fetches from a real server.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "profile-test.h"
#include "test.h"

static int nr_warnings, nr_debuginfod;

static void count_warning(enum sfp_log_level level, const char *msg,
			  void *ctx)
{
	(void)ctx;
	if (level != SFP_LOG_WARN)
		return;
	nr_warnings++;
	if (strstr(msg, "debuginfod"))
		nr_debuginfod++;
}

TEST(debuginfod_modes)
{
	static const int bad[] = { -1, 3, 1000 };
	struct sfp_symbolizer *s = NULL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		SFP_OPTS(sfp_symbolizer_opts, o, .debuginfod = bad[i]);

		ASSERT_ERR(sfp_symbolizer__new(&o, &s), -EINVAL);
		ASSERT_TRUE(s == NULL);
	}
	for (i = SFP_DEBUGINFOD_AUTO; i <= SFP_DEBUGINFOD_OFF; i++) {
		SFP_OPTS(sfp_symbolizer_opts, o, .debuginfod = (int)i,
			 .debuginfod_timeout_ms = 1500);

		if (ASSERT_OK(sfp_symbolizer__new(&o, &s)))
			sfp_symbolizer__free(&s);
	}
}

/* Two stripped programs (different build-ids), no debug file anywhere. */
static bool stripped_pair(char paths[2][600])
{
	static const char *const progs[2] = { "symprog", "export-inline" };
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/dbgi-%s", test_tmp_dir(),
			 progs[i]);
		if (!pt_sh("strip -s -o '%s' '%s/%s'", paths[i], pt_progs(),
			   progs[i]))
			return false;
	}
	return true;
}

/* Load both; return the debuginfod warnings they caused. */
static int load_both(const struct sfp_symbolizer_opts *o, char paths[2][600])
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	sfp_log_fn old;
	int i;

	if (!ASSERT_OK(sfp_symbolizer__new(o, &s)))
		return -1;
	nr_warnings = nr_debuginfod = 0;
	old = sfp_set_log(count_warning, NULL);
	for (i = 0; i < 2; i++) {
		/* the DSO loads (its .dynsym and PLT) all the same */
		ASSERT_OK(sfp_symbolizer__get_dso(s, -1, paths[i], NULL, 0, &d));
	}
	sfp_set_log(old, NULL);
	sfp_symbolizer__free(&s);
	ASSERT_EQ(nr_warnings, nr_debuginfod);
	return nr_debuginfod;
}

TEST(debuginfod_refused_warns_once)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	char paths[2][600], url[64], cache[600];
	int fd;

	if (!stripped_pair(paths)) {
		test_skip("strip failed or test programs not built");
		return;
	}
	/* A bound port nobody listens on refuses connections, race-free. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!ASSERT_TRUE(fd >= 0) ||
	    !ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa))) ||
	    !ASSERT_OK(getsockname(fd, (struct sockaddr *)&sa, &len)))
		goto out;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	snprintf(cache, sizeof(cache), "%s/dbgi-cache", test_tmp_dir());
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);

	/* AUTO without servers named: no lookups, no warning. */
	unsetenv("DEBUGINFOD_URLS");
	{
		SFP_OPTS(sfp_symbolizer_opts, o);

		ASSERT_EQ(load_both(&o, paths), 0);
	}
	/* ON without servers: said once. */
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .debuginfod = SFP_DEBUGINFOD_ON);

		ASSERT_EQ(load_both(&o, paths), 1);
	}
	setenv("DEBUGINFOD_URLS", url, 1);
	/* refused: one warning for the two DSOs */
	{
		SFP_OPTS(sfp_symbolizer_opts, o);

		ASSERT_EQ(load_both(&o, paths), 1);
	}
	/* OFF: servers named, never asked */
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .debuginfod = SFP_DEBUGINFOD_OFF);

		ASSERT_EQ(load_both(&o, paths), 0);
	}
	/* no_debug_files: no debug file from anywhere */
	{
		SFP_OPTS(sfp_symbolizer_opts, o, .no_debug_files = true);

		ASSERT_EQ(load_both(&o, paths), 0);
	}
out:
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	if (fd >= 0)
		close(fd);
}
