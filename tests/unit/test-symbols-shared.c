// SPDX-License-Identifier: MIT
/*
 * Files at different paths with the same build-id (one image run by many
 * containers, each at its own root or its own path) share one symbol
 * table in the symbolizer (issue 35): the table is built once, counted
 * in tables_loaded, however many paths and processes ask for it, with or
 * without the build-id the caller knows; a file with another build-id
 * gets a table of its own.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sfprof/symbols.h>

#include "elf/elf.h"
#include "symbols/internal.h"
#include "profile-test.h"

static bool build_id_of(const char *path, uint8_t *id, size_t *len)
{
	struct sfp_elf *e = NULL;
	const uint8_t *fid;
	size_t flen;
	bool ok = false;

	if (sfp_elf_open(path, &e))
		return false;
	if (!sfp_elf_build_id(e, &fid, &flen) && flen && flen <= 20) {
		memcpy(id, fid, flen);
		*len = flen;
		ok = true;
	}
	sfp_elf_close(&e);
	return ok;
}

TEST(symbols_same_build_id_one_table)
{
	char a[512], b[512], c[512], other[512];
	uint8_t id[20], oid[20];
	size_t idlen = 0, oidlen = 0;
	struct sfp_symbolizer *s = NULL;
	struct sfp_symbolizer_dso *da = NULL, *db = NULL, *dc = NULL,
				  *dp = NULL, *dn = NULL, *dother = NULL;
	SFP_OPTS(sfp_symbolizer_opts, o, .no_debug_files = true);

	pt_tmp(a, sizeof(a), "symshare-a");
	pt_tmp(b, sizeof(b), "symshare-b");
	pt_tmp(c, sizeof(c), "symshare-c");
	pt_tmp(other, sizeof(other), "symshare-other");
	if (!ASSERT_TRUE(pt_sh("cp '%s/symprog' '%s' && cp '%s/symprog' '%s' && "
			       "cp '%s/symprog' '%s' && cp '%s/report-work' '%s'",
			       pt_progs(), a, pt_progs(), b, pt_progs(), c,
			       pt_progs(), other)) ||
	    !ASSERT_TRUE(build_id_of(a, id, &idlen)) ||
	    !ASSERT_TRUE(build_id_of(other, oid, &oidlen)) ||
	    !ASSERT_TRUE(idlen != oidlen || memcmp(id, oid, idlen)))
		return;
	o.no_cache = true;	/* a table read from the cache is a load too,
				 * but keep the count about sharing only */
	if (!ASSERT_OK(sfp_symbolizer__new(&o, &s)))
		return;
	/* three paths with the build-id, one of them twice in two pids,
	 * one without: one table */
	ASSERT_OK(sfp_symbolizer__get_dso(s, -1, a, id, idlen, &da));
	ASSERT_OK(sfp_symbolizer__get_dso(s, -1, b, id, idlen, &db));
	ASSERT_OK(sfp_symbolizer__get_dso(s, 4242, a, id, idlen, &dp));
	ASSERT_OK(sfp_symbolizer__get_dso(s, -1, c, NULL, 0, &dn));
	ASSERT_EQ(s->tables_loaded, (uint64_t)1);
	if (da && db && dp && dn) {
		ASSERT_GE(sfp_symbolizer_dso__num_symbols(da), 1);
		ASSERT_EQ(sfp_symbolizer_dso__num_symbols(db),
			  sfp_symbolizer_dso__num_symbols(da));
		ASSERT_EQ(sfp_symbolizer_dso__num_symbols(dn),
			  sfp_symbolizer_dso__num_symbols(da));
	}
	/* another build: its own table */
	ASSERT_OK(sfp_symbolizer__get_dso(s, -1, other, oid, oidlen, &dother));
	ASSERT_EQ(s->tables_loaded, (uint64_t)2);
	/* asked again: nothing more */
	ASSERT_OK(sfp_symbolizer__get_dso(s, -1, b, id, idlen, &dc));
	ASSERT_EQ(s->tables_loaded, (uint64_t)2);
	sfp_symbolizer__free(&s);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(other);
}
