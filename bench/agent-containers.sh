#!/bin/sh
# Issue 35: "20 containers of one image cost no more table builds and no
# more than 5 % more agent RSS than one".  One build of
# tests/data/containers/ns-work.c is run 1 time, then 20 times, each copy
# in its own mount and pid namespace with its own tmpfs: (a) all at the
# same path, (b) each at a path of its own.  One `sfprof agent` per
# configuration (--comm '^prog$', a window every 5 s, pulls only), read
# after BENCH_SECONDS (default 15) from its /metrics:
# sfprof_agent_unwind_tables_built_total and
# sfprof_agent_resident_memory_bytes.  Prints both and the verdicts.
# Usage: sh bench/agent-containers.sh [BUILD]   (root, unshare, gcc, curl)
set -u
B=${1:-build}
S=${BENCH_SECONDS:-15}
SRC=$(dirname "$0")/../tests/data/containers/ns-work.c
if [ "$(id -u)" != 0 ] || ! unshare --mount --pid --fork true 2>/dev/null; then
	echo "agent-containers: not root or no namespaces: skipped"
	exit 0
fi
for t in gcc curl; do
	command -v $t > /dev/null || { echo "agent-containers: $t missing"; exit 2; }
done
T=$(mktemp -d)
PIDS= AP=
trap 'for p in $PIDS $AP; do kill -9 $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
gcc -O2 -fomit-frame-pointer -fno-inline -DPFX=alpha -o "$T/prog" "$SRC" ||
	exit 2

start() {	# DIR: the build as DIR/prog in a tmpfs at DIR of new namespaces
	mkdir -p "$1"
	setpriv --pdeathsig KILL unshare --mount --pid --fork sh -c \
		"mount -t tmpfs tmpfs '$1' && cp '$T/prog' '$1/prog' && exec '$1/prog'" \
		> /dev/null 2>&1 &
	PIDS="$PIDS $!"
}
metric() {
	curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2; exit }'
}
# run N same|paths: prints "tables rss_bytes"
run() {
	i=0
	while [ $i -lt "$1" ]; do
		if [ "$2" = same ]; then start "$T/ns"; else start "$T/ns$i"; fi
		i=$((i + 1))
	done
	sleep 1
	: > "$T/agent.err"
	setpriv --pdeathsig KILL "$B/sfprof" agent --listen 127.0.0.1:0 \
		--comm '^prog$' --interval 5 2> "$T/agent.err" &
	AP=$!
	i=0
	while ! grep -q "sampling every CPU" "$T/agent.err" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	port=$(sed -n 's/.*(port \([0-9][0-9]*\)).*/\1/p' "$T/agent.err")
	sleep "$S"
	echo "$(metric "$port" sfprof_agent_unwind_tables_built_total) $(metric "$port" sfprof_agent_resident_memory_bytes)"
	kill -INT $AP; wait $AP 2>/dev/null; AP=
	for p in $PIDS; do kill -9 $p 2>/dev/null; done
	wait 2>/dev/null
	PIDS=
}
echo "agent-containers: one build run by N containers, agent --comm '^prog$'," \
     "$S s each; load $(cut -d' ' -f1-3 /proc/loadavg)"
set -- $(run 1 same)
t1=$1 r1=$2
printf "%-26s tables built %4s  RSS %7.1f MB\n" "1 container" "$t1" "$(echo "$r1 / 1048576" | bc -l)"
for mode in same paths; do
	set -- $(run 20 $mode)
	desc="20 containers, one path"
	[ $mode = paths ] && desc="20 containers, 20 paths"
	printf "%-26s tables built %4s  RSS %7.1f MB (%+.1f %%)\n" "$desc" "$1" \
		"$(echo "$2 / 1048576" | bc -l)" "$(echo "($2 - $r1) * 100 / $r1" | bc -l)"
	v1=met v2=met
	[ "${1:-x}" -le "${t1:-0}" ] 2>/dev/null || v1="NOT met"
	[ "$(echo "($2 - $r1) * 100 <= 5 * $r1" | bc -l)" = 1 ] || v2="NOT met"
	echo "  tables <= one container's: $v1; RSS within 5 %: $v2"
done
