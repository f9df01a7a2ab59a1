# Shared by the agent's test scripts (run-agent*.sh): an agent started in
# the background, its /metrics read, its end awaited, and no agent, no
# workload and no test backend outliving the script.  Needs test-subr.sh
# sourced (SFPROF, TMP).  A script with more to clean sets EXTRA_CLEANUP
# to a function's name.
AGENT_PID=
APORT=
WPID=
SRV_PID=
EXTRA_CLEANUP=
agent_cleanup() {
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID" 2>/dev/null
	[ -n "$WPID" ] && kill -9 "$WPID" 2>/dev/null
	[ -s "$TMP/wave.pids" ] && kill -9 $(cat "$TMP/wave.pids") 2>/dev/null
	[ -s "$TMP/short.pid" ] && kill -9 $(cat "$TMP/short.pid") 2>/dev/null
	[ -n "$SRV_PID" ] && kill -9 "$SRV_PID" 2>/dev/null
	[ -n "$EXTRA_CLEANUP" ] && $EXTRA_CLEANUP
	rm -rf "$TMP"
}
trap agent_cleanup EXIT
# killed (the harness's timeout, ^C): still through the cleanup, so that no
# agent is left sampling the machine
trap 'exit 130' INT TERM HUP
# and killed by SIGKILL, where no trap runs: the kernel ends the agent
# with this shell (PR_SET_PDEATHSIG, kept across the exec)
PDEATH=
if setpriv --pdeathsig KILL true 2>/dev/null; then
	PDEATH="setpriv --pdeathsig KILL"
fi

# agent_start ARGS...: the agent (listening on a free port) in the
# background until it samples; AGENT_PID, and APORT (empty when it did
# not start).  Its stderr: $TMP/agent.err.
agent_start() {
	# a fresh file before the agent starts: the background redirection
	# truncates it only once the shell forked, and a check before that
	# would read the last agent's "sampling" line and port
	: > "$TMP/agent.err"
	$PDEATH "$SFPROF" agent --listen 127.0.0.1:0 "$@" \
		> "$TMP/agent.out" 2> "$TMP/agent.err" &
	AGENT_PID=$!
	_i=0
	while ! grep -q "sampling every CPU" "$TMP/agent.err" &&
	      [ $_i -lt 600 ] && kill -0 "$AGENT_PID" 2>/dev/null; do
		sleep 0.1
		_i=$((_i + 1))
	done
	APORT=$(sed -n 's/.*(port \([0-9][0-9]*\)).*/\1/p' "$TMP/agent.err")
}

# agent_end SECONDS: the agent gone by then, without a sanitizer report?
# rc: its exit status, or "timeout".
agent_end() {
	_i=0
	while kill -0 "$AGENT_PID" 2>/dev/null && [ $_i -lt $(($1 * 10)) ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if kill -0 "$AGENT_PID" 2>/dev/null; then
		rc=timeout
		return 1
	fi
	wait "$AGENT_PID"
	rc=$?
	AGENT_PID=
	! grep -qE 'runtime error:|Sanitizer' "$TMP/agent.err"
}

# metric NAME [SINK]: a value from the agent's /metrics (a sink's label
# is its kind and where it delivers: sink="pyroscope http://...")
metric() {
	curl -s "http://127.0.0.1:$APORT/metrics" |
		awk -v n="$1" -v s="$2" '
		s == "" && $1 == n { print $2; exit }
		s != "" && $1 == n "{sink=\"" s { print $NF; exit }'
}

# wait_metric NAME MIN [SINK] [SECONDS]: until NAME >= MIN (60 s at most)
wait_metric() {
	_i=0
	while [ "$(metric "$1" "$3" | cut -d. -f1)" -lt "$2" ] 2>/dev/null ||
	      [ -z "$(metric "$1" "$3")" ]; do
		[ $_i -ge $((${4:-60} * 10)) ] && return 1
		kill -0 "$AGENT_PID" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}

# tables_ready [SAMPLES]: the agent kept SAMPLES (100) samples and no
# unwind table is pending (60 s at most each): from here on the stacks of
# the programs it has seen are whole.  Before, an unwind whose table is
# still being built stops early (said: sfprof_agent_unwinds_before_table_
# total), which a check of whole stacks must not count, and which on a
# loaded machine takes seconds.
tables_ready() {
	wait_metric sfprof_agent_samples_kept_total "${1:-100}" || return 1
	_i=0
	while [ "$(metric sfprof_agent_unwind_tables_pending)" != 0 ]; do
		[ $_i -ge 600 ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}

# proc_wave N: N processes (sleep) started one after the other, 50 ms
# apart, and alive together, then ended, while the count of processes
# the agent keeps state for (sfprof_agent_processes) is read until it
# rose by N/2 at least (60 s at most): WAVE_BASE, the count before, and
# WAVE_PEAK, the highest read.  The positive control of the checks that
# this count does not grow with the processes that came and went: an
# agent that never took up a new process would pass those.  (N/2: other
# jobs on the machine start and end processes meanwhile.  50 ms apart: a
# burst of 300 processes at once, on a machine loaded 20 times over its
# cores, overflowed the agent's rings, 4,700 records lost, and a process
# whose EXIT record is lost stays counted: 6 Dec 2026.)
proc_wave() {
	WAVE_BASE=$(metric sfprof_agent_processes)
	WAVE_PEAK=${WAVE_BASE:-0}
	: > "$TMP/wave.pids"
	_i=0
	while [ $_i -lt "$1" ]; do
		$PDEATH sleep 600 &
		echo $! >> "$TMP/wave.pids"
		_i=$((_i + 1))
		sleep 0.05
	done
	_i=0
	while [ -n "$WAVE_BASE" ] && [ $_i -lt 600 ] &&
	      [ "$WAVE_PEAK" -lt $((WAVE_BASE + $1 / 2)) ]; do
		_n=$(metric sfprof_agent_processes)
		[ -n "$_n" ] && [ "$_n" -gt "$WAVE_PEAK" ] && WAVE_PEAK=$_n
		kill -0 "$AGENT_PID" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	for _p in $(cat "$TMP/wave.pids"); do
		kill "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	: > "$TMP/wave.pids"
}

# short_pull SECONDS CPU_MS: the pull of one pid,
# /debug/pprof/profile?seconds=SECONDS&pid=P, through go tool pprof
# -traces, of a program started once the pull's span has begun that
# runs CPU_MS of CPU time (agent-work: WORK) and ends: a process new to
# the agent, gone by the time the pull answers.  Its pid: SHORT_PID_WAS
# and $TMP/short.was (for a caller that ran short_pull in the
# background); $TMP/short.traces: what go tool pprof printed.
short_pull() {
	rm -f "$TMP/short.go" "$TMP/short.was"
	# the shell waits for the file and becomes the program: the pid is
	# known before the program starts
	$PDEATH sh -c "while [ ! -e '$TMP/short.go' ]; do sleep 0.05; done; exec '$WORK' cpu$2ms" \
		> /dev/null 2>&1 &
	SHORT_PID=$!
	echo "$SHORT_PID" > "$TMP/short.pid"	# alive: agent_cleanup ends it
	go tool pprof -timeout $(($1 + 60)) -traces -sample_index=samples \
		"http://127.0.0.1:$APORT/debug/pprof/profile?seconds=$1&pid=$SHORT_PID" \
		> "$TMP/short.traces" 2>&1 &
	_pull=$!
	wait_metric sfprof_agent_pulls_open 1
	touch "$TMP/short.go"
	wait "$_pull"
	kill -9 "$SHORT_PID" 2>/dev/null
	wait "$SHORT_PID" 2>/dev/null
	rm -f "$TMP/short.pid"
	echo "$SHORT_PID" > "$TMP/short.was"
	SHORT_PID_WAS=$SHORT_PID
}

# trace_label FILE KEY: for each trace of `go tool pprof -traces`'s
# output, the values of its label KEY on one line ("-" without one)
trace_label() {
	awk -v k="$2:" '
	function flush() { if (v) print (s == "" ? "-" : s); v = 0; s = "" }
	/^-+\+-+/ { flush(); next }
	$1 == k { for (i = 2; i <= NF; i++) s = s (s == "" ? "" : " ") $i; next }
	/^ *[0-9]+ +[^ ]/ { v = 1 }
	END { flush() }' "$1"
}

# trace_samples FILE: the samples of go tool pprof -traces's output, all
# traces (-sample_index=samples)
trace_samples() {
	awk '/^-+\+-+/ { c = 1; next } c && /^ *[0-9]+ +[^ ]/ { s += $1; c = 0 }
	END { print s + 0 }' "$1"
}

# other_mappings FILE EXE: the mappings of the profile that go tool pprof
# saved (FILE: its -traces output, "Saved profile in ...") that are
# neither EXE, a shared library nor the kernel's or the vDSO ([...]): the
# files of another program, in a pull for one pid.  "?" when there is no
# profile to read.
other_mappings() {
	_saved=$(sed -n 's/^Saved profile in //p' "$1")
	if [ ! -f "$_saved" ] || ! go tool pprof -raw "$_saved" > "$1.raw" 2>&1; then
		echo "?"
		return
	fi
	awk -v exe="$2" '/^Mappings/ { m = 1; next }
	m && NF >= 3 && $3 != exe && $3 !~ /\.so(\.[0-9]+)*$/ && $3 !~ /^\[/ { print $3 }' "$1.raw"
}
