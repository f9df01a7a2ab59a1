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
