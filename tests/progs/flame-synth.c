// SPDX-License-Identifier: MIT
/*
 * Writes a large synthetic perf.data for the flame graph's scaling test:
 *
 *   flame-synth OUT.data NSAMPLES [SEED]
 *
 * One process ("synth", pid 4242) whose only mapping is this machine's
 * libc text, taken from /proc/self/maps, so that every address symbolizes
 * to a real libc function.  Each sample's user callchain (inline form) is
 * a fixed root address plus 6-13 random libc addresses: nearly every
 * sample is a distinct stack, which is what the viewer must cope with.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/perf.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int put(struct sfp_perf_writer *w, void *rec, size_t size)
{
	int err = sfp_perf_writer__write(w, rec, size);

	if (err)
		fprintf(stderr, "flame-synth: write: %s\n", strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	const char *cmd[] = { "synth", "--large" };
	SFP_OPTS(sfp_perf_writer_opts, wo, .hostname = "synthetic",
		 .cmdline = cmd, .nr_cmdline = 2);
	struct sfp_perf_attr a = { 0 };
	struct sfp_perf_writer *w = NULL;
	uint64_t start = 0, end = 0, pgoff = 0, ids[] = { 1 }, ips[16];
	unsigned long n, i;
	char line[4096], path[4096] = "", perms[8];
	uint8_t buf[4096];
	FILE *maps;
	size_t len;

	if (argc < 3) {
		fprintf(stderr, "usage: flame-synth OUT.data NSAMPLES [SEED]\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		rng ^= strtoull(argv[3], NULL, 0);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		uint64_t s, e, off;
		char p[4096];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s",
			   &s, &e, perms, &off, p) == 5 &&
		    strstr(p, "/libc.so") && perms[2] == 'x') {
			start = s, end = e, pgoff = off;
			strcpy(path, p);
		}
	}
	if (maps)
		fclose(maps);
	if (!*path) {
		fprintf(stderr, "flame-synth: no libc text in /proc/self/maps\n");
		return 1;
	}

	a.type = 1;	/* software: cpu-clock */
	a.sample_period = 1000000;
	a.sample_type = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_TID |
			SFP_PERF_SAMPLE_TIME | SFP_PERF_SAMPLE_CPU |
			SFP_PERF_SAMPLE_PERIOD | SFP_PERF_SAMPLE_CALLCHAIN;
	a.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL | SFP_PERF_ATTR_FLAG_MMAP |
		  SFP_PERF_ATTR_FLAG_MMAP2 | SFP_PERF_ATTR_FLAG_COMM;
	if (sfp_perf_writer__open(argv[1], &wo, &w) ||
	    sfp_perf_writer__add_evsel(w, &a, ids, 1, "cpu-clock") < 0) {
		fprintf(stderr, "flame-synth: cannot write %s\n", argv[1]);
		return 1;
	}

	/* COMM: header, pid, tid, "synth\0" padded, sample_id (pid tid time cpu) */
	{
		struct sfp_perf_sample id = { .pid = 4242, .tid = 4242, .time = 1 };
		uint32_t hdr[2] = { SFP_PERF_RECORD_COMM, 0 }, pt[2] = { 4242, 4242 };
		int m;

		memset(buf, 0, sizeof(buf));
		memcpy(buf + 8, pt, 8);
		memcpy(buf + 16, "synth", 6);
		len = 24;
		m = sfp_perf_write_sample_id(&a, &id, buf + len, sizeof(buf) - len);
		if (m < 0)
			return 1;
		len += (size_t)m;
		hdr[1] = (uint32_t)len << 16;	/* misc 0, size */
		memcpy(buf, hdr, 8);
		if (put(w, buf, len))
			return 1;
	}
	/* MMAP2: pid tid start len pgoff maj min ino ino_gen prot flags name */
	{
		struct sfp_perf_sample id = { .pid = 4242, .tid = 4242, .time = 2 };
		uint32_t v32[2] = { 4242, 4242 };
		uint64_t v64[3] = { start, end - start, pgoff };
		uint32_t dev[2] = { 0, 0 }, prot[2] = { 5, 2 };
		uint64_t ino[2] = { 0, 0 };
		uint32_t type = SFP_PERF_RECORD_MMAP2;
		uint16_t misc = SFP_PERF_MISC_USER, sz;
		size_t nl = strlen(path) + 1;
		int m;

		memset(buf, 0, sizeof(buf));
		memcpy(buf + 8, v32, 8);
		memcpy(buf + 16, v64, 24);
		memcpy(buf + 40, dev, 8);
		memcpy(buf + 48, ino, 16);
		memcpy(buf + 64, prot, 8);
		memcpy(buf + 72, path, nl);
		len = 72 + ((nl + 7) & ~(size_t)7);
		m = sfp_perf_write_sample_id(&a, &id, buf + len, sizeof(buf) - len);
		if (m < 0)
			return 1;
		len += (size_t)m;
		sz = (uint16_t)len;
		memcpy(buf, &type, 4);
		memcpy(buf + 4, &misc, 2);
		memcpy(buf + 6, &sz, 2);
		if (put(w, buf, len))
			return 1;
	}

	for (i = 0; i < n; i++) {
		struct sfp_perf_sample s = { 0 };
		size_t d = 6 + rnd() % 8, k;
		int m;

		ips[0] = SFP_PERF_CONTEXT_USER;
		for (k = 1; k < d; k++)
			ips[k] = start + rnd() % (end - start);
		ips[d] = start + 0x40;	/* the same outermost frame */
		s.ip = ips[1];
		s.pid = s.tid = 4242;
		s.time = 1000 + (uint64_t)i * 1000000;
		s.period = 1000000;
		s.ips = ips;
		s.nr_ips = d + 1;
		m = sfp_perf_write_sample(&a, SFP_PERF_MISC_USER, &s, buf, sizeof(buf));
		if (m < 0 || put(w, buf, (size_t)m))
			return 1;
	}
	if (sfp_perf_writer__close(&w)) {
		fprintf(stderr, "flame-synth: cannot finish %s\n", argv[1]);
		return 1;
	}
	return 0;
}
