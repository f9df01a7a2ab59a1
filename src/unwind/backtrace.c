// SPDX-License-Identifier: MIT
/*
 * sfp_backtrace(): the calling thread's stack, safe in signal handlers.
 *
 * Everything that allocates or locks happens in sfp_backtrace_init() /
 * sfp_backtrace_refresh(): dl_iterate_phdr() lists the loaded objects, each
 * object's table is opened once, and an immutable, sorted array of code
 * ranges is published with one atomic store.  The signal-path walk only
 * loads that pointer, binary-searches the array, looks rows up in the
 * (immutable, lock-free) tables and reads the stack with checked reads.
 * Warm PCs skip all of that: their rules sit packed in one word each in
 * the state's packed cache (rule-pack.h, bt_walk_packed), read with one
 * load per frame and no lock; the walk falls back to the general loop at
 * the first frame that cache cannot step.
 * Arrays and tables are never freed before sfp_backtrace_fini(), so a walk
 * racing with a refresh always sees valid memory.
 *
 * dlopen/dlclose are noticed by dl_iterate_phdr's adds/subs counters on the
 * next refresh; a walk that meets a PC outside every known object marks
 * the state stale so that the next refresh reloads.  A refresh runs when
 * the application asks for one, or from the watcher thread that
 * sfp_backtrace_watch() starts: a signal handler can never load tables
 * itself, so a profiler that cannot hook dlopen lets the watcher do it.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include "unwind/module.h"
#include "unwind/rule-pack.h"
#include "unwind/walk.h"

/* One executable segment of a loaded object. */
struct bt_range {
	uint64_t start;
	uint64_t end;
	uint64_t bias;
	const struct sfp_sframe *table;		/* NULL: FP fallback only */
};

struct bt_state {
	struct bt_state *older;		/* retired states, freed by fini */
	uint64_t gen;			/* PC-cache generation */
	/*
	 * The packed PC cache, UNW_PK_ENTRIES slots, empty with each new
	 * state: a reload (dlopen/dlclose) drops every entry by publishing
	 * a new state, and a walk still on the old one keeps the cache
	 * that matches the ranges it uses.  A slot is two words:
	 *  - pk_rule[i]: the PC's rule and tag in one word (rule-pack.h);
	 *  - pk_caller[i]: the return address this PC's frame had last
	 *    time.  Only a guess, checked against the return address read
	 *    from the stack before it is used, so it needs no atomicity
	 *    with the rule word: a stale guess costs a branch miss, never
	 *    a wrong frame.  Why guess: without it a frame is two dependent
	 *    loads (the slot, then the RA at CFA - 8) before the next
	 *    slot's address is known; with a right guess the next slot is
	 *    loaded at once and the RA loads only confirm, off the chain.
	 * Separate arrays so that both are indexed with one scaled address.
	 */
	uint64_t *pk_rule;
	uint64_t *pk_caller;
	unsigned long long adds, subs;
	size_t n;
	struct bt_range r[];
};

/*
 * PC -> rule cache shared by all threads (behind the packed cache: full
 * rules, for the general loop), lock-free: each entry has a
 * sequence count, odd while a writer (whoever wins the CAS) fills it.  A
 * reader copies the entry and keeps the copy only if the count was even
 * and unchanged; a writer that loses the CAS simply does not cache.  So a
 * signal handler that interrupts a writer in its own thread neither
 * blocks nor reads a torn entry.  Entries carry the state's generation:
 * a reload (dlopen/dlclose) invalidates them all.
 */
#define BT_CACHE_SIZE 4096

struct bt_cent {
	uint32_t seq;
	uint64_t key;			/* ip << 1 | exact */
	uint64_t gen;
	struct unw_rule rule;
};

static struct bt_cent bt_cache[BT_CACHE_SIZE];
static uint64_t bt_gen;

/* A table loaded for one object (kept until fini). */
struct bt_table {
	struct bt_table *next;
	char *name;
	uint64_t base;
	struct sfp_sframe *table;	/* NULL: none found */
};

static pthread_mutex_t bt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bt_state *bt_cur;		/* atomic */
static struct bt_table *bt_tables;
static int bt_stale;			/* atomic */
static pid_t bt_pid;
/* The main thread's stack mapping: its top is fixed for the life of the
 * process and everything from a live sp up to it is mapped, so reads there
 * need no probe.  Other stacks (threads, sigaltstack) are probed page by
 * page. */
static uint64_t bt_stack_lo, bt_stack_hi;
#if defined(__aarch64__)
/* The virtual-address bits of a return address (PAC stripped). */
static uint64_t bt_ra_mask = (1ull << UNW_A64_VA_BITS) - 1;
#endif

/* Bounds of this thread's stack, recorded by sfp_backtrace_thread_init().
 * initial-exec: reading it in a signal handler must not allocate. */
struct bt_tls_stack {
	uint64_t lo, hi;
};
static __thread struct bt_tls_stack bt_thread_stack
	__attribute__((tls_model("initial-exec")));

int sfp_backtrace_thread_init(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int err;

	err = pthread_getattr_np(pthread_self(), &attr);
	if (err)
		return -err;
	err = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	bt_thread_stack.lo = (uintptr_t)addr;
	bt_thread_stack.hi = (uintptr_t)addr + size;
	return 0;
}

static void find_main_stack(void)
{
	struct rlimit rl;
	char line[512];
	FILE *f;

	if (bt_stack_hi)
		return;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (strstr(line, "[stack]") &&
		    sscanf(line, "%llx-%llx", &a, &b) == 2) {
			bt_stack_lo = a;
			bt_stack_hi = b;
		}
	}
	fclose(f);
	/* The mapping grows down to at most the stack rlimit. */
	if (bt_stack_hi && !getrlimit(RLIMIT_STACK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < bt_stack_hi &&
	    bt_stack_hi - rl.rlim_cur < bt_stack_lo)
		bt_stack_lo = bt_stack_hi - rl.rlim_cur;
}

struct seg_list {
	struct bt_range *r;
	size_t n, cap;
	unsigned long long adds, subs;
	bool have_gen;
	int err;
};

static struct sfp_sframe *table_for(const char *name, uint64_t base,
				    bool vdso)
{
	struct unw_table_opts topts = { 0 };
	struct bt_table *t;
	const void *img = NULL;
	size_t size = 0;
	char exe[4096];

	for (t = bt_tables; t; t = t->next)
		if (t->base == base && !strcmp(t->name, name))
			return t->table;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->name = strdup(name);
	if (!t->name) {
		free(t);
		return NULL;
	}
	t->base = base;
	topts.cache_dir = getenv("SFPROF_CACHE_DIR");
	if (vdso) {
		if (unw_self_vdso(&img, &size) == 0)
			unw_open_table("[vdso]", img, size, &topts, &t->table);
	} else if (!*name) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = 0;
			unw_open_table(exe, NULL, 0, &topts, &t->table);
		}
	} else {
		unw_open_table(name, NULL, 0, &topts, &t->table);
	}
	t->next = bt_tables;
	bt_tables = t;
	return t->table;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seg_list *l = arg;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	const struct sfp_sframe *table = NULL;
	bool have_table = false;
	int i;

	if (!l->have_gen && size >= offsetof(struct dl_phdr_info, dlpi_subs) +
					    sizeof(info->dlpi_subs)) {
		l->adds = info->dlpi_adds;
		l->subs = info->dlpi_subs;
		l->have_gen = true;
	}
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct bt_range *r;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!have_table) {
			const char *name = info->dlpi_name ? info->dlpi_name
							   : "";
			/* The vDSO is named by its soname, not a path. */
			bool is_vdso = (*name && !strchr(name, '/')) ||
				(vdso && vdso >= info->dlpi_addr &&
				 vdso < info->dlpi_addr + ph->p_vaddr +
					ph->p_memsz);

			table = table_for(name, info->dlpi_addr, is_vdso);
			have_table = true;
		}
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 32;
			struct bt_range *nr = realloc(l->r, cap * sizeof(*nr));

			if (!nr) {
				l->err = -ENOMEM;
				return 1;
			}
			l->r = nr;
			l->cap = cap;
		}
		r = &l->r[l->n++];
		r->start = info->dlpi_addr + ph->p_vaddr;
		r->end = r->start + ph->p_memsz;
		r->bias = info->dlpi_addr;
		r->table = table;
	}
	return 0;
}

#if defined(__aarch64__)
/*
 * The signal trampoline outside every object: the kernel's is in the vDSO
 * (listed by dl_iterate_phdr), but qemu-user puts its own in an anonymous
 * executable page.  Such a page is added as a range without a table, so
 * that the walk recognises the trampoline (mov x8, #139; svc #0) there
 * instead of taking the handler's return address for garbage.  Read here,
 * outside signal context, while /proc/self/maps says it is mapped.
 */
static void add_sigtramp_pages(struct seg_list *l)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off, ino;
		char perm[8], path[8] = "";
		const uint8_t *p;
		struct bt_range *r;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %7s", &a, &b,
			   perm, &off, &ino, path) < 5 ||
		    strcmp(perm, "r-xp") || ino || *path || b <= a ||
		    b - a > 16 * UNW_PAGE_SIZE)
			continue;
		for (p = (const uint8_t *)(uintptr_t)a;
		     p + UNW_A64_SIGRETURN_LEN <= (const uint8_t *)(uintptr_t)b;
		     p += 4)
			if (unw_is_a64_sigreturn(p, UNW_A64_SIGRETURN_LEN))
				break;
		if (p + UNW_A64_SIGRETURN_LEN > (const uint8_t *)(uintptr_t)b)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 32;
			struct bt_range *nr = realloc(l->r, cap * sizeof(*nr));

			if (!nr)
				break;
			l->r = nr;
			l->cap = cap;
		}
		r = &l->r[l->n++];
		r->start = a;
		r->end = b;
		r->bias = 0;
		r->table = NULL;
	}
	fclose(f);
}
#endif

static int cmp_range(const void *a, const void *b)
{
	const struct bt_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Read only the generation counters. */
static int gen_only(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seg_list *l = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		l->adds = info->dlpi_adds;
		l->subs = info->dlpi_subs;
		l->have_gen = true;
	}
	return 1;
}

static int reload(bool force)
{
	struct seg_list l = { 0 };
	struct bt_state *st, *old = __atomic_load_n(&bt_cur, __ATOMIC_ACQUIRE);
	int err = 0;

	if (old && !force) {
		dl_iterate_phdr(gen_only, &l);
		if (l.have_gen && l.adds == old->adds && l.subs == old->subs &&
		    !__atomic_load_n(&bt_stale, __ATOMIC_RELAXED))
			return 0;
		memset(&l, 0, sizeof(l));
	}
	bt_pid = getpid();
	find_main_stack();
	dl_iterate_phdr(collect, &l);
	if (l.err) {
		err = l.err;
		goto out;
	}
#if defined(__aarch64__)
	add_sigtramp_pages(&l);
	bt_ra_mask = (1ull << (bt_stack_hi > (1ull << UNW_A64_VA_BITS)
				       ? UNW_A64_VA_BITS_LARGE
				       : UNW_A64_VA_BITS)) - 1;
#endif
	if (l.n > 1)	/* (l.r is NULL while empty) */
		qsort(l.r, l.n, sizeof(*l.r), cmp_range);
	st = malloc(sizeof(*st) + l.n * sizeof(st->r[0]));
	if (!st) {
		err = -ENOMEM;
		goto out;
	}
	/* calloc: untouched slots stay unbacked zero pages. */
	st->pk_rule = calloc(2 * (size_t)UNW_PK_ENTRIES,
			     sizeof(*st->pk_rule));
	st->pk_caller = st->pk_rule + UNW_PK_ENTRIES; /* (bt_walk_packed) */
	if (!st->pk_rule) {
		free(st);
		err = -ENOMEM;
		goto out;
	}
	st->older = old;
	st->gen = ++bt_gen;
	st->adds = l.adds;
	st->subs = l.subs;
	st->n = l.n;
	if (l.n)
		memcpy(st->r, l.r, l.n * sizeof(st->r[0]));
	__atomic_store_n(&bt_stale, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bt_cur, st, __ATOMIC_RELEASE);
	err = 1;
out:
	free(l.r);
	return err;
}

int sfp_backtrace_init(void)
{
	int err;

	pthread_mutex_lock(&bt_lock);
	err = reload(false);
	pthread_mutex_unlock(&bt_lock);
	return err < 0 ? err : 0;
}

int sfp_backtrace_refresh(void)
{
	int err;

	pthread_mutex_lock(&bt_lock);
	err = reload(false);
	pthread_mutex_unlock(&bt_lock);
	return err;
}

/* --- The watcher: refreshes outside signal context, on a timer. --- */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond = PTHREAD_COND_INITIALIZER;
static pthread_t watch_thread;
static bool watch_on;
static unsigned int watch_ms;

static void *watch_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&watch_lock);
	while (watch_on) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += watch_ms / 1000;
		ts.tv_nsec += (long)(watch_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&watch_cond, &watch_lock, &ts);
		if (!watch_on)
			break;
		pthread_mutex_unlock(&watch_lock);
		/* Cheap when nothing changed: two counters are compared. */
		sfp_backtrace_refresh();
		pthread_mutex_lock(&watch_lock);
	}
	pthread_mutex_unlock(&watch_lock);
	return NULL;
}

int sfp_backtrace_watch(unsigned int interval_ms)
{
	sigset_t all, old;
	int err = 0;

	pthread_mutex_lock(&watch_lock);
	if (interval_ms) {
		watch_ms = interval_ms;
		if (!watch_on) {
			/* The watcher takes no signals: SIGPROF and the like
			 * belong to the application's threads. */
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			watch_on = true;
			err = -pthread_create(&watch_thread, NULL, watch_main,
					      NULL);
			if (err)
				watch_on = false;
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
		pthread_mutex_unlock(&watch_lock);
		return err;
	}
	if (!watch_on) {
		pthread_mutex_unlock(&watch_lock);
		return 0;
	}
	watch_on = false;
	pthread_cond_signal(&watch_cond);
	pthread_mutex_unlock(&watch_lock);
	pthread_join(watch_thread, NULL);
	return 0;
}

void sfp_backtrace_fini(void)
{
	struct bt_state *st;
	struct bt_table *t;

	sfp_backtrace_watch(0);
	pthread_mutex_lock(&bt_lock);
	st = __atomic_exchange_n(&bt_cur, NULL, __ATOMIC_ACQ_REL);
	while (st) {
		struct bt_state *o = st->older;

		free(st->pk_rule);
		free(st);
		st = o;
	}
	while ((t = bt_tables)) {
		bt_tables = t->next;
		sfp_sframe__free(&t->table);
		free(t->name);
		free(t);
	}
	pthread_mutex_unlock(&bt_lock);
}

/* --- The signal-safe walk. --- */

struct bt_ctx {
	const struct bt_state *st;
	uint64_t safe_lo, safe_hi;	/* readable without a probe */
	uint64_t pages[UNW_SELF_PAGES];
	unsigned int next;
	pid_t pid;
	bool missed;
};

static const struct bt_range *bt_find(const struct bt_state *st,
				      uint64_t pc)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct bt_range *r = &st->r[mid];

		if (pc < r->start)
			hi = mid;
		else if (pc >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

static int bt_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bt_ctx *c = ctx;

	if (addr >= c->safe_lo && addr < c->safe_hi && len <= c->safe_hi - addr) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	return unw_self_read(c->pages, UNW_SELF_PAGES, &c->next, c->pid, addr,
			     buf, len);
}

/* Code inside a known executable segment is mapped: plain copy. */
static int bt_read_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct bt_ctx *c = ctx;
	const struct bt_range *r = bt_find(c->st, ip);

	if (!r || ip + len > r->end || ip + len < ip)
		return bt_read(ctx, ip, buf, len);
	memcpy(buf, (const void *)(uintptr_t)ip, len);
	return 0;
}

static struct bt_cent *cache_slot(uint64_t key)
{
	return &bt_cache[((key * 0x9e3779b97f4a7c15ull) >> 40) &
			 (BT_CACHE_SIZE - 1)];
}

static bool cache_get(uint64_t key, uint64_t gen, struct unw_rule *rule)
{
	struct bt_cent *e = cache_slot(key);
	uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), s2;

	if ((s1 & 1) || e->key != key || e->gen != gen)
		return false;
	*rule = e->rule;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	return s1 == s2;
}

static void cache_put(uint64_t key, uint64_t gen, const struct unw_rule *rule)
{
	struct bt_cent *e = cache_slot(key);
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&e->seq, &s, s + 1, false,
						    __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return;
	e->key = key;
	e->gen = gen;
	e->rule = *rule;
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

static void bt_lookup_slow(struct bt_ctx *c, uint64_t pc, uint64_t ip,
			   struct unw_rule *rule)
{
	const struct bt_range *r = bt_find(c->st, pc);
	struct sfp_sframe_row row;

	memset(rule, 0, sizeof(*rule));
	rule->kind = UNW_R_NONE;
	if (!r) {
#if defined(__aarch64__)
		/* A trampoline at the first byte of its own page (qemu's):
		 * the return address - 1 lies outside it. */
		if (pc != ip && bt_find(c->st, ip) &&
		    unw_check_sigreturn_a64(bt_read_code, c, ip, false)) {
			rule->kind = UNW_R_SIGRETURN;
			return;
		}
#endif
		c->missed = true;
		rule->kind = UNW_R_NOT_CODE;
		return;
	}
#if defined(__aarch64__)
	if (unw_check_sigreturn_a64(bt_read_code, c, ip, pc == ip)) {
#else
	if (unw_check_sigreturn(bt_read_code, c, ip, pc == ip)) {
#endif
		rule->kind = UNW_R_SIGRETURN;
		return;
	}
	if (r->table && sfp_sframe__find(r->table, pc - r->bias, &row) == 0)
		unw_rule_from_row(rule, &row);
}

static const struct unw_rule *bt_lookup(void *ctx, uint64_t pc, uint64_t ip,
					struct unw_rule *rule)
{
	struct bt_ctx *c = ctx;
	uint64_t key = (ip << 1) | (pc == ip);

	if (!cache_get(key, c->st->gen, rule)) {
		bt_lookup_slow(c, pc, ip, rule);
		/* Misses outside every object are not cached: a refresh may
		 * map code there. */
		if (rule->kind == UNW_R_NOT_CODE)
			return rule;
		cache_put(key, c->st->gen, rule);
	}
	/* For the next walk's packed loop: one plain atomic store. */
	if (!(ip >> UNW_PK_PC_BITS)) {
		uint64_t bits = unw_rule_pack(rule);
		uint64_t pkey = unw_pk_key(ip, pc == ip);

		if (bits)
			__atomic_store_n(&c->st->pk_rule[unw_pk_index(pkey)],
					 unw_pk_tag(pkey) | bits,
					 __ATOMIC_RELAXED);
	}
	return rule;
}

struct bt_regs {
	uint64_t ip, sp, fp;
};

/*
 * A wrong guess of the caller: remember the real one.  Out of line so
 * that the compiler keeps a branch here and the next frame's ip comes
 * from the guess, not from the stack load.
 *
 * Slots take PCs below 2^48 only (the tag drops the bits above), so the
 * loops must never look one up.  Guesses are below 2^48 (nothing else is
 * stored), hence so is every confirmed one; a return address at or above
 * 2^48 comes back from here as 1 instead: no slot holds 1 and no object
 * either, so the walk ends at that frame with bad-ra, as the general
 * loop ends it for the real value.
 */
static __attribute__((noinline, cold)) uint64_t
bt_new_caller(uint64_t *callers, uint32_t i, uint64_t ra)
{
	if (ra >> UNW_PK_PC_BITS)
		return 1;
	__atomic_store_n(&callers[i], ra, __ATOMIC_RELAXED);
	return ra;
}

/* The return address read from the stack, as the next frame's ip: the
 * guess when it is right.  The compiler must not learn that the two are
 * equal on the fall-through: it could then use the loaded value (or a
 * register that holds their difference, 0, as some other zero) and put
 * the stack load back on the chain.  So the comparison is opaque: an asm
 * goto on x86-64, a difference hidden behind an empty asm elsewhere. */
static __attribute__((always_inline)) inline uint64_t
bt_confirm(uint64_t *callers, uint32_t i, uint64_t ra)
{
	uint64_t guess = __atomic_load_n(&callers[i], __ATOMIC_RELAXED);

#if defined(__x86_64__)
	__asm__ goto("cmp %0, %1\n\tjne %l[miss]"
		     : : "r"(ra), "r"(guess) : "cc" : miss);
	return guess;
miss:
	return bt_new_caller(callers, i, ra);
#else
	uint64_t diff = ra ^ guess;

	__asm__("" : "+r"(diff));
	if (__builtin_expect(diff != 0, 0))
		guess = bt_new_caller(callers, i, ra);
	return guess;
#endif
}

/* A stack word the caller proved mapped (memcpy: no alignment is
 * assumed; it compiles to one load). */
static __attribute__((always_inline)) inline uint64_t
bt_load(uint64_t addr)
{
	uint64_t v;

	memcpy(&v, (const void *)(uintptr_t)addr, sizeof(v));
	return v;
}

/*
 * The common frame, alone in a loop of its own so that everything it
 * needs stays in registers: a caller (not exact) whose rule is CFA = SP +
 * off, tag and kind checked in one test.  Every read lies in [sp, cfa)
 * and cfa >= sp + 8 (rule-pack.h); lo <= sp holds all along.  Returns at
 * the first frame that is anything else, or that would pass hi or the
 * end of the buffer, before storing it: the caller looks at it again.
 */
struct bt_pw {
	uint64_t ip, sp, fp;
	void **out;
};

static __attribute__((noinline)) void
bt_walk_sp_rows(uint64_t *rules, struct bt_pw *w, void **end, uint64_t hi)
{
	uint64_t *callers = rules + UNW_PK_ENTRIES;
	uint64_t ip = w->ip, sp = w->sp, fp = w->fp;
	void **out = w->out;

	while (out != end) {
		uint32_t i = unw_pk_index(ip);
		uint64_t e = __atomic_load_n(&rules[i], __ATOMIC_RELAXED);
		uint64_t cfa;

		if (!unw_pk_hit_kind(e, ip, UNW_PK_SP))
			break;
		cfa = sp + unw_pk_cfa_off(e);
		if (cfa > hi)
			break;
		if (unw_pk_fp_slot(e) != UNW_PK_NOT_SAVED)
			fp = bt_load(cfa + unw_pk_fp_slot(e) * 8);
		*out++ = (void *)(uintptr_t)ip;
		/* An ip of 0 (or 1, see bt_new_caller) ends the loop at the
		 * next frame (no slot matches it): bt_walk_packed's hand-off
		 * says why. */
		ip = bt_confirm(callers, i,
				bt_load(cfa + unw_pk_ra_slot(e) * 8));
		sp = cfa;
	}
	w->ip = ip;
	w->sp = sp;
	w->fp = fp;
	w->out = out;
}

/*
 * The walk over packed rules: per frame one load of the PC's slot (tag and
 * rule in one word), one of its guessed caller, and the loads of the RA
 * and saved FP, plain loads because every address is checked to lie in
 * [lo, hi), the part of this thread's stack known to be mapped.  It steps
 * exactly the rules that the general loop (walk.h) steps with its short
 * path, the outermost row and signal frames, with the same stop checks in
 * the same order.  Anything else -- an empty or foreign slot, a rule that
 * is not packed, a read outside [lo, hi) -- returns before the frame is
 * stored, with *r and *exactp the state of that frame: the general loop
 * goes on from there and gets the result it would have had from the
 * start.  Return: frames stored; *stop >= 0 when the walk ended here, -1
 * to go on.
 */
static __attribute__((noinline)) size_t
bt_walk_packed(const struct bt_state *st, struct bt_regs *r, bool *exactp,
	       void **buf, size_t max, uint64_t lo, uint64_t hi, int *stop)
{
	/* pk_caller is pk_rule + UNW_PK_ENTRIES: one base register for
	 * both, the other a constant displacement. */
	uint64_t *rules = st->pk_rule, *callers = rules + UNW_PK_ENTRIES;
	uint64_t ip = r->ip, sp = r->sp, fp = r->fp;
	uint64_t xbit = 0;		/* UNW_PK_EXACT for an exact frame */
	void **out = buf, **end = buf + max;

	*stop = -1;
	/* Every later ip is a confirmed guess (below 2^48, see
	 * bt_new_caller) or checked where it is read. */
	if (ip >> UNW_PK_PC_BITS)
		goto handoff;
	for (;;) {
		uint64_t e, key, cfa, nip, nfp, fp_at;
		uint32_t i;

		if (!xbit) {
			struct bt_pw w = { ip, sp, fp, out };

			bt_walk_sp_rows(rules, &w, end, hi);
			ip = w.ip;
			sp = w.sp;
			fp = w.fp;
			out = w.out;
		}
		/* Everything else: exact frames (after a signal frame),
		 * FP-based rows, the outermost frame, signal frames. */
		key = ip | xbit;
		i = unw_pk_index(key);
		e = __atomic_load_n(&rules[i], __ATOMIC_RELAXED);
		if (!unw_pk_hit(e, key))
			break;
		switch (unw_pk_kind(e)) {
		case UNW_PK_SP:
			cfa = sp + unw_pk_cfa_off(e);
			if (cfa > hi)
				goto out;
			nfp = fp;
			if (unw_pk_fp_slot(e) != UNW_PK_NOT_SAVED)
				nfp = bt_load(cfa + unw_pk_fp_slot(e) * 8);
			break;
		case UNW_PK_FP:
			cfa = fp + unw_pk_cfa_off(e);
			/* The reads: the RA slot, which must lie in [lo,
			 * hi), and an FP slot at or above SP (>= lo), both
			 * below the CFA, which must not pass hi.  Bounding
			 * them by the lowest possible slot instead (CFA -
			 * 120 >= lo) handed back every frame whose CFA sat
			 * in the first 120 bytes of the walker's page: 1
			 * stack in 150 with ASLR, 1 in 5 under ASan. */
			if (cfa - lo > hi - lo ||
			    cfa + unw_pk_ra_slot(e) * 8 - lo > hi - lo - 8)
				goto out;
			nfp = fp;
			/* A slot below SP was popped by the epilogue: FP
			 * holds the caller's value (walk.h, fp_slot_popped). */
			if (unw_pk_fp_slot(e) != UNW_PK_NOT_SAVED &&
			    (fp_at = cfa + unw_pk_fp_slot(e) * 8) >= sp)
				nfp = bt_load(fp_at);
			break;
		case UNW_PK_OUTERMOST:
			if (out == end) {
				*stop = SFP_STOP_DEPTH;
				goto out;
			}
			*out++ = (void *)(uintptr_t)ip;
			*stop = SFP_STOP_OUTERMOST;
			goto out;
		case UNW_PK_SIGNAL:
			if (sp - lo > hi - lo - UC_RIP - 8)
				goto out;
			if (out == end) {
				*stop = SFP_STOP_DEPTH;
				goto out;
			}
			*out++ = (void *)(uintptr_t)ip;
			ip = bt_load(sp + UC_RIP);
			fp = bt_load(sp + UC_RBP);
			sp = bt_load(sp + UC_RSP);
			/* No SP check: a signal frame may switch stacks.
			 * The SP rows read from SP up: off this stack's
			 * known part, the general loop goes on. */
			xbit = UNW_PK_EXACT;
			if (!ip || ip >> UNW_PK_PC_BITS || sp - lo > hi - lo)
				goto out;
			continue;
		default:
			goto out;
		}
		/* UNW_PK_SP or UNW_PK_FP */
		if (out == end) {
			*stop = SFP_STOP_DEPTH;
			break;
		}
		*out++ = (void *)(uintptr_t)ip;
		nip = bt_confirm(callers, i,
				 bt_load(cfa + unw_pk_ra_slot(e) * 8));
		if (!nip) {
			*stop = SFP_STOP_RA_ZERO;
			break;
		}
		if (cfa <= sp) {
			*stop = SFP_STOP_SP_NOT_INCREASING;
			break;
		}
		ip = nip;
		sp = cfa;
		fp = nfp;
		xbit = 0;
	}
out:
	/* A stored frame's caller of 0 ends the walk (after the frame,
	 * as the general loop does). */
	if (out > buf && !ip && *stop < 0)
		*stop = SFP_STOP_RA_ZERO;
handoff:
	r->ip = ip;
	r->sp = sp;
	r->fp = fp;
	*exactp = xbit != 0;
	return (size_t)(out - buf);
}

static __attribute__((noinline)) size_t
bt_walk_general(struct bt_ctx *c, const struct bt_regs *r, bool exact,
		void **buf, size_t max, enum sfp_unwind_stop *stop)
{
	const struct unw_env env = {
		.read = bt_read,
		.lookup = bt_lookup,
		.read_code = bt_read_code,
		.ctx = c,
		.first_is_ra = !exact,
		.ips = buf,
	};

	memset(c->pages, 0, sizeof(c->pages));
	c->next = 0;
	c->pid = bt_pid;
#if defined(__aarch64__)
	{
		struct unw_env e = env;
		struct sfp_regs regs = {
			.ip = r->ip & bt_ra_mask, .sp = r->sp, .fp = r->fp,
			.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP,
		};

		e.ra_mask = bt_ra_mask;
		return unw_walk_aarch64(&e, &regs, NULL, max, stop);
	}
#else
	return unw_walk_inline(&env, r->ip, r->sp, r->fp, true, NULL, max,
			       stop);
#endif
}

/*
 * The part of this thread's stack that is surely mapped, [*lo, *hi), for
 * a walk running at `here': if that is the main stack, all of it from
 * here up (and the walk's frames are all above); the same on a thread
 * that called sfp_backtrace_thread_init(); else nothing.
 */
static inline void bt_safe_range(uint64_t here, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (here >= bt_stack_lo && here < bt_stack_hi) {
		*lo = here & ~(uint64_t)(UNW_PAGE_SIZE - 1);
		*hi = bt_stack_hi;
	} else if (here >= bt_thread_stack.lo && here < bt_thread_stack.hi) {
		*lo = here & ~(uint64_t)(UNW_PAGE_SIZE - 1);
		*hi = bt_thread_stack.hi;
	}
}

/* What the packed loop left: the general loop from the frame it stopped
 * at (see bt_walk_packed). */
static __attribute__((noinline)) int
bt_walk_rest(const struct bt_state *st, const struct bt_regs *r, bool exact,
	     uint64_t lo, uint64_t hi, void **buf, size_t n, size_t max,
	     enum sfp_unwind_stop *stop)
{
	int saved_errno = errno;
	struct bt_ctx c;

	c.st = st;
	c.safe_lo = lo;
	c.safe_hi = hi;
	c.missed = false;
	if (n > 0 && !bt_find(st, exact ? r->ip : r->ip - 1)) {
		/* What the general loop does with a caller outside every
		 * object (it would take this for frame 0). */
		c.missed = true;
		*stop = SFP_STOP_BAD_RA;
	} else {
		n += bt_walk_general(&c, r, exact, buf + n, max - n, stop);
	}
	if (c.missed)
		__atomic_store_n(&bt_stale, 1, __ATOMIC_RELAXED);
	errno = saved_errno;
	return (int)n;
}

static int bt_walk(uint64_t ip, uint64_t sp, uint64_t fp, void **buf,
		   int max, enum sfp_unwind_stop *stop)
{
	const struct bt_state *st;
	struct bt_regs r = { ip, sp, fp };
	uint64_t lo, hi;
	bool exact = false;
	size_t n = 0;

	*stop = SFP_STOP_NONE;
	if (!buf || max <= 0)
		return 0;
	st = __atomic_load_n(&bt_cur, __ATOMIC_ACQUIRE);
	if (!st) {
		int saved_errno = errno;

		/* Not initialised: do it now (not signal-safe, as documented). */
		sfp_backtrace_init();
		errno = saved_errno;
		st = __atomic_load_n(&bt_cur, __ATOMIC_ACQUIRE);
		if (!st)
			return 0;
	}
	bt_safe_range((uintptr_t)__builtin_frame_address(0), &lo, &hi);
#if !defined(__aarch64__)
	/* The packed rules describe x86-64 rows only (unw_rule_pack). */
	if (hi - lo >= 256) {	/* (bt_walk_packed's bounds) */
		int why = -1;

		n = bt_walk_packed(st, &r, &exact, buf, (size_t)max, lo, hi,
				   &why);
		if (why >= 0) {
			*stop = why;
			return (int)n;
		}
	}
#endif
	return bt_walk_rest(st, &r, exact, lo, hi, buf, n, (size_t)max, stop);
}

/* For tests (rule-pack.h): the packed loop alone, from the caller. */
__attribute__((noinline)) int unw_bt_packed_only(void **buf, int max,
						 bool warm, int *stop)
{
	uint64_t *frame = __builtin_frame_address(0);
	struct bt_regs r = { (uint64_t)(uintptr_t)__builtin_return_address(0),
			     (uint64_t)(uintptr_t)(frame + 2), frame[0] };
	const struct bt_state *st = __atomic_load_n(&bt_cur, __ATOMIC_ACQUIRE);
	uint64_t lo, hi;
	bool exact;

	*stop = -1;
	if (warm && max > 0) {
		enum sfp_unwind_stop s;

		bt_walk(r.ip, r.sp, r.fp, buf, max, &s);
		st = __atomic_load_n(&bt_cur, __ATOMIC_ACQUIRE);
	}
	bt_safe_range((uintptr_t)frame, &lo, &hi);
	if (!st || max <= 0 || hi - lo < 256)
		return 0;
	return (int)bt_walk_packed(st, &r, &exact, buf, (size_t)max, lo, hi,
				   stop);
}

/*
 * Both entry points keep a frame pointer (forced by
 * __builtin_frame_address) so that the caller's registers are exact: its
 * return address at fp + 8, its stack pointer fp + 16, its fp at *fp.
 * AArch64's frame record is at the bottom of the frame, so there the
 * caller's stack pointer is our CFA, which the compiler knows.
 */
#if defined(__aarch64__)
#define BT_CALLER_SP(frame) ((uint64_t)(uintptr_t)__builtin_dwarf_cfa())
#else
#define BT_CALLER_SP(frame) ((uint64_t)(uintptr_t)((frame) + 2))
#endif

__attribute__((noinline)) int sfp_backtrace_stop(void **buf, int max,
						 enum sfp_unwind_stop *stop)
{
	uint64_t *frame = __builtin_frame_address(0);
	enum sfp_unwind_stop dummy;

	return bt_walk((uint64_t)(uintptr_t)__builtin_return_address(0),
		       BT_CALLER_SP(frame), frame[0], buf, max,
		       stop ? stop : &dummy);
}

__attribute__((noinline)) int sfp_backtrace(void **buf, int max)
{
	uint64_t *frame = __builtin_frame_address(0);
	enum sfp_unwind_stop stop;

	return bt_walk((uint64_t)(uintptr_t)__builtin_return_address(0),
		       BT_CALLER_SP(frame), frame[0], buf, max,
		       &stop);
}
