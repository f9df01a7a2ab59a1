// SPDX-License-Identifier: MIT
/*
 * sfp_backtrace_watch(): a library dlopen()ed after sfp_backtrace_init()
 * gets its table from the watcher thread, with no call from the
 * application.  The library is compiled here, so it is certainly not
 * loaded yet (libgcc_s, say, already is under ASan).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"

#define MAX_FRAMES 64

static void *frames[MAX_FRAMES];
static int nframes;
static enum sfp_unwind_stop stop;

static __attribute__((noinline)) int in_callback(void)
{
	nframes = sfp_backtrace_stop(frames, MAX_FRAMES, &stop);
	return 1;
}

static const void *base_of(const void *addr)
{
	Dl_info di;

	return dladdr(addr, &di) ? di.dli_fbase : NULL;
}

/* A frame in the library followed by one in this program: walked through. */
static bool walked_through(const void *lib_base)
{
	const void *self = base_of((const void *)in_callback);

	for (int i = 0; i + 1 < nframes; i++)
		if (base_of(frames[i]) == lib_base &&
		    base_of(frames[i + 1]) == self)
			return true;
	return false;
}

static int build_lib(char *path, size_t len)
{
	char src[512], cmd[1536];
	FILE *f;

	snprintf(src, sizeof(src), "%s/watchlib-%d.c", test_tmp_dir(), getpid());
	snprintf(path, len, "%s/watchlib-%d.so", test_tmp_dir(), getpid());
	f = fopen(src, "w");
	if (!f)
		return -1;
	/* Not a tail call: the library's frame stays on the stack. */
	fputs("int watch_call(int (*f)(void)) { return f() + 1; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gcc -O2 -fomit-frame-pointer -shared -fPIC -o %s %s", path,
		 src);
	return system(cmd) == 0 ? 0 : -1;
}

TEST(backtrace_watch_loads_dlopened_tables)
{
	char path[512];
	void *h;
	int (*call)(int (*)(void));
	const void *lib_base;
	bool ok = false;

	if (build_lib(path, sizeof(path))) {
		test_skip("cannot build a shared library with gcc");
		return;
	}
	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	h = dlopen(path, RTLD_NOW);
	if (!ASSERT_NOT_NULL(h))
		return;
	call = (int (*)(int (*)(void)))(uintptr_t)dlsym(h, "watch_call");
	if (!ASSERT_NOT_NULL(call))
		goto out;
	lib_base = base_of((const void *)(uintptr_t)call);

	/* Nothing refreshed yet: the walk stops at the unknown library. */
	ASSERT_EQ(call(in_callback), 2);
	ASSERT_FALSE(walked_through(lib_base));
	ASSERT_EQ(stop, SFP_STOP_BAD_RA);

	if (!ASSERT_OK(sfp_backtrace_watch(5)))
		goto out;
	for (int i = 0; i < 400 && !ok; i++) {	/* up to ~4 s under load */
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		call(in_callback);
		ok = walked_through(lib_base);
		if (!ok)
			nanosleep(&ts, NULL);
	}
	ASSERT_TRUE(ok);
	ASSERT_NE(stop, SFP_STOP_BAD_RA);
	ASSERT_OK(sfp_backtrace_watch(0));
	ASSERT_OK(sfp_backtrace_watch(0));	/* stopping twice is harmless */
out:
	sfp_backtrace_fini();
	dlclose(h);
	unlink(path);
}
