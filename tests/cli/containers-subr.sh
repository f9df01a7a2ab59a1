# Shared by the container test scripts (run-containers-*.sh,
# run-agent-containers.sh): "containers" are mount and pid namespaces made
# by unshare(1), each with its own tmpfs (or image root) at one path, so
# that different files stand at the same path at once.  Needs
# test-subr.sh sourced (TMP).  Sets an EXIT trap that ends every
# container and removes $TMP (agent-subr.sh, sourced after this, replaces
# it: set EXTRA_CLEANUP=ct_kill there).
#   ct_usable                 root and unshare that makes the namespaces?
#                             else CT_WHY says what is missing
#   ct_build NAME CFLAGS...   $SRC built as $TMP/NAME with PFX=NAME
#   ct_bid FILE               the file's GNU build-id (readelf -n)
#   ct_run NAME SHELL-CMD     SHELL-CMD as pid 1 of new namespaces, its
#                             output in $TMP/NAME.out, until it says
#                             "ready": PID_NAME and $TMP/NAME.pid, its
#                             pid out here (empty when it did not start)
#   ct_start NAME BINARY FILE [SETUP]
#                             ct_run: a tmpfs at $NS, SETUP (shell, in
#                             the namespace), BINARY copied to $NS/FILE
#                             and run there
#   ct_kill                   every container ended (SIGKILL: namespace
#                             inits take no other signal from out here)
CT_PIDS=

ct_kill() {
	for _ct_p in $CT_PIDS; do
		# with unshare's child, the namespace's init: also when it
		# never said "ready" (a loaded machine) and ct_run could not
		# note its pid; killing unshare alone leaves it running
		_ct_k=$(cat /proc/$_ct_p/task/$_ct_p/children 2>/dev/null)
		kill -9 $_ct_k "$_ct_p" 2>/dev/null
	done
	CT_PIDS=
}
trap 'ct_kill; rm -rf "$TMP"' EXIT

ct_usable() {
	CT_WHY=
	if [ "$(id -u)" != 0 ]; then
		CT_WHY="needs root"
	elif ! unshare --mount --pid --fork true 2>/dev/null; then
		CT_WHY="unshare --mount --pid --fork does not work here"
	fi
	[ -z "$CT_WHY" ]
}

ct_build() {
	_ct_n=$1
	shift
	gcc -O2 -fomit-frame-pointer -fno-inline -DPFX=$_ct_n "$@" \
		-o "$TMP/$_ct_n" "$SRC" 2> "$TMP/cc.err"
}

ct_bid() {
	readelf -n "$1" | sed -n 's/.*Build ID: //p'
}

ct_run() {
	unshare --mount --pid --fork sh -c "$2" > "$TMP/$1.out" 2>&1 &
	_ct_u=$!
	CT_PIDS="$CT_PIDS $_ct_u"
	_ct_i=0
	while ! grep -q ready "$TMP/$1.out" 2>/dev/null && [ $_ct_i -lt 400 ]; do
		sleep 0.05
		_ct_i=$((_ct_i + 1))
	done
	_ct_p=
	grep -q ready "$TMP/$1.out" &&
		_ct_p=$(tr -d ' \n' < /proc/$_ct_u/task/$_ct_u/children 2>/dev/null)
	CT_PIDS="$CT_PIDS $_ct_p"
	echo "$_ct_p" > "$TMP/$1.pid"
	eval "PID_$1=$_ct_p"
}

ct_start() {
	ct_run "$1" "mount -t tmpfs tmpfs '$NS' && ${4:-true} && cp '$2' '$NS/$3' && exec '$NS/$3'"
}
