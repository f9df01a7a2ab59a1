// SPDX-License-Identifier: MIT
/*
 * JSON strings and HTML text for the flame graph and speedscope writers.
 * Names come from symbol tables of arbitrary binaries: any byte may occur.
 */
#include <stdint.h>

#include "flame-json.h"

/* Length of the valid UTF-8 sequence at @s, or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	uint32_t cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void sfp_flame_json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	putc('"', out);
	while (*s) {
		int n;

		switch (*s) {
		case '"':
			fputs("\\\"", out);
			s++;
			continue;
		case '\\':
			fputs("\\\\", out);
			s++;
			continue;
		case '<':
			fputs("\\u003c", out);
			s++;
			continue;
		default:
			break;
		}
		if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (!n) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, out);
		s += n;
	}
	putc('"', out);
}

void sfp_flame_html_text(FILE *out, const char *str)
{
	const char *s = str ? str : "";

	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: putc(*s, out); break;
		}
	}
}
