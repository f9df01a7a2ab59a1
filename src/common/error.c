// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "internal.h"

/*
 * The library reports plain errnos; these are the meanings it gives the
 * ones it uses on purpose, so that messages say what happened to the input
 * rather than what the errno was first named for.
 */
static const struct {
	int err;
	const char *msg;
} errors[] = {
	{ 0, "success" },
	{ ENOENT, "no entry (no information for this address, or not found)" },
	{ EBADMSG, "corrupt input" },
	{ EOPNOTSUPP, "unsupported input" },
	{ EINVAL, "invalid argument" },
	{ ENOMEM, "out of memory" },
	{ E2BIG, "input exceeds a limit" },
	{ EFAULT, "memory not readable" },
	{ ERANGE, "value out of range" },
	{ ENOSPC, "no space left" },
	{ EPERM, "operation not permitted" },
	{ EACCES, "permission denied" },
	{ ESRCH, "no such process" },
	{ ENOEXEC, "not an ELF file" },
	{ ENODATA, "no data" },
};

const char *sfp_strerror(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].err == err)
			return errors[i].msg;
	/* strerror() of glibc returns static strings for known errnos. */
	return strerror(err);
}

const char *sfp_version(void)
{
#define SFP_STR2(x) #x
#define SFP_STR(x) SFP_STR2(x)
	return SFP_STR(SFPROF_VERSION_MAJOR) "." SFP_STR(SFPROF_VERSION_MINOR);
}

bool sfp_opts_valid(const void *opts, size_t known_sz, const char *type_name)
{
	const uint8_t *p = opts;
	size_t sz, i;

	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t)) {
		pr_warn("%s: size %zu is too small", type_name, sz);
		return false;
	}
	/* A newer caller may know fields we do not: they must be unset. */
	for (i = known_sz; i < sz; i++) {
		if (p[i]) {
			pr_warn("%s has unknown non-zero field at offset %zu",
				type_name, i);
			return false;
		}
	}
	return true;
}
