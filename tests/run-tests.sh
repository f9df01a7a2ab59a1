#!/bin/sh
# Run one tier of the test suite against the build in $1 and write the
# PASS/FAIL/SKIP lines to build/results-<tier>.
#
#   unit tests   tests/unit/test-*.c -> $BUILD/tests/test-*
#                                        (each prints one line per TEST())
#   CLI tests    tests/cli/run-*.sh         (golden output, real tools)
#   fuzz replay  fuzz/fuzz-*.c -> $BUILD/fuzz/fuzz-* over fuzz/corpus/<target>/
#
# A binary that dies without saying FAIL counts as one failure.
#
# Cross builds (make check-aarch64): SFP_RUNNER prefixes each unit binary
# (qemu-aarch64 -L ...), SFP_UNIT_TESTS names the binaries to run, and
# SFP_UNIT_ONLY=1 leaves out the CLI scripts and fuzz replays (they run
# host tools on host builds).
#
# What runs is listed from the sources, not from the build directory: a
# unit test or fuzz target whose binary is missing is a FAIL, unless the
# Makefile left it out of this build on purpose -- by naming it with a
# reason in $BUILD/tests/left-out (`make tests` writes that file, e.g.
# test-bpf-tables under NO_BPF=1), or by leaving it out of SFP_UNIT_TESTS.
# Left-out tests are named in the output and counted in the tier's line.
#
# Each runnable prints an exact number of PASS/FAIL/SKIP lines, and
# printing fewer or more is a FAIL (a check that silently vanished must
# not hide behind a new one): unit binaries one line per TEST() in their
# source; fuzz replays one; CLI scripts their "# checks: N" line.
#
# A CLI script that cannot run the rest of its checks on this machine
# calls skip_rest (tests/cli/test-subr.sh), which prints
#   SKIP-REST: WHAT (WHY)
# as its last line and exits 0.  The runner counts the checks not printed
# (N minus the lines before it) as that many SKIP lines, each carrying the
# reason, so the totals stay whole and the reason reaches the summary
# (and tests/expected-skips.txt).  A SKIP-REST followed by more results,
# or with nothing left to skip, is a FAIL.
set -u
BUILD=${1:?build dir}
TIER=${2:-default}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RESULTS=build/results-$(echo "$TIER" | tr -c 'a-zA-Z0-9\n' '_')
LOG=$BUILD/test.log
mkdir -p "$BUILD/tmp"
: > "$RESULTS"
: > "$LOG"

export SFPROF="$ROOT/$BUILD/sfprof"
export SFP_BUILD="$ROOT/$BUILD"
export SFP_TEST_DATA="$ROOT/tests/data"
export SFP_TEST_VECTORS="${SFP_TEST_VECTORS:-$ROOT/../shared/testdata/sframe-vectors}"
export SFP_TEST_TMP="$ROOT/$BUILD/tmp"
export SFPROF_CACHE_DIR="$ROOT/$BUILD/tmp/cache"
# Only servers a test starts itself: a DEBUGINFOD_URLS from the caller's
# environment (Debian's profile.d sets one) would make symbol lookups of
# every test wait on the network.
unset DEBUGINFOD_URLS
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

echo "== tier $TIER ($BUILD)"

EXPECTED=0
LEFT_OUT=
run_one() {	# name, exact number of results, where it is set, command...
	name=$1 want=$2 where=$3
	shift 3
	out=$BUILD/tmp/out.$$
	"$@" > "$out" 2>&1
	rc=$?
	cat "$out" >> "$LOG"
	grep -E '^(PASS|FAIL|SKIP): ' "$out" | sed "s|^\([A-Z]*\): |\1: [$TIER] |" >> "$RESULTS"
	grep -E '^(FAIL|SKIP): ' "$out" | sed "s|^|  |"
	grep -E '^  ' "$out" | head -20
	if [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$out"; then
		echo "FAIL: [$TIER] $name (exit $rc)" >> "$RESULTS"
		echo "  FAIL: $name exited $rc without a FAIL line; tail of output:"
		tail -15 "$out" | sed 's/^/    /'
	fi
	got=$(grep -cE '^(PASS|FAIL|SKIP): ' "$out")
	EXPECTED=$((EXPECTED + want))
	rest=$(grep -m1 '^SKIP-REST: ' "$out" | sed 's/^SKIP-REST: //')
	if [ -n "$rest" ]; then
		after=$(sed -n '/^SKIP-REST: /,$p' "$out" | grep -cE '^(PASS|FAIL|SKIP|SKIP-REST): ')
		if [ "$after" -gt 1 ]; then
			echo "FAIL: [$TIER] $name printed results after its SKIP-REST line" >> "$RESULTS"
			echo "  FAIL: $name printed $((after - 1)) result lines after SKIP-REST: $rest (it must be the last)"
		elif [ "$got" -ge "$want" ]; then
			echo "FAIL: [$TIER] $name: SKIP-REST after all $want results of $where" >> "$RESULTS"
			echo "  FAIL: $name said SKIP-REST: $rest after printing $got of its $want results: $where is wrong"
		else
			i=$got
			while [ "$i" -lt "$want" ]; do
				echo "SKIP: [$TIER] $name (rest of script): $rest" >> "$RESULTS"
				i=$((i + 1))
			done
			echo "  SKIP: $name: the remaining $((want - got)) of $want checks: $rest"
			got=$want
		fi
	fi
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: [$TIER] $name printed $got results, expected exactly $want" >> "$RESULTS"
		if [ "$got" -lt "$want" ]; then
			echo "  FAIL: $name printed $got PASS/FAIL/SKIP lines, expected $want: a check printed nothing (if checks were removed on purpose, change $where)"
		else
			echo "  FAIL: $name printed $got PASS/FAIL/SKIP lines, expected $want: a check was added without changing $where, or printed twice"
		fi
	fi
	rm -f "$out"
}

# left_out NAME REASON: a unit test the Makefile does not build or run
# here (said once per reason after the unit tests).
LEFT_OUT_WHY=$BUILD/tmp/left-out.$$
: > "$LEFT_OUT_WHY"
left_out() {
	LEFT_OUT="$LEFT_OUT $1"
	echo "$2|$1" >> "$LEFT_OUT_WHY"
}

if [ -n "${SFP_UNIT_TESTS:-}" ]; then
	for n in $SFP_UNIT_TESTS; do
		[ -f "tests/unit/$n.c" ] && continue
		echo "FAIL: [$TIER] SFP_UNIT_TESTS names $n, which has no tests/unit/$n.c" >> "$RESULTS"
		echo "  FAIL: SFP_UNIT_TESTS names $n, which has no tests/unit/$n.c"
	done
fi
for src in tests/unit/test-*.c; do
	[ -f "$src" ] || continue
	n=$(basename "$src" .c)
	t=$BUILD/tests/$n
	if [ -n "${SFP_UNIT_TESTS:-}" ]; then
		case " $SFP_UNIT_TESTS " in
		*" $n "*) ;;
		*) left_out "$n" "not in SFP_UNIT_TESTS"; continue ;;
		esac
	fi
	why=$(sed -n "s/^$n //p" "$BUILD/tests/left-out" 2>/dev/null | head -1)
	if [ -n "$why" ]; then
		left_out "$n" "$why, $BUILD/tests/left-out"
		continue
	fi
	want=$(grep -c '^TEST(' "$src")
	if [ ! -x "$t" ]; then
		echo "FAIL: [$TIER] $n: no binary $t" >> "$RESULTS"
		echo "  FAIL: $n: $src has no binary $t (a test the Makefile leaves out of a build must be named in $BUILD/tests/left-out)"
		continue
	fi
	# shellcheck disable=SC2086
	run_one "$n" "$want" "the TEST() count of $src" ${SFP_RUNNER:-} "$t"
done
awk -F'|' '{ n[$1] = n[$1] " " $2; c[$1]++ }
	END { for (w in n) printf "  left out of this build (%s), %d:%s\n", w, c[w], n[w] }' \
	"$LEFT_OUT_WHY"
rm -f "$LEFT_OUT_WHY"

if [ "${SFP_UNIT_ONLY:-}" != 1 ]; then
for s in tests/cli/run-*.sh; do
	[ -f "$s" ] || continue
	n=$(sed -n 's/^# checks: \([0-9][0-9]*\)$/\1/p' "$s" | head -1)
	if [ -z "$n" ]; then
		echo "FAIL: [$TIER] $s has no '# checks: N' line" >> "$RESULTS"
		echo "  FAIL: $s has no '# checks: N' line (N: the number of PASS/FAIL/SKIP lines it prints)"
		n=0
	fi
	run_one "$(basename "$s" .sh)" "$n" "'# checks: $n' in $s" sh "$s"
done

for src in fuzz/fuzz-*.c; do
	[ -f "$src" ] || continue
	n=$(basename "$src" .c)
	f=$BUILD/fuzz/$n
	dir=fuzz/corpus/${n#fuzz-}
	if [ ! -x "$f" ]; then
		echo "FAIL: [$TIER] $n: no binary $f" >> "$RESULTS"
		echo "  FAIL: $n: $src has no binary $f"
		continue
	fi
	if [ ! -d "$dir" ]; then
		echo "FAIL: [$TIER] $n has no corpus in $dir" >> "$RESULTS"
		continue
	fi
	run_one "$n" 1 "one line per fuzz replay" sh -c "'$f' '$dir'/* && echo 'PASS: fuzz replay $n'"
done
fi

p=$(grep -c '^PASS' "$RESULTS")
f=$(grep -c '^FAIL' "$RESULTS")
s=$(grep -c '^SKIP' "$RESULTS")
# (the per-runnable FAIL lines above are results too: compare without them)
if [ $((p + f + s)) -lt "$EXPECTED" ]; then
	echo "FAIL: [$TIER] $((p + f + s)) results, expected $EXPECTED" >> "$RESULTS"
	f=$((f + 1))
fi
lo=$(echo $LEFT_OUT | wc -w)
echo "   tier $TIER: $p passed, $f failed, $s skipped; $((p + f + s)) results of $EXPECTED expected; $lo unit tests left out of this build (log: $LOG)"
exit 0
