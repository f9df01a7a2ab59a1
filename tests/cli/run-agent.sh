#!/bin/sh
# sfprof agent, through the clients that consume it:
#  - go tool pprof pulls /debug/pprof/profile?seconds=3&pid=P of a
#    program without frame pointers whose hot function is reached only
#    through qsort's callback: -top names it first, -traces shows >= 99 %
#    of its samples reaching main, through qsort; every trace of the pull
#    carries the label pid=P and no other program's file is mapped;
#  - /metrics parses with the Prometheus client library's own parser,
#    with the lag and the tables built off the reading loop;
#    /healthz; a bad ?seconds= is a 400, as Go's net/http/pprof answers;
#  - a program in its own mount and pid namespaces, from a tmpfs only it
#    sees, in a cgroup named like docker's (docker-<id>.scope): unwound to
#    main, named, and labeled with that container id;
#  - a perf record beside the agent runs; mappings carry the build-ids
#    readelf reads in the files;
#  - 1000 short-lived processes leave no state behind (the processes the
#    agent keeps maps for, from /metrics), and 200 alive together raise
#    that count (it takes new processes up); a program started once a
#    pull of its pid has begun, and gone before it ends, has its samples
#    in the pull, named;
#  - SIGTERM ends the agent, exit 0, within its deadline;
#  - an idle agent's loop sleeps up to a second, windows still on time;
#    a program started meanwhile has whole stacks from its first samples;
#  - one program run four times one after another: its unwind table is
#    loaded once, kept between the runs (the agent's tables linger).
# No agent outlives the script: traps, and PR_SET_PDEATHSIG (setpriv).
# Needs root (system-wide sampling), go, curl, python3-prometheus-client;
# unshare and a writable cgroup v2 for the container checks.
# checks: 20
. "$(dirname "$0")/test-subr.sh"

if [ "$(id -u)" != 0 ]; then
	skip_rest "agent" "needs root for system-wide sampling"
fi
WORK=$SFP_BUILD/tests/progs/agent-work
export PPROF_TMPDIR="$TMP" HOME="$TMP"
. "$(dirname "$0")/agent-subr.sh"
NS_UPID=
NS_PID=
CG=
ns_cleanup() {
	[ -n "$NS_UPID" ] && kill -9 "$NS_UPID" 2>/dev/null
	[ -n "$NS_PID" ] && kill -9 "$NS_PID" 2>/dev/null
	if [ -n "$CG" ]; then
		sleep 0.2
		rmdir "$CG" "$(dirname "$CG")" 2>/dev/null
	fi
}
EXTRA_CLEANUP=ns_cleanup

check_rc "agent: --help" 0 "$SFPROF" agent --help
check_rc "agent: unknown option is a usage error" 2 "$SFPROF" agent --bogus

# --- an idle agent sleeps: a round that finds little doubles the loop's
# wait, up to a second (the old fixed 100 ms loop: 10 rounds a second), and
# windows still close on time, the wait cut short at each window's end
agent_start -v --interval 2
sleep 6.5
if [ -n "$APORT" ] && kill -INT "$AGENT_PID" && agent_end 15 &&
   [ "$rc" -eq 0 ]; then
	rounds=$(sed -n 's/.*in all (\([0-9]*\) rounds).*/\1/p' "$TMP/agent.err")
	wins=$(sed -n 's/^sfprof agent: .* \([0-9]*\) windows,.*/\1/p' "$TMP/agent.err")
	if [ -n "$rounds" ] && [ "$rounds" -le 25 ] && [ "${wins:-0}" -ge 3 ]; then
		pass "agent: an idle loop sleeps ($rounds rounds in 6.5 s), $wins 2 s windows"
	else
		fail "agent: an idle loop sleeps ('$rounds' rounds in 6.5 s), '$wins' 2 s windows"
	fi
else
	fail "agent: an idle loop sleeps"
	echo "  exit ${rc:-?}"
fi

# --- a container: own namespaces, own tmpfs, a docker-like cgroup -------
CID=$(printf '5f%.0s' $(seq 32))	# 64 hex digits, as docker's ids
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ] && mkdir -p "$CG2/sfprof-test-$$/docker-$CID.scope" 2>/dev/null; then
	CG=$CG2/sfprof-test-$$/docker-$CID.scope
fi
NS=$TMP/nsroot
mkdir -p "$NS"
if unshare --mount --pid --fork true 2>/dev/null &&
   gcc -O2 -fomit-frame-pointer -fno-inline -DPFX=alpha -o "$TMP/alpha" \
	"$SFP_TEST_DATA/containers/ns-work.c" 2>"$TMP/cc.err"; then
	# the shell joins the cgroup, then becomes unshare: all in it
	$PDEATH sh -c "[ -z '$CG' ] || echo \$\$ > '$CG/cgroup.procs'; exec unshare --mount --pid --fork --kill-child sh -c \"mount -t tmpfs tmpfs '$NS' && cp '$TMP/alpha' '$NS/prog' && exec '$NS/prog'\"" \
		> "$TMP/ns.out" 2>&1 &
	NS_UPID=$!
	i=0
	while ! grep -q ready "$TMP/ns.out" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	NS_PID=$(tr -d ' \n' < /proc/$NS_UPID/task/$NS_UPID/children 2>/dev/null)
fi

# --- the defaults: --call-graph auto says which and why ------------------
agent_start
if [ -n "$APORT" ] &&
   grep -qE "call-graph auto: (bpf-defer|sframe) \(" "$TMP/agent.err" &&
   kill -INT "$AGENT_PID" && agent_end 15 && [ "$rc" -eq 0 ]; then
	pass "agent: default auto mode says which and why; SIGINT ends it"
else
	fail "agent: default auto mode says which and why; SIGINT ends it"
	echo "  exit ${rc:-?}"
	sed 's/^/  /' "$TMP/agent.err" | head -10
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID"
	AGENT_PID=
fi

# --- the agent the checks pull from -------------------------------------
# sframe: unwinding in the agent itself, so that the checks do not
# depend on how fast bpf-defer's tables follow the programs that other
# jobs start on this machine (run-bpf-*.sh test bpf-defer).
$PDEATH "$WORK" 120 > "$TMP/work.out" 2>&1 &
WPID=$!
agent_start -F 199 --interval 2 --call-graph sframe
if [ -z "$APORT" ]; then
	for n in $(seq 16); do fail "agent: (did not start)"; done
	sed 's/^/  /' "$TMP/agent.err" | head -10
	exit 0
fi
URL=http://127.0.0.1:$APORT
# the first window closed: every running program's tables were read
i=0
while [ $i -lt 300 ] && ! curl -s "$URL/metrics" |
      grep -q '^sfprof_agent_windows_total [1-9]'; do
	sleep 0.1
	i=$((i + 1))
done

# -top of the workload alone: its hot function first
go tool pprof -timeout 60 -top -sample_index=samples \
	"$URL/debug/pprof/profile?seconds=3&pid=$WPID" > "$TMP/top.out" 2>&1
first=$(awk 'p && NF { print $NF; exit } /flat%/ { p = 1 }' "$TMP/top.out")
case $first in
agent_hot*) pass "agent: go tool pprof -top names the hot function first" ;;
*)	fail "agent: go tool pprof -top names the hot function first"
	head -14 "$TMP/top.out" | sed 's/^/  /' ;;
esac

# -traces: samples per trace (sample_index=samples), which reach main,
# which run agent_hot called from agent_cmp through qsort
traces() {
	awk '
	/^-+\+-+/ { flush(); next }
	/^ *[0-9]+ +[^ ]/ && !v { v = $1; f[++n] = $2; next }
	v && NF == 1 { f[++n] = $1 }
	function flush(   i, j, q) {
		if (v) {
			total += v
			for (i = 1; i <= n; i++) if (f[i] == "main") { m += v; break }
			# agent_hot <- agent_cmp <- ... qsort ... <- agent_sort_loop <- main
			if (f[1] ~ /^agent_hot/ && f[2] == "agent_cmp") {
				for (j = 3; j <= n; j++) {
					if (f[j] ~ /qsort/) q = 1
					if (q && f[j] == "agent_sort_loop") { cb += v; break }
				}
			}
		}
		v = 0; n = 0
	}
	END { flush(); printf "%d %d %d\n", total, m, cb }' "$1"
}
go tool pprof -timeout 60 -traces -sample_index=samples \
	"$URL/debug/pprof/profile?seconds=3&pid=$WPID" > "$TMP/traces.out" 2>&1
set -- $(traces "$TMP/traces.out")
if [ "${1:-0}" -ge 20 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "agent: go tool pprof -traces: >= 99 % of the samples reach main"
else
	fail "agent: go tool pprof -traces: >= 99 % of the samples reach main"
	echo "  ${1:-0} samples, ${2:-0} reach main"
	head -30 "$TMP/traces.out" | sed 's/^/  /'
fi
if [ "${3:-0}" -gt 0 ] && [ $(($3 * 2)) -ge "${1:-0}" ]; then
	pass "agent: the hot function is reached through qsort's callback"
else
	fail "agent: the hot function is reached through qsort's callback"
	echo "  ${1:-0} samples, ${3:-0} agent_hot <- agent_cmp <- qsort"
fi
# the pull's pid= filter: every trace is of that pid, and the profile go
# tool pprof saved maps no other program (the workload, its libraries,
# the kernel); without the filter the agent itself, compilers and shells
# of the machine come in
trace_label "$TMP/traces.out" pid | sort | uniq -c > "$TMP/traces.pids"
other=$(other_mappings "$TMP/traces.out" "$(readlink -f "$WORK")" | sort -u)
if [ "$(awk '{ print $2 }' "$TMP/traces.pids")" = "$WPID" ] && [ -z "$other" ]; then
	pass "agent: the pull's pid= filter: all $(awk '{ print $1 }' "$TMP/traces.pids") traces carry pid $WPID, no other program mapped"
else
	fail "agent: the pull's pid= filter: every trace carries pid $WPID, no other program mapped"
	echo "  traces per pid label (want only $WPID):"
	sed 's/^/    /' "$TMP/traces.pids" | head -5
	echo "$other" | head -5 | sed 's/^/  other mapping: /'
fi

# Build-ids come from the files (the agent asks the kernel for none: with
# attr.build_id set by anyone, perf 6.1's own perf record aborts), so a
# perf record beside the agent runs, and the mappings carry what readelf
# reads in the workload and its libc.
curl -sf -o "$TMP/raw.pb.gz" "$URL/debug/pprof/profile?seconds=3&pid=$WPID" &
PULL=$!
if command -v perf > /dev/null; then
	sleep 1
	perf record -q -o "$TMP/beside.data" -- /bin/true > "$TMP/beside.out" 2>&1
	prc=$?
	if [ $prc -eq 0 ]; then
		pass "agent: perf record beside the agent runs (exit 0)"
	else
		fail "agent: perf record beside the agent runs (exit 0)"
		echo "  perf exit $prc"
		tail -3 "$TMP/beside.out" | sed 's/^/  /'
	fi
else
	skip "agent: perf record beside the agent runs (exit 0)" "perf is not installed (make deps)"
fi
wait $PULL
go tool pprof -raw "$TMP/raw.pb.gz" > "$TMP/raw.txt" 2>&1
# "N: start/limit/offset PATH BUILD-ID [FN]" for a mapping with one
raw_id() {
	awk -v f="$1" '/^Mappings/ { m = 1; next } m && $3 == f { print $4; exit }' "$TMP/raw.txt"
}
elf_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}
LIBC=$(awk '/^Mappings/ { m = 1; next } m && $3 ~ /\/libc\.so\.6$/ { print $3; exit }' "$TMP/raw.txt")
wid=$(raw_id "$(readlink -f "$WORK")")
cid=$(raw_id "$LIBC")
if [ -n "$wid" ] && [ "$wid" = "$(elf_id "$WORK")" ] &&
   [ -n "$cid" ] && [ "$cid" = "$(elf_id "$LIBC")" ]; then
	pass "agent: mappings carry the files' build-ids (readelf's)"
else
	fail "agent: mappings carry the files' build-ids (readelf's)"
	echo "  workload ${wid:-none} (readelf $(elf_id "$WORK")), libc ${cid:-none} at ${LIBC:-?} (readelf $(elf_id "$LIBC"))"
	sed -n '/^Mappings/,$p' "$TMP/raw.txt" | head -8 | sed 's/^/  /'
fi

# /metrics through the Prometheus client's parser
curl -sf "$URL/metrics" > "$TMP/metrics.txt"
if /usr/bin/python3 - "$TMP/metrics.txt" > "$TMP/metrics.out" 2>&1 <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
# (the parser names a counter's family without _total, its samples with)
samples = [s for f in fams for s in f.samples]
def val(name, **labels):
    for s in samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise SystemExit("no sample of %s %s" % (name, labels))
assert val("sfprof_agent_samples_total") > 0, "no samples"
assert val("sfprof_agent_windows_total") >= 1, "no window closed"
assert val("sfprof_agent_resident_memory_bytes") > 0
assert val("sfprof_agent_cpu_seconds_total") > 0
val("sfprof_agent_unwind_stops_total", reason="outermost")
val("sfprof_agent_lost_samples_total")
# tables are built off the reading loop, which says how far it trails
assert val("sfprof_agent_unwind_tables_built_total") > 0, "no table built"
for n in ("sfprof_agent_lag_seconds", "sfprof_agent_lag_max_seconds",
          "sfprof_agent_window_lateness_seconds",
          "sfprof_agent_window_lateness_max_seconds",
          "sfprof_agent_windows_late_total",
          "sfprof_agent_unwind_tables_pending",
          "sfprof_agent_unwind_tables_reused_total",
          "sfprof_agent_unwind_tables_expired_total",
          "sfprof_agent_unwind_tables_idle",
          "sfprof_agent_unwind_tables_idle_bytes",
          "sfprof_agent_unwinds_before_table_total"):
    val(n)
print("ok", len(fams), "families")
EOF
then
	pass "agent: /metrics parses (prometheus_client) with the counters"
else
	fail "agent: /metrics parses (prometheus_client) with the counters"
	sed 's/^/  /' "$TMP/metrics.out" | tail -5
fi
if [ "$(curl -s "$URL/healthz")" = ok ] &&
   [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/profile?seconds=x")" = 400 ] &&
   [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/offcpu?seconds=1")" = 404 ]; then
	pass "agent: /healthz, a bad ?seconds= is a 400, /debug/pprof/offcpu without --off-cpu a 404"
else
	fail "agent: /healthz, a bad ?seconds= is a 400, /debug/pprof/offcpu without --off-cpu a 404"
fi

# short-lived processes: the agent takes them up, and their state goes
# with them
procs() {
	curl -s "$URL/metrics" | awk '$1 == "sfprof_agent_processes" { print $2 }'
}
windows() {
	curl -s "$URL/metrics" | awk '$1 == "sfprof_agent_windows_total" { print $2 }'
}
before=$(procs)
# the positive control: 200 alive together raise the count
proc_wave 200
if [ -n "$WAVE_BASE" ] && [ "$WAVE_PEAK" -ge $((WAVE_BASE + 100)) ]; then
	pass "agent: 200 processes alive together raise the processes tracked from $WAVE_BASE to $WAVE_PEAK"
else
	fail "agent: 200 processes alive together raise the processes tracked by 100 at least (${WAVE_BASE:-?} to ${WAVE_PEAK:-?})"
fi
sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i + 1)); done'
w=$(windows)
i=0
while [ "$(windows)" = "$w" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
after=$(procs)
if [ -n "$before" ] && [ -n "$after" ] && [ "$after" -le $((before + 100)) ]; then
	pass "agent: 1000 short-lived processes and the 200 leave no state behind ($before tracked before, $after after)"
else
	fail "agent: 1000 short-lived processes and the 200 leave no state behind"
	echo "  processes tracked: ${before:-?} before, ${after:-?} after"
fi
# a program new to the agent and gone before the pull of its pid ends:
# 200 ms of CPU time at 199 Hz is about 40 samples; its frames named
# (the agent took up its maps); every trace of its pid
short_pull 10 200
n=$(trace_samples "$TMP/short.traces")
pids=$(trace_label "$TMP/short.traces" pid | sort -u | tr '\n' ' ')
if [ "$n" -ge 10 ] && [ "$pids" = "$SHORT_PID_WAS " ] &&
   grep -q 'agent_hot\|agent_sort_loop' "$TMP/short.traces"; then
	pass "agent: a short-lived program pulled by its pid: $n samples, all of its pid, its functions named"
else
	fail "agent: a short-lived program pulled by its pid: ${n:-0} samples (want >= 10), pids ${pids:-none} (want $SHORT_PID_WAS), named"
	head -20 "$TMP/short.traces" | sed 's/^/  /'
fi

# the container
if [ -z "$NS_PID" ]; then
	skip "agent: container process unwound and named" "unshare --mount --pid or gcc not usable here"
	skip "agent: container process labeled with its container id" "no container process"
else
	go tool pprof -timeout 60 -traces -sample_index=samples \
		"$URL/debug/pprof/profile?seconds=3&pid=$NS_PID" > "$TMP/ns.traces" 2>&1
	set -- $(traces "$TMP/ns.traces")
	# of that pid alone (the pull's pid= filter): its traces, its file
	# (the program on the tmpfs only it sees, under that path)
	nspids=$(trace_label "$TMP/ns.traces" pid | sort -u | tr '\n' ' ')
	nsother=$(other_mappings "$TMP/ns.traces" "$NS/prog" | sort -u)
	if [ "${1:-0}" -ge 10 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] &&
	   grep -q "alpha_leaf" "$TMP/ns.traces" &&
	   [ "$nspids" = "$NS_PID " ] && [ -z "$nsother" ]; then
		pass "agent: container process unwound and named; every trace of its pid, no other program mapped"
	else
		fail "agent: container process unwound and named; every trace of its pid, no other program mapped"
		echo "  ${1:-0} samples, ${2:-0} reach main; pids ${nspids:-none} (want $NS_PID)"
		echo "$nsother" | head -5 | sed 's/^/  other mapping: /'
		head -30 "$TMP/ns.traces" | sed 's/^/  /'
	fi
	nscid=$(trace_label "$TMP/ns.traces" container_id | sort -u | tr '\n' ' ')
	if [ -z "$CG" ]; then
		skip "agent: container process labeled with its container id" "no writable cgroup v2 here"
	elif [ "$nscid" = "$CID " ]; then
		pass "agent: container process labeled with its container id (every trace)"
	else
		fail "agent: container process labeled with its container id (every trace)"
		echo "  container_id labels: $nscid"
		grep -m3 -i "container\|service" "$TMP/ns.traces" | sed 's/^/  /'
	fi
fi

# SIGTERM: out within the deadline (5 s for the sinks, plus the rest)
kill -TERM "$AGENT_PID"
if agent_end 15 && [ "$rc" -eq 0 ]; then
	pass "agent: SIGTERM ends it within 15 s, exit 0"
else
	fail "agent: SIGTERM ends it within 15 s, exit 0"
	echo "  exit $rc"
	tail -5 "$TMP/agent.err" | sed 's/^/  /'
fi

# A program that starts while the agent idles (its loop asleep for up to a
# second): the BPF side's miss of the new module's table wakes the loop,
# so the table is asked for at once and the program's stacks are whole
# from its first samples.  With a loop that only woke on its own, the
# program's first second would be stepped by frame pointer and cut short.
# Where the system says bpf-defer loads (bpf_defer_expected), the agent
# must have chosen it; elsewhere the check is skipped.
cp "$WORK" "$TMP/idle-work"	# its own service name, a module new to the agent
if ! bpf_defer_expected; then
	skip "agent: a program started while the agent idles" "$BPF_WHY"
elif agent_start -F 199 --interval 60 --output-dir "$TMP/idle" &&
     [ -n "$APORT" ] && grep -q "call-graph auto: bpf-defer" "$TMP/agent.err"; then
	sleep 5
	"$TMP/idle-work" 2 > /dev/null
	sleep 0.5
	kill -INT "$AGENT_PID"
	# agent_end's own status: not 0 on a time-out or a sanitizer report
	agent_end 15
	aend=$?
	f=$(ls "$TMP/idle/"*idle-work*.pb.gz 2>/dev/null | head -1)
	go tool pprof -traces -sample_index=samples "$f" > "$TMP/idle.traces" 2>&1
	set -- $(traces "$TMP/idle.traces")
	if [ "${1:-0}" -ge 100 ] && [ "$1" -le 460 ] &&
	   [ $(($2 * 100)) -ge $(($1 * 97)) ] && [ "$aend" = 0 ] && [ "$rc" = 0 ]; then
		pass "agent: a program started while the agent idles: $2 of $1 samples reach main; SIGINT ends the agent, exit 0"
	else
		fail "agent: a program started while the agent idles: ${2:-0} of ${1:-0} samples reach main (< 97 %); SIGINT ends the agent (exit $rc, agent_end $aend)"
		grep -E -A3 'runtime error:|Sanitizer' "$TMP/agent.err" | head -8 | sed 's/^/  /'
	fi
else
	fail "agent: a program started while the agent idles (no agent in bpf-defer mode)"
	tail -5 "$TMP/agent.err" | sed 's/^/  /'
	[ -n "$AGENT_PID" ] && kill -INT "$AGENT_PID" && agent_end 15
fi

# One file's processes one after another (a build host's compiler loop):
# the first's unwind table is kept after it exits and taken up by the
# next, not decoded again -- one load for four runs (the agent's debug
# line per load), and the metrics say so.  A copy of the workload whose
# build-id has one byte changed: a file of its own that no other process
# holds, named by a build-id wherever and whenever its records are read
# (the agent reads a mapped inode's build-id once, while its first
# process lives: that one runs 3 s, the others 0.3 s).  The workload runs
# beside them, so that the agent handles records as they come.
BID=$(readelf -n "$WORK" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1)
if [ -z "$BID" ] || ! python3 - "$WORK" "$TMP/aw-seq" "$BID" <<'PYEOF'
import sys, os
src, dst, bid = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
data = bytearray(open(src, "rb").read())
at = data.find(bid)
if at < 0 or data.find(bid, at + 1) >= 0:
    sys.exit("build-id not found exactly once")
data[at + len(bid) - 1] ^= 0xff
open(dst, "wb").write(data)
os.chmod(dst, 0o755)
PYEOF
then
	fail "agent: four runs of one program one after another (no copy with a build-id of its own: ${BID:-no build-id})"
elif agent_start -v -F 199 --interval 2 --call-graph sframe && [ -n "$APORT" ]; then
	$PDEATH "$WORK" 20 > /dev/null 2>&1 &
	busy=$!
	sleep 0.5
	r0=$(metric sfprof_agent_unwind_tables_reused_total)
	for t in 3000 300 300 300; do
		"$TMP/aw-seq" cpu${t}ms > /dev/null 2>&1
		sleep 1.5
	done
	r1=$(metric sfprof_agent_unwind_tables_reused_total)
	kill "$busy" 2>/dev/null
	wait "$busy" 2>/dev/null
	kill -INT "$AGENT_PID"
	agent_end 15
	aend=$?
	nbid=$(readelf -n "$TMP/aw-seq" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1)
	loads=$(grep -c "debug: module $TMP/aw-seq (build-id $nbid) loaded" "$TMP/agent.err")
	if [ "$loads" = 1 ] && [ $((${r1:-0} - ${r0:-0})) -ge 1 ] &&
	   [ "$aend" = 0 ] && [ "$rc" = 0 ]; then
		pass "agent: four runs of one program one after another: its unwind table loaded once (build-id $nbid), kept between runs ($((r1 - r0)) tables taken up again meanwhile)"
	else
		fail "agent: four runs of one program one after another: its unwind table loaded ${loads:-?} times (want 1), tables taken up again ${r0:-?} -> ${r1:-?} (exit $rc, agent_end $aend)"
		grep "debug: module $TMP/aw-seq" "$TMP/agent.err" | head -5 | sed 's/^/  /'
	fi
else
	fail "agent: four runs of one program one after another (the agent did not start)"
	tail -5 "$TMP/agent.err" | sed 's/^/  /'
fi
