#!/bin/sh
# `--call-graph bpf-defer` on a kernel that refuses it, as a feature: the
# reason in one line, the kernel's own, and the documented fallback
# (docs/record-bpf.md): record goes on with sframe (complete stacks),
# auto says sframe and why in its one line, --off-cpu takes the
# tracepoint path, the agent samples with sframe; the whole verifier log
# only with -v.
#
# Whether and why this kernel refuses is the system's answer, never
# sfprof's: no BTF (/sys/kernel/btf/vmlinux), no task_work kfunc
# (/proc/kallsyms), or the kernel's verifier refusing a minimal perf_event
# program that schedules a task_work callback (tests/progs/task-work-
# probe.bpf.c, loaded with bpftool: 6.18.44 here, "sleepable callback in
# a program that is not sleepable").  The verifier's reason sfprof names
# must be the one the kernel gave the probe.  A kernel that takes the
# probe skips here: bpf-defer loads there, and run-bpf-*.sh test it.
# checks: 7
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/agent-subr.sh"

NOFP=$SFP_BUILD/tests/progs/bpf-deep
OW=$SFP_BUILD/tests/progs/offcpu-work
NAMES="record bpf-defer: says why, falls back to sframe
record bpf-defer: the fallback's stacks are complete
record -v: the verifier's whole log
auto: sframe, one line with the reason
--off-cpu bpf-defer: the tracepoint path, with the reason
agent bpf-defer: says why, samples with sframe
agent auto: sframe, one line with the reason"

# every check, skipped (or failed) for one reason
all() {
	echo "$NAMES" | while read -r t; do
		if [ "$1" = skip ]; then
			skip "bpf refused: $t" "$2"
		else
			fail "bpf refused: $t ($2)"
		fi
	done
	exit 0
}

# What the system refuses, and the message the loader must give for it.
if [ "$(id -u)" != 0 ]; then
	all skip "not root: not allowed to load BPF at all (run-bpf-auto.sh checks that message)"
elif [ ! -r /sys/kernel/btf/vmlinux ]; then
	kind=btf
	WANT="bpf-defer: the kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF): use --call-graph sframe"
elif ! grep -q " bpf_task_work_schedule_resume_impl\$" /proc/kallsyms; then
	kind=kfunc
	WANT="bpf-defer: this kernel lacks BPF task_work (kfunc bpf_task_work_schedule_resume_impl, Linux 6.18+): use --call-graph sframe"
elif ! command -v bpftool > /dev/null; then
	all skip "no bpftool to ask the kernel's verifier"
elif task_work_refused; then
	kind=verifier
	# the kernel's reason, as its log to the probe says it: the kfunc's
	# line and the one before it (why its callback failed)
	K=$(printf '%s\n' "$TW_PROBE_LOG" | grep 'failed callback verification$' | tail -1)
	P=$(printf '%s\n' "$TW_PROBE_LOG" | grep -B1 -xF "$K" | head -1)
	WANT="bpf-defer: the kernel's verifier rejected the BPF program: $K: $P ("
elif [ "${TW_PROBE_RC:-x}" = 0 ]; then
	all skip "this kernel's verifier takes a task_work callback in a perf_event program: bpf-defer loads here (run-bpf-defer.sh)"
else
	all fail "the verifier probe (bpftool prog load task-work-probe.bpf.o) failed otherwise, exit ${TW_PROBE_RC:-not run}: $(printf '%s\n' "$TW_PROBE_LOG" | grep -v '^[0-9;]' | tail -3 | tr '\n' ' ')"
fi

# Samples in the workers' code whose stack reaches start_thread, of all.
complete_workers() {
	sfp script -i "$1" 2>/dev/null | awk '
	/cpu-clock:/{if (w) { n++; if (s) f++ } w=0; s=0; next}
	/worker_/{w=1} /start_thread/{s=1}
	END{if (w) { n++; if (s) f++ } print n+0, f+0}'
}

# --- record --call-graph bpf-defer ---------------------------------------
sfp record --call-graph bpf-defer -o "$TMP/d.data" -- "$NOFP" threads 500 \
	> "$TMP/d.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qF "sfprof: $WANT" "$TMP/d.out" &&
   [ "$(grep -c '^sfprof: bpf-defer: ' "$TMP/d.out")" = 1 ] &&
   grep -q "use --call-graph sframe" "$TMP/d.out" &&
   grep -q "^sfprof: bpf-defer is not available here (.*): falling back to --call-graph sframe$" "$TMP/d.out" &&
   grep -q "call graph: sframe" "$TMP/d.out" &&
   ! grep -q "BEGIN PROG LOAD LOG" "$TMP/d.out"; then
	pass "bpf refused: record bpf-defer says why ($kind), falls back to sframe"
else
	fail "bpf refused: record bpf-defer says why ($kind), falls back to sframe (exit $rc)"
	echo "  want: sfprof: $WANT"
	head -6 "$TMP/d.out" | sed 's/^/  /'
fi
set -- $(complete_workers "$TMP/d.data")
if [ "$1" -gt 100 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "bpf refused: record bpf-defer: the fallback's stacks are complete in $2 of $1 worker samples"
else
	fail "bpf refused: record bpf-defer: the fallback's stacks are complete in $2 of $1 worker samples"
fi

# --- -v: the whole log (the kernel's lines, as it gave them) ---------------
if [ $kind = verifier ]; then
	sfp record -v --call-graph bpf-defer -o "$TMP/v.data" -- true > "$TMP/v.out" 2>&1
	sed -n "/prog 'on_sample': -- BEGIN PROG LOAD LOG --/,/-- END PROG LOAD LOG --/p" \
		"$TMP/v.out" > "$TMP/v.log"
	if grep -qxF "sfprof: debug: $P" "$TMP/v.log" &&
	   grep -qxF "sfprof: debug: $K" "$TMP/v.log" &&
	   [ "$(grep -xF -A1 "sfprof: debug: $P" "$TMP/v.log" | tail -1)" = "sfprof: debug: $K" ]; then
		pass "bpf refused: record -v gives the verifier's whole log on on_sample, the reason's lines in it"
	else
		fail "bpf refused: record -v gives the verifier's whole log on on_sample, the reason's lines in it"
		grep -v "debug: [0-9;]" "$TMP/v.out" | head -8 | sed 's/^/  /'
	fi
else
	skip "bpf refused: record -v: the verifier's whole log" "refused before the verifier ($kind)"
fi

# --- auto ------------------------------------------------------------------
sfp record --call-graph auto -o "$TMP/a.data" -- "$NOFP" threads 300 > "$TMP/a.out" 2>&1
rc=$?
line=$(grep "^sfprof: --call-graph auto:" "$TMP/a.out")
if [ $rc -eq 0 ] && [ "$(grep -c "^sfprof: --call-graph auto:" "$TMP/a.out")" = 1 ] &&
   echo "$line" | grep -q "^sfprof: --call-graph auto: sframe (" &&
   echo "$line" | grep -qF "bpf-defer not available: $WANT" &&
   ! grep -q "^sfprof: bpf-defer" "$TMP/a.out" &&
   grep -q "chosen by --call-graph auto: sframe (" "$TMP/a.out" &&
   grep -q "call graph: sframe" "$TMP/a.out"; then
	pass "bpf refused: auto: sframe, one line with the reason"
else
	fail "bpf refused: auto: sframe, one line with the reason (exit $rc)"
	head -4 "$TMP/a.out" | sed 's/^/  /'
fi

# --- --off-cpu: the tracepoint path, whose blocks have their stacks -------
sfp record --off-cpu --call-graph bpf-defer -o "$TMP/o.data" -- "$OW" \
	> "$TMP/o.out" 2>&1
rc=$?
naps=$(sfp script -i "$TMP/o.data" 2>/dev/null | awk '
	/offcpu-time:/{o=1; next} /^$/{o=0} o && / nap\+/{n++} END{print n+0}')
if [ $rc -eq 0 ] && grep -qF "sfprof: $WANT" "$TMP/o.out" &&
   grep -q "^sfprof: --off-cpu: sched:sched_switch tracepoint .*(bpf-defer did not load, see above)$" "$TMP/o.out" &&
   [ "$naps" -ge 1 ]; then
	pass "bpf refused: --off-cpu bpf-defer takes the tracepoint path, says why; nap() blocked in $naps off-CPU stacks"
else
	fail "bpf refused: --off-cpu bpf-defer takes the tracepoint path, says why (exit $rc, $naps stacks in nap())"
	grep "^sfprof:" "$TMP/o.out" | head -4 | sed 's/^/  /'
fi

# --- the agent ---------------------------------------------------------------
# sfprof_agent_info of /metrics once it names the mode (the agent's first
# snapshot of its figures; until then call_graph="", 60 s at most)
agent_info() {
	_i=0
	while :; do
		info=$(curl -s "http://127.0.0.1:$APORT/metrics" | grep '^sfprof_agent_info{')
		case $info in
		*'call_graph=""'*|'') ;;
		*) return 0 ;;
		esac
		[ $_i -ge 600 ] && return 1
		kill -0 "$AGENT_PID" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}

agent_start -F 49 --call-graph bpf-defer
agent_info
if [ -n "$APORT" ] && grep -qF "sfprof: $WANT" "$TMP/agent.err" &&
   grep -q "^sfprof: bpf-defer is not available here (.*): falling back to --call-graph sframe$" "$TMP/agent.err" &&
   echo "$info" | grep -q 'call_graph="sframe"' &&
   kill -INT "$AGENT_PID" && agent_end 20 && [ "$rc" -eq 0 ]; then
	pass "bpf refused: agent bpf-defer says why, samples with sframe (/metrics)"
else
	fail "bpf refused: agent bpf-defer says why, samples with sframe (exit ${rc:-?})"
	echo "  /metrics: $info"
	head -5 "$TMP/agent.err" | sed 's/^/  /'
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID"
	AGENT_PID=
fi

agent_start -F 49
agent_info
line=$(grep "^sfprof: --call-graph auto:" "$TMP/agent.err")
if [ -n "$APORT" ] && echo "$line" | grep -q "^sfprof: --call-graph auto: sframe (" &&
   echo "$line" | grep -qF "bpf-defer not available: $WANT" &&
   ! grep -q "^sfprof: bpf-defer" "$TMP/agent.err" &&
   echo "$info" | grep -q 'call_graph="sframe"' &&
   kill -INT "$AGENT_PID" && agent_end 20 && [ "$rc" -eq 0 ]; then
	pass "bpf refused: agent auto: sframe, one line with the reason"
else
	fail "bpf refused: agent auto: sframe, one line with the reason (exit ${rc:-?})"
	echo "  /metrics: $info"
	head -5 "$TMP/agent.err" | sed 's/^/  /'
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID"
	AGENT_PID=
fi
