// SPDX-License-Identifier: MIT
/*
 * Address spaces: the sorted, non-overlapping mappings of one process,
 * each executable file mapping pointing at a shared module, plus a
 * direct-mapped PC -> rule cache so that the PCs a profile sees again and
 * again cost one hash probe.
 *
 * Built from /proc/PID/maps, or record by record from perf's MMAP2 / FORK
 * / COMM(exec) / EXIT events (add_map, fork, exec, free).
 */
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileid.h"

#include "unwind/addr-space.h"

int sfp_addr_space__new(const struct sfp_addr_space_opts *opts,
			struct sfp_addr_space **out)
{
	struct sfp_addr_space *as;
	uint32_t n, want;
	uint8_t arch;
	const char *s;

	if (!out || !SFP_OPTS_VALID(opts, sfp_addr_space_opts))
		return -EINVAL;
	arch = SFP_OPTS_GET(opts, sfp_addr_space_opts, arch, 0);
	if (arch == SFP_ARCH_HOST)
		arch = UNW_HOST_ARCH;
	if (arch != SFP_ARCH_X86_64 && arch != SFP_ARCH_AARCH64)
		return -EOPNOTSUPP;
	want = SFP_OPTS_GET(opts, sfp_addr_space_opts, cache_entries, 0);
	if (!want)
		want = 1024;
	if (want > (1u << 20))
		want = 1u << 20;
	for (n = 1; n < want; n <<= 1)
		;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	/* the rule cache is allocated by the first walk (sfp_unwind): a
	 * system-wide recording tracks hundreds of processes, most never
	 * unwound, and zeroing 64 KiB for each was 7 % of a report.  It
	 * starts small and grows with the misses (unw_as_size_cache): 20
	 * containers of one small program each kept 64 KiB of it, a quarter
	 * of what the agent spent per container. */
	as->cache = NULL;
	as->cache_max_mask = n - 1;
	as->cache_mask = (n < UNW_CACHE_FIRST ? n : UNW_CACHE_FIRST) - 1;
	as->gen = 1;
	as->cache_stale = false;
	s = SFP_OPTS_GET(opts, sfp_addr_space_opts, cache_dir, NULL);
	if (s && !(as->cache_dir = strdup(s)))
		goto nomem;
	s = SFP_OPTS_GET(opts, sfp_addr_space_opts, root_dir, NULL);
	if (s && !(as->root_dir = strdup(s)))
		goto nomem;
	as->no_cache = SFP_OPTS_GET(opts, sfp_addr_space_opts, no_cache, false);
	as->pid = SFP_OPTS_GET(opts, sfp_addr_space_opts, pid, 0);
	as->arch = arch;
	if (as->pid < 0)
		as->pid = 0;
	as->topts.cache_dir = as->cache_dir;
	as->topts.no_cache = as->no_cache;
	as->topts.root_dir = as->root_dir;
	*out = as;
	return 0;
nomem:
	sfp_addr_space__free(&as);
	return -ENOMEM;
}

static void map_release(struct unw_map *m)
{
	unw_module_put(m->mod);
	free(m->path);
	m->mod = NULL;
	m->path = NULL;
}

/* Forget the kept code bytes of [start, end). */
static void drop_kept(struct sfp_addr_space *as, uint64_t start,
		      uint64_t end)
{
	unsigned int i;

	for (i = 0; i < UNW_KEPT_CODE; i++) {
		struct unw_kept_code *k = &as->kept[i];

		if (k->bytes && k->start < end && start < k->start + k->len) {
			free(k->bytes);
			memset(k, 0, sizeof(*k));
		}
	}
}

static void clear_maps(struct sfp_addr_space *as)
{
	size_t i;

	for (i = 0; i < as->num_maps; i++)
		map_release(&as->maps[i]);
	as->num_maps = 0;
	as->gen++;
	as->cache_stale = true;
	drop_kept(as, 0, UINT64_MAX);
}

void sfp_addr_space__free(struct sfp_addr_space **asp)
{
	struct sfp_addr_space *as;

	if (!asp || !*asp)
		return;
	as = *asp;
	clear_maps(as);	/* (the kept code too) */
	free(as->maps);
	free(as->cache);
	free(as->cache_dir);
	free(as->root_dir);
	free(as);
	*asp = NULL;
}

size_t sfp_addr_space__num_maps(const struct sfp_addr_space *as)
{
	return as ? as->num_maps : 0;
}

/*
 * Room for MORE maps.  The first array holds 16 (a small program's maps
 * and its libraries'); a fork's copy is sized by the parent's count, not
 * its room: twenty containers' forks each held room for 128 (7 KiB), a
 * third of what the agent kept per container (7 Dec 2026).
 */
#define UNW_MAPS_FIRST 16u

static int reserve(struct sfp_addr_space *as, size_t more)
{
	size_t cap;
	struct unw_map *m;

	if (as->num_maps + more <= as->cap_maps)
		return 0;
	cap = as->cap_maps ? as->cap_maps * 2 : UNW_MAPS_FIRST;
	while (cap < as->num_maps + more)
		cap *= 2;
	m = realloc(as->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	as->maps = m;
	as->cap_maps = cap;
	return 0;
}

/* Cut [start, end) out of the mappings (splitting one if needed). */
static int punch(struct sfp_addr_space *as, uint64_t start, uint64_t end)
{
	size_t i = 0;

	drop_kept(as, start, end);
	while (i < as->num_maps) {
		struct unw_map *m = &as->maps[i];

		if (m->end <= start || m->start >= end) {
			i++;
			continue;
		}
		if (m->start < start && m->end > end) {
			/* split: keep [m->start, start) and [end, m->end) */
			struct unw_map tail;
			int err = reserve(as, 1);

			if (err)
				return err;
			m = &as->maps[i];
			tail = *m;
			tail.pgoff += end - m->start;
			tail.start = end;
			tail.path = m->path ? strdup(m->path) : NULL;
			if (m->path && !tail.path)
				return -ENOMEM;
			if (tail.mod)
				unw_module_ref(tail.mod);
			m->end = start;
			memmove(&as->maps[i + 2], &as->maps[i + 1],
				(as->num_maps - i - 1) * sizeof(*m));
			as->maps[i + 1] = tail;
			as->num_maps++;
			return 0;
		}
		if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			i++;
		} else {
			map_release(m);
			memmove(m, m + 1, (as->num_maps - i - 1) * sizeof(*m));
			as->num_maps--;
		}
	}
	return 0;
}

int sfp_addr_space__remove_range(struct sfp_addr_space *as, uint64_t start,
				 uint64_t end)
{
	if (!as || end <= start)
		return -EINVAL;
	as->gen++;
	as->cache_stale = true;
	return punch(as, start, end);
}

static bool is_file_path(const char *p)
{
	return p && p[0] == '/';
}

/* Insert a mapping whose range is free; takes ownership of mod. */
static int insert(struct sfp_addr_space *as, const struct sfp_map *map,
		  struct unw_module *mod)
{
	struct unw_map *m;
	size_t lo = 0, hi = as->num_maps;
	int err;

	err = reserve(as, 1);
	if (err) {
		unw_module_put(mod);
		return err;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (as->maps[mid].start < map->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	m = &as->maps[lo];
	memmove(m + 1, m, (as->num_maps - lo) * sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->start = map->start;
	m->end = map->end;
	m->pgoff = map->pgoff;
	m->prot = map->prot;
	m->mod = mod;
	m->path = map->path ? strdup(map->path) : NULL;
	as->num_maps++;
	if (map->path && !m->path)
		return -ENOMEM;
	return 0;
}

/*
 * The mount namespace the mappings' paths are in (0: not known).  A
 * process gone before its maps are read (a short-lived program, its
 * records read after its exit) is taken to be in the one it was forked
 * in: a process leaves its parent's only by unsharing, and the namespace
 * only tells apart files that share path, device and inode.  Unknown, the
 * same file got a key, and a table, of its own (7 Dec 2026).
 */
static uint64_t as_mntns(struct sfp_addr_space *as)
{
	if (!as->mntns_read && as->pid > 0 && !as->root_dir) {
		as->mntns = sfp_proc_mntns(as->pid);
		if (!as->mntns)
			as->mntns = as->mntns_forked;
		as->mntns_read = true;
	}
	return as->mntns;
}

/* add_map with a vDSO image read from the target (or NULL: our own), and
 * the file's device and inode where the kernel gave them. */
static int add_map_image(struct sfp_addr_space *as, const struct sfp_map *map,
			 const void *image, size_t size, uint64_t dev,
			 uint64_t ino)
{
	struct unw_module *mod = NULL;
	int err;

	if (!as || !map || map->end <= map->start)
		return -EINVAL;
	as->gen++;
	as->cache_stale = true;
	err = punch(as, map->start, map->end);
	if (err)
		return err;
	if ((map->prot & SFP_MAP_EXEC) &&
	    (is_file_path(map->path) ||
	     (map->path && !strcmp(map->path, "[vdso]")))) {
		struct sfp_file_id id = { .path = map->path };

		if (map->build_id && map->build_id_len &&
		    map->build_id_len <= SFP_FILE_ID_MAX) {
			memcpy(id.build_id, map->build_id, map->build_id_len);
			id.build_id_len = (uint8_t)map->build_id_len;
		} else if (is_file_path(map->path)) {
			id.dev = dev;
			id.ino = ino;
			id.mntns = as_mntns(as);
		}
		mod = unw_module_get_id(&id, image, size, as->root_dir, as->pid,
					map->start, map->end);
		if (!mod)
			return -ENOMEM;
	}
	return insert(as, map, mod);
}

int sfp_addr_space__add_map(struct sfp_addr_space *as,
			    const struct sfp_map *map)
{
	return add_map_image(as, map, NULL, 0, 0, 0);
}

int unw_as_add_map_dev(struct sfp_addr_space *as, const struct sfp_map *map,
		       uint64_t dev, uint64_t ino)
{
	return add_map_image(as, map, NULL, 0, dev, ino);
}

int sfp_addr_space__fork(const struct sfp_addr_space *parent,
			 struct sfp_addr_space **child)
{
	SFP_OPTS(sfp_addr_space_opts, o);
	struct sfp_addr_space *as;
	size_t i;
	int err;

	if (!parent || !child)
		return -EINVAL;
	o.cache_dir = parent->cache_dir;
	o.no_cache = parent->no_cache;
	o.root_dir = parent->root_dir;
	o.pid = parent->pid;
	o.arch = parent->arch;
	o.cache_entries = parent->cache_max_mask + 1;
	err = sfp_addr_space__new(&o, &as);
	if (err)
		return err;
	/* (now: the parent may be gone when the child's maps are read) */
	as->mntns_forked = as_mntns((struct sfp_addr_space *)parent);
	err = reserve(as, parent->num_maps);
	if (err)
		goto fail;
	for (i = 0; i < parent->num_maps; i++) {
		struct unw_map *m = &as->maps[i];

		*m = parent->maps[i];
		m->path = NULL;
		m->mod = NULL;
		as->num_maps++;
		if (parent->maps[i].path &&
		    !(m->path = strdup(parent->maps[i].path))) {
			err = -ENOMEM;
			goto fail;
		}
		if (parent->maps[i].mod) {
			m->mod = parent->maps[i].mod;
			unw_module_ref(m->mod);
		}
	}
	*child = as;
	return 0;
fail:
	sfp_addr_space__free(&as);
	return err;
}

void sfp_addr_space__exec(struct sfp_addr_space *as)
{
	if (as)
		clear_maps(as);
}

static uint32_t parse_prot(const char *perms)
{
	uint32_t p = 0;

	if (perms[0] == 'r')
		p |= SFP_MAP_READ;
	if (perms[1] == 'w')
		p |= SFP_MAP_WRITE;
	if (perms[2] == 'x')
		p |= SFP_MAP_EXEC;
	return p;
}

/* The target's vDSO bytes, for a table of exactly its code. */
static void *read_vdso(pid_t pid, uint64_t start, uint64_t end)
{
	size_t len = end - start;
	struct iovec local, remote;
	void *buf;

	if (len > (64u << 20))
		return NULL;
	buf = malloc(len);
	if (!buf)
		return NULL;
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)start;
	remote.iov_len = len;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	return buf;
}

int sfp_addr_space__load_pid(struct sfp_addr_space *as, pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	if (!as || pid <= 0)
		return -EINVAL;
	as->pid = pid;
	as->mntns_read = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	clear_maps(as);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;
		struct sfp_map m = { 0 };
		char *name, *nl;
		void *img = NULL;
		size_t img_size = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start,
			   &end, perms, &off, &maj, &min, &ino, &pos) < 7 ||
		    !pos)
			continue;
		name = line + pos;
		while (*name == ' ')
			name++;
		nl = strchr(name, '\n');
		if (nl)
			*nl = 0;
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.prot = parse_prot(perms);
		m.path = *name ? name : NULL;
		if (m.path && !strcmp(m.path, "[vdso]") &&
		    (m.prot & SFP_MAP_EXEC)) {
			img = pid == getpid() ? NULL : read_vdso(pid, start, end);
			img_size = img ? end - start : 0;
		}
		if (m.end <= m.start)
			continue;
		err = add_map_image(as, &m, img, img_size,
				    ino ? (uint64_t)makedev(maj, min) : 0, ino);
		free(img);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

void unw_as_set_pid(struct sfp_addr_space *as, int pid)
{
	as->pid = pid > 0 ? pid : 0;
	as->mntns_read = false;	/* (a child may have left the parent's) */
}

/* Find the mapping holding addr (binary search). */
struct unw_map *unw_as_find(struct sfp_addr_space *as, uint64_t addr)
{
	size_t lo = 0, hi = as->num_maps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct unw_map *m = &as->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* Module loaded and bias computed for an executable file mapping. */
static struct unw_module *map_module(struct sfp_addr_space *as,
				     struct unw_map *m)
{
	if (!m->mod)
		return NULL;
	if (!m->loaded) {
		/* with async loading on (the agent), a table not built yet
		 * is "no module" for now: frame pointers step over it, and
		 * the lookup is not cached (lookup_pending) */
		if (unw_module_load_nowait(m->mod, &as->topts) == -EAGAIN) {
			as->lookup_pending = true;
			return NULL;
		}
		m->loaded = true;
		m->bias_ok = unw_module_bias(m->mod, m->start, m->pgoff,
					     &m->bias) == 0;
	}
	return m->mod;
}

int sfp_addr_space__find(struct sfp_addr_space *as, uint64_t addr,
			 struct sfp_map_info *info)
{
	struct unw_map *m;
	struct unw_module *mod;

	if (!as || !info)
		return -EINVAL;
	m = unw_as_find(as, addr);
	if (!m)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	as->lookup_pending = false;
	mod = map_module(as, m);
	info->start = m->start;
	info->end = m->end;
	info->pgoff = m->pgoff;
	info->prot = m->prot;
	info->path = m->path;
	info->bias = m->bias;
	info->bias_known = m->bias_ok;
	/* a table being built is not missing (no "no table" note) */
	info->has_table = (mod && mod->table) ||
			  (m->mod && !mod && as->lookup_pending);
	if (mod && mod->build_id_len) {
		info->build_id = mod->build_id;
		info->build_id_len = mod->build_id_len;
	}
	return 0;
}

/* Code bytes at a runtime address, from the module's file image. */
int unw_as_read_code(struct sfp_addr_space *as, uint64_t ip, void *buf,
		     size_t len)
{
	struct unw_map *m = unw_as_find(as, ip);

	if (!m || !map_module(as, m) || ip + len > m->end)
		return -EFAULT;
	return unw_module_read(m->mod, m->pgoff + (ip - m->start), buf, len);
}

/*
 * Bytes of code that has no file image.  A stack snapshot does not hold
 * code, but the recorder unwinds while the process lives (as->pid): its
 * memory now is what it ran, for code that is written once, as the
 * trampolines are (a process gone, or not ours to read: no match).
 */
static int anon_code_reader(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct unw_as_code_ctx *cc = ctx;
	unsigned int i;

	if (unw_as_read_code(cc->as, ip, buf, len) == 0)
		return 0;
	if (cc->r && cc->r->kind != UNW_READER_SNAPSHOT)
		return sfp_reader__read(cc->r, ip, buf, len);
	if (cc->as->pid > 0 && unw_vm_read(cc->as->pid, ip, buf, len) == 0) {
		cc->live = true;
		return 0;
	}
	/* gone (or not ours to read): the bytes last read while it ran */
	for (i = 0; i < UNW_KEPT_CODE; i++) {
		const struct unw_kept_code *k = &cc->as->kept[i];

		if (k->bytes && ip >= k->start && ip - k->start <= k->len &&
		    len <= k->len - (ip - k->start)) {
			memcpy(buf, k->bytes + (ip - k->start), len);
			return 0;
		}
	}
	return -EFAULT;
}

/*
 * A trampoline was recognised in m from the live process: keep (or
 * refresh) a copy of the mapping's bytes, so that samples of it read
 * after the process has exited still find their trampolines.  Each new
 * trampoline address read live refreshes it (the interpreter writes
 * trampolines into the arena as it goes, each once).
 */
static void keep_code(struct sfp_addr_space *as, const struct unw_map *m)
{
	size_t len = (size_t)(m->end - m->start);
	struct unw_kept_code *k = NULL;
	unsigned int i;
	uint8_t *b;

	if (as->pid <= 0 || !len || len > UNW_KEPT_CODE_MAX)
		return;
	for (i = 0; i < UNW_KEPT_CODE && !k; i++)
		if (as->kept[i].bytes && as->kept[i].start == m->start &&
		    as->kept[i].len == len)
			k = &as->kept[i];
	for (i = 0; i < UNW_KEPT_CODE && !k; i++)
		if (!as->kept[i].bytes)
			k = &as->kept[i];
	if (!k) {
		/* full: the first slot goes */
		k = &as->kept[0];
		free(k->bytes);
		memset(k, 0, sizeof(*k));
	}
	b = k->bytes ? k->bytes : malloc(len);
	if (!b)
		return;
	if (unw_vm_read(as->pid, m->start, b, len)) {
		free(b);
		memset(k, 0, sizeof(*k));
		return;
	}
	k->start = m->start;
	k->len = len;
	k->bytes = b;
}

/* Uncached lookup of the rule for pc. */
static __attribute__((noinline)) void lookup_slow(struct sfp_addr_space *as, struct sfp_reader *r,
			uint64_t pc, uint64_t ip, struct unw_rule *rule)
{
	struct unw_map *m = unw_as_find(as, pc);
	struct unw_module *mod;
	struct sfp_sframe_row row;
	struct unw_as_code_ctx cc = { as, r, false };

	memset(rule, 0, sizeof(*rule));
	if (!m || !(m->prot & SFP_MAP_EXEC)) {
		struct unw_map *im = as->arch == SFP_ARCH_AARCH64 && pc != ip
					     ? unw_as_find(as, ip)
					     : NULL;

		/* AArch64: a trampoline at the first byte of its own page
		 * (qemu-user's): the return address - 1 lies outside it. */
		if (im && (im->prot & SFP_MAP_EXEC) &&
		    unw_check_sigreturn_a64(unw_as_code_reader, &cc, ip,
					    false)) {
			rule->kind = UNW_R_SIGRETURN;
			return;
		}
		rule->kind = UNW_R_NOT_CODE;
		return;
	}
	rule->kind = UNW_R_NONE;
	mod = map_module(as, m);
	if (as->arch == SFP_ARCH_AARCH64
		    ? unw_check_sigreturn_a64(unw_as_code_reader, &cc, ip,
					      pc == ip)
		    : unw_check_sigreturn(unw_as_code_reader, &cc, ip,
					  pc == ip)) {
		rule->kind = UNW_R_SIGRETURN;
		return;
	}
	/* Code without a table (perf's "//anon": JIT, interpreters'
	 * trampolines): its bytes, from the live process, may be one of
	 * the trampolines whose rules are known. */
	if (!mod || !mod->table) {
		if (as->arch == SFP_ARCH_X86_64 &&
		    unw_tramp_lookup(anon_code_reader, &cc, m->start, m->end,
				     ip, pc == ip, rule) &&
		    cc.live)
			keep_code(as, m);
		return;
	}
	/* An object of another machine (a perf [vdso] of this host in an
	 * AArch64 recording): its rows would be misread. */
	if (!mod || !mod->table || !m->bias_ok || mod->arch != as->arch)
		return;
	if (sfp_sframe__find(mod->table, pc - m->bias, &row) == 0) {
		unw_rule_from_row(rule, &row);
	} else {
		/* an own .sframe without this code: ask the CFI */
		const struct sfp_sframe *fb = unw_module_fallback(mod);

		if (fb && sfp_sframe__find(fb, pc - m->bias, &row) == 0)
			unw_rule_from_row(rule, &row);
		else if (!fb &&
			 !__atomic_load_n(&mod->fb_loaded, __ATOMIC_ACQUIRE))
			as->lookup_pending = true;	/* being built */
	}
}

int unw_as_code_reader(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct unw_as_code_ctx *cc = ctx;

	if (unw_as_read_code(cc->as, ip, buf, len) == 0)
		return 0;
	/* Memory without a file image (JIT, unknown vDSO): a live reader
	 * can still see it. */
	if (cc->r && cc->r->kind != UNW_READER_SNAPSHOT)
		return sfp_reader__read(cc->r, ip, buf, len);
	return -EFAULT;
}

int unw_as_size_cache(struct sfp_addr_space *as)
{
	uint32_t n = as->cache_mask + 1;
	uint64_t now = sfp_clock_ns(CLOCK_MONOTONIC_COARSE);
	struct unw_cache_ent *c;
	size_t bytes;

	if (as->cache && now - as->cache_sized_ns > UNW_CACHE_GROW_NS) {
		/* outgrown, but slowly: count again from here */
		as->cache_misses_sized = as->cache_misses;
		as->cache_sized_ns = now;
		return 0;
	}
	if (as->cache) {
		n = n * 4 - 1 < as->cache_max_mask ? n * 4
						   : as->cache_max_mask + 1;
	}
	bytes = (size_t)n * sizeof(*c);
	c = aligned_alloc(_Alignof(struct unw_cache_ent), bytes);
	if (!c && as->cache) {
		as->cache_max_mask = as->cache_mask;	/* a small one works */
		return 0;
	}
	if (!c)
		return -ENOMEM;
	memset(c, 0, bytes);
	free(as->cache);
	as->cache = c;
	as->cache_mask = n - 1;
	as->cache_misses_sized = as->cache_misses;
	as->cache_sized_ns = now;
	as->cache_stale = false;
	return 0;
}

void unw_as_lookup_miss(struct sfp_addr_space *as, struct sfp_reader *r,
			uint64_t pc, uint64_t ip, struct unw_cache_ent *e,
			struct unw_rule *rule)
{
	as->lookup_pending = false;
	lookup_slow(as, r, pc, ip, rule);
	as->cache_misses++;
	/* a table on its way: this answer is for now only (key 0 is the
	 * empty slot's), the next lookup asks again */
	e->key = as->lookup_pending ? 0 : (ip << 1) | (pc == ip);
	e->rule = *rule;
	if (as->lookup_pending)
		unw_module_note_not_ready();
}
