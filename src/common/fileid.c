// SPDX-License-Identifier: MIT
/*
 * The identity of a mapped file (see fileid.h): one rule for every
 * component that keys on a file.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/fileid.h"

SFP_HIDDEN bool sfp_file_id_same(const struct sfp_file_id *a,
				 const struct sfp_file_id *b)
{
	if (a->build_id_len || b->build_id_len)
		return a->build_id_len == b->build_id_len &&
		       !memcmp(a->build_id, b->build_id, a->build_id_len);
	return a->dev == b->dev && a->ino == b->ino && a->mntns == b->mntns &&
	       !strcmp(a->path, b->path);
}

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n--)
		h = (h ^ *s++) * 16777619u;
	return h;
}

SFP_HIDDEN uint32_t sfp_file_id_hash(const struct sfp_file_id *id)
{
	uint32_t h = 2166136261u;

	if (id->build_id_len)
		return fnv(h, id->build_id, id->build_id_len);
	h = fnv(h, &id->dev, sizeof(id->dev));
	h = fnv(h, &id->ino, sizeof(id->ino));
	h = fnv(h, &id->mntns, sizeof(id->mntns));
	return fnv(h, id->path, strlen(id->path));
}

SFP_HIDDEN const char *sfp_file_id_short(const struct sfp_file_id *id,
					 char *buf, size_t size)
{
	size_t i, n = id->build_id_len < 4 ? id->build_id_len : 4;
	int off = 0;

	if (!size)
		return buf;
	buf[0] = 0;
	if (n) {
		for (i = 0; i < n && off + 3 <= (int)size; i++)
			off += snprintf(buf + off, size - off, "%02x",
					id->build_id[i]);
		return buf;
	}
	if (id->dev || id->ino)
		snprintf(buf, size, "inode %x:%x:%llx",
			 (unsigned)major((dev_t)id->dev),
			 (unsigned)minor((dev_t)id->dev),
			 (unsigned long long)id->ino);
	return buf;
}

SFP_HIDDEN uint64_t sfp_proc_mntns(int pid)
{
	char path[48];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	if (stat(path, &st))
		return 0;
	return st.st_ino;
}
