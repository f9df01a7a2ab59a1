#!/bin/sh
# debuginfod: a stripped program's names, source lines and inlined
# functions fetched by build-id from a real `debuginfod` server on
# 127.0.0.1, and what happens when no server answers (refused, a listener
# that never replies, the server stopped): one note, raw addresses, a run
# bounded by --debuginfod-timeout rather than libdebuginfod's 90 s.
# checks: 23
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# pprof's own schema, as upstream publishes it (golden input, never edited)
PPROF_PROTO_DIR=$ROOT/../shared/testdata/proto/pprof

# Nothing from the caller's environment: only the servers started here.
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
SRV_PID=
HOLE_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	[ -n "$HOLE_PID" ] && kill "$HOLE_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# --- the options ------------------------------------------------------------
for c in script report export flamegraph; do
	sfp $c --help > "$TMP/help" 2>&1
	if grep -q -- '--debuginfod\[=URLS\]' "$TMP/help" &&
	   grep -q -- '--no-debuginfod' "$TMP/help" &&
	   grep -q -- '--debuginfod-timeout SECS' "$TMP/help"; then
		pass "$c --help documents the debuginfod options"
	else
		fail "$c --help documents the debuginfod options"
	fi
done
check_rc "script --debuginfod-timeout 0 is a usage error" 2 \
	$SFPROF script --debuginfod-timeout 0 -i /nonexistent
check_rc "report --debuginfod-timeout x is a usage error" 2 \
	$SFPROF report --debuginfod-timeout x -i /nonexistent

missing=
for t in debuginfod python3 objcopy strip readelf nm; do
	command -v $t > /dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
	skip_rest "debuginfod server tests" "missing:$missing (make deps)"
fi

# --- a stripped program whose debug file only the server has ---------------
ORIG=$SFP_BUILD/tests/progs/export-inline	# -O2 -g, inlined functions
mkdir -p "$TMP/bin" "$TMP/srv" "$TMP/home"
PROG=$TMP/bin/prog
cp "$ORIG" "$PROG"
objcopy --only-keep-debug "$PROG" "$TMP/srv/prog.debug"
strip -s "$PROG"
# as distributions ship them: a debuglink, here to a file not on disk
objcopy --add-gnu-debuglink="$TMP/srv/prog.debug" "$PROG"
ID=$(readelf -n "$PROG" 2>/dev/null | awk '/Build ID:/ { print $3 }')
if [ -n "$ID" ] &&
   [ "$ID" = "$(readelf -n "$TMP/srv/prog.debug" 2>/dev/null | awk '/Build ID:/ { print $3 }')" ] &&
   ! readelf -S "$PROG" 2>/dev/null | grep -q -e '\.symtab' -e '\.debug_info' &&
   readelf -S "$TMP/srv/prog.debug" 2>/dev/null | grep -q '\.debug_info'; then
	pass "test program: stripped (no .symtab, no DWARF), debug file with the same build-id"
else
	fail "test program: stripped, debug file with the same build-id"
	exit 0
fi
# The debug files sfprof looks for locally must not be there: HOME holds
# perf's build-id cache, which sfprof reads.
export HOME="$TMP/home"

. "$(dirname "$0")/debuginfod-subr.sh"

if start_debuginfod; then
	pass "debuginfod server on 127.0.0.1:$PORT serves the debug file by build-id"
else
	fail "debuginfod server on 127.0.0.1 serves the debug file by build-id"
	exit 0
fi
URL=http://127.0.0.1:$PORT

# --- a recording of the stripped program -------------------------------------
if ! sfp record -q -F 2000 -o "$TMP/rec.data" -- "$PROG" 300 > "$TMP/rec.log" 2>&1; then
	fail "sfprof record of the stripped program"
	head -5 "$TMP/rec.log" | sed 's/^/  /'
	exit 0
fi
pass "sfprof record of the stripped program"

# The names binutils gives the program's frames, from the unstripped
# file: "ADDR NAME+0xOFF" for every address of the program in the input.
nm_names() {	# script output -> expected lines
	awk -v p="($PROG)" '$NF == p { print $1 }' "$1" | sort -u > "$TMP/addrs"
	nm -n --defined-only "$ORIG" > "$TMP/nm"
	python3 - "$TMP/nm" "$TMP/addrs" <<'PY'
import sys
syms = []
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
for l in open(sys.argv[2]):
    x = int(l.split()[0], 16)
    best = None
    for a, n in syms:
        if a <= x:
            best = (a, n)
    if best:
        print("%s %s+0x%x" % (l.split()[0], best[1], x - best[0]))
PY
}
prog_frames() {	# script output -> "ADDR NAME" of the program's frames
	awk -v p="($PROG)" '$NF == p { print $1, $2 }' "$1" | sort -u
}
# A sample may land in a PLT stub (the program calls clock_gettime): sfprof
# names it "clock_gettime@plt" from the dynamic relocations, as perf does
# (docs/perf-names.md), where nm and eu-addr2line know no symbol.  Those
# addresses are left out of the comparisons with them.
readelf -SW "$ORIG" | sed 's/^ *\[ *[0-9]*\]//' |
	awk '$1 ~ /^\.plt/ { print $3, $5 }' > "$TMP/plt.ranges"
no_plt() {	# lines starting with a hex address -> those outside the PLT
	python3 -c '
import sys
r = [tuple(int(x, 16) for x in l.split()) for l in open(sys.argv[1]) if l.strip()]
for l in sys.stdin:
    a = int(l.split()[0], 16)
    if not any(lo <= a < lo + n for lo, n in r):
        sys.stdout.write(l)' "$TMP/plt.ranges"
}

# 1. without debuginfod: the program's frames have no names (the check
#    below can fail)
sfp script -i "$TMP/rec.data" > "$TMP/plain.txt" 2> "$TMP/plain.err"
rc=$?
if [ $rc = 0 ] && prog_frames "$TMP/plain.txt" | grep -q '\[unknown\]' &&
   ! prog_frames "$TMP/plain.txt" | grep -q ' main+'; then
	pass "without DEBUGINFOD_URLS the stripped program's frames are [unknown]"
else
	fail "without DEBUGINFOD_URLS the stripped program's frames are [unknown] (exit $rc)"
fi

# 2. through the server: names equal nm's on the unstripped file
export DEBUGINFOD_CACHE_PATH="$TMP/cache"
DEBUGINFOD_URLS=$URL sfp script -i "$TMP/rec.data" > "$TMP/d.txt" 2> "$TMP/d.err"
rc=$?
nm_names "$TMP/d.txt" | no_plt > "$TMP/d.want"
prog_frames "$TMP/d.txt" | no_plt > "$TMP/d.got"
if [ $rc = 0 ] && [ ! -s "$TMP/d.err" ] && grep -q ' hot+0x' "$TMP/d.got" &&
   grep -q ' main+0x' "$TMP/d.got" && cmp -s "$TMP/d.want" "$TMP/d.got"; then
	pass "script with DEBUGINFOD_URLS names every frame of the program as nm does ($(wc -l < "$TMP/d.got") addresses)"
else
	fail "script with DEBUGINFOD_URLS names the program's frames as nm does (exit $rc)"
	head -3 "$TMP/d.err" | sed 's/^/  /'
	diff "$TMP/d.want" "$TMP/d.got" | head -6 | sed 's/^/  /'
fi
if [ -s "$TMP/cache/$ID/debuginfo" ] && cmp -s "$TMP/cache/$ID/debuginfo" "$TMP/srv/prog.debug"; then
	pass "the debug file landed in DEBUGINFOD_CACHE_PATH"
else
	fail "the debug file landed in DEBUGINFOD_CACHE_PATH"
fi

# 3. --debuginfod=URL without the variable; --no-debuginfod with it
sfp script --debuginfod="$URL" -i "$TMP/rec.data" > "$TMP/o.txt" 2> "$TMP/o.err"
rc=$?
if [ $rc = 0 ] && cmp -s "$TMP/d.txt" "$TMP/o.txt"; then
	pass "script --debuginfod=URL does what DEBUGINFOD_URLS does"
else
	fail "script --debuginfod=URL does what DEBUGINFOD_URLS does (exit $rc)"
fi
DEBUGINFOD_URLS=$URL sfp script --no-debuginfod -i "$TMP/rec.data" > "$TMP/n.txt" 2> "$TMP/n.err"
rc=$?
if [ $rc = 0 ] && [ ! -s "$TMP/n.err" ] && cmp -s "$TMP/plain.txt" "$TMP/n.txt"; then
	pass "script --no-debuginfod ignores DEBUGINFOD_URLS"
else
	fail "script --no-debuginfod ignores DEBUGINFOD_URLS (exit $rc)"
fi

# 4. report names the hot function through it
DEBUGINFOD_URLS=$URL sfp report --no-children -g none -i "$TMP/rec.data" > "$TMP/r.txt" 2> "$TMP/r.err"
rc=$?
if [ $rc = 0 ] && grep -q 'prog .*\[\.\] hot$' "$TMP/r.txt"; then
	pass "report with DEBUGINFOD_URLS names the program's hot function"
else
	fail "report with DEBUGINFOD_URLS names the program's hot function (exit $rc)"
	grep prog "$TMP/r.txt" | head -3 | sed 's/^/  /'
fi

# 5. inlined functions and source lines (DWARF from the server), checked
#    against eu-addr2line -i on the unstripped file
DEBUGINFOD_URLS=$URL sfp export --format folded --inline -i "$TMP/rec.data" -o "$TMP/inl.folded" 2> "$TMP/inl.err"
rc=$?
if [ $rc = 0 ] && grep -q ';main;hot;mix_many;mix [0-9]' "$TMP/inl.folded"; then
	pass "export --inline through debuginfod shows the inlined callees (main;hot;mix_many;mix)"
else
	fail "export --inline through debuginfod shows the inlined callees (exit $rc)"
	grep hot "$TMP/inl.folded" | head -3 | sed 's/^/  /'
fi
if ! command -v protoc > /dev/null 2>&1 || ! command -v node > /dev/null 2>&1 ||
   ! command -v eu-addr2line > /dev/null 2>&1; then
	skip "source lines through debuginfod" "protoc, node or eu-addr2line missing (make deps)"
else
	DEBUGINFOD_URLS=$URL sfp export --format pprof --inline -i "$TMP/rec.data" -o "$TMP/inl.pb.gz" 2>> "$TMP/inl.err"
	rc=$?
	gzip -dc "$TMP/inl.pb.gz" | protoc --proto_path="$PPROF_PROTO_DIR" \
		--decode perftools.profiles.Profile "$PPROF_PROTO_DIR/profile.proto" \
		> "$TMP/inl.pb.txt" 2> "$TMP/inl.protoc.err"
	# the location list is all this test needs of the checker
	node "$HERE/pprof-check.js" "$TMP/inl.pb.txt" "$PROG" 0 "$TMP/inl.locs" > /dev/null 2>&1
	readelf -lW "$ORIG" 2>/dev/null | awk '$1 == "LOAD" { print $2, $3, $5 }' > "$TMP/inl.loads"
	: > "$TMP/inl.want"
	: > "$TMP/inl.got"
	while read -r off lines; do
		[ -n "$off" ] || continue
		case $lines in *@plt:0) continue ;; esac	# (see no_plt)
		va=
		while read -r po pv pf; do
			if [ -z "$va" ] && [ $((0x$off)) -ge $((po)) ] &&
			   [ $((0x$off)) -lt $((po + pf)) ]; then
				va=$(printf '0x%x' $((0x$off - po + pv)))
			fi
		done < "$TMP/inl.loads"
		[ -n "$va" ] || va=0x$off
		# return addresses are looked up one byte back, the leaf
		# directly: accept either
		for a in "$va" "$(printf '0x%x' $((va - 1)))"; do
			eu-addr2line --pretty-print -f -i -e "$ORIG" "$a" |
				sed -e 's/^ (inlined by) //' -e 's/ at \(.*\):\([0-9]*\):[0-9]*$/ at \1:\2/' \
				    -e 's/ at .*:\([0-9]*\)$/:\1/' -e 's/ at ??:0$/:0/' |
				paste -sd'|' -
		done > "$TMP/inl.one"
		echo "$lines" >> "$TMP/inl.got"
		if grep -qxF "$lines" "$TMP/inl.one"; then echo "$lines"; else head -1 "$TMP/inl.one"; fi >> "$TMP/inl.want"
	done < "$TMP/inl.locs"
	if [ $rc = 0 ] && grep -q '^mix:[1-9][0-9]*|mix_many:[1-9][0-9]*|hot:[1-9]' "$TMP/inl.got" &&
	   cmp -s "$TMP/inl.want" "$TMP/inl.got"; then
		pass "pprof --inline through debuginfod: file lines of every program location equal eu-addr2line -i on the unstripped file ($(wc -l < "$TMP/inl.got") locations)"
	else
		fail "pprof --inline through debuginfod: source lines vs eu-addr2line -i (exit $rc)"
		head -3 "$TMP/inl.protoc.err" | sed 's/^/  /'
		diff "$TMP/inl.want" "$TMP/inl.got" | head -6 | sed 's/^/  /'
	fi
fi

# --- no answer: one note, addresses, a bounded run ---------------------------
# BUDGET is --debuginfod-timeout; libdebuginfod alone would wait up to its
# DEBUGINFOD_TIMEOUT (90 s) per transfer, so a run under LIMIT seconds
# shows the budget at work.  `timeout` turns a hang into a failure.
BUDGET=3
LIMIT=60
down_case() {	# name url cache-dir
	name=$1 url=$2 cache=$3
	t0=$(date +%s)
	DEBUGINFOD_CACHE_PATH=$cache DEBUGINFOD_URLS=$url timeout 300 \
		$SFPROF script --debuginfod-timeout $BUDGET -i "$TMP/rec.data" \
		> "$TMP/down.txt" 2> "$TMP/down.err"
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	notes=$(grep -c debuginfod "$TMP/down.err")
	lines=$(wc -l < "$TMP/down.err")
	if [ $rc = 0 ] && [ "$notes" = 1 ] && [ "$lines" = 1 ] &&
	   [ $secs -lt $LIMIT ] && cmp -s "$TMP/plain.txt" "$TMP/down.txt"; then
		pass "$name: exit 0 in ${secs} s (< $LIMIT), one note, the frames as without debuginfod (addresses)"
	else
		fail "$name: exit $rc in ${secs} s (limit $LIMIT), $notes note lines of $lines, output same as without: $(cmp -s "$TMP/plain.txt" "$TMP/down.txt" && echo yes || echo no)"
		head -3 "$TMP/down.err" | sed 's/^/  /'
	fi
	sed 's/^/  note: /' "$TMP/down.err" | head -1
}

# nothing listening
DEAD=$(free_port)
down_case "port where nothing listens" "http://127.0.0.1:$DEAD" "$TMP/cache-refused"

# a listener that accepts and never answers
rm -f "$TMP/hole.port"
python3 - "$TMP/hole.port" <<'EOF' > /dev/null 2>&1 &
import socket, sys, os
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)	# keep it open, say nothing
EOF
HOLE_PID=$!
n=0
while [ ! -s "$TMP/hole.port" ] && [ $n -lt 300 ] && kill -0 $HOLE_PID 2>/dev/null; do
	sleep 0.1
	n=$((n + 1))
done
if [ -s "$TMP/hole.port" ]; then
	down_case "listener that never answers" "http://127.0.0.1:$(cat "$TMP/hole.port")" "$TMP/cache-hole"
	# libdebuginfod records a cut transfer as a 10-minute miss; sfprof
	# removes it, so the next run asks (and notes) again
	if [ ! -e "$TMP/cache-hole/$ID/debuginfo" ]; then
		pass "a lookup cut short leaves no negative entry in the client cache"
	else
		fail "a lookup cut short leaves no negative entry in the client cache"
	fi
else
	fail "listener that never answers: the python3 listener did not start"
fi
kill $HOLE_PID 2>/dev/null
wait $HOLE_PID 2>/dev/null
HOLE_PID=

# the real server, stopped (it must still be alive here: a crash is a FAIL)
if kill -0 "$SRV_PID" 2>/dev/null; then
	pass "the debuginfod server ran through the tests"
	kill "$SRV_PID"
	wait "$SRV_PID" 2>/dev/null
else
	fail "the debuginfod server died during the tests"
	tail -5 "$TMP"/srv-*.log | sed 's/^/  /'
fi
SRV_PID=
down_case "server stopped" "$URL" "$TMP/cache-stopped"

# stopped, but the client cache already has the file: names still resolve
DEBUGINFOD_URLS=$URL sfp script --debuginfod-timeout $BUDGET -i "$TMP/rec.data" > "$TMP/c.txt" 2> "$TMP/c.err"
rc=$?
if [ $rc = 0 ] && cmp -s "$TMP/d.txt" "$TMP/c.txt"; then
	pass "server stopped, file in DEBUGINFOD_CACHE_PATH: the same names as with the server"
else
	fail "server stopped, file in DEBUGINFOD_CACHE_PATH: the same names as with the server (exit $rc)"
fi
