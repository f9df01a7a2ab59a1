// SPDX-License-Identifier: MIT
/*
 * Unwinding recorded stack snapshots (registers + stack bytes, as in
 * PERF_SAMPLE_REGS_USER / PERF_SAMPLE_STACK_USER): sfp_unwind() over a
 * snapshot reader vs libunwind's remote unwinder over the same bytes,
 * driven the way perf's unwind-libunwind-local.c drives it (own address
 * space with accessors, UNW_CACHE_GLOBAL, find_proc_info through the
 * module's .eh_frame_hdr with dwarf_search_unwind_table, access_mem from
 * the snapshot for stack addresses and from the object otherwise).  Tables
 * are warm on both sides: one untimed round first.
 *
 * The snapshots are taken in this process (at depth 25 below main, in a
 * few different leaf functions) so that every module is real.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <libunwind.h>

#include <sfprof/unwind.h>

#define DEPTH 25
#define NSNAP 4
#define SNAP_MAX (64 * 1024)
#define NOINLINE __attribute__((noinline))

extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as,
					      unw_word_t ip,
					      unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

struct snap {
	uint64_t ip, sp, fp;
	uint8_t *stack;
	size_t size;
};

static struct snap snaps[NSNAP];
static int nsnap;
static volatile int sink;
static uint64_t stack_hi;

/* --- taking the snapshots --- */

static NOINLINE void take(void)
{
	ucontext_t uc;
	struct snap *s = &snaps[nsnap];

	getcontext(&uc);
	s->ip = uc.uc_mcontext.gregs[REG_RIP];
	s->sp = uc.uc_mcontext.gregs[REG_RSP];
	s->fp = uc.uc_mcontext.gregs[REG_RBP];
	s->size = stack_hi - s->sp;
	if (s->size > SNAP_MAX)
		s->size = SNAP_MAX;
	s->stack = malloc(s->size);
	memcpy(s->stack, (void *)(uintptr_t)s->sp, s->size);
	nsnap++;
}

static NOINLINE int leaf_a(int n) { volatile int x[4] = { n }; take(); return x[0]; }
static NOINLINE int leaf_b(int n) { volatile int x[12] = { n }; take(); return x[1]; }

static NOINLINE int recurse(int n, int which)
{
	volatile int pad[2] = { n };

	if (n > 0)
		sink += recurse(n - 1, which);
	else
		sink += which & 1 ? leaf_a(which) : leaf_b(which);
	return pad[0];
}

/* --- libunwind driven like perf --- */

struct module {
	uint64_t start, end;	/* executable segment */
	uint64_t hdr;		/* runtime address of .eh_frame_hdr */
	uint64_t table;
	uint64_t fde_count;
};

static struct module mods[64];
static int nmods;

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t start = 0, end = 0, hdr = 0;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			start = info->dlpi_addr + ph->p_vaddr;
			end = start + ph->p_memsz;
		}
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = info->dlpi_addr + ph->p_vaddr;
	}
	if (hdr && end && nmods < 64) {
		const uint8_t *h = (const uint8_t *)(uintptr_t)hdr;
		uint32_t count;

		/* version 1, eh_frame_ptr sdata4, fde_count udata4,
		 * table datarel sdata4: the layout every linker writes */
		if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
			return 0;
		memcpy(&count, h + 8, 4);
		mods[nmods].start = start;
		mods[nmods].end = end;
		mods[nmods].hdr = hdr;
		mods[nmods].table = hdr + 12;
		mods[nmods].fde_count = count;
		nmods++;
	}
	return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	unw_dyn_info_t di;
	int i;

	for (i = 0; i < nmods; i++) {
		if (ip < mods[i].start || ip >= mods[i].end)
			continue;
		memset(&di, 0, sizeof(di));
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.start_ip = mods[i].start;
		di.end_ip = mods[i].end;
		di.u.rti.segbase = mods[i].hdr;
		di.u.rti.table_data = mods[i].table;
		di.u.rti.table_len = mods[i].fde_count * 8 / sizeof(unw_word_t);
		return dwarf_search_unwind_table(as, ip, &di, pi,
						 need_unwind_info, arg);
	}
	return -UNW_EINVAL;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi,
			    void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil,
				  void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	const struct snap *s = arg;
	int i;

	if (write)
		return -UNW_EINVAL;
	if (addr >= s->sp && addr + 8 <= s->sp + s->size) {
		memcpy(valp, s->stack + (addr - s->sp), 8);
		return 0;
	}
	/* Not stack: perf reads the object file; we read the loaded
	 * object, which is cheaper (favours libunwind). */
	for (i = 0; i < nmods; i++)
		if (addr >= mods[i].hdr - (1u << 30) && addr < mods[i].end + (1u << 30)) {
			memcpy(valp, (void *)(uintptr_t)addr, 8);
			return 0;
		}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t regnum,
		      unw_word_t *valp, int write, void *arg)
{
	const struct snap *s = arg;

	if (write)
		return -UNW_EREADONLYREG;
	switch (regnum) {
	case UNW_X86_64_RIP: *valp = s->ip; break;
	case UNW_X86_64_RSP: *valp = s->sp; break;
	case UNW_X86_64_RBP: *valp = s->fp; break;
	default: *valp = 0; break;
	}
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t num,
			unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *bufp,
			 size_t buf_len, unw_word_t *offp, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

static int unw_one(unw_addr_space_t as, struct snap *s, uint64_t *ips, int max)
{
	unw_cursor_t c;
	int n = 0;

	if (unw_init_remote(&c, as, s))
		return 0;
	do {
		unw_word_t ip;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) || !ip)
			break;
		ips[n++] = ip;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

/* CPU time of this thread: on a shared, loaded machine wall time mostly
 * measures the other jobs. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t find_stack_hi(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t hi = 0;
	int here;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 &&
		    (uintptr_t)&here >= a && (uintptr_t)&here < b)
			hi = b;
	}
	if (f)
		fclose(f);
	return hi;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20000;
	struct sfp_addr_space *sas = NULL;
	struct sfp_reader *rd = NULL;
	struct sfp_frame fr[128];
	uint64_t ips[128];
	enum sfp_unwind_stop stop;
	unw_addr_space_t uas;
	int i, k, nf_sfp = 0, nf_unw = 0, mismatch = 0;
	double t_sfp = 1e9, t_unw = 1e9;

	stack_hi = find_stack_hi();
	for (i = 0; i < NSNAP; i++)
		recurse(DEPTH - 5, i);
	dl_iterate_phdr(collect, NULL);

	if (sfp_addr_space__new(NULL, &sas) ||
	    sfp_addr_space__load_pid(sas, getpid()) ||
	    sfp_reader__new_snapshot(NULL, 0, 0, &rd)) {
		fprintf(stderr, "sfprof setup failed\n");
		return 1;
	}
	uas = unw_create_addr_space(&accessors, 0);
	unw_set_caching_policy(uas, UNW_CACHE_GLOBAL);

	/* Warm both and check that they agree. */
	for (i = 0; i < NSNAP; i++) {
		struct sfp_regs regs = { snaps[i].ip, snaps[i].sp, snaps[i].fp,
					 0, SFP_REGS_IP | SFP_REGS_SP |
						    SFP_REGS_FP };
		int a, b;

		sfp_reader__set_snapshot(rd, snaps[i].stack, snaps[i].size,
					 snaps[i].sp);
		a = sfp_unwind(sas, rd, &regs, fr, 128, NULL, &stop);
		b = unw_one(uas, &snaps[i], ips, 128);
		nf_sfp += a;
		nf_unw += b;
		for (k = 0; k < a && k < b; k++)
			if (fr[k].ip != ips[k])
				mismatch++;
		if (a != b)
			mismatch++;
	}

	for (k = 0; k < 5; k++) {
		double t0 = now();

		for (i = 0; i < iters; i++) {
			struct snap *s = &snaps[i % NSNAP];
			struct sfp_regs regs = { s->ip, s->sp, s->fp, 0,
						 SFP_REGS_IP | SFP_REGS_SP |
							 SFP_REGS_FP };

			sfp_reader__set_snapshot(rd, s->stack, s->size, s->sp);
			sink += sfp_unwind(sas, rd, &regs, fr, 128, NULL, &stop);
		}
		t0 = (now() - t0) / iters;
		if (t0 < t_sfp)
			t_sfp = t0;
	}
	for (k = 0; k < 5; k++) {
		int n = iters / 10 ? iters / 10 : 1;
		double t0 = now();

		for (i = 0; i < n; i++)
			sink += unw_one(uas, &snaps[i % NSNAP], ips, 128);
		t0 = (now() - t0) / n;
		if (t0 < t_unw)
			t_unw = t0;
	}
	printf("bench-unwind-snapshot: %d snapshots, %d frames each "
	       "(sfprof %d, libunwind %d)%s\n", NSNAP, nf_sfp / NSNAP,
	       nf_sfp / NSNAP, nf_unw / NSNAP,
	       mismatch ? "  WARNING: the unwinders disagree" : "");
	printf("  sfp_unwind (snapshot)        %9.0f ns/sample\n", t_sfp * 1e9);
	printf("  libunwind remote (perf-like) %9.0f ns/sample\n", t_unw * 1e9);
	printf("  ratio libunwind/sfprof       %.1fx (target >= 50x)\n",
	       t_unw / t_sfp);
	unw_destroy_addr_space(uas);
	sfp_reader__free(&rd);
	sfp_addr_space__free(&sas);
	for (i = 0; i < nsnap; i++)
		free(snaps[i].stack);
	return 0;
}
