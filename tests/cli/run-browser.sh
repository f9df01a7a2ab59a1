#!/bin/sh
# The flame graph and the speedscope export in a real browser: a program
# without frame pointers is recorded (sfprof record, and perf record
# --call-graph dwarf), its flame graph opened in headless Chromium (no
# network request allowed, hot frame found, hovered, zoomed, searched) and
# its speedscope file loaded into the real speedscope viewer served from
# 127.0.0.1.  A synthetic 150k-sample file checks that the page copes with
# that many distinct stacks, and that its page stays within 4 MB (the
# time it takes to draw is bench/bench-flamegraph's: time is not a test).
# Screenshots: $SFP_TEST_TMP/browser/.
# checks: 81
. "$(dirname "$0")/test-subr.sh"

B=$(cd "$(dirname "$0")/../browser" && pwd)
WORK=$SFP_BUILD/tests/progs/flame-work
SYNTH=$SFP_BUILD/tests/progs/flame-synth
EXPORT=$SFP_BUILD/tests/progs/profile-export
SHOTS=$SFP_TEST_TMP/browser
mkdir -p "$SHOTS"

# CLI surface first: these need no browser
sfp flamegraph --help > "$TMP/help" 2>&1
ok=1
for o in -i -o --title --user-only --help; do
	grep -q -- "$o" "$TMP/help" || ok=0
done
[ $ok = 1 ] && pass "flamegraph --help documents its options" ||
	fail "flamegraph --help documents its options"
check_rc "flamegraph without -o is a usage error" 2 $SFPROF flamegraph -i x.data
check_rc "flamegraph of a missing file is an I/O error" 2 \
	$SFPROF flamegraph -i "$TMP/none.data" -o "$TMP/x.html"
printf 'not a perf.data file at all, just text\n' > "$TMP/junk.data"
check_rc "flamegraph of a non-perf.data file is invalid input" 1 \
	$SFPROF flamegraph -i "$TMP/junk.data" -o "$TMP/x.html"

if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null 2>&1 ||
   [ ! -f "$B/node_modules/playwright-core/package.json" ] ||
   [ ! -f "$B/node_modules/speedscope/package.json" ]; then
	fail "browser tests: chromium, node or tests/browser/node_modules missing (run make deps)"
	exit 0
fi

browser() {	# script, args...: the script prints PASS/FAIL lines itself
	s=$1
	shift
	checker "browser $s $*" env -C "$B" SFP_TEST_TMP="$TMP" \
		timeout 300 node "$s" "$@"
}

# --- sfprof record of the workload ------------------------------------------
if sfp record -q -F 999 -o "$TMP/work.data" -- "$WORK" 1500 \
	> "$TMP/rec.out" 2>&1; then
	pass "record flame-work (no frame pointers)"
else
	fail "record flame-work (no frame pointers)"
	sed 's/^/  /' "$TMP/rec.out" | head
fi
if sfp flamegraph -i "$TMP/work.data" -o "$SHOTS/flamegraph.html" \
	> "$TMP/fg.out" 2>&1 && grep -q '<canvas' "$SHOTS/flamegraph.html"; then
	pass "flamegraph writes an HTML page"
else
	fail "flamegraph writes an HTML page"
	sed 's/^/  /' "$TMP/fg.out" | head
fi
# nothing in the page may point elsewhere
if grep -Eiq '(src|href)=["'"'"']?(https?:)?//' "$SHOTS/flamegraph.html"; then
	fail "flamegraph page references no external resource"
else
	pass "flamegraph page references no external resource"
fi
browser flamegraph.mjs --html "$SHOTS/flamegraph.html" --tag flamegraph \
	--hot flame_hot_leaf --min-share 0.5 --kernel \
	--path main,flame_outer,flame_mid,flame_hot_leaf --shots "$SHOTS"

# --user-only drops the kernel frames
sfp flamegraph --user-only --title "user only" -i "$TMP/work.data" \
	-o "$TMP/user.html" > /dev/null 2>&1
if grep -q '<title>user only</title>' "$TMP/user.html" &&
   grep -q 'read_zero\|do_syscall_64' "$SHOTS/flamegraph.html" &&
   ! grep -q 'do_syscall_64' "$TMP/user.html"; then
	pass "flamegraph --user-only and --title"
else
	fail "flamegraph --user-only and --title"
fi

# perf's pipe mode in, standard output out
if command -v perf > /dev/null 2>&1 &&
   perf record -q -g -F 499 -o - -- "$WORK" 300 2> /dev/null |
	sfp flamegraph -i - -o - > "$TMP/pipe.html" 2> "$TMP/pipe.err" &&
   grep -q '"flame_hot_leaf"' "$TMP/pipe.html" && [ ! -s "$TMP/pipe.err" ]; then
	pass "flamegraph -i - -o - (perf pipe mode to stdout)"
else
	fail "flamegraph -i - -o - (perf pipe mode to stdout)"
	head -5 "$TMP/pipe.err" | sed 's/^/  /'
fi

# --- speedscope, through the library API and, if present, sfprof export -----
if "$EXPORT" speedscope "$TMP/work.data" "$SHOTS/work.speedscope.json" \
	> "$TMP/ss.out" 2>&1; then
	pass "speedscope export of the recording"
else
	fail "speedscope export of the recording"
	sed 's/^/  /' "$TMP/ss.out" | head
fi
if sfp export --help 2>/dev/null | has speedscope; then
	if sfp export --format speedscope -i "$TMP/work.data" \
		-o "$TMP/cli.json" > /dev/null 2>&1 &&
	   cmp -s "$TMP/cli.json" "$SHOTS/work.speedscope.json"; then
		pass "sfprof export --format speedscope writes the same file"
	else
		fail "sfprof export --format speedscope writes the same file"
	fi
fi
browser speedscope.mjs --json "$SHOTS/work.speedscope.json" --tag speedscope \
	--hot flame_hot_leaf --min-share 0.5 --shots "$SHOTS"

# --- perf record --call-graph dwarf of the same program ---------------------
# (perf 6.1 now and then ends without finishing its file on a busy
# machine: rec retries it; a perf that fails three times is a FAIL, since
# a skip would hide the twenty checks of the page below)
if rec "$TMP/perf.data" --call-graph dwarf -F 499 -- "$WORK" 1000; then
	if sfp flamegraph -i "$TMP/perf.data" -o "$SHOTS/perf-dwarf.html" \
		> "$TMP/fg2.out" 2>&1; then
		pass "flamegraph of a perf --call-graph dwarf file"
		# perf names the event cpu-clock:pppH: still nanoseconds
		if "$EXPORT" speedscope "$TMP/perf.data" "$TMP/perf.json" &&
		   grep -q '"unit":"nanoseconds"' "$TMP/perf.json" &&
		   grep -q '"name":"flame_hot_leaf"' "$TMP/perf.json"; then
			pass "speedscope of a perf dwarf file: ns weights, hot frame"
		else
			fail "speedscope of a perf dwarf file: ns weights, hot frame"
		fi
		browser flamegraph.mjs --html "$SHOTS/perf-dwarf.html" \
			--tag perf-dwarf --hot flame_hot_leaf --min-share 0.5 \
			--path main,flame_outer,flame_mid,flame_hot_leaf \
			--shots "$SHOTS"
	else
		fail "flamegraph of a perf --call-graph dwarf file"
		sed 's/^/  /' "$TMP/fg2.out" | head
	fi
else
	fail "flamegraph of a perf --call-graph dwarf file: perf record failed three times"
	sed 's/^/  /' "$TMP/rec.log" | head -5
fi

# --- no samples at all ---------------------------------------------------------
if "$SYNTH" "$TMP/zero.data" 0 > /dev/null 2>&1 &&
   sfp flamegraph -i "$TMP/zero.data" -o "$TMP/zero.html" > /dev/null 2>&1; then
	pass "flamegraph of a file without samples"
	browser flamegraph.mjs --html "$TMP/zero.html" --tag empty --empty \
		--shots "$SHOTS"
else
	fail "flamegraph of a file without samples"
fi

# --- 150k samples, nearly all distinct stacks --------------------------------
if "$SYNTH" "$TMP/large.data" 150000 > "$TMP/synth.out" 2>&1; then
	t0=$(date +%s%N)
	if sfp flamegraph -i "$TMP/large.data" -o "$TMP/large.html" \
		> "$TMP/fg3.out" 2>&1; then
		t1=$(date +%s%N)
		size=$(wc -c < "$TMP/large.html")
		echo "  large: sfprof flamegraph $(( (t1 - t0) / 1000000 )) ms," \
			"$size bytes of HTML"
		pass "flamegraph of 150k samples with distinct stacks"
		# (issue 17: the file's own bytes, since a page opened from a
		# file is never gzipped; 9 MB as JSON arrays, 2.6 MB packed)
		if [ "$size" -le 4000000 ]; then
			pass "flamegraph page of 150k distinct stacks is <= 4 MB"
		else
			fail "flamegraph page of 150k distinct stacks is <= 4 MB ($size bytes)"
		fi
		browser flamegraph.mjs --html "$TMP/large.html" --tag large \
			--hot @widest --shots "$SHOTS"
	else
		fail "flamegraph of 150k samples with distinct stacks"
		sed 's/^/  /' "$TMP/fg3.out" | head
	fi
else
	fail "flame-synth writes a 150k-sample perf.data"
	sed 's/^/  /' "$TMP/synth.out" | head
fi
