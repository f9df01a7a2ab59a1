#!/bin/sh
# sfprof agent under a supervisor's signals: SIGHUP delivers the open window
# and the agent goes on sampling; SIGTERM delivers the last one and ends it.
# The window is an hour long, so only the signals close windows here:
#  - each SIGHUP writes one more profile into --output-dir, with samples,
#    and the agent is still sampling afterwards (sfprof_agent_samples_total
#    grows past the SIGHUP);
#  - /metrics counts the SIGHUP windows;
#  - SIGTERM exits 0 without a sanitizer report and writes the last window;
#  - the samples in the three files add up to the samples the agent says it
#    kept: no window, and no sample, lost to a signal.
# Needs root (system-wide sampling), protoc and the upstream pprof schema.
# checks: 5
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
CHECK=$HERE/push-check.py
NCHECKS=5

if [ "$(id -u)" != 0 ]; then
	for i in $(seq $NCHECKS); do skip "agent SIGHUP $i" "needs root for system-wide sampling"; done
	exit 0
fi
if ! command -v protoc > /dev/null || ! command -v python3 > /dev/null ||
   [ ! -f "$PROTO/pprof/profile.proto" ]; then
	for i in $(seq $NCHECKS); do skip "agent SIGHUP $i" "protoc, python3 or $PROTO missing (make deps)"; done
	exit 0
fi
. "$HERE/push-subr.sh"
. "$HERE/agent-subr.sh"

WORK=$SFP_BUILD/tests/progs/agent-work
FREQ=199
$PDEATH "$WORK" 600 > "$TMP/work.out" 2>&1 &
WPID=$!
agent_start --pid "$WPID" -F $FREQ --interval 1h --call-graph sframe \
	--output-dir "$TMP/files"
if [ -z "$APORT" ]; then
	for i in $(seq $NCHECKS); do fail "agent SIGHUP: the agent did not start"; done
	sed 's/^/  /' "$TMP/agent.err" | head -10
	exit 0
fi

# nfiles: the finished profiles in the output directory
nfiles() {
	find "$TMP/files" -maxdepth 1 -type f -name '*.pb.gz' 2>/dev/null | wc -l
}
# wait_files N: until N profiles are there (60 s at most)
wait_files() {
	_i=0
	while [ "$(nfiles)" -lt "$1" ] && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(nfiles)" -ge "$1" ]
}

# Two SIGHUPs, each after the workload has been sampled a while.
ok=1
for n in 1 2; do
	before=$(metric sfprof_agent_samples_kept_total)
	wait_metric sfprof_agent_samples_kept_total $((${before:-0} + 50)) || ok=0
	kill -HUP "$AGENT_PID" 2>/dev/null
	wait_files $n || ok=0
	# still sampling after the signal
	after=$(metric sfprof_agent_samples_total)
	wait_metric sfprof_agent_samples_total $((${after:-0} + 20)) || ok=0
done
if [ $ok = 1 ] && kill -0 "$AGENT_PID" 2>/dev/null && [ "$(nfiles)" = 2 ]; then
	pass "agent SIGHUP: each of 2 SIGHUPs wrote its window into --output-dir; the agent sampled on after each"
else
	fail "agent SIGHUP: each SIGHUP writes its window and the agent samples on"
	echo "  files $(nfiles); agent $(kill -0 "$AGENT_PID" 2>/dev/null && echo alive || echo gone)"
	tail -5 "$TMP/agent.err" | sed 's/^/  /'
fi

hups=$(metric sfprof_agent_windows_sighup_total)
wins=$(metric sfprof_agent_windows_total)
if [ "$hups" = 2 ] && [ "$wins" = 2 ]; then
	pass "agent SIGHUP: /metrics counts the 2 windows SIGHUP closed"
else
	fail "agent SIGHUP: /metrics counts the windows SIGHUP closed"
	echo "  sfprof_agent_windows_sighup_total=${hups:-?} sfprof_agent_windows_total=${wins:-?}"
fi

# SIGTERM after a few more samples: the last window, then exit 0.
before=$(metric sfprof_agent_samples_kept_total)
wait_metric sfprof_agent_samples_kept_total $((${before:-0} + 50))
kill -TERM "$AGENT_PID" 2>/dev/null
if agent_end 60 && [ "$rc" = 0 ]; then
	pass "agent SIGHUP: SIGTERM afterwards ends the agent (exit 0, no sanitizer report)"
else
	fail "agent SIGHUP: SIGTERM ends the agent (exit $rc)"
	tail -10 "$TMP/agent.err" | sed 's/^/  /'
fi
if [ "$(nfiles)" = 3 ]; then
	pass "agent SIGHUP: SIGTERM wrote the third window"
else
	fail "agent SIGHUP: SIGTERM wrote the third window ($(nfiles) files)"
fi

# Every sample the agent kept is in one of the files.
kept=$(sed -n 's/^sfprof agent: [0-9]* samples, \([0-9]*\) kept.*/\1/p' "$TMP/agent.err")
: > "$TMP/stacks"
ok=1
for f in "$TMP/files"/*.pb.gz; do
	[ -f "$f" ] || continue
	if ! decode_pprof "$f" "$f.txt"; then
		ok=0
		sed 's/^/  /' "$f.txt.err" | head -3
		continue
	fi
	python3 "$CHECK" stacks-pprof "$f.txt" >> "$TMP/stacks" || ok=0
done
got=$(awk -F'\t' '$1 == "samples/count" { s += $3 } END { printf "%.0f\n", s }' "$TMP/stacks")
if [ $ok = 1 ] && [ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$got" = "$kept" ]; then
	pass "agent SIGHUP: the 3 files hold all $kept samples the agent kept (protoc decodes them)"
else
	fail "agent SIGHUP: the files hold every sample the agent kept"
	echo "  kept ${kept:-?}, in the files $got"
fi
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
exit 0
