// SPDX-License-Identifier: MIT
/*
 * Mapped files as their process sees them (see buildid.h).  Why each
 * step: a container's files exist only in its mount namespace, which
 * /proc/PID/root enters without setns(); a binary upgraded while running
 * leaves the old inode mapped and a new file at the path, and only
 * /proc/PID/map_files reaches the old one; the build-id tells which of
 * the candidates is the file the kernel mapped.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/elf.h"

int sfp_file_build_id(const char *path, uint8_t *id, size_t cap, size_t *len)
{
	struct sfp_elf *e = NULL;
	const uint8_t *fid;
	size_t flen;
	int err;

	*len = 0;
	err = sfp_open_regular_elf(path, &e);
	if (err)
		return err;
	err = sfp_elf_build_id(e, &fid, &flen);
	if (!err && (!flen || flen > cap))
		err = -ENOENT;
	if (!err) {
		memcpy(id, fid, flen);
		*len = flen;
	}
	sfp_elf_close(&e);
	return err;
}

/* 0: path is a readable file with build-id id (any, if none given). */
static int check(const char *path, const uint8_t *id, size_t id_len)
{
	uint8_t fid[SFP_PROC_BUILD_ID_MAX];
	size_t flen;
	int err;

	if (!id_len)
		return access(path, R_OK) ? -errno : 0;
	err = sfp_file_build_id(path, fid, sizeof(fid), &flen);
	if (err)
		return err == -ENOENT ? -ESTALE : err;
	return flen == id_len && !memcmp(fid, id, id_len) ? 0 : -ESTALE;
}

static int put(char *out, size_t size, const char *s)
{
	size_t n = strlen(s);

	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(out, s, n + 1);
	return 0;
}

/* A mapping of the file in /proc/PID/maps whose map_files entry checks. */
static int scan_map_files(int pid, const char *clean, size_t clen,
			  const uint8_t *id, size_t id_len, char *buf,
			  size_t size)
{
	char path[64], line[PATH_MAX + 128];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		int pos = 0;
		char *name;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &a, &b,
			   &pos) < 2 || !pos)
			continue;
		name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (strncmp(name, clean, clen) ||
		    (name[clen] && strcmp(name + clen, " (deleted)")))
			continue;
		snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", pid, a, b);
		err = check(buf, id, id_len);
		if (!err || err != -ESTALE)
			break;
	}
	fclose(f);
	return err;
}

int sfp_proc_mapped_file(int pid, const char *path, uint64_t start,
			 uint64_t end, const uint8_t *id, size_t id_len,
			 char *out, size_t size)
{
	static const char deleted[] = " (deleted)";
	char clean[PATH_MAX], buf[PATH_MAX + 64];
	size_t clen = strlen(path), dlen = sizeof(deleted) - 1;
	bool was_deleted = false;
	int err, result = -ENOENT;

	if (clen > dlen && !strcmp(path + clen - dlen, deleted)) {
		clen -= dlen;
		was_deleted = true;
	}
	if (clen >= sizeof(clean) || path[0] != '/')
		return clen >= sizeof(clean) ? -ENAMETOOLONG : -ENOENT;
	memcpy(clean, path, clen);
	clean[clen] = 0;
	if (pid > 0 && start < end) {
		/* The exact mapping is known: its inode is the truth. */
		snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)start, (unsigned long long)end);
		err = check(buf, id, id_len);
		if (!err)
			return put(out, size, buf);
		if (err == -ESTALE)
			result = err;
	}
	if (pid > 0 && (!was_deleted || id_len)) {
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", pid, clean);
		err = check(buf, id, id_len);
		if (!err)
			return put(out, size, buf);
		if (err == -ESTALE)
			result = err;
	}
	if (pid > 0) {	/* the vma may have been split since */
		err = scan_map_files(pid, clean, clen, id, id_len, buf,
				     sizeof(buf));
		if (!err)
			return put(out, size, buf);
		if (err == -ESTALE)
			result = err;
	}
	err = check(clean, id, id_len);
	if (!err)
		return put(out, size, clean);
	return err == -ESTALE ? err : result;
}
