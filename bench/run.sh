#!/bin/sh
# Run every benchmark built in $1/bench and print its output.  The machine
# may be shared: numbers are indicative; compare ratios, not absolutes.
BUILD=${1:-build}
rc=0
for b in "$BUILD"/bench/bench-*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || { echo "  $(basename "$b") failed (exit $?)"; rc=1; }
done
echo "== agent-containers.sh"
sh "$(dirname "$0")/agent-containers.sh" "$BUILD" || rc=1
echo "== agent-churn.sh"
sh "$(dirname "$0")/agent-churn.sh" "$BUILD" || rc=1
echo "== agent-per-sample.sh"
sh "$(dirname "$0")/agent-per-sample.sh" "$BUILD" || rc=1
echo "== agent-beside-compiler.sh"
sh "$(dirname "$0")/agent-beside-compiler.sh" "$BUILD" || rc=1
echo "== symbolize.sh"
sh "$(dirname "$0")/symbolize.sh" "$BUILD" || rc=1
exit $rc
