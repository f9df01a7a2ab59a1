# Shared by run-push.sh and run-agent-sinks.sh: the test backend
# (push-server.py) and the decoders of what it was sent.  Needs SERVER,
# PROTO and TMP set, test-subr.sh sourced.
SRV_PID=
# start_server DIR [ARGS]: the test backend on a new port (or --port P),
# its requests saved in DIR.  Sets SRV_PID and PORT.
start_server() {
	_dir=$1
	shift
	rm -f "$_dir.port"
	mkdir -p "$_dir"
	python3 "$SERVER" --dir "$_dir" --port-file "$_dir.port" "$@" \
		2> "$_dir.stderr" &
	SRV_PID=$!
	# Wait for the port file (the server writes it once it listens).
	_n=0
	while [ ! -s "$_dir.port" ] && kill -0 $SRV_PID 2>/dev/null && [ $_n -lt 600 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	PORT=$(cat "$_dir.port" 2>/dev/null)
	[ -n "$PORT" ] || { echo "  the test server did not start:"; sed 's/^/  /' "$_dir.stderr"; }
}
# stop_server NAME: a server that died by itself (not asked to) is a FAIL.
stop_server() {
	if ! kill -0 $SRV_PID 2>/dev/null; then
		fail "$1: the test server crashed"
		sed 's/^/  /' "$SRV_DIR.stderr" 2>/dev/null | tail -5
	fi
	kill $SRV_PID 2>/dev/null
	wait $SRV_PID 2>/dev/null
	SRV_PID=
}

# decode_pprof GZFILE OUT.txt: gunzip and protoc --decode with the upstream schema
decode_pprof() {
	gunzip -c "$1" > "$2.pb" &&
	protoc --proto_path="$PROTO/pprof" --decode perftools.profiles.Profile \
		"$PROTO/pprof/profile.proto" < "$2.pb" > "$2" 2> "$2.err"
}
decode_otlp() {
	(cd "$PROTO/otlp" && protoc --proto_path=. \
		--decode opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto) \
		< "$1" > "$2" 2> "$2.err"
}
# field FILE KEY: the value of "KEY=..." in a push summary line
field() {
	sed -n "s/.*\\b$2=\\([0-9]*\\).*/\\1/p" "$1" | tail -1
}
# A Connect push answered 200 that carried what the sink sends: one
# series of one sample (one window a request), under one id
# (push-server.py logs "series=N samples=M id=..." of every push).
PUSH_ONE='^[0-9]+ /push.v1.PusherService/Push 200 series=1 samples=1 id=[^ ]+$'
# push_ids DIR: the id of every 200 push of that form, one a line
push_ids() {
	grep -E "$PUSH_ONE" "$1/requests.log" 2>/dev/null | sed 's/.* id=//'
}
# count_log DIR REGEX: requests the server logged that match
count_log() {
	grep -c -E "$2" "$1/requests.log" 2>/dev/null || true
}
