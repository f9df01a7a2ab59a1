// SPDX-License-Identifier: MIT
/*
 * Lookups outside ELF files: kernel addresses (kallsyms, read once) and
 * JIT code (perf-PID.map, read again when the file has grown, since JITs
 * append to it while they run).
 */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "common/procfs.h"
#include "symbols/internal.h"
#include "symbols/jitdump.h"
#include "symbols/kallsyms.h"

/* kallsyms is ~10 MiB on big configs; perf maps can be large too. */
#define KALLSYMS_MAX (256u << 20)
#define PERFMAP_MAX (256u << 20)
/* A jitdump holds the code bytes too. */
#define JITDUMP_MAX (1u << 30)

static int load_kernel(struct sfp_symbolizer *s)
{
	char *ks = NULL, *mods = NULL;
	size_t kslen, modslen = 0;
	int err;

	/* An index over the mapped file, names read when a lookup needs
	 * them: parsing all of a big kallsyms up front was a fifth of a
	 * `sfprof script` run.  Text it declines is parsed whole. */
	if (!sfp_kallsyms_index__open(s->kallsyms_path, s->modules_path,
				      s->ksyms_cache_dir, &s->kidx))
		return 0;
	err = sfp_read_file(s->kallsyms_path, KALLSYMS_MAX, &ks, &kslen);
	if (err) {
		/* (sfp_read_file's errors are the system's: open, read) */
		pr_warn("%s: cannot read: %s", s->kallsyms_path,
			strerror(-err));
		return err == -ENOENT ? -ENOENT : err;
	}
	/* No module list (no CONFIG_MODULES, or a chroot): sizes guessed. */
	if (sfp_read_file(s->modules_path, KALLSYMS_MAX, &mods, &modslen))
		mods = NULL;
	err = sfp_kallsyms_parse(&s->kernel, ks, kslen, mods, modslen);
	free(ks);
	free(mods);
	if (err < 0)
		return err;
	if (err == 0) {
		pr_warn("%s: no text symbols with addresses (kptr_restrict?)",
			s->kallsyms_path);
		return -ENOENT;
	}
	sfp_symtab_finish(&s->kernel);
	sfp_kallsyms_fixup(&s->kernel);
	return 0;
}

int sfp_symbolizer__kernel(struct sfp_symbolizer *s, uint64_t addr,
			   struct sfp_symbol *out)
{
	struct sfp_symtab *tab = &s->kernel;
	struct sfp_sym *sym;

	if (!s || !out)
		return -EINVAL;
	if (!s->kernel_tried) {
		s->kernel_tried = true;
		s->kernel_err = load_kernel(s);
	}
	if (s->kernel_err)
		return s->kernel_err;
	if (s->kidx)
		sym = sfp_kallsyms_index__find(s->kidx, addr, &tab);
	else
		sym = sfp_symtab_find(&s->kernel, addr);
	if (!sym)
		return -ENOENT;
	sfp_symbolizer_fill(s, tab, sym, addr, "[kernel.kallsyms]", out);
	return 0;
}

/* (Re)read the map when it is new or has grown; false: nothing usable. */
static int jit_refresh(struct sfp_jitmap *j)
{
	struct stat st;
	char *buf;
	size_t len;
	int err;

	if (stat(j->path, &st)) {
		j->missing = true;
		return -ENOENT;
	}
	if (!j->missing && st.st_size == j->size && j->tab.syms)
		return 0;
	err = sfp_read_file(j->path, j->dump ? JITDUMP_MAX : PERFMAP_MAX, &buf,
			    &len);
	if (err)
		return err;
	sfp_symtab_free(&j->tab);
	if (j->dump) {
		struct sfp_jitdump_stats js;

		err = sfp_jitdump_parse(&j->tab, (const uint8_t *)buf, len,
					j->path, &js);
		if (!err && js.truncated)
			pr_debug("%s: offset %zu: last record cut short (the JIT was still writing)",
				 j->path, js.truncated_at);
	} else {
		err = sfp_perfmap_parse(&j->tab, buf, len, j->path);
	}
	free(buf);
	if (err < 0)
		return err;
	/* entries overlap where the JIT replaced code: newest wins */
	err = sfp_symtab_finish_layered(&j->tab);
	if (err)
		return err;
	j->size = st.st_size;
	j->missing = false;
	return 0;
}

/*
 * Where the JIT of pid wrote its map: our perf map directory, or, for a
 * process in a container, that directory inside its root and named with
 * its pid as it knows it (what perf does too).
 */
static int jit_path(struct sfp_symbolizer *s, int pid, char *path, size_t size)
{
	struct stat st;
	int n;

	n = snprintf(path, size, "%s/perf-%d.map", s->perf_map_dir, pid);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	if (!stat(path, &st))
		return 0;
	n = snprintf(path, size, "/proc/%d/root%s/perf-%d.map", pid,
		     s->perf_map_dir, sfp_proc_ns_pid(pid));
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	if (!stat(path, &st))
		return 0;
	/* Neither exists yet: watch the plain one. */
	snprintf(path, size, "%s/perf-%d.map", s->perf_map_dir, pid);
	return 0;
}

/* A new entry for pid's perf map or jitdump at path, read once. */
static int jit_add(struct sfp_symbolizer *s, int pid, const char *path,
		   bool dump, struct sfp_jitmap **out)
{
	struct sfp_jitmap *j = calloc(1, sizeof(*j));

	if (!j || !(j->path = strdup(path))) {
		free(j);
		return -ENOMEM;
	}
	j->pid = pid;
	j->dump = dump;
	j->missing = true;
	j->next = s->jit;
	s->jit = j;
	*out = j;
	return jit_refresh(j);
}

/* addr in j's symbols, the file read again once if it has grown since. */
static int jit_lookup(struct sfp_symbolizer *s, struct sfp_jitmap *j,
		      uint64_t addr, struct sfp_symbol *out)
{
	struct sfp_sym *sym = sfp_symtab_find(&j->tab, addr);
	int err;

	if (!sym) {
		/* Maybe the JIT has written more since we read the file. */
		err = jit_refresh(j);
		if (err)
			return err;
		sym = sfp_symtab_find(&j->tab, addr);
		if (!sym)
			return -ENOENT;
	}
	sfp_symbolizer_fill(s, &j->tab, sym, addr, j->path, out);
	return 0;
}

int sfp_symbolizer__jit(struct sfp_symbolizer *s, int pid, uint64_t addr,
			struct sfp_symbol *out)
{
	struct sfp_jitmap *j;
	char path[PATH_MAX];
	int err;

	if (!s || !out || pid <= 0)
		return -EINVAL;
	for (j = s->jit; j; j = j->next)
		if (j->pid == pid && !j->dump)
			break;
	if (!j) {
		err = jit_path(s, pid, path, sizeof(path));
		if (!err)
			err = jit_add(s, pid, path, false, &j);
		if (err)
			return err;
	}
	return jit_lookup(s, j, addr, out);
}

int sfp_symbolizer__jitdump(struct sfp_symbolizer *s, int pid,
			    const char *path, uint64_t addr,
			    struct sfp_symbol *out)
{
	struct sfp_jitmap *j;
	int err;

	if (!s || !out || !path || pid <= 0)
		return -EINVAL;
	for (j = s->jit; j; j = j->next)
		if (j->dump && j->pid == pid && !strcmp(j->path, path))
			break;
	if (!j && (err = jit_add(s, pid, path, true, &j)))
		return err;
	return jit_lookup(s, j, addr, out);
}

int sfp_symbolizer__jit_frame(struct sfp_symbolizer *s, int pid,
			      const char *dump, uint64_t addr,
			      struct sfp_symbol *out)
{
	if (dump && !sfp_symbolizer__jitdump(s, pid, dump, addr, out))
		return 0;
	return sfp_symbolizer__jit(s, pid, addr, out);
}
