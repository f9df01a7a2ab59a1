// SPDX-License-Identifier: MIT
/* A program's DT_NEEDED closure; see needed.h for the search rules. */
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "elf/needed.h"

/* Libraries of one closure: found paths with their inodes, in the order
 * found (the walk's queue). */
struct lib {
	char *path;
	dev_t dev;
	ino_t ino;
};

struct closure {
	struct lib *libs;
	size_t nr, max;
	unsigned char class;
	uint16_t machine;
	char **sys_dirs;	/* the directories after the file's own */
	size_t nr_sys;
};

/* What one object's dynamic section names. */
struct dyn_info {
	char **needed;
	size_t nr_needed;
	char *rpath, *runpath;	/* NULL when absent */
};

static void dyn_info_free(struct dyn_info *d)
{
	size_t i;

	for (i = 0; i < d->nr_needed; i++)
		free(d->needed[i]);
	free(d->needed);
	free(d->rpath);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

/* The strings of e's SHT_DYNAMIC section (libelf checks every offset). */
static int read_dynamic(struct sfp_elf *e, struct dyn_info *d)
{
	Elf *elf = sfp_elf_handle(e);
	Elf_Scn *scn = NULL;

	memset(d, 0, sizeof(*d));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			return 0;
		n = data->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn) ||
			    dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s || !*s)
				continue;
			if (dyn.d_tag == DT_NEEDED) {
				char **p = realloc(d->needed,
						   (d->nr_needed + 1) * sizeof(*p));

				if (!p)
					return -ENOMEM;
				d->needed = p;
				if (!(p[d->nr_needed] = strdup(s)))
					return -ENOMEM;
				d->nr_needed++;
			} else {
				char **slot = dyn.d_tag == DT_RPATH ?
					      &d->rpath : &d->runpath;

				free(*slot);
				if (!(*slot = strdup(s)))
					return -ENOMEM;
			}
		}
		return 0;
	}
	return 0;	/* static, or no section headers: nothing to follow */
}

static bool seen(const struct closure *c, const struct stat *st)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->libs[i].dev == st->st_dev && c->libs[i].ino == st->st_ino)
			return true;
	return false;
}

/* path as a library of the closure's class and machine: 1 yes, 0 no. */
static int fits(const struct closure *c, const char *path)
{
	struct sfp_elf *e;
	int ok;

	if (sfp_elf_open(path, &e))
		return 0;
	ok = sfp_elf_is_64(e) == (c->class == ELFCLASS64) &&
	     sfp_elf_machine(e) == c->machine &&
	     sfp_elf_type(e) == ET_DYN;
	sfp_elf_close(&e);
	return ok;
}

/*
 * Look for name in the ':'-separated list dirs ($ORIGIN: origin).  Return
 * 1 and the path in out when found, 0 when not.
 */
static int search_list(const struct closure *c, const char *dirs,
		       const char *origin, const char *name, char *out,
		       size_t len)
{
	const char *p = dirs;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		char dir[PATH_MAX];

		if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%.*s", origin,
				 (int)(n - 7), p + 7);
		else if (n >= 9 && !strncmp(p, "${ORIGIN}", 9))
			snprintf(dir, sizeof(dir), "%s%.*s", origin,
				 (int)(n - 9), p + 9);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		/* an empty entry is the current directory, as for ld.so */
		if ((size_t)snprintf(out, len, "%s/%s", *dir ? dir : ".",
				     name) < len &&
		    !access(out, R_OK) && fits(c, out))
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int find_lib(const struct closure *c, const struct dyn_info *d,
		    const char *origin, const char *name, char *out,
		    size_t len)
{
	size_t i;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return !access(out, R_OK) && fits(c, out);
	}
	if (!d->runpath && d->rpath &&
	    search_list(c, d->rpath, origin, name, out, len))
		return 1;
	if (search_list(c, getenv("LD_LIBRARY_PATH"), origin, name, out, len))
		return 1;
	if (d->runpath && search_list(c, d->runpath, origin, name, out, len))
		return 1;
	for (i = 0; i < c->nr_sys; i++)
		if (search_list(c, c->sys_dirs[i], origin, name, out, len))
			return 1;
	return 0;
}

static int add_sys_dir(struct closure *c, const char *dir, size_t n)
{
	char **p;
	size_t i;

	for (i = 0; i < c->nr_sys; i++)
		if (strlen(c->sys_dirs[i]) == n && !strncmp(c->sys_dirs[i], dir, n))
			return 0;
	p = realloc(c->sys_dirs, (c->nr_sys + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->sys_dirs = p;
	if (!(p[c->nr_sys] = strndup(dir, n)))
		return -ENOMEM;
	c->nr_sys++;
	return 0;
}

/* The directories of the libraries this process loaded: where this
 * system keeps its libc (a multiarch directory on Debian). */
static int loaded_dir(struct dl_phdr_info *info, size_t size, void *ctx)
{
	const char *name = info->dlpi_name, *slash;

	(void)size;
	if (!name || name[0] != '/' || !(slash = strrchr(name, '/')))
		return 0;
	return add_sys_dir(ctx, name, (size_t)(slash - name)) ? 1 : 0;
}

/* Debian's multiarch directory name of a machine's libraries. */
static const char *multiarch(uint16_t machine, unsigned char class)
{
	switch (machine) {
	case EM_X86_64:
		return class == ELFCLASS64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
	case EM_386:
		return "i386-linux-gnu";
	case EM_AARCH64:
		return "aarch64-linux-gnu";
	case EM_ARM:
		return "arm-linux-gnueabihf";
	case EM_RISCV:
		return "riscv64-linux-gnu";
	case EM_PPC64:
		return "powerpc64le-linux-gnu";
	case EM_S390:
		return "s390x-linux-gnu";
	default:
		return NULL;
	}
}

static int sys_dirs(struct closure *c)
{
	static const char *const fixed[] = { "/lib64", "/usr/lib64", "/lib",
					     "/usr/lib" };
	const char *triplet = multiarch(c->machine, c->class);
	char dir[64];
	size_t i;
	int err;

	if (dl_iterate_phdr(loaded_dir, c))
		return -ENOMEM;
	/* the program's machine's own, when it is not ours (an emulated
	 * program) or ours live elsewhere */
	if (triplet) {
		snprintf(dir, sizeof(dir), "/lib/%s", triplet);
		if ((err = add_sys_dir(c, dir, strlen(dir))))
			return err;
		snprintf(dir, sizeof(dir), "/usr/lib/%s", triplet);
		if ((err = add_sys_dir(c, dir, strlen(dir))))
			return err;
	}
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		if ((err = add_sys_dir(c, fixed[i], strlen(fixed[i]))))
			return err;
	return 0;
}

static int push(struct closure *c, const char *path, const struct stat *st)
{
	struct lib *p = realloc(c->libs, (c->nr + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	c->libs = p;
	if (!(p[c->nr].path = strdup(path)))
		return -ENOMEM;
	p[c->nr].dev = st->st_dev;
	p[c->nr].ino = st->st_ino;
	c->nr++;
	return 0;
}

int sfp_elf_needed_closure(const char *exe, size_t max,
			   int (*fn)(void *ctx, const char *path), void *ctx)
{
	struct closure c = { .max = max };
	struct sfp_elf *e;
	struct stat st;
	size_t next, i;
	int err;

	err = sfp_elf_open(exe, &e);
	if (err)
		return err;
	c.class = sfp_elf_is_64(e) ? ELFCLASS64 : ELFCLASS32;
	c.machine = sfp_elf_machine(e);
	sfp_elf_close(&e);
	if (stat(exe, &st))
		return -errno;
	err = sys_dirs(&c);
	/* the program is entry 0 of the queue, not one of the libraries */
	if (!err)
		err = push(&c, exe, &st);
	for (next = 0; !err && next < c.nr; next++) {
		struct dyn_info d;
		char origin[PATH_MAX], *slash;

		if (sfp_elf_open(c.libs[next].path, &e))
			continue;
		err = read_dynamic(e, &d);
		sfp_elf_close(&e);
		snprintf(origin, sizeof(origin), "%s", c.libs[next].path);
		slash = strrchr(origin, '/');
		if (slash)
			*slash = 0;
		else
			snprintf(origin, sizeof(origin), ".");
		for (i = 0; !err && i < d.nr_needed && c.nr <= c.max; i++) {
			char path[PATH_MAX];

			if (!find_lib(&c, &d, origin, d.needed[i], path,
				      sizeof(path)) ||
			    stat(path, &st) || seen(&c, &st))
				continue;
			err = push(&c, path, &st);
			if (!err)
				err = fn(ctx, path);
		}
		dyn_info_free(&d);
	}
	for (i = 0; i < c.nr; i++)
		free(c.libs[i].path);
	free(c.libs);
	for (i = 0; i < c.nr_sys; i++)
		free(c.sys_dirs[i]);
	free(c.sys_dirs);
	return err;
}
