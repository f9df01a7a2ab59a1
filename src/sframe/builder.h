/* SPDX-License-Identifier: MIT */
/*
 * What the library's own SFrame generator (cfi/build.c) needs of the
 * builder beyond the public API: it hands each function over as soon as
 * its CFI is converted, so that the rows live only in the builder's
 * compact form, and learns which functions overlap only once all are in.
 */
#ifndef SFP_SFRAME_BUILDER_H
#define SFP_SFRAME_BUILDER_H

#include <stddef.h>

#include <sfprof/sframe.h>

#include "common/internal.h"

/*
 * Leave out of the section the idx-th function successfully added
 * (counting from 0 in the order of sfp_sframe_builder__add_func() calls
 * that returned 0).  Only before sfp_sframe_builder__write().
 */
SFP_HIDDEN int sfp_sframe_builder__drop(struct sfp_sframe_builder *b,
					size_t idx);

#endif /* SFP_SFRAME_BUILDER_H */
