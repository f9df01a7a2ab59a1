# Shared by run-symbolize-listen.sh and run-symbolize-memory.sh: `sfprof
# symbolize --listen` started on a free port, stopped, its /metrics read,
# and requests posted to it.  Needs test-subr.sh and agent-subr.sh sourced
# (SFPROF, TMP, PDEATH) and CLI set (symbolize-clients.py); the caller's
# cleanup kills SVC_PID.
SVC_PID=
# svc_start ARGS...: the service on a free port, in the background, until
# it listens (SVC_PID, SPORT; its stderr $TMP/svc.err)
svc_start() {
	: > "$TMP/svc.err"
	$PDEATH "$SFPROF" symbolize --listen 127.0.0.1:0 "$@" 2> "$TMP/svc.err" &
	SVC_PID=$!
	_i=0
	while ! grep -q "listening on" "$TMP/svc.err" && [ $_i -lt 600 ] &&
	      kill -0 "$SVC_PID" 2>/dev/null; do
		sleep 0.1
		_i=$((_i + 1))
	done
	SPORT=$(sed -n 's/.*(port \([0-9][0-9]*\)).*/\1/p' "$TMP/svc.err")
	SURL=http://127.0.0.1:$SPORT
}
# svc_stop: SIGTERM, its end awaited (src: its exit status, "timeout")
svc_stop() {
	kill -TERM "$SVC_PID" 2>/dev/null
	_i=0
	while kill -0 "$SVC_PID" 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	src=
	if kill -0 "$SVC_PID" 2>/dev/null; then
		src=timeout
		kill -9 "$SVC_PID"
	fi
	wait "$SVC_PID" 2>/dev/null
	_st=$?
	[ "$src" = timeout ] || src=$_st
	SVC_PID=
	! grep -qE 'runtime error:|Sanitizer' "$TMP/svc.err"
}
# smetric 'NAME{LABELS}': a value of the service's /metrics (a label
# value may hold a space: the line's start is compared)
smetric() {
	curl -s "$SURL/metrics" | awk -v n="$1 " 'index($0, n) == 1 { print $NF; exit }'
}
# swait 'NAME{LABELS}' MIN: until it is at least MIN (60 s at most)
swait() {
	_i=0
	while [ "$(smetric "$1" | cut -d. -f1)" -lt "$2" ] 2>/dev/null ||
	      [ -z "$(smetric "$1")" ]; do
		[ $_i -ge 600 ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}
post() {	# post PATH FILE CTYPE [ENCODING]: "STATUS SECONDS BODY"
	python3 "$CLI" post "$SURL$1" "$2" "$3" $4
}
