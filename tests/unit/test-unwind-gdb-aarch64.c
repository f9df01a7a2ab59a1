// SPDX-License-Identifier: MIT
/*
 * Offline unwinding of AArch64 stack snapshots, checked against gdb: a
 * program without frame pointers (tests/data/unwind-aarch64/nofp.c,
 * static, cross-compiled) runs under `qemu-aarch64 -g PORT`; gdb-multiarch
 * (gdb-snap.py) stops at every instruction of its functions once and
 * writes pc, sp, x29, x30, its backtrace and the stack from sp to the top.
 * Each stop is unwound here, on this host, by sfp_unwind() over an
 * SFP_ARCH_AARCH64 address space and a snapshot reader, and must give
 * exactly gdb's frames (less the tail-call frames gdb infers from the
 * debug info's call sites, which leave nothing on the stack).  Two builds: tables that sfprof makes from the
 * .eh_frame, and gas's own .sframe (--gsframe).  (Not with pac-ret:
 * qemu 7.2's stub gives gdb no PAC mask, so gdb's own backtrace stops at
 * the first signed return address; test-unwind-glibc covers PAC.)  The cross toolchain,
 * qemu and gdb-multiarch come from mk/deps.sh: missing ones are a failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"

#define CROSS "aarch64-linux-gnu-"
#define FUNCS "leaf_add,leaf_stack,mid,with_vla,recurse,twice,call_ptr," \
	      "cmp_int,sort_some,main"
#define MAXF 64

/* A free TCP port for qemu's gdb stub (the kernel picks it). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* The executable's PT_LOAD segments as its mappings (static, not PIE:
 * it runs at its link addresses). */
static int add_loads(struct sfp_addr_space *as, const char *exe)
{
	int fd = open(exe, O_RDONLY), err = -1;
	Elf *e;
	size_t n, i;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		err = 0;
		for (i = 0; i < n && !err; i++) {
			GElf_Phdr ph;
			struct sfp_map m = { 0 };

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			m.start = ph.p_vaddr & ~0xfffull;
			m.end = (ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
			m.pgoff = ph.p_offset & ~0xfffull;
			m.prot = (ph.p_flags & PF_R ? SFP_MAP_READ : 0) |
				 (ph.p_flags & PF_W ? SFP_MAP_WRITE : 0) |
				 (ph.p_flags & PF_X ? SFP_MAP_EXEC : 0);
			m.path = exe;
			err = sfp_addr_space__add_map(as, &m);
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

struct tally {
	int stops, same, bps, tailcalls;
};

/* Unwind every stop of the gdb log and compare. */
static void compare_log(const char *log, const char *exe, struct tally *t)
{
	SFP_OPTS(sfp_addr_space_opts, ao, .arch = SFP_ARCH_AARCH64,
		 .no_cache = true);
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	uint64_t gdbf[MAXF];
	struct sfp_regs regs = { 0 };
	int ngdb = 0, shown = 0;
	char *line = NULL;
	size_t cap = 0;
	uint8_t *stack = NULL;
	FILE *f = fopen(log, "r");

	if (!ASSERT_TRUE(f) || !ASSERT_OK(sfp_addr_space__new(&ao, &as)) ||
	    !ASSERT_OK(add_loads(as, exe)))
		goto out;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long pc, sp, x29, x30;
		struct sfp_frame fr[MAXF];
		enum sfp_unwind_stop stop;
		char *p;
		size_t len, i;
		int n, k;

		if (sscanf(line, "bps %d", &t->bps) == 1)
			continue;
		if (sscanf(line, "tailcalls %d", &k) == 1) {
			t->tailcalls += k;
			continue;
		}
		if (sscanf(line, "stop %llx %llx %llx %llx", &pc, &sp, &x29,
			   &x30) == 4) {
			regs.ip = pc;
			regs.sp = sp;
			regs.fp = x29;
			regs.lr = x30;
			regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP |
				     SFP_REGS_LR;
			continue;
		}
		if (!strncmp(line, "frames ", 7)) {
			p = line + 7;
			ngdb = (int)strtol(p, &p, 10);
			for (k = 0; k < ngdb && k < MAXF; k++)
				gdbf[k] = strtoull(p, &p, 16);
			continue;
		}
		if (strncmp(line, "mem ", 4))
			continue;
		p = line + 4;
		sp = strtoull(p, &p, 16);
		p++;
		len = strcspn(p, "\n") / 2;
		free(stack);
		stack = malloc(len ? len : 1);
		if (!ASSERT_TRUE(stack))
			break;
		for (i = 0; i < len; i++)
			stack[i] = (uint8_t)(hexval(p[2 * i]) << 4 |
					     hexval(p[2 * i + 1]));
		t->stops++;
		sfp_reader__free(&r);
		if (!ASSERT_OK(sfp_reader__new_snapshot(stack, len, sp, &r)))
			break;
		n = sfp_unwind(as, r, &regs, fr, MAXF, NULL, &stop);
		k = n == ngdb;
		for (i = 0; k && i < (size_t)n; i++)
			k = fr[i].ip == gdbf[i];
		t->same += k;
		if (!k && shown++ < 5) {
			printf("# %s: pc %#llx: sfprof %d frames (%s), gdb %d\n",
			       exe, (unsigned long long)regs.ip, n,
			       sfp_unwind_stop_str(stop), ngdb);
			for (i = 0; i < (size_t)MAXF &&
				    (i < (size_t)n || i < (size_t)ngdb); i++)
				printf("#   %2zu %12llx %12llx\n", i,
				       i < (size_t)n ? (unsigned long long)fr[i].ip : 0,
				       i < (size_t)ngdb ? (unsigned long long)gdbf[i] : 0);
		}
	}
out:
	free(stack);
	free(line);
	if (f)
		fclose(f);
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
}

/* Build, run under qemu + gdb, compare.  Returns false on a harness
 * failure (already reported). */
static bool run_variant(const char *name, const char *flags, struct tally *t)
{
	char exe[1024], log[1100], cmd[4096], port[16];
	pid_t qemu;
	int st, p = free_port();

	snprintf(exe, sizeof(exe), "%s/nofp-%s", test_tmp_dir(), name);
	snprintf(log, sizeof(log), "%s.gdb", exe);
	snprintf(cmd, sizeof(cmd),
		 CROSS "gcc -O2 -fomit-frame-pointer -g -static %s -o '%s' "
		 "'%s/unwind-aarch64/nofp.c'", flags, exe, test_data_dir());
	if (!ASSERT_EQ(system(cmd), 0) || !ASSERT_GE(p, 1))
		return false;
	snprintf(port, sizeof(port), "%d", p);
	qemu = fork();
	if (qemu == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execlp("qemu-aarch64", "qemu-aarch64", "-g", port, exe,
		       (char *)NULL);
		_exit(127);
	}
	if (!ASSERT_TRUE(qemu > 0))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "SNAP_OUT='%s' SNAP_PORT=%s SNAP_FUNCS=%s gdb-multiarch -nx "
		 "-batch -ex 'file %s' -x '%s/unwind-aarch64/gdb-snap.py' "
		 "> '%s.out' 2>&1",
		 log, port, FUNCS, exe, test_data_dir(), log);
	st = system(cmd);
	/* gdb kills the program at the end; if it did not get that far,
	 * qemu is ours to end. */
	if (waitpid(qemu, NULL, WNOHANG) == 0) {
		kill(qemu, SIGKILL);
		waitpid(qemu, NULL, 0);
	}
	if (!ASSERT_EQ(st, 0))
		return false;
	compare_log(log, exe, t);
	return true;
}

static void check_variant(const char *name, const char *flags)
{
	struct tally t = { 0 };

	if (!ASSERT_EQ(system(CROSS "gcc --version > /dev/null 2>&1"), 0) ||
	    !ASSERT_EQ(system("qemu-aarch64 --version > /dev/null 2>&1"), 0) ||
	    !ASSERT_EQ(system("gdb-multiarch --version > /dev/null 2>&1"), 0))
		return;
	if (!run_variant(name, flags, &t))
		return;
	printf("# %s: %d breakpoints, %d stops, %d unwound as gdb (gdb's "
	       "tail-call frames left out: %d)\n", name, t.bps, t.stops,
	       t.same, t.tailcalls);
	/* Every breakpoint was hit (the program calls every function) and
	 * every stop unwinds to gdb's frames. */
	ASSERT_GE(t.stops, 100);
	ASSERT_EQ(t.stops, t.bps);
	ASSERT_EQ(t.same, t.stops);
}

TEST(unwind_aarch64_snapshots_match_gdb_cfi)
{
	/* No .sframe: sfprof builds the table from .eh_frame. */
	check_variant("cfi", "");
}

TEST(unwind_aarch64_snapshots_match_gdb_gas_sframe)
{
	/* gas's own table (binutils 2.40: SFrame v1). */
	check_variant("sframe", "-Wa,--gsframe");
}
