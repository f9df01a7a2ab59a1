#!/bin/sh
# `sfprof agent --off-cpu`: where threads wait, per service and window,
# beside the CPU profile.  The off-CPU workload (tests/progs/offcpu-work:
# nap() sleeps 10 x 100 ms, wait_pipe() reads a pipe fed every 50 ms,
# wait_cond() waits on a condition variable, spin() burns 300 ms of CPU,
# each timing its own waits) runs under an agent that pushes to a test
# backend (Pyroscope Connect push and OTLP/HTTP, push-server.py), writes
# files, and answers a pull of /debug/pprof/offcpu.  What it delivered is
# read back with the real decoders (protoc with the upstream pprof and
# OpenTelemetry schemas, go tool pprof) and compared with the program's own
# figures: blocked time per function (+-5 %), stacks that reach main or
# start_thread (>= 99 %), the series' names and sample types.
# Needs root (system-wide sampling), tracefs, protoc, python3, go, curl.
# checks: 16
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/offcpu-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
SERVER=$HERE/push-server.py
CHECK=$HERE/push-check.py
OW=$SFP_BUILD/tests/progs/offcpu-work
NCHECKS=16

skip_all() {
	for i in $(seq $NCHECKS); do skip "agent off-cpu $i" "$1"; done
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "needs root for system-wide sampling"
FMT=/sys/kernel/tracing/events/sched/sched_switch/format
if [ ! -r $FMT ] && [ ! -r /sys/kernel/debug/tracing/events/sched/sched_switch/format ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
	[ -r $FMT ] || skip_all "no tracefs with sched:sched_switch"
fi
if ! command -v protoc > /dev/null || ! command -v python3 > /dev/null ||
   ! command -v go > /dev/null || ! command -v curl > /dev/null ||
   [ ! -f "$PROTO/pprof/profile.proto" ]; then
	skip_all "protoc, python3, go, curl or $PROTO missing (make deps)"
fi
. "$HERE/push-subr.sh"
export PPROF_TMPDIR="$TMP" HOME="$TMP"
. "$HERE/agent-subr.sh"

# blocked ns per function of stacks-pprof/-otlp lines (TYPE, stack, value):
# each function once per stack; and the share of stacks (by count) that
# reach main or start_thread.  libc's __libc_start_call_main counts as main:
# a block in exit()'s handlers after main returned (a page fault in a
# library's _fini, met in the sanitizer tier) has a complete stack that
# goes through it and not through main.
fn_sum() {	# FILE TYPE FN
	awk -F '\t' -v t="$2" -v f="$3" '$1 == t {
		n = split($2, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) { s += $3; break } }
		END { printf "%d\n", s }' "$1"
}
ROOTS='(^|;)(main|__libc_start_call_main|start_thread)(;|$)'
rooted() {	# FILE: "rooted total" of samples/count
	awk -F '\t' -v ROOTS="$ROOTS" '$1 == "samples/count" { t += $3
		if ($2 ~ ROOTS) r += $3 }
		END { printf "%d %d\n", r, t }' "$1"
}


# off-CPU time needs the sframe path: other modes are refused
check_rc "agent off-cpu: --off-cpu with --call-graph fp is a usage error" 2 \
	"$SFPROF" agent --off-cpu --call-graph fp --interval 1

SRV_DIR=$TMP/srv
start_server "$SRV_DIR"
URL=http://127.0.0.1:$PORT
# the program waits in linger() until $TMP/go exists: the agent follows
# its pid only (other tests run the same program on this machine)
# (in the sanitizer tier the workload is built with ASan too: its leak
# check at exit stops the process with ptrace from a stack in ld.so's
# finalizers, a block of the workload's tooling, not of the workload)
ASAN_OPTIONS=detect_leaks=0 $PDEATH "$OW" start "$TMP/go" > "$TMP/ow.out" 2> "$TMP/ow.err" &
WPID=$!
agent_start --pid "$WPID" --off-cpu --interval 1 -m 4096 \
	--pyroscope "$URL" --otlp "$URL" --output-dir "$TMP/files"
if [ -z "$APORT" ]; then
	for i in $(seq $((NCHECKS - 1))); do fail "agent off-cpu: the agent did not start"; done
	sed 's/^/  /' "$TMP/agent.err" | head -10
	exit 0
fi
if grep -q 'auto: sframe' "$TMP/agent.err"; then
	pass "agent off-cpu: --off-cpu makes --call-graph auto pick sframe, and says so"
else
	fail "agent off-cpu: --off-cpu makes --call-graph auto pick sframe, and says so"
	head -5 "$TMP/agent.err" | sed 's/^/  /'
fi

# Until the unwind tables of the program's files are built (on a thread of
# their own), a block met in the meantime has a stack that stops at its
# first frame (docs/agent.md): one-second pulls of the lingering program
# until its blocks reach main, and only windows that begin after that
# are held to the >= 99 % below.
ready=0 _i=0
while [ $ready = 0 ] && [ $_i -lt 60 ] && kill -0 "$AGENT_PID" 2> /dev/null; do
	_i=$((_i + 1))
	curl -s -o "$TMP/ready.pb.gz" \
		"http://127.0.0.1:$APORT/debug/pprof/offcpu?seconds=1&pid=$WPID" 2> /dev/null &&
	decode_pprof "$TMP/ready.pb.gz" "$TMP/ready.txt" &&
	python3 "$CHECK" stacks-pprof "$TMP/ready.txt" > "$TMP/ready.stacks" &&
	set -- $(rooted "$TMP/ready.stacks") && [ "${2:-0}" -gt 0 ] && [ "$1" = "$2" ] &&
	ready=1
done
T_READY=$(date +%s%N)

# a pull over the program's whole run (about 1.1 s once started)
curl -s -o "$TMP/pull.pb.gz" -w '%{http_code}' \
	"http://127.0.0.1:$APORT/debug/pprof/offcpu?seconds=6&pid=$WPID" \
	> "$TMP/pull.code" 2> "$TMP/pull.err" &
PULL=$!
# the program starts once the pull's span has begun
wait_metric sfprof_agent_pulls_open 1
touch "$TMP/go"
wait "$WPID"
wrc=$?
WPID_WAS=$WPID
WPID=
wait "$PULL"
# two windows more, so that the last blocks are delivered
w=$(metric sfprof_agent_windows_total)
wait_metric sfprof_agent_windows_total $((${w:-0} + 2))
# /metrics: the off-CPU counters, against the program's own figures (its
# lingering before the start blocks too: at least the three waits' sum)
ob=$(metric sfprof_agent_offcpu_blocks_total)
os=$(metric sfprof_agent_offcpu_blocked_seconds_total)
curl -s "http://127.0.0.1:$APORT/metrics" > "$TMP/metrics.txt"
oown=$(awk '$1 == "sfprof_agent_offcpu_blocks_kept_total{how=\"own\"}" { print $2 }' "$TMP/metrics.txt")
osum=$(awk '$1 == "sfprof_agent_offcpu_blocks_kept_total{how=\"summed\"}" { print $2 }' "$TMP/metrics.txt")
ouw=$(metric sfprof_agent_offcpu_user_unwinds_total)
want=0
for fn in nap wait_pipe wait_cond; do
	want=$((want + $(prog_field "$TMP/ow.out" $fn blocked_ns)))
done
if awk -v b="${ob:-0}" -v s="${os:-0}" -v own="${oown:-x}" -v sum="${osum:-x}" \
	-v u="${ouw:-0}" -v w="$want" 'BEGIN { exit !(b >= 30 && own != "x" &&
	sum != "x" && own + sum <= b && own + sum >= 0.9 * b && u >= 1 &&
	u <= b && s * 1e9 >= 0.95 * w) }'; then
	pass "agent off-cpu: /metrics: $ob blocks ($oown own, $osum summed), ${os}s blocked (the program's three waits: $want ns), $ouw user unwinds"
else
	fail "agent off-cpu: /metrics: off-CPU counters (blocks ${ob:-?}, own ${oown:-?}, summed ${osum:-?}, ${os:-?}s blocked against $want ns, unwinds ${ouw:-?})"
	curl -s "http://127.0.0.1:$APORT/metrics" | grep offcpu | sed 's/^/  /'
fi
kill -TERM "$AGENT_PID"
# agent_end's own status: not 0 on a time-out or a sanitizer report
agent_end 30
aend=$?
stop_server "agent off-cpu"
if [ "$wrc" = 0 ] && [ -n "$(prog_field "$TMP/ow.out" nap blocked_ns)" ] &&
   [ "$aend" = 0 ] && [ "$rc" = 0 ]; then
	pass "agent off-cpu: the program ran, the agent ended on SIGTERM (exit 0, no sanitizer report)"
else
	fail "agent off-cpu: the program ran (exit $wrc), the agent ended on SIGTERM (exit $rc$([ "$rc" != timeout ] && [ "$aend" != 0 ] && echo ', a sanitizer report'))"
	grep -E -A3 'runtime error:|Sanitizer' "$TMP/agent.err" | head -8 | sed 's/^/  /'
	tail -5 "$TMP/agent.err" "$TMP/ow.err" | sed 's/^/  /'
fi
grep '^sfprof agent' "$TMP/agent.err" | sed 's/^/  /'

# --- files: off_cpu-*.pb.gz beside profile-*.pb.gz ---------------------------
: > "$TMP/files.stacks"
: > "$TMP/files.ready"
ok=1 n=0
for f in "$TMP"/files/off_cpu-*.pb.gz; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	if decode_pprof "$f" "$f.txt" && python3 "$CHECK" types-pprof "$f.txt" > "$f.types" &&
	   grep -qx 'sample_type samples/count off_cpu/nanoseconds' "$f.types" &&
	   grep -qx 'period_type off_cpu/nanoseconds' "$f.types"; then
		python3 "$CHECK" stacks-pprof "$f.txt" >> "$TMP/files.stacks"
		[ "$(sed -n 's/^time_nanos: //p' "$f.txt")" -ge "$T_READY" ] 2> /dev/null &&
			python3 "$CHECK" stacks-pprof "$f.txt" >> "$TMP/files.ready"
	else
		ok=0
		echo "  $f:"; cat "$f.types" "$f.txt.err" 2> /dev/null | sed 's/^/    /' | head -5
	fi
done
ncpu=$(ls "$TMP"/files/profile-*.pb.gz 2> /dev/null | wc -l)
if [ $ok = 1 ] && [ $n -gt 0 ] && [ "$ncpu" -gt 0 ]; then
	pass "agent off-cpu: files: $n off_cpu-*.pb.gz (protoc: samples/count + off_cpu/nanoseconds, period type off_cpu/nanoseconds) beside $ncpu profile-*.pb.gz"
else
	fail "agent off-cpu: files: off_cpu-*.pb.gz with off_cpu/nanoseconds ($n of them, $ncpu CPU files)"
	ls "$TMP/files" | head -5 | sed 's/^/  /'
fi
for fn in nap wait_pipe wait_cond; do
	within "agent off-cpu: files: $fn() blocked time (protoc)" \
		"$(fn_sum "$TMP/files.stacks" off_cpu/nanoseconds $fn)" \
		"$(prog_field "$TMP/ow.out" $fn blocked_ns)" 5
done
set -- $(rooted "$TMP/files.ready")
if [ $ready = 1 ] && [ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; then
	pass "agent off-cpu: files: $1 of $2 off-CPU samples reach main or start_thread (windows once the tables were built)"
else
	fail "agent off-cpu: files: ${1:-0} of ${2:-0} off-CPU samples reach main or start_thread (want >= 99 %; tables ready: $ready)"
	awk -F '\t' -v ROOTS="$ROOTS" '$1 == "samples/count" && $2 !~ ROOTS' \
		"$TMP/files.ready" | head -3 | sed 's/^/  /'
	# what the agent warned of (unnamed libc frames once came with
	# "malformed MMAP2 record" warnings while other sessions ran)
	grep -v '^sfprof agent: ' "$TMP/agent.err" | sed 's/[0-9][0-9]* bytes/N bytes/' |
		sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
fi
# go tool pprof merges the files and reads the same time under nap()
if go tool pprof -sample_index=off_cpu -top -nodecount=500 -unit=ns \
	"$TMP"/files/off_cpu-*.pb.gz > "$TMP/top.txt" 2> "$TMP/top.err"; then
	gp=$(awk '$NF == "nap" { v = $4; sub(/ns$/, "", v); print v; exit }' "$TMP/top.txt")
	within "agent off-cpu: files: go tool pprof (merged): nap()'s cumulative off_cpu" \
		"${gp:-0}" "$(fn_sum "$TMP/files.stacks" off_cpu/nanoseconds nap)" 1
else
	fail "agent off-cpu: files: go tool pprof reads the off_cpu files"
	head -3 "$TMP/top.err" | sed 's/^/  /'
fi
# the CPU series is still there: spin() in the CPU files
if for f in "$TMP"/files/profile-*.pb.gz; do
	decode_pprof "$f" "$f.txt" && python3 "$CHECK" stacks-pprof "$f.txt"
   done 2> /dev/null | awk -F '\t' '$1 == "cpu/nanoseconds" && $2 ~ /(^|;)spin(;|$)/ { f = 1 } END { exit !f }'; then
	pass "agent off-cpu: files: the CPU profiles still hold spin()"
else
	fail "agent off-cpu: files: the CPU profiles still hold spin()"
fi

# --- Pyroscope: a series __name__=off_cpu -------------------------------------
# (push-server.py: REQ.sJ.labels and REQ.sJ-K.pb.gz, series J's labels and
# samples; each push is one series of one sample, PUSH_ONE)
: > "$TMP/pyro.stacks"
noff=0 ncpu=0
for l in "$SRV_DIR"/req-*.labels; do
	[ -f "$l" ] || continue
	pre=${l%.labels}
	if grep -qx '__name__=off_cpu' "$l"; then
		noff=$((noff + 1))
		for r in "$pre"-*.pb.gz; do
			decode_pprof "$r" "$r.txt" &&
			python3 "$CHECK" stacks-pprof "$r.txt" >> "$TMP/pyro.stacks"
		done
	elif grep -qx '__name__=process_cpu' "$l"; then
		ncpu=$((ncpu + 1))
	fi
done
if [ "$noff" -gt 0 ] && [ "$ncpu" -gt 0 ] &&
   [ "$(count_log "$SRV_DIR" "$PUSH_ONE")" = $((noff + ncpu)) ] &&
   [ "$(count_log "$SRV_DIR" '^[0-9]+ /push.v1.PusherService/Push ')" = $((noff + ncpu)) ] &&
   grep -q "^off_cpu/nanoseconds	" "$TMP/pyro.stacks"; then
	pass "agent off-cpu: Pyroscope: $noff pushes of __name__=off_cpu (off_cpu/nanoseconds) beside $ncpu of process_cpu, each 1 series of 1 sample"
else
	fail "agent off-cpu: Pyroscope: pushes of __name__=off_cpu ($noff) beside process_cpu ($ncpu)"
	sed 's/^/  /' "$SRV_DIR/requests.log" | head -5
fi
within "agent off-cpu: Pyroscope: nap()'s blocked time in the off_cpu series" \
	"$(fn_sum "$TMP/pyro.stacks" off_cpu/nanoseconds nap)" \
	"$(prog_field "$TMP/ow.out" nap blocked_ns)" 5

# --- OTLP: profiles of type off_cpu/nanoseconds --------------------------------
: > "$TMP/otlp.stacks"
for o in "$SRV_DIR"/req-*.otlp; do
	[ -f "$o" ] || continue
	decode_otlp "$o" "$o.txt" && python3 "$CHECK" stacks-otlp "$o.txt" >> "$TMP/otlp.stacks"
done
within "agent off-cpu: OTLP: wait_pipe()'s blocked time in the off_cpu/nanoseconds profiles" \
	"$(fn_sum "$TMP/otlp.stacks" off_cpu/nanoseconds wait_pipe)" \
	"$(prog_field "$TMP/ow.out" wait_pipe blocked_ns)" 5

# --- the pull: /debug/pprof/offcpu?seconds=6&pid=P ------------------------------
if [ "$(cat "$TMP/pull.code")" = 200 ] && decode_pprof "$TMP/pull.pb.gz" "$TMP/pull.txt" &&
   python3 "$CHECK" types-pprof "$TMP/pull.txt" | grep -x 'sample_type samples/count off_cpu/nanoseconds' > /dev/null &&
   go tool pprof -raw "$TMP/pull.pb.gz" > /dev/null 2>&1; then
	pass "agent off-cpu: /debug/pprof/offcpu answers a gzip pprof of off_cpu/nanoseconds (protoc, go tool pprof)"
	python3 "$CHECK" stacks-pprof "$TMP/pull.txt" > "$TMP/pull.stacks"
	if ! within "agent off-cpu: /debug/pprof/offcpu: wait_cond()'s blocked time" \
		"$(fn_sum "$TMP/pull.stacks" off_cpu/nanoseconds wait_cond)" \
		"$(prog_field "$TMP/ow.out" wait_cond blocked_ns)" 5; then
		# what the pull and the files hold under wait_cond
		for f in pull files; do
			echo "  $f:"
			awk -F '\t' '$2 ~ /(^|;)wait_cond(;|$)/' "$TMP/$f.stacks" |
				sort | head -12 | sed 's/^/    /'
		done
		grep -h '^time_nanos\|^duration_nanos' "$TMP/pull.txt" | sed 's/^/  pull /'
		sed 's/^/  /' "$TMP/ow.out"
		echo "  blocks rooted from $T_READY ns (CLOCK_REALTIME)"
	fi
else
	fail "agent off-cpu: /debug/pprof/offcpu answers a gzip pprof (HTTP $(cat "$TMP/pull.code"))"
	head -3 "$TMP/pull.err" "$TMP/pull.txt.err" 2> /dev/null | sed 's/^/  /'
	skip "agent off-cpu: /debug/pprof/offcpu: wait_cond()'s blocked time" "no pull"
fi
