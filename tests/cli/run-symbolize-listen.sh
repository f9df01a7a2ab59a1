#!/bin/sh
# symbolize --listen: `sfprof agent --no-symbolize` pushing a stripped
# program's profiles (Pyroscope Connect Push and OTLP) to `sfprof symbolize
# --listen`, which names them and forwards them to a test backend
# (push-server.py); what arrives is decoded with protoc and the upstream
# protos and checked frame by frame against eu-addr2line on the unstripped
# file.  Then the service alone: 200 requests at once, every name from a
# real debuginfod that is asked once per build-id; debuginfod down,
# answering 404, 500, and too slow; corrupt and oversized bodies; a table
# budget that evicts; SIGHUP and SIGTERM.
# checks: 19
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
CHECK=$HERE/push-check.py
CLI=$HERE/symbolize-clients.py
SERVER=$HERE/push-server.py
. "$HERE/agent-subr.sh"
SVC_PID=
FAKE_PID=
DFD_PID=
EXTRA_CLEANUP=listen_cleanup
listen_cleanup() {
	for p in $SVC_PID $FAKE_PID $DFD_PID; do
		kill -9 "$p" 2>/dev/null
	done
}
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT

sfp symbolize --help > "$TMP/help" 2>&1
if grep -q -- '--listen ADDR:PORT' "$TMP/help" && grep -q -- '--memory SIZE' "$TMP/help" &&
   grep -q -- '--otlp URL' "$TMP/help" && grep -q -- '--pyroscope URL' "$TMP/help"; then
	pass "symbolize --help: --listen, --memory, --pyroscope, --otlp"
else
	fail "symbolize --help: --listen, --memory, --pyroscope, --otlp"
fi
check_rc "--listen without a backend is a usage error" 2 $SFPROF symbolize --listen 127.0.0.1:0

missing=
for t in protoc python3 curl eu-addr2line debuginfod objcopy strip readelf; do
	command -v $t > /dev/null 2>&1 || missing="$missing $t"
done
[ -f "$PROTO/pprof/profile.proto" ] || missing="$missing $PROTO/pprof/profile.proto"
[ -z "$missing" ] || skip_rest "symbolize --listen" "missing:$missing (make deps)"
. "$HERE/push-subr.sh"
. "$HERE/debuginfod-subr.sh"
. "$HERE/symbolize-subr.sh"

DELIV_P='sfprof_agent_sink_windows_delivered_total{sink="pyroscope'

# --- a stripped program, its debug file in a debug directory ---------------
FULL=$SFP_BUILD/tests/progs/agent-work	# -O2 -g: now_ms() is inlined
mkdir -p "$TMP/bin" "$TMP/srv" "$TMP/home" "$TMP/raw"
PROG=$TMP/bin/app
cp "$FULL" "$PROG"
strip -s "$PROG"
ID=$(readelf -n "$PROG" | awk '/Build ID:/ { print $3 }')
DBG=$TMP/dbg/.build-id/$(echo "$ID" | cut -c1-2)
mkdir -p "$DBG"
objcopy --only-keep-debug "$FULL" "$DBG/$(echo "$ID" | cut -c3-).debug"
cp "$DBG/$(echo "$ID" | cut -c3-).debug" "$TMP/srv/app.debug"
export HOME="$TMP/home"

# names FILE.locs: for the program's locations (push-check.py's
# locations-pprof lines), "ADDR OURS THEIRS" with eu-addr2line's frames on
# the unstripped file, innermost first
compare() {
	awk -v id="$ID" '$3 == id' "$1" | sort -u > "$TMP/cmp.in"
	python3 "$HERE/eu-a2l-compare.py" "$FULL" "$TMP/cmp.in" > "$TMP/cmp.out"
}
# check_named FILE.locs WHAT: >= 99 % of the program's distinct locations
# named exactly as eu-addr2line names them
check_named() {
	compare "$1"
	n=$(wc -l < "$TMP/cmp.out")
	same=$(awk '$2 == $3 && $2 != "-"' "$TMP/cmp.out" | wc -l)
	if [ "$n" -ge 5 ] && [ $((same * 100)) -ge $((n * 99)) ]; then
		pass "$2: $same of $n locations of the program named as eu-addr2line names them"
	else
		fail "$2: locations named as eu-addr2line names them ($same of $n)"
		awk '$2 != $3' "$TMP/cmp.out" | head -5 | sed 's/^/  /'
	fi
}
# locs DIR OUT [MAX]: the locations of every pprof the backend got
# (pushes), or of the first MAX
locs() {
	: > "$2"
	_n=0
	for f in "$1"/*.pb.gz; do
		[ -e "$f" ] || continue
		[ -n "$3" ] && [ $_n -ge "$3" ] && break
		_n=$((_n + 1))
		decode_pprof "$f" "$f.txt" && python3 "$CHECK" locations-pprof "$f.txt" >> "$2"
	done
}

# --- the agent -> the service -> the backend -------------------------------
SRV_DIR=$TMP/backend
start_server "$SRV_DIR"
BPORT=$PORT
BACKEND_PID=$SRV_PID
svc_start --pyroscope "http://127.0.0.1:$BPORT" --otlp "http://127.0.0.1:$BPORT" \
	--debug-dir "$TMP/dbg"
"$PROG" 60 > /dev/null &
WPID=$!
agent_start --no-symbolize -p "$WPID" -F 499 --interval 2s \
	--pyroscope "$SURL" --otlp "$SURL" --output-dir "$TMP/raw"
# two windows delivered by each of the agent's sinks
wait_metric sfprof_agent_sink_windows_delivered_total 2 pyroscope
wait_metric sfprof_agent_sink_windows_delivered_total 2 otlp
kill -INT "$AGENT_PID" 2>/dev/null
agent_end 60
kill -9 "$WPID" 2>/dev/null
WPID=
apush=$(sed -n "s|.*sink pyroscope $SURL/*: delivered=\([0-9]*\) dropped=0 failed=0.*|\1|p" "$TMP/agent.err")
aotlp=$(sed -n "s|.*sink otlp $SURL/*: delivered=\([0-9]*\) dropped=0 failed=0.*|\1|p" "$TMP/agent.err")
if [ "$rc" = 0 ] && [ "${apush:-0}" -ge 2 ] && [ "${aotlp:-0}" -ge 2 ]; then
	pass "agent --no-symbolize: $apush pushes and $aotlp OTLP requests accepted by the service"
else
	fail "agent --no-symbolize: pushes and OTLP requests accepted by the service (rc $rc)"
	tail -4 "$TMP/agent.err" "$TMP/svc.err" | sed 's/^/  /'
	apush=0 aotlp=0
fi
# each push goes on to both backends, each OTLP request to the OTLP one
want=$((2 * apush + aotlp))
_i=0
while [ "$(grep -c ' 200 ' "$SRV_DIR/requests.log" 2>/dev/null)" -lt "$want" ] && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
mok=$(smetric 'sfprof_symbolize_requests_total{kind="push",result="ok"}')
ook=$(smetric 'sfprof_symbolize_requests_total{kind="otlp",result="ok"}')
fwd=$(smetric sfprof_symbolize_windows_forwarded_total)
got=$(grep -c ' 200 ' "$SRV_DIR/requests.log" 2>/dev/null)
drop=$(curl -s "$SURL/metrics" | awk '$1 ~ /^sfprof_agent_sink_windows_(dropped|failed)_total/ { s += $2 } END { print s + 0 }')
if [ "$mok" = "$apush" ] && [ "$ook" = "$aotlp" ] && [ "$fwd" = "$want" ] &&
   [ "$got" = "$want" ] && [ "$drop" = 0 ]; then
	pass "the service named $mok pushes and $ook OTLP requests and forwarded $fwd windows, all delivered, none dropped"
else
	fail "the service forwards every request (push $mok/$apush, otlp $ook/$aotlp, forwarded $fwd, backend $got of $want, dropped+failed $drop)"
	tail -3 "$TMP/svc.err" | sed 's/^/  /'
fi
locs "$SRV_DIR" "$TMP/fwd.locs"
check_named "$TMP/fwd.locs" "pushes through the service"
# the OTLP the backend got (the agent's OTLP requests named, and the
# pushes converted by the OTLP sink) carries the same stacks as the pushes
: > "$TMP/p.stacks"
: > "$TMP/o.stacks"
for f in "$SRV_DIR"/*.pb.gz.txt; do
	[ -e "$f" ] && python3 "$CHECK" stacks-pprof "$f" >> "$TMP/p.stacks"
done
for f in "$SRV_DIR"/*.otlp; do
	[ -e "$f" ] || continue
	decode_otlp "$f" "$f.txt" && python3 "$CHECK" stacks-otlp "$f.txt" >> "$TMP/o.stacks"
done
sort "$TMP/p.stacks" "$TMP/p.stacks" > "$TMP/p2.stacks"
sort "$TMP/o.stacks" > "$TMP/o2.stacks"
if [ -s "$TMP/o2.stacks" ] && cmp -s "$TMP/p2.stacks" "$TMP/o2.stacks" &&
   grep -q 'agent_hot' "$TMP/o2.stacks"; then
	pass "OTLP through the service: the same named stacks as the pushes ($(wc -l < "$TMP/o2.stacks") stack lines)"
else
	fail "OTLP through the service: the same named stacks as the pushes"
	diff "$TMP/p2.stacks" "$TMP/o2.stacks" | head -6 | sed 's/^/  /'
fi
if svc_stop && [ "$src" = 0 ] &&
   grep -q "sfprof symbolize: $apush Push and $aotlp OTLP requests named, 0 refused" "$TMP/svc.err" &&
   grep -q "sink otlp http://127.0.0.1:$BPORT/*: $((apush + aotlp)) delivered, 0 dropped" "$TMP/svc.err"; then
	pass "SIGTERM: exit 0, the account of requests and sinks"
else
	fail "SIGTERM: exit 0, the account of requests and sinks (rc $src)"
	tail -5 "$TMP/svc.err" | sed 's/^/  /'
fi

# --- the service alone: requests made from the agent's raw window ----------
RAW=$(ls "$TMP/raw"/profile-*.pb.gz 2>/dev/null | head -1)
decode_pprof "$RAW" "$TMP/rawp.txt"
python3 "$CHECK" locations-pprof "$TMP/rawp.txt" > "$TMP/raw.locs"
# the distinct native build-ids the window's locations name
nids=$(awk '{ print $3 }' "$TMP/raw.locs" | sort -u | wc -l)
napp=$(awk -v id="$ID" '$3 == id' "$TMP/raw.locs" | wc -l)
python3 "$CLI" push-body "$RAW" "$TMP/push.pb"
# the same window as the agent's OTLP sink sends it (the backend keeps it
# uncompressed)
mkdir -p "$TMP/conv"
sfp push --otlp "http://127.0.0.1:$BPORT" -l service_name=app "$RAW" > "$TMP/conv.out" 2>&1
OTLPREQ=$(ls -t "$SRV_DIR"/*.otlp | head -1)
stop_server "backend"
# the window again, the program's build-id changed to one nobody has
python3 "$CLI" retag-build-id "$RAW" "$ID" "$(echo "$ID" | tr '0-9a-f' '1-9a-f0')" "$TMP/other.pb.gz"
python3 "$CLI" push-body "$TMP/other.pb.gz" "$TMP/other.pb"

# 200 requests at once, every name from a real debuginfod: one lookup per
# build-id (single flight), every request answered and forwarded
SRV_DIR=$TMP/backend2
start_server "$SRV_DIR"
BPORT=$PORT
BACKEND_PID=$SRV_PID
SRV_PID=
if start_debuginfod; then
	DFD_PID=$SRV_PID
	DPORT=$PORT
	SRV_PID=$BACKEND_PID
	DEBUGINFOD_URLS=http://127.0.0.1:$DPORT DEBUGINFOD_CACHE_PATH=$TMP/dcache \
		svc_start --pyroscope "http://127.0.0.1:$BPORT" --otlp "http://127.0.0.1:$BPORT" \
		--timeout 60s --max-body 8M
	python3 "$CLI" storm "$SURL" 200 "$TMP/push.pb" "$OTLPREQ" > "$TMP/storm.out" 2>&1
	loads=$(smetric sfprof_symbolize_table_loads_total)
	fromd=$(smetric 'sfprof_symbolize_locations_named_total{source="debuginfod"}')
	if grep -q '^200/200 ' "$TMP/storm.out" && [ "$loads" = "$nids" ] &&
	   [ "${fromd:-0}" -ge $((200 * napp)) ]; then
		pass "200 requests at once: all 200, $loads table loads for $nids build-ids, $fromd locations named from debuginfod"
	else
		fail "200 requests at once: all 200, one table load per build-id ($loads loads, $nids build-ids, $fromd from debuginfod)"
		head -5 "$TMP/storm.out" | sed 's/^/  /'
	fi
	# 100 pushes to both backends, 100 OTLP requests to one
	swait "$DELIV_P http://127.0.0.1:$BPORT\"}" 100
	swait "sfprof_agent_sink_windows_delivered_total{sink=\"otlp http://127.0.0.1:$BPORT\"}" 200
	d1=$(smetric "$DELIV_P http://127.0.0.1:$BPORT\"}")
	d2=$(smetric "sfprof_agent_sink_windows_delivered_total{sink=\"otlp http://127.0.0.1:$BPORT\"}")
	locs "$SRV_DIR" "$TMP/storm.locs" 3
	if [ "$d1" = 100 ] && [ "$d2" = 200 ]; then
		pass "... all 300 windows delivered to the backends"
	else
		fail "... all 300 windows delivered to the backends (pyroscope $d1/100, otlp $d2/200)"
	fi
	check_named "$TMP/storm.locs" "from debuginfod, 3 of the 100 pushes"
	svc_stop
	stop_server "backend2"

	# a build-id the server does not know: 404, the frames left, said; and
	# not asked again for each request (the miss is remembered)
	start_server "$TMP/backend3"
	DEBUGINFOD_URLS=http://127.0.0.1:$DPORT DEBUGINFOD_CACHE_PATH=$TMP/dcache3 \
		svc_start --otlp "http://127.0.0.1:$PORT" --timeout 60s
	post /push.v1.PusherService/Push "$TMP/other.pb" application/proto > "$TMP/p404a"
	post /push.v1.PusherService/Push "$TMP/other.pb" application/proto > "$TMP/p404b"
	miss=$(smetric sfprof_symbolize_locations_file_not_found_total)
	fails=$(smetric sfprof_symbolize_table_load_failures_total)
	if grep -q "^200 .*, $napp in files not found" "$TMP/p404a" &&
	   grep -q "^200 .*, $napp in files not found" "$TMP/p404b" &&
	   [ "$miss" = $((2 * napp)) ] && [ "$fails" = 1 ]; then
		pass "debuginfod answering 404: 200, the $napp locations left unnamed and counted, looked up once for two requests"
	else
		fail "debuginfod answering 404: 200, locations left unnamed, looked up once ($miss missing, $fails failed loads)"
		cat "$TMP/p404a" "$TMP/p404b" | sed 's/^/  /'
	fi
	svc_stop
	stop_server "backend3"
	kill "$DFD_PID" 2>/dev/null
	wait "$DFD_PID" 2>/dev/null
	DFD_PID=
else
	SRV_PID=$BACKEND_PID
	stop_server "backend2"
	fail "debuginfod on 127.0.0.1 serves the debug file"
	for c in 1 2 3; do fail "debuginfod check $c (no server)"; done
fi

# debuginfod down, answering 500, and too slow: each request answered
# within its own time-out, its frames left unnamed; a request for a file
# the service has is not held up by another's slow fetch
start_server "$TMP/backend4"
BPORT=$PORT
for mode in down 500; do
	if [ $mode = down ]; then
		DURL=http://127.0.0.1:$(free_port)
	else
		python3 "$CLI" fake-debuginfod "$TMP/fake.port" 500 &
		FAKE_PID=$!
		_i=0
		while [ ! -s "$TMP/fake.port" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
		DURL=http://127.0.0.1:$(cat "$TMP/fake.port")
	fi
	DEBUGINFOD_URLS=$DURL DEBUGINFOD_CACHE_PATH=$TMP/dcache-$mode \
		svc_start --otlp "http://127.0.0.1:$BPORT" --timeout 20s
	post /push.v1.PusherService/Push "$TMP/other.pb" application/proto > "$TMP/p-$mode"
	if grep -q "^200 .*, $napp in files not found" "$TMP/p-$mode" && svc_stop && [ "$src" = 0 ]; then
		pass "debuginfod $mode: 200, the $napp locations left unnamed and counted"
	else
		fail "debuginfod $mode: 200, the locations left unnamed and counted"
		cat "$TMP/p-$mode" | sed 's/^/  /'
		tail -3 "$TMP/svc.err" | sed 's/^/  /'
	fi
	[ -n "$SVC_PID" ] && svc_stop
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=
	rm -f "$TMP/fake.port"
done
python3 "$CLI" fake-debuginfod "$TMP/fake.port" slow &
FAKE_PID=$!
_i=0
while [ ! -s "$TMP/fake.port" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
# it holds each request 60 s; the service's time-out is 10 s.  A request
# for a file at hand, sent while two wait for the slow one's, is answered
# while they still wait: a fetch holds no lock the others need.
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$TMP/fake.port") DEBUGINFOD_CACHE_PATH=$TMP/dcache-slow \
	svc_start --otlp "http://127.0.0.1:$BPORT" --timeout 10s --debug-dir "$TMP/dbg"
post /push.v1.PusherService/Push "$TMP/other.pb" application/proto > "$TMP/slow1" &
S1=$!
post /push.v1.PusherService/Push "$TMP/other.pb" application/proto > "$TMP/slow2" &
S2=$!
_i=0
while [ "$(cat "$TMP/fake.port.count" 2>/dev/null)" != 1 ] && [ $_i -lt 300 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
post /push.v1.PusherService/Push "$TMP/push.pb" application/proto > "$TMP/fast"
waiting=0
[ -s "$TMP/slow1" ] || waiting=$((waiting + 1))
[ -s "$TMP/slow2" ] || waiting=$((waiting + 1))
wait $S1 $S2
t1=$(awk '{ print int($2) }' "$TMP/slow1")
t2=$(awk '{ print int($2) }' "$TMP/slow2")
tf=$(awk '{ print int($2) }' "$TMP/fast")
asked=$(cat "$TMP/fake.port.count" 2>/dev/null)
# 40 s: far from the server's 60 s, whatever the machine's load
if grep -q "^200 .*, $napp in files not found" "$TMP/slow1" &&
   grep -q "^200 .*, $napp in files not found" "$TMP/slow2" &&
   grep -q "^200 .*, 0 in files not found" "$TMP/fast" && [ "$waiting" = 2 ] &&
   [ "$t1" -lt 40 ] && [ "$t2" -lt 40 ] && [ "${asked:-0}" = 1 ]; then
	pass "debuginfod slow: two requests for its file answered in ${t1} and ${t2} s (it was asked once), one for a file at hand in ${tf} s while they waited"
else
	fail "debuginfod slow: requests answered within their time-out, the one for a file at hand at once (${t1}, ${t2}, ${tf} s; $waiting waiting then; asked ${asked:-0} times)"
	cat "$TMP/slow1" "$TMP/slow2" "$TMP/fast" | sed 's/^/  /'
fi
svc_stop
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
FAKE_PID=

# --- bad requests: 4xx with the reason, and the service goes on ------------
svc_start --otlp "http://127.0.0.1:$BPORT" --debug-dir "$TMP/dbg" --max-body 1M --max-profile 4M
printf 'not a protobuf at all' > "$TMP/junk"
head -c 300 "$TMP/push.pb" > "$TMP/cut.pb"
head -c 2000000 /dev/urandom > "$TMP/big"
head -c 20000000 /dev/zero | gzip -c > "$TMP/bomb.gz"
post /push.v1.PusherService/Push "$TMP/junk" application/proto > "$TMP/b1"
post /push.v1.PusherService/Push "$TMP/cut.pb" application/proto > "$TMP/b2"
post /v1development/profiles "$TMP/junk" application/x-protobuf > "$TMP/b3"
post /push.v1.PusherService/Push "$TMP/big" application/proto > "$TMP/b4"
post /v1development/profiles "$TMP/bomb.gz" application/x-protobuf gzip > "$TMP/b5"
post /push.v1.PusherService/Push "$TMP/push.pb" application/json > "$TMP/b6"
post /v1development/profiles "$TMP/cut.pb" application/x-protobuf gzip > "$TMP/b7"
post /nowhere "$TMP/push.pb" application/proto > "$TMP/b8"
if grep -q '^400 .*not a PushRequest' "$TMP/b1" && grep -q '^400 ' "$TMP/b2" &&
   grep -q '^400 .*not an OTLP profiles request' "$TMP/b3" &&
   grep -q '^413 .*--max-body' "$TMP/b4" && grep -q '^413 .*--max-profile' "$TMP/b5" &&
   grep -q '^415 .*application/proto' "$TMP/b6" && grep -q '^400 .*gzip' "$TMP/b7" &&
   grep -q '^404 ' "$TMP/b8"; then
	pass "junk, a cut body, too big, a gzip bomb, JSON, a bad gzip, a wrong path: 400/413/415/404 with the reason"
else
	fail "bad requests: 400/413/415/404 with the reason"
	cat "$TMP"/b[1-8] | cut -c1-150 | sed 's/^/  /'
fi
post /push.v1.PusherService/Push "$TMP/push.pb" application/proto > "$TMP/good"
ref=$(smetric 'sfprof_symbolize_requests_total{kind="any",result="refused"}')
if grep -q '^200 ' "$TMP/good" && [ "$(curl -s "$SURL/healthz")" = ok ] && [ "$ref" = 8 ]; then
	pass "after them: /healthz ok, a good push named (200), the 8 refusals counted"
else
	fail "after the bad requests the service goes on ($ref refusals counted)"
	cat "$TMP/good" | sed 's/^/  /'
fi
# SIGHUP: every table let go, the next request loads again
l0=$(smetric sfprof_symbolize_table_loads_total)
kill -HUP "$SVC_PID"
swait sfprof_symbolize_table_flushes_total 1
post /push.v1.PusherService/Push "$TMP/push.pb" application/proto > "$TMP/good2"
l1=$(smetric sfprof_symbolize_table_loads_total)
if grep -q '^200 ' "$TMP/good2" && [ "$l1" = $((l0 + nids)) ] && kill -0 "$SVC_PID"; then
	pass "SIGHUP: the tables let go ($l0 loads, then $l1), the service goes on"
else
	fail "SIGHUP: the tables let go and loaded again ($l0, then $l1)"
fi
if svc_stop && [ "$src" = 0 ]; then
	pass "after all that, SIGTERM: exit 0"
else
	fail "after all that, SIGTERM: exit 0 (rc $src)"
	tail -5 "$TMP/svc.err" | sed 's/^/  /'
fi

# --- a table budget smaller than one table: evicted once unused -------------
svc_start --otlp "http://127.0.0.1:$BPORT" --debug-dir "$TMP/dbg" --memory 1K
post /push.v1.PusherService/Push "$TMP/push.pb" application/proto > "$TMP/m1"
post /push.v1.PusherService/Push "$TMP/push.pb" application/proto > "$TMP/m2"
ev=$(smetric sfprof_symbolize_table_evictions_total)
tb=$(smetric sfprof_symbolize_tables_bytes)
ld=$(smetric sfprof_symbolize_table_loads_total)
if grep -q '^200 .*, 0 in files not found' "$TMP/m1" && grep -q '^200 .*, 0 in files not found' "$TMP/m2" &&
   [ "$ev" = $((2 * nids)) ] && [ "$tb" = 0 ] && [ "$ld" = $((2 * nids)) ]; then
	pass "--memory 1K: each of the $nids tables evicted after each request ($ev evictions), 0 bytes kept, names still found"
else
	fail "--memory 1K: tables evicted after use ($ev evictions, $tb bytes kept, $ld loads, $nids build-ids)"
	cat "$TMP/m1" "$TMP/m2" | sed 's/^/  /'
fi
svc_stop
stop_server "backend4"
