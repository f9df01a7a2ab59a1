// SPDX-License-Identifier: MIT
/*
 * Where separate debug files live (the GDB conventions):
 *  - DIR/.build-id/xx/rest.debug for build-id xxrest (and DIR/.build-id/
 *    xx/rest, a link to the binary itself, used to find a DSO whose path
 *    did not match);
 *  - .gnu_debuglink NAME: next to the file, in its .debug/ directory, and
 *    DIR/<the file's directory>/NAME,
 * for every DIR of the symbolizer's debug directories.  A debuglink
 * candidate must match the build-id when both files have one, else the
 * link's CRC-32; a build-id candidate must carry the same build-id.
 */
#include <limits.h>
#include <zlib.h>

#include "elf/elf.h"
#include "symbols/internal.h"

static bool same_build_id(struct sfp_elf *e, const uint8_t *id, size_t len)
{
	const uint8_t *fid;
	size_t flen;

	return !sfp_elf_build_id(e, &fid, &flen) && flen == len &&
	       !memcmp(fid, id, len);
}

static int try_open(const char *path, struct sfp_elf **out, char **out_path)
{
	int err = sfp_elf_open(path, out);

	if (err)
		return err;
	*out_path = strdup(path);
	if (!*out_path) {
		sfp_elf_close(out);
		return -ENOMEM;
	}
	return 0;
}

int sfp_debugfile_by_build_id(struct sfp_symbolizer *s, const uint8_t *id,
			      size_t len, bool debug_only, struct sfp_elf **out,
			      char **out_path)
{
	char hex[2 * SFP_BUILD_ID_MAX + 1];
	char path[PATH_MAX];
	size_t i;
	int pass;

	if (len < 2 || len > SFP_BUILD_ID_MAX)
		return -ENOENT;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (pass = debug_only ? 1 : 0; pass < 2; pass++) {
		for (i = 0; s->debug_dirs[i]; i++) {
			int n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s%s",
					 s->debug_dirs[i], hex, hex + 2,
					 pass ? ".debug" : "");

			if (n < 0 || (size_t)n >= sizeof(path))
				continue;
			if (try_open(path, out, out_path))
				continue;
			if (same_build_id(*out, id, len))
				return 0;
			pr_debug("%s: build-id does not match its name", path);
			sfp_elf_close(out);
			free(*out_path);
			*out_path = NULL;
		}
	}
	return -ENOENT;
}

/* Does the candidate belong to elf? */
static bool debuglink_matches(struct sfp_elf *elf, struct sfp_elf *cand,
			      uint32_t crc)
{
	const uint8_t *id, *img;
	size_t len, size;
	uLong c;

	if (!sfp_elf_build_id(elf, &id, &len) &&
	    !sfp_elf_build_id(cand, &img, &size))
		return same_build_id(cand, id, len);
	img = sfp_elf_image(cand, &size);
	c = crc32(0L, Z_NULL, 0);
	/* zlib takes uInt lengths: feed big files in pieces. */
	while (size) {
		uInt n = size > (1u << 30) ? (1u << 30) : (uInt)size;

		c = crc32(c, img, n);
		img += n;
		size -= n;
	}
	return (uint32_t)c == crc;
}

static int by_debuglink(struct sfp_symbolizer *s, struct sfp_elf *elf,
			const char *path, struct sfp_elf **out, char **out_path)
{
	const char *name, *slash;
	char cand[PATH_MAX];
	uint32_t crc;
	int dirlen, i, n;

	if (sfp_elf_debuglink(elf, &name, &crc))
		return -ENOENT;
	if (strchr(name, '/'))
		return -ENOENT;	/* a plain file name is all GDB accepts */
	slash = strrchr(path, '/');
	dirlen = slash ? (int)(slash - path) : 0;
	for (i = -2; i < 0 || s->debug_dirs[i]; i++) {
		if (i == -2)
			n = snprintf(cand, sizeof(cand), "%.*s/%s", dirlen, path,
				     name);
		else if (i == -1)
			n = snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dirlen,
				     path, name);
		else
			n = snprintf(cand, sizeof(cand), "%s%s%.*s/%s",
				     s->debug_dirs[i], dirlen && path[0] == '/' ?
				     "" : "/", dirlen, path, name);
		if (n < 0 || (size_t)n >= sizeof(cand))
			continue;
		if (!strcmp(cand, path))
			continue;	/* the link names the file itself */
		if (try_open(cand, out, out_path))
			continue;
		if (debuglink_matches(elf, *out, crc))
			return 0;
		pr_debug("%s: does not match the debuglink of %s", cand, path);
		sfp_elf_close(out);
		free(*out_path);
		*out_path = NULL;
	}
	return -ENOENT;
}

int sfp_debugfile_find(struct sfp_symbolizer *s, struct sfp_elf *elf,
		       const char *path, struct sfp_elf **out, char **out_path)
{
	const uint8_t *id;
	size_t len;

	*out = NULL;
	*out_path = NULL;
	if (!sfp_elf_build_id(elf, &id, &len) &&
	    !sfp_debugfile_by_build_id(s, id, len, true, out, out_path)) {
		if (strcmp(*out_path, path))
			return 0;
		sfp_elf_close(out);	/* we were given the debug file itself */
		free(*out_path);
		*out_path = NULL;
	}
	return by_debuglink(s, elf, path, out, out_path);
}
