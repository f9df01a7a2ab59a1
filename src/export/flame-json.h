/* SPDX-License-Identifier: MIT */
/* Text output helpers of the flame graph and speedscope writers. */
#ifndef SFP_EXPORT_FLAME_JSON_H
#define SFP_EXPORT_FLAME_JSON_H

#include <stdio.h>

#include "common/internal.h"

/*
 * Write @s as a JSON string literal (quotes included).  Bytes that are not
 * valid UTF-8 become U+FFFD, so that symbol names with stray bytes still
 * give a file every JSON parser takes; '<' is escaped so that the text can
 * sit inside an HTML <script> element.
 */
SFP_HIDDEN void sfp_flame_json_str(FILE *out, const char *s);

/* Write @s with the HTML special characters as entities. */
SFP_HIDDEN void sfp_flame_html_text(FILE *out, const char *s);

#endif /* SFP_EXPORT_FLAME_JSON_H */
