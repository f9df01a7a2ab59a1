/* SPDX-License-Identifier: MIT */
/*
 * Internals of the unwinder shared by its files: the step engine (one walk
 * loop used by sfp_unwind() and sfp_backtrace()), the readers and the
 * compact rule the address spaces cache per PC.
 */
#ifndef SFP_UNWIND_INTERNAL_H
#define SFP_UNWIND_INTERNAL_H

#include <sfprof/sframe.h>
#include <sfprof/unwind.h>

#include "common/internal.h"

/* What a lookup found for one PC. */
enum unw_rule_kind {
	UNW_R_ROW = 0,		/* an SFrame row: cfa/ra/fp below */
	UNW_R_SIGRETURN,	/* a signal trampoline (rt_sigreturn) */
	UNW_R_NONE,		/* code, but no row covers it */
	UNW_R_NOT_CODE,		/* not in any executable mapping */
	UNW_R_TRAMP,		/* an interpreter's perf trampoline,
				   recognised by its bytes (interp-tramp.c):
				   a row-like rule */
};

/* Rows the walk steps without the general evaluator (see walk.h). */
#define UNW_FAST_SP 1		/* CFA = sp + off */
#define UNW_FAST_FP 2		/* CFA = fp + off */

struct unw_rule {
	uint8_t kind;		/* enum unw_rule_kind */
	uint8_t fast;		/* UNW_FAST_* or 0 */
	uint32_t flags;		/* SFP_ROW_* of the row */
	struct sfp_loc cfa;
	struct sfp_loc ra;
	struct sfp_loc fp;
};

/*
 * Where the step engine gets memory and rules from.  lookup() gets the PC
 * to look up (the return address - 1 for callers) and the frame's real ip
 * (for the trampoline byte check).
 */
struct unw_env {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Returns the rule: in a cache, or in *buf (valid until the next
	 * lookup). */
	const struct unw_rule *(*lookup)(void *ctx, uint64_t pc, uint64_t ip,
					 struct unw_rule *buf);
	void *ctx;
	bool no_fp_fallback;
	/* Frame 0 is already a return address (in-process backtrace). */
	bool first_is_ra;
	/* When set, only the ips are stored, here (frames may be NULL). */
	void **ips;
	/* Read code bytes at ip (for the entry heuristic); may be NULL. */
	int (*read_code)(void *ctx, uint64_t ip, void *buf, size_t len);
	/* read_code's context when not ctx (keeps ctx from escaping). */
	void *code_ctx;
	/* AArch64: the virtual-address bits of a return address (PAC
	 * signatures live above them); 0: all bits. */
	uint64_t ra_mask;
	/* addr lies on another stack the walk may switch to once (a
	 * snapshot reader's second region); NULL: one stack. */
	bool (*other_stack)(void *ctx, uint64_t addr);
};

/*
 * Walk from (ip, sp, fp).  Stores at most max frames.  Return: number of
 * frames; *stop is set.
 */
SFP_HIDDEN size_t unw_walk(const struct unw_env *env, uint64_t ip,
			   uint64_t sp, uint64_t fp, bool fp_valid,
			   struct sfp_frame *frames, size_t max,
			   enum sfp_unwind_stop *stop);

/* The x86-64 rt_sigreturn trampoline: mov $0xf,%rax; syscall. */
#define UNW_X86_SIGRETURN_LEN 9
SFP_HIDDEN bool unw_is_x86_sigreturn(const uint8_t *code, size_t len);

/*
 * Tell whether ip is a signal trampoline, given a function that reads code.
 * Checks ip itself and, for exact PCs, the two spots a sample inside the
 * trampoline can stop at.
 */
SFP_HIDDEN bool unw_check_sigreturn(int (*read_code)(void *ctx, uint64_t a,
						     void *b, size_t l),
				    void *ctx, uint64_t ip, bool exact);

/* The AArch64 walk (walk-aarch64.c): as unw_walk, from all of regs. */
SFP_HIDDEN size_t unw_walk_aarch64(const struct unw_env *env,
				   const struct sfp_regs *regs,
				   struct sfp_frame *frames, size_t max,
				   enum sfp_unwind_stop *stop);

/* The AArch64 rt_sigreturn trampoline: mov x8, #139; svc #0. */
#define UNW_A64_SIGRETURN_LEN 8
SFP_HIDDEN bool unw_is_a64_sigreturn(const uint8_t *code, size_t len);
SFP_HIDDEN bool unw_check_sigreturn_a64(int (*read_code)(void *ctx,
							 uint64_t a, void *b,
							 size_t l),
					void *ctx, uint64_t ip, bool exact);

/* Return addresses on AArch64 keep the low va_bits bits (PAC stripped):
 * 48 unless some mapping lies above 2^48 (52-bit VA). */
#define UNW_A64_VA_BITS 48
#define UNW_A64_VA_BITS_LARGE 52

/* Fill a rule from a decoded SFrame row. */
SFP_HIDDEN void unw_rule_from_row(struct unw_rule *rule,
				  const struct sfp_sframe_row *row);

/* --- Interpreters' perf trampolines (interp-tramp.c). --- */

/*
 * Match the code window win[0..n) (ip at win + at) against the known
 * trampoline patterns; exact: ip may be any instruction of one, else only
 * the return address after its call.  Return: the pattern's index and,
 * if rule, its rule at ip (kind UNW_R_TRAMP); -1 none.
 */
SFP_HIDDEN int unw_tramp_match(const uint8_t *win, size_t n, size_t at,
			       bool exact, struct unw_rule *rule);
/* The pattern's name ("cpython-3.12", ...), NULL past the table. */
SFP_HIDDEN const char *unw_tramp_name(int pattern);
/* Read the code around ip (within [lo, hi)) and match it. */
SFP_HIDDEN bool unw_tramp_lookup(int (*read_code)(void *ctx, uint64_t a,
						  void *b, size_t l),
				 void *ctx, uint64_t lo, uint64_t hi,
				 uint64_t ip, bool exact,
				 struct unw_rule *rule);

/* --- Readers (reader.c). --- */

/* process_vm_readv() of another process, whole or -EFAULT/-ESRCH/-EPERM. */
SFP_HIDDEN int unw_vm_read(pid_t pid, uint64_t addr, void *buf, size_t len);

enum unw_reader_kind {
	UNW_READER_SNAPSHOT = 1,
	UNW_READER_PID,
	UNW_READER_SELF,
};

/* Pages a live-process reader keeps between reads of one walk. */
#define UNW_PAGE_SIZE 4096u
#define UNW_PID_PAGES 8
#define UNW_SELF_PAGES 16

struct unw_page {
	uint64_t addr;		/* page address; 0 = empty */
	uint8_t *data;
};

struct sfp_reader {
	int kind;
	/* snapshot */
	const uint8_t *stack;
	size_t size;
	uint64_t sp;
	/* the second region (sfp_reader__set_other_stack), other_len 0:
	 * none */
	const uint8_t *other;
	size_t other_len;
	uint64_t other_addr;
	/* pid / self */
	pid_t pid;
	unsigned int next_page;
	struct unw_page pages[UNW_PID_PAGES];
	uint8_t *page_buf;
	/* self: pages proven readable during this walk */
	uint64_t ok_pages[UNW_SELF_PAGES];
	unsigned int next_ok;
};

/* addr lies in the snapshot reader's second region (another stack). */
SFP_HIDDEN bool unw_reader_other_stack(const struct sfp_reader *r,
				       uint64_t addr);

/* Forget what a reader cached (start of every walk: memory changes). */
SFP_HIDDEN void unw_reader_begin(struct sfp_reader *r);

/*
 * Safe read of the calling process's memory: memcpy when every page was
 * proven readable before (pages[], n entries, next is the round-robin slot),
 * else process_vm_readv() on ourselves.  Async-signal-safe.
 */
SFP_HIDDEN int unw_self_read(uint64_t *pages, unsigned int n,
			     unsigned int *next, pid_t self, uint64_t addr,
			     void *buf, size_t len);

#endif /* SFP_UNWIND_INTERNAL_H */
