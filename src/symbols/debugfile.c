// SPDX-License-Identifier: MIT
/*
 * Where separate debug files live (the GDB conventions):
 *  - DIR/.build-id/xx/rest.debug for build-id xxrest (and DIR/.build-id/
 *    xx/rest, a link to the binary itself, used to find a DSO whose path
 *    did not match); perf's build-id cache (~/.debug) makes rest a
 *    directory holding "elf" and "debug", tried as well;
 *  - .gnu_debuglink NAME: next to the file, in its .debug/ directory, and
 *    DIR/<the file's directory>/NAME,
 * for every DIR of the symbolizer's debug directories, on our side and
 * then inside a container's root (/proc/PID/root/DIR); last, for a file
 * without DWARF of its own, debuginfod (debuginfod.c).  A debuglink
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
	int err = sfp_open_regular_elf(path, out);

	if (err)
		return err;
	*out_path = strdup(path);
	if (!*out_path) {
		sfp_elf_close(out);
		return -ENOMEM;
	}
	return 0;
}

int sfp_debugfile_by_build_id(struct sfp_symbolizer *s, const char *root,
			      const uint8_t *id, size_t len, bool debug_only,
			      struct sfp_elf **out, char **out_path)
{
	/* GDB's rest / rest.debug, then perf's cache dir rest/elf, rest/debug. */
	static const char *const suffix[2][2] = { { "", "/elf" },
						   { ".debug", "/debug" } };
	char hex[2 * SFP_BUILD_ID_MAX + 1];
	char path[PATH_MAX];
	size_t i;
	int pass, side, form;

	if (len < 2 || len > SFP_BUILD_ID_MAX)
		return -ENOENT;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (!root)
		root = "";
	for (pass = debug_only ? 1 : 0; pass < 2; pass++) {
		for (side = 0; side < (*root ? 2 : 1); side++)
		for (i = 0; s->debug_dirs[i]; i++)
		for (form = 0; form < 2; form++) {
			int n = snprintf(path, sizeof(path),
					 "%s%s/.build-id/%.2s/%s%s",
					 side ? root : "", s->debug_dirs[i], hex,
					 hex + 2, suffix[pass][form]);

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
			const char *path, const char *logical, const char *root,
			struct sfp_elf **out, char **out_path)
{
	const char *name, *slash;
	char cand[PATH_MAX];
	uint32_t crc;
	int dirlen, ldirlen, i, n, ndirs;

	if (sfp_elf_debuglink(elf, &name, &crc))
		return -ENOENT;
	if (strchr(name, '/'))
		return -ENOENT;	/* a plain file name is all GDB accepts */
	slash = strrchr(path, '/');
	dirlen = slash ? (int)(slash - path) : 0;
	/* DIR/<dir>/ uses the directory as the target knows it. */
	slash = strrchr(logical, '/');
	ldirlen = slash ? (int)(slash - logical) : 0;
	for (ndirs = 0; s->debug_dirs[ndirs]; ndirs++)
		;
	for (i = -2; i < ndirs * (*root ? 2 : 1); i++) {
		if (i == -2)
			n = snprintf(cand, sizeof(cand), "%.*s/%s", dirlen, path,
				     name);
		else if (i == -1)
			n = snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dirlen,
				     path, name);
		else
			n = snprintf(cand, sizeof(cand), "%s%s%s%.*s/%s",
				     i >= ndirs ? root : "",
				     s->debug_dirs[i % ndirs],
				     ldirlen && logical[0] == '/' ? "" : "/",
				     ldirlen, logical, name);
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
		       const char *path, const char *logical, const char *root,
		       struct sfp_elf **out, char **out_path)
{
	struct sfp_elf_section sec;
	const uint8_t *id;
	size_t len;

	*out = NULL;
	*out_path = NULL;
	if (!root)
		root = "";
	if (!sfp_elf_build_id(elf, &id, &len) &&
	    !sfp_debugfile_by_build_id(s, root, id, len, true, out, out_path)) {
		if (strcmp(*out_path, path))
			return 0;
		sfp_elf_close(out);	/* we were given the debug file itself */
		free(*out_path);
		*out_path = NULL;
	}
	if (!by_debuglink(s, elf, path, logical, root, out, out_path))
		return 0;
	/* Nothing local: a server may have it, unless the file has DWARF. */
	if (s->debuginfod && !sfp_elf_build_id(elf, &id, &len) &&
	    sfp_elf_find_section(elf, ".debug_info", SHT_PROGBITS, &sec))
		return sfp_debuginfod_find_debuginfo(s->debuginfod, id, len,
						     out, out_path);
	return -ENOENT;
}
