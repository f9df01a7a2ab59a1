// SPDX-License-Identifier: MIT
/*
 * The SFrame tables of bpf-defer as the BPF side sees them: libc's table
 * converted into the compact FDE/FRE arrays, looked up with the same
 * binary searches the BPF walk does (re-done here in C over the arrays),
 * must give the rows sfp_sframe__find() gives; tables that do not fit are
 * evicted least recently used; a mere mapping (prefetch) never evicts,
 * and the agent's eviction budget keeps an evicted table out.  The
 * module map is a real BPF hash map
 * (needs root); the arrays are plain memory here, as they are the mmap of
 * BPF arrays in a recording.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/defer-shared.h"
#include "bpf/tables.h"
#include "test.h"
#include "unwind/module.h"

static int libc_path(char *buf, size_t cap)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = 0;
			snprintf(buf, cap, "%s", p);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static int mods_map(void)
{
	return bpf_map_create(BPF_MAP_TYPE_HASH, "t_mods",
			      sizeof(struct sfb_mod_key), sizeof(struct sfb_mod),
			      64, NULL);
}

/* The BPF walk's lookup (sframe.bpf.h), over the arrays. */
static const struct sfb_fre *lookup(const struct sfb_mod *m,
				    const struct sfb_fde *fdes,
				    const struct sfb_fre *fres, uint64_t link)
{
	const struct sfb_fde *fde;
	uint64_t rel, foff;
	uint32_t lo = 0, hi = m->nr_fdes;

	if (link < m->base)
		return NULL;
	rel = link - m->base;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fdes[m->fde_base + mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	fde = &fdes[m->fde_base + lo - 1];
	if (rel >= (uint64_t)fde->start + fde->size || !fde->nr_fres)
		return NULL;
	foff = rel - fde->start;
	if ((fde->flags & SFB_FDE_PCMASK) && fde->rep_size)
		foff %= fde->rep_size;
	lo = 0;
	hi = fde->nr_fres;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fres[fde->fre_idx + mid].start <= foff)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &fres[fde->fre_idx + lo - 1] : NULL;
}

TEST(bpf_tables_libc_rows_match)
{
	struct unw_table_opts topts = { .cache_dir = test_tmp_dir() };
	struct sfb_tables *t = NULL;
	struct sfb_tables_stats st;
	struct unw_module *um = NULL;
	struct sfb_fde *fdes = calloc(1 << 16, sizeof(*fdes));
	struct sfb_fre *fres = calloc(1 << 18, sizeof(*fres));
	struct sfb_mod_key key;
	struct sfb_mod mod;
	struct stat sb;
	char path[4096];
	uint32_t i, n, checked = 0;
	int fd = mods_map();

	if (fd < 0) {
		test_skip("cannot create a BPF map (%s): not root?",
			  strerror(errno));
		goto out;
	}
	if (!ASSERT_TRUE(fdes && fres) || !ASSERT_OK(libc_path(path, sizeof(path))) ||
	    !ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres, 1 << 18,
				       test_tmp_dir(), &t)) ||
	    !ASSERT_OK(sfb_tables__ensure(t, path, 0, 0)))
		goto out;
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 1);
	ASSERT_EQ(st.failed, 0);
	if (!ASSERT_OK(stat(path, &sb)))
		goto out;
	key.dev = sfb_kernel_dev(sb.st_dev);
	key.ino = sb.st_ino;
	if (!ASSERT_OK(bpf_map_lookup_elem(fd, &key, &mod)))
		goto out;
	ASSERT_EQ(mod.nr_fdes, st.fdes);
	/* The same table, decoded by the library. */
	um = unw_module_get(path, NULL, 0, NULL, 0, NULL, 0, 0, 0);
	if (!ASSERT_TRUE(um) || !ASSERT_OK(unw_module_load(um, &topts)) ||
	    !ASSERT_TRUE(um->table))
		goto out;
	n = sfp_sframe__num_funcs(um->table);
	ASSERT_EQ(n, mod.nr_fdes);
	for (i = 0; i < n; i += 7) {
		struct sfp_sframe_func f;
		struct sfp_sframe_row row;
		const struct sfb_fre *fr;
		uint64_t pc;

		if (sfp_sframe__func(um->table, i, &f) || f.size < 2 ||
		    f.pc_type != SFP_SFRAME_PC_INC)
			continue;
		pc = f.start + f.size / 2;
		if (sfp_sframe__find(um->table, pc, &row))
			continue;
		fr = lookup(&mod, fdes, fres, pc);
		if (!ASSERT_TRUE(fr))
			break;
		if (fr->flags & (SFB_FRE_UNSUPP | SFB_FRE_RA_UNDEF))
			continue;
		if (!ASSERT_EQ(fr->cfa_off, row.cfa.offset) ||
		    !ASSERT_EQ(!!(fr->flags & SFB_FRE_CFA_FP),
			       row.cfa.reg == SFP_DWARF_AMD64_FP) ||
		    !ASSERT_EQ(!!(fr->flags & SFB_FRE_FP_SAVED),
			       row.fp.kind == SFP_LOC_CFA_DEREF))
			break;
		if (row.fp.kind == SFP_LOC_CFA_DEREF &&
		    !ASSERT_EQ(fr->fp_off, row.fp.offset))
			break;
		checked++;
	}
	ASSERT_TRUE(checked > 100);
	/* Link addresses from file offsets: the text segment maps back. */
	{
		struct sfp_sframe_func f;
		bool seen = false;

		sfp_sframe__func(um->table, n / 2, &f);
		for (i = 0; i < mod.nr_segs; i++) {
			uint64_t off = f.start - (uint64_t)mod.segs[i].adj;

			if (off >= mod.segs[i].off &&
			    off < mod.segs[i].off + mod.segs[i].size) {
				seen = true;
				ASSERT_EQ(off + (uint64_t)mod.segs[i].adj, f.start);
			}
		}
		ASSERT_TRUE(seen);
	}
out:
	unw_module_put(um);
	sfb_tables__free(&t);
	if (fd >= 0)
		close(fd);
	free(fdes);
	free(fres);
}

TEST(bpf_tables_lru_eviction)
{
	struct sfb_tables *t = NULL;
	struct sfb_tables_stats st;
	struct sfb_fde *fdes = calloc(1 << 16, sizeof(*fdes));
	struct sfb_fre *fres = calloc(1 << 16, sizeof(*fres));
	struct sfb_mod_key key;
	struct sfb_mod mod;
	struct stat sb;
	char path[4096], self[4096];
	ssize_t len;
	int fd = mods_map();

	if (fd < 0) {
		test_skip("cannot create a BPF map (%s): not root?",
			  strerror(errno));
		goto out;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!ASSERT_TRUE(len > 0) || !ASSERT_TRUE(fdes && fres) ||
	    !ASSERT_OK(libc_path(path, sizeof(path))))
		goto out;
	self[len] = 0;
	/* Measure both tables, then make room for the larger one and half
	 * of the smaller: the second load must evict the first. */
	{
		uint64_t lf, ls;

		if (!ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres, 1 << 16,
					       test_tmp_dir(), &t)) ||
		    !ASSERT_OK(sfb_tables__ensure(t, path, 0, 0)))
			goto out;
		sfb_tables__stats(t, &st);
		lf = st.fres;
		if (!ASSERT_OK(sfb_tables__ensure(t, self, 0, 0)))
			goto out;
		sfb_tables__stats(t, &st);
		ls = st.fres - lf;
		sfb_tables__free(&t);
		if (!lf || !ls || st.failed) {
			test_skip("libc or this binary has no table");
			goto out;
		}
		/* the map entries of this first round */
		bpf_map_get_next_key(fd, NULL, &key);
		bpf_map_delete_elem(fd, &key);
		bpf_map_get_next_key(fd, NULL, &key);
		bpf_map_delete_elem(fd, &key);
		if (!ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres,
					       (uint32_t)((lf > ls ? lf : ls) +
							  (lf < ls ? lf : ls) / 2),
					       test_tmp_dir(), &t)) ||
		    !ASSERT_OK(sfb_tables__ensure(t, path, 0, 0)) ||
		    !ASSERT_OK(sfb_tables__ensure(t, self, 0, 0)))
			goto out;
	}
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 2);
	ASSERT_EQ(st.evicted, 1);
	ASSERT_OK(stat(path, &sb));
	key.dev = sfb_kernel_dev(sb.st_dev);
	key.ino = sb.st_ino;
	/* libc, the least recently used, left the map. */
	ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &mod), -ENOENT);
	/* A file that does not exist: no table, counted, not an error. */
	ASSERT_OK(sfb_tables__ensure(t, "/nonexistent/lib.so", 1, 2));
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.failed, 1);
out:
	sfb_tables__free(&t);
	if (fd >= 0)
		close(fd);
	free(fdes);
	free(fres);
}

/* Clear the module map (the entries a previous table set left). */
static void clear_map(int fd)
{
	struct sfb_mod_key key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		bpf_map_delete_elem(fd, &key);
}

TEST(bpf_tables_prefetch_and_eviction_budget)
{
	struct sfb_tables *t = NULL;
	struct sfb_tables_stats st;
	struct sfb_fde *fdes = calloc(1 << 16, sizeof(*fdes));
	struct sfb_fre *fres = calloc(1 << 16, sizeof(*fres));
	char path[4096], self[4096];
	struct stat lsb, ssb;
	uint64_t lf = 0, ls = 0;
	uint32_t cap;
	ssize_t len;
	int fd = mods_map();

	if (fd < 0) {
		test_skip("cannot create a BPF map (%s): not root?",
			  strerror(errno));
		goto out;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!ASSERT_TRUE(len > 0) || !ASSERT_TRUE(fdes && fres) ||
	    !ASSERT_OK(libc_path(path, sizeof(path))))
		goto out;
	self[len] = 0;
	if (!ASSERT_OK(stat(path, &lsb)) || !ASSERT_OK(stat(self, &ssb)))
		goto out;
	/* both tables' sizes, measured with room for both */
	if (!ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres, 1 << 16,
				       test_tmp_dir(), &t)) ||
	    !ASSERT_OK(sfb_tables__ensure(t, path, 0, 0)))
		goto out;
	sfb_tables__stats(t, &st);
	lf = st.fres;
	if (!ASSERT_OK(sfb_tables__ensure(t, self, 0, 0)))
		goto out;
	sfb_tables__stats(t, &st);
	ls = st.fres - lf;
	sfb_tables__free(&t);
	clear_map(fd);
	if (!lf || !ls || st.failed) {
		test_skip("libc or this binary has no table");
		goto out;
	}
	/* room for the larger and half of the smaller: never both */
	cap = (uint32_t)((lf > ls ? lf : ls) + (lf < ls ? lf : ls) / 2);
	if (!ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres, cap,
				       test_tmp_dir(), &t)) ||
	    !ASSERT_OK(sfb_tables__ensure(t, path, 0, 0)))
		goto out;
	/* a mapping of the other: no free room, not loaded, nothing
	 * evicted; again: still not (its sizes are remembered) */
	ASSERT_EQ(sfb_tables__prefetch(t, self), 0);
	ASSERT_EQ(sfb_tables__prefetch(t, self), 0);
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 1);
	ASSERT_EQ(st.evicted, 0);
	ASSERT_EQ(st.deferred, 1);
	/* by the MMAP2 record's dev and inode: libc (in) needs nothing,
	 * the other (waiting for room) and an unknown file go the path's
	 * way */
	ASSERT_TRUE(sfb_tables__prefetch_known(
		t, sfb_kernel_dev(lsb.st_dev), lsb.st_ino));
	ASSERT_FALSE(sfb_tables__prefetch_known(
		t, sfb_kernel_dev(ssb.st_dev), ssb.st_ino));
	ASSERT_FALSE(sfb_tables__prefetch_known(t, 0x12345, 0x6789));
	/* an unwind needs it (the budget starts with a whole array):
	 * loaded, libc evicted */
	sfb_tables__evict_budget(t, 1);
	ASSERT_OK(sfb_tables__ensure(t, self, 0, 0));
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 2);
	ASSERT_EQ(st.evicted, 1);
	/* libc evicted: a mapping does not bring it back (nor does it by
	 * dev and inode), and an unwind that needs it finds the budget
	 * spent (cap - ls rows are left, fewer than libc's), at 1 row a
	 * second */
	ASSERT_TRUE(sfb_tables__prefetch_known(
		t, sfb_kernel_dev(lsb.st_dev), lsb.st_ino));
	ASSERT_EQ(sfb_tables__prefetch(t, path), 0);
	ASSERT_OK(sfb_tables__ensure(t, path, 0, 0));
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 2);
	ASSERT_EQ(st.evicted, 1);
	ASSERT_EQ(st.throttled, 1);
	/* with budget again it comes back, evicting the other */
	sfb_tables__evict_budget(t, 1u << 30);
	ASSERT_OK(sfb_tables__ensure(t, path, 0, 0));
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 3);
	ASSERT_EQ(st.evicted, 2);
out:
	sfb_tables__free(&t);
	if (fd >= 0) {
		clear_map(fd);
		close(fd);
	}
	free(fdes);
	free(fres);
}

/* Copy file src to dst (a new inode).  Return: 0 or -errno. */
static int copy_file(const char *src, const char *dst)
{
	char buf[1 << 16];
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	size_t n;
	int err = in && out ? 0 : -errno;

	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = -EIO;
	if (in)
		fclose(in);
	if (out && fclose(out) && !err)
		err = -EIO;
	return err;
}

/* The functions of the table the unwinder builds for path (0: none). */
static uint32_t table_funcs(const char *path)
{
	struct unw_table_opts topts = { .cache_dir = test_tmp_dir() };
	struct unw_module *m = unw_module_get(path, NULL, 0, NULL, 0, NULL,
					      0, 0, 0);
	uint32_t n = 0;

	if (m && !unw_module_load(m, &topts) && m->table)
		n = sfp_sframe__num_funcs(m->table);
	unw_module_put(m);
	return n;
}

/*
 * Two files at one path, one after the other (a binary replaced on
 * disk; a container's file at a path the host has too): the BPF side's
 * table of each is that file's own.  The unwinder's module registry is
 * keyed by the identity rule (common/fileid.h), so the table of
 * (dev, ino) is never another file's that had or has the path:
 *  - a module of the file once at the path, still held by another user
 *    of the registry, is not what a load for the new file gets;
 *  - a load for the old (dev, ino) once the path holds the new file
 *    gets no table (the file there is not the mapped one), never the
 *    new file's.
 */
TEST(bpf_tables_two_files_at_one_path)
{
	struct unw_table_opts topts = { .cache_dir = test_tmp_dir() };
	struct sfb_tables *t = NULL;
	struct sfb_tables_stats st;
	struct sfb_fde *fdes = calloc(1 << 16, sizeof(*fdes));
	struct sfb_fre *fres = calloc(1 << 18, sizeof(*fres));
	struct unw_module *held = NULL;
	struct sfb_mod_key ka, kb;
	struct sfb_mod mod;
	struct stat sb;
	char libc[4096], self[4096], at[4000], tmp[4096];
	uint32_t na, nb;
	ssize_t len;
	int fd = mods_map();

	if (fd < 0) {
		test_skip("cannot create a BPF map (%s): not root?",
			  strerror(errno));
		goto out;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!ASSERT_TRUE(len > 0) || !ASSERT_TRUE(fdes && fres) ||
	    !ASSERT_OK(libc_path(libc, sizeof(libc))))
		goto out;
	self[len] = 0;
	na = table_funcs(libc);
	nb = table_funcs(self);
	if (!ASSERT_TRUE(na && nb && na != nb))
		goto out;
	snprintf(at, sizeof(at), "%s/at-one-path.so", test_tmp_dir());
	snprintf(tmp, sizeof(tmp), "%s.new", at);
	/* A: libc's bytes at the path, its module held elsewhere. */
	if (!ASSERT_OK(copy_file(libc, at)) || !ASSERT_OK(stat(at, &sb)))
		goto out;
	ka.dev = sfb_kernel_dev(sb.st_dev);
	ka.ino = sb.st_ino;
	held = unw_module_get(at, NULL, 0, NULL, 0, NULL, 0, 0, 0);
	if (!ASSERT_TRUE(held) || !ASSERT_OK(unw_module_load(held, &topts)))
		goto out;
	/* B: this binary's bytes replace it at the same path. */
	if (!ASSERT_OK(copy_file(self, tmp)) || !ASSERT_OK(rename(tmp, at)) ||
	    !ASSERT_OK(stat(at, &sb)))
		goto out;
	kb.dev = sfb_kernel_dev(sb.st_dev);
	kb.ino = sb.st_ino;
	if (!ASSERT_TRUE(kb.ino != ka.ino) ||
	    !ASSERT_OK(sfb_tables__new(fd, fdes, 1 << 16, fres, 1 << 18,
				       test_tmp_dir(), &t)) ||
	    !ASSERT_OK(sfb_tables__ensure(t, at, kb.dev, kb.ino)) ||
	    !ASSERT_OK(bpf_map_lookup_elem(fd, &kb, &mod)))
		goto out;
	/* B's own table, not the held module's (A's) */
	ASSERT_EQ(mod.nr_fdes, nb);
	/* A's (dev, ino) asked for now: the path holds B, so no table */
	ASSERT_OK(sfb_tables__ensure(t, at, ka.dev, ka.ino));
	ASSERT_EQ(bpf_map_lookup_elem(fd, &ka, &mod), -ENOENT);
	sfb_tables__stats(t, &st);
	ASSERT_EQ(st.loaded, 1);
	ASSERT_EQ(st.failed, 1);
out:
	unw_module_put(held);
	sfb_tables__free(&t);
	if (fd >= 0)
		close(fd);
	unlink(at);
	free(fdes);
	free(fres);
}
