/* SPDX-License-Identifier: MIT */
/*
 * A minimal protocol-buffers encoder: enough wire format to write pprof's
 * profile.proto and OTLP's profiles request (varints, fixed64,
 * length-delimited fields, packed repeated integers, nested messages).  No schema, no reflection: the writer calls
 * one function per field in field order.
 *
 * Errors are sticky: after a failed allocation every call is a no-op and
 * pb_buf.err holds -ENOMEM, so writers check once at the end.
 */
#ifndef SFP_EXPORT_PB_H
#define SFP_EXPORT_PB_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/* Wire types (encoding section of the protobuf spec). */
enum pb_wire {
	PB_VARINT = 0,
	PB_I64 = 1,
	PB_LEN = 2,
	PB_I32 = 5,
};

/* Nested messages open at once: Profile > Sample > Label is 2 deep. */
#define PB_MAX_NEST 8

struct pb_buf {
	uint8_t *data;
	size_t len, cap;
	int err;		/* 0 or -ENOMEM (sticky) */
	/* start of each open message's payload (see pb_begin()) */
	size_t nest[PB_MAX_NEST];
	unsigned int depth;
};

SFP_HIDDEN void pb_buf__free(struct pb_buf *b);

/* Raw varint (LEB128, 7 bits a byte, low first). */
SFP_HIDDEN void pb_varint(struct pb_buf *b, uint64_t v);
/* Field key: (field << 3) | wire type. */
SFP_HIDDEN void pb_key(struct pb_buf *b, uint32_t field, enum pb_wire wt);

/*
 * Scalar fields.  proto3 leaves fields at their default (0, "", false)
 * off the wire; the _always variants write them anyway, which repeated
 * fields need (an element may be 0 or "").
 */
SFP_HIDDEN void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
SFP_HIDDEN void pb_int(struct pb_buf *b, uint32_t field, int64_t v);
SFP_HIDDEN void pb_bool(struct pb_buf *b, uint32_t field, bool v);
/* fixed64: 8 bytes, little-endian (OTLP's timestamps) */
SFP_HIDDEN void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v);
SFP_HIDDEN void pb_bytes_always(struct pb_buf *b, uint32_t field,
				const void *p, size_t n);
SFP_HIDDEN void pb_string_always(struct pb_buf *b, uint32_t field,
				 const char *s);

/*
 * Packed repeated uint64/int64 (one length-delimited field holding the
 * varints back to back).  Nothing is written for n == 0.
 */
SFP_HIDDEN void pb_packed_uint(struct pb_buf *b, uint32_t field,
			       const uint64_t *v, size_t n);
SFP_HIDDEN void pb_packed_int(struct pb_buf *b, uint32_t field,
			      const int64_t *v, size_t n);

/*
 * Nested message: pb_begin(b, field) ... fields ... pb_end(b).  The
 * payload is written in place and moved up by the size of its length
 * prefix at pb_end(), so the encoding stays canonical (minimal varints)
 * without sizing the message twice.
 */
SFP_HIDDEN void pb_begin(struct pb_buf *b, uint32_t field);
SFP_HIDDEN void pb_end(struct pb_buf *b);

#endif /* SFP_EXPORT_PB_H */
