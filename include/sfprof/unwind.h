/* SPDX-License-Identifier: MIT */
/*
 * sfprof unwinder: turn (registers, memory) into a user call chain, SFrame
 * first, frame pointers as the fallback.
 *
 * Three objects take part in an unwind:
 *
 *  - struct sfp_regs: the registers of the topmost frame (ip, sp, fp and,
 *    for architectures that keep the return address in a register, lr);
 *  - struct sfp_reader: where memory is read from: a stack snapshot (bytes
 *    plus the sp they start at, as in PERF_SAMPLE_STACK_USER), a live
 *    process (process_vm_readv) or the calling process itself (reads that
 *    fail cleanly instead of faulting);
 *  - struct sfp_addr_space: the modules mapped in the process (start, end,
 *    file offset, path, build-id, load bias), each with its SFrame table,
 *    loaded lazily on first use: the ELF's own .sframe, else a table built
 *    from its .eh_frame (cached on disk by build-id).
 *
 * sfp_unwind() walks from the registers and returns the frames and the
 * reason it stopped.  sfp_backtrace() is the in-process shortcut, safe in
 * signal handlers once sfp_backtrace_init() has run.
 *
 * Threading and ownership:
 *  - A reader and an address space are used by one thread at a time
 *    (unwinding updates the address space's PC cache and loads tables
 *    lazily).  Different address spaces may be used concurrently: the
 *    modules they share (same path and build-id) are reference-counted and
 *    loaded under a lock.
 *  - A snapshot reader borrows the bytes it is given; they must stay valid
 *    until the reader is freed or re-pointed with sfp_reader__set_snapshot().
 *  - Strings passed in (paths) are copied.
 *  - sfp_backtrace() may run in any thread and in signal handlers.
 *    sfp_backtrace_init() and _refresh() take a lock (any thread, never in
 *    a signal handler); sfp_backtrace_fini() must not overlap any
 *    sfp_backtrace() call.
 */
#ifndef SFPROF_UNWIND_H
#define SFPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- Registers. --- */

enum sfp_arch {
	SFP_ARCH_HOST = 0,	/* the architecture sfprof was built for */
	SFP_ARCH_X86_64 = 1,
	SFP_ARCH_AARCH64 = 2,	/* on any host: stacks recorded on arm64 */
	SFP_ARCH_S390X = 3,	/* reserved: -EOPNOTSUPP for now */
};

/* Which members of struct sfp_regs hold a value. */
#define SFP_REGS_IP 0x1
#define SFP_REGS_SP 0x2
#define SFP_REGS_FP 0x4
#define SFP_REGS_LR 0x8

/*
 * Registers of the topmost frame.  ip and sp are required; fp is needed for
 * FP-based rows and the frame-pointer fallback; lr is the link register of
 * architectures that have one (AArch64 x30, s390x r14).
 */
struct sfp_regs {
	uint64_t ip;
	uint64_t sp;
	uint64_t fp;
	uint64_t lr;
	uint32_t valid;		/* SFP_REGS_* */
};

/*
 * Fill regs from a perf sample's user registers (PERF_SAMPLE_REGS_USER):
 * mask is the event's sample_regs_user (the sample's abi must not be
 * PERF_SAMPLE_REGS_ABI_NONE), vals the nr values the sample carries, one per
 * set bit in ascending bit order.  x86-64 numbering (perf_regs.h): BP 6,
 * SP 7, IP 8.  AArch64 (arch/arm64 perf_regs.h; samples recorded on arm64
 * can be read on any host): X29 29 (fp), LR 30 (lr), SP 31, PC 32.
 *
 * Return: 0; -ENOENT ip or sp not sampled; -EINVAL nr does not match the
 * mask; -EOPNOTSUPP arch (s390x).
 */
SFP_API int sfp_regs__from_perf(enum sfp_arch arch, uint64_t mask,
				const uint64_t *vals, size_t nr,
				struct sfp_regs *regs);

/* --- Memory readers. --- */

struct sfp_reader;

/*
 * A reader over a stack snapshot: size bytes that were copied from sp
 * upwards.  The bytes are borrowed (not copied).  Reads below sp fail with
 * -EFAULT, reads reaching past the end with -ERANGE (snapshot exhausted).
 */
SFP_API int sfp_reader__new_snapshot(const void *stack, size_t size,
				     uint64_t sp, struct sfp_reader **out);

/* Point a snapshot reader at another snapshot (no allocation). */
SFP_API int sfp_reader__set_snapshot(struct sfp_reader *r, const void *stack,
				     size_t size, uint64_t sp);

/*
 * Give a snapshot reader a second region: len bytes of the same thread's
 * memory at addr, taken at the same instant as the stack -- another stack
 * that the frame-pointer chain leads to (Go's g0 stack and a goroutine's:
 * on g0 the frame pointer points into the goroutine's stack, which lies
 * anywhere in the heap).  A walk over such a reader may step from one
 * region into the other once, even downwards; without a second region the
 * walk is as before.  The bytes are borrowed like the stack's;
 * sfp_reader__set_snapshot() drops the region.
 *
 * Return: 0; -EINVAL not a snapshot reader, or the region overlaps the
 * stack.
 */
SFP_API int sfp_reader__set_other_stack(struct sfp_reader *r,
					const void *bytes, size_t len,
					uint64_t addr);

/*
 * A reader over a live process, through process_vm_readv().  The caller
 * needs ptrace access to pid (same user and a permissive
 * kernel.yama.ptrace_scope, or CAP_SYS_PTRACE); this is checked here.
 *
 * Return: 0; -ESRCH no such process; -EPERM no ptrace access; -ENOMEM.
 */
SFP_API int sfp_reader__new_pid(pid_t pid, struct sfp_reader **out);

/*
 * A reader over the calling process.  Unmapped or unreadable addresses
 * fail with -EFAULT instead of crashing.
 */
SFP_API int sfp_reader__new_self(struct sfp_reader **out);

/*
 * Read len bytes at addr.
 *
 * Return: 0; -EFAULT unreadable; -ERANGE past the end of a snapshot.
 */
SFP_API int sfp_reader__read(struct sfp_reader *r, uint64_t addr, void *buf,
			     size_t len);

SFP_API void sfp_reader__free(struct sfp_reader **r);

/* --- Address spaces. --- */

struct sfp_addr_space;

struct sfp_addr_space_opts {
	size_t sz;
	uint8_t arch;		/* enum sfp_arch; 0: host */
	/* Directory for tables built from .eh_frame; NULL: the default
	 * ($SFPROF_CACHE_DIR, else ~/.cache/sfprof). */
	const char *cache_dir;
	bool no_cache;		/* build tables in memory only */
	/* Entries of the PC -> row cache (rounded up to a power of two;
	 * 0: 1024). */
	uint32_t cache_entries;
	/* Prefix for paths of mapped files (e.g. a container's root). */
	const char *root_dir;
	/*
	 * The process whose mappings these are (sfp_addr_space__load_pid()
	 * sets it): without root_dir, its files are opened as it sees them,
	 * through /proc/PID/root (its mount namespace) or, when the path now
	 * holds another file (upgraded while running; told by build-id),
	 * through /proc/PID/map_files.  0: paths are ours.
	 */
	int pid;
	size_t :0;
};
#define sfp_addr_space_opts__last_field pid

/* Return: 0; -EINVAL bad options; -EOPNOTSUPP arch; -ENOMEM. */
SFP_API int sfp_addr_space__new(const struct sfp_addr_space_opts *opts,
				struct sfp_addr_space **out);

/* The process has exited: free everything and set *as to NULL. */
SFP_API void sfp_addr_space__free(struct sfp_addr_space **as);

/* Protection bits of a mapping. */
#define SFP_MAP_READ 0x1
#define SFP_MAP_WRITE 0x2
#define SFP_MAP_EXEC 0x4

/* One mapping, as in /proc/PID/maps or a perf MMAP2 record. */
struct sfp_map {
	uint64_t start;
	uint64_t end;		/* exclusive */
	uint64_t pgoff;		/* file offset of start */
	uint32_t prot;		/* SFP_MAP_* */
	/* File path, "[vdso]", "[stack]", "//anon" or NULL (anonymous). */
	const char *path;
	const uint8_t *build_id;	/* NULL: unknown */
	size_t build_id_len;		/* at most 20 is usual, 64 max */
};

/*
 * Add a mapping (a perf MMAP/MMAP2 record).  It replaces whatever overlapped
 * it, as a new mmap() does.  Only executable mappings get tables; the others
 * are kept so that addresses can be told apart from garbage.
 *
 * Return: 0; -EINVAL (end <= start); -ENOMEM.
 */
SFP_API int sfp_addr_space__add_map(struct sfp_addr_space *as,
				    const struct sfp_map *map);

/* Drop the mappings in [start, end) (munmap). */
SFP_API int sfp_addr_space__remove_range(struct sfp_addr_space *as,
					 uint64_t start, uint64_t end);

/*
 * Load the mappings of a live process from /proc/PID/maps (replacing all
 * mappings).  The vDSO's image is read from the process's memory.
 *
 * Return: 0; -ESRCH; -EACCES; -ENOMEM.
 */
SFP_API int sfp_addr_space__load_pid(struct sfp_addr_space *as, pid_t pid);

/*
 * FORK: a new address space with the same mappings (modules and their
 * tables are shared, not reloaded).
 */
SFP_API int sfp_addr_space__fork(const struct sfp_addr_space *parent,
				 struct sfp_addr_space **child);

/* COMM with the exec flag: the old image is gone; drop every mapping. */
SFP_API void sfp_addr_space__exec(struct sfp_addr_space *as);

/*
 * Describe the mapping covering addr.  The strings stay valid until the
 * mapping is replaced or the address space freed.
 */
struct sfp_map_info {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t bias;		/* runtime address - link-time address */
	uint32_t prot;
	bool bias_known;
	bool has_table;		/* a table was found (loads it) */
	const char *path;	/* NULL for anonymous memory */
	/* The object's build-id (given with the mapping, else read from the
	 * file); NULL when unknown. */
	const uint8_t *build_id;
	size_t build_id_len;
};

/* Return: 0; -ENOENT nothing mapped at addr. */
SFP_API int sfp_addr_space__find(struct sfp_addr_space *as, uint64_t addr,
				 struct sfp_map_info *info);

SFP_API size_t sfp_addr_space__num_maps(const struct sfp_addr_space *as);

/* --- Unwinding. --- */

/* Why a walk stopped. */
enum sfp_unwind_stop {
	SFP_STOP_NONE = 0,		/* not stopped (internal) */
	SFP_STOP_OUTERMOST,		/* RA-undefined row: the first frame */
	SFP_STOP_RA_ZERO,		/* return address 0 */
	SFP_STOP_SP_NOT_INCREASING,	/* next SP <= this SP */
	SFP_STOP_UNREADABLE,		/* a memory read failed */
	SFP_STOP_TRUNCATED,		/* the stack snapshot ended */
	SFP_STOP_NO_INFO,		/* no table row and no frame pointer */
	SFP_STOP_BAD_RA,		/* return address not in code */
	SFP_STOP_DEPTH,			/* depth cap or buffer full */
	SFP_STOP__MAX,
};

/* Short name of a stop reason ("outermost", "truncated", ...). */
SFP_API const char *sfp_unwind_stop_str(enum sfp_unwind_stop stop);

/* How a frame was reached (flags of struct sfp_frame). */
#define SFP_FRAME_SFRAME 0x1	/* from an SFrame row */
#define SFP_FRAME_FP 0x2	/* frame-pointer fallback */
#define SFP_FRAME_ENTRY 0x4	/* function-entry heuristic (topmost) */
#define SFP_FRAME_SIGNAL 0x8	/* a signal trampoline; the next frame's
				   ip is the interrupted PC, not a return
				   address */
#define SFP_FRAME_EXACT 0x10	/* ip is not a return address (frame 0 and
				   the frame after a signal frame) */
#define SFP_FRAME_TRAMPOLINE 0x20 /* an interpreter's perf trampoline (CPython
				   -X perf), recognised by its code bytes */
#define SFP_FRAME_OTHER_STACK 0x40 /* the next frame is on the snapshot's
				   second region, another stack
				   (sfp_reader__set_other_stack) */

struct sfp_frame {
	uint64_t ip;
	uint64_t sp;		/* the frame's SP (callers: its value once
				   the callee has returned, i.e. the
				   callee's CFA) */
	uint32_t flags;		/* how the NEXT step left this frame */
};

/* (Fields are ordered so that the struct has no tail padding, which
 * SFP_OPTS() would leave uninitialised and the size check would reject.) */
struct sfp_unwind_opts {
	size_t sz;
	/* Do not use the frame-pointer fallback. */
	bool no_fp_fallback;
	/* Most frames to produce (0: 512). */
	uint32_t max_depth;
	size_t :0;
};
#define sfp_unwind_opts__last_field max_depth

/*
 * Walk the stack from regs.  frames[0] is regs->ip; each later frame is a
 * return address (or, after a signal frame, the interrupted PC).
 *
 * Return: the number of frames (>= 1) and *stop set; -EINVAL bad
 * arguments (no ip/sp, max 0); -EOPNOTSUPP architecture.
 */
SFP_API int sfp_unwind(struct sfp_addr_space *as, struct sfp_reader *r,
		       const struct sfp_regs *regs, struct sfp_frame *frames,
		       size_t max, const struct sfp_unwind_opts *opts,
		       enum sfp_unwind_stop *stop);

/* --- In-process backtraces. --- */

/*
 * Load the tables of every object in the process (dl_iterate_phdr) so that
 * sfp_backtrace() can run in signal handlers.  Call again (or call
 * sfp_backtrace_refresh()) after dlopen/dlclose; a generation check makes
 * repeated calls cheap.  Not async-signal-safe.
 *
 * Return: 0; -ENOMEM.
 */
SFP_API int sfp_backtrace_init(void);

/* Reload if objects were loaded or unloaded since the last load, or if
 * sfp_backtrace() met a PC outside every known object.  Not
 * async-signal-safe.  Return: 1 reloaded, 0 nothing to do, <0 error. */
SFP_API int sfp_backtrace_refresh(void);

/*
 * Keep the tables current without the application's help: start a thread
 * (all signals blocked) that calls sfp_backtrace_refresh() every
 * interval_ms, so objects that dlopen() adds get their tables loaded
 * outside signal context within that interval.  A refresh that finds
 * nothing changed costs one dl_iterate_phdr() pass.  Calling it again
 * changes the interval; 0 stops the thread and waits for it.
 * sfp_backtrace_fini() stops it too.  Do not call it from several threads
 * at once, nor from a signal handler.
 *
 * Return: 0; -errno from pthread_create().
 */
SFP_API int sfp_backtrace_watch(unsigned int interval_ms);

/*
 * Store the return addresses of the calling thread's stack in buf, like
 * glibc backtrace(): buf[0] is the return address into the caller of
 * sfp_backtrace().  Async-signal-safe after sfp_backtrace_init() (no
 * allocation, no locks, no faults); without it, it initialises itself
 * (not async-signal-safe then).
 *
 * Memory: the main thread's stack, and the stack of a thread that called
 * sfp_backtrace_thread_init(), are read directly; any other stack (other
 * threads, sigaltstack, coroutines) is validated page by page with one
 * process_vm_readv() per new page, which costs a few system calls per
 * call.  errno is preserved.
 *
 * Return: the number of entries stored (0..max).
 */
SFP_API int sfp_backtrace(void **buf, int max);

/*
 * Record the calling thread's stack bounds (pthread_getattr_np) so that
 * sfp_backtrace() in this thread reads its stack directly instead of
 * validating each page with a system call.  Call it once per thread,
 * outside signal handlers (e.g. at thread start).  Optional.
 *
 * Return: 0; -errno from pthread_getattr_np.
 */
SFP_API int sfp_backtrace_thread_init(void);

/* As sfp_backtrace(), also returning why the walk stopped. */
SFP_API int sfp_backtrace_stop(void **buf, int max,
			       enum sfp_unwind_stop *stop);

/* Free what sfp_backtrace_init() loaded.  No sfp_backtrace() may run. */
SFP_API void sfp_backtrace_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_UNWIND_H */
