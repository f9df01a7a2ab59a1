// SPDX-License-Identifier: MIT
/*
 * The symbolizer through the shared library: every public function must
 * be exported (this binary does not link otherwise) and behave.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/symbols.h>

#include "test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

TEST(api_symbols_exports)
{
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *d;
	struct sfp_symbol sym;
	struct sfp_inline_frame fr[4];
	uint64_t va;
	char *dm;

	if (!ASSERT_OK(sfp_symbolizer__new(NULL, &s)))
		return;
	if (ASSERT_OK(sfp_symbolizer__get_dso(s, 0, LIBC, NULL, 0, &d))) {
		ASSERT_NOT_NULL(sfp_symbolizer_dso__path(d));
		ASSERT_NOT_NULL(sfp_symbolizer_dso__debug_path(d));
		ASSERT_GE(sfp_symbolizer_dso__num_symbols(d), 1000);
		ASSERT_ERR(sfp_symbolizer_dso__find(d, 0, &sym), -ENOENT);
		/* pgoff 0 mapped at 0x10000: vaddr = addr - 0x10000. */
		if (ASSERT_OK(sfp_symbolizer_dso__vaddr(d, 0x10000, 0, 0x10010,
							&va)))
			ASSERT_EQ(va, 0x10);
		(void)sfp_symbolizer_dso__inlines(d, va, fr, 4);
	}
	ASSERT_ERR(sfp_symbolizer__dso(s, "/nonexistent", NULL, 0, 0, &sym),
		   -ENOENT);
	(void)sfp_symbolizer__kernel(s, 0, &sym);
	ASSERT_ERR(sfp_symbolizer__jit(s, 1 << 30, 0, &sym), -ENOENT);
	dm = sfp_demangle("_ZN3foo3barEv");
	if (ASSERT_NOT_NULL(dm))
		ASSERT_STREQ(dm, "foo::bar()");
	free(dm);
	dm = sfp_demangle_no_params("_ZN3foo3barEi");
	if (ASSERT_NOT_NULL(dm))
		ASSERT_STREQ(dm, "foo::bar");
	free(dm);
	/* a PLT stub's synthetic name keeps its "@plt", as perf prints it */
	dm = sfp_demangle_no_params("_ZNSt14error_categoryD2Ev@plt");
	if (ASSERT_NOT_NULL(dm))
		ASSERT_STREQ(dm, "std::error_category::~error_category@plt");
	free(dm);
	dm = sfp_demangle("_ZN3foo3barEi@plt");
	if (ASSERT_NOT_NULL(dm))
		ASSERT_STREQ(dm, "foo::bar(int)@plt");
	free(dm);
	sfp_symbolizer__free(&s);
	ASSERT_TRUE(s == NULL);
}
