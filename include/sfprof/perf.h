/* SPDX-License-Identifier: MIT */
/*
 * sfprof: perf.data in and out.
 *
 * The reader takes perf.data files in file mode and pipe mode, in either
 * byte order, including zstd-compressed records, and delivers the kernel
 * records (types 1..22, up to PERF_RECORD_CALLCHAIN_DEFERRED) one by one,
 * in time order across CPUs by perf's rules (a record is released when a
 * PERF_RECORD_FINISHED_ROUND has passed after the round that carried it),
 * with a bounded queue.  Every field is decoded to host order; arrays and
 * strings handed out point into reader-owned memory that stays valid until
 * the next call of sfp_perf_reader__next().
 *
 * The writer produces files that perf reads: the classic form (user frames
 * inline after PERF_CONTEXT_USER) and the Linux 6.19 deferred form
 * (callchains end in PERF_CONTEXT_USER_DEFERRED + cookie, user frames in
 * PERF_RECORD_CALLCHAIN_DEFERRED records).
 */
#ifndef SFPROF_PERF_H
#define SFPROF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- ABI constants (include/uapi/linux/perf_event.h, v6.19). --- */

enum sfp_perf_record_type {
	SFP_PERF_RECORD_MMAP = 1,
	SFP_PERF_RECORD_LOST = 2,
	SFP_PERF_RECORD_COMM = 3,
	SFP_PERF_RECORD_EXIT = 4,
	SFP_PERF_RECORD_THROTTLE = 5,
	SFP_PERF_RECORD_UNTHROTTLE = 6,
	SFP_PERF_RECORD_FORK = 7,
	SFP_PERF_RECORD_READ = 8,
	SFP_PERF_RECORD_SAMPLE = 9,
	SFP_PERF_RECORD_MMAP2 = 10,
	SFP_PERF_RECORD_AUX = 11,
	SFP_PERF_RECORD_ITRACE_START = 12,
	SFP_PERF_RECORD_LOST_SAMPLES = 13,
	SFP_PERF_RECORD_SWITCH = 14,
	SFP_PERF_RECORD_SWITCH_CPU_WIDE = 15,
	SFP_PERF_RECORD_NAMESPACES = 16,
	SFP_PERF_RECORD_KSYMBOL = 17,
	SFP_PERF_RECORD_BPF_EVENT = 18,
	SFP_PERF_RECORD_CGROUP = 19,
	SFP_PERF_RECORD_TEXT_POKE = 20,
	SFP_PERF_RECORD_AUX_OUTPUT_HW_ID = 21,
	SFP_PERF_RECORD_CALLCHAIN_DEFERRED = 22,
	SFP_PERF_RECORD_KERNEL_MAX = 23,	/* first type we do not know */

	/* Records synthesized by the perf tool (user types). */
	SFP_PERF_RECORD_HEADER_ATTR = 64,
	SFP_PERF_RECORD_HEADER_EVENT_TYPE = 65,
	SFP_PERF_RECORD_HEADER_TRACING_DATA = 66,
	SFP_PERF_RECORD_HEADER_BUILD_ID = 67,
	SFP_PERF_RECORD_FINISHED_ROUND = 68,
	SFP_PERF_RECORD_ID_INDEX = 69,
	SFP_PERF_RECORD_AUXTRACE_INFO = 70,
	SFP_PERF_RECORD_AUXTRACE = 71,
	SFP_PERF_RECORD_AUXTRACE_ERROR = 72,
	SFP_PERF_RECORD_THREAD_MAP = 73,
	SFP_PERF_RECORD_CPU_MAP = 74,
	SFP_PERF_RECORD_STAT_CONFIG = 75,
	SFP_PERF_RECORD_STAT = 76,
	SFP_PERF_RECORD_STAT_ROUND = 77,
	SFP_PERF_RECORD_EVENT_UPDATE = 78,
	SFP_PERF_RECORD_TIME_CONV = 79,
	SFP_PERF_RECORD_HEADER_FEATURE = 80,
	SFP_PERF_RECORD_COMPRESSED = 81,
	SFP_PERF_RECORD_FINISHED_INIT = 82,
	SFP_PERF_RECORD_COMPRESSED2 = 83,
};

#define SFP_PERF_MISC_CPUMODE_MASK	0x7
#define SFP_PERF_MISC_KERNEL		1
#define SFP_PERF_MISC_USER		2
#define SFP_PERF_MISC_MMAP_BUILD_ID	(1u << 14)

/* KSYMBOL flags: the range goes away (a BPF program unloaded). */
#define SFP_PERF_KSYMBOL_UNREGISTER	(1u << 0)

/* sample_type bits. */
#define SFP_PERF_SAMPLE_IP		(1ull << 0)
#define SFP_PERF_SAMPLE_TID		(1ull << 1)
#define SFP_PERF_SAMPLE_TIME		(1ull << 2)
#define SFP_PERF_SAMPLE_ADDR		(1ull << 3)
#define SFP_PERF_SAMPLE_READ		(1ull << 4)
#define SFP_PERF_SAMPLE_CALLCHAIN	(1ull << 5)
#define SFP_PERF_SAMPLE_ID		(1ull << 6)
#define SFP_PERF_SAMPLE_CPU		(1ull << 7)
#define SFP_PERF_SAMPLE_PERIOD		(1ull << 8)
#define SFP_PERF_SAMPLE_STREAM_ID	(1ull << 9)
#define SFP_PERF_SAMPLE_RAW		(1ull << 10)
#define SFP_PERF_SAMPLE_BRANCH_STACK	(1ull << 11)
#define SFP_PERF_SAMPLE_REGS_USER	(1ull << 12)
#define SFP_PERF_SAMPLE_STACK_USER	(1ull << 13)
#define SFP_PERF_SAMPLE_WEIGHT		(1ull << 14)
#define SFP_PERF_SAMPLE_DATA_SRC	(1ull << 15)
#define SFP_PERF_SAMPLE_IDENTIFIER	(1ull << 16)
#define SFP_PERF_SAMPLE_TRANSACTION	(1ull << 17)
#define SFP_PERF_SAMPLE_REGS_INTR	(1ull << 18)
#define SFP_PERF_SAMPLE_PHYS_ADDR	(1ull << 19)
#define SFP_PERF_SAMPLE_AUX		(1ull << 20)
#define SFP_PERF_SAMPLE_CGROUP		(1ull << 21)
#define SFP_PERF_SAMPLE_DATA_PAGE_SIZE	(1ull << 22)
#define SFP_PERF_SAMPLE_CODE_PAGE_SIZE	(1ull << 23)
#define SFP_PERF_SAMPLE_WEIGHT_STRUCT	(1ull << 24)
#define SFP_PERF_SAMPLE_MAX		(1ull << 25)

/* read_format bits. */
#define SFP_PERF_FORMAT_TOTAL_TIME_ENABLED	(1ull << 0)
#define SFP_PERF_FORMAT_TOTAL_TIME_RUNNING	(1ull << 1)
#define SFP_PERF_FORMAT_ID			(1ull << 2)
#define SFP_PERF_FORMAT_GROUP			(1ull << 3)
#define SFP_PERF_FORMAT_LOST			(1ull << 4)

/* branch_sample_type bits that change the sample layout. */
#define SFP_PERF_SAMPLE_BRANCH_HW_INDEX	(1ull << 17)
#define SFP_PERF_SAMPLE_BRANCH_COUNTERS	(1ull << 19)

/* Bits of the attr flags word (bit 0 = `disabled`, as on little endian). */
#define SFP_PERF_ATTR_FLAG_DISABLED		(1ull << 0)
#define SFP_PERF_ATTR_FLAG_INHERIT		(1ull << 1)
#define SFP_PERF_ATTR_FLAG_EXCLUDE_KERNEL	(1ull << 5)
#define SFP_PERF_ATTR_FLAG_EXCLUDE_HV		(1ull << 6)
#define SFP_PERF_ATTR_FLAG_MMAP			(1ull << 8)
#define SFP_PERF_ATTR_FLAG_COMM			(1ull << 9)
#define SFP_PERF_ATTR_FLAG_FREQ			(1ull << 10)
#define SFP_PERF_ATTR_FLAG_ENABLE_ON_EXEC	(1ull << 12)
#define SFP_PERF_ATTR_FLAG_TASK			(1ull << 13)
#define SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL	(1ull << 18)
#define SFP_PERF_ATTR_FLAG_EXCLUDE_CALLCHAIN_USER (1ull << 22)
#define SFP_PERF_ATTR_FLAG_MMAP2		(1ull << 23)
#define SFP_PERF_ATTR_FLAG_COMM_EXEC		(1ull << 24)
#define SFP_PERF_ATTR_FLAG_USE_CLOCKID		(1ull << 25)
#define SFP_PERF_ATTR_FLAG_KSYMBOL		(1ull << 31)
#define SFP_PERF_ATTR_FLAG_BPF_EVENT		(1ull << 32)
#define SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN	(1ull << 38)
#define SFP_PERF_ATTR_FLAG_DEFER_OUTPUT		(1ull << 39)

/* Callchain context markers. */
#define SFP_PERF_CONTEXT_HV		((uint64_t)-32)
#define SFP_PERF_CONTEXT_KERNEL		((uint64_t)-128)
#define SFP_PERF_CONTEXT_USER		((uint64_t)-512)
#define SFP_PERF_CONTEXT_USER_DEFERRED	((uint64_t)-640)
#define SFP_PERF_CONTEXT_GUEST		((uint64_t)-2048)
#define SFP_PERF_CONTEXT_GUEST_KERNEL	((uint64_t)-2176)
#define SFP_PERF_CONTEXT_GUEST_USER	((uint64_t)-2560)
#define SFP_PERF_CONTEXT_MAX		((uint64_t)-4095)

/* Feature bits of the file header (HEADER_* in perf's header.h). */
enum sfp_perf_feature {
	SFP_PERF_FEAT_TRACING_DATA = 1,
	SFP_PERF_FEAT_BUILD_ID = 2,
	SFP_PERF_FEAT_HOSTNAME = 3,
	SFP_PERF_FEAT_OSRELEASE = 4,
	SFP_PERF_FEAT_VERSION = 5,
	SFP_PERF_FEAT_ARCH = 6,
	SFP_PERF_FEAT_NRCPUS = 7,
	SFP_PERF_FEAT_CPUDESC = 8,
	SFP_PERF_FEAT_CPUID = 9,
	SFP_PERF_FEAT_TOTAL_MEM = 10,
	SFP_PERF_FEAT_CMDLINE = 11,
	SFP_PERF_FEAT_EVENT_DESC = 12,
	SFP_PERF_FEAT_CPU_TOPOLOGY = 13,
	SFP_PERF_FEAT_NUMA_TOPOLOGY = 14,
	SFP_PERF_FEAT_BRANCH_STACK = 15,
	SFP_PERF_FEAT_PMU_MAPPINGS = 16,
	SFP_PERF_FEAT_GROUP_DESC = 17,
	SFP_PERF_FEAT_AUXTRACE = 18,
	SFP_PERF_FEAT_STAT = 19,
	SFP_PERF_FEAT_CACHE = 20,
	SFP_PERF_FEAT_SAMPLE_TIME = 21,
	SFP_PERF_FEAT_MEM_TOPOLOGY = 22,
	SFP_PERF_FEAT_CLOCKID = 23,
	SFP_PERF_FEAT_DIR_FORMAT = 24,
	SFP_PERF_FEAT_BPF_PROG_INFO = 25,
	SFP_PERF_FEAT_BPF_BTF = 26,
	SFP_PERF_FEAT_COMPRESSED = 27,
	SFP_PERF_FEAT_CPU_PMU_CAPS = 28,
	SFP_PERF_FEAT_CLOCK_DATA = 29,
	SFP_PERF_FEAT_HYBRID_TOPOLOGY = 30,
	SFP_PERF_FEAT_PMU_CAPS = 31,
	SFP_PERF_FEAT_MAX = 256,
};

/*
 * struct perf_event_attr decoded to host order (the ABI layout up to
 * PERF_ATTR_SIZE_VER8, 136 bytes).  Fields a shorter attr in the file
 * lacks are zero.  `flags` holds the bitfield word with bit 0 =
 * `disabled`, whatever the file's byte order.
 */
struct sfp_perf_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;		/* or sample_freq when FLAG_FREQ */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;
	uint32_t wakeup_events;		/* or wakeup_watermark */
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint16_t reserved_2;
	uint32_t aux_sample_size;
	uint32_t aux_action;
	uint64_t sig_data;
	uint64_t config3;
};

#define SFP_PERF_ATTR_SIZE_VER0 64
#define SFP_PERF_ATTR_SIZE_VER8 136

/* An event of the file: its attr, its sample ids, its name if known. */
struct sfp_perf_evsel {
	struct sfp_perf_attr attr;
	const uint64_t *ids;
	size_t nr_ids;
	const char *name;	/* from HEADER_EVENT_DESC; NULL if absent */
	size_t idx;
};

/*
 * A decoded sample (PERF_RECORD_SAMPLE) or the sample_id trailer of another
 * record.  `present` says which sample_type bits were decoded; arrays are
 * in host order.  The one sample type of the library: a file's samples and
 * those of a recording session (sfp_record__decode_sample()) alike.
 */
struct sfp_perf_sample {
	uint64_t present;
	uint64_t id;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	/* header.misc of the record (SFP_PERF_MISC_CPUMODE_MASK bits ...):
	 * a sample passed on alone still says which mode it hit.  (In the
	 * padding after cpu: the struct does not grow.) */
	uint16_t misc;
	uint64_t period;
	/* PERF_SAMPLE_READ: non-group: nr_values = 1.  Each value is
	 * {value, id, lost} (those read_format leaves out are 0). */
	uint64_t read_time_enabled, read_time_running;
	uint64_t read_nr;
	const uint64_t *read_values;	/* 3 * read_nr entries */
	/* PERF_SAMPLE_CALLCHAIN */
	uint64_t nr_ips;
	const uint64_t *ips;
	/* The chain ends in PERF_CONTEXT_USER_DEFERRED, cookie (and the
	 * attr has defer_callchain): the user part comes later. */
	bool deferred;
	uint64_t deferred_cookie;
	uint32_t raw_size;
	const void *raw_data;
	uint64_t nr_branches;
	uint64_t branch_hw_idx;
	const uint64_t *branches;	/* 3 * nr_branches: from, to, flags */
	const uint64_t *branch_counters; /* nr_branches or NULL */
	uint64_t user_regs_abi;
	uint64_t user_regs_mask;
	const uint64_t *user_regs;	/* popcount(mask) entries if abi != 0 */
	uint64_t user_stack_size;	/* bytes at user_stack */
	const void *user_stack;
	uint64_t user_stack_dyn_size;	/* valid prefix of user_stack */
	uint64_t weight;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_regs_abi;
	uint64_t intr_regs_mask;
	const uint64_t *intr_regs;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const void *aux_data;
};

/* One delivered record. */
struct sfp_perf_event {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	uint64_t file_offset;		/* of the record in its stream */
	const void *raw;		/* `size` bytes in the file's byte order */
	bool swapped;			/* that order is not the host's */
	const struct sfp_perf_evsel *evsel;	/* NULL if not identified */
	/* SAMPLE: the sample; other types: the sample_id trailer (if any). */
	struct sfp_perf_sample sample;
	union {
		struct {	/* MMAP, MMAP2 */
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			uint8_t build_id_size;	/* MMAP2 with MISC_MMAP_BUILD_ID */
			uint8_t build_id[20];
			const char *filename;
		} mmap;
		struct {	/* COMM */
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct {	/* FORK, EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} fork;
		struct {	/* LOST */
			uint64_t id, lost;
		} lost;
		struct {	/* LOST_SAMPLES */
			uint64_t lost;
		} lost_samples;
		struct {	/* THROTTLE, UNTHROTTLE */
			uint64_t time, id, stream_id;
		} throttle;
		struct {	/* CALLCHAIN_DEFERRED */
			uint64_t cookie;
			uint64_t nr;
			const uint64_t *ips;
		} deferred;
		struct {	/* KSYMBOL */
			uint64_t addr;
			uint32_t len;
			uint16_t ksym_type, flags;
			const char *name;
		} ksymbol;
		struct {	/* SWITCH_CPU_WIDE */
			uint32_t next_prev_pid, next_prev_tid;
		} context_switch;
	};
};

/* A build-id note from HEADER_BUILD_ID. */
struct sfp_perf_build_id {
	uint32_t pid;
	uint16_t misc;
	uint8_t size;
	uint8_t id[20];
	const char *filename;
};

/* What the header told (strings NULL when the feature is absent). */
struct sfp_perf_header_info {
	bool pipe_mode;
	bool swapped;		/* file byte order differs from the host's */
	uint64_t features[4];	/* feature bitmap (bit n = feature n) */
	const char *hostname;
	const char *osrelease;
	const char *version;
	const char *arch;
	const char *cpudesc;
	const char *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;
	size_t nr_cmdline;
	const char *const *cmdline;
	size_t nr_build_ids;
	const struct sfp_perf_build_id *build_ids;
	/* The header is the provisional one (data size 0, no features): the
	 * writer was killed; records are read to the end of the file. */
	bool unfinished;
};

/* Counters kept while reading. */
struct sfp_perf_stats {
	uint64_t nr_records[SFP_PERF_RECORD_KERNEL_MAX];	/* by type */
	uint64_t nr_user_records;	/* perf-tool types 64.. */
	uint64_t nr_unknown;		/* records of types we do not know */
	uint64_t nr_unknown_id;		/* samples of no known event */
	uint64_t nr_unordered;		/* arrived after their slot was flushed */
	uint64_t nr_compressed;		/* COMPRESSED records */
	uint64_t nr_bad_records;	/* undecodable records, skipped */
	uint64_t nr_lost;		/* sum of LOST records' counts */
	uint64_t max_queued_bytes;	/* high-water mark of the queue */
	uint64_t nr_lost_samples;	/* sum of LOST_SAMPLES records' counts */
};

struct sfp_perf_reader;

struct sfp_perf_reader_opts {
	size_t sz;
	/* Deliver in file order instead of time order. */
	bool unordered;
	/* Queue limit in bytes; half of it is flushed when it is reached
	 * (like perf's ordered_events). 0: 64 MiB. */
	uint64_t max_queue_bytes;
	size_t :0;
};
#define sfp_perf_reader_opts__last_field max_queue_bytes

/**
 * sfp_perf_reader__open() - open a perf.data file.
 * @path: file name; "-" reads a pipe-mode stream from standard input.
 * @opts: options or NULL.
 * @out: the reader.
 *
 * The header (file mode: attrs, ids and feature sections; pipe mode: the
 * short header only) is read here; records come from sfp_perf_reader__next().
 *
 * Return: 0; -EBADMSG corrupt header; -EOPNOTSUPP not PERFILE2; -errno.
 */
SFP_API int sfp_perf_reader__open(const char *path,
				  const struct sfp_perf_reader_opts *opts,
				  struct sfp_perf_reader **out);

/**
 * sfp_perf_reader__open_fd() - read perf.data from a descriptor.
 * @fd: regular file (mapped) or pipe (streamed); not closed by the reader.
 * @name: for messages.
 *
 * Return: as sfp_perf_reader__open().
 */
SFP_API int sfp_perf_reader__open_fd(int fd, const char *name,
				     const struct sfp_perf_reader_opts *opts,
				     struct sfp_perf_reader **out);

/**
 * sfp_perf_reader__open_mem() - read perf.data (either mode) from memory.
 * @data: the bytes, which must outlive the reader.
 *
 * Return: as sfp_perf_reader__open().
 */
SFP_API int sfp_perf_reader__open_mem(const void *data, size_t size,
				      const struct sfp_perf_reader_opts *opts,
				      struct sfp_perf_reader **out);

SFP_API void sfp_perf_reader__free(struct sfp_perf_reader **r);

/**
 * sfp_perf_reader__next() - the next kernel record (types 1..22 and
 * unknown kernel types are not delivered but counted).
 * @ev: set to the record, valid until the next call.
 *
 * Return: 1 a record; 0 end of data; -EBADMSG corrupt stream (the reader
 * cannot go on); -errno I/O error.
 */
SFP_API int sfp_perf_reader__next(struct sfp_perf_reader *r,
				  const struct sfp_perf_event **ev);

SFP_API size_t sfp_perf_reader__nr_evsels(const struct sfp_perf_reader *r);
SFP_API const struct sfp_perf_evsel *
sfp_perf_reader__evsel(const struct sfp_perf_reader *r, size_t idx);
/* Header facts; in pipe mode they fill in as the stream is read. */
SFP_API const struct sfp_perf_header_info *
sfp_perf_reader__header(const struct sfp_perf_reader *r);
SFP_API const struct sfp_perf_stats *
sfp_perf_reader__stats(const struct sfp_perf_reader *r);

/**
 * sfp_perf_decode_sample() - decode a PERF_RECORD_SAMPLE.
 * @attr: the event's attr (sample_type, read_format, regs masks ...).
 * @rec: the whole record (header included), @size bytes.
 * @swap: the record is in the other byte order.
 * @out: decoded sample (misc from the header); arrays live in @scratch.
 * @scratch: caller buffer of u64s for arrays, @scratch_len entries; a
 *	record of size bytes never needs more than size / 8 + 8.  NULL (and
 *	0): the arrays point into @rec, which must then be in host order
 *	(!@swap) and 8-aligned; PERF_SAMPLE_READ needs scratch.
 *
 * Return: 0; -EBADMSG the record is shorter than its fields say (or READ
 * without scratch); -EINVAL NULL scratch for a swapped or unaligned record.
 */
SFP_API int sfp_perf_decode_sample(const struct sfp_perf_attr *attr,
				   const void *rec, size_t size, bool swap,
				   struct sfp_perf_sample *out,
				   uint64_t *scratch, size_t scratch_len);

/**
 * sfp_perf_sample_user_reg() - one user register of a sample.
 * @regno: the register's bit in sample_regs_user (the arch's perf_regs
 *	numbering: on x86-64 6 bp, 7 sp, 8 ip).
 * @val: its value.
 *
 * The values sit in ascending bit order, as many as the mask has bits;
 * this finds regno's among them.
 * Return: 0, or -ENOENT (no user registers in @s, or not that one).
 */
SFP_API int sfp_perf_sample_user_reg(const struct sfp_perf_sample *s,
				     unsigned int regno, uint64_t *val);

/* Name of a record type ("SAMPLE", "CALLCHAIN_DEFERRED", ... or NULL). */
SFP_API const char *sfp_perf_record_name(uint32_t type);

/* --- Writer --- */

struct sfp_perf_writer;

struct sfp_perf_writer_opts {
	size_t sz;
	/* Feature strings; NULL: taken from this machine (uname). */
	const char *hostname;
	const char *osrelease;
	const char *arch;
	const char *version;	/* "perf version" string; NULL: sfprof's */
	const char *const *cmdline;
	size_t nr_cmdline;
	/* zstd level (1..22) for the data section, written as perf record -z
	 * does (PERF_RECORD_COMPRESSED + HEADER_COMPRESSED); 0: plain. */
	int compression_level;
	/* When the file takes its path, an existing non-empty file there
	 * becomes PATH.old, as perf record keeps perf.data.old. */
	bool keep_old;
	/* Records are written out (and the zstd stream flushed) at least
	 * every flush_ms milliseconds, checked as records arrive and at
	 * sfp_perf_writer__flush(); 0: only when the 256 KiB buffer fills.
	 * What a killed writer leaves readable, after publish. */
	uint32_t flush_ms;
	size_t :0;
};
#define sfp_perf_writer_opts__last_field flush_ms

/**
 * sfp_perf_writer__open() - start a perf.data file (file mode).
 * @path: output file.  It is written as a temporary file beside it
 *        (PATH.tmp-XXXXXX, created exclusively) and renamed over PATH by
 *        sfp_perf_writer__close() (or earlier by sfp_perf_writer__publish()),
 *        so PATH is untouched until the file is complete and a symlink at
 *        PATH is replaced, never written through.  A device or our own
 *        standard output is written in place; a pipe is refused (-ESPIPE:
 *        a perf.data file is rewritten at its start when it is done).
 *
 * Return: 0 or -errno (nothing is logged: the caller names the path).
 */
SFP_API int sfp_perf_writer__open(const char *path,
				  const struct sfp_perf_writer_opts *opts,
				  struct sfp_perf_writer **out);

/**
 * sfp_perf_writer__add_evsel() - declare an event before the first record.
 * @attr: its attr (size is set to 136 by the writer).
 * @ids: its sample ids (at least one when several events are declared).
 * @name: event name for HEADER_EVENT_DESC ("cpu-clock").
 *
 * Return: the event's index, or -EINVAL after records were written,
 * -ENOMEM.
 */
SFP_API int sfp_perf_writer__add_evsel(struct sfp_perf_writer *w,
				       const struct sfp_perf_attr *attr,
				       const uint64_t *ids, size_t nr_ids,
				       const char *name);

/**
 * sfp_perf_writer__write() - append one record in host byte order.
 * @rec: header included; header.size bytes, a multiple of 8.
 *
 * Return: 0; -EINVAL bad size; -errno write error.
 */
SFP_API int sfp_perf_writer__write(struct sfp_perf_writer *w, const void *rec,
				   size_t size);

/**
 * sfp_perf_writer__add_build_id() - note a DSO's build-id for HEADER_BUILD_ID.
 * @misc: SFP_PERF_MISC_USER or SFP_PERF_MISC_KERNEL.
 * @pid: -1 for host DSOs, as perf writes.
 *
 * Return: 0, -EINVAL (id longer than 20 bytes), -ENOMEM.
 */
SFP_API int sfp_perf_writer__add_build_id(struct sfp_perf_writer *w,
					  uint16_t misc, int32_t pid,
					  const uint8_t *id, size_t id_size,
					  const char *filename);

/**
 * sfp_perf_writer__close() - write the feature sections and the final
 * header, close the file and free the writer.
 *
 * Return: 0 or -errno (the writer is freed either way).
 */
SFP_API int sfp_perf_writer__close(struct sfp_perf_writer **w);

/**
 * sfp_perf_writer__flush() - write out what is buffered (and end the zstd
 * chunk), so that a reader of the unfinished file sees every record so far.
 *
 * Return: 0 or -errno (the write error).
 */
SFP_API int sfp_perf_writer__flush(struct sfp_perf_writer *w);

/**
 * sfp_perf_writer__publish() - flush and move the unfinished file to its
 * path now (PATH.old kept if asked).  After this a writer that is killed
 * or freed leaves a file at PATH that readers read up to the last flush
 * and report as unfinished (header data size 0, as perf marks it).  For
 * recordings: publish once the job really started.
 *
 * Return: 0 or -errno.
 */
SFP_API int sfp_perf_writer__publish(struct sfp_perf_writer *w);

/* Drop an unfinished writer: its temporary file is removed; a published
 * file stays as the last flush left it. */
SFP_API void sfp_perf_writer__free(struct sfp_perf_writer **w);

/**
 * sfp_perf_write_sample() - encode a PERF_RECORD_SAMPLE for an attr.
 * @attr: which fields to write (sample_type, read_format, regs masks).
 * @misc: header.misc.
 * @s: the values; arrays as in struct sfp_perf_sample.
 * @buf: output, @buf_len bytes.
 *
 * Return: the record size, or -ENOSPC when buf is too small, -EINVAL when
 * the record would exceed 65535 bytes or a field is inconsistent.
 */
SFP_API int sfp_perf_write_sample(const struct sfp_perf_attr *attr,
				  uint16_t misc,
				  const struct sfp_perf_sample *s, void *buf,
				  size_t buf_len);

/**
 * sfp_perf_write_sample_id() - encode the sample_id trailer of a
 * non-sample record for @attr (nothing unless sample_id_all).
 *
 * Return: bytes written, or -ENOSPC.
 */
SFP_API int sfp_perf_write_sample_id(const struct sfp_perf_attr *attr,
				     const struct sfp_perf_sample *s,
				     void *buf, size_t buf_len);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_PERF_H */
