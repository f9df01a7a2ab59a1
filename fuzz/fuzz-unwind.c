// SPDX-License-Identifier: MIT
/*
 * Fuzz the snapshot unwinder: random registers and stack bytes against a
 * fixed address space (this process's own mappings, with real tables for
 * the executable, libc and the vDSO).
 *
 * Input: u64 ip, u64 fp, u64 flags, then the stack bytes (at most 64 KiB)
 * that start at a fixed sp.  Words whose top byte is 0xab are turned into
 * addresses inside the process's code (so that random inputs reach real
 * table rows, signal trampolines and FP chains), words whose top byte is
 * 0xcd into addresses inside the snapshot.  flags: bit 0 fp valid, bit 1
 * no FP fallback, bits 8..15 depth cap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#define MAX_STACK (64 * 1024)
#define SP_BASE 0x7ffd00000000ull

static struct sfp_addr_space *as;
static struct sfp_reader *rd;
static struct { uint64_t start, end; } code[64];
static unsigned int ncode;
static uint64_t stack_words[MAX_STACK / 8];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void setup(void)
{
	char line[512];
	FILE *f;

	if (sfp_addr_space__new(NULL, &as) ||
	    sfp_addr_space__load_pid(as, getpid()) ||
	    sfp_reader__new_snapshot(NULL, 0, 0, &rd))
		abort();
	f = fopen("/proc/self/maps", "re");
	if (!f)
		abort();
	while (fgets(line, sizeof(line), f) && ncode < 64) {
		unsigned long long a, b;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 &&
		    perms[2] == 'x') {
			code[ncode].start = a;
			code[ncode].end = b;
			ncode++;
		}
	}
	fclose(f);
	if (!ncode)
		abort();
}

static uint64_t shape(uint64_t w)
{
	switch (w >> 56) {
	case 0xab: {
		unsigned int k = (unsigned int)((w >> 40) & 0xff) % ncode;
		uint64_t len = code[k].end - code[k].start;

		return code[k].start + (w & 0xffffff) % len;
	}
	case 0xcd:
		return SP_BASE + (w & 0xffff);
	default:
		return w;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sfp_frame frames[64];
	enum sfp_unwind_stop stop;
	struct sfp_regs regs;
	uint64_t hdr[3], flags;
	size_t n, i;
	int got;

	if (!as)
		setup();
	if (size < sizeof(hdr))
		return 0;
	memcpy(hdr, data, sizeof(hdr));
	data += sizeof(hdr);
	size -= sizeof(hdr);
	if (size > MAX_STACK)
		size = MAX_STACK;
	n = size / 8;
	memcpy(stack_words, data, n * 8);
	for (i = 0; i < n; i++)
		stack_words[i] = shape(stack_words[i]);

	flags = hdr[2];
	regs.ip = shape(hdr[0]);
	regs.sp = SP_BASE;
	regs.fp = shape(hdr[1]);
	regs.lr = 0;
	regs.valid = SFP_REGS_IP | SFP_REGS_SP | ((flags & 1) ? SFP_REGS_FP : 0);
	SFP_OPTS(sfp_unwind_opts, o, .max_depth = (flags >> 8) & 0xff,
		 .no_fp_fallback = (flags & 2) != 0);

	if (sfp_reader__set_snapshot(rd, stack_words, n * 8, SP_BASE))
		abort();
	got = sfp_unwind(as, rd, &regs, frames, 64, &o, &stop);
	/* The contract: at least the first frame, never more than asked,
	 * a known stop reason, and frame 0 is the ip we gave. */
	if (got < 1 || got > 64 || stop <= SFP_STOP_NONE ||
	    stop >= SFP_STOP__MAX || frames[0].ip != regs.ip)
		abort();
	if (o.max_depth && (unsigned int)got > o.max_depth)
		abort();
	return 0;
}
