// SPDX-License-Identifier: MIT
/*
 * The BPF side of `--call-graph bpf-defer` without the kernel's task_work:
 * the real object (src/bpf/defer.bpf.c, with syscall programs added by
 * tests/progs/bpf-walk.bpf.c) run through BPF_PROG_TEST_RUN in this very
 * process, fed with the tables the real user-space loader (tables.c)
 * writes from the files this process maps (this binary, libc, libbpf,
 * ld.so, the vDSO).  A syscall program runs in the task that calls
 * BPF_PROG_TEST_RUN and may sleep, so it walks this process's own stack
 * as the task_work callback walks the sampled task's.
 *
 * The stack is known: registers taken at a point of this file's code,
 * reached through qsort() (frames in libc) and a recursion, with no frame
 * pointers (the tests are built -O2 without them).  The BPF walk must give
 * frame for frame what sfp_unwind() gives from the same registers and
 * the same stop, and the frames glibc's backtrace() (libgcc's DWARF
 * unwinder, not sfprof's) gives from the same function.
 *
 * Availability is the system's: root, the kernel's BTF, the bpf() syscall
 * and the kernel functions the programs need (/proc/kallsyms).  Where all
 * are there, any failure to load or run is a FAIL.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sfprof/unwind.h>

#include "bpf/defer-shared.h"
#include "bpf/tables.h"
#include "bpf-walk.skel.h"
#include "test.h"

#define NOINLINE __attribute__((noinline))
#define MAXF 600
/* Depth of the recursion below qsort's comparator. */
#define REC_DEPTH 6

/* --- what the system offers ------------------------------------------- */

/* NULL when the tests can run here, else why not. */
static const char *bpf_unavailable(void)
{
	static const char *const need[] = {
		"bpf_prog_test_run_syscall",	/* syscall programs' test run */
		"bpf_find_vma", "bpf_loop", "bpf_copy_from_user",
	};
	static char why[160];
	static int done;
	unsigned int found = 0, i;
	char line[512];
	FILE *f;
	int fd;

	if (done)
		return why[0] ? why : NULL;
	done = 1;
	if (geteuid() != 0) {
		snprintf(why, sizeof(why), "not root");
		return why;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, sizeof(why), "no kernel BTF (/sys/kernel/btf/vmlinux)");
		return why;
	}
	f = fopen("/proc/kallsyms", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		if (!name)
			continue;
		name[strcspn(name, "\n\t")] = 0;
		for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
			if (!strcmp(name + 1, need[i]))
				found |= 1u << i;
	}
	if (f)
		fclose(f);
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(found & (1u << i))) {
			snprintf(why, sizeof(why),
				 "the kernel lacks %s (/proc/kallsyms)", need[i]);
			return why;
		}
	/* root, yet bpf() refused: a seccomp filter, a lockdown */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_probe", 4, 4, 1, NULL);
	if (fd < 0) {
		snprintf(why, sizeof(why), "the bpf() syscall is refused here (%s)",
			 strerror(errno));
		return why;
	}
	close(fd);
	return NULL;
}

/* --- the object, its tables and its ring ------------------------------- */

#define MAX_MISSES 64

struct inst {
	struct sfp_walk_bpf *skel;
	struct sfb_tables *tables;
	struct ring_buffer *ring;
	void *fde_mem, *fre_mem;
	size_t fde_len, fre_len;
	/* what the ring brought */
	struct sfb_miss miss[MAX_MISSES];
	unsigned int nr_miss;
	struct sfb_deferred def;
	unsigned int nr_def;
};

static int on_ring(void *ctx, void *data, size_t size)
{
	struct inst *in = ctx;
	uint32_t type;

	if (size < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	if (type == SFB_REC_MISS && size >= sizeof(struct sfb_miss) &&
	    in->nr_miss < MAX_MISSES)
		memcpy(&in->miss[in->nr_miss++], data, sizeof(struct sfb_miss));
	else if (type == SFB_REC_DEFERRED && size >= sizeof(in->def)) {
		memcpy(&in->def, data, sizeof(in->def));
		in->nr_def++;
	}
	return 0;
}

static void inst_close(struct inst *in)
{
	ring_buffer__free(in->ring);
	sfb_tables__free(&in->tables);
	if (in->fde_mem && in->fde_mem != MAP_FAILED)
		munmap(in->fde_mem, in->fde_len);
	if (in->fre_mem && in->fre_mem != MAP_FAILED)
		munmap(in->fre_mem, in->fre_len);
	sfp_walk_bpf__destroy(in->skel);
	memset(in, 0, sizeof(*in));
}

/*
 * Open and load the object with only the test's programs, the arrays as
 * record's loader makes them (mmap'able, written by tables.c).  No table
 * is loaded yet.  false: a FAIL was said.
 */
static bool inst_open(struct inst *in, uint32_t fde_cap, uint32_t fre_cap)
{
	struct bpf_program *p;
	long page = sysconf(_SC_PAGESIZE);

	memset(in, 0, sizeof(*in));
	in->skel = sfp_walk_bpf__open();
	if (!ASSERT_TRUE(in->skel))
		return false;
	bpf_object__for_each_program(p, in->skel->obj) {
		const char *n = bpf_program__name(p);

		bpf_program__set_autoload(p, !strcmp(n, "walk_regs") ||
					     !strcmp(n, "fill_cache") ||
					     !strcmp(n, "task_work_now"));
	}
	bpf_map__set_max_entries(in->skel->maps.rb, 1u << 20);
	bpf_map__set_max_entries(in->skel->maps.tasks, 64);
	bpf_map__set_max_entries(in->skel->maps.blocked, 1);
	bpf_map__set_max_entries(in->skel->maps.walks, 1);
	bpf_map__set_max_entries(in->skel->maps.fdes, fde_cap);
	bpf_map__set_max_entries(in->skel->maps.fres, fre_cap);
	bpf_map__set_map_flags(in->skel->maps.fdes, BPF_F_MMAPABLE);
	bpf_map__set_map_flags(in->skel->maps.fres, BPF_F_MMAPABLE);
	if (!ASSERT_OK(sfp_walk_bpf__load(in->skel)))
		return false;
	in->fde_len = ((size_t)fde_cap * sizeof(struct sfb_fde) + page - 1) &
		      ~(size_t)(page - 1);
	in->fre_len = ((size_t)fre_cap * sizeof(struct sfb_fre) + page - 1) &
		      ~(size_t)(page - 1);
	in->fde_mem = mmap(NULL, in->fde_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED, bpf_map__fd(in->skel->maps.fdes), 0);
	in->fre_mem = mmap(NULL, in->fre_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED, bpf_map__fd(in->skel->maps.fres), 0);
	if (!ASSERT_TRUE(in->fde_mem != MAP_FAILED) ||
	    !ASSERT_TRUE(in->fre_mem != MAP_FAILED))
		return false;
	if (!ASSERT_OK(sfb_tables__new(bpf_map__fd(in->skel->maps.mods),
				       in->fde_mem, fde_cap, in->fre_mem,
				       fre_cap, test_tmp_dir(), &in->tables)))
		return false;
	in->ring = ring_buffer__new(bpf_map__fd(in->skel->maps.rb), on_ring,
				    in, NULL);
	return ASSERT_TRUE(in->ring);
}

/* Every table of this process, as record's loader loads a -p process's
 * (and the vDSO's, as it loads its own). */
static bool inst_tables(struct inst *in)
{
	struct sfb_tables_stats st;

	if (!ASSERT_OK(sfb_tables__ensure(in->tables, "[vdso]", SFB_VDSO_DEV,
					  SFB_VDSO_INO)) ||
	    !ASSERT_OK(sfb_tables__preload_pid(in->tables, getpid(), NULL)))
		return false;
	sfb_tables__stats(in->tables, &st);
	/* this binary, libc, ld.so, libbpf at least */
	return ASSERT_GE(st.loaded, 4);
}

/* --- the stack: a known point of this file's code ------------------------ */

struct regs3 {
	uint64_t ip, sp, bp;
};

struct point;
typedef void (*point_fn)(struct point *pt);

struct point {
	point_fn fn;		/* what to do there */
	struct inst *in;
	struct regs3 r;		/* the registers at the point */
	void *bt[MAXF];		/* glibc's backtrace() there */
	int nb;
	int done;
};

static volatile int sink;

/*
 * The registers at the instruction after the asm: rsp and rbp as they
 * are there, rip its address.  Fixed registers, none of them rbp, so that
 * reading rbp comes before any output is written.
 */
static NOINLINE void at_point(struct point *pt)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("mov %%rbp, %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "lea 0(%%rip), %2"
			 : "=c"(bp), "=d"(sp), "=a"(ip));
	pt->r.ip = ip;
	pt->r.sp = sp;
	pt->r.bp = bp;
	pt->nb = backtrace(pt->bt, MAXF);
	pt->fn(pt);
	sink += pt->nb;		/* (no tail call: this frame stays) */
}

static NOINLINE int rec(int n, struct point *pt)
{
	volatile char pad[40];

	pad[n & 31] = (char)n;
	if (n > 0)
		return rec(n - 1, pt) + pad[n & 31];
	at_point(pt);
	return pad[0];
}

static struct point *cur_point;

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (!cur_point->done) {
		cur_point->done = 1;
		sink += rec(REC_DEPTH, cur_point);
	}
	return (a > b) - (a < b);
}

/* Run pt->fn at the point: main -> ... -> qsort (libc) -> cmp_int ->
 * rec x REC_DEPTH + 1 -> at_point. */
static NOINLINE void run_at_point(struct point *pt)
{
	int v[32], i;

	for (i = 0; i < 32; i++)
		v[i] = (i * 7919) % 32;
	cur_point = pt;
	pt->done = 0;
	qsort(v, 32, sizeof(v[0]), cmp_int);
	sink += v[5];
}

/* --- the walks ----------------------------------------------------------- */

/* BPF_PROG_TEST_RUN of walk_regs from r; the record is skel->bss->walk_out. */
static int bpf_walk(struct inst *in, const struct regs3 *r, bool nofault,
		    uint32_t max, uint32_t *sync_fail, uint32_t *no_table)
{
	struct {
		uint64_t ip, sp, bp;
		uint32_t nofault, max, sync_fail, no_table;
	} a = { r->ip, r->sp, r->bp, nofault, max, 0, 0 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int err;

	memset(&in->skel->bss->walk_out, 0xa5, sizeof(in->skel->bss->walk_out));
	err = bpf_prog_test_run_opts(bpf_program__fd(in->skel->progs.walk_regs),
				     &t);
	if (err)
		return -errno;
	if (t.retval)
		return -EPROTO;
	if (sync_fail)
		*sync_fail = a.sync_fail;
	if (no_table)
		*no_table = a.no_table;
	return 0;
}

/* sfprof's own unwinder, from the same registers over this process. */
static int user_walk(const struct regs3 *r, uint32_t max,
		     struct sfp_frame *fr, enum sfp_unwind_stop *stop)
{
	SFP_OPTS(sfp_unwind_opts, uo, .max_depth = max);
	struct sfp_regs regs = {
		.ip = r->ip, .sp = r->sp, .fp = r->bp,
		.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP,
	};
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *self = NULL;
	int n = -1;

	if (ASSERT_OK(sfp_addr_space__new(NULL, &as)) &&
	    ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) &&
	    ASSERT_OK(sfp_reader__new_self(&self)))
		n = sfp_unwind(as, self, &regs, fr, MAXF, &uo, stop);
	sfp_reader__free(&self);
	sfp_addr_space__free(&as);
	return n;
}

static void dump(const char *who, const uint64_t *ip, int n)
{
	int i;

	printf("    %s (%d frames):\n", who, n);
	for (i = 0; i < n && i < 40; i++)
		printf("      #%d %#llx\n", i, (unsigned long long)ip[i]);
}

/*
 * The BPF record d against sfp_unwind() from the same registers: the same
 * frames, the same stop, and every step by an SFrame row where the user
 * side took one.  false: a FAIL was said (with both walks).
 */
static bool same_as_user(const char *what, const struct sfb_deferred *d,
			 const struct regs3 *r, uint32_t max)
{
	static struct sfp_frame fr[MAXF];
	static uint64_t uip[MAXF];
	enum sfp_unwind_stop stop = SFP_STOP_NONE;
	int n = user_walk(r, max, fr, &stop), i;
	uint32_t usf = 0;
	bool ok = true;

	if (n <= 0) {
		sfp_test_fail_at(__FILE__, __LINE__, "%s: sfp_unwind: %d", what, n);
		return false;
	}
	for (i = 0; i < n; i++) {
		uip[i] = fr[i].ip;
		if (fr[i].flags & SFP_FRAME_SFRAME)
			usf++;
	}
	if (d->nr != (uint32_t)n || d->stop != (uint32_t)stop)
		ok = false;
	for (i = 0; ok && i < n; i++)
		if (d->ips[i] != uip[i])
			ok = false;
	/* (the two count a last step that failed differently: compared
	 * on whole stacks) */
	if (ok && stop == SFP_STOP_OUTERMOST && d->sframe_frames != usf)
		ok = false;
	if (!ok) {
		sfp_test_fail_at(__FILE__, __LINE__,
				 "%s: BPF walk %u frames, stop %u, %u by SFrame; "
				 "sfp_unwind %d frames, stop %s, %u by SFrame",
				 what, d->nr, d->stop, d->sframe_frames, n,
				 sfp_unwind_stop_str(stop), usf);
		dump("BPF", d->ips, d->nr < MAXF ? (int)d->nr : MAXF);
		dump("sfp_unwind", uip, n);
	}
	return ok;
}

/*
 * The BPF frames after the first k against glibc's backtrace() taken in
 * at_point after its first (a return address in at_point, another call
 * site than the BPF walk's frame k - 1).  backtrace() may have one more
 * leading frame of its own (ASan's interceptor).  k < 0: as many as the
 * BPF walk has more (it began deeper).
 */
static bool same_as_glibc(const char *what, const struct sfb_deferred *d,
			  int k_want, const struct point *pt)
{
	int off, i, nb = pt->nb, k = k_want;

	for (off = 0; off <= 1; off++) {
		if (k_want < 0)
			k = (int)d->nr - (nb - 1 - off);
		if (k < 1 || nb - 1 - off != (int)d->nr - k || nb - off < 2)
			continue;
		for (i = 1 + off; i < nb; i++)
			if ((uint64_t)(uintptr_t)pt->bt[i] !=
			    d->ips[k + i - 1 - off])
				break;
		if (i == nb)
			return true;
	}
	sfp_test_fail_at(__FILE__, __LINE__,
			 "%s: BPF frames from #%d are not glibc backtrace()'s",
			 what, k);
	dump("BPF", d->ips, d->nr < MAXF ? (int)d->nr : MAXF);
	{
		static uint64_t b[MAXF];

		for (i = 0; i < nb; i++)
			b[i] = (uint64_t)(uintptr_t)pt->bt[i];
		dump("glibc backtrace", b, nb);
	}
	return false;
}

/* --- tests ------------------------------------------------------------ */

/*
 * A module without a table: the walk reports it (SFB_REC_MISS, naming
 * the file by the kernel's dev and inode, once a second), user space
 * resolves the report to a path and loads its table (the path of a miss
 * in a recording), and the next walk goes further -- until the whole
 * stack is walked, equal to sfp_unwind()'s.
 */
static void do_miss(struct point *pt)
{
	struct inst *in = pt->in;
	struct sfb_tables_stats st;
	uint32_t no_table = 0;
	unsigned int round, seen = 0, k;
	struct stat sb;
	bool self_seen = false;

	if (!ASSERT_OK(stat("/proc/self/exe", &sb)))
		return;
	for (round = 0; round < 16; round++) {
		in->nr_miss = 0;
		if (!ASSERT_OK(bpf_walk(in, &pt->r, false, 0, NULL, &no_table)))
			return;
		ring_buffer__consume(in->ring);
		if (!no_table)
			break;
		/* the first walk meets this binary first */
		if (round == 0 &&
		    (!ASSERT_GE(in->nr_miss, 1) ||
		     !ASSERT_EQ(in->miss[0].dev, sfb_kernel_dev(sb.st_dev)) ||
		     !ASSERT_EQ(in->miss[0].ino, sb.st_ino) ||
		     !ASSERT_EQ(in->miss[0].pid, getpid()) ||
		     !ASSERT_TRUE(in->miss[0].vm_start <= pt->r.ip)))
			return;
		for (k = 0; k < in->nr_miss; k++) {
			if (in->miss[k].ino == sb.st_ino)
				self_seen = true;
			ASSERT_OK(sfb_tables__resolve_miss(
				in->tables, (pid_t)in->miss[k].pid,
				in->miss[k].dev, in->miss[k].ino,
				in->miss[k].vm_start));
		}
		seen += in->nr_miss;
		if (!in->nr_miss)
			break;	/* no table and no report: a FAIL below */
	}
	sfb_tables__stats(in->tables, &st);
	ASSERT_TRUE(self_seen);
	ASSERT_EQ(no_table, 0);
	/* this binary and libc at least, each loaded by its miss */
	ASSERT_GE(seen, 2);
	ASSERT_GE(st.loaded, 2);
	same_as_user("after the misses", &in->skel->bss->walk_out, &pt->r, 0);
}

TEST(bpf_walk_miss_loads_tables)
{
	struct point *pt = calloc(1, sizeof(*pt));
	struct inst in;
	const char *why = bpf_unavailable();

	if (why) {
		test_skip("%s", why);
		free(pt);
		return;
	}
	if (ASSERT_TRUE(pt) && inst_open(&in, 1u << 18, 1u << 20)) {
		pt->fn = do_miss;
		pt->in = &in;
		run_at_point(pt);
	}
	inst_close(&in);
	free(pt);
}

/*
 * The task_work callback's walk (bpf_find_vma, faulting reads) from a
 * known point, every table loaded by the loader.
 */
static void do_fault_walk(struct point *pt)
{
	const struct sfb_deferred *d = &pt->in->skel->bss->walk_out;
	uint32_t no_table = 1;

	if (!ASSERT_OK(bpf_walk(pt->in, &pt->r, false, 0, NULL, &no_table)))
		return;
	ASSERT_EQ(no_table, 0);
	ASSERT_EQ(d->stop, SFB_STOP_OUTERMOST);
	/* at_point, rec x 7, cmp_int, qsort, run_at_point, the test, main */
	ASSERT_GE(d->nr, REC_DEPTH + 8);
	/* no frame pointers here: every step by a table row */
	ASSERT_EQ(d->fp_frames, 0);
	ASSERT_EQ(d->sframe_frames + 1, d->nr);
	if (same_as_user("task_work walk", d, &pt->r, 0))
		same_as_glibc("task_work walk", d, 1, pt);
}

static struct inst main_inst;
static int main_state;		/* 0 not tried, 1 ready, -1 failed */

/* The shared instance with every table of this process loaded. */
static struct inst *ready(void)
{
	const char *why = bpf_unavailable();

	if (why) {
		test_skip("%s", why);
		return NULL;
	}
	if (!main_state)
		main_state = inst_open(&main_inst, 1u << 18, 1u << 20) &&
				     inst_tables(&main_inst)
			     ? 1 : -1;
	if (main_state < 0)
		sfp_test_fail_at(__FILE__, __LINE__, "the object or its tables "
				 "did not load (see above)");
	return main_state > 0 ? &main_inst : NULL;
}

TEST(bpf_walk_task_work_walk_matches_unwinders)
{
	struct point *pt = calloc(1, sizeof(*pt));

	if (ASSERT_TRUE(pt) && (pt->in = ready())) {
		pt->fn = do_fault_walk;
		run_at_point(pt);
	}
	free(pt);
}

/*
 * The perf_event program's walk at once (non-faulting reads, VMAs from
 * the callbacks' cache only): with this process's VMAs unknown it gives
 * up (sync_fail: the callback will do it); once the callbacks' reader
 * (fill_vmas) has read them in, the same frames as the faulting walk.
 */
static void do_nofault_walk(struct point *pt)
{
	struct inst *in = pt->in;
	const struct sfb_deferred *d = &in->skel->bss->walk_out;
	LIBBPF_OPTS(bpf_test_run_opts, t);
	uint32_t sync_fail = 0, no_table = 1, pid = (uint32_t)getpid();

	bpf_map_delete_elem(bpf_map__fd(in->skel->maps.vmas), &pid);
	if (!ASSERT_OK(bpf_walk(in, &pt->r, true, 0, &sync_fail, NULL)) ||
	    !ASSERT_EQ(sync_fail, 1) || !ASSERT_EQ(d->stop, 0))
		return;
	if (!ASSERT_OK(bpf_prog_test_run_opts(
		    bpf_program__fd(in->skel->progs.fill_cache), &t)) ||
	    !ASSERT_OK(bpf_walk(in, &pt->r, true, 0, &sync_fail, &no_table)))
		return;
	ASSERT_EQ(sync_fail, 0);
	ASSERT_EQ(no_table, 0);
	ASSERT_EQ(d->stop, SFB_STOP_OUTERMOST);
	ASSERT_GE(d->nr, REC_DEPTH + 8);
	if (same_as_user("walk at once", d, &pt->r, 0))
		same_as_glibc("walk at once", d, 1, pt);
}

TEST(bpf_walk_at_once_matches_unwinders)
{
	struct point *pt = calloc(1, sizeof(*pt));

	if (ASSERT_TRUE(pt) && (pt->in = ready())) {
		pt->fn = do_nofault_walk;
		run_at_point(pt);
	}
	free(pt);
}

/* BPF_PROG_TEST_RUN of task_work_now; the record comes through the ring. */
static int run_callback(struct inst *in, uint32_t tid, uint32_t exec_delta,
			uint64_t cookie, uint32_t *pending)
{
	struct {
		uint64_t cookie;
		uint32_t tid, exec_delta, pending, pad;
	} a = { cookie, tid, exec_delta, 1, 0 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = &a, .ctx_size_in = sizeof(a));

	in->nr_def = 0;
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(in->skel->progs.task_work_now), &t))
		return -errno;
	if (t.retval)
		return -EPROTO;
	*pending = a.pending;
	ring_buffer__consume(in->ring);
	return in->nr_def == 1 ? 0 : -ENOMSG;
}

/* Where addr is mapped from (its /proc/self/maps path), or "". */
static void mapped_from(uint64_t addr, char *buf, size_t len)
{
	char line[4096];
	unsigned long long s, e;
	int pos;
	FILE *f = fopen("/proc/self/maps", "re");

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &s, &e, &pos) < 2 ||
		    addr < s || addr >= e)
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(buf, len, "%s", line + pos);
		break;
	}
	if (f)
		fclose(f);
}

/*
 * The callback itself (on_task_work), called as the kernel would on the
 * task's way back to user space -- here from BPF_PROG_TEST_RUN, whose
 * user registers bpf_task_pt_regs() gives: a deferred record with the
 * entry's cookie whose frames are libc's syscall(), libbpf's, this
 * file's, then glibc's backtrace() from at_point.  An exec since the
 * sample and another task's entry: no walk, flagged.
 */
static void do_callback(struct point *pt)
{
	struct inst *in = pt->in;
	const struct sfb_deferred *d = &in->def;
	uint32_t tid = (uint32_t)gettid(), pending = 1;
	char where[4096];

	if (!ASSERT_OK(run_callback(in, tid, 0, 0x123456789ull, &pending)))
		return;
	ASSERT_EQ(pending, 0);
	ASSERT_EQ(d->type, SFB_REC_DEFERRED);
	ASSERT_EQ(d->cookie, 0x123456789ull);
	ASSERT_EQ(d->pid, getpid());
	ASSERT_EQ(d->tid, tid);
	ASSERT_EQ(d->flags, 0);
	ASSERT_EQ(d->stop, SFB_STOP_OUTERMOST);
	ASSERT_EQ(d->fp_frames, 0);
	/* libc's syscall(), libbpf, this file's run_callback and do_callback
	 * at least, then at_point and its callers */
	if (!ASSERT_GE(d->nr, (uint32_t)pt->nb + 2))
		return;
	mapped_from(d->ips[0], where, sizeof(where));
	if (!ASSERT_TRUE(strstr(where, "/libc.so")))
		printf("    frame 0 %#llx is in '%s'\n",
		       (unsigned long long)d->ips[0], where);
	same_as_glibc("the callback", d, -1, pt);

	/* an exec between the sample and the callback: not walked */
	if (ASSERT_OK(run_callback(in, tid, 1, 7, &pending))) {
		ASSERT_EQ(d->flags, SFB_D_EXEC);
		ASSERT_EQ(d->nr, 0);
		ASSERT_EQ(pending, 0);
	}
	/* run in another task than the entry's */
	if (ASSERT_OK(run_callback(in, tid + 1, 0, 9, &pending))) {
		ASSERT_EQ(d->flags, SFB_D_WRONG_TASK);
		ASSERT_EQ(d->tid, tid + 1);
		ASSERT_EQ(d->nr, 0);
	}
}

TEST(bpf_walk_task_work_callback)
{
	struct point *pt = calloc(1, sizeof(*pt));

	if (ASSERT_TRUE(pt) && (pt->in = ready())) {
		pt->fn = do_callback;
		run_at_point(pt);
	}
	free(pt);
}

/* A function whose first instruction is a known row: CFA = sp + 8, the
 * return address at sp. */
static NOINLINE int entry_target(int x)
{
	return x * 3 + sink;
}

static const uint64_t not_code = 0x5a5a;

/*
 * The stop reasons, on stacks made for them: the callback's walk and
 * sfp_unwind() stop the same way, at the same frame, and that way is the
 * one the stack was made for.  The walk at once stops so too where all
 * it needs is at hand, and gives up where a VMA is not in the callbacks'
 * cache (a return address in data, anonymous code): the callback decides
 * there (docs/record-bpf.md).
 */
TEST(bpf_walk_stop_reasons)
{
	struct inst *in = ready();
	struct {
		const char *what;
		uint32_t stop;
		uint32_t nr;
		uint32_t max;
	} c[] = {
		{ "return address 0", SFB_STOP_RA_ZERO, 1, 0 },
		{ "return address in data", SFB_STOP_BAD_RA, 1, 0 },
		{ "unreadable stack", SFB_STOP_UNREADABLE, 1, 0 },
		{ "no table, no frame pointer", SFB_STOP_NO_INFO, 1, 0 },
		{ "depth cap", SFB_STOP_DEPTH, 3, 3 },
	};
	uint64_t *stack = NULL;
	void *nomem = MAP_FAILED, *anon = MAP_FAILED;
	unsigned int i, nofault;

	if (!in)
		return;
	stack = calloc(64, sizeof(*stack));
	nomem = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(stack) || !ASSERT_TRUE(nomem != MAP_FAILED) ||
	    !ASSERT_TRUE(anon != MAP_FAILED))
		goto out;
	for (nofault = 0; nofault < 2; nofault++) {
		struct regs3 r;
		LIBBPF_OPTS(bpf_test_run_opts, t);

		if (nofault && !ASSERT_OK(bpf_prog_test_run_opts(
				    bpf_program__fd(in->skel->progs.fill_cache), &t)))
			goto out;
		for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			const struct sfb_deferred *d = &in->skel->bss->walk_out;
			uint32_t sync_fail = 0;
			char what[128];

			r.ip = (uint64_t)(uintptr_t)entry_target;
			r.sp = (uint64_t)(uintptr_t)&stack[8];
			r.bp = 0;
			stack[8] = (uint64_t)(uintptr_t)entry_target + 1;
			stack[9] = (uint64_t)(uintptr_t)entry_target + 1;
			stack[10] = (uint64_t)(uintptr_t)entry_target + 1;
			switch (c[i].stop) {
			case SFB_STOP_RA_ZERO:
				stack[8] = 0;
				break;
			case SFB_STOP_BAD_RA:
				stack[8] = (uint64_t)(uintptr_t)&not_code + 1;
				break;
			case SFB_STOP_UNREADABLE:
				r.sp = (uint64_t)(uintptr_t)nomem;
				break;
			case SFB_STOP_NO_INFO:
				r.ip = (uint64_t)(uintptr_t)anon;
				break;
			}
			snprintf(what, sizeof(what), "%s (%s)", c[i].what,
				 nofault ? "at once" : "task_work");
			if (!ASSERT_OK(bpf_walk(in, &r, nofault, c[i].max,
						&sync_fail, NULL)))
				goto out;
			if (nofault && c[i].stop == SFB_STOP_UNREADABLE) {
				/* the walk at once gives up on a read that
				 * fails: the callback will fault it in */
				ASSERT_EQ(d->stop, SFB_STOP_UNREADABLE);
				continue;
			}
			if (nofault && (c[i].stop == SFB_STOP_BAD_RA ||
					c[i].stop == SFB_STOP_NO_INFO)) {
				if (!ASSERT_EQ(sync_fail, 1))
					printf("    %s\n", what);
				continue;
			}
			if (!ASSERT_EQ(sync_fail, 0) ||
			    !ASSERT_EQ(d->stop, c[i].stop) ||
			    !ASSERT_EQ(d->nr, c[i].nr))
				printf("    %s\n", what);
			same_as_user(what, d, &r, c[i].max);
		}
	}
out:
	if (nomem != MAP_FAILED)
		munmap(nomem, 4096);
	if (anon != MAP_FAILED)
		munmap(anon, 4096);
	free(stack);
}
