// SPDX-License-Identifier: MIT
/*
 * Loading and attaching the BPF side of `--call-graph bpf-defer`: the
 * object built at `make` time (defer.bpf.c, embedded as a bpftool
 * skeleton), checked against what this kernel offers before it is loaded,
 * so that a missing feature is a clear message rather than a verifier log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/bpf-int.h"
#include "elf/needed.h"
#include "defer.skel.h"

#define DEFAULT_FDES (1U << 18)
#define DEFAULT_FRES (1U << 20)
/*
 * Kernel frames of a stack taken in the program on sched_switch that are
 * not the switched-out task's (bpf_trace_run4() and the tracepoint's
 * __bpf_trace_sched_switch(), seen with `sfprof script` on 6.18): skipped,
 * so that the chain begins at __schedule() as perf's sched:sched_switch
 * samples do (the tracepoint path's).
 */
#define OFFCPU_KSKIP 2

static const char *const kfunc_name = "bpf_task_work_schedule_resume_impl";

/*
 * libbpf's messages go to the debug log (-v): its warnings on a failed
 * load are many lines (the whole verifier log); what the user needs is
 * one line, the verifier's reason, which is kept here for the message of
 * sfp_bpf_defer__load().
 */
static char verifier_reason[512];
static char libbpf_last[512];

/*
 * The verifier's reason: the last line of its log that is neither an
 * instruction ("12: (79) ..."), a source line ("; ..."), a register state
 * nor the closing statistics.  A kfunc whose callback failed says only
 * that ("kfunc K#ID failed callback verification"); the line before says
 * why (6.18.44 here: "sleepable callback in a program that is not
 * sleepable", a task_work callback in a perf_event program), and is
 * named after it.
 */
static void keep_verifier_reason(const char *log)
{
	const char *p = strstr(log, "-- BEGIN PROG LOAD LOG --"), *nl;
	const char *last = NULL, *prev = NULL;
	size_t last_n = 0, prev_n = 0;

	if (!p)
		return;
	for (p = strchr(p, '\n'); p && *p; p = nl) {
		size_t n;

		p++;
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (!n || (*p >= '0' && *p <= '9') || *p == ';' ||
		    *p == ' ' || !strncmp(p, "processed ", 10) ||
		    !strncmp(p, "verification time", 17) ||
		    !strncmp(p, "stack depth", 11) ||
		    !strncmp(p, "-- END", 6) || !strncmp(p, "func#", 5) ||
		    !strncmp(p, "from ", 5) || !strncmp(p, "Validating", 10))
			continue;
		prev = last;
		prev_n = last_n;
		last = p;
		last_n = n;
	}
	if (!last)
		return;
	if (prev && memmem(last, last_n, "failed callback verification", 28))
		snprintf(verifier_reason, sizeof(verifier_reason), "%.*s: %.*s",
			 (int)(last_n < 200 ? last_n : 200), last,
			 (int)(prev_n < 200 ? prev_n : 200), prev);
	else
		snprintf(verifier_reason, sizeof(verifier_reason), "%.*s",
			 (int)(last_n < 400 ? last_n : 400), last);
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char *buf = NULL, *line, *save = NULL;
	size_t n;

	if (level == LIBBPF_DEBUG || vasprintf(&buf, fmt, ap) < 0)
		return 0;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	if (level == LIBBPF_WARN) {
		keep_verifier_reason(buf);
		if (!strstr(buf, "-- BEGIN PROG LOAD LOG --"))
			snprintf(libbpf_last, sizeof(libbpf_last), "%s", buf);
	}
	/* line by line: the log callback's lines have a size limit, and a
	 * verifier log is long (libbpf says "libbpf: " itself) */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		pr_debug("%s", line);
	free(buf);
	return 0;
}

/* Does the running kernel have BTF and the task_work kfunc? */
static int probe_kernel(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id;

	if (!vmlinux) {
		pr_warn("bpf-defer: the kernel has no BTF (/sys/kernel/btf/"
			"vmlinux; CONFIG_DEBUG_INFO_BTF): use --call-graph "
			"sframe");
		return -EOPNOTSUPP;
	}
	id = btf__find_by_name_kind(vmlinux, kfunc_name, BTF_KIND_FUNC);
	btf__free(vmlinux);
	if (id < 0) {
		pr_warn("bpf-defer: this kernel lacks BPF task_work (kfunc %s, "
			"Linux 6.18+): use --call-graph sframe", kfunc_name);
		return -EOPNOTSUPP;
	}
	return 0;
}

int sfp_bpf_defer__load(const struct sfp_bpf_defer_opts *o,
			struct sfp_bpf_defer **out)
{
	struct sfp_bpf_defer *b;
	const char *env;
	uint32_t depth, ring;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	*out = NULL;
	if (!SFP_OPTS_VALID(o, sfp_bpf_defer_opts))
		return -EINVAL;
	err = probe_kernel();
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->fde_cap = SFP_OPTS_GET(o, sfp_bpf_defer_opts, max_fdes, 0);
	b->fre_cap = SFP_OPTS_GET(o, sfp_bpf_defer_opts, max_fres, 0);
	depth = SFP_OPTS_GET(o, sfp_bpf_defer_opts, max_depth, 0);
	if (!b->fde_cap)
		b->fde_cap = DEFAULT_FDES;
	if (!b->fre_cap)
		b->fre_cap = DEFAULT_FRES;
	if (!depth || depth > SFB_MAX_DEPTH)
		depth = SFB_MAX_DEPTH;
	if (b->fde_cap > (1U << 24) || b->fre_cap > (1U << 26)) {
		pr_warn("bpf-defer: table arrays too large");
		err = -EINVAL;
		goto fail;
	}
	libbpf_set_print(libbpf_log);
	b->skel = sfp_defer_bpf__open();
	if (!b->skel) {
		err = -errno ? -errno : -ENOMEM;
		pr_warn("bpf-defer: cannot open the BPF object: %s",
			strerror(-err));
		goto fail;
	}
	b->skel->rodata->max_depth = depth;
	ring = SFP_OPTS_GET(o, sfp_bpf_defer_opts, ring_bytes, 0);
	if (ring) {
		if (ring < (uint32_t)page || (ring & (ring - 1))) {
			pr_warn("bpf-defer: ring of %u bytes: not a power of "
				"two of at least a page", ring);
			err = -EINVAL;
			goto fail;
		}
		bpf_map__set_max_entries(b->skel->maps.rb, ring);
	}
	bpf_map__set_max_entries(b->skel->maps.fdes, b->fde_cap);
	bpf_map__set_max_entries(b->skel->maps.fres, b->fre_cap);
	/* user space writes the tables through mmap, not a syscall each */
	bpf_map__set_map_flags(b->skel->maps.fdes, BPF_F_MMAPABLE);
	bpf_map__set_map_flags(b->skel->maps.fres, BPF_F_MMAPABLE);
	/* Test hook (docs/record-bpf.md): lose every Nth callback. */
	env = getenv("SFPROF_BPF_TEST_DROP_CALLBACK");
	if (env)
		b->skel->rodata->test_drop_every = (uint32_t)strtoul(env, NULL, 0);
	/* Test hook (docs/record-bpf.md): every entry by task_work. */
	env = getenv("SFPROF_BPF_TEST_NO_WALK_AT_ONCE");
	if (env && *env && strcmp(env, "0"))
		b->skel->rodata->test_no_sync = 1;
	/* Test hook (docs/record-bpf.md): the mmap lock taken, user
	 * space's table of the VMAs only. */
	env = getenv("SFPROF_BPF_TEST_BUSY_USER_TABLE");
	if (env && *env && strcmp(env, "0"))
		b->skel->rodata->test_busy_user = 1;
	/* Test hook (docs/record-bpf.md): miss every Nth switch-in. */
	env = getenv("SFPROF_BPF_TEST_MISS_SWITCH_IN");
	if (env)
		b->skel->rodata->test_miss_in_every =
			(uint32_t)strtoul(env, NULL, 0);
	/* Test hook (docs/record-bpf.md): every block's entry walked. */
	env = getenv("SFPROF_BPF_TEST_NO_REUSE");
	if (env && *env && strcmp(env, "0"))
		b->skel->rodata->test_no_reuse = 1;
	/* --off-cpu: the programs on sched_switch, fork and exec; verified
	 * only then. */
	b->off_cpu = SFP_OPTS_GET(o, sfp_bpf_defer_opts, off_cpu, false);
	b->off_evsel = -1;
	bpf_program__set_autoload(b->skel->progs.on_switch, b->off_cpu);
	bpf_program__set_autoload(b->skel->progs.on_fork, b->off_cpu);
	bpf_program__set_autoload(b->skel->progs.on_exec, b->off_cpu);
	/* the blocks' last walks (1.8 MiB preallocated) only for them */
	if (!b->off_cpu)
		bpf_map__set_max_entries(b->skel->maps.walks, 1);
	b->skel->rodata->offcpu_all =
		SFP_OPTS_GET(o, sfp_bpf_defer_opts, off_cpu_all, false);
	b->skel->rodata->offcpu_follow =
		!SFP_OPTS_GET(o, sfp_bpf_defer_opts, no_inherit, false);
	b->skel->rodata->offcpu_kskip = OFFCPU_KSKIP;
	/* Test hook (docs/record-bpf.md): a real verifier rejection. */
	if (getenv("SFPROF_BPF_TEST_VERIFIER_REJECT"))
		bpf_program__set_autoload(b->skel->progs.verifier_reject, true);
	verifier_reason[0] = libbpf_last[0] = 0;
	err = sfp_defer_bpf__load(b->skel);
	if (err) {
		if (err == -EPERM && !verifier_reason[0])
			pr_warn("bpf-defer: not allowed to load BPF programs "
				"(run as root or with CAP_BPF + CAP_PERFMON)");
		else if (verifier_reason[0])
			pr_warn("bpf-defer: the kernel's verifier rejected the "
				"BPF program: %s (%s; the whole log with -v): "
				"use --call-graph sframe", verifier_reason,
				strerror(-err));
		else
			pr_warn("bpf-defer: the kernel refused the BPF object "
				"(%s; %s): use --call-graph sframe",
				strerror(-err),
				libbpf_last[0] ? libbpf_last : "no message");
		if (verifier_reason[0])
			err = -EINVAL;
		err = err == -EPERM ? -EPERM : -EINVAL;
		goto fail;
	}
	b->fde_len = ((size_t)b->fde_cap * sizeof(struct sfb_fde) + page - 1) &
		     ~(size_t)(page - 1);
	b->fre_len = ((size_t)b->fre_cap * sizeof(struct sfb_fre) + page - 1) &
		     ~(size_t)(page - 1);
	b->fde_mem = mmap(NULL, b->fde_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  bpf_map__fd(b->skel->maps.fdes), 0);
	b->fre_mem = mmap(NULL, b->fre_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  bpf_map__fd(b->skel->maps.fres), 0);
	if (b->fde_mem == MAP_FAILED || b->fre_mem == MAP_FAILED) {
		err = -errno;
		pr_warn("bpf-defer: mmap of the table arrays: %s",
			strerror(errno));
		goto fail;
	}
	b->vmas_fd = bpf_map__fd(b->skel->maps.vmas);
	err = sfb_uvmas__new(b);
	if (err)
		goto fail;
	err = sfb_tables__new(bpf_map__fd(b->skel->maps.mods), b->fde_mem,
			      b->fde_cap, b->fre_mem, b->fre_cap,
			      SFP_OPTS_GET(o, sfp_bpf_defer_opts, cache_dir,
					   NULL),
			      &b->tables);
	if (err)
		goto fail;
	b->obuf = malloc(65536);
	b->chain = malloc((SFB_MAX_KSTACK + 4) * sizeof(uint64_t));
	b->cookies = calloc(SFB_COOKIE_SLOTS, sizeof(*b->cookies));
	if (!b->obuf || !b->chain || !b->cookies) {
		err = -ENOMEM;
		goto fail;
	}
	*out = b;
	return 0;
fail:
	if (b->fde_mem == MAP_FAILED)
		b->fde_mem = NULL;
	if (b->fre_mem == MAP_FAILED)
		b->fre_mem = NULL;
	sfp_bpf_defer__free(&b);
	return err;
}

/* Libraries of the command's closure the preload takes at most (a
 * program needing more leaves the rest to its MMAP2 records). */
#define PRELOAD_MAX_LIBS 64

static int preload_lib(void *ctx, const char *path)
{
	/* a library without a table is no reason to stop */
	sfb_tables__ensure(ctx, path, 0, 0);
	return 0;
}

/*
 * The command's binary, found as execvp() would, and the libraries it
 * needs: a walk that meets one of those before user space has read the
 * command's MMAP2 records (its first threads, an allocator's locks at
 * startup: libasan's, 2 Dec 2026) is otherwise cut there, no frame
 * pointer to go on with.
 */
static int preload_command(struct sfp_bpf_defer *b, const char *cmd)
{
	char path[4096];
	const char *dirs, *p;

	if (strchr(cmd, '/')) {
		snprintf(path, sizeof(path), "%s", cmd);
		goto found;
	}
	dirs = getenv("PATH");
	for (p = dirs ? dirs : "/usr/bin:/bin"; p && *p;) {
		size_t n = strcspn(p, ":");

		snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, cmd);
		if (!access(path, X_OK))
			goto found;
		p += n;
		if (*p)
			p++;
	}
	return 0;
found:
	sfb_tables__ensure(b->tables, path, 0, 0);
	/* a script or an unreadable file: nothing more to know */
	sfp_elf_needed_closure(path, PRELOAD_MAX_LIBS, preload_lib, b->tables);
	return 0;
}

/* Targets of the off-CPU program: "ID[,ID...]" as kind. */
static int add_targets(struct sfp_bpf_defer *b, const char *list, uint32_t kind)
{
	const char *s = list;

	while (s && *s) {
		char *end;
		long id = strtol(s, &end, 10);

		if (end == s)
			break;
		if (id > 0 && bpf_map_update_elem(bpf_map__fd(b->skel->maps.targets),
						  &(uint32_t){ (uint32_t)id },
						  &kind, BPF_ANY))
			return -errno;
		s = *end ? end + 1 : end;
	}
	return 0;
}

/* --off-cpu: the targets, then the programs on sched_switch, fork, exec. */
static int attach_off_cpu(struct sfp_bpf_defer *b, struct sfp_record *r,
			  const char *pids, const char *tids)
{
	pid_t w = sfp_record__workload_pid(r);
	char wbuf[16];
	int err;

	snprintf(wbuf, sizeof(wbuf), "%d", (int)w);
	err = add_targets(b, pids, SFB_TGT_PROCESS);
	if (!err)
		err = add_targets(b, tids, SFB_TGT_THREAD);
	if (!err && w > 0)
		err = add_targets(b, wbuf, SFB_TGT_AT_EXEC);
	if (err) {
		pr_warn("bpf-defer: off-CPU targets: %s", strerror(-err));
		return err;
	}
	b->skel->links.on_fork = bpf_program__attach(b->skel->progs.on_fork);
	b->skel->links.on_exec = bpf_program__attach(b->skel->progs.on_exec);
	b->skel->links.on_switch = bpf_program__attach(b->skel->progs.on_switch);
	if (!b->skel->links.on_fork || !b->skel->links.on_exec ||
	    !b->skel->links.on_switch) {
		err = -errno ? -errno : -EINVAL;
		pr_warn("bpf-defer: attaching to sched_switch: %s",
			strerror(-err));
		return err;
	}
	return 0;
}

int sfp_bpf_defer__attach(struct sfp_bpf_defer *b, struct sfp_record *r,
			  struct sfp_rec_pipe *p, const char *const *argv,
			  const char *pids, const char *tids)
{
	const char *p_;
	const int *fds;
	size_t nr = sfp_record_fds(r, &fds), k = 0;
	int ev, err;

	b->r = r;
	b->p = p;
	b->links = calloc(nr ? nr : 1, sizeof(*b->links));
	if (!b->links)
		return -ENOMEM;
	for (ev = 0; ev < sfp_record__nr_evsels(r); ev++) {
		const uint64_t *ids;
		size_t i, n = sfp_record__ids(r, ev, &ids);

		/* the off-CPU event only names the file's offcpu-time
		 * samples (a bpf-output event that never fires) */
		if (ev == sfp_record__off_cpu_evsel(r)) {
			k += n;
			continue;
		}

		/* A perf_event program cannot sit on a tracepoint (that takes
		 * a tracepoint program, and its RAW data would be lost). */
		if (sfp_record__attr(r, ev)->type == PERF_TYPE_TRACEPOINT) {
			pr_warn("bpf-defer: tracepoint event '%s' is not "
				"supported; use --call-graph sframe for "
				"tracepoints", sfp_record__evsel_name(r, ev));
			return -EOPNOTSUPP;
		}

		for (i = 0; i < n && k < nr; i++, k++) {
			LIBBPF_OPTS(bpf_perf_event_opts, po,
				    .bpf_cookie = (uint64_t)ev);
			struct bpf_link *l;

			l = bpf_program__attach_perf_event_opts(
				b->skel->progs.on_sample, fds[k], &po);
			if (!l) {
				err = -errno;
				pr_warn("bpf-defer: attaching to event '%s': %s",
					sfp_record__evsel_name(r, ev),
					strerror(-err));
				return err;
			}
			b->links[b->nr_links++] = l;
			/* libbpf enables the event when it attaches; the
			 * session enables it at start (or at exec). */
			ioctl(fds[k], PERF_EVENT_IOC_DISABLE, 0);
		}
	}
	b->ring = ring_buffer__new(bpf_map__fd(b->skel->maps.rb),
				   sfb_ring_record, b, NULL);
	if (!b->ring) {
		err = -errno;
		pr_warn("bpf-defer: ring buffer: %s", strerror(-err));
		return err;
	}
	/*
	 * Tables before the first sample: the command's own binary and what
	 * the libc and ld.so this process maps (the command's are the same
	 * files, nearly always), not our other libraries (they would take
	 * room in the arrays for nothing).  Later mappings come through MMAP2
	 * and through the BPF side's reports of modules without a table.
	 */
	/* The vDSO is the same image in every process: ours. */
	sfb_tables__ensure(b->tables, "[vdso]", SFB_VDSO_DEV, SFB_VDSO_INO);
	if (argv && argv[0])
		preload_command(b, argv[0]);
	/* The command and -a: libc and ld.so are nearly everyone's (with
	 * -a, the processes already running would otherwise meet them
	 * without a table until their first unwinds have reported them). */
	if (!pids && !tids) {
		sfb_tables__preload_pid(b->tables, getpid(), "libc.so");
		sfb_tables__preload_pid(b->tables, getpid(), "ld-linux");
	}
	for (p_ = pids; p_ && *p_;) {
		char *end;
		long pid = strtol(p_, &end, 10);

		if (end == p_)
			break;
		if (pid > 0)
			sfb_tables__preload_pid(b->tables, (pid_t)pid, NULL);
		p_ = *end ? end + 1 : end;
	}
	/* Every executable VMA of the processes already running, for the
	 * walks that find the mmap lock taken (the command's come with its
	 * MMAP2 records). */
	if (!argv || !argv[0]) {
		err = sfb_uvmas__attach(b, pids, tids);
		if (err)
			pr_warn("bpf-defer: reading the processes' VMAs: %s "
				"(the walks that find the mmap lock taken "
				"only have the VMAs met before)",
				strerror(-err));
	}
	/*
	 * The programs on sched_switch last, once the tables are in: they
	 * run at once (the perf events wait for the start), and a block of
	 * a -p process walked before its tables were loaded lost its user
	 * stack after the first frame (its main thread's first blocks, in
	 * 10 of 10 runs of run-offcpu.sh's -p section).
	 */
	if (b->off_cpu) {
		b->off_evsel = sfp_record__off_cpu_evsel(r);
		if (b->off_evsel < 0) {
			pr_warn("bpf-defer: --off-cpu without the session's "
				"off-CPU event");
			return -EINVAL;
		}
		err = attach_off_cpu(b, r, pids, tids);
		if (err)
			return err;
	}
	return 0;
}

void sfp_bpf_defer__stats(const struct sfp_bpf_defer *b,
			  struct sfp_bpf_defer_stats *st)
{
	struct sfb_tables_stats ts;
	int ncpu = libbpf_num_possible_cpus();
	uint32_t k;

	*st = b->st;
	if (b->tw)
		sfb_worker__stats(b, &ts, &st->tables_pending,
				  &st->tables_dropped);
	else
		sfb_tables__stats(b->tables, &ts);
	st->tables_loaded = ts.loaded;
	st->tables_evicted = ts.evicted;
	st->tables_failed = ts.failed;
	if (!b->skel || ncpu <= 0 || ncpu > 4096)
		return;
	{
		struct bpf_program *progs[] = { b->skel->progs.on_sample,
						b->skel->progs.on_switch };
		size_t i;

		for (i = 0; i < 2; i++) {
			struct bpf_prog_info pi;
			uint32_t len = sizeof(pi);
			int fd = bpf_program__fd(progs[i]);

			memset(&pi, 0, sizeof(pi));
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &len))
				st->prog_misses += pi.recursion_misses;
		}
	}
	_Static_assert(SFB_ST__MAX <= SFP_BPF_KSTATS,
		       "struct sfp_bpf_defer_stats: kernel[] too small");
	for (k = 0; k < SFB_ST__MAX; k++) {
		uint64_t v[4096];
		int c;

		if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stats), &k,
					v))
			continue;
		for (c = 0; c < ncpu; c++)
			st->kernel[k] += v[c];
	}
}

void sfp_bpf_defer__free(struct sfp_bpf_defer **bp)
{
	struct sfp_bpf_defer *b = *bp;
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nr_links; i++)
		bpf_link__destroy(b->links[i]);
	ring_buffer__free(b->ring);
	sfb_worker__stop(b);
	sfb_uvmas__free(b);
	sfb_tables__free(&b->tables);
	if (b->fde_mem)
		munmap(b->fde_mem, b->fde_len);
	if (b->fre_mem)
		munmap(b->fre_mem, b->fre_len);
	sfp_defer_bpf__destroy(b->skel);
	for (i = 0; i < b->held_cap; i++)
		free(b->held[i].d);
	free(b->held);
	for (i = 0; i < SFB_NR_RECENT; i++)
		free(b->recent[i].d);
	free(b->links);
	free(b->obuf);
	free(b->chain);
	free(b->cookies);
	free(b);
	*bp = NULL;
}
