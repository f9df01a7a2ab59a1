// SPDX-License-Identifier: MIT
/*
 * Unwinding perf's dwarf-mode snapshots with sfprof's SFrame-first
 * unwinder (see dwarf.h).  perf copies the user registers named by
 * attr.sample_regs_user, in mask order, and `dyn_size` valid stack bytes
 * starting at the user sp; that is exactly a snapshot reader's input.
 */
#include <sfprof/unwind.h>

#include "common/idmap.h"
#include "perf/dwarf.h"
#include "perf/machine.h"

#define MISC_MMAP_DATA (1u << 13)
#define MISC_COMM_EXEC (1u << 13)

struct aspace {
	uint32_t pid;		/* first: the id table's key */
	struct sfp_addr_space *as;
};

/*
 * Where the last walk of a thread read its return addresses (absolute
 * stack addresses, one per cache line).  A thread's outer frames stay put
 * from one sample to the next, so the next snapshot of that thread is
 * read at mostly the same addresses.
 */
#define HIST_SLOTS 256
#define HIST_LINES 48

struct thist {
	uint32_t tid;
	uint32_t n;
	uint64_t line[HIST_LINES];
};

struct sfp_perf_unwinder {
	const struct sfp_perf_header_info *hdr;
	/* The recording machine's architecture (HEADER_ARCH), which says
	 * whose perf_regs order the user registers are in and which
	 * unwinder walks the snapshots; decided at the first record that
	 * needs it (a pipe's header features arrive as records). */
	enum { ARCH_UNDECIDED, ARCH_KNOWN, ARCH_UNSUPPORTED } arch_state;
	enum sfp_arch arch;
	bool arch_warned;
	struct thist *hist;
	struct sfp_idmap tab;	/* struct aspace by pid */
	struct sfp_reader *rd;
	struct sfp_frame frames[SFP_PERF_MAX_STACK];
	uint64_t stops[SFP_STOP__MAX];
};

/*
 * The architecture the samples were recorded on, from perf's HEADER_ARCH
 * (uname's machine there).  A file without it (a minimal or cut-off one)
 * is taken as recorded on this host.  Any other machine's registers and
 * stack layout are not ours to guess: those samples fail the read.
 */
static bool decide_arch(struct sfp_perf_unwinder *u)
{
	const char *a = u->hdr ? u->hdr->arch : NULL;

	if (u->arch_state != ARCH_UNDECIDED)
		return u->arch_state == ARCH_KNOWN;
	u->arch_state = ARCH_KNOWN;
	if (!a || !*a)
		u->arch = SFP_ARCH_HOST;
	else if (!strcmp(a, "x86_64") || !strcmp(a, "amd64"))
		u->arch = SFP_ARCH_X86_64;
	else if (!strcmp(a, "aarch64") || !strcmp(a, "arm64"))
		u->arch = SFP_ARCH_AARCH64;
	else
		u->arch_state = ARCH_UNSUPPORTED;
	return u->arch_state == ARCH_KNOWN;
}

/* The process's address space, created when asked to. */
static struct sfp_addr_space *space(struct sfp_perf_unwinder *u, uint32_t pid,
				    bool create)
{
	struct aspace *a = sfp_idmap_find(&u->tab, pid);
	bool added;

	if (a || !create)
		return a ? a->as : NULL;
	a = sfp_idmap_get(&u->tab, pid, &added);
	if (!a)
		return NULL;
	SFP_OPTS(sfp_addr_space_opts, ao, .arch = (uint8_t)u->arch);
	if (sfp_addr_space__new(&ao, &a->as)) {
		sfp_idmap_delete(&u->tab, a);
		return NULL;
	}
	return a->as;
}

SFP_HIDDEN int sfp_perf_unwinder__new(const struct sfp_perf_header_info *hdr,
				      struct sfp_perf_unwinder **out)
{
	struct sfp_perf_unwinder *u = calloc(1, sizeof(*u));
	int err;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->hdr = hdr;
	/* 64 slots at a load of 1/2: what the table had by hand */
	sfp_idmap_init(&u->tab, sizeof(struct aspace), 64, 50);
	err = sfp_reader__new_snapshot("", 0, 0, &u->rd);
	if (err) {
		free(u);
		return err;
	}
	*out = u;
	return 0;
}

SFP_HIDDEN bool sfp_perf_unwinder__wanted(const struct sfp_perf_reader *r)
{
	const struct sfp_perf_header_info *h = sfp_perf_reader__header(r);
	size_t i, n = sfp_perf_reader__nr_evsels(r);

	if (!h || h->pipe_mode || !n)
		return true;
	for (i = 0; i < n; i++)
		if (sfp_perf_reader__evsel(r, i)->attr.sample_type &
		    SFP_PERF_SAMPLE_STACK_USER)
			return true;
	return false;
}

SFP_HIDDEN void sfp_perf_unwinder__free(struct sfp_perf_unwinder **up)
{
	struct sfp_perf_unwinder *u;
	struct aspace *a;
	size_t pos = 0;

	if (!up || !*up)
		return;
	u = *up;
	while ((a = sfp_idmap_next(&u->tab, &pos)))
		sfp_addr_space__free(&a->as);
	sfp_idmap_free(&u->tab);
	sfp_reader__free(&u->rd);
	free(u->hist);
	free(u);
	*up = NULL;
}

SFP_HIDDEN int sfp_perf_unwinder__event(struct sfp_perf_unwinder *u,
					const struct sfp_perf_event *ev)
{
	struct sfp_addr_space *as;

	switch (ev->type) {
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2: {
		struct sfp_map m = { 0 };
		char pathbuf[4096];

		if (ev->mmap.pid == UINT32_MAX || !ev->mmap.len)
			return 0;	/* kernel maps: not ours to unwind */
		if (!decide_arch(u))
			return 0;	/* the first snapshot says why */
		as = space(u, ev->mmap.pid, true);
		if (!as)
			return -ENOMEM;
		m.start = ev->mmap.start;
		if (sfp_add_overflow(ev->mmap.start, ev->mmap.len, &m.end))
			return 0;
		m.pgoff = ev->mmap.pgoff;
		if (ev->type == SFP_PERF_RECORD_MMAP2)
			m.prot = ev->mmap.prot & 7;
		else
			m.prot = (ev->misc & MISC_MMAP_DATA) ? SFP_MAP_READ :
					SFP_MAP_READ | SFP_MAP_EXEC;
		if (ev->type == SFP_PERF_RECORD_MMAP2 &&
		    (ev->misc & SFP_PERF_MISC_MMAP_BUILD_ID) &&
		    ev->mmap.build_id_size) {
			m.build_id = ev->mmap.build_id;
			m.build_id_len = ev->mmap.build_id_size;
		}
		/* the copy perf cached at record time, if there is one */
		m.path = sfp_perf_dso_path(u->hdr, ev->mmap.filename, m.build_id,
					   m.build_id_len, pathbuf,
					   sizeof(pathbuf));
		return sfp_addr_space__add_map(as, &m) == -ENOMEM ? -ENOMEM : 0;
	}
	case SFP_PERF_RECORD_FORK: {
		struct sfp_addr_space *parent, *child;
		struct aspace *a;
		bool added;

		if (ev->fork.pid == ev->fork.ppid)
			return 0;	/* a thread shares its process's maps */
		parent = space(u, ev->fork.ppid, false);
		if (!parent || space(u, ev->fork.pid, false))
			return 0;
		if (sfp_addr_space__fork(parent, &child))
			return -ENOMEM;
		a = sfp_idmap_get(&u->tab, ev->fork.pid, &added);
		if (!a) {
			/* as before: no room for the child, no child */
			sfp_addr_space__free(&child);
			return 0;
		}
		a->as = child;
		return 0;
	}
	case SFP_PERF_RECORD_COMM:
		if ((ev->misc & MISC_COMM_EXEC) &&
		    (as = space(u, ev->comm.pid, false)))
			sfp_addr_space__exec(as);
		return 0;
	default:
		return 0;
	}
}

/*
 * Whether the sample has user registers and stack bytes.  Which registers
 * are ip and sp depends on the recording's architecture: the unwind reads
 * them (and returns no frames when one is missing).
 */
SFP_HIDDEN bool sfp_perf_sample_has_snapshot(const struct sfp_perf_sample *s)
{
	return s->user_regs_abi && s->user_regs && s->user_regs_mask &&
	       s->user_stack && s->user_stack_dyn_size;
}

/*
 * Start loading the snapshot lines this thread's last walk read, before
 * walking: the walk is a serial chain (each return address gives the next
 * frame), so lines it would miss one after another arrive together.
 * Return: the thread's history slot (NULL: no memory for one).
 */
static struct thist *hist_prefetch(struct sfp_perf_unwinder *u,
				   const struct sfp_perf_sample *s, uint64_t sp)
{
	const uint8_t *stack = s->user_stack;
	struct thist *h;
	uint32_t k;

	if (!u->hist) {
		u->hist = calloc(HIST_SLOTS, sizeof(*u->hist));
		if (!u->hist)
			return NULL;
	}
	h = &u->hist[(s->tid ^ (s->tid >> 8)) % HIST_SLOTS];
	if (h->tid != s->tid)
		return h;
	for (k = 0; k < h->n; k++) {
		uint64_t off = h->line[k] - sp;

		if (off < s->user_stack_dyn_size)
			__builtin_prefetch(stack + off);
	}
	return h;
}

/* Remember the lines of the return-address slots of this walk. */
static void hist_record(struct thist *h, uint32_t tid,
			const struct sfp_frame *f, int n)
{
	uint64_t last = 0;
	int i;

	h->tid = tid;
	h->n = 0;
	for (i = 1; i < n && h->n < HIST_LINES; i++) {
		/* frame i's sp is the CFA of frame i - 1: the return
		 * address sits just below it, a saved FP below that */
		uint64_t a = (f[i].sp - 16) & ~63ull;

		if (a == last)
			continue;
		h->line[h->n++] = a;
		last = a;
	}
}

SFP_HIDDEN int sfp_perf_unwinder__unwind(struct sfp_perf_unwinder *u,
					 const struct sfp_perf_event *ev,
					 uint64_t **ips, size_t *cap,
					 bool callsite)
{
	const struct sfp_perf_sample *s = &ev->sample;
	struct sfp_regs regs = { 0 };
	enum sfp_unwind_stop stop = SFP_STOP_NONE;
	struct sfp_addr_space *as;
	struct thist *h;
	int n, i;

	if (!sfp_perf_sample_has_snapshot(s))
		return 0;
	if (!decide_arch(u)) {
		if (!u->arch_warned)
			pr_warn("perf.data recorded on '%s': its user stack "
				"snapshots (--call-graph dwarf) can be unwound "
				"only for x86_64 and aarch64", u->hdr->arch);
		u->arch_warned = true;
		return -EOPNOTSUPP;
	}
	/* the registers in the recording machine's perf_regs order
	 * (x86-64: bp 6, sp 7, ip 8; arm64: x29 29, lr 30, sp 31, pc 32) */
	if (sfp_regs__from_perf(u->arch, s->user_regs_mask, s->user_regs,
				(size_t)__builtin_popcountll(s->user_regs_mask),
				&regs))
		return 0;
	if (*cap < SFP_PERF_MAX_STACK) {
		uint64_t *v = realloc(*ips, SFP_PERF_MAX_STACK * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*ips = v;
		*cap = SFP_PERF_MAX_STACK;
	}
	as = space(u, s->pid, false);
	if (!as) {
		(*ips)[0] = regs.ip;	/* nothing mapped: the ip alone */
		return 1;
	}
	if (sfp_reader__set_snapshot(u->rd, s->user_stack,
				     (size_t)s->user_stack_dyn_size, regs.sp))
		return 0;
	h = hist_prefetch(u, s, regs.sp);
	n = sfp_unwind(as, u->rd, &regs, u->frames, SFP_PERF_MAX_STACK, NULL,
		       &stop);
	if (h)
		hist_record(h, s->tid, u->frames, n);
	if (n < 0) {
		(*ips)[0] = regs.ip;
		return 1;
	}
	if (stop < SFP_STOP__MAX)
		u->stops[stop]++;
	for (i = 0; i < n; i++) {
		uint64_t ip = u->frames[i].ip;

		/* perf shows a caller frame at its call instruction (ra - 1),
		 * not after it, unless the frame was interrupted (signal) */
		if (callsite && i > 0 && ip &&
		    !(u->frames[i].flags & SFP_FRAME_EXACT) &&
		    !(u->frames[i - 1].flags & SFP_FRAME_SIGNAL))
			ip--;
		(*ips)[i] = ip;
	}
	return n;
}

SFP_HIDDEN const uint64_t *sfp_perf_unwinder__stops(const struct sfp_perf_unwinder *u,
						    size_t *n)
{
	*n = SFP_STOP__MAX;
	return u->stops;
}
