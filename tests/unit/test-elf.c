// SPDX-License-Identifier: MIT
/* ELF access against real binaries of this machine. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "elf/elf.h"
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
