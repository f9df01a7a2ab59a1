#!/bin/sh
# Off-CPU under heavy switching (issue 38, point 19): the ping-pong of
# tests/progs/offcpu-pingpong (PAIRS pairs of threads, SECONDS seconds,
# every thread timing its own read() calls) recorded with `sfprof record
# --off-cpu`, per round once system-wide (-a, the workload started once
# the recording runs) and once as the command; printed per run: the pair
# threads' blocked time in the file (report --threads) against the
# program's own time in read() (target: within 5 %), the blocks the
# kernel and the program counted, and what the summary says was lost.
#
#   bench/offcpu-heavy.sh            BENCH_RUNS rounds (default 3)
#   BENCH_PAIRS=100 BENCH_SECONDS=3  the issue's load (defaults)
#   SFPROF=path                      the sfprof to measure (default
#                                    build/sfprof)
# Needs root and tracefs (as `record --off-cpu`).
set -u
cd "$(dirname "$0")/.." || exit 2
SFPROF=${SFPROF:-$PWD/build/sfprof}
PP=${PP:-$PWD/build/tests/progs/offcpu-pingpong}
RUNS=${BENCH_RUNS:-3}
PAIRS=${BENCH_PAIRS:-100}
SECS=${BENCH_SECONDS:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/sfp-offheavy.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
[ -r /sys/kernel/tracing/events/sched/sched_switch/format ] ||
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2"; }
one() {	# MODE: prints one result line
	rm -f "$T/r.data"
	if [ "$1" = -a ]; then
		"$SFPROF" record --off-cpu -a --duration $((SECS * 10 + 30)) \
			-o "$T/r.data" > /dev/null 2> "$T/r.err" &
		rp=$!
		while [ ! -e "$T/r.data" ] && kill -0 $rp 2> /dev/null; do
			sleep 0.1
		done
		"$PP" "$PAIRS" "$SECS" > "$T/r.out"
		kill -INT $rp
		wait $rp
	else
		"$SFPROF" record --off-cpu -o "$T/r.data" -- "$PP" "$PAIRS" \
			"$SECS" > "$T/r.out" 2> "$T/r.err"
	fi
	pid=$(field pid "$T/r.out")
	rd=$(field read_ns "$T/r.out")
	nv=$(field blocks "$T/r.out")
	got=$("$SFPROF" report --threads --plain -i "$T/r.data" 2> /dev/null |
		awk -F'\t' -v p="$pid" '$1 == "thread" && $2 == p && $3 != p { s += $6 }
			END { printf "%.0f\n", s }')
	lost=$(sed -n 's/^  lost: \([0-9]*\).*/\1/p' "$T/r.err")
	kb=$(sed -n "s/.*kernel's sums (\([0-9.]*\) s in \([0-9]*\) blocks.*/\2/p" "$T/r.err")
	awk -v m="$1" -v g="$got" -v r="$rd" -v nv="$nv" -v l="$lost" -v kb="${kb:-0}" 'BEGIN {
		printf "%-8s file %8.1f s  program %8.1f s  %6.1f %%  blocks: program %d, kernel sums %d  lost %s\n",
			m, g / 1e9, r / 1e9, r ? 100 * g / r : 0, nv, kb, l }'
}
echo "# $(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg), $("$SFPROF" --version 2> /dev/null | head -1)"
echo "# $PAIRS pairs, $SECS s, $RUNS rounds"
i=0
while [ $i -lt "$RUNS" ]; do
	one -a
	one command
	i=$((i + 1))
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
