#!/bin/sh
# Go binaries without symbols (Debian's Go compiler is stripped: no
# .symtab, only the runtime's function table .gopclntab) named by sfprof,
# checked against `go tool addr2line` on the same binary:
#  - sfprof record at the defaults of the compiler compiling package
#    unicode a few times;
#  - script: >= 99 % of the compiler's frames named, and every distinct
#    address named as go tool addr2line names it;
#  - report names the compiler's functions (no raw addresses);
#  - export --format pprof, read back by go tool pprof: the same;
#  - the agent (files sink) names them the same way.
# perf script names none of these frames (said, as the gap's evidence,
# not asserted).
# Needs go (golang-go, make deps) and python3; the agent check needs root.
# checks: 5
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
NAMES=$HERE/go-names.py
COMPILE=/usr/lib/go-1.19/pkg/tool/linux_amd64/compile
SRC=/usr/lib/go-1.19/src/unicode

if ! command -v go > /dev/null || ! command -v python3 > /dev/null; then
	skip_rest "go names" "go or python3 missing (make deps)"
fi
# the workload: the compiler on package unicode (no imports), 4 times
cat > "$TMP/work.sh" <<EOF
for i in 1 2 3 4; do
	$COMPILE -p unicode -o "$TMP/u.a" \$(ls $SRC/*.go | grep -v _test) || exit 1
done
EOF

# names_ok WHAT RESULT-LINE: >= 99 % named, none differs from addr2line
# (and enough to mean it: 100 frames, 30 distinct addresses; a quiet
# run gives thousands)
names_ok() {
	set -- "$1" $2
	# "frames F named N distinct D differ X"
	[ "$2" = frames ] && [ "$3" -ge 100 ] && [ "$7" -ge 30 ] &&
		[ "$9" = 0 ] && [ $(($5 * 100)) -ge $(($3 * 99)) ]
}

sfp record -q -o "$TMP/go.data" -- sh "$TMP/work.sh" > "$TMP/rec.out" 2>&1
# (a symbol cache of its own, empty: this run makes the tables, the
# second script below reads them back)
(export SFPROF_CACHE_DIR="$TMP/symcache"
 sfp script -i "$TMP/go.data" > "$TMP/script.txt" 2> "$TMP/script.err")
res=$(python3 "$NAMES" "$COMPILE" "$TMP/script.txt" 2>&1)
if names_ok script "$(echo "$res" | tail -1)"; then
	pass "go names: script names >= 99 % of the compiler's frames, each as go tool addr2line ($(echo "$res" | tail -1))"
else
	fail "go names: script names >= 99 % of the compiler's frames, each as go tool addr2line"
	echo "$res" | sed 's/^/  /'
	tail -3 "$TMP/rec.out" | sed 's/^/  /'
fi

# report: the compiler's lines carry names (perf's "[.] 0x..." when not)
sfp report -i "$TMP/go.data" > "$TMP/report.txt" 2> "$TMP/report.err"
n=$(grep -E '^ +[0-9.]+% +[0-9.]+% +compile +compile +\[\.\] ' "$TMP/report.txt" | grep -c .)
raw=$(grep -E '^ +[0-9.]+% +[0-9.]+% +compile +compile +\[\.\] 0x[0-9a-f]+$' "$TMP/report.txt" | grep -c .)
if [ "$n" -ge 20 ] && [ "$raw" = 0 ] &&
   grep -q 'cmd/compile/internal/gc\.Main' "$TMP/report.txt"; then
	pass "go names: report names the compiler's functions ($n lines, cmd/compile/internal/gc.Main among them)"
else
	fail "go names: report names the compiler's functions ($n lines, $raw unnamed)"
fi

# pprof, read by go tool pprof
sfp export -f pprof -i "$TMP/go.data" -o "$TMP/go.pb.gz" 2> "$TMP/export.err"
res=$(python3 "$NAMES" --pprof "$COMPILE" "$TMP/go.pb.gz" 2>&1)
if names_ok pprof "$(echo "$res" | tail -1)"; then
	pass "go names: pprof export names the compiler's locations as go tool addr2line ($(echo "$res" | tail -1))"
else
	fail "go names: pprof export names the compiler's locations as go tool addr2line"
	echo "$res" | sed 's/^/  /'
fi

# The gap this closes, for the record (perf reads the inline form).
sfp convert -i "$TMP/go.data" -o "$TMP/inline.data" --inline > /dev/null 2>&1
if command -v perf > /dev/null &&
   perf script -i "$TMP/inline.data" > "$TMP/perf.txt" 2> /dev/null; then
	all=$(grep -cF "($COMPILE)" "$TMP/perf.txt")
	unk=$(grep -F "($COMPILE)" "$TMP/perf.txt" | grep -cF '[unknown]')
	echo "  (perf script on the same samples: $unk of $all compiler frames [unknown])"
fi

# A stripped Go binary's table stays right when it comes back from the
# symbol cache (a second script run reads it from there).
(export SFPROF_CACHE_DIR="$TMP/symcache"
 sfp script -i "$TMP/go.data" > "$TMP/script2.txt" 2> /dev/null)
if cmp -s "$TMP/script.txt" "$TMP/script2.txt" &&
   ls "$TMP/symcache/symtab" 2>/dev/null | grep -q '\.syms$'; then
	pass "go names: a second script (symbol table from the cache) prints the same"
else
	fail "go names: a second script (symbol table from the cache) prints the same"
fi

# The agent, its files sink: the same names.
if [ "$(id -u)" != 0 ]; then
	skip "go names: agent" "needs root for system-wide sampling"
	exit 0
fi
. "$HERE/agent-subr.sh"
agent_start --comm '^compile$' -F 499 --interval 1h --output-dir "$TMP/files"
if [ -z "$APORT" ]; then
	fail "go names: the agent did not start"
	sed 's/^/  /' "$TMP/agent.err" | head -5
	exit 0
fi
sh "$TMP/work.sh" > /dev/null 2>&1
kill -TERM "$AGENT_PID"
agent_end 30
res=$(python3 "$NAMES" --pprof "$COMPILE" "$TMP"/files/*.pb.gz 2>&1)
if names_ok agent "$(echo "$res" | tail -1)"; then
	pass "go names: the agent's profiles name the compiler's locations as go tool addr2line ($(echo "$res" | tail -1))"
else
	fail "go names: the agent's profiles name the compiler's locations as go tool addr2line"
	echo "$res" | sed 's/^/  /'
	tail -3 "$TMP/agent.err" | sed 's/^/  /'
fi
