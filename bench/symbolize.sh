#!/bin/sh
# Issue 39, point 4: frames symbolized per second by `sfprof symbolize` on
# a pprof profile of FUNCS x BINS distinct frames over BINS build-ids
# (default 500 x 200 = 100k over 200), cold (empty symbol cache) and warm
# (the cache of the cold run), against eu-addr2line (one run per binary,
# its addresses on the command line; the first BENCH_EU_BINS, default 20,
# binaries only) and llvm-symbolizer (one run, "FILE
# ADDR" lines on stdin), both with inlines and function names, on the
# same debug files.  Every binary is one generated C file of FUNCS
# functions (-O2 -g, compiled once) linked with a seed of its own (so a
# build-id of its own), stripped; its debug file is in DIR/.build-id/.
# Usage: sh bench/symbolize.sh [BUILD]   (gcc, objcopy, protoc, python3;
# eu-addr2line and llvm-symbolizer where installed)
set -u
B=$(cd "${1:-build}" && pwd)
BINS=${BENCH_BINS:-200}
FUNCS=${BENCH_FUNCS:-500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROTO=$ROOT/../shared/testdata/proto/pprof
for t in gcc objcopy protoc python3; do
	command -v $t > /dev/null || { echo "symbolize bench: $t missing"; exit 2; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$T/bin" "$T/dbg" "$T/cache"

# --- the binaries -------------------------------------------------------------
# The functions are compiled once (a file of FUNCS functions takes seconds
# to build, 200 of them most of an hour on a loaded machine); each binary
# links them with a seed of its own, which makes its build-id its own.
echo "symbolize bench: building $BINS binaries of $FUNCS functions ..."
python3 "$ROOT/tests/cli/symbolize-gen.py" binaries "$T" "$BINS" "$FUNCS" || exit 2

# --- the profile: each function's call of its inlined helper, once ------------
# profile FIRST END OUT.pb: the profile of binaries FIRST..END-1 (their
# frames' "debug-file address" lines appended to $T/addrs)
profile() {
	python3 "$ROOT/tests/cli/symbolize-gen.py" profile "$T" "$1" "$2" > "$T/prof.txt" &&
	protoc --proto_path="$PROTO" --encode perftools.profiles.Profile \
		"$PROTO/profile.proto" < "$T/prof.txt" > "$3"
}
profile 0 "$BINS" "$T/prof.pb" || exit 2
NF=$(wc -l < "$T/addrs")
echo "symbolize bench: $NF distinct frames over $BINS build-ids"

now() { date +%s.%N; }
per_s() { awk -v a="$1" -v b="$2" -v n="$NF" 'BEGIN { printf "%.0f", n / (b - a) }'; }

# --- sfprof symbolize: cold, then warm ----------------------------------------
# (its peak RSS by /usr/bin/time where installed)
TIME=
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f %M -o $T/maxrss"
run_sfprof() {
	HOME=$T SFPROF_CACHE_DIR=$T/cache $TIME "$B/sfprof" symbolize -i "$T/prof.pb" \
		-o "$T/out.pb" --debug-dir "$T/dbg" 2> "$T/sfprof.err"
}
t0=$(now); run_sfprof; t1=$(now)
COLD=$(per_s "$t0" "$t1")
named=$(sed -n 's/.*locations: \([0-9]*\) named.*/\1/p' "$T/sfprof.err")
t0=$(now); run_sfprof; t1=$(now)
WARM=$(per_s "$t0" "$t1")
echo "sfprof symbolize: $named of $NF frames named; cold $COLD frames/s, warm $WARM frames/s${TIME:+; peak RSS $(cat "$T/maxrss") kB}"

# --- the peers --------------------------------------------------------------
if command -v eu-addr2line > /dev/null; then
	# on the first EU_BINS binaries only (a rate, frames/s): on the
	# whole profile it took 20 minutes (84 frames/s at load 40-70)
	EU_BINS=${BENCH_EU_BINS:-20}
	[ "$EU_BINS" -le "$BINS" ] || EU_BINS=$BINS
	i=0
	: > "$T/eu.addrs"
	while [ $i -lt "$EU_BINS" ]; do
		awk -v f="$T/bin/b$i.debug" '$1 == f { print $2 }' "$T/addrs" > "$T/eu.$i"
		cat "$T/eu.$i" >> "$T/eu.addrs"
		i=$((i + 1))
	done
	NEU=$(wc -l < "$T/eu.addrs")
	t0=$(now)
	i=0
	while [ $i -lt "$EU_BINS" ]; do
		xargs eu-addr2line -f -i -C -e "$T/bin/b$i.debug" < "$T/eu.$i" > /dev/null
		i=$((i + 1))
	done
	t1=$(now)
	EU=$(awk -v a="$t0" -v b="$t1" -v n="$NEU" 'BEGIN { printf "%.0f", n / (b - a) }')
	echo "eu-addr2line: $NEU frames of $EU_BINS build-ids"
	echo "eu-addr2line: $EU frames/s; sfprof/eu-addr2line: cold $(awk -v a="$COLD" -v b="$EU" 'BEGIN { printf "%.1f", a / b }')x, warm $(awk -v a="$WARM" -v b="$EU" 'BEGIN { printf "%.1f", a / b }')x"
fi
if command -v llvm-symbolizer > /dev/null; then
	t0=$(now)
	llvm-symbolizer -f -i -C < "$T/addrs" > /dev/null
	t1=$(now)
	LL=$(per_s "$t0" "$t1")
	echo "llvm-symbolizer: $LL frames/s; sfprof/llvm-symbolizer: cold $(awk -v a="$COLD" -v b="$LL" 'BEGIN { printf "%.1f", a / b }')x, warm $(awk -v a="$WARM" -v b="$LL" 'BEGIN { printf "%.1f", a / b }')x"
fi

# --- the service under --memory ---------------------------------------------
# `symbolize --listen --memory BENCH_MEMORY` (default 32M: far below the
# 200 files' tables) forwarding to a test backend; the build-ids come in
# requests of BENCH_GROUP (default 10) binaries each, all of them twice
# over, one request at a time: a table is kept under the budget only
# while no request uses it, so the process may hold the budget plus one
# request's tables.  Its resident size is read after every request.
MEM=${BENCH_MEMORY:-32M}
GROUP=${BENCH_GROUP:-10}
HERE=$ROOT/tests/cli
if ! command -v curl > /dev/null; then
	echo "symbolize --listen: curl missing: skipped"
	exit 0
fi
i=0
while [ $i -lt "$BINS" ]; do
	e=$((i + GROUP))
	[ $e -le "$BINS" ] || e=$BINS
	profile $i $e "$T/g$i.pb" && gzip -c "$T/g$i.pb" > "$T/g$i.pb.gz" &&
		python3 "$HERE/symbolize-clients.py" push-body "$T/g$i.pb.gz" "$T/g$i.push" ||
		exit 2
	i=$e
done
mkdir -p "$T/backend"
python3 "$HERE/push-server.py" --port-file "$T/bport" --dir "$T/backend" > /dev/null 2>&1 &
BK=$!
while [ ! -s "$T/bport" ]; do sleep 0.1; done
HOME=$T SFPROF_CACHE_DIR=$T/cache "$B/sfprof" symbolize --listen 127.0.0.1:0 \
	--pyroscope "http://127.0.0.1:$(cat "$T/bport")" --debug-dir "$T/dbg" \
	--memory "$MEM" 2> "$T/svc.err" &
SVC=$!
trap 'kill $SVC $BK 2>/dev/null; rm -rf "$T"' EXIT
n=0
while ! grep -q "listening on" "$T/svc.err" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
URL=http://127.0.0.1:$(sed -n 's/.*(port \([0-9][0-9]*\)).*/\1/p' "$T/svc.err")
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SVC/status"; }
BASE=$(rss)
MAXR=$BASE
ok=0 reqs=0
for pass in 1 2; do
	i=0
	while [ $i -lt "$BINS" ]; do
		python3 "$HERE/symbolize-clients.py" post "$URL/push.v1.PusherService/Push" \
			"$T/g$i.push" application/proto > "$T/resp"
		reqs=$((reqs + 1))
		grep -q '^200 .*, 0 in files not found' "$T/resp" && ok=$((ok + 1))
		r=$(rss)
		[ "$r" -gt "$MAXR" ] && MAXR=$r
		i=$((i + GROUP))
	done
done
metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
KEPT=$(metric sfprof_symbolize_tables_bytes)
EVICT=$(metric sfprof_symbolize_table_evictions_total)
LOADS=$(metric sfprof_symbolize_table_loads_total)
HWM=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SVC/status")
echo "symbolize --listen --memory $MEM: $ok of $reqs requests of $GROUP build-ids all named;" \
	"$LOADS table loads, $EVICT evictions, ${KEPT:-?} bytes of tables kept at the end"
echo "symbolize --listen: resident $((BASE / 1024)) MB before the first request," \
	"at most $((MAXR / 1024)) MB after a request, peak (VmHWM) $((HWM / 1024)) MB"
