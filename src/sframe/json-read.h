/* SPDX-License-Identifier: MIT */
/*
 * The JSON form of an SFrame section (docs/sframe-json.md) read back into
 * the encoder: what `sfprof sframe encode` runs.
 */
#ifndef SFP_SFRAME_JSON_READ_H
#define SFP_SFRAME_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

struct sfp_sframe_json_opts {
	/* 2 or 3.  0: the JSON header's version when it is 2 or 3, else 3. */
	uint8_t version;
	/* When set, section_addr replaces the JSON header's section_addr. */
	bool set_section_addr;
	uint64_t section_addr;
	bool merge_rows;	/* SFP_SFRAME_BUILDER_F_MERGE_ROWS */
	const char *name;	/* input name for messages; may be NULL */
};

/*
 * Parse JSON text[0..len) and encode the section it describes.
 *
 * Every problem is reported through pr_warn() with the input name and the
 * JSON path of the offending value ("functions[2].rows[5].cfa.offset"),
 * or the byte offset for malformed JSON.
 *
 * Return: 0 with *buf (malloc'd), *size and *section_addr (the address the
 * section was encoded for) set; -EBADMSG malformed JSON or a value that
 * does not match the schema; -EINVAL / -EOPNOTSUPP from the encoder (rows
 * that are inconsistent or that the output version cannot express);
 * -E2BIG input too large; -ENOMEM.
 */
SFP_HIDDEN int sfp_sframe_json__encode(const char *text, size_t len,
				       const struct sfp_sframe_json_opts *opts,
				       void **buf, size_t *size,
				       uint64_t *section_addr);

#endif /* SFP_SFRAME_JSON_READ_H */
