// SPDX-License-Identifier: MIT
/*
 * User space's table of every process's executable VMAs (the BPF map
 * uvmas, struct proc_uvmas), for the task_work walk whose bpf_find_vma()
 * found the mmap lock write-held (docs/record-bpf.md "The mmap lock").
 *
 * The callbacks' own cache holds only the VMAs earlier walks met: in a
 * process that maps all the time (ASan's allocator) the lock is often
 * held just when a walk first meets a module (libasan's interceptors),
 * and that walk was cut.  So user space reads them all: at attach (-p,
 * -t, -a) and again after each executable MMAP2 of a process (its
 * libraries at exec, a dlopen, code made executable).
 *
 * The key: the BPF side checks an entry against the walking task's
 * self_exec_id, which /proc cannot tell.  So the VMAs are read in the
 * kernel by the dump_vmas iterator, which writes each with its owner's
 * self_exec_id (read so that it is the VMAs' image's, see there); an
 * exec after the read raises the task's id and voids the entry until the
 * new image's MMAP2s bring the next read.  Entries are whole values
 * written here only, dropped at the process's EXIT record.
 *
 * With the tables' thread (the agent, record -a) the reads are its
 * requests, in order with the drops at EXIT: the reader of the rings does
 * not wait for them (a machine that starts many programs would make it
 * fall behind).  The buffers here are then that thread's only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bpf-int.h"
#include "defer.skel.h"

/* Processes whose next poll re-reads their VMAs; beyond, all are. */
#define MAX_DIRTY 256

struct sfb_uvmas {
	int fd;
	pid_t dirty[MAX_DIRTY];
	size_t nr_dirty;
	bool all;
	struct sfb_uvma_rec *recs;
	size_t nr_recs, cap_recs;
	struct proc_uvmas val;
};

int sfb_uvmas__new(struct sfp_bpf_defer *b)
{
	b->uv = calloc(1, sizeof(*b->uv));
	if (!b->uv)
		return -ENOMEM;
	b->uv->fd = bpf_map__fd(b->skel->maps.uvmas);
	return 0;
}

void sfb_uvmas__free(struct sfp_bpf_defer *b)
{
	if (!b->uv)
		return;
	free(b->uv->recs);
	free(b->uv);
	b->uv = NULL;
}

static void drop(struct sfb_uvmas *u, pid_t pid)
{
	uint32_t k = (uint32_t)pid;

	bpf_map_delete_elem(u->fd, &k);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct sfb_uvma_rec *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->exec_id != y->exec_id)	/* the newest image last */
		return x->exec_id < y->exec_id ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* One process's run of records (sorted): its newest image's VMAs as one
 * value. */
static void write_one(struct sfb_uvmas *u, const struct sfb_uvma_rec *r,
		      size_t n)
{
	const struct sfb_uvma_rec *last = &r[n - 1];
	uint32_t tgid = last->tgid;
	size_t i;

	u->val.exec_id = last->exec_id;
	u->val.start = last->lstart;
	u->val.nr = 0;
	for (i = 0; i < n; i++) {
		struct vma_ent *e;

		if (r[i].exec_id != last->exec_id ||
		    r[i].lstart != last->lstart)
			continue;
		/* a process iterated twice (threads with their own files
		 * table) gives its VMAs twice */
		if (u->val.nr &&
		    u->val.v[u->val.nr - 1].start == r[i].start)
			continue;
		/* more: the lowest addresses only (a known limit,
		   docs/record-bpf.md) */
		if (u->val.nr >= SFB_UVMA_MAX)
			break;
		e = &u->val.v[u->val.nr++];
		e->start = r[i].start;
		e->end = r[i].end;
		e->pgoff = r[i].pgoff;
		e->dev = r[i].dev;
		e->ino = r[i].ino;
	}
	/* a full map (8192 processes) leaves the process to the callbacks'
	 * cache: nothing lost but the fallback */
	bpf_map_update_elem(u->fd, &tgid, &u->val, BPF_ANY);
}

/*
 * Read the executable VMAs of process pid (thread, when thread), of every
 * process when pid is 0, into the map.  Return: 0 or -errno (-ENOENT: no
 * such process, its entry dropped).
 */
static int refresh(struct sfp_bpf_defer *b, pid_t pid, bool thread)
{
	struct sfb_uvmas *u = b->uv;
	union bpf_iter_link_info li;
	LIBBPF_OPTS(bpf_iter_attach_opts, o);
	struct bpf_link *l;
	size_t i, start, have;
	int fd, err = 0;

	memset(&li, 0, sizeof(li));
	if (pid > 0) {
		if (thread)
			li.task.tid = (uint32_t)pid;
		else
			li.task.pid = (uint32_t)pid;
		o.link_info = &li;
		o.link_info_len = sizeof(li);
	}
	l = bpf_program__attach_iter(b->skel->progs.dump_vmas, &o);
	if (!l) {
		err = -errno;
		if (pid > 0 && !thread)
			drop(u, pid);
		return err;
	}
	fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0) {
		err = -errno;
		bpf_link__destroy(l);
		return err;
	}
	/* bytes, not records per read(): a read may end anywhere */
	have = 0;
	for (;;) {
		ssize_t got;

		if (have == u->cap_recs * sizeof(*u->recs)) {
			size_t cap = u->cap_recs ? 2 * u->cap_recs : 256;
			void *p = realloc(u->recs, cap * sizeof(*u->recs));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			u->recs = p;
			u->cap_recs = cap;
		}
		got = read(fd, (char *)u->recs + have,
			   u->cap_recs * sizeof(*u->recs) - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		if (!got)
			break;
		have += (size_t)got;
	}
	if (!err && have % sizeof(*u->recs))
		err = -EBADMSG;
	u->nr_recs = have / sizeof(*u->recs);
	close(fd);
	bpf_link__destroy(l);
	if (err)
		return err;
	if (!u->nr_recs) {
		/* gone (a zombie) or no executable file mapping yet */
		if (pid > 0 && !thread)
			drop(u, pid);
		return 0;
	}
	qsort(u->recs, u->nr_recs, sizeof(*u->recs), rec_cmp);
	for (start = 0, i = 1; i <= u->nr_recs; i++)
		if (i == u->nr_recs || u->recs[i].tgid != u->recs[start].tgid) {
			write_one(u, u->recs + start, i - start);
			start = i;
		}
	return 0;
}

int sfb_uvmas__attach(struct sfp_bpf_defer *b, const char *pids,
		      const char *tids)
{
	const char *lists[2] = { pids, tids };
	int k, err;

	if (!pids && !tids)
		return refresh(b, 0, false);
	for (k = 0; k < 2; k++) {
		const char *s = lists[k];

		while (s && *s) {
			char *end;
			long id = strtol(s, &end, 10);

			if (end == s)
				break;
			if (id > 0) {
				err = refresh(b, (pid_t)id, k == 1);
				if (err && err != -ENOENT && err != -ESRCH)
					return err;
			}
			s = *end ? end + 1 : end;
		}
	}
	return 0;
}

bool sfb_uvmas__dirty(struct sfp_bpf_defer *b, pid_t pid)
{
	struct sfb_uvmas *u = b->uv;
	size_t i;

	if (!u)
		return false;
	for (i = 0; i < u->nr_dirty; i++)
		if (u->dirty[i] == pid)
			return true;
	if (u->all)
		return false;
	if (u->nr_dirty == MAX_DIRTY) {
		u->all = true;
		return false;
	}
	u->dirty[u->nr_dirty++] = pid;
	return true;
}

void sfb_uvmas__exit(struct sfp_bpf_defer *b, pid_t pid)
{
	struct sfb_uvmas *u = b->uv;
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr_dirty; i++)
		if (u->dirty[i] == pid) {
			u->dirty[i] = u->dirty[--u->nr_dirty];
			/* the drop of its VMA cache its MMAP2 left to the
			 * flush (sfb_uvmas__flush) */
			if (!b->tw)
				bpf_map_delete_elem(b->vmas_fd, &pid);
			break;
		}
	if (b->tw)
		sfb_worker__vmas(b, pid, true);
	else
		drop(u, pid);
}

void sfb_uvmas__answer(struct sfp_bpf_defer *b, pid_t pid, bool gone)
{
	if (gone)
		drop(b->uv, pid);
	else
		refresh(b, pid, false);
}

int sfb_uvmas__flush(struct sfp_bpf_defer *b)
{
	struct sfb_uvmas *u = b->uv;
	size_t i;
	int err = 0, e;

	if (!u)
		return 0;
	if (b->tw) {
		if (u->all)
			sfb_worker__vmas(b, 0, false);
		for (i = 0; !u->all && i < u->nr_dirty; i++)
			sfb_worker__vmas(b, u->dirty[i], false);
	} else {
		if (u->all)
			err = refresh(b, 0, false);
		for (i = 0; i < u->nr_dirty; i++) {
			e = u->all ? 0 : refresh(b, u->dirty[i], false);
			/* a process gone since its MMAP2 is no error */
			if (e && e != -ENOENT && e != -ESRCH && !err)
				err = e;
			/* the callbacks' cache of the process may name a
			 * module its new mapping replaced: dropped now, after
			 * the table above has the new VMAs, so that a walk
			 * that finds the mmap lock taken has one of the two
			 * (dropped at the MMAP2, the cache went tens of ms
			 * before the table came, just when a new process's
			 * threads fault: 2 Dec 2026, CI) */
			bpf_map_delete_elem(b->vmas_fd, &u->dirty[i]);
		}
	}
	u->nr_dirty = 0;
	u->all = false;
	return err;
}
