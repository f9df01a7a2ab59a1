#!/bin/sh
# Stack switches at the defaults (docs/record.md, "Stack switches"): a
# function running on another stack under frames whose chain leads back
# to the first, as Go's runtime.systemstack runs on g0 under a
# goroutine's frames.  tests/progs/stack-switch does it in C both ways:
# the chain leading down (g0 above the goroutine's stack: Go's main
# thread) and up, and a leaf whose stack pointer cannot be read at all.  Where the deep-stacks BPF program loads (root, kernel
# BTF, bpf_loop: decided from the system), it follows the frame-pointer
# chain at the sample and copies the other stack where the chain leads;
# the walk then goes on there, every frame checked against what the
# program knows.  A thread is followed once user space has seen one of
# its walks leave the stack, and so is every later process of the same
# name (each Go compile): the second run of the program in one recording
# is followed from its first sample.
# checks: 7
. "$(dirname "$0")/test-subr.sh"

PROG=$SFP_BUILD/tests/progs/stack-switch
AWK=$(dirname "$0")/switch-check.awk
DEPTH=30

[ "$(uname -m)" = x86_64 ] || skip_rest "stack switches" "the test program's switches are x86-64 assembly"
BPF_WHY=
if [ "$(id -u)" != 0 ]; then
	BPF_WHY="not root"
elif [ ! -r /sys/kernel/btf/vmlinux ]; then
	BPF_WHY="no kernel BTF"
elif ! grep -q ' bpf_loop$' /proc/kallsyms; then
	BPF_WHY="the kernel lacks bpf_loop"
fi

# run MODE NAME [record options]: the program twice in one recording;
# "$TMP/NAME.check" has one line per process.  The first run lasts 2 s:
# the recorder follows the name once it has unwound one of its samples,
# and it may be behind by a second at the start (its first tables, built
# under ASan on a loaded machine); the second run is judged from its
# first sample.
run() {
	mode=$1 name=$2
	shift 2
	sfp record -F 1000 "$@" -o "$TMP/$name.data" -- sh -c \
		"'$PROG' $mode $DEPTH 2000 && '$PROG' $mode $DEPTH 1500" \
		> /dev/null 2> "$TMP/$name.err"
	rrc=$?
	sfp script -i "$TMP/$name.data" > "$TMP/$name.script" 2> /dev/null
	awk -v mode="$mode" -v depth=$DEPTH -f "$AWK" "$TMP/$name.script" \
		> "$TMP/$name.check"
}

# second FILE: "samples whole cut wrong" of the second process, and the
# wrong stacks of both
second() {
	awk '/^pid / { n++; if (n == 2) print $4, $6, $8, $12 }
	     /^pid / { w += $12 } END { if (w) print "wrong", w }' "$1" | head -1
}

# nostack: the leaf spins with its stack pointer in a page that cannot be
# read, so perf copies no stack at all and the chain leads to the thread's
# stack from the first frame (a recorder that freed its buffer on such a
# sample corrupted its heap: the run's status shows it).
for mode in down up nostack; do
	if [ -n "$BPF_WHY" ]; then
		skip "stack switch $mode: the other stack copied at the sample" "$BPF_WHY"
		continue
	fi
	run $mode $mode
	set -- $(second "$TMP/$mode.check")
	wrong=$(awk '/^pid / { w += $12 } END { print w + 0 }' "$TMP/$mode.check")
	if [ "$rrc" = 0 ] && [ "${1:-0}" -ge 500 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] &&
	   [ "$wrong" = 0 ]; then
		pass "stack switch $mode: $2 of $1 samples of the second process whole across the switch, none wrong"
	else
		fail "stack switch $mode: want >= 99% of >= 500 samples whole, none wrong (record status $rrc)"
		sed 's/^/  /' "$TMP/$mode.check" | head -8
		grep -E 'stack switches|deep stacks|unwind stops' "$TMP/$mode.err" | sed 's/^/  /'
	fi
done

# The summary counts the walks that left the stack, and how each ended.
if [ -z "$BPF_WHY" ]; then
	line=$(grep 'stack switches: [0-9]' "$TMP/down.err")
	set -- $(echo "$line" | sed 's/([^)]*)//g; s/[^0-9 ]//g')
	whole=$(awk '/^pid / { w += $6 } END { print w + 0 }' "$TMP/down.check")
	# left completed without-a-copy ran-out-of-it led-no-further
	if [ -n "$line" ] && [ "${1:-0}" -ge 1000 ] &&
	   [ $(($2 + $3 + $4 + $5)) -eq "$1" ] && [ "$2" -ge "$whole" ]; then
		pass "summary: $1 walks left the stack: $2 completed over the other stack, $3 without its copy, $4 ran out of it, $5 not helped by it"
	else
		fail "summary: walks that left the stack, completed or not, adding up ($whole whole in script)"
		echo "  $line"
	fi
else
	skip "summary: walks that left the stack" "$BPF_WHY"
fi

# Without the copy at the sample the walks stop at the switch: cut, never
# wrong (what the checks above would see had nothing been followed):
# --no-deep-stacks, and the completions made later alone
# (SFPROF_DEEP_NO_BPF=1: the thread's previous unwind and live memory
# continue a walk that ran out of its copy, not one that left it).
# totals FILE: "samples whole cut wrong" over both processes
totals() {
	awk '/^pid / { n += $4; w += $6; c += $8; x += $12 }
	     END { print n + 0, w + 0, c + 0, x + 0 }' "$1"
}
run down nodeep --no-deep-stacks
set -- $(totals "$TMP/nodeep.check")
if [ "$1" -ge 1000 ] && [ "$2" = 0 ] && [ "$4" = 0 ] && [ $(($3 * 100)) -ge $(($1 * 99)) ]; then
	pass "--no-deep-stacks: $3 of $1 samples stop at the switch, none wrong"
else
	fail "--no-deep-stacks: want every sample cut at switch_call; samples whole cut wrong: $*"
fi
(export SFPROF_DEEP_NO_BPF=1; run down nobpf)
set -- $(totals "$TMP/nobpf.check")
if [ "$1" -ge 1000 ] && [ "$2" = 0 ] && [ "$4" = 0 ] && [ $(($3 * 100)) -ge $(($1 * 99)) ]; then
	pass "SFPROF_DEEP_NO_BPF=1: $3 of $1 samples stop at the switch, none wrong"
else
	fail "SFPROF_DEEP_NO_BPF=1: want every sample cut at switch_call; samples whole cut wrong: $*"
fi

# perf reads the completed chains (the inline form: perf 6.1 predates the
# deferred one)
if [ -n "$BPF_WHY" ]; then
	skip "perf script reads the chains across the switch" "$BPF_WHY"
elif command -v perf > /dev/null; then
	run down perf --inline
	if perf script -i "$TMP/perf.data" > "$TMP/perf.perf" 2> "$TMP/perf.perr"; then
		awk -v mode=down -v depth=$DEPTH -f "$AWK" "$TMP/perf.perf" > "$TMP/perf.pcheck"
		set -- $(second "$TMP/perf.pcheck")
		ours=$(second "$TMP/perf.check")
		if [ "${1:-0}" -ge 500 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] &&
		   ! grep -q 'wrong [1-9]' "$TMP/perf.pcheck" && [ "$*" = "$ours" ]; then
			pass "perf script reads the chains across the switch: $2 of $1 whole, as sfprof script"
		else
			fail "perf script reads the chains across the switch: perf $*, sfprof $ours"
		fi
	else
		fail "perf script on the --inline file: $(head -3 "$TMP/perf.perr")"
	fi
else
	fail "perf is not installed (mk/deps.sh installs it)"
fi
