/* SPDX-License-Identifier: MIT */
/*
 * The user-stack walk of `--call-graph bpf-defer`, run by the task_work
 * callback in the sampled task (sleepable: stack reads may fault pages in).
 *
 * One bpf_loop iteration per frame, the same steps as src/unwind/walk.h:
 *   module  the VMA of the PC (bpf_find_vma), named by (dev, inode), whose
 *           table user space loaded into the maps below (compact layout of
 *           defer-shared.h); file offset -> link address by its segments;
 *   FDE     binary search of the module's FDE slice (sorted by start);
 *   FRE     binary search of that FDE's FREs (the last start <= offset;
 *           PCMASK functions: offset modulo the block size);
 *   step    CFA from sp or fp (+ optional dereference), RA at CFA + ra_off,
 *           fp reloaded from CFA + fp_off when saved (unless that slot is
 *           already below sp, i.e. popped);
 *   else    frame-pointer fallback (CFA = fp + 16, RA at fp + 8, fp at fp);
 * with the user-space unwinder's stop reasons: outermost (RA undefined),
 * RA zero, SP not increasing, unreadable memory, no info (no row and no
 * usable fp), bad RA (not in executable memory), depth cap.
 *
 * Every loop is bounded by a constant so that the verifier accepts it.
 */
#ifndef SFP_BPF_SFRAME_BPF_H
#define SFP_BPF_SFRAME_BPF_H

#define VM_EXEC_FLAG 0x4
#define EBUSY_ERRNO 16

/* Map sizes are set by the loader before load (these are defaults). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sfb_mod_key);
	__type(value, struct sfb_mod);
} mods SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 18);
	__type(key, __u32);
	__type(value, struct sfb_fde);
} fdes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, struct sfb_fre);
} fres SEC(".maps");

/* Modules reported missing, so that each is reported once per second. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sfb_mod_key);
	__type(value, __u64);
} missed SEC(".maps");

struct vma_info {
	__u64 start, end, pgoff;
	__u64 dev, ino;
	__u32 exec;
	__u32 has_file;
};

/*
 * The user memory one walk read (return addresses, saved frame pointers,
 * dereferenced CFAs), with the registers it started from: a walk is a
 * function of those and the tables alone, so a later entry with the same
 * ip, sp and bp whose slots still hold these values has the same stack
 * (block_entry()'s reuse).  n > SFB_WLOG_SLOTS: too deep to keep.
 */
#define SFB_WLOG_SLOTS 24

struct walk_log {
	__u64 ip, sp, bp;
	__u64 exec_id, start_time;
	__u64 cookie;
	__u32 n;
	__u32 pad;
	__u64 addr[SFB_WLOG_SLOTS];
	__u64 val[SFB_WLOG_SLOTS];
};

struct walk {
	struct sfb_deferred *rec;
	struct walk_log *log;	/* or NULL: reads not kept */
	struct task_struct *task;
	__u64 ip, sp, fp;
	__u32 n;
	__u32 top;		/* ip is exact (frame 0) */
	__u32 fp_valid;
	__u32 pid;
	/* The last VMA looked up: consecutive frames are often in one. */
	struct vma_info vma;
	__u32 vma_valid;
	__u32 no_table;
	__u32 max;
	__u32 sync_fail;	/* the non-faulting walk cannot finish */
	__u64 exec_id;
};

/*
 * The executable file VMAs the callbacks met, per process, so that the
 * perf_event program can walk a user-mode sample's stack at once without
 * bpf_find_vma() (whose unlock in interrupt context is an irq_work, i.e.
 * one more self-IPI).  Entries are only trusted for the exec generation
 * they were seen in; user space drops a process's entry when it maps
 * executable code (a new module may now sit where an old one was).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct proc_vmas);
} vmas SEC(".maps");

/* A new process's entry (too large for the BPF stack). */
struct proc_vmas zero_vmas;

/* Remember a VMA the callback found, for the perf_event program. */
__noinline int cache_vma(const struct vma_info *vi, __u32 pid, __u64 exec_id)
{
	struct proc_vmas *pv;
	__u32 i, k;

	if (!vi)
		return 0;
	pv = bpf_map_lookup_elem(&vmas, &pid);
	if (!pv) {
		bpf_map_update_elem(&vmas, &pid, &zero_vmas, BPF_NOEXIST);
		pv = bpf_map_lookup_elem(&vmas, &pid);
		if (!pv)
			return 0;
		pv->exec_id = exec_id;
	}
	if (pv->exec_id != exec_id) {
		pv->nr = 0;
		pv->next = 0;
		pv->filled = 0;
		pv->exec_id = exec_id;
	}
	for (i = 0; i < SFB_VMA_CACHE; i++) {
		if (i >= pv->nr)
			break;
		if (pv->v[i].start == vi->start)
			return 0;
	}
	k = pv->next % SFB_VMA_CACHE;
	/* start last: a reader never sees a half-written entry as valid */
	pv->v[k].start = 0;
	pv->v[k].end = vi->end;
	pv->v[k].pgoff = vi->pgoff;
	pv->v[k].dev = vi->dev;
	pv->v[k].ino = vi->ino;
	pv->v[k].start = vi->start;
	pv->next = k + 1;
	if (pv->nr < SFB_VMA_CACHE)
		pv->nr++;
	return 0;
}

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma,
		   void *data)
{
	struct vma_info *vi = data;
	struct file *f;

	vi->start = vma->vm_start;
	vi->end = vma->vm_end;
	vi->pgoff = vma->vm_pgoff;
	vi->exec = !!(vma->vm_flags & VM_EXEC_FLAG);
	f = vma->vm_file;
	vi->has_file = 0;
	if (f) {
		vi->ino = BPF_CORE_READ(f, f_inode, i_ino);
		vi->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		vi->has_file = 1;
	} else if ((__u64)BPF_CORE_READ(vma, vm_mm, context.vdso) ==
		   vma->vm_start) {
		/* The vDSO: no file; user space loads its table under a
		 * key no file has (inode 0 does not exist). */
		vi->dev = SFB_VDSO_DEV;
		vi->ino = SFB_VDSO_INO;
		vi->has_file = 1;
	}
	/* Here, not in the walk: a call there multiplies the verifier's
	 * states of every frame. */
	if (vi->exec && vi->has_file)
		cache_vma(vi, task->tgid, task->self_exec_id);
	return 0;
}

/* Open-coded VMA iterator (Linux 6.7; bpf-defer needs 6.18): not in
 * bpftool 7.1's vmlinux.h. */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it,
				 struct task_struct *task, __u64 addr) __weak __ksym;
extern struct vm_area_struct *
bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

/*
 * Every executable VMA of task's process into the callbacks' cache, once
 * per cache entry (a new process, a new exec, or the entry user space
 * dropped at an executable MMAP2), from a callback whose process does not
 * hold the mmap lock for write now.  Without it the cache holds only the
 * modules earlier walks met, and a walk that finds the lock write-held
 * is cut at the first module no walk met before and user space's table
 * does not list yet: seen in the first milliseconds of an ASan process,
 * whose main thread's first stack through libc (pthread_create's mmap
 * waiting for another thread's) was cut after main.  The iterator only
 * try-locks, as bpf_find_vma() does; on -EBUSY a later callback tries
 * again.  At most SFB_VMA_CACHE are read in, the lowest first (file
 * and vDSO VMAs: anonymous code has no table).
 */
static __always_inline void fill_vmas(struct task_struct *task)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct vma_info vi = {};
	struct proc_vmas *pv;
	__u32 pid = task->tgid, n = 0;
	__u64 exec_id = task->self_exec_id;
	int done = 0;

	if (!sfb_ksym_exists(bpf_iter_task_vma_new))
		return;
	pv = bpf_map_lookup_elem(&vmas, &pid);
	if (pv && pv->exec_id == exec_id && pv->filled)
		return;
	if (!bpf_iter_task_vma_new(&it, task, 0)) {
		while ((vma = bpf_iter_task_vma_next(&it))) {
			if (!(vma->vm_flags & VM_EXEC_FLAG))
				continue;
			vi.has_file = 0;
			vma_cb(task, vma, &vi);	/* caches it */
			/* (anonymous code, a JIT's, has no table) */
			if (vi.has_file && ++n >= SFB_VMA_CACHE)
				break;
		}
		done = 1;
	}
	bpf_iter_task_vma_destroy(&it);
	if (!done)
		return;
	pv = bpf_map_lookup_elem(&vmas, &pid);
	if (pv && pv->exec_id == exec_id) {
		pv->filled = 1;
		count(SFB_ST_VMAS_FILLED);
	}
}

/* Faulting read in the callback; non-faulting in the perf_event program. */
static __always_inline int read_user_u64(__u64 addr, __u64 *v,
					 const bool faulting)
{
	if (addr < 4096)
		return -1;
	if (faulting)
		return bpf_copy_from_user(v, sizeof(*v), (const void *)addr) ?
			       -1 : 0;
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr) ? -1 : 0;
}

/* A read of the walk, kept in its log when it has one. */
static __always_inline int walk_read(struct walk *w, __u64 addr, __u64 *v,
				     const bool faulting)
{
	struct walk_log *log = w->log;
	__u32 k;

	if (read_user_u64(addr, v, faulting))
		return -1;
	if (log) {
		k = log->n;
		if (k < SFB_WLOG_SLOTS) {
			log->addr[k] = addr;
			log->val[k] = *v;
		}
		if (k <= SFB_WLOG_SLOTS)
			log->n = k + 1;
	}
	return 0;
}

/* A module without a table: tell user space (rate-limited). */
static __always_inline void report_miss(const struct vma_info *vi, __u32 pid,
					const struct sfb_mod_key *key)
{
	__u64 now = bpf_ktime_get_ns(), *last;
	struct sfb_miss *m;

	last = bpf_map_lookup_elem(&missed, key);
	if (last && now - *last < 1000000000ULL)
		return;
	bpf_map_update_elem(&missed, key, &now, BPF_ANY);
	m = bpf_ringbuf_reserve(&rb, sizeof(*m), 0);
	if (!m)
		return;
	m->type = SFB_REC_MISS;
	m->pid = pid;
	m->dev = key->dev;
	m->ino = key->ino;
	m->vm_start = vi->start;
	m->vm_pgoff = vi->pgoff;
	/* the one record that wakes the reader: until the table is in, the
	 * module's frames are stepped by frame pointer, and an idle agent
	 * sleeps up to a second between polls */
	bpf_ringbuf_submit(m, BPF_RB_FORCE_WAKEUP);
}

/*
 * The FRE for pc in the table of the module of VMA vi.  A global function:
 * the verifier checks its loops once, not once per caller and frame.  It
 * gets only pointer-free memory (a spilled pointer in memory passed to a
 * global function is lost to the caller).
 * Return: 1 and *out; 0 when no FDE/FRE covers pc; -1 no table loaded.
 */
__noinline int find_fre(const struct vma_info *vi, __u32 pid, __u64 pc,
			struct sfb_fre *out)
{
	struct sfb_mod_key key;
	struct sfb_mod *mod;
	struct sfb_fde *fde;
	struct sfb_fre *fre;
	__u64 off, link = 0, rel, foff;
	__u32 lo, hi, i, idx, found = 0;

	if (!vi || !out)
		return 0;
	key.dev = vi->dev;
	key.ino = vi->ino;
	mod = bpf_map_lookup_elem(&mods, &key);
	if (!mod) {
		report_miss(vi, pid, &key);
		return -1;
	}
	off = pc - vi->start + (vi->pgoff << 12);
	for (i = 0; i < SFB_MAX_SEGS; i++) {
		if (i >= mod->nr_segs)
			break;
		if (off >= mod->segs[i].off &&
		    off < mod->segs[i].off + mod->segs[i].size) {
			link = off + mod->segs[i].adj;
			found = 1;
			break;
		}
	}
	if (!found || link < mod->base || link - mod->base > 0xffffffffULL)
		return 0;
	rel = link - mod->base;
	/* The last FDE whose start <= rel. */
	lo = 0;
	hi = mod->nr_fdes;
	for (i = 0; i < 32 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		idx = mod->fde_base + mid;
		fde = bpf_map_lookup_elem(&fdes, &idx);
		if (!fde)
			return 0;
		if (fde->start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	idx = mod->fde_base + lo - 1;
	fde = bpf_map_lookup_elem(&fdes, &idx);
	if (!fde || rel >= (__u64)fde->start + fde->size || !fde->nr_fres)
		return 0;
	foff = rel - fde->start;
	if ((fde->flags & SFB_FDE_PCMASK) && fde->rep_size)
		foff %= fde->rep_size;
	/* The last FRE whose start <= foff. */
	lo = 0;
	hi = fde->nr_fres;
	for (i = 0; i < 17 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		idx = fde->fre_idx + mid;
		fre = bpf_map_lookup_elem(&fres, &idx);
		if (!fre)
			return 0;
		if (fre->start <= foff)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	idx = fde->fre_idx + lo - 1;
	fre = bpf_map_lookup_elem(&fres, &idx);
	if (!fre)
		return 0;
	*out = *fre;
	return 1;
}

/* The cached VMA covering pc, for the non-faulting walk. */
__noinline int cached_vma(struct vma_info *vi, __u32 pid, __u64 exec_id,
			  __u64 pc)
{
	struct proc_vmas *pv;
	__u32 i;

	if (!vi)
		return 0;
	pv = bpf_map_lookup_elem(&vmas, &pid);
	if (!pv || pv->exec_id != exec_id)
		return 0;
	for (i = 0; i < SFB_VMA_CACHE; i++) {
		__u64 start = pv->v[i].start;

		if (i >= pv->nr)
			break;
		if (start && pc >= start && pc < pv->v[i].end) {
			vi->start = start;
			vi->end = pv->v[i].end;
			vi->pgoff = pv->v[i].pgoff;
			vi->dev = pv->v[i].dev;
			vi->ino = pv->v[i].ino;
			vi->exec = 1;
			vi->has_file = 1;
			return 1;
		}
	}
	return 0;
}

/*
 * Every executable file VMA of a process as user space last read them
 * (struct proc_uvmas).  A plain hash without preallocation, written only
 * by user space with whole values: an update links a new element and
 * frees the old one after the readers' RCU grace period, so a walk reads
 * one consistent list, never one half rewritten.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct proc_uvmas);
} uvmas SEC(".maps");

/* The VMA covering pc in user space's list (sorted by start), trusted for
 * the process (its leader's start time) and exec generation it was read
 * in only. */
__noinline int user_vma(struct vma_info *vi, __u32 pid, __u64 exec_id,
			__u64 start, __u64 pc)
{
	struct proc_uvmas *pv;
	__u32 lo = 0, hi, i, k;

	if (!vi)
		return 0;
	pv = bpf_map_lookup_elem(&uvmas, &pid);
	if (!pv || pv->exec_id != exec_id || pv->start != start)
		return 0;
	hi = pv->nr;
	if (hi > SFB_UVMA_MAX)
		hi = SFB_UVMA_MAX;
	/* the last entry whose start <= pc */
	for (i = 0; i < 9 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (mid >= SFB_UVMA_MAX)
			return 0;
		if (pv->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	k = lo - 1;
	if (k >= SFB_UVMA_MAX || pc >= pv->v[k].end)
		return 0;
	vi->start = pv->v[k].start;
	vi->end = pv->v[k].end;
	vi->pgoff = pv->v[k].pgoff;
	vi->dev = pv->v[k].dev;
	vi->ino = pv->v[k].ino;
	vi->exec = 1;
	vi->has_file = 1;
	return 1;
}

/* The process's identity beside its tgid (exec's de_thread() gives a new
 * leader the old one's start time). */
static __always_inline __u64 leader_start(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_time);
}

/* One frame: 0 to go on, 1 to stop (rec->stop set). */
static __always_inline long walk_step_body(struct walk *w, const bool faulting)
{
	struct sfb_deferred *rec = w->rec;
	__u64 pc, cfa, ra, nfp = w->fp, base;
	struct sfb_fre fre;
	int how = 0;		/* 1 sframe, 2 fp */
	int found;
	bool busy_cut = false;	/* the mmap lock hid pc's VMA */

	if (!rec)
		return 1;
	if (w->n >= w->max || w->n >= SFB_MAX_DEPTH) {
		rec->stop = SFB_STOP_DEPTH;
		return 1;
	}
	{
		__u32 k = w->n;

		if (k >= SFB_MAX_DEPTH)
			return 1;
		rec->ips[k] = w->ip;
		w->n = k + 1;
	}
	if (w->n >= w->max) {
		rec->stop = SFB_STOP_DEPTH;
		return 1;
	}
	pc = w->top ? w->ip : w->ip - 1;
	if (!w->vma_valid || pc < w->vma.start || pc >= w->vma.end) {
		w->vma_valid = 0;
		if (faulting) {
			long e = bpf_find_vma(w->task, pc, vma_cb, &w->vma, 0);

			if (e == 0) {
				w->vma_valid = 1;
			} else if (e == -EBUSY_ERRNO) {
				/*
				 * bpf_find_vma() only try-locks the mmap
				 * lock: another thread of the process holds
				 * it for write (mmap, mprotect, a thread's
				 * creation), often the very writer this task
				 * just waited for in a page fault.  The VMAs
				 * the callbacks met answer instead (the
				 * perf_event program's trust, see cached_vma),
				 * else those user space read (every one of
				 * the process's, see user_vma).
				 */
				if (test_busy_user &&
				    user_vma(&w->vma, w->pid, w->exec_id,
					     leader_start(w->task), pc)) {
					/* the hook: that table first */
					w->vma_valid = 1;
					count(SFB_ST_VMA_BUSY);
					count(SFB_ST_VMA_BUSY_USER);
				} else if (cached_vma(&w->vma, w->pid,
						      w->exec_id, pc)) {
					w->vma_valid = 1;
					count(SFB_ST_VMA_BUSY);
				} else if (!test_busy_user &&
					   user_vma(&w->vma, w->pid,
						    w->exec_id,
						    leader_start(w->task),
						    pc)) {
					w->vma_valid = 1;
					count(SFB_ST_VMA_BUSY);
					count(SFB_ST_VMA_BUSY_USER);
				} else {
					count(SFB_ST_VMA_BUSY_CUT);
					busy_cut = true;
				}
			}
		} else if (cached_vma(&w->vma, w->pid, w->exec_id, pc)) {
			w->vma_valid = 1;
		} else {
			/* not known here: the callback will find it */
			w->sync_fail = 1;
			return 1;
		}
	}
	if (!w->vma_valid || !w->vma.exec) {
		rec->stop = w->top ? SFB_STOP_NO_INFO : SFB_STOP_BAD_RA;
		/*
		 * A return address outside executable memory is no frame:
		 * src/unwind/walk.h stops before it, so that both modes give
		 * one chain for one stack (tests/unit/test-bpf-walk.c).  One
		 * whose VMA the mmap lock hid is kept: most likely real.
		 */
		if (!w->top && !busy_cut && w->n > 0)
			w->n--;
		return 1;
	}
	found = w->vma.has_file ? find_fre(&w->vma, w->pid, pc, &fre) : 0;
	if (found < 0)
		w->no_table = 1;
	if (found > 0 && !(fre.flags & (SFB_FRE_UNSUPP | SFB_FRE_SIGNAL))) {
		if (fre.flags & SFB_FRE_RA_UNDEF) {
			rec->stop = SFB_STOP_OUTERMOST;
			return 1;
		}
		if (fre.flags & SFB_FRE_CFA_FP) {
			if (!w->fp_valid)
				goto fp;
			base = w->fp;
		} else {
			base = w->sp;
		}
		cfa = base + (__s64)fre.cfa_off;
		if ((fre.flags & SFB_FRE_CFA_DEREF) &&
		    walk_read(w, cfa, &cfa, faulting)) {
			rec->stop = SFB_STOP_UNREADABLE;
			return 1;
		}
		if (walk_read(w, cfa + (__s64)fre.ra_off, &ra, faulting)) {
			rec->stop = SFB_STOP_UNREADABLE;
			return 1;
		}
		if ((fre.flags & SFB_FRE_FP_SAVED) &&
		    cfa + (__s64)fre.fp_off >= w->sp) {
			if (walk_read(w, cfa + (__s64)fre.fp_off, &nfp,
				      faulting)) {
				rec->stop = SFB_STOP_UNREADABLE;
				return 1;
			}
		}
		how = 1;
		goto stepped;
	}
fp:
	/* Frame-pointer fallback: [fp] = caller's fp, [fp + 8] = RA. */
	if (!w->fp_valid || w->fp < w->sp || (w->fp & 7)) {
		rec->stop = SFB_STOP_NO_INFO;
		return 1;
	}
	cfa = w->fp + 16;
	if (walk_read(w, w->fp + 8, &ra, faulting) ||
	    walk_read(w, w->fp, &nfp, faulting)) {
		rec->stop = SFB_STOP_UNREADABLE;
		return 1;
	}
	how = 2;
stepped:
	if (!ra) {
		rec->stop = SFB_STOP_RA_ZERO;
		return 1;
	}
	if (cfa <= w->sp) {
		rec->stop = SFB_STOP_SP_NOT_INCREASING;
		return 1;
	}
	if (how == 1)
		rec->sframe_frames++;
	else
		rec->fp_frames++;
	w->ip = ra;
	w->sp = cfa;
	w->fp = nfp;
	w->fp_valid = 1;
	w->top = 0;
	return 0;
}

static long walk_step(__u32 i, void *ctx)
{
	return walk_step_body(ctx, true);
}

static long walk_step_nofault(__u32 i, void *ctx)
{
	return walk_step_body(ctx, false);
}

#endif /* SFP_BPF_SFRAME_BPF_H */
