#!/bin/sh
# `sfprof record --off-cpu` under heavy switching (issue 38, point 19):
# pairs of threads ping-pong a byte over pipes (tests/progs/offcpu-pingpong,
# which times its own read() calls), recorded with a ring far too small for
# the tracepoint's stack copies, so that records are lost whatever the
# machine's speed.  Checked: the recorder and every reader say the loss
# (report, report --threads, script, export, flamegraph: stderr, and the
# output where the format has a place), and the blocked time per process
# stays whole -- from the kernel's sums (src/bpf/offsum.bpf.c) where BPF
# can load -- against the program's own clock, with a tolerance (15 %)
# far wider than the measured spread (bench/RESULTS.md "Heavy switching":
# 98-99 %) and far narrower than what a loss leaves (< 30 %).
# checks: 11
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/offcpu-subr.sh"

PP=$SFP_BUILD/tests/progs/offcpu-pingpong
ALL="record says lost, summary says stackless blocks, report stderr,
report header, report --threads, script stderr, export stderr and comment,
flamegraph stderr, kernel sums or their absence said, command totals, -a totals"

skip_all() {
	echo "$ALL" | tr ',' '\n' | sed 's/^ *//' | grep . | while read -r t; do
		skip "off-cpu heavy: $t" "$1"
	done
	exit 0
}

# What the system allows, decided from the system (as run-offcpu.sh).
[ "$(id -u)" = 0 ] || skip_all "not root"
FMT=/sys/kernel/tracing/events/sched/sched_switch/format
if [ ! -r $FMT ] && [ ! -r /sys/kernel/debug/tracing/events/sched/sched_switch/format ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
	[ -r $FMT ] || skip_all "no tracefs with sched:sched_switch"
fi
# The kernel's sums need a tp_btf program: root, the kernel's BTF and
# the prev_state argument of sched_switch (Linux 5.18).
KSUMS=yes
kv=$(uname -r | awk -F. '{ printf "%d\n", $1 * 1000 + $2 }')
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	KSUMS="no kernel BTF (/sys/kernel/btf/vmlinux)"
elif [ "$kv" -lt 5018 ]; then
	KSUMS="kernel $(uname -r) before 5.18 (sched_switch without prev_state)"
fi

# pairs_off FILE.data PID: blocked ns of the pair threads (not the main
# thread, which waits in pthread_join) from report --threads --plain
pairs_off() {
	sfp report --threads --plain -i "$1" 2> /dev/null |
		awk -F'\t' -v p="$2" '$1 == "thread" && $2 == p && $3 != p { s += $6 }
			END { printf "%.0f\n", s }'
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2"; }

# --- 1. a command, a 4 KiB ring: every 16 KiB stack copy is lost ---------
sfp record --off-cpu -m 4K -o "$TMP/pp.data" -- "$PP" 50 1.5 \
	> "$TMP/pp.out" 2> "$TMP/pp.err"
lost=$(sed -n 's/^  lost: \([0-9]*\).*/\1/p' "$TMP/pp.err")
if [ "${lost:-0}" -gt 0 ]; then
	pass "off-cpu heavy: record says lost: $lost"
else
	fail "off-cpu heavy: record's summary has no lost count"
	sed 's/^/  /' "$TMP/pp.err"
fi
if grep -q "off-cpu: [1-9][0-9]* blocks ([0-9.]* s) without their stack sample" "$TMP/pp.err"; then
	pass "off-cpu heavy: the summary counts the blocks kept without a stack"
else
	fail "off-cpu heavy: the summary does not count the blocks kept without a stack"
	grep "off-cpu" "$TMP/pp.err" | sed 's/^/  /'
fi

# --- 2. every reader says it ---------------------------------------------
WARN="warning: the recording lost [1-9][0-9]* records in [1-9][0-9]* chunks"
sfp report -i "$TMP/pp.data" > "$TMP/rep.txt" 2> "$TMP/rep.err"
if grep -q "$WARN" "$TMP/rep.err"; then
	pass "off-cpu heavy: report says the loss on stderr"
else
	fail "off-cpu heavy: report says nothing of the loss on stderr"
fi
if grep -q "^# Lost records: [1-9][0-9]* in [1-9][0-9]* chunks" "$TMP/rep.txt"; then
	pass "off-cpu heavy: report's header says the loss"
else
	fail "off-cpu heavy: report's header says nothing of the loss"
fi
sfp report --threads --plain -i "$TMP/pp.data" > "$TMP/thr.txt" 2> "$TMP/thr.err"
if grep -q "$WARN" "$TMP/thr.err" &&
   awk -F'\t' '$1 == "lost" && $2 > 0 && $3 > 0 { ok = 1 } END { exit !ok }' "$TMP/thr.txt"; then
	pass "off-cpu heavy: report --threads says the loss (stderr, and a lost line with --plain)"
else
	fail "off-cpu heavy: report --threads does not say the loss"
fi
sfp script -i "$TMP/pp.data" > /dev/null 2> "$TMP/scr.err"
if grep -q "$WARN" "$TMP/scr.err"; then
	pass "off-cpu heavy: script says the loss on stderr"
else
	fail "off-cpu heavy: script says nothing of the loss"
fi
sfp export -f pprof -i "$TMP/pp.data" -o "$TMP/pp.pb.gz" 2> "$TMP/exp.err"
if grep -q "$WARN" "$TMP/exp.err" &&
   gzip -dc "$TMP/pp.pb.gz" | grep -a -q "lost: [1-9][0-9]* records in"; then
	pass "off-cpu heavy: export says the loss (stderr, and a pprof comment)"
else
	fail "off-cpu heavy: export does not say the loss (stderr or pprof comment)"
fi
sfp flamegraph -i "$TMP/pp.data" -o "$TMP/pp.html" 2> "$TMP/fg.err"
if grep -q "$WARN" "$TMP/fg.err"; then
	pass "off-cpu heavy: flamegraph says the loss on stderr"
else
	fail "off-cpu heavy: flamegraph says nothing of the loss"
fi

# --- 3. the time stays whole ---------------------------------------------
if [ "$KSUMS" = yes ]; then
	if grep -q "of which [0-9.]* s in [0-9]* threads only from the kernel's sums .*BPF on sched_switch" "$TMP/pp.err"; then
		pass "off-cpu heavy: the kernel's sums were read (BPF on sched_switch)"
	else
		fail "off-cpu heavy: no kernel sums where BPF can load"
		grep "off-cpu" "$TMP/pp.err" | sed 's/^/  /'
	fi
	within "off-cpu heavy: command: the pairs' blocked time = the program's time in read()" \
		"$(pairs_off "$TMP/pp.data" "$(field pid "$TMP/pp.out")")" \
		"$(field read_ns "$TMP/pp.out")" 15
	# -a: the workload starts once the recording runs (its file exists)
	rm -f "$TMP/ppa.data"
	"$SFPROF" record --off-cpu -a -m 4K --duration 30 -o "$TMP/ppa.data" \
		> /dev/null 2> "$TMP/ppa.err" &
	rpid=$!
	n=0
	while [ ! -e "$TMP/ppa.data" ] && [ $n -lt 300 ] && kill -0 $rpid 2> /dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	"$PP" 50 1.5 > "$TMP/ppa.out"
	kill -INT $rpid 2> /dev/null
	wait $rpid
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "off-cpu heavy: record -a exited $rc"
		tail -3 "$TMP/ppa.err" | sed 's/^/  /'
	else
		within "off-cpu heavy: -a: the pairs' blocked time = the program's time in read()" \
			"$(pairs_off "$TMP/ppa.data" "$(field pid "$TMP/ppa.out")")" \
			"$(field read_ns "$TMP/ppa.out")" 15
	fi
else
	if grep -q "^sfprof: --off-cpu: no kernel sums" "$TMP/pp.err"; then
		pass "off-cpu heavy: no kernel sums here ($KSUMS), and record says so"
	else
		fail "off-cpu heavy: record does not say it has no kernel sums ($KSUMS)"
	fi
	skip "off-cpu heavy: command totals" "$KSUMS"
	skip "off-cpu heavy: -a totals" "$KSUMS"
fi
