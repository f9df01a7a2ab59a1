// SPDX-License-Identifier: MIT
/*
 * `sfprof unwind --pid PID`: print the current stack of every thread of a
 * live process, like eu-stack.  Each thread is stopped briefly with
 * PTRACE_SEIZE + PTRACE_INTERRUPT (all of them first, so that the stacks
 * are one consistent moment), its registers are read, the stacks are
 * unwound from the process's memory with sfprof's unwinder, and the
 * threads are let go before anything is symbolized.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/symbols.h>
#include <sfprof/unwind.h>

#include "cli.h"

#define MAX_THREADS 4096

struct thread {
	pid_t tid;
	bool stopped;
	bool have_regs;
	struct sfp_regs regs;
	struct sfp_frame *frames;
	int nr;
	enum sfp_unwind_stop stop;
	char comm[32];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof unwind -p PID [--max-depth N] [--no-fp] [-r]\n"
		"\n"
		"Print the call stacks of all threads of a running process.  The\n"
		"threads are stopped briefly with ptrace (needs the same user and\n"
		"kernel.yama.ptrace_scope permitting, or CAP_SYS_PTRACE).  Stacks\n"
		"are unwound with SFrame tables (the ELF's .sframe, else built from\n"
		".eh_frame), frame pointers where no table covers a PC.\n"
		"\n"
		"  -p, --pid PID        process to unwind\n"
		"  -t, --tid TID        only this thread\n"
		"  -d, --max-depth N    at most N frames per thread (default 512)\n"
		"      --no-fp          no frame-pointer fallback\n"
		"  -r, --raw            addresses only, no symbols\n"
		"  -v, --verbose        library diagnostics\n"
		"  -h, --help           this help\n"
		"\n"
		"Output: one block per thread, frames as '#N 0xADDR symbol+off (file)';\n"
		"#0 is the thread's PC, the others return addresses.  The last line\n"
		"of a block says why the walk stopped.\n");
}

static int list_threads(pid_t pid, pid_t only, struct thread **out, int *nr)
{
	char path[64];
	struct dirent *de;
	struct thread *t = NULL;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	t = calloc(MAX_THREADS, sizeof(*t));
	if (!t) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && n < MAX_THREADS) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		FILE *f;

		if (*end || tid <= 0 || (only && tid != only))
			continue;
		t[n].tid = (pid_t)tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", (int)pid,
			 tid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(t[n].comm, sizeof(t[n].comm), f))
				t[n].comm[strcspn(t[n].comm, "\n")] = 0;
			fclose(f);
		}
		n++;
	}
	closedir(d);
	*out = t;
	*nr = n;
	return 0;
}

/* Stop a thread without signalling it; false if it is gone or forbidden. */
static bool stop_thread(struct thread *t)
{
	int status;

	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL))
		return false;
	t->stopped = true;
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL))
		return false;
	for (;;) {
		if (waitpid(t->tid, &status, __WALL) < 0)
			return errno == EINTR ? false : false;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->stopped = false;
			return false;
		}
		if (WIFSTOPPED(status)) {
			/* A signal arrived first: it is re-delivered on
			 * detach (we pass it back), then we wait for our
			 * interrupt's stop. */
			int sig = WSTOPSIG(status);

			if ((status >> 16) == PTRACE_EVENT_STOP || sig == SIGTRAP)
				return true;
			if (ptrace(PTRACE_CONT, t->tid, NULL,
				   (void *)(long)sig))
				return false;
			ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
		}
	}
}

static void get_regs(struct thread *t)
{
#if defined(__x86_64__)
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return;
	t->regs.ip = r.rip;
	t->regs.sp = r.rsp;
	t->regs.fp = r.rbp;
	t->regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;
	t->have_regs = true;
#else
	(void)t;
#endif
}

static void print_frame(struct sfp_symbolizer *sym, struct sfp_addr_space *as,
			pid_t pid, int i, const struct sfp_frame *f, bool raw)
{
	struct sfp_map_info mi;
	struct sfp_symbolizer_dso *dso;
	struct sfp_symbol s;
	/* A return address may be one past its function's end: look up the
	 * call instruction instead. */
	uint64_t look = (f->flags & SFP_FRAME_EXACT) ? f->ip : f->ip - 1;
	uint64_t vaddr;

	const char *sig = (f->flags & SFP_FRAME_SIGNAL)       ? " [signal]"
			  : (f->flags & SFP_FRAME_TRAMPOLINE) ? " [trampoline]"
							      : "";

	printf("#%-3d 0x%016llx", i, (unsigned long long)f->ip);
	if (raw || sfp_addr_space__find(as, look, &mi) || !mi.path) {
		printf("%s\n", sig);
		return;
	}
	if (sym && mi.path[0] == '/' &&
	    !sfp_symbolizer__get_dso(sym, pid, mi.path, mi.build_id,
				     mi.build_id_len, &dso) &&
	    !sfp_symbolizer_dso__vaddr(dso, mi.start, mi.pgoff, look, &vaddr) &&
	    !sfp_symbolizer_dso__find(dso, vaddr, &s)) {
		printf(" %s+0x%llx", s.name,
		       (unsigned long long)(s.offset + (f->ip - look)));
	}
	printf(" (%s)%s\n", mi.path, sig);
}

/* The state letter of /proc/PID/stat (R, S, Z ...); 0 if unknown. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the command name may hold ')' and spaces: the last ')' ends it */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] ? rp[2] : 0;
}

int cmd_unwind(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "max-depth", required_argument, NULL, 'd' },
		{ "no-fp", no_argument, NULL, 'F' },
		{ "raw", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	SFP_OPTS(sfp_unwind_opts, uo);
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *rd = NULL;
	struct sfp_symbolizer *sym = NULL;
	struct thread *th = NULL;
	uint64_t pid = 0, tid = 0, depth = 512;
	bool raw = false;
	int c, i, nr = 0, err, ret = EXIT_INVALID, stopped = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:t:d:rvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_u64(optarg, &pid) || !pid ||
			    pid > INT32_MAX) {
				cli_err("bad --pid '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			if (!cli_parse_u64(optarg, &tid) || !tid ||
			    tid > INT32_MAX) {
				cli_err("bad --tid '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'd':
			if (!cli_parse_u64(optarg, &depth) || !depth ||
			    depth > 65536) {
				cli_err("bad --max-depth '%s' (1..65536)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'F':
			uo.no_fp_fallback = true;
			break;
		case 'r':
			raw = true;
			break;
		case 'v':
			cli_setup_logging(true);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!pid || optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((pid_t)pid == getpid()) {
		cli_err("cannot ptrace ourselves");
		return EXIT_USAGE;
	}
	uo.max_depth = (uint32_t)depth;

	err = sfp_reader__new_pid((pid_t)pid, &rd);
	if (err) {
		char st = proc_state((pid_t)pid);

		/* A zombie or a kernel thread has no user mappings (ENOENT
		 * from the library): say which, not "no entry". */
		cli_err("process %llu: %s", (unsigned long long)pid,
			st == 'Z' ? "is a zombie (it exited and was not yet "
				    "reaped): it has no memory or stack left"
			: err == -ESRCH || !st ? "no such process"
			: err == -EPERM ? "no ptrace access"
			: err == -ENOENT ? "has no user-space memory mappings "
					   "(a kernel thread?)"
			: sfp_strerror(err));
		return EXIT_INVALID;
	}
	err = list_threads((pid_t)pid, (pid_t)tid, &th, &nr);
	if (err || !nr) {
		cli_err("process %llu: no threads%s", (unsigned long long)pid,
			tid ? " with that tid" : "");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		if (stop_thread(&th[i])) {
			get_regs(&th[i]);
			stopped++;
		}
	}
	if (!stopped) {
		cli_err("process %llu: could not stop any thread: %s",
			(unsigned long long)pid, strerror(errno));
		goto detach;
	}
	err = sfp_addr_space__new(NULL, &as);
	if (!err)
		err = sfp_addr_space__load_pid(as, (pid_t)pid);
	if (err) {
		cli_err("process %llu: cannot read mappings: %s",
			(unsigned long long)pid, sfp_strerror(err));
		goto detach;
	}
	for (i = 0; i < nr; i++) {
		struct thread *t = &th[i];

		if (!t->have_regs)
			continue;
		t->frames = calloc(depth, sizeof(*t->frames));
		if (!t->frames)
			continue;
		t->nr = sfp_unwind(as, rd, &t->regs, t->frames, depth, &uo,
				   &t->stop);
	}
	ret = 0;
detach:
	for (i = 0; i < nr; i++)
		if (th[i].stopped)
			ptrace(PTRACE_DETACH, th[i].tid, NULL, NULL);
	if (ret)
		goto out;

	if (!raw) {
		SFP_OPTS(sfp_symbolizer_opts, so);
		if (sfp_symbolizer__new(&so, &sym))
			sym = NULL;
	}
	printf("PID %llu\n", (unsigned long long)pid);
	for (i = 0; i < nr; i++) {
		struct thread *t = &th[i];
		int k;

		printf("TID %d (%s):\n", (int)t->tid, t->comm);
		if (!t->have_regs) {
			printf("  (not stopped: %s)\n", "thread gone or ptrace denied");
			continue;
		}
		if (t->nr < 0) {
			printf("  (unwind failed: %s)\n", sfp_strerror(t->nr));
			continue;
		}
		for (k = 0; k < t->nr; k++)
			print_frame(sym, as, (pid_t)pid, k, &t->frames[k], raw);
		printf("  (stopped: %s)\n", sfp_unwind_stop_str(t->stop));
	}
out:
	if (th)
		for (i = 0; i < nr; i++)
			free(th[i].frames);
	free(th);
	sfp_symbolizer__free(&sym);
	sfp_addr_space__free(&as);
	sfp_reader__free(&rd);
	return ret;
}
