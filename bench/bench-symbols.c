// SPDX-License-Identifier: MIT
/*
 * Symbolization speed: 100k addresses drawn from real DSOs of this
 * machine (libc, libstdc++, libm) and the running kernel, symbolized by
 * sfprof from a cold start (loading included), then the user-space ones by
 * binutils `addr2line -f -e DSO` (and elfutils `eu-addr2line`), each run
 * once per DSO with the addresses batched on stdin.  addr2line also
 * resolves file:line, so sfprof is timed both for names only and for names
 * plus line and inline chain (opts.srclines / sfp_symbolizer_dso__inlines).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#define NADDR 100000

struct dso_in {
	const char *path;
	unsigned int share;	/* percent of the addresses */
	uint64_t *lo, *sz;	/* function ranges from readelf */
	size_t nr;
	uint64_t *addrs;
	size_t naddrs;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* Sized FUNC symbols of the file (readelf, all tables). */
static void read_funcs(struct dso_in *d)
{
	char cmd[512], line[1024];
	size_t cap = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -W -s '%s' 2>/dev/null", d->path);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v, sz;
		char type[32], ndx[32];

		if (sscanf(line, " %*u: %llx %llu %31s %*s %*s %31s", &v, &sz, type,
			   ndx) != 4 || strcmp(type, "FUNC") ||
		    !strcmp(ndx, "UND") || !v || !sz)
			continue;
		if (d->nr == cap) {
			cap = cap ? cap * 2 : 1024;
			d->lo = realloc(d->lo, cap * sizeof(*d->lo));
			d->sz = realloc(d->sz, cap * sizeof(*d->sz));
		}
		d->lo[d->nr] = v;
		d->sz[d->nr] = sz;
		d->nr++;
	}
	pclose(f);
}

/* Text symbols of kallsyms, for kernel addresses. */
static size_t read_kallsyms(uint64_t **out)
{
	char line[512];
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t;

		if (sscanf(line, "%llx %c", &a, &t) != 2 || !a ||
		    (t != 't' && t != 'T') || strchr(line, '['))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = a;
	}
	fclose(f);
	*out = v;
	return n;
}

/* Run TOOL over d's addresses; seconds, or -1 when it failed. */
static double run_peer(const char *tool, const struct dso_in *d,
		       size_t *answers)
{
	char in[] = "/tmp/bench-symbols-XXXXXX";
	char cmd[1024], line[4096];
	int fd = mkstemp(in);
	FILE *f;
	double t0;

	*answers = 0;
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	for (size_t i = 0; i < d->naddrs; i++)
		fprintf(f, "%#" PRIx64 "\n", d->addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -f -e '%s' < '%s'", tool, d->path, in);
	t0 = now();
	f = popen(cmd, "r");
	if (!f) {
		unlink(in);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		(*answers)++;
	t0 = pclose(f) ? -1 : now() - t0;
	unlink(in);
	*answers /= 2;	/* function line + file:line line */
	return t0;
}

int main(void)
{
	struct dso_in dsos[] = {
		{ .path = "/lib/x86_64-linux-gnu/libc.so.6", .share = 35 },
		{ .path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", .share = 25 },
		{ .path = "/lib/x86_64-linux-gnu/libm.so.6", .share = 10 },
	};
	const size_t ndsos = sizeof(dsos) / sizeof(dsos[0]);
	uint64_t *ksyms = NULL, *kaddrs;
	size_t nk = read_kallsyms(&ksyms), nkaddr = 0, user = 0;
	double t_names, t_lines, t_peer = 0, t_eu = 0;
	size_t found = 0, found_lines = 0, peer_answers = 0;
	bool have_eu = system("command -v eu-addr2line >/dev/null 2>&1") == 0;
	int pass;

	if (!nk) {
		dsos[0].share += 30;	/* kallsyms hidden: user space only */
	}
	for (size_t i = 0; i < ndsos; i++) {
		struct dso_in *d = &dsos[i];

		read_funcs(d);
		if (!d->nr) {
			fprintf(stderr, "bench-symbols: no functions in %s\n",
				d->path);
			return 2;
		}
		d->naddrs = (size_t)NADDR * d->share / 100;
		d->addrs = malloc(d->naddrs * sizeof(*d->addrs));
		for (size_t k = 0; k < d->naddrs; k++) {
			size_t s = rnd() % d->nr;

			d->addrs[k] = d->lo[s] + rnd() % d->sz[s];
		}
		user += d->naddrs;
	}
	nkaddr = NADDR - user;
	kaddrs = malloc((nkaddr ? nkaddr : 1) * sizeof(*kaddrs));
	for (size_t k = 0; k < nkaddr && nk > 1; k++) {
		size_t s = rnd() % (nk - 1);
		uint64_t span = ksyms[s + 1] > ksyms[s] ? ksyms[s + 1] - ksyms[s] : 1;

		kaddrs[k] = ksyms[s] + rnd() % (span > 4096 ? 4096 : span);
	}

	/* Pass 0: names only; pass 1: names + line + inline chain. */
	for (pass = 0; pass < 2; pass++) {
		struct sfp_symbolizer *s = NULL;
		SFP_OPTS(sfp_symbolizer_opts, o, .srclines = pass == 1);
		size_t ok = 0;
		double t0 = now();

		if (sfp_symbolizer__new(&o, &s))
			return 2;
		/* Interleaved like samples of a profile, not DSO by DSO. */
		for (size_t k = 0, di[3] = { 0 }, ki = 0; k < NADDR; k++) {
			struct sfp_symbol sym;
			size_t which = k % 10;
			struct dso_in *d = NULL;

			if (which < 3 && ki < nkaddr) {
				ok += !sfp_symbolizer__kernel(s, kaddrs[ki++], &sym);
				continue;
			}
			for (size_t j = 0; j < ndsos; j++) {
				size_t jj = (k + j) % ndsos;

				if (di[jj] < dsos[jj].naddrs) {
					d = &dsos[jj];
					break;
				}
			}
			if (!d)
				continue;
			{
				size_t jj = (size_t)(d - dsos);
				uint64_t a = d->addrs[di[jj]++];

				if (pass == 1) {
					struct sfp_symbolizer_dso *h;
					struct sfp_inline_frame fr[8];

					if (!sfp_symbolizer__get_dso(s, 0, d->path,
								     NULL, 0, &h) &&
					    !sfp_symbolizer_dso__find(h, a, &sym)) {
						ok++;
						if (sfp_symbolizer_dso__inlines(h, a, fr,
										8) > 0)
							found_lines++;
					}
				} else {
					ok += !sfp_symbolizer__dso(s, d->path, NULL,
								   0, a, &sym);
				}
			}
		}
		if (pass == 0) {
			t_names = now() - t0;
			found = ok;
		} else {
			t_lines = now() - t0;
		}
		sfp_symbolizer__free(&s);
	}

	for (size_t i = 0; i < ndsos; i++) {
		size_t ans;
		double t = run_peer("addr2line", &dsos[i], &ans);

		if (t < 0) {
			fprintf(stderr, "bench-symbols: addr2line failed on %s\n",
				dsos[i].path);
			return 2;
		}
		t_peer += t;
		peer_answers += ans;
		if (have_eu) {
			t = run_peer("eu-addr2line", &dsos[i], &ans);
			t_eu = t < 0 || t_eu < 0 ? -1 : t_eu + t;
		}
	}

	printf("bench-symbols: %d addresses (%zu user in %zu DSOs, %zu kernel), "
	       "cold start incl. loading\n", NADDR, user, ndsos, nkaddr);
	printf("  sfprof names only          %8.3f s  (%zu resolved)\n", t_names,
	       found);
	printf("  sfprof names+lines+inlines %8.3f s  (%zu with lines)\n",
	       t_lines, found_lines);
	printf("  addr2line -f (user only)   %8.3f s  (%zu answers)\n", t_peer,
	       peer_answers);
	if (have_eu && t_eu > 0)
		printf("  eu-addr2line -f (user)     %8.3f s\n", t_eu);
	printf("  ratio addr2line / sfprof(names+lines): %.1fx\n",
	       t_peer / t_lines);
	printf("  ratio addr2line / sfprof(names):       %.1fx\n",
	       t_peer / t_names);
	if (have_eu && t_eu > 0)
		printf("  ratio eu-addr2line / sfprof(names+lines): %.1fx\n",
		       t_eu / t_lines);
	for (size_t i = 0; i < ndsos; i++) {
		free(dsos[i].lo);
		free(dsos[i].sz);
		free(dsos[i].addrs);
	}
	free(ksyms);
	free(kaddrs);
	return t_names < 1.0 ? 0 : 1;
}
