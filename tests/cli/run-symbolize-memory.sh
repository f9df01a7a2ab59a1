#!/bin/sh
# symbolize --listen --memory: the tables the service keeps stay under the
# budget, by the kernel's measure of the process (VmRSS), not only by the
# service's own.  NBIN stripped binaries of 500 functions (a build-id each,
# their debug files in a debug directory) are named in Pyroscope pushes of
# two binaries each, all of them twice over, one request at a time, once
# with room for every table and once with --memory 4M; VmRSS is read
# after each request.
# checks: 4
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto/pprof
CLI=$HERE/symbolize-clients.py
SERVER=$HERE/push-server.py
. "$HERE/agent-subr.sh"
EXTRA_CLEANUP=mem_cleanup
mem_cleanup() {
	[ -n "$SVC_PID" ] && kill -9 "$SVC_PID" 2>/dev/null
}
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT
NBIN=24
BUDGET_MB=4

missing=
for t in gcc objcopy strip readelf nm protoc python3 curl; do
	command -v $t > /dev/null 2>&1 || missing="$missing $t"
done
[ -f "$PROTO/profile.proto" ] || missing="$missing $PROTO/profile.proto"
[ -z "$missing" ] || skip_rest "symbolize --memory" "missing:$missing (make deps)"
. "$HERE/push-subr.sh"
. "$HERE/symbolize-subr.sh"
export HOME="$TMP/home" SFPROF_CACHE_DIR="$TMP/cache"
mkdir -p "$HOME"

if ! python3 "$HERE/symbolize-gen.py" binaries "$TMP" $NBIN 500 > "$TMP/gen.err" 2>&1; then
	fail "symbolize --memory: $NBIN test binaries built"
	sed 's/^/  /' "$TMP/gen.err" | tail -5
	exit 0
fi
i=0
while [ $i -lt $NBIN ]; do
	python3 "$HERE/symbolize-gen.py" profile "$TMP" $i $((i + 2)) > "$TMP/g.txt" &&
	protoc --proto_path="$PROTO" --encode perftools.profiles.Profile \
		"$PROTO/profile.proto" < "$TMP/g.txt" | gzip -c > "$TMP/g$i.pb.gz" &&
	python3 "$CLI" push-body "$TMP/g$i.pb.gz" "$TMP/g$i.push" || exit 1
	i=$((i + 2))
done
start_server "$TMP/backend"

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SVC_PID/status"; }
# serve MEMORY NAME: every push twice over; "$TMP/NAME.rss" gets the base
# VmRSS (kB) then one line a request, "RSS TABLE-BYTES"; $TMP/NAME.bad
# the replies that are not 200 with every location named
serve() {
	svc_start --pyroscope "http://127.0.0.1:$PORT" --debug-dir "$TMP/dbg" --memory "$1"
	rss > "$TMP/$2.rss"
	: > "$TMP/$2.bad"
	for pass in 1 2; do
		i=0
		while [ $i -lt $NBIN ]; do
			post /push.v1.PusherService/Push "$TMP/g$i.push" application/proto > "$TMP/r"
			grep -q '^200 .*named: 1000 of 1000 locations, 0 in files not found' "$TMP/r" ||
				cat "$TMP/r" >> "$TMP/$2.bad"
			echo "$(rss) $(smetric sfprof_symbolize_tables_bytes)" >> "$TMP/$2.rss"
			i=$((i + 2))
		done
	done
	HEAP=$(smetric sfprof_symbolize_tables_heap_bytes)
	MEASURED=$(smetric sfprof_symbolize_tables_heap_measured)
	EVICTED=$(smetric sfprof_symbolize_table_evictions_total)
	svc_stop
	STOPPED=$src
}
# growth NAME: the largest VmRSS after a request over the base, in kB
growth() {
	awk 'NR == 1 { base = $1; next } $1 - base > m { m = $1 - base } END { print m + 0 }' "$TMP/$1.rss"
}

serve 1G all
ALL_GROW=$(growth all)
ALL_BYTES=$(tail -1 "$TMP/all.rss" | awk '{ print int($2 / 1024) }')
ALL_HEAP=$((HEAP / 1024))
ALL_OK=$([ -s "$TMP/all.bad" ] || [ "$STOPPED" != 0 ] || echo ok)
serve ${BUDGET_MB}M budget
B_GROW=$(growth budget)
B_MAX=$(awk 'NR > 1 && $2 > m { m = $2 } END { print m + 0 }' "$TMP/budget.rss")
B_OK=$([ -s "$TMP/budget.bad" ] || [ "$STOPPED" != 0 ] || echo ok)
stop_server "symbolize --memory backend"

if [ "$ALL_OK" = ok ] && [ "$B_OK" = ok ]; then
	pass "symbolize --memory: every location of the $NBIN binaries named, with room for every table and under ${BUDGET_MB}M"
else
	fail "symbolize --memory: every location named, with and without a budget"
	cat "$TMP/all.bad" "$TMP/budget.bad" | cut -c1-200 | head -5 | sed 's/^/  /'
	tail -3 "$TMP/svc.err" | sed 's/^/  /'
fi

# The service's own account: after each request (none under way) what it
# keeps costs no more than the budget, and it let tables go for it.
if [ "$B_MAX" -le $((BUDGET_MB * 1048576)) ] && [ "${EVICTED:-0}" -gt 0 ] &&
   [ "$MEASURED" = 1 ]; then
	pass "symbolize --memory ${BUDGET_MB}M: the tables kept cost at most $B_MAX bytes after each request, $EVICTED evictions"
else
	fail "symbolize --memory ${BUDGET_MB}M: the tables kept within the budget ($B_MAX bytes at most, $EVICTED evictions, heap measured: $MEASURED)"
fi

# The kernel's measure: ASan's allocator keeps freed memory in its
# quarantine and its own caches, so the resident size says nothing there.
if ldd "$SFPROF" 2>/dev/null | grep -q libasan; then
	skip "symbolize --memory: the tables' measured cost against VmRSS" \
		"ASan's quarantine keeps freed memory resident by design"
	skip "symbolize --memory ${BUDGET_MB}M: VmRSS within the budget" \
		"ASan's quarantine keeps freed memory resident by design"
	exit 0
fi
# With every table kept, what the service says they cost (heap measured
# plus the files they map) is no less than 0.8 times what the process grew
# by, and no more than 1.6 times: it errs high, since it counts whole
# blocks and whole files, pages never touched included.  Counting the
# files alone, as it used to, says a quarter of it.
if [ "$ALL_GROW" -gt 0 ] && [ $((ALL_BYTES * 10)) -ge $((ALL_GROW * 8)) ] &&
   [ $((ALL_BYTES * 10)) -le $((ALL_GROW * 16)) ]; then
	pass "symbolize --memory: $NBIN tables said to cost $ALL_BYTES kB ($ALL_HEAP kB heap), VmRSS grew by $ALL_GROW kB"
else
	fail "symbolize --memory: the tables' cost as said ($ALL_BYTES kB, $ALL_HEAP kB heap) within 0.8-1.6 times VmRSS's growth ($ALL_GROW kB)"
fi
# Under the budget the process grows by the budget, one request's two
# tables and some slack for the heap's own keeping (8 MB), far from what
# every table takes.
if [ "$B_GROW" -le $(((BUDGET_MB + 8) * 1024)) ] && [ "$ALL_GROW" -ge $((B_GROW * 2)) ]; then
	pass "symbolize --memory ${BUDGET_MB}M: VmRSS grew by $B_GROW kB at most (every table kept: $ALL_GROW kB)"
else
	fail "symbolize --memory ${BUDGET_MB}M: VmRSS grows by the budget and slack at most ($B_GROW kB; every table kept: $ALL_GROW kB)"
	tr '\n' ';' < "$TMP/budget.rss" | sed 's/^/  /'
	echo
fi
