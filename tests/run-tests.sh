#!/bin/sh
# Run one tier of the test suite against the build in $1 and write the
# PASS/FAIL/SKIP lines to build/results-<tier>.
#
#   unit tests   $BUILD/tests/test-*        (each prints one line per test)
#   CLI tests    tests/cli/run-*.sh         (golden output, real tools)
#   fuzz replay  $BUILD/fuzz/fuzz-* over fuzz/corpus/<target>/
#
# A binary that dies without saying FAIL counts as one failure.
#
# Cross builds (make check-aarch64): SFP_RUNNER prefixes each unit binary
# (qemu-aarch64 -L ...), SFP_UNIT_TESTS names the binaries to run, and
# SFP_UNIT_ONLY=1 leaves out the CLI scripts and fuzz replays (they run
# host tools on host builds).
#
# A check that prints nothing must not vanish from the totals: each
# runnable has a known least number of PASS/FAIL/SKIP lines, and printing
# fewer is a FAIL.  Unit binaries: one line per TEST() in their source;
# fuzz replays: one; CLI scripts: their "# checks: N" line.
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
run_one() {	# name, least number of results (where to change it), command...
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
	if [ "$got" -lt "$want" ]; then
		echo "FAIL: [$TIER] $name printed $got results, expected at least $want" >> "$RESULTS"
		echo "  FAIL: $name printed $got PASS/FAIL/SKIP lines, expected at least $want: a check printed nothing (if checks were removed on purpose, change $where)"
	elif [ "$got" -gt "$want" ] && [ "$where" != - ]; then
		echo "  note: $name printed $got results, more than the $want of $where: raise it"
	fi
	rm -f "$out"
}

for t in "$BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	if [ -n "${SFP_UNIT_TESTS:-}" ]; then
		case " $SFP_UNIT_TESTS " in
		*" $(basename "$t") "*) ;;
		*) continue ;;
		esac
	fi
	src=tests/unit/$(basename "$t").c
	# shellcheck disable=SC2086
	run_one "$(basename "$t")" "$(grep -c '^TEST(' "$src" 2>/dev/null)" - ${SFP_RUNNER:-} "$t"
done

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

for f in "$BUILD"/fuzz/fuzz-*; do
	[ -x "$f" ] || continue
	n=$(basename "$f")
	dir=fuzz/corpus/${n#fuzz-}
	if [ ! -d "$dir" ]; then
		echo "FAIL: [$TIER] $n has no corpus in $dir" >> "$RESULTS"
		continue
	fi
	run_one "$n" 1 - sh -c "'$f' '$dir'/* && echo 'PASS: fuzz replay $n'"
done
fi

p=$(grep -c '^PASS' "$RESULTS")
f=$(grep -c '^FAIL' "$RESULTS")
s=$(grep -c '^SKIP' "$RESULTS")
if [ $((p + f + s)) -lt "$EXPECTED" ]; then
	echo "FAIL: [$TIER] $((p + f + s)) results, expected at least $EXPECTED" >> "$RESULTS"
	f=$((f + 1))
fi
echo "   tier $TIER: $p passed, $f failed, $s skipped; $((p + f + s)) results of at least $EXPECTED expected (log: $LOG)"
exit 0
