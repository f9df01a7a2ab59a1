#!/bin/sh
# Sum the tiers' result files; the last line is what CI reads.
#
# Every SKIP must match a pattern of tests/expected-skips.txt (the skips
# this suite may print on the machine it is kept green on, each with the
# reason it is expected there; see that file for its format).  A skip no
# pattern matches is counted as a failure, not as a skip: a feature that
# stopped working here must not pass as "skipped".
#   EXPECTED_SKIPS=FILE sh tests/summary.sh ...   another list
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=${EXPECTED_SKIPS:-$ROOT/tests/expected-skips.txt}
cat "$@" > build/results.all
# The list's patterns without comments and blank lines (a blank pattern
# would match every skip).
grep -vE '^[[:space:]]*(#|$)' "$LIST" > build/results.patterns 2>/dev/null
if [ ! -f "$LIST" ]; then
	echo "FAIL: no list of expected skips at $LIST" >> build/results.all
fi
# A SKIP line without "SKIP: ": "[tier] name (reason)".
grep '^SKIP: ' build/results.all | sed 's/^SKIP: //' > build/results.skips
grep -vE -f build/results.patterns build/results.skips > build/results.unexpected
u=$(grep -c '' build/results.unexpected)
p=$(grep -c '^PASS' build/results.all)
f=$(($(grep -c '^FAIL' build/results.all) + u))
s=$(($(grep -c '' build/results.skips) - u))
if [ "$f" -ne 0 ]; then
	echo "Failures:"
	grep '^FAIL' build/results.all | sed 's/^/  /'
	if [ "$u" -ne 0 ]; then
		echo "  Skips not on $LIST (counted as failures):"
		sort build/results.unexpected | uniq -c |
			sed 's/^ *\([0-9]*\) /    \1x SKIP: /'
	fi
fi
# Patterns that matched nothing: a note only (another machine, or a tier
# not run, may need them), for whoever keeps the list short.
while IFS= read -r pat; do
	grep -qE -e "$pat" build/results.skips ||
		echo "note: expected skip matched nothing: $pat"
done < build/results.patterns
if [ "$s" -ne 0 ]; then
	echo "Skipped (expected here, tests/expected-skips.txt):"
	grep -E -f build/results.patterns build/results.skips | sort | uniq -c |
		sed 's/^ *\([0-9]*\) /  \1x SKIP: /'
	echo "$p passed, $f failed, $s skipped"
else
	echo "$p passed, $f failed"
fi
[ "$f" -eq 0 ]
