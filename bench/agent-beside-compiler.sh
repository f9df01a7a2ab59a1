#!/bin/sh
# The agent on a build host (issue 36 point 10): its peak memory and CPU
# while a compiler runs beside it, one short process after another.
#
# Every clang process maps libLLVM (110 MB, a 9 MB unwind table) and
# libclang-cpp; the agent at its defaults symbolizes them, unwinds them,
# and sees each process exit.  A loop of `clang -O2 -c` on one of our own
# sources runs the whole round (both CPUs: the agent samples both);
# `sfprof agent --output-dir DIR -v` runs BENCH_SECONDS (default 40) a
# round, then SIGINT.  Per run: the agent's peak RSS (VmHWM) and its CPU
# as the kernel counted it (/usr/bin/time), and the samples it took.
# BENCH_BASE=/path/to/another/sfprof adds that build as "base", run in
# the same rounds in rotated order (a paired comparison on one machine
# state).  BENCH_RUNS (default 3) rounds.  Medians, and the ratio
# agent/base of each.
# Usage: sh bench/agent-beside-compiler.sh [BUILD]   (root, clang)
set -u
B=${1:-build}
S=${BENCH_SECONDS:-40}
N=${BENCH_RUNS:-3}
BASE=${BENCH_BASE:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIGS="agent${BASE:+ base}"
T=$(mktemp -d)
pp= loop=
trap 'kill -9 $pp 2>/dev/null; [ -n "$loop" ] && kill $loop 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
for f in "$B/sfprof" /usr/bin/time; do
	[ -x "$f" ] || { echo "agent-beside-compiler: $f missing (make bench-build)"; exit 2; }
done
if [ "$(id -u)" != 0 ]; then
	echo "agent-beside-compiler: not root: skipped"
	exit 0
fi
if ! command -v clang > /dev/null; then
	echo "agent-beside-compiler: no clang (make deps): skipped"
	exit 0
fi
bin_of() { if [ "$1" = base ]; then echo "$BASE"; else echo "$B/sfprof"; fi; }

# The compiler loop: until the file stop appears.
compile_loop() {
	while [ ! -e "$T/stop" ]; do
		clang -O2 -c "$ROOT/src/sframe/decode.c" -I"$ROOT/include" \
			-I"$ROOT/src" -o "$T/x.o" 2> /dev/null
	done
}

# one NAME ROUND: appends "round samples cpu_s hwm_kb" to $T/NAME
one() {
	rm -rf "$T/windows" "$T/stop" && mkdir -p "$T/windows"
	compile_loop &
	loop=$!
	setpriv --pdeathsig KILL /usr/bin/time -f "TIME %U %S %M" \
		"$(bin_of "$1")" agent -v --output-dir "$T/windows" \
		> "$T/$1.log" 2>&1 &
	pp=$!
	sleep "$S"
	kill -INT $(pgrep -P "$pp") 2> /dev/null
	wait "$pp"
	pp=
	touch "$T/stop"
	wait "$loop"
	loop=
	awk -v r="$2" '
		/ samples, .* kept, / { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^samples/) { smp = $i; break } }
		/^TIME / { cpu = $2 + $3; rss = $4 }
		END { printf "%s %s %s %s\n", r, smp + 0, cpu + 0, rss + 0 }' \
		"$T/$1.log" >> "$T/$1"
}

r=1
while [ $r -le "$N" ]; do
	if [ -n "$BASE" ] && [ $((r % 2)) = 0 ]; then order="base agent"; else order=$CONFIGS; fi
	for c in $order; do one "$c" "$r"; done
	r=$((r + 1))
done

med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "agent-beside-compiler: ${S} s a round beside a clang -O2 -c loop, $N rounds"
for c in $CONFIGS; do
	cpu=$(awk '{ print $3 }' "$T/$c" | med)
	hwm=$(awk '{ print $4 }' "$T/$c" | med)
	smp=$(awk '{ print $2 }' "$T/$c" | med)
	printf "  %-5s peak RSS %6.1f MB  CPU %5.2f s (%.1f %% of a core)  samples %s\n" \
		"$c" "$(echo "$hwm" | awk '{ print $1 / 1024 }')" "$cpu" \
		"$(echo "$cpu $S" | awk '{ print 100 * $1 / $2 }')" "$smp"
	awk '{ printf "        round %s: %.1f MB, %.2f s, %s samples\n", $1, $4 / 1024, $3, $2 }' "$T/$c"
	eval "cpu_$c=\$cpu hwm_$c=\$hwm"
done
if [ -n "$BASE" ]; then
	echo "$hwm_agent $hwm_base $cpu_agent $cpu_base" | awk '{
		printf "  agent/base: peak RSS %.2f, CPU %.2f\n", $1 / $2, ($4 > 0 ? $3 / $4 : 0) }'
fi
