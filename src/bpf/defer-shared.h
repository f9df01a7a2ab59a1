/* SPDX-License-Identifier: MIT */
/*
 * The layouts shared by the BPF side of `--call-graph bpf-defer`
 * (defer.bpf.c, sframe.bpf.h) and its user-space loader: the records the
 * BPF programs put into the ring buffer, and the compact SFrame tables
 * user space loads into BPF maps.
 *
 * Both compilers see this file: clang -target bpf (with vmlinux.h types)
 * and the host compiler (with <stdint.h>), hence the SFB_ type aliases.
 * Every struct is laid out without implicit padding so that both agree.
 */
#ifndef SFP_BPF_DEFER_SHARED_H
#define SFP_BPF_DEFER_SHARED_H

#ifdef __bpf__
typedef __u8 sfb_u8;
typedef __u16 sfb_u16;
typedef __s16 sfb_s16;
typedef __u32 sfb_u32;
typedef __s32 sfb_s32;
typedef __u64 sfb_u64;
typedef __s64 sfb_s64;
#else
#include <stdint.h>
typedef uint8_t sfb_u8;
typedef uint16_t sfb_u16;
typedef int16_t sfb_s16;
typedef uint32_t sfb_u32;
typedef int32_t sfb_s32;
typedef uint64_t sfb_u64;
typedef int64_t sfb_s64;
#endif

/* The kernel's cap on a deferred chain (4 KiB cache on 64-bit). */
#define SFB_MAX_DEPTH 510
/* Kernel frames kept per sample (perf's default max stack is 127). */
#define SFB_MAX_KSTACK 127
/* Load segments remembered per module (file offset -> link address). */
#define SFB_MAX_SEGS 4

/* --- ring buffer records ------------------------------------------------ */

enum sfb_rec_type {
	SFB_REC_SAMPLE = 1,	/* one sample (struct sfb_sample) */
	SFB_REC_DEFERRED,	/* one unwind per cookie (struct sfb_deferred) */
	SFB_REC_MISS,		/* a module without a table (struct sfb_miss) */
	SFB_REC_STALE,		/* a callback that never came (struct sfb_stale) */
	SFB_REC_OFFCPU,		/* one block, at its switch-in (struct sfb_offcpu) */
};

/* Flags of struct sfb_sample. */
#define SFB_S_KERNEL 0x1	/* the sample interrupted the kernel */
#define SFB_S_EXITING 0x2	/* the task was exiting: no user part */
#define SFB_S_SCHED_FAIL 0x4	/* the callback could not be scheduled */
#define SFB_S_NEW_ENTRY 0x8	/* this record's cookie is new: it asked for
				   the kernel entry's unwind */
#define SFB_S_IN_UNSEEN 0x10	/* an off-CPU block whose switch-in the
				   program did not see: time_in estimated
				   at the task's next switch-out */

struct sfb_sample {
	sfb_u32 type;		/* SFB_REC_SAMPLE */
	sfb_u32 flags;		/* SFB_S_* */
	sfb_u32 pid, tid;
	sfb_u32 cpu;
	sfb_u32 evsel;		/* the attach cookie: index of the event */
	sfb_u64 time;		/* CLOCK_MONOTONIC, as the events' clock */
	sfb_u64 ip;
	sfb_u64 period;
	sfb_u64 cookie;		/* 0: kernel chain only */
	sfb_u32 nr_kstack;	/* entries in kstack */
	sfb_u32 pad;
	sfb_u64 kstack[SFB_MAX_KSTACK];
};

/* Flags of struct sfb_deferred. */
#define SFB_D_EXEC 0x1		/* the task exec'd since the sample: the
				   stack is another image's, not unwound */
#define SFB_D_EXITING 0x2	/* callback ran in an exiting task */
#define SFB_D_NO_TABLE 0x4	/* a frame's module had no table loaded */
#define SFB_D_WRONG_TASK 0x8	/* ran in another task than sampled */
#define SFB_D_HELD 0x10		/* walked at a block, before the entry's
				   end: user space writes it after the
				   entry's last block or sample */

/* Why a walk stopped: the values of enum sfp_unwind_stop. */
#define SFB_STOP_OUTERMOST 1
#define SFB_STOP_RA_ZERO 2
#define SFB_STOP_SP_NOT_INCREASING 3
#define SFB_STOP_UNREADABLE 4
#define SFB_STOP_NO_INFO 6
#define SFB_STOP_BAD_RA 7
#define SFB_STOP_DEPTH 8

struct sfb_deferred {
	sfb_u32 type;		/* SFB_REC_DEFERRED */
	sfb_u32 flags;		/* SFB_D_* */
	sfb_u32 pid, tid;
	sfb_u32 cpu;
	sfb_u32 nr;		/* entries in ips */
	sfb_u64 time;
	sfb_u64 cookie;
	sfb_u32 stop;		/* SFB_STOP_* */
	sfb_u32 sframe_frames;	/* frames stepped with a table row */
	sfb_u32 fp_frames;	/* frames stepped by frame pointer */
	sfb_u32 pad;
	sfb_u64 ips[SFB_MAX_DEPTH];
};

/*
 * --off-cpu: one blocking switch-out of a target task, kept in a map by
 * tid from the switch-out and written at the task's switch-in (the
 * program on sched_switch).  flags: SFB_S_*.  The cookie is the task's
 * kernel entry's, shared with the samples of that entry (0: kernel chain
 * only).
 */
struct sfb_offcpu {
	sfb_u32 type;		/* SFB_REC_OFFCPU */
	sfb_u32 flags;		/* SFB_S_* */
	sfb_u32 pid, tid;
	sfb_u32 cpu;		/* of the switch-out */
	sfb_u32 nr_kstack;
	sfb_u64 time_out;	/* switch-out (CLOCK_MONOTONIC) */
	sfb_u64 time_in;	/* switch-in */
	sfb_u64 cookie;
	sfb_u64 kstack[SFB_MAX_KSTACK];
};

/* Values of the off-CPU targets map (key: a tgid or a tid). */
#define SFB_TGT_PROCESS 0x1	/* key is a process: all its threads */
#define SFB_TGT_THREAD 0x2	/* key is a thread */
#define SFB_TGT_AT_EXEC 0x4	/* a process from its next exec on (the
				   command, forked and waiting to exec) */

struct sfb_miss {
	sfb_u32 type;		/* SFB_REC_MISS */
	sfb_u32 pid;
	sfb_u64 dev;		/* kernel dev_t of the file's super block */
	sfb_u64 ino;
	sfb_u64 vm_start;
	sfb_u64 vm_pgoff;	/* in pages */
};

struct sfb_stale {
	sfb_u32 type;		/* SFB_REC_STALE */
	sfb_u32 tid;
	sfb_u64 cookie;
	sfb_u64 age_ns;
};

/* --- tables in maps ------------------------------------------------------ */

/* A module is named by the file the kernel maps: (dev, inode); the vDSO,
 * which has no file, by this key (no file has inode 0). */
#define SFB_VDSO_DEV 0
#define SFB_VDSO_INO 0
struct sfb_mod_key {
	sfb_u64 dev;
	sfb_u64 ino;
};

struct sfb_seg {
	sfb_u64 off;		/* file offset of the segment */
	sfb_u64 size;
	sfb_s64 adj;		/* link address = file offset + adj */
};

/*
 * One module's table: FDEs [fde_base, fde_base + nr_fdes) of the FDE array
 * sorted by start, each owning FREs [fre_idx, fre_idx + nr_fres) of the
 * FRE array sorted by start.  FDE starts are link addresses minus base.
 */
struct sfb_mod {
	sfb_u32 fde_base;
	sfb_u32 nr_fdes;
	sfb_u64 base;
	sfb_u32 nr_segs;
	sfb_u32 pad;
	struct sfb_seg segs[SFB_MAX_SEGS];
};

#define SFB_FDE_PCMASK 0x1	/* FRE starts are offsets in rep_size blocks */

struct sfb_fde {
	sfb_u32 start;		/* link address - mod.base */
	sfb_u32 size;
	sfb_u32 fre_idx;	/* index of the first FRE in the FRE array */
	sfb_u16 nr_fres;
	sfb_u8 rep_size;
	sfb_u8 flags;		/* SFB_FDE_* */
};

/* FRE flags. */
#define SFB_FRE_CFA_FP 0x1	/* CFA = fp + cfa_off (else sp + cfa_off) */
#define SFB_FRE_CFA_DEREF 0x2	/* CFA = *(base + cfa_off) */
#define SFB_FRE_RA_UNDEF 0x4	/* outermost frame */
#define SFB_FRE_FP_SAVED 0x8	/* caller's fp = *(CFA + fp_off) */
#define SFB_FRE_UNSUPP 0x10	/* a rule we do not evaluate: use FP */
#define SFB_FRE_SIGNAL 0x20	/* signal trampoline: use FP */

struct sfb_fre {
	sfb_u32 start;		/* offset in the function (or block) */
	sfb_s32 cfa_off;
	sfb_s16 ra_off;		/* RA = *(CFA + ra_off) */
	sfb_s16 fp_off;
	sfb_u8 flags;		/* SFB_FRE_* */
	sfb_u8 pad[3];
};

/*
 * The executable file VMAs the callbacks met, per process (LRU hash by
 * tgid), for the perf_event program's own walk (sframe.bpf.h).
 */
#define SFB_VMA_CACHE 32

struct vma_ent {
	sfb_u64 start, end, pgoff, dev, ino;
};

struct proc_vmas {
	sfb_u64 exec_id;
	sfb_u32 nr;
	sfb_u32 next;
	sfb_u32 filled;		/* every executable VMA read in (fill_vmas) */
	sfb_u32 pad;
	struct vma_ent v[SFB_VMA_CACHE];
};

/*
 * Every executable file VMA of a process, as user space last read them
 * (hash by tgid, written only by user space, whole values: docs/record-
 * bpf.md "The mmap lock"), sorted by start, for the task_work walk whose
 * bpf_find_vma() found the mmap lock write-held.  User space learns them
 * from the dump_vmas iterator, which reads them in the kernel with the
 * process's self_exec_id: an entry is only trusted while the task's
 * self_exec_id is still exec_id, so an exec after the read voids it, and
 * while its group leader's start_time is still start (a tgid reused by a
 * new process may well reach the same self_exec_id).
 */
#define SFB_UVMA_MAX 256

struct proc_uvmas {
	sfb_u64 exec_id;
	sfb_u64 start;		/* group_leader->start_time */
	sfb_u32 nr;
	sfb_u32 pad;
	struct vma_ent v[SFB_UVMA_MAX];
};

/* One executable VMA as the dump_vmas iterator writes it. */
struct sfb_uvma_rec {
	sfb_u64 start, end, pgoff, dev, ino;
	sfb_u64 exec_id;	/* the owner's self_exec_id, read before
				   its mm was seen to be the VMA's */
	sfb_u64 lstart;		/* its group leader's start_time */
	sfb_u32 tgid;
	sfb_u32 pad;
};

/* --- counters (an array map indexed by these) ------------------------------ */
enum sfb_stat {
	SFB_ST_SAMPLES,
	SFB_ST_SCHEDULED,	/* callbacks scheduled (one per cookie) */
	SFB_ST_SHARED,		/* samples that reused a pending cookie */
	SFB_ST_SCHED_FAIL,
	SFB_ST_CALLBACKS,
	SFB_ST_RB_FULL,		/* records dropped: ring buffer full */
	SFB_ST_STALE,
	SFB_ST_TID_REUSE,
	SFB_ST_EXEC,
	SFB_ST_EXITING,
	SFB_ST_NO_TABLE,	/* unwinds that met a module without table */
	SFB_ST_SYNC,		/* user-mode samples walked at once */
	SFB_ST_TEST_DROPPED,	/* callbacks the test hook left out */
	SFB_ST_OFF_SWITCHES,	/* --off-cpu: switch-outs of target tasks */
	SFB_ST_OFF_PREEMPTED,	/* of which preemptions */
	SFB_ST_OFF_EXITS,	/* of which a task's last */
	SFB_ST_OFF_BLOCKS,	/* of which blocking */
	SFB_ST_OFF_WOKEN,	/* blocks ended by a switch-in (written) */
	SFB_ST_OFF_LOST,	/* blocks not kept: the blocked map was full */
	SFB_ST_OFF_WALKED,	/* kernel entries of blocks walked at once */
	SFB_ST_VMA_BUSY,	/* callback VMA lookups that found the mmap
				   lock write-held, answered by the cache */
	SFB_ST_VMA_BUSY_CUT,	/* the same, in neither cache: walk cut */
	SFB_ST_OFF_IN_UNSEEN,	/* blocks whose switch-in was not seen,
				   written at the task's next switch-out */
	SFB_ST_VMA_BUSY_USER,	/* of vma-busy, those the callbacks' cache
				   missed, answered by user space's table
				   of the process's VMAs (proc_uvmas) */
	SFB_ST_OFF_REUSED,	/* kernel entries of blocks whose stack was
				   the last walk's (same_stack()): no walk */
	SFB_ST_VMAS_FILLED,	/* callbacks that read all of a process's
				   executable VMAs into the cache */
	SFB_ST__MAX,
};

#endif /* SFP_BPF_DEFER_SHARED_H */
