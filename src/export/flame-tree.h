/* SPDX-License-Identifier: MIT */
/*
 * The flame graph page's call tree, packed into text (docs/flamegraph.md,
 * "The page's data").  A page opened from a file gets no gzip, so the
 * bytes themselves must be few: a million-frame tree as JSON arrays of
 * numbers was 9 MB, and the browser's time to first draw follows the
 * bytes it must read.  The tree is a bit string -- per frame in pre-order
 * its function in a canonical Huffman code, how many levels the next
 * frame climbs (Elias gamma), its samples (Elias delta) -- written 13 bits
 * to two characters of a 91-letter alphabet that never forms "</script",
 * "//" or a character HTML or JSON would escape.
 *
 * The writer (flamegraph.c) uses the encoder; the decoder, which checks
 * every bit, serves the unit tests and the fuzz target, which read a page
 * back.  The viewer (flamegraph/viewer.js) has its own decoder.
 */
#ifndef SFP_EXPORT_FLAME_TREE_H
#define SFP_EXPORT_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/internal.h"

/* The alphabet: '!' and '#'..'~' without '/' and '<'. */
#define SFP_FLAME_TREE_RADIX 91

/* A bit string on its way out, 13 bits at a time. */
struct sfp_flame_bits {
	FILE *out;
	uint32_t acc;		/* the nb bits not yet written */
	unsigned int nb;
	size_t nbuf;
	char buf[4096];
};

SFP_HIDDEN void sfp_flame_bits_init(struct sfp_flame_bits *b, FILE *out);
/* The low @n (<= 64) bits of @v, most significant first. */
SFP_HIDDEN void sfp_flame_bits_put(struct sfp_flame_bits *b, uint64_t v,
				   unsigned int n);
/* @v >= 1 in Elias gamma (small numbers: levels climbed) */
SFP_HIDDEN void sfp_flame_bits_gamma(struct sfp_flame_bits *b, uint64_t v);
/* @v >= 1 in Elias delta (counts and nanoseconds, up to 2^64 - 1) */
SFP_HIDDEN void sfp_flame_bits_delta(struct sfp_flame_bits *b, uint64_t v);
/* Pad the last two characters with zero bits and write what is left. */
SFP_HIDDEN void sfp_flame_bits_end(struct sfp_flame_bits *b);

/*
 * The functions' code: canonical Huffman, count[l] codes of l bits
 * (1 <= l <= max_len), given to the functions in the page's order -- the
 * first count[1] functions get the 1-bit codes, and so on -- so the page
 * only states the counts.  The functions of a profile are far from
 * equally frequent (even random addresses pick big functions more often),
 * and the function is most of a frame's bits.
 */
#define SFP_FLAME_CODE_MAX 30

/*
 * Code lengths for @n symbols of frequencies @freq (each >= 1): a Huffman
 * code, flattened until no length exceeds SFP_FLAME_CODE_MAX.  0 or
 * -ENOMEM.
 */
SFP_HIDDEN int sfp_flame_code_lengths(const uint64_t *freq, size_t n,
				      uint8_t *len);

/*
 * One frame's record (the root has no function and no climb):
 *   func   its code (@code_len bits)
 *   climb  gamma(up + 1): the next frame's depth is this depth + 1 - up
 *          (the frame after the last one would be at depth 1)
 *   value  delta(value), the samples (or ns) of its subtree, >= 1;
 *          the root's is delta(value + 1), since a profile without
 *          samples has a root of 0
 *   off    time view only, when value > 0: 2 bits, 0 no off-CPU part,
 *          1 all of it off-CPU, 2 followed by delta(off), 0 < off < value
 *   gap    the preview only (not the root): delta(gap + 1), what the
 *          siblings left out before the frame weigh in the first view
 */
SFP_HIDDEN void sfp_flame_tree_put_root(struct sfp_flame_bits *b,
					uint64_t value, bool timed,
					uint64_t off);
SFP_HIDDEN void sfp_flame_tree_put(struct sfp_flame_bits *b, uint32_t code,
				   unsigned int code_len, uint64_t up,
				   uint64_t value, bool timed, uint64_t off);

/* A tree read back: arrays of @n frames in pre-order, the root first. */
struct sfp_flame_tree {
	size_t n;
	uint32_t *depth;
	int64_t *func;		/* -1 at the root */
	uint64_t *value;
	uint64_t *off;		/* NULL unless timed */
	uint64_t *gap;		/* NULL unless a preview */
};

/*
 * Read @n frames from the text @s (@len bytes), a preview's with their
 * gaps if @preview; @count[1 .. @max_len] is the functions' code.  Every
 * character, bit, code, depth and off-CPU part is checked, and the text
 * must end where the tree does.  0, -EBADMSG (with a message in @err) or
 * -ENOMEM.
 */
SFP_HIDDEN int sfp_flame_tree_decode(const char *s, size_t len, size_t n,
				     const uint32_t *count,
				     unsigned int max_len,
				     bool timed, bool preview,
				     struct sfp_flame_tree *t,
				     char *err, size_t err_len);
SFP_HIDDEN void sfp_flame_tree_free(struct sfp_flame_tree *t);

#endif /* SFP_EXPORT_FLAME_TREE_H */
