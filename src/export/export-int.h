/* SPDX-License-Identifier: MIT */
/* Writers behind sfp_profile__export(), one file per format. */
#ifndef SFP_EXPORT_INT_H
#define SFP_EXPORT_INT_H

#include <stdio.h>

#include <sfprof/export.h>

#include "common/internal.h"
#include "export/pprof-window.h"

#define SFP_EXPORT_FORMAT(name, fn)                                  \
	SFP_HIDDEN int fn(const struct sfp_profile *p, FILE *out,     \
			  const struct sfp_export_opts *opts);
#include "formats.def"
#undef SFP_EXPORT_FORMAT

#endif /* SFP_EXPORT_INT_H */
