#!/bin/sh
# Deep stacks at the defaults (docs/record.md, "Deep stacks"): stacks far
# deeper than the 16 KiB stack copy (and than perf's largest, 64 KiB) reach
# _start with every frame right, and a workload whose outer frames change
# between samples never gets another path's outer frames.  Where a BPF
# program may be loaded (root, kernel BTF, bpf_loop: decided from the
# system), the stack past the copy is read at the sample by the BPF program
# (src/bpf/deepcopy.bpf.c) and paired with its sample; the completions
# made later (the thread's previous unwind, live memory) are tested with
# SFPROF_DEEP_NO_BPF=1.
# checks: 9
. "$(dirname "$0")/test-subr.sh"

DEEP=$SFP_BUILD/tests/progs/deep-stack
AWK=$(dirname "$0")/deep-check.awk
DEPTH=100

# Can the deep-stacks BPF program load here?  (From the system, never from
# sfprof's output.)
DEEP_BPF_WHY=
if [ "$(id -u)" != 0 ]; then
	DEEP_BPF_WHY="not root"
elif [ ! -r /sys/kernel/btf/vmlinux ]; then
	DEEP_BPF_WHY="no kernel BTF"
elif ! grep -q ' bpf_loop$' /proc/kallsyms; then
	DEEP_BPF_WHY="the kernel lacks bpf_loop"
fi

# 1. One deep path, 100 frames of ~1 KiB (~100 KiB of stack; 106 frames in
# all, under the readers' 127).  "Reaching the root": the sample's
# outermost user frame is _start and the frames under leaf_spin are exactly
# DEPTH rec_a, path_a, main (deep-check.awk).
sfp record -F 1000 -o "$TMP/c.data" -- "$DEEP" const $DEPTH 1500 \
	> /dev/null 2> "$TMP/c.err"
sfp script -i "$TMP/c.data" > "$TMP/c.script" 2> /dev/null
awk -v depth=$DEPTH -f "$AWK" "$TMP/c.script" > "$TMP/c.check"
set -- $(tail -1 "$TMP/c.check")	# deep N root R wrong W
if [ "${2:-0}" -ge 500 ] && [ $(($4 * 100)) -ge $(($2 * 99)) ] && [ "$6" = 0 ]; then
	pass "deep recursion at the defaults: $4 of $2 samples reach _start, every frame right"
else
	fail "deep recursion at the defaults: want >= 99% of >= 500 samples at _start and none wrong"
	cat "$TMP/c.check" | head -20 | sed 's/^/  /'
	grep -E 'deep stacks|unwind stops' "$TMP/c.err" | sed 's/^/  /'
fi

# The summary counts the walks that ran out of the copy and how each ended,
# and its counts add up.
line=$(grep 'deep stacks: [0-9]' "$TMP/c.err")
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
# ran_out from_sample from_prev from_live truncated changed unreadable
# too_deep (1 MiB)
if [ -n "$line" ] && [ "${1:-0}" -ge 500 ] &&
   [ $(($2 + $3 + $4 + $5)) -eq "$1" ] && [ $(($6 + $7 + $8)) -eq "$5" ]; then
	pass "summary: walks that ran out of the copy, completed each way, adding up"
else
	fail "summary: walks that ran out of the copy, completed each way, adding up"
	echo "  $line"
fi

# Read at the sample: most walks that ran out were completed over their
# own sample's copy (those taken before user space first saw the thread
# run out have none: 20-40 on a quiet machine, more when the recorder
# lags under load; hence half, not all), and the BPF side's line agrees
# (it pairs at least as many: a copy sized before the thread's size grew
# can be too short, and the walk runs out of it too).
at=$(grep 'deep stacks at the sample:' "$TMP/c.err")
if [ -z "$DEEP_BPF_WHY" ]; then
	paired=$(echo "$at" | sed -n 's/.* \([0-9]*\) paired with their sample.*/\1/p')
	if [ -n "$at" ] && [ $(($2 * 2)) -ge "$1" ] &&
	   [ "${paired:-0}" -ge "$2" ]; then
		pass "deep stacks read at the sample: $2 of $1 walks completed over their sample's copy"
	else
		fail "deep stacks read at the sample: want >= 50% of $1 walks completed over their copy"
		echo "  $line"
		echo "  $at"
	fi
elif grep -q 'deep stacks: no copy at the sample: ' "$TMP/c.err"; then
	pass "deep stacks: no copy at the sample ($DEEP_BPF_WHY), said in the summary"
else
	fail "deep stacks: no BPF here ($DEEP_BPF_WHY) and the summary does not say so"
fi

# --no-deep-stacks: the same program stays truncated (what the default
# mode gave before): proves the test reaches past the copy at all.
sfp record -F 1000 --no-deep-stacks -o "$TMP/n.data" -- "$DEEP" const $DEPTH 400 \
	> /dev/null 2> "$TMP/n.err"
sfp script -i "$TMP/n.data" > "$TMP/n.script" 2> /dev/null
set -- $(awk -v depth=$DEPTH -f "$AWK" "$TMP/n.script" | tail -1)
# (a sample taken while the recursion was still shallow fits in the copy
# and reaches _start: only those at the full depth must not)
if [ "${2:-0}" -ge 100 ] && [ "${8:-x}" = 0 ] && [ "$4" -le $(($2 / 50)) ] &&
   [ "$6" = 0 ] && ! grep -q 'deep stacks:' "$TMP/n.err"; then
	pass "--no-deep-stacks: none of $2 samples at the full depth reaches _start (the copy is too short)"
else
	fail "--no-deep-stacks: want every deep sample truncated, got: $*"
fi

# perf reads the file (the completed chains are the deferred records'
# user chains; perf 6.1 predates the deferred form, so the inline form).
if command -v perf > /dev/null; then
	sfp record -F 1000 --inline -o "$TMP/i.data" -- "$DEEP" const $DEPTH 600 \
		> /dev/null 2> "$TMP/i.err"
	if perf script -i "$TMP/i.data" > "$TMP/i.perf" 2> "$TMP/i.perr"; then
		set -- $(awk -v depth=$DEPTH -f "$AWK" "$TMP/i.perf" | tail -1)
		if [ "${2:-0}" -ge 200 ] && [ $(($4 * 100)) -ge $(($2 * 99)) ] &&
		   [ "$6" = 0 ]; then
			pass "perf script reads the completed chains: $4 of $2 reach _start, none wrong"
		else
			fail "perf script reads the completed chains: got $*"
		fi
	else
		fail "perf script on the --inline file: $(head -3 "$TMP/i.perr")"
	fi
else
	fail "perf is not installed (mk/deps.sh installs it)"
fi

# 2. Two deep paths alternating every 10 ms of CPU, rec_a/rec_b frames of
# the same size at the same addresses: a stack completed from the other
# path's outer frames (no seam check) shows rec_a under path_b or the
# reverse.  The recorder processes samples tens of ms after they were
# taken, so live reads often see the other path: they must be refused.
# First the completions made later (no copy at the sample).
SFPROF_DEEP_NO_BPF=1 \
sfp record -F 1000 -o "$TMP/a.data" -- "$DEEP" alt $DEPTH 1500 10 \
	> /dev/null 2> "$TMP/a.err"
sfp script -i "$TMP/a.data" > "$TMP/a.script" 2> /dev/null
awk -v depth=$DEPTH -f "$AWK" "$TMP/a.script" > "$TMP/a.check"
set -- $(tail -1 "$TMP/a.check")
# At most 0.2 % wrong: twice on 6 Dec 2026 (load 60-90) one stack only 4
# rec frames deep, inside the 16 KiB copy (no completion involved), came
# out as rec_a over stale rec_b frames, with and without the BPF copy:
# the snapshot walk's own rare miss (bench/RESULTS.md, end), not this
# check's subject; stitching without the seam check gives hundreds.
if [ "${2:-0}" -ge 500 ] && [ $(($6 * 500)) -le "$2" ] && [ "$4" -gt 0 ]; then
	pass "alternating deep paths: $6 stacks with the other path's frames, at most 0.2 % ($4 of $2 reach _start)"
else
	fail "alternating deep paths: want no wrong stack, got: $*"
	head -20 "$TMP/a.check" | sed 's/^/  /'
	grep -E 'deep stacks' "$TMP/a.err" | sed 's/^/  /'
fi

# Both completions were used on the alternating paths: the previous unwind
# within a phase, live memory at a phase's start.
line=$(grep 'deep stacks: [0-9]' "$TMP/a.err")
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
# ran_out from_sample (0: no BPF here) from_prev from_live ...
if [ "${3:-0}" -gt 0 ] && [ "${4:-0}" -gt 0 ]; then
	pass "alternating deep paths: completed from the previous unwind ($3) and from live memory ($4)"
else
	fail "alternating deep paths: want both ways used: $line"
fi

# A thread that exits: no crash, its unwind forgotten (ASan builds check
# the memory); many short-lived threads are the agent's and -a's case.
sfp record -F 1000 -o "$TMP/t.data" -- sh -c "for i in 1 2 3 4; do $DEEP const $DEPTH 100 & done; wait" \
	> /dev/null 2> "$TMP/t.err"
if grep -q 'deep stacks:' "$TMP/t.err"; then
	pass "four deep processes at once, exiting while recorded"
else
	fail "four deep processes at once: no deep-stacks line"
	tail -5 "$TMP/t.err" | sed 's/^/  /'
fi

# The same alternating paths read at the sample, with every third copy
# dropped on arrival (SFPROF_BPF_TEST_DEEP_DROP=3, as if the ring had lost
# it): a sample whose copy is gone must not take a neighbour's (the
# neighbour is of the other path at each phase switch), so no stack has
# the other path's frames, and the walks without their copy are counted.
if [ -z "$DEEP_BPF_WHY" ]; then
	SFPROF_BPF_TEST_DEEP_DROP=3 \
	sfp record -F 1000 -o "$TMP/d.data" -- "$DEEP" alt $DEPTH 1500 10 \
		> /dev/null 2> "$TMP/d.err"
	sfp script -i "$TMP/d.data" > "$TMP/d.script" 2> /dev/null
	awk -v depth=$DEPTH -f "$AWK" "$TMP/d.script" > "$TMP/d.check"
	set -- $(tail -1 "$TMP/d.check")
	line=$(grep 'deep stacks: [0-9]' "$TMP/d.err")
	drop=$(grep 'copies dropped by SFPROF_BPF_TEST_DEEP_DROP' "$TMP/d.err" | sed 's/[^0-9]*\([0-9]*\).*/\1/')
	set -- "$@" $(echo "$line" | sed 's/[^0-9 ]//g')
	# $2 deep, $6 wrong; $9 ran out, $10 completed at the sample.
	# At most 0.2 % wrong, not none: once in ~10 runs (6 Dec 2026) one
	# stack 4 rec frames deep, inside the 16 KiB copy (so no completion
	# was involved), came out as rec_a over stale rec_b frames: the
	# snapshot walk's own rare miss, not this check's subject; taking a
	# neighbour's copy gives hundreds (987 of 1485 with pairing by the
	# thread's oldest copy).
	if [ "${2:-0}" -ge 500 ] && [ $(($6 * 500)) -le "$2" ] &&
	   [ "${drop:-0}" -ge 100 ] &&
	   [ "${10:-0}" -ge 100 ] && [ $((${10} + ${drop})) -le "${9:-0}" ]; then
		pass "alternating deep paths read at the sample, ${drop} copies dropped: $6 of $2 stacks with the other path's frames (at most 0.2 %; ${10} of ${9} completed at the sample)"
	else
		fail "alternating deep paths read at the sample with copies dropped: want no wrong stack, got: $*"
		head -20 "$TMP/d.check" | sed 's/^/  /'
		grep -E 'deep stacks' "$TMP/d.err" | sed 's/^/  /'
	fi
else
	pass "no deep-stacks BPF program here ($DEEP_BPF_WHY): the copies are not tested"
fi
