#!/bin/sh
# The agent's CPU per 1,000 samples: what each sample costs the agent
# from its ring to its window (unwinding, naming, aggregating, and the
# windows' encoding and delivery spread over their samples), at a rate
# where the samples, not the timers, make its work.
#
# Two busy programs without frame pointers (tests/progs/agent-work: a hot
# function reached only through libc's qsort) keep both CPUs busy for
# the whole bench; `sfprof agent -F HZ --output-dir DIR -v` runs
# BENCH_SECONDS (default 20) a round, then SIGINT.  Per run: the agent's
# CPU as the kernel counted it for the whole process (all its threads,
# start-up and the final drain included: /usr/bin/time), the main loop's
# own CPU for reading and handling records (the agent's -v summary), the
# samples it took, and its peak RSS.  BENCH_BASE=/path/to/another/sfprof
# adds that build as "base", run in the same rounds in rotated order, so
# that before/after is one paired comparison on one machine state.
# BENCH_RUNS (default 3) rounds, BENCH_FREQ (default 499) Hz per CPU.
# Usage: sh bench/agent-per-sample.sh [BUILD]   (root)
set -u
B=${1:-build}
S=${BENCH_SECONDS:-20}
N=${BENCH_RUNS:-3}
F=${BENCH_FREQ:-499}
BASE=${BENCH_BASE:-}
CONFIGS="agent${BASE:+ base}"
T=$(mktemp -d)
pp= w1= w2=
trap 'kill -9 $pp $w1 $w2 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
for f in "$B/sfprof" "$B/tests/progs/agent-work" /usr/bin/time; do
	[ -x "$f" ] || { echo "agent-per-sample: $f missing (make bench-build tests)"; exit 2; }
done
if [ "$(id -u)" != 0 ]; then
	echo "agent-per-sample: not root: skipped"
	exit 0
fi
bin_of() { if [ "$1" = base ]; then echo "$BASE"; else echo "$B/sfprof"; fi; }

# one NAME ROUND: appends "round samples cpu_s loop_ms rss_kb" to $T/NAME
one() {
	rm -rf "$T/windows" && mkdir -p "$T/windows"
	setpriv --pdeathsig KILL /usr/bin/time -f "TIME %U %S %M" \
		"$(bin_of "$1")" agent -v -F "$F" --output-dir "$T/windows" \
		> "$T/$1.log" 2>&1 &
	pp=$!
	sleep "$S"
	# the agent is time's child
	kill -INT $(pgrep -P "$pp") 2> /dev/null
	wait "$pp"
	pp=
	awk -v r="$2" '
		/ samples, .* kept, / { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^samples/) { smp = $i; break } }
		/the loop.s CPU:/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "ms" && $(i + 2) == "reading") loop = $i }
		/^TIME / { cpu = $2 + $3; rss = $4 }
		END { printf "%s %s %s %s %s\n", r, smp + 0, cpu + 0, loop + 0, rss + 0 }' \
		"$T/$1.log" >> "$T/$1"
}

"$B/tests/progs/agent-work" 100000 > /dev/null 2>&1 &
w1=$!
"$B/tests/progs/agent-work" 100000 > /dev/null 2>&1 &
w2=$!
echo "agent-per-sample: $N rounds of $S s, -F $F per CPU, both CPUs busy" \
     "(two agent-work programs); load $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ $i -lt "$N" ]; do
	set -- $CONFIGS
	[ $((i % 2)) = 1 ] && [ $# = 2 ] && set -- "$2" "$1"
	for c in "$@"; do
		one "$c" $i
	done
	i=$((i + 1))
done
kill $w1 $w2 2> /dev/null
w1= w2=

# median FILE AWK-EXPRESSION: the median over the runs of the expression
median() {
	awk "{ print $2 }" "$1" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf "%-6s %9s %24s %24s %9s\n" "" "samples" "CPU ms / 1,000 samples" \
	"loop ms / 1,000 samples" "peak RSS"
for c in $CONFIGS; do
	printf "%-6s %9.0f %24.1f %24.1f %6.1f MB\n" "$c" \
		"$(median "$T/$c" '$2')" \
		"$(median "$T/$c" '$2 ? $3 * 1e6 / $2 : 0')" \
		"$(median "$T/$c" '$2 ? $4 * 1e3 / $2 : 0')" \
		"$(median "$T/$c" '$5 / 1024')"
done
if [ -n "$BASE" ]; then
	# per round: agent's CPU per sample over base's
	awk 'NR == FNR { b[$1] = $3 / $2; next } ($1 in b) && $2 { printf "%.3f\n", ($3 / $2) / b[$1] }' \
		"$T/base" "$T/agent" | sort -g |
		awk '{ v[NR] = $1 } END { printf "agent / base, CPU per sample: median %.3f (rounds %.3f .. %.3f)\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
