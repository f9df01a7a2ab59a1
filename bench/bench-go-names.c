// SPDX-License-Identifier: MIT
/*
 * Go names without symbols: Debian's Go compiler (stripped, named only
 * by its function table, .gopclntab) symbolized by sfprof from a cold
 * start (the table loaded, no symbol cache), from the symbol cache, and
 * by Go's own `addr2line` (the tool behind `go tool addr2line`, run
 * directly, no `go` launcher) on the same 20,000 addresses in one batch
 * on stdin.  addr2line also resolves file:line; sfprof names only.
 * Each side is timed 5 times, medians printed with their ratio; the
 * names are compared (all must agree).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "elf/elf.h"
#include "symbols/symtab.h"

#define COMPILE "/usr/lib/go-1.19/pkg/tool/linux_amd64/compile"
#define ADDR2LINE "/usr/lib/go-1.19/pkg/tool/linux_amd64/addr2line"
#define NADDR 20000
#define ROUNDS 5

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

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* One sfprof pass over addrs; names[i] kept when names != NULL. */
static int sfprof_pass(const uint64_t *addrs, char **names, const char *cache)
{
	struct sfp_symbolizer *s = NULL;
	size_t i;
	int named = 0;
	SFP_OPTS(sfp_symbolizer_opts, o, .no_cache = !cache,
		 .cache_dir = cache);

	if (sfp_symbolizer__new(&o, &s))
		return -1;
	for (i = 0; i < NADDR; i++) {
		struct sfp_symbol sym;

		if (sfp_symbolizer__dso(s, COMPILE, NULL, 0, addrs[i], &sym))
			continue;
		named++;
		if (names)
			names[i] = strdup(sym.name);
	}
	sfp_symbolizer__free(&s);
	return named;
}

int main(void)
{
	struct sfp_symtab t = { 0 };
	struct sfp_elf *e = NULL;
	uint64_t *addrs = calloc(NADDR, sizeof(*addrs));
	char **names = calloc(NADDR, sizeof(*names));
	double cold[ROUNDS], warm[ROUNDS], peer[ROUNDS], load[ROUNDS];
	char in[] = "/tmp/sfp-bench-go-XXXXXX", cache[] = "/tmp/sfp-bench-goc-XXXXXX";
	char cmd[512], line[4096];
	size_t i, differ = 0;
	int r, fd, named = 0;
	FILE *f;

	if (!addrs || !names || access(COMPILE, R_OK) ||
	    access(ADDR2LINE, X_OK)) {
		fprintf(stderr, "needs %s and %s (golang-go)\n", COMPILE,
			ADDR2LINE);
		return 1;
	}
	/* addresses spread over the compiler's functions */
	if (sfp_elf_open(COMPILE, &e) || sfp_gopclntab_load(&t, e, NULL) <= 0)
		return 1;
	sfp_symtab_finish(&t);
	for (i = 0; i < NADDR; i++) {
		const struct sfp_sym *s = &t.syms[rnd() % t.nr];

		addrs[i] = s->start + rnd() % s->size;
	}
	fd = mkstemp(in);
	if (fd < 0 || !(f = fdopen(fd, "w")) || !mkdtemp(cache))
		return 1;
	for (i = 0; i < NADDR; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	/* the table alone: open and parse (what a cold lookup adds) */
	for (r = 0; r < ROUNDS; r++) {
		struct sfp_symtab u = { 0 };
		struct sfp_elf *e2 = NULL;
		double t0 = now();

		if (sfp_elf_open(COMPILE, &e2) ||
		    sfp_gopclntab_load(&u, e2, NULL) <= 0)
			return 1;
		sfp_symtab_finish(&u);
		load[r] = now() - t0;
		sfp_symtab_free(&u);
		sfp_elf_close(&e2);
	}
	for (r = 0; r < ROUNDS; r++) {
		double t0 = now();

		named = sfprof_pass(addrs, r ? NULL : names, NULL);
		cold[r] = now() - t0;
		t0 = now();
		(void)sfprof_pass(addrs, NULL, cache);	/* first fills it */
		warm[r] = now() - t0;
		snprintf(cmd, sizeof(cmd), "%s %s < %s > /dev/null", ADDR2LINE,
			 COMPILE, in);
		t0 = now();
		if (system(cmd))
			return 1;
		peer[r] = now() - t0;
	}
	/* the names against addr2line's */
	snprintf(cmd, sizeof(cmd), "%s %s < %s", ADDR2LINE, COMPILE, in);
	f = popen(cmd, "r");
	for (i = 0; f && i < NADDR; i++) {
		if (!fgets(line, sizeof(line), f))
			break;
		line[strcspn(line, "\n")] = 0;
		differ += !names[i] || strcmp(names[i], line);
		if (!fgets(line, sizeof(line), f))
			break;
	}
	if (f)
		pclose(f);
	printf("Go compiler (%zu functions), %d addresses: sfprof named %d, %zu differ from addr2line\n",
	       t.nr, NADDR, named, differ + (NADDR - i));
	printf("  table load (open + parse + sort) median %.1f ms\n",
	       median(load, ROUNDS) * 1e3);
	printf("  sfprof cold (load + lookups)     median %.1f ms\n",
	       median(cold, ROUNDS) * 1e3);
	printf("  sfprof from the symbol cache     median %.1f ms (first round fills it)\n",
	       median(warm + 1, ROUNDS - 1) * 1e3);
	printf("  Go addr2line (names + file:line) median %.1f ms\n",
	       median(peer, ROUNDS) * 1e3);
	printf("  ratio addr2line / sfprof cold: %.1fx\n",
	       median(peer, ROUNDS) / median(cold, ROUNDS));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", in, cache);
	(void)system(cmd);
	sfp_symtab_free(&t);
	sfp_elf_close(&e);
	for (i = 0; i < NADDR; i++)
		free(names[i]);
	free(names);
	free(addrs);
	return differ ? 1 : 0;
}
