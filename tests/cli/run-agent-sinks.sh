#!/bin/sh
# sfprof agent delivering its windows to the backends, end to end: one
# agent with a Pyroscope (Connect push), an OTLP/HTTP and a files sink,
# against the test backend (push-server.py) that is down when the agent
# starts and comes up two windows later.  What the backend got is read
# back with the real decoders (protoc with the upstream pprof and
# OpenTelemetry schemas, go tool pprof) and counted against the samples
# the agent took (its exit summary):
#  - while the backend is down the windows wait in the queues (retries and
#    queue bytes on /metrics); once it is up every one is delivered, none
#    dropped, none failed, none unsent;
#  - every push has the series labels __name__, service_name, pid, host;
#    every rawProfile decodes and go tool pprof reads it;
#  - the windows' time ranges follow each other without overlap, a gap
#    only where windows had no samples;
#  - every push carries one series of one sample (the server logs how
#    many of each);
#  - the pushed samples add up to the samples the agent kept, and
#    cpu/nanoseconds to that many periods at -F; and they are the
#    workload's CPU time (its /proc/PID/stat, read by this script) times
#    -F, within 10 % and three standard deviations;
#  - the OTLP bodies decode, with the resource attributes, and their stacks
#    equal the pprof stacks; the files sink wrote the same windows.
# Needs root (system-wide sampling), protoc, python3, go.
# checks: 11
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
SERVER=$HERE/push-server.py
CHECK=$HERE/push-check.py
NCHECKS=11

if [ "$(id -u)" != 0 ]; then
	for i in $(seq $NCHECKS); do skip "agent sinks $i" "needs root for system-wide sampling"; done
	exit 0
fi
if ! command -v protoc > /dev/null || ! command -v python3 > /dev/null ||
   ! command -v go > /dev/null || [ ! -f "$PROTO/pprof/profile.proto" ]; then
	for i in $(seq $NCHECKS); do skip "agent sinks $i" "protoc, python3, go or $PROTO missing (make deps)"; done
	exit 0
fi
. "$HERE/push-subr.sh"

WORK=$SFP_BUILD/tests/progs/agent-work
export PPROF_TMPDIR="$TMP" HOME="$TMP"
. "$HERE/agent-subr.sh"

# A port nothing listens on yet: the backend is down at the start.
DPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$DPORT
FREQ=199
# cpu_ticks PID: the CPU time a process has used, user + system, in clock
# ticks (/proc/PID/stat's 14th and 15th fields; the 2nd, the name in
# parentheses, is cut off first as it may hold spaces)
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}
$PDEATH "$WORK" 600 > "$TMP/work.out" 2>&1 &
WPID=$!
# the workload's CPU time before the agent is asked to start and once it
# samples: the CPU time it sampled lies between the two readings and the
# one at the end
cpu0=$(cpu_ticks "$WPID")
agent_start --pid "$WPID" -F $FREQ --interval 2 --call-graph sframe \
	--pyroscope "$URL" --otlp "$URL" --output-dir "$TMP/files"
cpu0b=$(cpu_ticks "$WPID")
if [ -z "$APORT" ]; then
	for i in $(seq $NCHECKS); do fail "agent sinks: the agent did not start"; done
	sed 's/^/  /' "$TMP/agent.err" | head -10
	exit 0
fi

# Two windows while the backend is down: queued, retried.
wait_metric sfprof_agent_windows_total 2
wait_metric sfprof_agent_sink_retries_total 1 pyroscope 30
q=$(metric sfprof_agent_sink_queue_bytes pyroscope)
r=$(metric sfprof_agent_sink_retries_total otlp)
d=$(metric sfprof_agent_sink_windows_delivered_total pyroscope)
if [ "${q:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ] && [ "$d" = 0 ]; then
	pass "agent sinks: backend down: windows wait in the queues, retried (/metrics: $q bytes queued)"
else
	fail "agent sinks: backend down: windows wait in the queues, retried"
	echo "  queue bytes ${q:-?}, otlp retries ${r:-?}, delivered ${d:-?}"
fi

# The backend comes up; two more windows; then the workload stops
# (no more samples) and two windows later the agent is told to end.
SRV_DIR=$TMP/srv
start_server "$SRV_DIR" --port "$DPORT"
wait_metric sfprof_agent_sink_windows_delivered_total 4 pyroscope 60
kill -STOP "$WPID"
# stopped (state T): its CPU time no longer moves
i=0
while [ "$(sed 's/^.*) //' "/proc/$WPID/stat" | cut -d' ' -f1)" != T ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
cpu1=$(cpu_ticks "$WPID")
w=$(metric sfprof_agent_windows_total)
wait_metric sfprof_agent_windows_total $((${w:-0} + 2))
kill -TERM "$AGENT_PID"
agent_end 20
kill -9 "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID_WAS=$WPID
WPID=
stop_server "agent sinks"

# The exit summary: what became of every window.
sumline() {
	sed -n "s/^sfprof agent: sink $1 .*: \\(delivered=.*\\)/\\1/p" "$TMP/agent.err"
}
kept=$(sed -n 's/^sfprof agent: [0-9]* samples, \([0-9]*\) kept.*/\1/p' "$TMP/agent.err")
profiles=$(sed -n 's/.* windows, \([0-9]*\) profiles$/\1/p' "$TMP/agent.err")
ok=1
for s in pyroscope otlp files; do
	echo "$(sumline $s)" | grep -qx "delivered=$profiles dropped=0 failed=0 retries=[0-9]* unsent=0" || ok=0
done
if [ "$rc" = 0 ] && [ $ok = 1 ] && [ "${profiles:-0}" -ge 4 ] &&
   ! grep -qE 'runtime error:|Sanitizer' "$TMP/agent.err"; then
	pass "agent sinks: SIGTERM ends it (exit 0); all $profiles windows delivered by each sink, none dropped, failed or unsent"
else
	fail "agent sinks: SIGTERM ends it (exit 0); all windows delivered by each sink"
	echo "  exit $rc, ${profiles:-?} profiles"
	grep '^sfprof agent' "$TMP/agent.err" | sed 's/^/  /'
	tail -5 "$TMP/agent.err" | sed 's/^/  /'
fi
# (each push one series of one sample: PUSH_ONE, push-subr.sh)
n200=$(count_log "$SRV_DIR" "$PUSH_ONE")
nall=$(count_log "$SRV_DIR" '^[0-9]+ /push.v1.PusherService/Push ')
o200=$(count_log "$SRV_DIR" '^[0-9]+ /v1development/profiles 200')
if [ "$n200" = "$profiles" ] && [ "$nall" = "$n200" ] && [ "$o200" = "$profiles" ] &&
   [ "$(count_log "$SRV_DIR" ' [^2][0-9][0-9]( |$)')" = 0 ]; then
	pass "agent sinks: the backend got $n200 Connect pushes (each 1 series of 1 sample) and $o200 OTLP posts, all answered 200"
else
	fail "agent sinks: the backend got every window once, each push 1 series of 1 sample"
	echo "  push ${n200:-0} of 1 series and 1 sample (${nall:-0} in all), otlp ${o200:-0}, profiles ${profiles:-?}"
	sed 's/^/  /' "$SRV_DIR/requests.log" | head -10
fi

# Series labels of every push (push-server.py keeps every series' labels:
# one file for each, so a push of two series has two).
printf '__name__=process_cpu\nservice_name=agent-work\npid=%s\nhost=%s\n' \
	"$WPID_WAS" "$(uname -n)" | sort > "$TMP/labels.exp"
ok=1 n=0
for l in "$SRV_DIR"/req-*.labels; do
	[ -f "$l" ] || continue
	n=$((n + 1))
	sort "$l" | cmp -s - "$TMP/labels.exp" || ok=0
done
if [ $ok = 1 ] && [ $n = "$n200" ] && [ $n -gt 0 ]; then
	pass "agent sinks: every push labeled __name__=process_cpu, service_name, pid, host"
else
	fail "agent sinks: every push labeled __name__=process_cpu, service_name, pid, host"
	sed 's/^/  /' "$(ls "$SRV_DIR"/req-*.labels | head -1)" 2>/dev/null
fi

# Every rawProfile (of every series and sample): protoc decodes it, go
# tool pprof reads it.  Collect each window's (time_nanos,
# duration_nanos) and totals.
ok=1 n=0
: > "$TMP/ranges" ; : > "$TMP/pushed.stacks"
for r in "$SRV_DIR"/req-*.pb.gz; do
	[ -f "$r" ] || continue
	n=$((n + 1))
	if ! decode_pprof "$r" "$r.txt" || ! go tool pprof -raw "$r" > "$r.raw" 2>&1 ||
	   ! grep -q '^Samples:' "$r.raw"; then
		ok=0
		continue
	fi
	awk '/^time_nanos:/ { t = $2 } /^duration_nanos:/ { d = $2 } END { print t, d }' "$r.txt" >> "$TMP/ranges"
	python3 "$CHECK" stacks-pprof "$r.txt" >> "$TMP/pushed.stacks"
done
if [ $ok = 1 ] && [ $n = "$n200" ] && [ $n -gt 0 ]; then
	pass "agent sinks: all $n rawProfiles decode with protoc (upstream profile.proto) and go tool pprof reads them"
else
	fail "agent sinks: all rawProfiles decode with protoc and go tool pprof reads them ($n)"
fi

# Windows follow each other: each starts where the one before ended, and
# each but the last (cut by SIGTERM) lasts at least about the interval.
# A window without samples is not pushed, so a gap is whole windows, at
# most as many as the agent closed empty (its summary's windows minus
# profiles): the windows while the workload is stopped are empty, and a
# sample of its taken just before SIGSTOP, in a system call, waits for its
# user stack until the agent's exit puts it in the last window (2 Dec
# 2026, ASan tier: one 2 s gap before a 148 ms last window).
sort -n "$TMP/ranges" > "$TMP/ranges.sorted"
windows=$(sed -n 's/^sfprof agent: .*; \([0-9]*\) windows, [0-9]* profiles$/\1/p' "$TMP/agent.err")
# (nanoseconds since 1970 are past awk's exact integers: python)
if python3 - "$TMP/ranges.sorted" "${windows:-0}" "${profiles:-0}" <<'EOF'
import sys
w = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
empty = int(sys.argv[2]) - int(sys.argv[3])
ok = len(w) >= 4
gaps = 0
for (t0, d0), (t1, _) in zip(w, w[1:]):
    # a window may close late (the start's reading; a loaded machine,
    # an ASan build: the lateness is on /metrics), never early
    ok = ok and 1.5e9 <= d0 and t1 >= t0 + d0
    if t1 > t0 + d0:
        # whole empty windows between: at least one interval's length
        ok = ok and t1 - (t0 + d0) >= 1.5e9
        gaps += 1
sys.exit(not (ok and gaps <= empty))
EOF
then
	pass "agent sinks: the windows' time ranges follow each other, no overlap, gaps only of empty windows"
else
	fail "agent sinks: the windows' time ranges follow each other, no overlap, gaps only of empty windows"
	echo "  $windows windows, $profiles profiles"
	sed 's/^/  /' "$TMP/ranges.sorted"
fi

# Totals: the samples pushed are the samples the agent kept.
tot() {
	awk -F'\t' -v t="$2" '$1 == t { s += $3 } END { printf "%.0f\n", s }' "$1"
}
ps=$(tot "$TMP/pushed.stacks" samples/count)
pn=$(tot "$TMP/pushed.stacks" cpu/nanoseconds)
want_ns=$(awk -v k="$kept" -v f=$FREQ 'BEGIN { printf "%.0f\n", k * int(1e9 / f) }')
if [ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$ps" = "$kept" ] && [ "$pn" = "$want_ns" ]; then
	pass "agent sinks: pushed samples/count = the $kept samples the agent kept; cpu/nanoseconds = that many periods at $FREQ Hz"
else
	fail "agent sinks: pushed totals = the samples the agent kept"
	echo "  kept ${kept:-?}, pushed samples $ps, cpu ns $pn (want $want_ns)"
fi
# ... and the samples the workload's own CPU time makes at -F, measured
# apart from the agent: cpu-clock samples what runs on a CPU every 1/F s,
# so a task that ran C seconds gets about C x F samples.  The time sampled
# lies between the workload's CPU time since the agent said it samples
# and that since it was started (the agent's start takes a while under
# ASan).  Tolerance: 10 %, plus three standard deviations of a count of
# that size (on a loaded machine the workload runs a small share of each
# CPU's time, and which timer ticks fall in its slices is chance: 3 x
# sqrt(expected)), plus 2 for the ticks' rounding; below, the samples the
# agent said it lost (records lost, system-wide) may be missing.  A sample
# pushed twice, or a stale window pushed again, is far beyond.
tck=$(getconf CLK_TCK)
lost=$(sed -n 's/^sfprof agent: [0-9]* samples, [0-9]* kept, \([0-9]*\) lost.*/\1/p' "$TMP/agent.err")
if [ -n "$cpu0" ] && [ -n "$cpu0b" ] && [ -n "$cpu1" ] && [ -n "$ps" ] && [ -n "$lost" ] &&
   awk -v p="$ps" -v l="$lost" -v lo=$((cpu1 - cpu0b)) -v hi=$((cpu1 - cpu0)) -v t="$tck" -v f=$FREQ '
	BEGIN { el = lo / t * f; eh = hi / t * f
		exit !(lo > 0 && p + l >= el * 0.9 - 3 * sqrt(el) - 2 &&
		       p <= eh * 1.1 + 3 * sqrt(eh) + 2) }'; then
	pass "agent sinks: the $ps samples pushed are the workload's CPU time ($((cpu1 - cpu0b))-$((cpu1 - cpu0)) ticks of 1/$tck s, /proc/PID/stat) x $FREQ Hz, within 10 % + 3 sigma ($lost lost)"
else
	fail "agent sinks: the samples pushed are the workload's CPU time x $FREQ Hz, within 10 % + 3 sigma"
	echo "  pushed ${ps:-?}, ${lost:-?} lost; the workload's CPU time: ${cpu0:-?} ticks at the agent's start, ${cpu0b:-?} once it sampled, ${cpu1:-?} when stopped (1/$tck s)"
fi

# OTLP: decodes with the upstream protos, resource attributes, and the
# same stacks as the pprof windows (summed over the windows).
ok=1 n=0
: > "$TMP/otlp.stacks" ; : > "$TMP/res"
for b in "$SRV_DIR"/req-*.otlp; do
	[ -f "$b" ] || continue
	n=$((n + 1))
	decode_otlp "$b" "$b.txt" || { ok=0; continue; }
	python3 "$CHECK" stacks-otlp "$b.txt" >> "$TMP/otlp.stacks" || ok=0
	python3 "$CHECK" resource-otlp "$b.txt" >> "$TMP/res" || ok=0
done
merge() {
	awk -F'\t' '{ s[$1 "\t" $2] += $3 } END { for (k in s) printf "%s\t%.0f\n", k, s[k] }' "$1" | sort
}
merge "$TMP/pushed.stacks" > "$TMP/pushed.merged"
merge "$TMP/otlp.stacks" > "$TMP/otlp.merged"
if [ $ok = 1 ] && [ $n = "$o200" ] && [ -s "$TMP/otlp.merged" ] &&
   cmp -s "$TMP/pushed.merged" "$TMP/otlp.merged" &&
   grep -qx "service.name=agent-work" "$TMP/res" &&
   grep -qx "process.pid=int:$WPID_WAS" "$TMP/res" &&
   grep -qx "host.name=$(uname -n)" "$TMP/res"; then
	pass "agent sinks: OTLP bodies decode (upstream protos), resource attributes, stacks equal the pprof's ($(wc -l < "$TMP/otlp.merged") stacks)"
else
	fail "agent sinks: OTLP bodies decode, resource attributes, stacks equal the pprof's"
	diff "$TMP/pushed.merged" "$TMP/otlp.merged" | head -6 | sed 's/^/  /'
	sort -u "$TMP/res" | head -8 | sed 's/^/  /'
fi

# Files: the same windows, rotated into the directory.
: > "$TMP/files.stacks"
n=0
for f in "$TMP/files"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	decode_pprof "$f" "$f.txt.tmp" && python3 "$CHECK" stacks-pprof "$f.txt.tmp" >> "$TMP/files.stacks"
	rm -f "$f.txt.tmp" "$f.txt.tmp.pb" "$f.txt.tmp.err"
done
merge "$TMP/files.stacks" > "$TMP/files.merged"
if [ $n = "$profiles" ] && cmp -s "$TMP/pushed.merged" "$TMP/files.merged"; then
	pass "agent sinks: --output-dir holds the same $n windows (protoc decodes them, same stacks)"
else
	fail "agent sinks: --output-dir holds the same windows"
	echo "  $n files, ${profiles:-?} profiles"
	ls "$TMP/files" | head -5 | sed 's/^/  /'
fi

# The delivered stacks are whole: the workload has no frame pointers.
if python3 - "$TMP/pushed.merged" <<'EOF'
import sys
t = m = 0
for l in open(sys.argv[1]):
    typ, stack, v = l.rstrip("\n").split("\t")
    if typ == "samples/count":
        t += int(v)
        m += int(v) if "main" in stack.split(";") else 0
sys.exit(not (t > 0 and m * 100 >= t * 99))
EOF
then
	pass "agent sinks: >= 99 % of the pushed samples reach main"
else
	fail "agent sinks: >= 99 % of the pushed samples reach main"
	grep '^samples/count' "$TMP/pushed.merged" | grep -v ';main;' | head -5 | cut -c1-200 | sed 's/^/  /'
fi
