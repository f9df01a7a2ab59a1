#!/bin/sh
# The agent's delivery sinks, driven by `sfprof push` with pprof files made
# by `sfprof export --format pprof`, against a backend written here
# (push-server.py: Pyroscope's Connect push and legacy /ingest, OTLP/HTTP
# profiles) and read back with the real decoders: protoc with the upstream
# pprof and OpenTelemetry schemas (../shared/testdata/proto), and
# `go tool pprof`.  Then the faults: backend down at start, killed and
# restarted mid-run, 503 then 429, a 400, answering after the timeout,
# accepting and never reading.  Every outcome is counted (what the server
# logged, what the sink counted), never timed, except that close() must
# end near its deadline when the backend hangs.
# checks: 34
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
SERVER=$HERE/push-server.py
CHECK=$HERE/push-check.py

if ! command -v protoc > /dev/null || ! command -v python3 > /dev/null ||
   ! command -v go > /dev/null || [ ! -f "$PROTO/pprof/profile.proto" ]; then
	for i in $(seq 34); do skip "push check $i" "protoc, python3, go or $PROTO missing (make deps)"; done
	exit 0
fi

. "$HERE/push-subr.sh"
trap '[ -n "$SRV_PID" ] && kill $SRV_PID 2>/dev/null; rm -rf "$TMP"' EXIT

# --- inputs: pprof of two recordings, as the agent's windows would be -------
IN1=$TMP/in1.pb.gz IN2=$TMP/in2.pb.gz
sfp export --format pprof -i "$SFP_TEST_DATA/perf/fp.data" -o "$IN1" &&
sfp export --format pprof -i "$SFP_TEST_DATA/perf/dwarf.data" -o "$IN2" &&
decode_pprof "$IN1" "$TMP/in1.txt" && decode_pprof "$IN2" "$TMP/in2.txt"
if [ -s "$TMP/in1.txt" ] && [ -s "$TMP/in2.txt" ]; then
	pass "inputs: two pprof files exported and decoded by protoc"
else
	fail "inputs: two pprof files exported and decoded by protoc"
fi
python3 "$CHECK" totals-pprof "$TMP/in1.txt" > "$TMP/in1.totals"
python3 "$CHECK" stacks-pprof "$TMP/in1.txt" > "$TMP/in1.stacks"
python3 "$CHECK" stacks-pprof "$TMP/in2.txt" > "$TMP/in2.stacks"
go tool pprof -traces "$IN1" 2> /dev/null | grep -v '^File: ' > "$TMP/in1.traces"

sfp push --help > "$TMP/help"
$SFPROF agent --help > "$TMP/agent-help"
# an option is listed where a help line starts with it (the synopsis and
# other options' help name them too); each sink of src/agent/sinks.def in
# push's help and in agent's, as both take it
helps() { grep -Eq -- "^ +(-[a-z], )?$1( |=|\$)" "$2"; }
ok=1
for o in --pyroscope --pyroscope-api --otlp --output-dir --max-disk --tenant \
	 --auth-file --label --from --until --repeat --queue-bytes --timeout --deadline; do
	helps "$o" "$TMP/help" || { ok=0; echo "  --help lacks $o"; }
done
sinks=$(sed -n 's/^AGENT_SINK([A-Z0-9_]*, "\([a-z0-9-]*\)".*/\1/p' "$ROOT/src/agent/sinks.def")
[ -n "$sinks" ] || { ok=0; echo "  no AGENT_SINK() in src/agent/sinks.def"; }
for o in $sinks; do
	helps "--$o" "$TMP/help" || { ok=0; echo "  push --help lacks sink --$o"; }
	helps "--$o" "$TMP/agent-help" || { ok=0; echo "  agent --help lacks sink --$o"; }
done
[ $ok = 1 ] && pass "push --help lists every option (and agent --help every sink)" ||
	fail "push --help lists every option (and agent --help every sink)"
check_rc "push without a sink is a usage error" 2 $SFPROF push "$IN1"
check_rc "push with two sinks is a usage error" 2 $SFPROF push --otlp http://127.0.0.1:1 --output-dir "$TMP/x" "$IN1"
check_rc "push of a missing file is an I/O error" 2 $SFPROF push --output-dir "$TMP/x" "$TMP/nonexistent.pb.gz"
head -c 100 "$IN2" > "$TMP/cut.pb.gz"
check_rc "push of a truncated gzip file is invalid input" 1 $SFPROF push --output-dir "$TMP/x" "$TMP/cut.pb.gz"

FROM=1764590400123456789 UNTIL=1764590410123456789
printf 'alice:s3cret\n' > "$TMP/basic"
printf 'tok-123\n' > "$TMP/bearer"

# --- Pyroscope: Connect push --------------------------------------------------
SRV_DIR=$TMP/pyro
start_server "$SRV_DIR"
sfp push --pyroscope "http://127.0.0.1:$PORT/" --pyroscope-tenant team-a --auth-file "$TMP/basic" \
	-l pid=4242 -l service_name=perf-work -l host=h1 -l container_id=c0ffee \
	--from $FROM --until $UNTIL --repeat 2 "$IN1" "$IN2" > "$TMP/pyro.out" 2> "$TMP/pyro.err"
stop_server "pyroscope push"
if [ "$(cat "$TMP/pyro.out")" = "delivered=4 dropped=0 failed=0 retries=0 unsent=0" ] &&
   [ "$(count_log "$SRV_DIR" "$PUSH_ONE")" = 4 ] && [ "$(count_log "$SRV_DIR" .)" = 4 ]; then
	pass "pyroscope: 4 windows, 4 Connect pushes answered 200, each of 1 series of 1 sample"
else
	fail "pyroscope: 4 windows, 4 Connect pushes answered 200, each of 1 series of 1 sample"
	sed 's/^/  /' "$TMP/pyro.out" "$TMP/pyro.err" "$SRV_DIR/requests.log" | head -10
fi
ok=1
for h in "$SRV_DIR"/req-*.headers; do
	grep -qx 'content-type: application/proto' "$h" &&
	grep -qx 'connect-protocol-version: 1' "$h" &&
	grep -qx 'x-scope-orgid: team-a' "$h" &&
	grep -qx "authorization: Basic $(printf 'alice:s3cret' | base64)" "$h" || ok=0
done
[ $ok = 1 ] && pass "pyroscope: application/proto, Connect-Protocol-Version, X-Scope-OrgID, basic auth from the file" ||
	fail "pyroscope: application/proto, Connect-Protocol-Version, X-Scope-OrgID, basic auth from the file"
printf '__name__=process_cpu\nservice_name=perf-work\npid=4242\nhost=h1\ncontainer_id=c0ffee\n' > "$TMP/labels.exp"
# (every series' labels: push-server.py keeps them apart, REQ.sJ.labels)
ok=1 n=0
for l in "$SRV_DIR"/req-*.labels; do
	[ -f "$l" ] || continue
	n=$((n + 1))
	cmp -s "$l" "$TMP/labels.exp" || ok=0
done
[ $ok = 1 ] && [ $n = 4 ] && pass "pyroscope: series labels __name__=process_cpu, service_name first, pid, host, container_id" ||
	{ fail "pyroscope: series labels ($n series)"; sed 's/^/  /' "$SRV_DIR/req-000.s0.labels"; }
# every id of every line (a line with two samples has two)
ids=$(grep -o ' id=[^ ]*' "$SRV_DIR/requests.log" | sed 's/^ id=//')
if [ "$(echo "$ids" | grep -c .)" = 4 ] &&
   [ "$(echo "$ids" | sort -u | grep -c -E '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')" = 4 ]; then
	pass "pyroscope: every sample has its own UUID (version 4)"
else
	fail "pyroscope: every sample has its own UUID: $ids"
fi
# Each rawProfile (of every series and sample): protoc decodes it; it is
# the window's pprof (time range, totals and stacks as the input's); go
# tool pprof reads it.
ok=1 okgo=1 n=0
for r in "$SRV_DIR"/req-*.pb.gz; do
	decode_pprof "$r" "$r.txt" || { ok=0; continue; }
	n=$((n + 1))
	# Requests are in submission order: in1, in1, in2, in2.
	case $(basename "$r") in req-00[01]*) want=in1 ;; *) want=in2 ;; esac
	cmp -s "$r.txt" "$TMP/$want.txt" || ok=0
	python3 "$CHECK" stacks-pprof "$r.txt" | cmp -s - "$TMP/$want.stacks" || ok=0
	if [ $want = in1 ]; then
		go tool pprof -traces "$r" 2> /dev/null | grep -v '^File: ' > "$r.traces" &&
			[ -s "$r.traces" ] && cmp -s "$r.traces" "$TMP/in1.traces" || okgo=0
	fi
done
[ $ok = 1 ] && [ $n = 4 ] && pass "pyroscope: 4 rawProfiles decode with protoc, equal to the windows (time_nanos, duration, totals, stacks)" ||
	fail "pyroscope: 4 rawProfiles decode with protoc, equal to the windows ($n decoded)"
[ $okgo = 1 ] && pass "pyroscope: go tool pprof -traces reads the rawProfiles as the input" ||
	fail "pyroscope: go tool pprof -traces reads the rawProfiles as the input"
if python3 "$CHECK" totals-pprof "$SRV_DIR/req-000.s0-0.pb.gz.txt" | cmp -s - "$TMP/in1.totals" &&
   grep -q 'samples/count [1-9]' "$TMP/in1.totals"; then
	pass "pyroscope: totals of the pushed profile equal the input's ($(tr '\n' ' ' < "$TMP/in1.totals"))"
else
	fail "pyroscope: totals of the pushed profile equal the input's"
fi
if ! grep -q 's3cret\|tok-123' "$TMP/pyro.err" "$TMP/pyro.out"; then
	pass "pyroscope: the credentials appear in no output"
else
	fail "pyroscope: the credentials appear in no output"
fi

# bearer token from the file
SRV_DIR=$TMP/bearer-srv
start_server "$SRV_DIR"
sfp push --pyroscope "http://127.0.0.1:$PORT" --auth-file "$TMP/bearer" "$IN1" > "$TMP/bearer.out" 2>&1
stop_server "pyroscope bearer"
if grep -qx 'authorization: Bearer tok-123' "$SRV_DIR/req-000.headers" &&
   ! grep -q 'x-scope-orgid' "$SRV_DIR/req-000.headers"; then
	pass "pyroscope: a token file is sent as a bearer token; no tenant, no X-Scope-OrgID"
else
	fail "pyroscope: a token file is sent as a bearer token"
fi

# --- Pyroscope: legacy /ingest -----------------------------------------------
SRV_DIR=$TMP/ingest
start_server "$SRV_DIR"
sfp push --pyroscope "http://127.0.0.1:$PORT" --pyroscope-api ingest --tenant team-b \
	-l service_name=perf-work -l pid=4242 -l host=h1 \
	--from $FROM --until $UNTIL "$IN1" > "$TMP/ingest.out" 2>&1
stop_server "pyroscope ingest"
printf 'format=pprof\nfrom=1764590400\nname=perf-work{pid=4242,host=h1}\nspyName=sfprof\nuntil=1764590411\n' > "$TMP/ingest.exp"
if [ "$(count_log "$SRV_DIR" '^0 /ingest 200')" = 1 ] &&
   cmp -s "$SRV_DIR/req-000.query" "$TMP/ingest.exp" &&
   grep -qx 'x-scope-orgid: team-b' "$SRV_DIR/req-000.headers"; then
	pass "ingest: name=SERVICE{labels}, from/until cover the window in seconds, format=pprof, tenant"
else
	fail "ingest: query"
	diff "$TMP/ingest.exp" "$SRV_DIR/req-000.query" | sed 's/^/  /' | head -8
fi
if decode_pprof "$SRV_DIR/req-000.s0-0.pb.gz" "$TMP/ingest.txt" && cmp -s "$TMP/ingest.txt" "$TMP/in1.txt"; then
	pass "ingest: the body is the window's pprof (gzip), decoded by protoc"
else
	fail "ingest: the body is the window's pprof"
fi

# --- OTLP ------------------------------------------------------------------------
SRV_DIR=$TMP/otlp
start_server "$SRV_DIR"
sfp push --otlp "http://127.0.0.1:$PORT" -l service_name=perf-work -l pid=4242 \
	-l host=h1 -l container_id=c0ffee --from $FROM --until $UNTIL "$IN1" "$IN2" \
	> "$TMP/otlp.out" 2>&1
stop_server "otlp"
if [ "$(count_log "$SRV_DIR" '^[01] /v1development/profiles 200')" = 2 ] &&
   grep -qx 'content-encoding: gzip' "$SRV_DIR/req-000.headers" &&
   grep -qx 'content-type: application/x-protobuf' "$SRV_DIR/req-000.headers"; then
	pass "otlp: 2 windows posted to /v1development/profiles, application/x-protobuf, gzip"
else
	fail "otlp: 2 windows posted to /v1development/profiles"
	sed 's/^/  /' "$TMP/otlp.out" "$SRV_DIR/requests.log" | head
fi
ok=1
for i in 1 2; do
	b=$SRV_DIR/req-00$((i - 1)).otlp
	decode_otlp "$b" "$b.txt" && [ -s "$b.txt" ] && [ ! -s "$b.txt.err" ] || ok=0
done
[ $ok = 1 ] && pass "otlp: bodies decode as ExportProfilesServiceRequest with the upstream protos" ||
	{ fail "otlp: bodies decode as ExportProfilesServiceRequest"; head -3 "$SRV_DIR/req-000.otlp.txt.err" | sed 's/^/  /'; }
ok=1
for i in 1 2; do
	b=$SRV_DIR/req-00$((i - 1)).otlp.txt
	python3 "$CHECK" stacks-otlp "$b" > "$b.stacks" 2>&1 &&
		[ -s "$b.stacks" ] && cmp -s "$b.stacks" "$TMP/in$i.stacks" || ok=0
done
[ $ok = 1 ] && pass "otlp: stacks and values per sample type equal the pprof's ($(wc -l < "$TMP/in1.stacks") + $(wc -l < "$TMP/in2.stacks") stacks)" ||
	{ fail "otlp: stacks equal the pprof's"; diff "$TMP/in1.stacks" "$SRV_DIR/req-000.otlp.txt.stacks" | head -6 | sed 's/^/  /'; }
python3 "$CHECK" labels-pprof "$TMP/in1.txt" > "$TMP/lab.exp"
python3 "$CHECK" labels-otlp "$SRV_DIR/req-000.otlp.txt" > "$TMP/lab.got" 2> "$TMP/lab.err"
nattr=$(sed -n 's/^attributes=//p' "$TMP/lab.err")
ndist=$(tr ',' '\n' < "$TMP/lab.exp" | sort -u | grep -c .)
nbid=$(python3 "$CHECK" buildids-pprof "$TMP/in1.txt" | grep -c .)
if [ -s "$TMP/lab.exp" ] && cmp -s "$TMP/lab.exp" "$TMP/lab.got" &&
   [ "$nattr" = $((1 + nbid + ndist)) ]; then
	pass "otlp: sample attributes equal the pprof's sample labels, one table entry per distinct label ($ndist)"
else
	fail "otlp: sample attributes equal the pprof's sample labels ($nattr attributes, $ndist distinct labels, $nbid build-ids)"
	diff "$TMP/lab.exp" "$TMP/lab.got" | head -5 | sed 's/^/  /'
fi
python3 "$CHECK" resource-otlp "$SRV_DIR/req-000.otlp.txt" | sort > "$TMP/res.got"
main_exe=$(python3 "$CHECK" buildids-pprof "$TMP/in1.txt" | head -1 | sed 's|^.*/||; s| .*||')
printf 'container.id=c0ffee\nhost.name=h1\nprocess.executable.name=%s\nprocess.pid=int:4242\nservice.name=perf-work\n' "$main_exe" > "$TMP/res.exp"
if cmp -s "$TMP/res.got" "$TMP/res.exp"; then
	pass "otlp: resource attributes service.name, host.name, process.pid (int), container.id, process.executable.name"
else
	fail "otlp: resource attributes"
	diff "$TMP/res.exp" "$TMP/res.got" | sed 's/^/  /'
fi
python3 "$CHECK" buildids-pprof "$TMP/in1.txt" > "$TMP/bid.exp"
python3 "$CHECK" buildids-otlp "$SRV_DIR/req-000.otlp.txt" > "$TMP/bid.got"
if [ -s "$TMP/bid.exp" ] && cmp -s "$TMP/bid.exp" "$TMP/bid.got"; then
	pass "otlp: mappings carry process.executable.build_id.gnu as the pprof's build-ids ($(wc -l < "$TMP/bid.exp"))"
else
	fail "otlp: mappings carry the build-ids"
	diff "$TMP/bid.exp" "$TMP/bid.got" | sed 's/^/  /' | head -5
fi
if [ "$(python3 "$CHECK" dict-otlp "$SRV_DIR/req-000.otlp.txt")" = ok ] &&
   [ "$(grep -c '^    profiles {' "$SRV_DIR/req-000.otlp.txt")" = "$(grep -c '^sample_type {' "$TMP/in1.txt")" ]; then
	pass "otlp: dictionary tables start with their zero entries; one Profile per pprof sample type"
else
	fail "otlp: dictionary zero entries / one Profile per sample type"
fi

# --- files --------------------------------------------------------------------------
# Five windows of in2, five seconds apart; max-disk holds two of them.
gz=$(gzip -c "$TMP/in2.txt.pb" | wc -c)
OUT=$TMP/files
i=0
while [ $i -lt 5 ]; do
	sfp push --output-dir "$OUT" --max-disk $((gz * 5 / 2)) -l service_name=perf-work \
		--from $((FROM + i * 5000000000)) --until $((UNTIL + i * 5000000000)) "$IN2" \
		> "$TMP/files.out" 2>&1 || break
	i=$((i + 1))
done
ls "$OUT" > "$TMP/files.ls"
if [ $i = 5 ] && [ "$(wc -l < "$TMP/files.ls")" = 2 ] &&
   head -1 "$TMP/files.ls" | grep -q '^profile-20251201T120015\.123456789-.*-perf-work\.pb\.gz$' &&
   tail -1 "$TMP/files.ls" | grep -q '^profile-20251201T120020\.123456789-.*-perf-work\.pb\.gz$'; then
	pass "files: 5 windows, max-disk for 2: the 2 newest are kept, named by UTC start time"
else
	fail "files: rotation"
	sed 's/^/  /' "$TMP/files.ls" "$TMP/files.out"
fi
ok=1
for f in "$OUT"/*; do
	decode_pprof "$f" "$f.txt" && cmp -s "$f.txt" "$TMP/in2.txt" &&
		go tool pprof -top "$f" > /dev/null 2>&1 || ok=0
	rm -f "$f.txt" "$f.txt.pb" "$f.txt.err"
done
[ $ok = 1 ] && pass "files: each file is the window's pprof (protoc) and go tool pprof reads it" ||
	fail "files: each file is the window's pprof"

# --- faults ----------------------------------------------------------------------------
COST1=$(( $(gunzip -c "$IN1" | wc -c) + 256 + $(printf 'service_name%s' sfprof | wc -c) ))

# Backend down at start; 5 windows into a queue with room for 3: exactly
# 2 dropped (the oldest), the 3 others delivered once it is up.
SRV_DIR=$TMP/down
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' > "$TMP/down.port"
DPORT=$(cat "$TMP/down.port")
"$SFPROF" push --pyroscope "http://127.0.0.1:$DPORT" --queue-bytes $((3 * COST1)) \
	--repeat 5 --deadline 120000 "$IN1" > "$TMP/down.out" 2> "$TMP/down.err" &
PUSH_PID=$!
# Wait until all are queued and the first connect was refused.
n=0
while ! { grep -q 'submitted=5' "$TMP/down.err" && grep -q 'retrying with backoff' "$TMP/down.err"; } &&
      kill -0 $PUSH_PID 2>/dev/null && [ $n -lt 1200 ]; do
	sleep 0.1
	n=$((n + 1))
done
start_server "$SRV_DIR" --port "$DPORT"
wait $PUSH_PID
rc=$?
stop_server "down at start"
if [ $rc = 1 ] && grep -q "^delivered=3 dropped=2 failed=0 retries=[1-9][0-9]* unsent=0$" "$TMP/down.out" &&
   [ "$(count_log "$SRV_DIR" "$PUSH_ONE")" = 3 ] &&
   [ "$(count_log "$SRV_DIR" ' 200 ')" = 3 ] && grep -q 'Connection refused\|connect' "$TMP/down.err" &&
   grep -q 'queue full' "$TMP/down.err"; then
	pass "fault: backend down at start: retried, 3 queued windows delivered, exactly 2 dropped and logged ($(cat "$TMP/down.out"))"
else
	fail "fault: backend down at start (exit $rc)"
	sed 's/^/  /' "$TMP/down.out" "$TMP/down.err" | head -8
fi
if [ "$(grep -c 'queue full' "$TMP/down.err")" = 1 ]; then
	pass "fault: the queue-full log line is said once (at most once a minute)"
else
	fail "fault: the queue-full log line is said once"
fi

# Killed and restarted mid-run: the server dies when the 3rd request
# arrives (connection dropped), is started again on its port; all 6
# windows arrive, each under its own id.
SRV_DIR=$TMP/restart
start_server "$SRV_DIR" --die-after 2
RPORT=$PORT
SRV1=$SRV_PID
"$SFPROF" push --pyroscope "http://127.0.0.1:$RPORT" --repeat 6 --deadline 120000 "$IN1" \
	> "$TMP/restart.out" 2> "$TMP/restart.err" &
PUSH_PID=$!
wait $SRV1
start_server "$SRV_DIR" --port "$RPORT"
wait $PUSH_PID
rc=$?
stop_server "restart"
ids=$(push_ids "$SRV_DIR" | sort -u | wc -l)
if [ $rc = 0 ] && grep -q '^delivered=6 dropped=0 failed=0 retries=[1-9][0-9]* unsent=0$' "$TMP/restart.out" &&
   grep -q '^2 /push.v1.PusherService/Push died' "$SRV_DIR/requests.log" && [ "$ids" = 6 ] &&
   [ "$(count_log "$SRV_DIR" ' 200 ')" = "$(count_log "$SRV_DIR" "$PUSH_ONE")" ]; then
	pass "fault: backend killed mid-run and restarted: all 6 windows delivered, none lost ($(cat "$TMP/restart.out"))"
else
	fail "fault: backend killed and restarted (exit $rc, $ids ids)"
	sed 's/^/  /' "$TMP/restart.out" "$SRV_DIR/requests.log" | head -10
fi

# 503, then 429, then 200: two retries, both windows delivered, 4 requests.
SRV_DIR=$TMP/busy
start_server "$SRV_DIR" --script 503,429
sfp push --otlp "http://127.0.0.1:$PORT" --repeat 2 "$IN1" > "$TMP/busy.out" 2> "$TMP/busy.err"
stop_server "503 429"
if [ "$(cat "$TMP/busy.out")" = "delivered=2 dropped=0 failed=0 retries=2 unsent=0" ] &&
   [ "$(awk '{ print $3 }' "$SRV_DIR/requests.log" | tr '\n' ' ')" = "503 429 200 200 " ] &&
   grep -q 'HTTP 503; retrying' "$TMP/busy.err"; then
	pass "fault: 503 then 429 are retried with backoff: 4 requests, 2 windows delivered"
else
	fail "fault: 503 then 429"
	sed 's/^/  /' "$TMP/busy.out" "$TMP/busy.err" "$SRV_DIR/requests.log" | head
fi

# 400: not retried, counted as failed, logged with the URL and status.
SRV_DIR=$TMP/bad
start_server "$SRV_DIR" --script 400
sfp -e 1 push --pyroscope "http://127.0.0.1:$PORT" "$IN1" > "$TMP/bad.out" 2> "$TMP/bad.err"
stop_server "400"
if [ "$(cat "$TMP/bad.out")" = "delivered=0 dropped=0 failed=1 retries=0 unsent=0" ] &&
   [ "$(wc -l < "$SRV_DIR/requests.log")" = 1 ] &&
   grep -q "POST http://127.0.0.1:$PORT/push.v1.PusherService/Push: HTTP 400" "$TMP/bad.err"; then
	pass "fault: a 400 is not retried, counted as failed, logged with URL and status"
else
	fail "fault: 400"
	sed 's/^/  /' "$TMP/bad.out" "$TMP/bad.err" | head
fi

# Answering after the timeout: the first answer comes 20 s late, the
# request's limit is 0.5 s: retried, delivered.
SRV_DIR=$TMP/slow
start_server "$SRV_DIR" --delay-first 20
sfp push --pyroscope "http://127.0.0.1:$PORT" --timeout 500 --repeat 2 "$IN1" > "$TMP/slow.out" 2> "$TMP/slow.err"
stop_server "slow"
ids=$(push_ids "$SRV_DIR" | sort -u | wc -l)
if grep -q '^delivered=2 dropped=0 failed=0 retries=[1-9][0-9]* unsent=0$' "$TMP/slow.out" &&
   grep -q 'Timeout\|timed out' "$TMP/slow.err" && [ "$ids" = 2 ] &&
   [ "$(count_log "$SRV_DIR" ' 200 ')" = "$(count_log "$SRV_DIR" "$PUSH_ONE")" ]; then
	pass "fault: an answer after the timeout: retried, both windows delivered ($(cat "$TMP/slow.out"))"
else
	fail "fault: answer after the timeout"
	sed 's/^/  /' "$TMP/slow.out" "$TMP/slow.err" | head
fi

# Accepting and never reading: 5 windows, room for 3 (2 dropped), a
# request limit of 60 s and a close deadline of 2 s: close ends at its
# deadline with 3 unsent.
SRV_DIR=$TMP/hole
start_server "$SRV_DIR" --blackhole
t0=$(date +%s%N)
sfp -e 1 push --otlp "http://127.0.0.1:$PORT" --timeout 60000 --deadline 2000 \
	--queue-bytes $((3 * COST1)) --repeat 5 "$IN1" > "$TMP/hole.out" 2> "$TMP/hole.err"
t1=$(date +%s%N)
stop_server "blackhole"
ms=$(( (t1 - t0) / 1000000 ))
if [ "$(cat "$TMP/hole.out")" = "delivered=0 dropped=2 failed=0 retries=0 unsent=3" ] &&
   grep -q '3 window(s) not delivered by the deadline' "$TMP/hole.err"; then
	pass "fault: a backend that never reads: exactly 2 dropped, 3 unsent at close"
else
	fail "fault: a backend that never reads"
	sed 's/^/  /' "$TMP/hole.out" "$TMP/hole.err" | head
fi
# Bound generous for two busy cores: far below the 60 s request limit.
if [ $ms -ge 2000 ] && [ $ms -lt 20000 ]; then
	pass "fault: close() ended at its 2 s deadline, not the 60 s request limit (${ms} ms)"
else
	fail "fault: close() ended at its deadline (${ms} ms)"
fi
