#!/bin/sh
# The unwinder against independent unwinders on real programs:
#  - unwind-check(-sframe): sfp_backtrace() == glibc backtrace() at many
#    points of a program without frame pointers (it prints its own
#    PASS/FAIL lines);
#  - sfprof unwind --pid == gdb 'thread apply all bt' on the return
#    addresses of every thread of a live process.
# checks: 26
. "$(dirname "$0")/test-subr.sh"
PROGS=$SFP_BUILD/tests/progs

for p in unwind-check unwind-check-sframe; do
	if [ -x "$PROGS/$p" ]; then
		"$PROGS/$p" > "$TMP/$p.out" 2> "$TMP/$p.err"
		rc=$?
		sed "s/^\(PASS\|FAIL\|SKIP\): unwind-check /\1: $p /" "$TMP/$p.out"
		grep -q '^FAIL' "$TMP/$p.out" && sed 's/^/  /' "$TMP/$p.err" | head -80
		[ $rc -eq 0 ] || grep -q '^FAIL' "$TMP/$p.out" || fail "$p exited $rc"
	else
		fail "$p not built"
	fi
done

check_rc "unwind --help" 0 "$SFPROF" unwind --help
check_rc "unwind without --pid is a usage error" 2 "$SFPROF" unwind
check_rc "unwind --pid of no process" 1 "$SFPROF" unwind --pid 2147483000
check_rc "unwind --pid bad number" 2 "$SFPROF" unwind --pid 12x

# Without ptrace access (another user): a clear error, exit 1.  Whether
# nobody can run sfprof at all is asked of the system first (as
# run-errmsg.sh does); where it can, any other answer -- "Permission
# denied" from sfprof's own opens among them -- is a FAIL.
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null 2>&1; then
	skip "unwind --pid without ptrace access" "needs root and setpriv"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$SFPROF"; then
	skip "unwind --pid without ptrace access" "nobody cannot run $SFPROF"
else
	sleep 30 &
	SPID=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SFPROF" unwind --pid $SPID > "$TMP/perm.out" 2>&1
	rc=$?
	kill $SPID 2>/dev/null
	wait $SPID 2>/dev/null
	if [ $rc -eq 1 ] && grep -qx "sfprof: process $SPID: no ptrace access" "$TMP/perm.out"; then
		pass "unwind --pid without ptrace access"
	else
		fail "unwind --pid without ptrace access (exit $rc)"
		sed 's/^/  /' "$TMP/perm.out" | head -5
	fi
fi

# --- against gdb ---
if ! command -v gdb > /dev/null 2>&1; then
	skip "unwind --pid agrees with gdb" "gdb not installed"
	exit 0
fi
"$PROGS/unwind-target" > "$TMP/target.out" &
TPID=$!
i=0
while ! grep -q ready "$TMP/target.out" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if ! grep -q ready "$TMP/target.out"; then
	fail "unwind-target did not start"
	kill -9 $TPID 2>/dev/null
	exit 0
fi
# Every thread asleep in pause(), so that sfprof and gdb, one after the
# other, see the same stacks.
i=0
while [ $i -lt 50 ]; do
	busy=0
	for st in /proc/$TPID/task/*/stat; do
		s=$(sed 's/.*) //' "$st" 2>/dev/null | cut -d' ' -f1)
		[ "$s" = S ] || busy=1
	done
	[ $busy -eq 0 ] && break
	sleep 0.1
	i=$((i + 1))
done

sfp unwind --pid $TPID > "$TMP/sfprof.txt" 2> "$TMP/sfprof.err"
src=$?
# No separate debug info and no debuginfod: gdb then shows every frame
# with its address and no inline frames, which is what we compare.
gdb -batch -nx -iex 'set debuginfod enabled off' \
	-iex 'set debug-file-directory /nonexistent' \
	-iex 'set backtrace past-main on' \
	-p $TPID -ex 'thread apply all bt' > "$TMP/gdb.txt" 2>&1
# Options, on the same (still stopped-and-released) target.
sfp unwind --pid $TPID --max-depth 3 --raw > "$TMP/depth.txt" 2>&1
if [ $? -eq 0 ] && ! grep -q '^#3 ' "$TMP/depth.txt" &&
   [ "$(grep -c 'stopped: depth' "$TMP/depth.txt")" -ge 4 ] &&
   ! grep -q '(/' "$TMP/depth.txt"; then
	pass "unwind --max-depth 3 --raw"
else
	fail "unwind --max-depth 3 --raw"
	head -20 "$TMP/depth.txt" | sed 's/^/  /'
fi
sfp unwind --pid $TPID --tid $TPID > "$TMP/tid.txt" 2>&1
if [ $? -eq 0 ] && [ "$(grep -c '^TID ' "$TMP/tid.txt")" -eq 1 ] &&
   grep -q "^TID $TPID " "$TMP/tid.txt" && grep -q ' main+0x' "$TMP/tid.txt"; then
	pass "unwind --tid (one thread, symbolized)"
else
	fail "unwind --tid (one thread, symbolized)"
	head -20 "$TMP/tid.txt" | sed 's/^/  /'
fi
kill -9 $TPID 2>/dev/null
wait $TPID 2>/dev/null

# gdb stops at main unless told to go past it (it then ends at _start,
# as the RA-undefined row there makes us do).
# Normalise both to "TID INDEX ADDRESS|SIG" for frames 1.. (frame 0 is the
# PC, not a return address).
awk '/^TID / { tid = $2 }
     /^#[0-9]/ { n = substr($1, 2) + 0; if (n == 0) next;
		 a = ($0 ~ /\[signal\]/) ? "SIG" : $2; print tid, n, a }' \
	"$TMP/sfprof.txt" | sort -k1,1n -k2,2n > "$TMP/ours"
awk '/^Thread [0-9]+ .*LWP [0-9]+/ { match($0, /LWP [0-9]+/);
		 tid = substr($0, RSTART + 4, RLENGTH - 4) }
     /^#[0-9]+ / { n = substr($1, 2) + 0; if (n == 0) next;
		 if ($0 ~ /<signal handler called>/) a = "SIG";
		 else if ($2 ~ /^0x/) a = $2; else a = "?";
		 print tid, n, a }' \
	"$TMP/gdb.txt" | sort -k1,1n -k2,2n > "$TMP/theirs"

threads=$(cut -d' ' -f1 "$TMP/theirs" | sort -u | wc -l)
frames=$(wc -l < "$TMP/theirs")
if [ $src -ne 0 ]; then
	fail "unwind --pid agrees with gdb (sfprof exited $src)"
	sed 's/^/  /' "$TMP/sfprof.err" | head
elif [ "$threads" -lt 5 ] || [ "$frames" -lt 60 ]; then
	fail "unwind --pid agrees with gdb (gdb showed only $threads threads, $frames frames)"
	sed 's/^/  /' "$TMP/gdb.txt" | head -20
elif cmp -s "$TMP/theirs" "$TMP/ours"; then
	pass "unwind --pid agrees with gdb ($threads threads, $frames return addresses)"
else
	fail "unwind --pid agrees with gdb"
	diff "$TMP/theirs" "$TMP/ours" | head -20 | sed 's/^/  /'
	sed 's/^/  /' "$TMP/sfprof.txt" | head -40
fi
