// SPDX-License-Identifier: MIT
/*
 * sfp_profile__export(): option checking and the name -> writer table; the
 * writers themselves live one per file next to this one.
 */
#include <errno.h>
#include <string.h>

#include "export-int.h"

struct export_format {
	const char *name;
	int (*write)(const struct sfp_profile *p, FILE *out,
		     const struct sfp_export_opts *opts);
};

static const struct export_format formats[] = {
#define SFP_EXPORT_FORMAT(name, fn) { #name, fn },
#include "formats.def"
#undef SFP_EXPORT_FORMAT
	{ NULL, NULL },
};

static const char *const names[] = {
#define SFP_EXPORT_FORMAT(name, fn) #name,
#include "formats.def"
#undef SFP_EXPORT_FORMAT
	NULL,
};

const char *const *sfp_export_formats(void)
{
	return names;
}

int sfp_profile__export(const struct sfp_profile *p, const char *format,
			FILE *out, const struct sfp_export_opts *opts)
{
	const struct export_format *f;

	if (!p || !format || !out || !SFP_OPTS_VALID(opts, sfp_export_opts))
		return -EINVAL;
	for (f = formats; f->name; f++) {
		int err;

		if (strcmp(f->name, format))
			continue;
		err = f->write(p, out, opts);
		if (err)
			return err < 0 ? err : -EIO;
		return fflush(out) || ferror(out) ? -EIO : 0;
	}
	pr_warn("export: unknown format '%s'", format);
	return -EINVAL;
}
