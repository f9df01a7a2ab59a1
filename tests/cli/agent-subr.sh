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
