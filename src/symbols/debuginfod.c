// SPDX-License-Identifier: MIT
/*
 * debuginfod: the last place a DSO's debug file is looked for, by
 * build-id, from the servers in $DEBUGINFOD_URLS (elfutils' client
 * library, which also owns the download cache, $DEBUGINFOD_CACHE_PATH,
 * and the per-transfer $DEBUGINFOD_TIMEOUT).
 *
 * libdebuginfod.so.1 is dlopen()ed on the first lookup rather than
 * linked, as elfutils' own libdwfl does: it drags in libcurl and a TLS
 * stack whose loading and global initialisation would be paid by every
 * sfprof run (record included) though most runs never ask a server, and
 * sfprof keeps working where the library is not installed.  Only its
 * header is needed at build time; the function pointers take their
 * types from it so a mismatch is a compile error.
 *
 * A profile may name hundreds of DSOs, so a dead or hanging server must
 * not cost one timeout per DSO: the first failure that is not a plain
 * "not found" (connection refused, timeout, ...) prints one note and
 * turns lookups off for the rest of the symbolizer's life, and all
 * lookups together get one time budget, enforced through the client's
 * progress callback (called at least once a second while it waits).
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/elf.h"
#include "symbols/internal.h"

#define DEFAULT_BUDGET_MS 30000u

struct sfp_debuginfod {
	bool tried_load;
	bool off;		/* failed once: no more lookups */
	bool cut;		/* the progress callback ran out of budget */
	uint64_t budget_ns;
	uint64_t spent_ns;	/* in finished lookups */
	uint64_t call_start;	/* of the lookup under way */
	unsigned int fetched, missed;

	void *lib;
	debuginfod_client *client;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
};

/*
 * The lookup under way on this thread, for the progress callback (the
 * client calls it synchronously from inside find_debuginfo).
 */
static __thread struct sfp_debuginfod *active;

static const char *urls(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u && *u ? u : NULL;
}

int sfp_debuginfod_new(int mode, uint32_t budget_ms,
		       struct sfp_debuginfod **out)
{
	struct sfp_debuginfod *d;

	*out = NULL;
	if (mode == SFP_DEBUGINFOD_OFF)
		return 0;
	if (mode != SFP_DEBUGINFOD_AUTO && mode != SFP_DEBUGINFOD_ON)
		return -EINVAL;
	/* elfutils' rule: no servers named, no lookups. */
	if (mode == SFP_DEBUGINFOD_AUTO && !urls())
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->budget_ns = (uint64_t)(budget_ms ? budget_ms : DEFAULT_BUDGET_MS) *
		       1000000u;
	*out = d;
	return 0;
}

void sfp_debuginfod_free(struct sfp_debuginfod **dp)
{
	struct sfp_debuginfod *d = *dp;

	if (!d)
		return;
	if (d->client)
		d->end(d->client);
	/*
	 * The library stays loaded: libcurl's global state does not
	 * survive being unloaded and reloaded (elfutils never closes it
	 * either).
	 */
	pr_debug("debuginfod: %u debug files fetched, %u not found, %.1f s",
		 d->fetched, d->missed, (double)d->spent_ns / 1e9);
	free(d);
	*dp = NULL;
}

/* The one line a run prints about debuginfod; then lookups stop. */
static void give_up(struct sfp_debuginfod *d, const char *why,
		    const char *hint)
{
	const char *u = urls();

	d->off = true;
	pr_warn("debuginfod%s%s%s: %s%s; not asked again in this run: files "
		"without local debug info keep raw addresses "
		"(--no-debuginfod skips it)",
		u ? " (" : "", u ? u : "", u ? ")" : "", why, hint);
}

static int progress(debuginfod_client *c, long a, long b)
{
	struct sfp_debuginfod *d = active;

	(void)c;
	(void)a;
	(void)b;
	if (!d || d->spent_ns + (sfp_mono_ns() - d->call_start) < d->budget_ns)
		return 0;
	d->cut = true;
	return 1;	/* abort the transfer */
}

/*
 * libdebuginfod (0.188) records a transfer aborted by the progress
 * callback as a miss: an empty "negative hit" file in its cache that
 * makes every lookup of that build-id fail at once for cache_miss_s
 * (10 minutes) -- silently, as a real 404 does.  A lookup we cut short
 * proved nothing, so remove the empty file it left, found where the
 * client keeps its cache (debuginfod-client-config(7)).
 */
static void forget_cut_lookup(const uint8_t *id, size_t len, uint64_t since)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CACHE_HOME");
	char dir[PATH_MAX], path[PATH_MAX], hex[2 * SFP_BUILD_ID_MAX + 1];
	struct timespec boot_now, real_now;
	struct stat st;
	int64_t since_real;
	size_t i;
	int n;

	if (env && *env)
		n = snprintf(dir, sizeof(dir), "%s", env);
	else if (home && *home &&
		 (snprintf(dir, sizeof(dir), "%s/.debuginfod_client_cache",
			   home),
		  !stat(dir, &st) && S_ISDIR(st.st_mode)))
		n = (int)strlen(dir);
	else if (xdg && *xdg)
		n = snprintf(dir, sizeof(dir), "%s/debuginfod_client", xdg);
	else if (home && *home)
		n = snprintf(dir, sizeof(dir), "%s/.cache/debuginfod_client",
			     home);
	else
		return;
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, hex);
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	/* Only an empty file made during our lookup (monotonic -> wall). */
	clock_gettime(CLOCK_MONOTONIC, &boot_now);
	clock_gettime(CLOCK_REALTIME, &real_now);
	since_real = (int64_t)real_now.tv_sec -
		     ((int64_t)boot_now.tv_sec - (int64_t)(since / 1000000000u)) - 1;
	if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_size ||
	    (int64_t)st.st_mtime < since_real)
		return;
	if (!unlink(path))
		pr_debug("debuginfod: removed the miss %s recorded for the "
			 "lookup cut short", path);
}

static bool load(struct sfp_debuginfod *d)
{
	d->tried_load = true;
	if (!urls()) {
		give_up(d, "DEBUGINFOD_URLS is not set, no server to ask", "");
		return false;
	}
	d->lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		give_up(d, "cannot load " DEBUGINFOD_SONAME,
			" (install libdebuginfod1)");
		return false;
	}
	d->begin = (__typeof__(d->begin))dlsym(d->lib, "debuginfod_begin");
	d->end = (__typeof__(d->end))dlsym(d->lib, "debuginfod_end");
	d->find_debuginfo = (__typeof__(d->find_debuginfo))
		dlsym(d->lib, "debuginfod_find_debuginfo");
	d->set_progressfn = (__typeof__(d->set_progressfn))
		dlsym(d->lib, "debuginfod_set_progressfn");
	if (!d->begin || !d->end || !d->find_debuginfo || !d->set_progressfn) {
		give_up(d, DEBUGINFOD_SONAME " lacks the client functions", "");
		return false;
	}
	d->client = d->begin();
	if (!d->client) {
		give_up(d, "the client did not start", "");
		return false;
	}
	/* Ours replaces the default one, which prints to stderr. */
	d->set_progressfn(d->client, progress);
	return true;
}

static bool same_build_id(const struct sfp_elf *e, const uint8_t *id,
			  size_t len)
{
	const uint8_t *fid;
	size_t flen;

	return !sfp_elf_build_id(e, &fid, &flen) && flen == len &&
	       !memcmp(fid, id, len);
}

int sfp_debuginfod_find_debuginfo(struct sfp_debuginfod *d,
				  const uint8_t *id, size_t len,
				  struct sfp_elf **out, char **out_path)
{
	char *path = NULL;
	uint64_t t;
	int fd, err;

	*out = NULL;
	*out_path = NULL;
	if (!d || d->off || len < 2 || len > SFP_BUILD_ID_MAX)
		return -ENOENT;
	if (!d->tried_load && !load(d))
		return -ENOENT;
	if (d->spent_ns >= d->budget_ns)
		return -ENOENT;
	d->cut = false;
	d->call_start = sfp_mono_ns();
	active = d;
	fd = d->find_debuginfo(d->client, id, (int)len, &path);
	active = NULL;
	t = sfp_mono_ns() - d->call_start;
	d->spent_ns += t;
	if (fd >= 0)
		close(fd);	/* reopened by path, through our ELF reader */
	if (d->cut || (fd < 0 && d->spent_ns >= d->budget_ns)) {
		char why[96];

		snprintf(why, sizeof(why),
			 "no answer within the %.1f s allowed per run",
			 (double)d->budget_ns / 1e9);
		if (d->cut)
			forget_cut_lookup(id, len, d->call_start);
		give_up(d, why, " (see --debuginfod-timeout)");
		free(path);
		return -ENOENT;
	}
	if (fd == -ENOENT) {
		d->missed++;
		pr_debug("debuginfod: no debug file for this build-id");
		return -ENOENT;
	}
	if (fd < 0) {
		give_up(d, sfp_strerror(fd), "");
		free(path);
		return -ENOENT;
	}
	if (!path)
		return -ENOENT;
	err = sfp_open_regular_elf(path, out);
	if (!err && !same_build_id(*out, id, len)) {
		/* A broken server or cache must not name our addresses. */
		pr_warn("%s: from debuginfod, but its build-id is not the one "
			"asked for; ignoring it", path);
		sfp_elf_close(out);
		err = -ENOENT;
	} else if (err) {
		pr_warn("%s: from debuginfod, unreadable: %s", path,
			sfp_strerror(err));
	}
	if (err) {
		free(path);
		return -ENOENT;
	}
	d->fetched++;
	pr_debug("debuginfod: %s (%.3f s)", path, (double)t / 1e9);
	*out_path = path;
	return 0;
}
