# Helpers for CLI tests (sourced).  Each check prints PASS:/FAIL:/SKIP:.
#   check_eq NAME EXPECTED_FILE ACTUAL_FILE
#   check_rc NAME WANT_RC CMD...
#   skip NAME REASON
: "${SFPROF:?SFPROF must point at the sfprof binary}"
TMP=${SFP_TEST_TMP:-/tmp}/cli.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; }
skip() { echo "SKIP: $1 ($2)"; }

check_eq() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		diff -u "$2" "$3" | head -30 | sed 's/^/  /'
	fi
}

check_rc() {
	name=$1 want=$2
	shift 2
	"$@" > "$TMP/rc.out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		pass "$name"
	else
		fail "$name"
		echo "  exit $rc, want $want; output:"
		head -10 "$TMP/rc.out" | sed 's/^/  /'
	fi
}

# perf record with cpu-clock into $1 (the other arguments are perf
# record's).  Now and then perf record on a shared machine ends without
# finishing its file (data size 0 in the header), so try up to three
# times, saying on stderr why an attempt failed.
rec() {
	out=$1
	shift
	for try in 1 2 3; do
		if perf record -q -e cpu-clock -o "$out" "$@" >"$TMP/rec.log" 2>&1 &&
		   [ "$(od -An -t u8 -j 48 -N 8 "$out" | tr -d ' ')" != 0 ]; then
			return 0
		fi
		echo "  perf record attempt $try failed:" >&2
		head -3 "$TMP/rec.log" | sed 's/^/    /' >&2
	done
	return 1
}
