# Shared by the scripts that talk to a real debuginfod server
# (run-debuginfod.sh, run-symbolize.sh): a free port, an HTTP status, and
# start_debuginfod, which serves $TMP/srv until $ID's debug file is indexed
# (SRV_PID, PORT).  Needs test-subr.sh sourced (TMP) and ID set.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# GET a URL: print the HTTP status (000 when nothing answered in 5 s).
http_status() {
	python3 - "$1" <<'EOF'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        r.read()
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
EOF
}

# --- the server: its own database, a free port, indexed before use ----------
start_debuginfod() {
	for try in 1 2 3; do
		PORT=$(free_port)
		debuginfod -F -p "$PORT" -d "$TMP/db-$try.sqlite" -t 0 -g 0 -c 1 \
			"$TMP/srv" > "$TMP/srv-$try.log" 2>&1 &
		SRV_PID=$!
		# poll until the debug file is served (indexed), not a sleep
		n=0
		while [ $n -lt 600 ]; do
			if ! kill -0 "$SRV_PID" 2>/dev/null; then
				break
			fi
			[ "$(http_status "http://127.0.0.1:$PORT/buildid/$ID/debuginfo")" = 200 ] &&
				return 0
			sleep 0.2
			n=$((n + 1))
		done
		if kill -0 "$SRV_PID" 2>/dev/null; then
			echo "  debuginfod did not serve the file in 2 minutes" >&2
			kill "$SRV_PID"
			wait "$SRV_PID" 2>/dev/null
			SRV_PID=
			return 1
		fi
		wait "$SRV_PID" 2>/dev/null
		rc=$?
		SRV_PID=
		# lost the port to someone else: try another; anything else
		# (a crash) is a failure
		grep -qi 'address already in use\|bind' "$TMP/srv-$try.log" && continue
		echo "  debuginfod exited $rc while indexing:" >&2
		tail -3 "$TMP/srv-$try.log" | sed 's/^/    /' >&2
		return 1
	done
	return 1
}

