// SPDX-License-Identifier: MIT
/*
 * The unwinder's module registry keys on common/fileid.h's rule: one
 * module for one build-id at any path (the containers of one image share
 * a table), two for two builds at one path; files without a build-id by
 * path + device/inode + mount namespace.  A file whose build-id (or
 * inode) is not the mapped one's is refused, counted, and its bytes are
 * not kept for code reads.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "elf/buildid.h"
#include "test.h"
#include "unwind/addr-space.h"
#include "unwind/module.h"

static void self_id(struct sfp_file_id *id, const char *path)
{
	size_t len = 0;

	memset(id, 0, sizeof(*id));
	id->path = path;
	if (!sfp_file_build_id("/proc/self/exe", id->build_id,
			       sizeof(id->build_id), &len))
		id->build_id_len = (uint8_t)len;
}

TEST(unwind_module_one_build_id_one_module)
{
	struct sfp_file_id a, b, c;
	struct unw_module *ma, *mb, *mc;

	self_id(&a, "/ctr1/srv/app/server");
	self_id(&b, "/ctr2/usr/bin/other");
	if (!ASSERT_TRUE(a.build_id_len))	/* the test binary has one */
		return;
	c = a;
	c.build_id[0] ^= 0xff;		/* another build at a's path */
	ma = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	mb = unw_module_get_id(&b, NULL, 0, NULL, 0, 0, 0);
	mc = unw_module_get_id(&c, NULL, 0, NULL, 0, 0, 0);
	ASSERT_TRUE(ma && mb && mc);
	ASSERT_TRUE(ma == mb);
	ASSERT_TRUE(ma != mc);
	unw_module_put(ma);
	unw_module_put(mb);
	unw_module_put(mc);
}

TEST(unwind_module_no_build_id_by_inode_and_namespace)
{
	struct sfp_file_id a = { .path = "/srv/app/server", .dev = 8,
				 .ino = 42, .mntns = 1000 };
	struct sfp_file_id b = a, c = a, d = a;
	struct unw_module *ma, *mb, *mc, *md;

	c.ino = 43;		/* another file at the path */
	d.mntns = 1001;		/* another container */
	ma = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	mb = unw_module_get_id(&b, NULL, 0, NULL, 0, 0, 0);
	mc = unw_module_get_id(&c, NULL, 0, NULL, 0, 0, 0);
	md = unw_module_get_id(&d, NULL, 0, NULL, 0, 0, 0);
	ASSERT_TRUE(ma && mb && mc && md);
	ASSERT_TRUE(ma == mb);
	ASSERT_TRUE(ma != mc && ma != md && mc != md);
	unw_module_put(ma);
	unw_module_put(mb);
	unw_module_put(mc);
	unw_module_put(md);
}

/*
 * A process gone before its maps are read (the agent behind a short-lived
 * program) is in the namespace it was forked in: its file without a
 * build-id is the module its living parent has, not one of its own.
 */
TEST(unwind_module_no_build_id_gone_child_shares_parents)
{
	SFP_OPTS(sfp_addr_space_opts, o, .pid = getpid());
	struct sfp_map map = { .start = 0x400000, .end = 0x401000,
			       .prot = SFP_MAP_READ | SFP_MAP_EXEC,
			       .path = "/srv/app/no-build-id" };
	struct sfp_addr_space *parent = NULL, *child = NULL;
	struct unw_map *pm, *cm;
	pid_t gone = fork();

	if (gone == 0)
		_exit(0);
	if (!ASSERT_TRUE(gone > 0) || !ASSERT_EQ(waitpid(gone, NULL, 0), gone) ||
	    !ASSERT_OK(sfp_addr_space__new(&o, &parent)) ||
	    !ASSERT_OK(sfp_addr_space__fork(parent, &child)))
		goto out;
	unw_as_set_pid(child, gone);
	/* the child first: its parent's namespace is asked at the fork */
	if (!ASSERT_OK(unw_as_add_map_dev(child, &map, 8, 4242)) ||
	    !ASSERT_OK(unw_as_add_map_dev(parent, &map, 8, 4242)))
		goto out;
	pm = unw_as_find(parent, 0x400800);
	cm = unw_as_find(child, 0x400800);
	if (ASSERT_TRUE(pm && cm && pm->mod && cm->mod)) {
		ASSERT_TRUE(pm->mod == cm->mod);
		ASSERT_TRUE(child->mntns != 0);
		ASSERT_EQ(child->mntns, parent->mntns);
	}
out:
	sfp_addr_space__free(&child);
	sfp_addr_space__free(&parent);
}

TEST(unwind_module_mismatch_refused_and_counted)
{
	struct unw_table_opts o = { .no_cache = true };
	struct unw_module_stats s0, s1;
	struct sfp_file_id a, b;
	struct unw_module *ma, *mb, *mc;
	struct stat st;
	uint8_t byte;

	/* a key with another build-id than the file at its path */
	self_id(&a, "/proc/self/exe");
	a.build_id[0] ^= 0xff;
	/* no build-id, the kernel's inode not the path's file's */
	memset(&b, 0, sizeof(b));
	b.path = "/proc/self/exe";
	b.dev = 1;
	b.ino = 1;
	unw_module_stats(&s0);
	ma = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	mb = unw_module_get_id(&b, NULL, 0, NULL, 0, 0, 0);
	ASSERT_TRUE(ma && mb);
	ASSERT_ERR(unw_module_load(ma, &o), -ESTALE);
	ASSERT_ERR(unw_module_load(mb, &o), -ESTALE);
	ASSERT_ERR(unw_module_read(ma, 0, &byte, 1), -EFAULT);
	unw_module_stats(&s1);
	ASSERT_EQ(s1.mismatch - s0.mismatch, 2);
	/* the true inode: read */
	ASSERT_OK(stat("/proc/self/exe", &st));
	b.dev = st.st_dev;
	b.ino = st.st_ino;
	mc = unw_module_get_id(&b, NULL, 0, NULL, 0, 0, 0);
	ASSERT_TRUE(mc && mc != mb);
	ASSERT_OK(unw_module_load(mc, &o));
	unw_module_stats(&s1);
	ASSERT_EQ(s1.mismatch - s0.mismatch, 2);
	unw_module_put(ma);
	unw_module_put(mb);
	unw_module_put(mc);
}

/*
 * A table whose last process exits lingers for the next process of the
 * same file (the agent beside a compiler loop decoded libLLVM's 70 times
 * in 30 s without it): taken up again without a load, let go by time or
 * budget, and never kept when lingering is off.
 */
TEST(unwind_module_linger_keeps_and_expires)
{
	struct unw_table_opts o = { .no_cache = true };
	struct unw_module_stats s0, s1;
	struct unw_module *m, *m2;
	struct sfp_file_id a;

	self_id(&a, "/proc/self/exe");
	unw_module_linger(60ull * 1000000000, 1ull << 30);
	unw_module_stats(&s0);
	m = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	if (!ASSERT_TRUE(m) || !ASSERT_OK(unw_module_load(m, &o)))
		goto out;
	/* its image is mapped for code reads: given back on request */
	ASSERT_TRUE(unw_module_release_pages() > 0);
	unw_module_put(m);
	unw_module_stats(&s1);
	ASSERT_EQ(s1.idle, s0.idle + 1);
	ASSERT_TRUE(s1.idle_bytes > s0.idle_bytes);
	m2 = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	ASSERT_TRUE(m2 == m);
	ASSERT_OK(unw_module_load(m2, &o));	/* loaded already */
	unw_module_stats(&s1);
	ASSERT_EQ(s1.revived, s0.revived + 1);
	ASSERT_EQ(s1.loaded, s0.loaded + 1);	/* one load for both */
	ASSERT_EQ(s1.idle, s0.idle);
	unw_module_put(m2);
	/* a failed load (another build at the path) is not kept: the
	 * next process is asked again */
	{
		struct sfp_file_id bad = a;
		struct unw_module *mb;

		bad.build_id[0] ^= 0xff;
		mb = unw_module_get_id(&bad, NULL, 0, NULL, 0, 0, 0);
		if (ASSERT_TRUE(mb)) {
			ASSERT_ERR(unw_module_load(mb, &o), -ESTALE);
			unw_module_put(mb);
		}
		unw_module_stats(&s1);
		ASSERT_EQ(s1.idle, s0.idle + 1);	/* m alone */
	}
	/* no room left for idle tables: it goes */
	unw_module_linger(60ull * 1000000000, 0);
	unw_module_stats(&s1);
	ASSERT_EQ(s1.expired, s0.expired + 1);
	ASSERT_EQ(s1.idle, s0.idle);
	ASSERT_EQ(s1.idle_bytes, s0.idle_bytes);
	/* off: freed at its last put, loaded again next time */
	unw_module_linger(0, 0);
	m = unw_module_get_id(&a, NULL, 0, NULL, 0, 0, 0);
	if (!ASSERT_TRUE(m) || !ASSERT_OK(unw_module_load(m, &o)))
		goto out;
	unw_module_put(m);
	unw_module_stats(&s1);
	ASSERT_EQ(s1.loaded, s0.loaded + 3);	/* + the failed one */
	ASSERT_EQ(s1.idle, s0.idle);
	ASSERT_EQ(s1.expired, s0.expired + 1);
out:
	unw_module_linger(0, 0);
}
