#!/bin/sh
# The agent's soak, two minutes of it (bench/agent-soak.sh is the 30-minute
# one): sfprof agent at its defaults (system-wide, 19 Hz, call-graph auto)
# pushing 5-second windows to a Pyroscope backend (push-server.py) that is
# killed (SIGKILL) and restarted every 20 seconds, while 20 short-lived
# programs a second start and end (agent-work, no frame pointers, 30 ms
# each) beside a busy one.  Counted, not timed:
#  - the agent runs throughout and SIGTERM ends it, exit 0;
#  - every window is accounted for: delivered, dropped (queue full),
#    failed or unsent, as its exit summary says, and what it says was
#    delivered is what the backends logged with 200;
#  - the processes it keeps state for do not grow with the programs
#    started (~2,000 of them); as positive controls, 200 alive together
#    raise that count, and a program started during the churn once a
#    pull of its pid has begun, gone before the pull ends, has its
#    samples in the pull, named;
#  - its resident size is printed every 5 s.  It is checked only by the
#    30-minute run (bench/agent-soak.sh: growth after the first 5 minutes
#    <= 5 %): over two minutes of a system-wide agent it still follows
#    whatever else starts on the machine (every new program's symbols),
#    which a test must not depend on.
# bench/agent-soak.sh runs this script for 30 minutes through SOAK_SECONDS,
# SOAK_LIFE (seconds a backend lives), SOAK_WARMUP (seconds before the RSS
# baseline), SOAK_RSS_PCT (growth allowed after it) and SOAK_AGENT_ARGS
# (options added to the agent's, e.g. --no-symbolize).
# Needs root (system-wide sampling), python3 and go (go tool pprof).
# checks: 5
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
SERVER=$HERE/push-server.py
NCHECKS=5
SECONDS_TOTAL=${SOAK_SECONDS:-120}
LIFE=${SOAK_LIFE:-20}
WARMUP=${SOAK_WARMUP:-60}
RSS_PCT=${SOAK_RSS_PCT:-}
LIVES=$((SECONDS_TOTAL / LIFE))
[ $LIVES -ge 1 ] || LIVES=1

if [ "$(id -u)" != 0 ]; then
	for i in $(seq $NCHECKS); do skip "agent soak $i" "needs root for system-wide sampling"; done
	exit 0
fi
if ! command -v python3 > /dev/null || ! command -v go > /dev/null; then
	for i in $(seq $NCHECKS); do skip "agent soak $i" "python3 or go missing (make deps)"; done
	exit 0
fi
. "$HERE/push-subr.sh"

WORK=$SFP_BUILD/tests/progs/agent-work
export PPROF_TMPDIR="$TMP" HOME="$TMP"
. "$HERE/agent-subr.sh"
SPAWN_PID=
spawn_cleanup() {
	[ -n "$SPAWN_PID" ] && kill -9 "$SPAWN_PID" 2>/dev/null
}
EXTRA_CLEANUP=spawn_cleanup

rss_kb() {	# VmRSS, then VmHWM (peak)
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' \
		"/proc/$AGENT_PID/status" 2>/dev/null
}

DPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$PDEATH "$WORK" $((SECONDS_TOTAL + 120)) > /dev/null 2>&1 &
WPID=$!
agent_start --interval 5 ${SOAK_AGENT_ARGS:-} --pyroscope "http://127.0.0.1:$DPORT"
if [ -z "$APORT" ]; then
	for i in $(seq $NCHECKS); do fail "agent soak: the agent did not start"; done
	sed 's/^/  /' "$TMP/agent.err" | head -10
	exit 0
fi
# the processes running at the start, once the first window has closed
i=0
while [ "$(metric sfprof_agent_windows_total)" = 0 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
procs0=$(metric sfprof_agent_processes)

# 20 short-lived programs a second (a new one every 50 ms, each its own
# process: exec, maps, tables, exit)
sh -c "while :; do '$WORK' 30ms > /dev/null & sleep 0.05; done" &
SPAWN_PID=$!

# The positive controls, during the churn: 200 processes alive together
# raise the count of processes kept; a program new to the agent (1 s of
# CPU time, about 19 samples at the default 19 Hz) pulled by its pid,
# in the background while the backends come and go.
proc_wave 200
short_pull 40 1000 &
SHORT_JOB=$!

# Backend lives of LIFE s, 3 s of them dead at the end (killed with
# SIGKILL); the agent's RSS every 5 s: "seconds-since-start kB peak-kB".
alive=1
: > "$TMP/rss"
t=0
for life in $(seq $LIVES); do
	start_server "$TMP/srv$life" --port "$DPORT"
	l=0
	while [ $l -lt $((LIFE - 3)) ]; do
		sleep 1
		l=$((l + 1))
		t=$((t + 1))
		kill -0 "$AGENT_PID" 2>/dev/null || alive=0
		[ $((t % 5)) = 0 ] && echo "$t $(rss_kb)" >> "$TMP/rss"
	done
	kill -9 "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=
	sleep 3
	t=$((t + 3))
done
start_server "$TMP/srv$((LIVES + 1))" --port "$DPORT"
wait "$SHORT_JOB"
kill -9 "$SPAWN_PID" 2>/dev/null
wait "$SPAWN_PID" 2>/dev/null
SPAWN_PID=
sleep 1
procs1=$(metric sfprof_agent_processes)
kill -TERM "$AGENT_PID"
agent_end 30
kill -9 "$SRV_PID" 2>/dev/null
SRV_PID=

if [ $alive = 1 ] && [ "$rc" = 0 ] && ! grep -qE 'runtime error:|Sanitizer' "$TMP/agent.err"; then
	pass "agent soak: ran $SECONDS_TOTAL s through $LIVES backend restarts and ~$((SECONDS_TOTAL * 20)) programs; SIGTERM ends it, exit 0"
else
	fail "agent soak: ran $SECONDS_TOTAL s through $LIVES backend restarts; SIGTERM ends it, exit 0"
	echo "  alive $alive, exit $rc"
	tail -8 "$TMP/agent.err" | sed 's/^/  /'
fi

# Every window accounted for, and the backends' 200s are the deliveries.
profiles=$(sed -n 's/.* windows, \([0-9]*\) profiles$/\1/p' "$TMP/agent.err")
line=$(sed -n 's/^sfprof agent: sink pyroscope .*: \(delivered=.*\)/\1/p' "$TMP/agent.err")
set -- $(echo "$line" | tr '=' ' ')
# delivered D dropped X failed F retries R unsent U
# (a delivery: a push of one series of one sample, PUSH_ONE)
got=0 any=0
for l in "$TMP"/srv*/requests.log; do
	[ -f "$l" ] || continue
	got=$((got + $(count_log "$(dirname "$l")" "$PUSH_ONE")))
	any=$((any + $(count_log "$(dirname "$l")" ' 200 ')))
done
if [ -n "$profiles" ] && [ "$#" = 10 ] && [ "$(($2 + $4 + $6 + ${10}))" = "$profiles" ] &&
   [ "$6" = 0 ] && [ "$got" = "$2" ] && [ "$any" = "$got" ] && [ "$2" -gt 0 ]; then
	pass "agent soak: every one of $profiles windows accounted for ($line); the backends logged $got deliveries, each 1 series of 1 sample"
else
	fail "agent soak: every window accounted for"
	echo "  ${profiles:-?} profiles; $line; backends logged $got deliveries of 1 series of 1 sample ($any answered 200)"
fi

if [ -n "$WAVE_BASE" ] && [ "$WAVE_PEAK" -ge $((WAVE_BASE + 100)) ]; then
	pass "agent soak: 200 processes alive together during the churn raise the processes kept from $WAVE_BASE to $WAVE_PEAK"
else
	fail "agent soak: 200 processes alive together raise the processes kept by 100 at least (${WAVE_BASE:-?} to ${WAVE_PEAK:-?})"
fi
if [ -n "$procs0" ] && [ -n "$procs1" ] && [ "$procs1" -le $((procs0 + 100)) ]; then
	pass "agent soak: processes kept after ~$((SECONDS_TOTAL * 20 + 200)) short-lived ones: $procs1 (at start $procs0)"
else
	fail "agent soak: processes kept after ~$((SECONDS_TOTAL * 20 + 200)) short-lived ones: ${procs1:-?} (at start ${procs0:-?})"
fi
n=$(trace_samples "$TMP/short.traces")
SHORT_PID_WAS=$(cat "$TMP/short.was" 2>/dev/null)
pids=$(trace_label "$TMP/short.traces" pid | sort -u | tr '\n' ' ')
if [ "$n" -ge 5 ] && [ -n "$SHORT_PID_WAS" ] && [ "$pids" = "$SHORT_PID_WAS " ] &&
   grep -q 'agent_hot\|agent_sort_loop' "$TMP/short.traces"; then
	pass "agent soak: a short-lived program pulled by its pid during the churn: $n samples, all of its pid, its functions named"
else
	fail "agent soak: a short-lived program pulled by its pid: ${n:-0} samples (want >= 5), pids ${pids:-none} (want ${SHORT_PID_WAS:-?}), named"
	head -20 "$TMP/short.traces" | sed 's/^/  /'
fi

# RSS: the first sample after the warm-up against the last one.
r0=$(awk -v w=$WARMUP '$1 >= w && $2 { print $2; exit }' "$TMP/rss")
r1=$(awk '$2 { r = $2 } END { print r }' "$TMP/rss")
[ -n "$SOAK_RSS_LOG" ] && cp "$TMP/rss" "$SOAK_RSS_LOG"
if [ -z "$RSS_PCT" ]; then
	echo "  resident size (s kB): $(awk '$1 % 30 == 0' "$TMP/rss" | tr '\n' ';')"
elif [ -z "$r0" ] || [ -z "$r1" ]; then
	fail "agent soak: resident size after ${WARMUP} s"
	sed 's/^/  /' "$TMP/rss"
elif ldd "$SFPROF" 2>/dev/null | grep -q libasan; then
	skip "agent soak: resident size after ${WARMUP} s grows <= $RSS_PCT % ($r0 -> $r1 kB)" \
		"ASan's quarantine keeps freed memory resident by design"
elif [ $((r1 * 100)) -le $((r0 * (100 + RSS_PCT))) ]; then
	pass "agent soak: resident size after ${WARMUP} s grows <= $RSS_PCT % ($r0 -> $r1 kB)"
else
	fail "agent soak: resident size after ${WARMUP} s grows <= $RSS_PCT % ($r0 -> $r1 kB)"
	sed 's/^/  /' "$TMP/rss"
fi
