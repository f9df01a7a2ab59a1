#!/bin/sh
# What `sfprof agent` costs at its defaults (19 Hz per CPU, --call-graph
# auto, a window every 10 s, the listener on) with both CPUs busy, beside
# `perf record -a -g` at the same rate: each profiler's own CPU time per
# second and its peak resident size (GNU time's %U %S %M), over
# BENCH_SECONDS (default 30) with two CPU-bound programs without frame
# pointers (tests/progs/agent-work) running the whole time; also the
# profiler's CPU after its first 5 s (startup: loading BPF, reading every
# running program's tables).  BENCH_AGENT_ARGS adds agent options.
# Not yet: the tasks' loss by bench-record-cost's in-task method.
# Usage: sh bench/agent-cost.sh [BUILD]   (root; perf for the comparison)
set -u
B=${1:-build}
S=${BENCH_SECONDS:-30}
T=$(mktemp -d)
w1= w2= pp=
# no profiler or workload outlives the benchmark (a leftover agent breaks
# every perf record on the machine): killed on the way out, and with
# this shell even on SIGKILL (setpriv --pdeathsig)
trap 'kill -9 $w1 $w2 $pp 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
tick=$(getconf CLK_TCK)

# run NAME CMD...: the profiler for S seconds beside two busy programs
run() {
	name=$1
	shift
	setpriv --pdeathsig KILL "$B/tests/progs/agent-work" $((S + 20)) > /dev/null &
	w1=$!
	setpriv --pdeathsig KILL "$B/tests/progs/agent-work" $((S + 20)) > /dev/null &
	w2=$!
	sleep 1
	/usr/bin/time -f "%U %S %M" -o "$T/$name.time" \
		setpriv --pdeathsig KILL "$@" > "$T/$name.out" 2>&1 &
	tp=$!
	sleep 5
	pp=$(pgrep -P "$tp")
	c0=$(awk '{ print $14 + $15 }' /proc/$pp/stat)
	sleep $((S - 5))
	c1=$(awk '{ print $14 + $15 }' /proc/$pp/stat)
	kill -INT "$pp"
	wait "$tp"
	kill "$w1" "$w2"
	wait "$w1" "$w2" 2>/dev/null
	w1= w2= pp=
	set -- $(tail -1 "$T/$name.time")
	printf "%-26s cpu %6.2f %% of a core (after 5 s: %5.2f %%)  peak RSS %6.1f MB\n" \
		"$name" "$(echo "($1 + $2) * 100 / $S" | bc -l)" \
		"$(echo "($c1 - $c0) * 100 / $tick / ($S - 5)" | bc -l)" \
		"$(echo "$3 / 1024" | bc -l)"
}

echo "both CPUs busy, $S s, 19 Hz per CPU"
run "sfprof agent ${BENCH_AGENT_ARGS:-(defaults)}" "$B/sfprof" agent \
	--listen 127.0.0.1:0 -q ${BENCH_AGENT_ARGS:-}
run "perf record -a -g -F 19" perf record -a -g -F 19 -e cpu-clock -o "$T/perf.data" -q
grep -h "call-graph" "$T"/*.out | head -1
