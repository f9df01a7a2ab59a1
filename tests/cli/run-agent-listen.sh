#!/bin/sh
# The agent's listener cannot be locked out, and the push sinks refuse
# what can never work (issue 38, points 17 and 18).  Real sockets on
# 127.0.0.1 (listen-clients.py); every wait is bounded; nothing is timed
# but those bounds.
#  - sink URLs that can never work (port 99999, no host, an unclosed
#    IPv6 bracket, a space in the path) are refused at start, exit 2, by
#    `sfprof push` and `sfprof agent`, with what is wrong and where;
#  - the URL's query goes after the API's path, for Pyroscope (push and
#    /ingest) and OTLP, pushed and from the agent's windows;
#  - a gzip of random bytes is no pprof: not sent (nothing reaches the
#    backend), counted failed, said, by every sink;
#  - 100 idle sockets held: /healthz answers; they are closed after
#    --listen-timeout; so is a slowloris of 100 sockets trickling headers,
#    /healthz answering meanwhile;
#  - a pull longer than --listen-timeout is still answered;
#  - a pull whose client leaves ends (pulls_open back to 0, counted);
#  - 200 concurrent pulls: --max-pulls wait, the rest get a 503 (none
#    reset), /healthz and /metrics answer meanwhile;
#  - past --listen-connections, connections are refused, counted, and
#    said once a minute through sfprof's log, never a raw library line.
# Needs python3 and curl; root for the agent's system-wide sampling.
# checks: 21
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENTS=$HERE/listen-clients.py
. "$HERE/agent-subr.sh"

if ! command -v python3 > /dev/null || ! command -v curl > /dev/null; then
	for i in $(seq 21); do skip "agent listen $i" "python3 or curl missing (make deps)"; done
	exit 0
fi

# --- inputs: a pprof (sfprof export) and a gzip of random bytes ----------
sfp export --format pprof -i "$SFP_TEST_DATA/perf/fp.data" -o "$TMP/good.pb.gz"
head -c 4000 /dev/urandom | gzip > "$TMP/random.pb.gz"
# a real pprof cut short: its wire format ends inside a field
gunzip -c "$TMP/good.pb.gz" > "$TMP/good.pb"
head -c $(($(wc -c < "$TMP/good.pb") / 2)) "$TMP/good.pb" | gzip > "$TMP/cut.pb.gz"

# --- 18: URLs that can never work ----------------------------------------
# each by push (both HTTP sinks) and by the agent (both), exit 2 within
# 20 s (not retried), with the reason on stderr
bad_url() {
	_name=$1 _url=$2 _why=$3 _ok=1
	for _s in --pyroscope --otlp; do
		timeout 20 "$SFPROF" push $_s "$_url" "$TMP/good.pb.gz" \
			> "$TMP/bad.out" 2>&1
		_rc=$?
		[ $_rc -eq 2 ] && grep -q "$_why" "$TMP/bad.out" ||
			{ _ok=0; echo "  push $_s '$_url': exit $_rc"; sed 's/^/    /' "$TMP/bad.out" | head -3; }
		timeout 20 "$SFPROF" agent -q $_s "$_url" > "$TMP/bad.out" 2>&1
		_rc=$?
		[ $_rc -eq 2 ] && grep -q "$_why" "$TMP/bad.out" ||
			{ _ok=0; echo "  agent $_s '$_url': exit $_rc"; sed 's/^/    /' "$TMP/bad.out" | head -3; }
	done
	[ $_ok = 1 ] && pass "sink URL $_name: refused at start, exit 2, '$_why' (push and agent, both sinks)" ||
		fail "sink URL $_name: refused at start, exit 2, '$_why'"
}
bad_url "port 99999" "http://127.0.0.1:99999" "offset 17: port 99999 is not in 1..65535"
bad_url "without a host" "http://" "offset 7: no host"
bad_url "unclosed IPv6 bracket" "http://[::1" "that no ']' closes"
bad_url "with a space in the path" "http://127.0.0.1:4040/a b" "offset 23: a space in the path"

# --- 18: the query after the API's path ----------------------------------
rm -f "$TMP/rec.port"
python3 "$CLIENTS" recorder "$TMP/rec.port" "$TMP/rec.log" 2> "$TMP/rec.err" &
SRV_PID=$!
i=0
while [ ! -s "$TMP/rec.port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
RPORT=$(cat "$TMP/rec.port" 2>/dev/null)
RURL=http://127.0.0.1:$RPORT
query_check() {
	_name=$1 _want=$2
	shift 2
	: > "$TMP/rec.log"
	sfp push "$@" "$TMP/good.pb.gz" > "$TMP/q.out" 2>&1
	if [ "$(cat "$TMP/rec.log")" = "POST $_want" ] &&
	   grep -q "delivered=1 " "$TMP/q.out"; then
		pass "push $_name: POST $_want"
	else
		fail "push $_name: POST $_want"
		sed 's/^/  got: /' "$TMP/rec.log"
	fi
}
query_check "--pyroscope BASE/?x=1" "/base/push.v1.PusherService/Push?x=1&y=a%20b" \
	--pyroscope "$RURL/base/?x=1&y=a%20b"
query_check "--pyroscope-api ingest" \
	"/base/ingest?x=1&name=sfprof%7B%7D&from=1&until=2&format=pprof&spyName=sfprof" \
	--pyroscope "$RURL/base?x=1" --pyroscope-api ingest --from 1000000000 --until 2000000000
query_check "--otlp BASE?x=1" "/v1development/profiles?x=1" --otlp "$RURL?x=1"
query_check "--otlp with the full path" "/p/v1development/profiles?x=1" \
	--otlp "$RURL/p/v1development/profiles/?x=1"

# --- 18: what is no pprof is not sent ------------------------------------
# every sink: exit 1, failed=1, delivered=0, the reason with its offset,
# nothing reaching the backend (nor the directory)
ok=1
for f in random cut; do
	for s in "--pyroscope $RURL" "--pyroscope $RURL --pyroscope-api ingest" \
		 "--otlp $RURL" "--output-dir $TMP/files-$f"; do
		: > "$TMP/rec.log"
		# shellcheck disable=SC2086
		sfp -e 1 push $s "$TMP/$f.pb.gz" > "$TMP/bad.out" 2>&1
		if ! grep -q "delivered=0 dropped=0 failed=1 " "$TMP/bad.out" ||
		   ! grep -q "window 0 is not a pprof Profile (offset [0-9]*: " "$TMP/bad.out" ||
		   ! grep -q "push: .*$f.pb.gz: not sent: not a pprof Profile" "$TMP/bad.out" ||
		   [ -s "$TMP/rec.log" ] ||
		   [ -n "$(ls "$TMP/files-$f" 2>/dev/null)" ]; then
			ok=0
			echo "  push $s $f.pb.gz:"
			sed 's/^/    /' "$TMP/bad.out" "$TMP/rec.log" | head -6
		fi
	done
done
[ $ok = 1 ] && pass "push of random bytes and of a cut pprof: not sent, failed=1, the offset said (4 sinks)" ||
	fail "push of random bytes and of a cut pprof: not sent, failed=1, the offset said (4 sinks)"

if [ "$(id -u)" != 0 ]; then
	for i in $(seq 12); do skip "agent listen $i" "needs root for system-wide sampling"; done
	exit 0
fi

# --- 18: the agent's windows, to a URL with a query ----------------------
: > "$TMP/rec.log"
# (one busy process, addresses only: a window a second, made quickly)
$PDEATH sh -c 'while :; do :; done' &
WPID=$!
agent_start --call-graph fp --interval 1 --no-symbolize --pid "$WPID" \
	--pyroscope "$RURL/base/?x=1"
i=0
while [ $i -lt 300 ] && ! grep -q . "$TMP/rec.log"; do sleep 0.1; i=$((i + 1)); done
if [ -n "$AGENT_PID" ]; then kill -INT "$AGENT_PID"; agent_end 20; fi
kill -9 "$WPID"
wait "$WPID" 2>/dev/null
WPID=
if [ -s "$TMP/rec.log" ] &&
   [ -z "$(grep -v '^POST /base/push.v1.PusherService/Push?x=1$' "$TMP/rec.log")" ] &&
   [ "$rc" = 0 ]; then
	pass "agent --pyroscope BASE/?x=1: $(wc -l < "$TMP/rec.log") windows to /base/push.v1.PusherService/Push?x=1"
else
	fail "agent --pyroscope BASE/?x=1: windows to /base/push.v1.PusherService/Push?x=1 (exit ${rc:-?})"
	sed 's/^/  got: /' "$TMP/rec.log" | head -3
fi
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=

# --- 17: the listener at its defaults, idle sockets held -----------------
# (a --listen-timeout longer than the check, so that they stay)
agent_start --call-graph fp --listen-timeout 60
if [ -z "$APORT" ]; then
	for i in $(seq 11); do fail "agent listen: the agent did not start"; done
	sed 's/^/  /' "$TMP/agent.err" | head -5
	exit 0
fi
python3 "$CLIENTS" idle "$APORT" 100 0 > "$TMP/idle.out" 2>&1
grep -q "^healthz 10/10 with 100 idle sockets held" "$TMP/idle.out" &&
	pass "listener: /healthz answers 10 of 10 while 100 idle sockets are held" ||
	{ fail "listener: /healthz answers while 100 idle sockets are held"; sed 's/^/  /' "$TMP/idle.out"; }

# 200 pulls at once: 32 (--max-pulls) wait, 168 get a 503 at once, none
# is reset; /healthz and /metrics answer; then their clients leave and
# every pull ends
python3 "$CLIENTS" pulls "$APORT" 200 168 600 > "$TMP/pulls.out" 2>&1
grep -q "^answers: 168 503, 0 other, 0 reset, 32 waiting" "$TMP/pulls.out" &&
grep -q "^healthz 10/10 while the pulls wait" "$TMP/pulls.out" &&
grep -q "^metrics: pulls_waiting=32.0 pulls_refused=168.0" "$TMP/pulls.out" &&
	pass "listener: 200 pulls at once: 32 wait, 168 get a 503, none reset; /healthz and /metrics answer" ||
	{ fail "listener: 200 pulls at once: 32 wait, 168 get a 503, none reset; /healthz and /metrics answer"; sed 's/^/  /' "$TMP/pulls.out"; }
grep -q "^after closing them: pulls_open=0.0 pulls_waiting=0.0 abandoned=32.0" "$TMP/pulls.out" &&
	pass "listener: the 32 pulls whose clients left end (pulls_open 0, 32 abandoned)" ||
	{ fail "listener: the 32 pulls whose clients left end"; sed 's/^/  /' "$TMP/pulls.out"; }

# one pull of 600 s whose client leaves once it is open
python3 "$CLIENTS" abandon "$APORT" 600 > "$TMP/abandon.out" 2>&1
grep -q "^pulls_open=1.0 before" "$TMP/abandon.out" &&
grep -q "^pulls_open=0.0 abandoned=33.0 after it left" "$TMP/abandon.out" &&
	pass "listener: a 600 s pull whose client leaves ends at once (counted)" ||
	{ fail "listener: a 600 s pull whose client leaves ends at once"; sed 's/^/  /' "$TMP/abandon.out"; }
kill -INT "$AGENT_PID"
agent_end 20 && [ "$rc" = 0 ] &&
	pass "listener: the agent ends (exit 0, no sanitizer report)" ||
	{ fail "listener: the agent ends (exit ${rc:-?})"; grep -A3 -E 'runtime error:|Sanitizer' "$TMP/agent.err" | head -8; }

# --- 17: --listen-timeout 3: idle sockets and a slowloris closed ---------
agent_start --call-graph fp --listen-timeout 3
python3 "$CLIENTS" idle "$APORT" 100 60 > "$TMP/idle.out" 2>&1
grep -q "^closed 100/100 by the agent" "$TMP/idle.out" &&
	pass "listener: 100 idle sockets closed after --listen-timeout ($(sed -n 's/^closed.* in //p' "$TMP/idle.out"))" ||
	{ fail "listener: 100 idle sockets closed after --listen-timeout"; sed 's/^/  /' "$TMP/idle.out"; }
python3 "$CLIENTS" slowloris "$APORT" 100 60 > "$TMP/slow.out" 2>&1
grep -q "^healthz 10/10 during the slowloris" "$TMP/slow.out" &&
grep -q "^closed 100/100 by the agent" "$TMP/slow.out" &&
	pass "listener: a slowloris of 100 sockets closed after --listen-timeout ($(sed -n 's/^closed.* in //p' "$TMP/slow.out")), /healthz answering" ||
	{ fail "listener: a slowloris of 100 sockets closed, /healthz answering"; sed 's/^/  /' "$TMP/slow.out"; }
# a pull longer than the timeout: libmicrohttpd's inactivity timeout must
# not end it when its answer is ready
code=$(curl -s -m 60 -o "$TMP/pull.gz" -w '%{http_code}' \
	"http://127.0.0.1:$APORT/debug/pprof/profile?seconds=5")
if [ "$code" = 200 ] && gunzip -c "$TMP/pull.gz" > "$TMP/pull.pb" 2>/dev/null &&
   [ -s "$TMP/pull.pb" ]; then
	pass "listener: a 5 s pull is answered (200, gzip) past a 3 s --listen-timeout"
else
	fail "listener: a 5 s pull is answered past a 3 s --listen-timeout (HTTP $code)"
fi
t=$(metric sfprof_agent_listen_timeouts_total)
[ "${t%.*}" -ge 200 ] 2>/dev/null &&
	pass "listener: the 200 connections timed out are counted ($t)" ||
	fail "listener: the 200 connections timed out are counted ('$t')"
kill -INT "$AGENT_PID"
agent_end 20

# --- 17: --listen-connections 8: refusals counted, said once -------------
# (the 8 held stay open longer than the client's 3 s look: a 10 s timeout)
agent_start --call-graph fp --listen-timeout 10 --listen-connections 8
python3 "$CLIENTS" refuse "$APORT" 20 > "$TMP/refuse.out" 2>&1
# the client has closed its sockets: once the agent has let them go (the
# /metrics connection is the only one), a second burst
i=0
while [ $i -lt 300 ] && [ "$(metric sfprof_agent_listen_connections)" != 1 ]; do
	sleep 0.1
	i=$((i + 1))
done
python3 "$CLIENTS" refuse "$APORT" 20 >> "$TMP/refuse.out" 2>&1
# the held ones time out; then /metrics can be read
i=0
while [ $i -lt 300 ] && [ -z "$(metric sfprof_agent_listen_refused_total)" ]; do
	sleep 0.1
	i=$((i + 1))
done
refused=$(metric sfprof_agent_listen_refused_total)
lines=$(grep -c "refused .* connection" "$TMP/agent.err")
if [ "$(grep -c '^closed at once 12/20' "$TMP/refuse.out")" = 2 ] &&
   [ "$refused" = 24 ]; then
	pass "listener: past 8 connections, 24 of 40 refused at once, counted in /metrics"
else
	fail "listener: past 8 connections, 24 of 40 refused at once, counted in /metrics ('$refused')"
	sed 's/^/  /' "$TMP/refuse.out"
fi
kill -INT "$AGENT_PID"
agent_end 20
if [ "$lines" = 1 ] && ! grep -v '^sfprof' "$TMP/agent.err" | grep -q .; then
	pass "listener: 24 refusals said in 1 line, every line through sfprof's log"
else
	fail "listener: 24 refusals said in 1 line ($lines), every line through sfprof's log"
	sed 's/^/  /' "$TMP/agent.err" | head -8
fi
