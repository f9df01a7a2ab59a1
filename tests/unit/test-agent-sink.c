/* SPDX-License-Identifier: MIT */
/*
 * The agent's sink queue: exact drop counts while the backend takes
 * nothing, a window over the whole budget, close() bounded by its
 * deadline against a backend that never reads, and the files sink's
 * rotation.  The HTTP backends themselves are tested against a real
 * server in tests/cli/run-push.sh.
 */
#include <dirent.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/gzip.h"
#include "agent/sink-int.h"
#include "test.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A loopback TCP port: LISTEN false: bound but not listening, so connects
 * are refused; true: listening and never accepting, so requests hang.
 */
static int loopback_port(bool listen_, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (listen_ && listen(fd, 16)) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static const struct agent_label labels[] = {
	{ "service_name", "svc" }, { "pid", "42" },
};
/*
 * A pprof Profile of exactly LEN bytes (at least 5): string_table "" and
 * one string of filler (bytes from FILL, printable ASCII), so that the
 * sink's check (agent_pprof_check()) lets it through.
 */
static void make_pprof(unsigned char *buf, size_t len, unsigned char (*fill)(void))
{
	for (size_t vl = 1; vl <= 3; vl++) {
		size_t l = len - 3 - vl, p = 0;

		if ((vl == 1 && l >= 128) || (vl == 2 && (l < 128 || l >= 16384)) ||
		    (vl == 3 && l < 16384))
			continue;
		buf[p++] = 0x32;	/* field 6, length-delimited: "" */
		buf[p++] = 0;
		buf[p++] = 0x32;
		for (size_t v = l; v >= 0x80; v >>= 7)
			buf[p++] = (unsigned char)(v | 0x80);
		buf[p++] = (unsigned char)(l >> (7 * (vl - 1)));
		while (p < len)
			buf[p++] = fill();
		return;
	}
}

static unsigned char fill_a(void)
{
	return 'a';
}

static unsigned char fill_random(void)
{
	return (unsigned char)(' ' + rand() % 95);
}

/* The cost of one window of LEN bytes with these labels (sink.h). */
static size_t window_cost(size_t len)
{
	return AGENT_SINK_WINDOW_OVERHEAD + len + strlen("service_name") +
	       strlen("svc") + strlen("pid") + strlen("42");
}

TEST(agent_sink_drops_exactly_what_does_not_fit)
{
	static unsigned char pb[1000];
	struct agent_window w = { labels, 2, 1, 2, pb, sizeof(pb), NULL, false };
	struct agent_sink_stats st;
	struct agent_sink *s = NULL;
	char url[64];
	int port, fd = loopback_port(false, &port);

	make_pprof(pb, sizeof(pb), fill_a);
	if (!ASSERT_TRUE(fd >= 0))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct agent_sink_opts o = { .sz = sizeof(o), .kind = AGENT_SINK_PYROSCOPE,
				     .target = url, .queue_bytes = 3 * window_cost(sizeof(pb)),
				     .timeout_ms = 1000 };
	if (!ASSERT_OK(agent_sink__new(&o, &s)))
		goto out;
	/* Connections are refused: nothing leaves, whatever the thread does. */
	for (int i = 0; i < 7; i++)
		ASSERT_OK(agent_sink__submit(s, &w));
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.dropped, 4);
	ASSERT_EQ(st.queue_bytes, 3 * window_cost(sizeof(pb)));
	agent_sink__close(s, mono_ns() + 200000000ull);
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.delivered, 0);
	ASSERT_EQ(st.failed, 0);
	ASSERT_EQ(st.dropped, 4);
	ASSERT_EQ(st.unsent, 3);
	ASSERT_TRUE(!strncmp(agent_sink__name(s), "pyroscope http://127.0.0.1:", 27));
out:
	agent_sink__free(s);
	close(fd);
}

TEST(agent_sink_window_over_budget_dropped)
{
	static unsigned char pb[4096];
	struct agent_window w = { labels, 2, 1, 2, pb, sizeof(pb), NULL, false };
	struct agent_sink_stats st;
	struct agent_sink *s = NULL;
	char url[64];
	int port, fd = loopback_port(false, &port);

	make_pprof(pb, sizeof(pb), fill_a);
	if (!ASSERT_TRUE(fd >= 0))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct agent_sink_opts o = { .sz = sizeof(o), .kind = AGENT_SINK_OTLP,
				     .target = url, .queue_bytes = 4096 };
	if (!ASSERT_OK(agent_sink__new(&o, &s)))
		goto out;
	ASSERT_OK(agent_sink__submit(s, &w));
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.dropped, 1);
	ASSERT_EQ(st.queue_bytes, 0);
	agent_sink__close(s, mono_ns() + 100000000ull);
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.unsent, 0);
out:
	agent_sink__free(s);
	close(fd);
}

TEST(agent_sink_close_ends_at_deadline_when_backend_never_reads)
{
	static unsigned char pb[512];
	struct agent_window w = { labels, 2, 1, 2, pb, sizeof(pb), NULL, false };
	struct agent_sink_stats st;
	struct agent_sink *s = NULL;
	char url[64];
	int port, fd = loopback_port(true, &port);
	uint64_t t0, took;

	make_pprof(pb, sizeof(pb), fill_a);
	if (!ASSERT_TRUE(fd >= 0))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	/* A request's own limit (60 s) far beyond close()'s 300 ms. */
	struct agent_sink_opts o = { .sz = sizeof(o), .kind = AGENT_SINK_PYROSCOPE,
				     .target = url, .timeout_ms = 60000 };
	if (!ASSERT_OK(agent_sink__new(&o, &s)))
		goto out;
	ASSERT_OK(agent_sink__submit(s, &w));
	ASSERT_OK(agent_sink__submit(s, &w));
	t0 = mono_ns();
	agent_sink__close(s, t0 + 300000000ull);
	took = mono_ns() - t0;
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.delivered, 0);
	ASSERT_EQ(st.unsent, 2);
	/* Far below the request's 60 s: the deadline, not the timeout, ended it. */
	ASSERT_TRUE(took < 20000000000ull);
out:
	agent_sink__free(s);
	close(fd);
}

static int count_files(const char *dir, char names[][256], int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && n < max)
			snprintf(names[n++], 256, "%.200s", de->d_name);
	closedir(d);
	return n;
}

TEST(agent_sink_files_rotate_oldest_first)
{
	unsigned char pb[3000];
	struct agent_sink_stats st;
	struct agent_sink *s = NULL;
	char dir[600], names[16][256];
	void *gz;
	size_t gz_len;
	int n;

	/* Bytes that hardly compress: each file is about as large as this. */
	srand(7);
	make_pprof(pb, sizeof(pb), fill_random);
	if (!ASSERT_OK(sfp_gzip(pb, sizeof(pb), &gz, &gz_len)))
		return;
	free(gz);
	snprintf(dir, sizeof(dir), "%s/agent-files-%d", test_tmp_dir(), getpid());
	struct agent_sink_opts o = { .sz = sizeof(o), .kind = AGENT_SINK_FILES,
				     .target = dir, .max_disk = gz_len * 5 / 2 };
	if (!ASSERT_OK(agent_sink__new(&o, &s)))
		return;
	for (int i = 0; i < 5; i++) {
		struct agent_window w = { labels, 2,
					  1700000000000000000ull + i * 10000000000ull,
					  1700000000000000000ull + (i + 1) * 10000000000ull,
					  pb, sizeof(pb),
					  /* every other one off-CPU: rotation
					   * goes by time, not by prefix */
					  i & 1 ? "off_cpu" : NULL, false };
		ASSERT_OK(agent_sink__submit(s, &w));
	}
	agent_sink__close(s, mono_ns() + 60000000000ull);
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.delivered, 5);
	ASSERT_EQ(st.dropped, 0);
	ASSERT_EQ(st.unsent, 0);
	n = count_files(dir, names, 16);
	ASSERT_EQ(n, 2);
	/* The two newest windows: 4th and 5th (seq 3 and 4), by name. */
	for (int i = 0; i < n && i < 2; i++) {
		char path[1024];
		struct stat sb;

		ASSERT_TRUE((!strncmp(names[i], "off_cpu-", 8) &&
			     strstr(names[i], "-000003-svc.pb.gz")) ||
			    (!strncmp(names[i], "profile-", 8) &&
			     strstr(names[i], "-000004-svc.pb.gz")));
		snprintf(path, sizeof(path), "%.600s/%.200s", dir, names[i]);
		ASSERT_OK(stat(path, &sb));
		ASSERT_EQ((size_t)sb.st_size, gz_len);
		unlink(path);
	}
	rmdir(dir);
	agent_sink__free(s);
}

TEST(agent_sink_refuses_what_is_not_pprof)
{
	static unsigned char junk[64], good[100];
	struct agent_window w = { labels, 2, 1, 2, junk, sizeof(junk), NULL, false };
	struct agent_sink_stats st;
	struct agent_sink *s = NULL;
	char url[64];
	int port, fd = loopback_port(false, &port);

	if (!ASSERT_TRUE(fd >= 0))
		return;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	make_pprof(good, sizeof(good), fill_a);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct agent_sink_opts o = { .sz = sizeof(o), .kind = AGENT_SINK_PYROSCOPE,
				     .target = url, .timeout_ms = 1000 };
	if (!ASSERT_OK(agent_sink__new(&o, &s)))
		goto out;
	/* not queued, counted failed; a good one after it is queued */
	ASSERT_EQ(agent_sink__submit(s, &w), -EBADMSG);
	w.pprof_len = 0;
	ASSERT_EQ(agent_sink__submit(s, &w), -EBADMSG);
	w.pprof = good;
	w.pprof_len = sizeof(good);
	ASSERT_OK(agent_sink__submit(s, &w));
	agent_sink__stats(s, &st);
	ASSERT_EQ(st.failed, 2);
	ASSERT_EQ(st.queue_bytes, window_cost(sizeof(good)));
out:
	agent_sink__free(s);
	close(fd);
}

/* The wire-format pass knows each field's type from the schema
 * (proto/pprof.proto through protobuf-c's descriptors): a field sent with
 * another wire type is named, with its message and offset, nested ones
 * and the fields only the export writes (default_sample_type) too. */
TEST(agent_pprof_check_names_wrong_wire_types)
{
	static const struct {
		unsigned char pb[8];
		size_t len;
		const char *why;
	} bad[] = {
		/* period_type (11, a message) as a varint */
		{ { 0x58, 0x01 }, 2, "offset 0: Profile field 11 has wire type 0" },
		/* default_sample_type (14, an int64) as bytes */
		{ { 0x72, 0x00 }, 2, "offset 0: Profile field 14 has wire type 2" },
		/* a location whose is_folded (5, a bool) is bytes */
		{ { 0x22, 0x03, 0x2a, 0x01, 0x00 }, 5,
		  "offset 2: Location field 5 has wire type 2" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		ASSERT_EQ(agent_pprof_check(bad[i].pb, bad[i].len, why,
					    sizeof(why)), -EBADMSG);
		ASSERT_TRUE(!strncmp(why, bad[i].why, strlen(bad[i].why)));
	}
}
