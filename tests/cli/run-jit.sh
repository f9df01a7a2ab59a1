#!/bin/sh
# JIT frames of Node (Debian's /usr/bin/node): named from its perf map
# (--perf-basic-prof, entries that overlap where V8 reused code space)
# and from the jitdump it maps (--perf-prof), each checked against the
# JIT's own file decoded independently by jit-names.py (newest entry
# covering an address, docs/perf-names.md).
# checks: 4
. "$(dirname "$0")/test-subr.sh"

D=$(cd "$(dirname "$0")" && pwd)
command -v node > /dev/null || skip_rest "jit" "no node"
command -v python3 > /dev/null || skip_rest "jit" "no python3"

# Perf map with overlapping entries: tests/data/symbols/node-churn.js makes
# and drops functions so that new code lands where dead code was.
cd "$TMP" || exit 1
sfp record -q -F 999 -o "$TMP/map.data" -- node --perf-basic-prof \
	--expose-gc "$SFP_TEST_DATA/symbols/node-churn.js" 40 > /dev/null
sfp script -i "$TMP/map.data" > "$TMP/map.txt" 2> "$TMP/map.err"
pid=$(awk '$1 == "node" { print $2; exit }' "$TMP/map.txt")
map=/tmp/perf-$pid.map
if [ -n "$pid" ] && [ -s "$map" ] &&
   python3 "$D/jit-names.py" "$TMP/map.txt" "perf-$pid\\.map" perfmap "$map" > "$TMP/map.chk"; then
	pass "perf map: every JIT frame an entry covers is named by the newest such entry ($(tail -1 "$TMP/map.chk"))"
else
	fail "perf map: every JIT frame an entry covers is named by the newest such entry"
	sed 's/^/  /' "$TMP/map.chk" 2> /dev/null | tail -6
fi
# the file really has overlaps (else the check above proves little)
if [ -s "$map" ] && awk '{ if ($1 in seen) dup++; seen[$1] = 1 }
	END { exit !(dup > 0) }' "$map"; then
	pass "perf map: the recorded run's map has entries at one start"
else
	fail "perf map: the recorded run's map has entries at one start"
fi
rm -f "$map"

# jitdump: node --perf-prof writes ./jit-PID.dump and maps it.
cat > "$TMP/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function walk(d) { if (d == 0) { let s = 0; for (let i = 0; i < 500; i++) s += fib(12); return s; } return walk(d - 1) + 1; }
let t = 0; const end = Date.now() + 400;
while (Date.now() < end) t += walk(30);
console.log(t > 0 ? "ok" : "no");
JS
sfp record -q -F 499 -o "$TMP/dump.data" -- node --perf-prof "$TMP/fib.js" > /dev/null
dump=$(ls "$TMP"/jit-*.dump 2> /dev/null | head -1)
sfp script -i "$TMP/dump.data" > "$TMP/dump.txt" 2> "$TMP/dump.err"
if [ -n "$dump" ] &&
   python3 "$D/jit-names.py" "$TMP/dump.txt" 'perf-[0-9]+\.map' jitdump "$dump" > "$TMP/dump.chk"; then
	pass "jitdump: every JIT frame a code load covers is named by it ($(tail -1 "$TMP/dump.chk"))"
else
	fail "jitdump: every JIT frame a code load covers is named by it"
	sed 's/^/  /' "$TMP/dump.chk" 2> /dev/null | tail -6
fi
# the workload's own function is among them
if grep -q 'JS:\*fib .*fib.js' "$TMP/dump.txt"; then
	pass "jitdump: the optimized fib frames are named"
else
	fail "jitdump: the optimized fib frames are named"
fi
