// SPDX-License-Identifier: MIT
/*
 * The module registry: one entry per file as common/fileid.h identifies
 * it (its build-id wherever it is mapped, else path + device/inode +
 * mount namespace), reference-counted, so that forked and sibling
 * address spaces, and the containers of one image, share tables instead
 * of loading libc once per process, and two builds at one path never
 * share one.  The registry lock covers the list; each
 * module's load lock its one-time load; lookups after a load read only
 * immutable data.
 */
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/buildid.h"
#include "elf/elf.h"
#include "unwind/module.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct unw_module *registry;
static struct unw_module_stats mstats;	/* atomics; idle* under the lock */
static uint64_t linger_ns, linger_max_bytes;	/* registry lock */

static void module_free(struct unw_module *m);

/* What m's tables hold in memory. */
static uint64_t table_bytes(const struct unw_module *m)
{
	return sfp_sframe__mem_bytes(m->table) +
	       sfp_sframe__mem_bytes(m->fallback);
}

/*
 * Unlink the idle modules past their time, then the oldest while the
 * idle ones hold more than the budget (registry lock held); returns them
 * chained on ->next, to be freed outside the lock.
 */
static struct unw_module *expire_idle(uint64_t now)
{
	struct unw_module **pp, *m, *gone = NULL;

	for (;;) {
		struct unw_module **oldest = NULL;

		for (pp = &registry; (m = *pp); pp = &m->next) {
			if (m->refcnt)
				continue;
			if (now - m->idle_since_ns >= linger_ns)
				break;
			if (!oldest ||
			    m->idle_since_ns < (*oldest)->idle_since_ns)
				oldest = pp;
		}
		if (!m && mstats.idle_bytes > linger_max_bytes && oldest)
			pp = oldest;
		else if (!m)
			return gone;
		m = *pp;
		*pp = m->next;
		mstats.idle--;
		mstats.idle_bytes -= m->idle_bytes;
		mstats.expired++;
		m->next = gone;
		gone = m;
	}
}

static void free_chain(struct unw_module *m)
{
	while (m) {
		struct unw_module *next = m->next;

		module_free(m);
		m = next;
	}
}

uint64_t unw_module_release_pages(void)
{
	struct unw_module *m;
	uint64_t n = 0;

	/* The image is set by the load (which may unmap it again) and
	 * never changes after `loaded`; a module leaves the registry under
	 * this lock before it is unmapped. */
	pthread_mutex_lock(&registry_lock);
	for (m = registry; m; m = m->next)
		if (__atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE) &&
		    m->image_mapped &&
		    !madvise((void *)m->image, m->image_size, MADV_DONTNEED))
			n += m->image_size;
	pthread_mutex_unlock(&registry_lock);
	return n;
}

void unw_module_linger(uint64_t ns, uint64_t max_bytes)
{
	struct unw_module *gone;

	pthread_mutex_lock(&registry_lock);
	linger_ns = ns;
	linger_max_bytes = max_bytes;
	gone = expire_idle(sfp_mono_ns());
	pthread_mutex_unlock(&registry_lock);
	free_chain(gone);
}

static char *join_root(const char *root, const char *path)
{
	size_t a = root ? strlen(root) : 0, b = strlen(path);
	char *s = malloc(a + b + 1);

	if (!s)
		return NULL;
	if (a)
		memcpy(s, root, a);
	memcpy(s + a, path, b + 1);
	return s;
}

/* One more process through which m's file can be opened (registry lock
 * held).  Only before the load looks at them; failure only loses a way. */
static void add_mapper(struct unw_module *m, const char *path, int pid,
		       uint64_t start, uint64_t end)
{
	int i, n = __atomic_load_n(&m->nr_mappers, __ATOMIC_ACQUIRE);
	struct unw_mapper *mp;

	if (pid <= 0 || n >= UNW_MAX_MAPPERS ||
	    __atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE))
		return;
	for (i = 0; i < n; i++)
		if (m->mappers[i].pid == pid)
			return;
	mp = &m->mappers[n];
	mp->path = strdup(path);
	if (!mp->path)
		return;
	mp->pid = pid;
	mp->start = start;
	mp->end = end;
	__atomic_store_n(&m->nr_mappers, n + 1, __ATOMIC_RELEASE);
}

struct unw_module *unw_module_get_id(const struct sfp_file_id *id,
				     const void *image, size_t size,
				     const char *root_dir, int pid,
				     uint64_t start, uint64_t end)
{
	const char *path = id->path;
	struct unw_module *m;
	bool own_fs = !root_dir && pid > 0;

	pthread_mutex_lock(&registry_lock);
	for (m = registry; m; m = m->next)
		if (sfp_file_id_same(&m->key, id)) {
			if (!m->refcnt++) {	/* taken up again */
				mstats.idle--;
				mstats.idle_bytes -= m->idle_bytes;
				mstats.revived++;
			}
			if (own_fs && !m->is_vdso)
				add_mapper(m, path, pid, start, end);
			goto out;
		}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	pthread_mutex_init(&m->load_lock, NULL);
	m->path = strdup(path);
	m->is_vdso = !strcmp(path, "[vdso]");
	m->open_path = m->is_vdso ? strdup(path) : join_root(root_dir, path);
	if (!m->path || !m->open_path)
		goto fail;
	m->key = *id;
	m->key.path = m->path;
	if (id->build_id_len) {
		memcpy(m->build_id, id->build_id, id->build_id_len);
		m->build_id_len = id->build_id_len;
	}
	if (own_fs && !m->is_vdso)
		add_mapper(m, path, pid, start, end);
	if (m->is_vdso) {
		const void *self_img;
		size_t self_size;

		if (!image) {
			if (unw_self_vdso(&self_img, &self_size) == 0) {
				image = self_img;
				size = self_size;
			}
		}
		if (image && size) {
			uint8_t *copy = malloc(size);

			if (!copy)
				goto fail;
			memcpy(copy, image, size);
			m->image = copy;
			m->image_size = size;
		}
	}
	m->refcnt = 1;
	m->next = registry;
	registry = m;
	__atomic_fetch_add(&mstats.modules, 1, __ATOMIC_RELAXED);
	goto out;
fail:
	pthread_mutex_destroy(&m->load_lock);
	free(m->path);
	free(m->open_path);
	free(m);
	m = NULL;
out:
	pthread_mutex_unlock(&registry_lock);
	return m;
}

struct unw_module *unw_module_get(const char *path, const uint8_t *build_id,
				  size_t build_id_len, const void *image,
				  size_t size, const char *root_dir, int pid,
				  uint64_t start, uint64_t end)
{
	struct sfp_file_id id = { .path = path };

	/* (longer ones than GNU's SHA-1 do not occur: unknown then) */
	if (build_id && build_id_len && build_id_len <= SFP_FILE_ID_MAX) {
		memcpy(id.build_id, build_id, build_id_len);
		id.build_id_len = (uint8_t)build_id_len;
	}
	return unw_module_get_id(&id, image, size, root_dir, pid, start, end);
}

void unw_module_stats(struct unw_module_stats *st)
{
	st->modules = __atomic_load_n(&mstats.modules, __ATOMIC_RELAXED);
	st->loaded = __atomic_load_n(&mstats.loaded, __ATOMIC_RELAXED);
	st->mismatch = __atomic_load_n(&mstats.mismatch, __ATOMIC_RELAXED);
	pthread_mutex_lock(&registry_lock);
	st->revived = mstats.revived;
	st->expired = mstats.expired;
	st->idle = mstats.idle;
	st->idle_bytes = mstats.idle_bytes;
	pthread_mutex_unlock(&registry_lock);
}

void unw_module_ref(struct unw_module *m)
{
	pthread_mutex_lock(&registry_lock);
	m->refcnt++;
	pthread_mutex_unlock(&registry_lock);
}

static void module_free(struct unw_module *m)
{
	sfp_sframe__free(&m->table);
	sfp_sframe__free(&m->fallback);
	if (m->image_mapped)
		munmap((void *)m->image, m->image_size);
	else
		free((void *)m->image);
	pthread_mutex_destroy(&m->load_lock);
	for (int i = 0; i < m->nr_mappers; i++)
		free(m->mappers[i].path);
	free(m->path);
	free(m->open_path);
	free(m);
}

void unw_module_put(struct unw_module *m)
{
	struct unw_module **pp, *gone = NULL;
	uint64_t now;

	if (!m)
		return;
	pthread_mutex_lock(&registry_lock);
	if (--m->refcnt > 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	/* a table made stays for the next process that maps the file; a
	 * module whose load never ran or failed has nothing to keep (a
	 * failure may be this process's: gone before its file was read
	 * through it -- the next one is asked again) */
	if (linger_ns && __atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE) &&
	    !m->load_err && m->table) {
		now = sfp_mono_ns();
		m->idle_since_ns = now;
		m->idle_bytes = table_bytes(m);
		mstats.idle++;
		mstats.idle_bytes += m->idle_bytes;
		gone = expire_idle(now);
		pthread_mutex_unlock(&registry_lock);
		free_chain(gone);
		return;
	}
	for (pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	module_free(m);
}

/*
 * Open the file as a process that maps it sees it: in its mount
 * namespace, or the mapped inode itself when the path now holds another
 * file, each candidate checked against the key's build-id before it is
 * used (elf/buildid.h).  The first mapper may be gone: the others are
 * asked in turn.  None left: the plain path, which read_headers checks
 * by build-id too.  A file found with another build-id is counted and
 * said, never read.
 */
static bool resolve_open_path(struct unw_module *m)
{
	int i, n = __atomic_load_n(&m->nr_mappers, __ATOMIC_ACQUIRE);
	char buf[4096], *s;
	bool stale = false;
	int err = -ENOENT;

	for (i = 0; i < n; i++) {
		const struct unw_mapper *mp = &m->mappers[i];

		err = sfp_proc_mapped_file(mp->pid, mp->path, mp->start,
					   mp->end, m->key.build_id,
					   m->key.build_id_len, buf,
					   sizeof(buf));
		if (!err)
			break;
		stale |= err == -ESTALE;
		pr_debug("%s: not found as process %d maps it: %s", m->path,
			 mp->pid, sfp_strerror(err));
	}
	if (err) {
		if (stale) {
			__atomic_fetch_add(&mstats.mismatch, 1,
					   __ATOMIC_RELAXED);
			pr_warn("%s: the file its processes map now has "
				"another build-id than the recorded one; not "
				"using it", m->path);
		}
		return false;
	}
	if (!strcmp(buf, m->open_path) || !(s = strdup(buf)))
		return true;
	pr_debug("%s: reading %s", m->path, s);
	free(m->open_path);
	m->open_path = s;
	return true;
}

/*
 * A file without a build-id in the key, reached by its plain path (no
 * process of it left to open it through): the path may hold another
 * file now (a container's, a newer build).  The kernel's device and
 * inode, where known, must be the file's.  Return: 0 or -ESTALE.
 */
static int check_plain_path(struct unw_module *m)
{
	struct stat st;

	if (m->is_vdso || m->key.build_id_len || (!m->key.dev && !m->key.ino))
		return 0;
	if (stat(m->open_path, &st))
		return 0;	/* not there: the open says so */
	if ((uint64_t)st.st_dev == m->key.dev &&
	    (uint64_t)st.st_ino == m->key.ino)
		return 0;
	__atomic_fetch_add(&mstats.mismatch, 1, __ATOMIC_RELAXED);
	pr_warn("%s: the file at this path is not the mapped one (another "
		"device/inode); not using it", m->path);
	return -ESTALE;
}

/* Map the file read-only for code reads.  Failure is not fatal. */
static void map_image(struct unw_module *m)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(m->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0);
		if (p != MAP_FAILED) {
			m->image = p;
			m->image_size = (size_t)st.st_size;
			m->image_mapped = true;
		}
	}
	close(fd);
}

static int read_headers(struct unw_module *m)
{
	struct sfp_elf *e = NULL;
	size_t i, n;
	int err;

	/* Files through libelf's own mapping (open_mem would copy a whole
	 * image); the vDSO only exists as bytes. */
	if (m->is_vdso)
		err = m->image ? sfp_elf_open_mem(m->image, m->image_size,
						  m->path, &e)
			       : -ENOENT;
	else
		err = sfp_elf_open(m->open_path, &e);
	if (err)
		return err;
	/* The address space that maps it tells whether the machine is the
	 * one it unwinds (unw_module_arch()). */
	if (sfp_elf_machine(e) == EM_X86_64) {
		m->arch = SFP_ARCH_X86_64;
	} else if (sfp_elf_machine(e) == EM_AARCH64) {
		m->arch = SFP_ARCH_AARCH64;
	} else {
		pr_warn("%s: neither an x86-64 nor an AArch64 object "
			"(machine %u)", m->path, sfp_elf_machine(e));
		err = -EOPNOTSUPP;
		goto out;
	}
	/* Where the table will come from (as sfp_sframe__open_elf_table
	 * decides): the object's own .sframe section or segment. */
	{
		struct sfp_elf_section s;

		m->own_sframe = !sfp_elf_find_section(e, NULL, SHT_GNU_SFRAME, &s) ||
				!sfp_elf_find_section(e, ".sframe", 0, &s);
	}
	n = sfp_elf_num_phdrs(e);
	for (i = 0; i < n && m->num_loads < UNW_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (sfp_elf_phdr(e, i, &ph))
			continue;
		if (ph.p_type == PT_GNU_SFRAME)
			m->own_sframe = true;
		if (ph.p_type != PT_LOAD)
			continue;
		m->loads[m->num_loads].vaddr = ph.p_vaddr;
		m->loads[m->num_loads].offset = ph.p_offset;
		m->loads[m->num_loads].filesz = ph.p_filesz;
		m->num_loads++;
	}
	{
		const uint8_t *id;
		size_t len;

		if (sfp_elf_build_id(e, &id, &len) == 0 && len &&
		    len <= UNW_MAX_BUILD_ID) {
			/* The file on disk is not the one that was mapped
			 * (rebuilt, upgraded): its table would be wrong. */
			if (m->build_id_len && (len != m->build_id_len ||
						memcmp(id, m->build_id, len))) {
				__atomic_fetch_add(&mstats.mismatch, 1,
						   __ATOMIC_RELAXED);
				pr_warn("%s: build-id differs from the mapped "
					"object's; not using its table",
					m->path);
				err = -ESTALE;
				goto out;
			}
			memcpy(m->build_id, id, len);
			m->build_id_len = len;
		}
	}
	err = m->num_loads ? 0 : -ENOENT;
out:
	sfp_elf_close(&e);
	return err;
}

/* --- the loader thread (unw_module_async_start) ------------------------- */

struct async_req {
	struct async_req *next;
	struct unw_module *m;		/* a reference */
	bool fallback;			/* the CFI fallback, not the table */
	struct unw_table_opts o;	/* its strings owned */
};

/*
 * A sample that needs a queued table waits for it, briefly: its request
 * goes to the front of the queue and the caller waits at most
 * ASYNC_WAIT_NS for it, and at most ASYNC_WAIT_BUDGET_NS in any second
 * of all such waits.  A program that just started gets whole stacks from
 * its first samples (its small table and libc's cached one take a few
 * milliseconds), while a table that takes long (a browser's .eh_frame)
 * never holds the reading loop for more than a fifth of a second per
 * second: the rings hold seconds of samples at an agent's rates.
 */
#define ASYNC_WAIT_NS		(50 * 1000000ull)
#define ASYNC_WAIT_BUDGET_NS	(200 * 1000000ull)

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t done;		/* a table was built */
	pthread_t thread;
	bool on, stop;
	struct async_req *head, **tail;
	struct unw_async_stats st;
	uint64_t budget_start, waited;	/* this second's waits */
} as_ = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	  .done = PTHREAD_COND_INITIALIZER };

static void req_free(struct async_req *r)
{
	unw_module_put(r->m);
	free((char *)r->o.cache_dir);
	free((char *)r->o.root_dir);
	free(r);
}

static const struct sfp_sframe *fallback_build(struct unw_module *m);

static void *async_main(void *arg)
{
	struct async_req *r;

	(void)arg;
	pthread_setname_np(pthread_self(), "sfp-unw-tables");
	pthread_mutex_lock(&as_.lock);
	for (;;) {
		while (!as_.head && !as_.stop)
			pthread_cond_wait(&as_.cond, &as_.lock);
		if (as_.stop)
			break;
		r = as_.head;
		as_.head = r->next;
		if (!as_.head)
			as_.tail = &as_.head;
		pthread_mutex_unlock(&as_.lock);
		if (r->fallback)
			fallback_build(r->m);
		else
			unw_module_load(r->m, &r->o);
		req_free(r);
		pthread_mutex_lock(&as_.lock);
		as_.st.built++;
		as_.st.pending--;
		pthread_cond_broadcast(&as_.done);
	}
	pthread_mutex_unlock(&as_.lock);
	return NULL;
}

int unw_module_async_start(void)
{
	int err = 0;

	pthread_mutex_lock(&as_.lock);
	if (!as_.on) {
		as_.stop = false;
		as_.head = NULL;
		as_.tail = &as_.head;
		err = -pthread_create(&as_.thread, NULL, async_main, NULL);
		as_.on = !err;
	}
	pthread_mutex_unlock(&as_.lock);
	return err;
}

void unw_module_async_stop(void)
{
	struct async_req *r;

	pthread_mutex_lock(&as_.lock);
	if (!as_.on) {
		pthread_mutex_unlock(&as_.lock);
		return;
	}
	as_.stop = true;
	pthread_cond_broadcast(&as_.cond);
	pthread_mutex_unlock(&as_.lock);
	pthread_join(as_.thread, NULL);
	pthread_mutex_lock(&as_.lock);
	as_.on = false;
	while ((r = as_.head)) {
		as_.head = r->next;
		/* not built: the next load (synchronous now) builds it */
		if (r->fallback)
			r->m->fb_queued = false;
		else
			r->m->queued = false;
		as_.st.pending--;
		pthread_mutex_unlock(&as_.lock);
		req_free(r);
		pthread_mutex_lock(&as_.lock);
	}
	as_.tail = &as_.head;
	pthread_mutex_unlock(&as_.lock);
}

void unw_module_async_stats(struct unw_async_stats *st)
{
	pthread_mutex_lock(&as_.lock);
	*st = as_.st;
	pthread_mutex_unlock(&as_.lock);
	st->not_ready = __atomic_load_n(&as_.st.not_ready, __ATOMIC_RELAXED);
}

void unw_module_note_not_ready(void)
{
	__atomic_fetch_add(&as_.st.not_ready, 1, __ATOMIC_RELAXED);
}

/*
 * Queue m's table (or its fallback) for the loader thread.  Return:
 * true when the caller must not build it (queued now or before), false
 * when async loading is off (or the queue cannot grow: build it here).
 */
static bool async_queue(struct unw_module *m, const struct unw_table_opts *o,
			bool fallback)
{
	struct async_req *r;
	bool *flag = fallback ? &m->fb_queued : &m->queued;

	pthread_mutex_lock(&as_.lock);
	if (!as_.on || as_.stop) {
		pthread_mutex_unlock(&as_.lock);
		return false;
	}
	if (*flag) {
		pthread_mutex_unlock(&as_.lock);
		return true;
	}
	r = calloc(1, sizeof(*r));
	if (r && o) {
		r->o.no_cache = o->no_cache;
		if ((o->cache_dir && !(r->o.cache_dir = strdup(o->cache_dir))) ||
		    (o->root_dir && !(r->o.root_dir = strdup(o->root_dir)))) {
			free((char *)r->o.cache_dir);
			free(r);
			r = NULL;
		}
	}
	if (!r) {
		pthread_mutex_unlock(&as_.lock);
		return false;
	}
	*flag = true;
	unw_module_ref(m);
	r->m = m;
	r->fallback = fallback;
	*as_.tail = r;
	as_.tail = &r->next;
	as_.st.queued++;
	as_.st.pending++;
	pthread_cond_signal(&as_.cond);
	pthread_mutex_unlock(&as_.lock);
	return true;
}

/*
 * m's table is queued and a sample needs it now: move its request to the
 * front and wait for it within the budget.  Return: true when it is built.
 */
static bool async_wait(struct unw_module *m)
{
	struct async_req **pp, *r;
	uint64_t now = sfp_mono_ns(), until;
	struct timespec ts;

	pthread_mutex_lock(&as_.lock);
	for (pp = &as_.head; (r = *pp); pp = &r->next) {
		if (r->m != m || r->fallback || pp == &as_.head)
			continue;
		*pp = r->next;
		if (as_.tail == &r->next)
			as_.tail = pp;
		r->next = as_.head;
		as_.head = r;
		break;
	}
	if (now - as_.budget_start >= 1000000000ull) {
		as_.budget_start = now;
		as_.waited = 0;
	}
	until = now + ASYNC_WAIT_NS;
	if (as_.waited >= ASYNC_WAIT_BUDGET_NS)
		until = now;
	else if (until - now > ASYNC_WAIT_BUDGET_NS - as_.waited)
		until = now + (ASYNC_WAIT_BUDGET_NS - as_.waited);
	/* pthread_cond_timedwait's clock is CLOCK_REALTIME by default */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)((until - now) / 1000000000ull);
	ts.tv_nsec += (long)((until - now) % 1000000000ull);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (!__atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE) && as_.on &&
	       !as_.stop && sfp_mono_ns() < until)
		if (pthread_cond_timedwait(&as_.done, &as_.lock, &ts))
			break;
	as_.waited += sfp_mono_ns() - now;
	pthread_mutex_unlock(&as_.lock);
	return __atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE);
}

int unw_module_load_nowait(struct unw_module *m,
			   const struct unw_table_opts *opts)
{
	if (__atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE))
		return m->load_err;
	if (async_queue(m, opts, false))
		return async_wait(m) ? m->load_err : -EAGAIN;
	return unw_module_load(m, opts);
}

int unw_module_load(struct unw_module *m, const struct unw_table_opts *opts)
{
	int err;

	if (__atomic_load_n(&m->loaded, __ATOMIC_ACQUIRE))
		return m->load_err;
	pthread_mutex_lock(&m->load_lock);
	if (m->loaded)
		goto out;
	err = 0;
	if (m->is_vdso || !m->nr_mappers || !resolve_open_path(m))
		err = check_plain_path(m);
	if (!err && !m->image && !m->is_vdso)
		map_image(m);
	if (!err)
		err = read_headers(m);
	if (err == -ESTALE && m->image_mapped) {
		/* another file's bytes: not even for code reads */
		munmap((void *)m->image, m->image_size);
		m->image = NULL;
		m->image_size = 0;
		m->image_mapped = false;
	}
	if (!err) {
		err = unw_open_table(m->is_vdso ? m->path : m->open_path,
				     m->is_vdso ? m->image : NULL,
				     m->image_size, opts, &m->table);
		if (err && err != -ENOENT)
			pr_warn("%s: no unwind table: %s", m->path,
				sfp_strerror(err));
		else if (err)
			pr_debug("%s: no unwind table", m->path);
	} else {
		pr_debug("%s: cannot read ELF headers: %s", m->path,
			 sfp_strerror(err));
	}
	m->load_err = err;
	__atomic_fetch_add(&mstats.loaded, 1, __ATOMIC_RELAXED);
	if (m->build_id_len) {
		char hex[2 * UNW_MAX_BUILD_ID + 1];

		for (size_t i = 0; i < m->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
		pr_debug("module %s (build-id %s) loaded from %s: %s", m->path,
			 hex, m->is_vdso ? m->path : m->open_path,
			 err ? sfp_strerror(err) : "table");
	} else {
		pr_debug("module %s (no build-id) loaded from %s: %s", m->path,
			 m->is_vdso ? m->path : m->open_path,
			 err ? sfp_strerror(err) : "table");
	}
	__atomic_store_n(&m->loaded, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&m->load_lock);
	return m->load_err;
}

/* Build the fallback (once), here. */
static const struct sfp_sframe *fallback_build(struct unw_module *m)
{
	int err;

	pthread_mutex_lock(&m->load_lock);
	if (!m->fb_loaded) {
		err = unw_open_cfi_table(m->open_path, &m->fallback);
		if (err)
			pr_debug("%s: no CFI table besides its .sframe: %s",
				 m->path, sfp_strerror(err));
		else
			pr_debug("%s: CFI table for what its .sframe leaves "
				 "out", m->path);
		__atomic_store_n(&m->fb_loaded, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&m->load_lock);
	return m->fallback;
}

const struct sfp_sframe *unw_module_fallback(struct unw_module *m)
{
	if (!m->own_sframe || m->is_vdso || !m->table)
		return NULL;
	if (__atomic_load_n(&m->fb_loaded, __ATOMIC_ACQUIRE))
		return m->fallback;
	if (async_queue(m, NULL, true))
		return NULL;	/* the loader thread builds it */
	return fallback_build(m);
}

int unw_module_bias(const struct unw_module *m, uint64_t start,
		    uint64_t pgoff, uint64_t *bias)
{
	size_t i;

	for (i = 0; i < m->num_loads; i++) {
		const struct unw_load *l = &m->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)(UNW_PAGE_SIZE - 1);

		if (pgoff >= lo && pgoff < l->offset + l->filesz) {
			*bias = start - pgoff - (l->vaddr - l->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int unw_module_read(const struct unw_module *m, uint64_t off, void *buf,
		    size_t len)
{
	if (!m->image || off > m->image_size || len > m->image_size - off)
		return -EFAULT;
	memcpy(buf, m->image + off, len);
	return 0;
}

int unw_self_vdso(const void **image, size_t *size)
{
	static const void *img;
	static size_t img_size;
	char line[256];
	FILE *f;

	if (img) {
		*image = img;
		*size = img_size;
		return 0;
	}
	if (!getauxval(AT_SYSINFO_EHDR))
		return -ENOENT;
	/* The extent of the vDSO mapping, from our own maps. */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &a, &b) == 2 && b > a) {
			img = (const void *)(uintptr_t)a;
			img_size = b - a;
			break;
		}
	}
	fclose(f);
	if (!img)
		return -ENOENT;
	*image = img;
	*size = img_size;
	return 0;
}
