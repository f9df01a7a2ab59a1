/* SPDX-License-Identifier: MIT */
/*
 * Encoding the records `record` writes: rewritten samples, deferred
 * callchain records, and MMAP2/COMM records synthesized for processes that
 * were running before recording began.  Host byte order; every function
 * returns the record size or -ENOSPC (buffer too small), -EINVAL (over the
 * 64 KiB record limit), -EOPNOTSUPP (a sample_type bit we do not write).
 */
#ifndef SFP_RECORD_ENCODE_H
#define SFP_RECORD_ENCODE_H

#include "defer/engine.h"
#include "record/record.h"

/* The attr the output file declares for an event recorded with in. */
SFP_HIDDEN void sfp_record_out_attr(const struct perf_event_attr *in,
				    bool deferred, bool tracking,
				    struct perf_event_attr *out);

SFP_HIDDEN int sfp_record_encode_sample(const struct perf_event_attr *out_attr,
					const struct sfp_perf_sample *s,
					const struct sfp_defer_user *u,
					void *buf, size_t cap);

/*
 * The same sample as the typed event the readers of those bytes get
 * (struct sfp_perf_event, as the perf.data decoder would give it, with no
 * raw bytes behind it: ev->raw NULL, ev->size 0): for a consumer of the
 * pipeline that takes events, not a file.  The chain is assembled in
 * *chain (grown as needed, the caller's to free).  Return: 0, -EINVAL (a
 * chain over what a record can hold), -EOPNOTSUPP, -ENOMEM.
 */
struct sfp_perf_evsel;
struct sfp_perf_event;
SFP_HIDDEN int sfp_record_sample_event(const struct perf_event_attr *out_attr,
				       const struct sfp_perf_evsel *evsel,
				       const struct sfp_perf_sample *s,
				       const struct sfp_defer_user *u,
				       uint64_t **chain, size_t *chain_cap,
				       struct sfp_perf_event *ev);

SFP_HIDDEN int
sfp_record_encode_deferred(const struct perf_event_attr *out_attr, uint64_t id,
			   const struct sfp_defer_origin *o, uint64_t cookie,
			   const uint64_t *ips, size_t nr, void *buf,
			   size_t cap);

SFP_HIDDEN int sfp_record_encode_mmap2(const struct perf_event_attr *attr,
				       uint64_t id, uint32_t pid, uint32_t tid,
				       uint64_t start, uint64_t len,
				       uint64_t pgoff, uint32_t prot,
				       uint32_t flags, const char *path,
				       const uint8_t *build_id,
				       size_t build_id_len, void *buf,
				       size_t cap);

SFP_HIDDEN int sfp_record_encode_comm(const struct perf_event_attr *attr,
				      uint64_t id, uint32_t pid, uint32_t tid,
				      const char *comm, void *buf, size_t cap);

/* PERF_RECORD_MMAP of the kernel image, as perf synthesizes it. */
SFP_HIDDEN int
sfp_record_encode_kernel_mmap(const struct perf_event_attr *attr, uint64_t id,
			      uint64_t start, uint64_t len, const char *name,
			      void *buf, size_t cap);

#endif /* SFP_RECORD_ENCODE_H */
