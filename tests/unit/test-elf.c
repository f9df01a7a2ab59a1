// SPDX-License-Identifier: MIT
/* ELF access against real binaries of this machine. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "elf/needed.h"
#include "test.h"

static const char *self_path(void)
{
	static char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = 0;
	return buf;
}

TEST(elf_open_self)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section sec;
	const uint8_t *d, *id;
	size_t n, idlen;

	if (!ASSERT_OK(sfp_elf_open(self_path(), &e)))
		return;
#if defined(__aarch64__)
	ASSERT_EQ(sfp_elf_machine(e), EM_AARCH64);
#else
	ASSERT_EQ(sfp_elf_machine(e), EM_X86_64);
#endif
	ASSERT_TRUE(sfp_elf_is_64(e));
	if (ASSERT_OK(sfp_elf_find_section(e, ".eh_frame", SHT_PROGBITS, &sec))) {
		ASSERT_OK(sfp_elf_section_data(e, &sec, &d, &n));
		ASSERT_EQ(n, sec.size);
		/* The same bytes are reachable through the load segments. */
		const uint8_t *v;
		if (ASSERT_OK(sfp_elf_vaddr_data(e, sec.addr, n, &v)))
			ASSERT_TRUE(!memcmp(v, d, n));
	}
	ASSERT_ERR(sfp_elf_find_section(e, ".no-such", 0, &sec), -ENOENT);
	/* gcc on Debian links with --build-id. */
	if (ASSERT_OK(sfp_elf_build_id(e, &id, &idlen)))
		ASSERT_EQ(idlen, 20);
	sfp_elf_close(&e);
	ASSERT_TRUE(e == NULL);
	sfp_elf_close(&e);	/* idempotent */
}

#if defined(__x86_64__)	/* (qemu-user, the arm64 tier, ignores the advice) */
/* Is the page holding p mapped into this process now (pagemap's
 * "present" bit)?  -1: pagemap not readable. */
static int page_present(const void *p)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t e = 0;
	FILE *f = fopen("/proc/self/pagemap", "rb");
	int ok;

	if (!f)
		return -1;
	ok = !fseeko(f, (off_t)((uintptr_t)p / (uintptr_t)psz * 8), SEEK_SET) &&
	     fread(&e, sizeof(e), 1, f) == 1;
	fclose(f);
	return ok ? (int)(e >> 63) : -1;
}
#endif

/*
 * The agent gives back the pages of files it read (libLLVM's symbols and
 * relocations stayed resident, 12 MB): the bytes must read the same
 * after, from the page cache, and only a file's own mapping is advised.
 */
TEST(elf_release_pages_keeps_bytes)
{
	struct sfp_elf *e = NULL, *m = NULL;
	struct sfp_elf_section sec;
	const uint8_t *d, *img;
	size_t n, imgsz;
	uint8_t *copy;

	if (!ASSERT_OK(sfp_elf_open(self_path(), &e)))
		return;
	if (!ASSERT_OK(sfp_elf_find_section(e, ".eh_frame", SHT_PROGBITS,
					    &sec)) ||
	    !ASSERT_OK(sfp_elf_section_data(e, &sec, &d, &n)) ||
	    !ASSERT_TRUE((copy = malloc(n)) != NULL))
		goto out;
	memcpy(copy, d, n);		/* touched: resident */
#if defined(__x86_64__)	/* (qemu-user, the arm64 tier, ignores the advice) */
	if (page_present(d) == 1) {
		ASSERT_TRUE(sfp_elf_release_pages(e) >= n);
		ASSERT_EQ(page_present(d), 0);
	}
#endif
	sfp_elf_release_pages(e);
	ASSERT_TRUE(!memcmp(copy, d, n));	/* read again, the same */
	/* an image of our own in memory is never advised away */
	img = sfp_elf_image(e, &imgsz);
	if (ASSERT_OK(sfp_elf_open_mem(img, imgsz, "copy", &m)) &&
	    ASSERT_OK(sfp_elf_find_section(m, ".eh_frame", SHT_PROGBITS,
					   &sec)) &&
	    ASSERT_OK(sfp_elf_section_data(m, &sec, &d, &n))) {
		ASSERT_EQ(sfp_elf_release_pages(m), 0);
		ASSERT_TRUE(!memcmp(copy, d, n));
	}
	free(copy);
out:
	sfp_elf_close(&m);
	sfp_elf_close(&e);
}

TEST(elf_reject_non_elf)
{
	struct sfp_elf *e = NULL;
	const char junk[] = "#!/bin/sh\necho not elf\n";

	ASSERT_ERR(sfp_elf_open_mem(junk, sizeof(junk), "junk", &e), -ENOEXEC);
	ASSERT_TRUE(e == NULL);
	ASSERT_ERR(sfp_elf_open("/nonexistent/file", &e), -ENOENT);
}

TEST(elf_truncated_image)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section sec;
	const uint8_t *img, *d;
	size_t size, n;
	FILE *f = fopen(self_path(), "rb");
	static uint8_t buf[1 << 16];

	if (!ASSERT_NOT_NULL(f))
		return;
	size = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* Section headers live at the end: a truncated copy must not crash. */
	int err = sfp_elf_open_mem(buf, size, "truncated", &e);
	if (!err) {
		img = sfp_elf_image(e, &n);
		ASSERT_NOT_NULL(img);
		for (size_t i = 0; i < sfp_elf_num_sections(e); i++)
			if (!sfp_elf_section(e, i, &sec))
				(void)sfp_elf_section_data(e, &sec, &d, &n);
	}
	sfp_elf_close(&e);
}

/* A sorted set of real paths, for comparing library lists. */
struct pathset {
	char *p[256];
	size_t n;
};

static void pathset_add(struct pathset *s, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	if (!realpath(path, real) || s->n == 256)
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->p[i], real))
			return;
	s->p[s->n++] = strdup(real);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void pathset_free(struct pathset *s)
{
	while (s->n)
		free(s->p[--s->n]);
}

static int add_needed(void *ctx, const char *path)
{
	pathset_add(ctx, path);
	return 0;
}

/*
 * The DT_NEEDED closure against glibc's ldd on real programs of this
 * machine: the same libraries, the dynamic loader included (libc needs
 * it), the vDSO (no file) aside.
 */
TEST(elf_needed_closure_matches_ldd)
{
	const char *progs[] = { self_path(), "/bin/ls", "/usr/bin/gdb",
				"/usr/bin/perf" };
	size_t k, i, compared = 0;

	for (k = 0; k < sizeof(progs) / sizeof(progs[0]); k++) {
		struct pathset ours = { .n = 0 }, ldd = { .n = 0 };
		char cmd[PATH_MAX + 64], line[PATH_MAX + 128];
		FILE *f;

		if (access(progs[k], R_OK))
			continue;
		snprintf(cmd, sizeof(cmd), "ldd '%s' 2>/dev/null", progs[k]);
		f = popen(cmd, "r");
		if (!ASSERT_NOT_NULL(f))
			return;
		while (fgets(line, sizeof(line), f)) {
			/* "\tname => /path (0x...)" or "\t/path (0x...)" */
			char *arrow = strstr(line, "=> "), *p, *end;

			p = arrow ? arrow + 3 : line + strspn(line, " \t");
			if (*p != '/')
				continue;
			end = strstr(p, " (");
			if (end)
				*end = 0;
			pathset_add(&ldd, p);
		}
		pclose(f);
		if (!ldd.n) {
			/* an emulated machine's program: this ldd cannot
			 * run its loader */
			pathset_free(&ldd);
			continue;
		}
		ASSERT_OK(sfp_elf_needed_closure(progs[k], 64, add_needed,
						 &ours));
		qsort(ours.p, ours.n, sizeof(ours.p[0]), cmp_str);
		qsort(ldd.p, ldd.n, sizeof(ldd.p[0]), cmp_str);
		if (!ASSERT_EQ(ours.n, ldd.n) && ours.n + ldd.n < 64) {
			for (i = 0; i < ours.n; i++)
				fprintf(stderr, "  ours: %s\n", ours.p[i]);
			for (i = 0; i < ldd.n; i++)
				fprintf(stderr, "  ldd:  %s\n", ldd.p[i]);
		} else {
			for (i = 0; i < ours.n; i++)
				ASSERT_STREQ(ours.p[i], ldd.p[i]);
		}
		compared++;
		pathset_free(&ours);
		pathset_free(&ldd);
	}
	if (!compared)
		test_skip("ldd lists no library of any program here");
	/* not an ELF file: an error, no call */
	ASSERT_ERR(sfp_elf_needed_closure("/proc/self/status", 64, add_needed,
					  NULL), -ENOEXEC);
}
