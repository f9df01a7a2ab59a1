#!/bin/sh
# Sum the tiers' result files; the last line is what CI reads.
cat "$@" > build/results.all
p=$(grep -c '^PASS' build/results.all)
f=$(grep -c '^FAIL' build/results.all)
s=$(grep -c '^SKIP' build/results.all)
if [ "$f" -ne 0 ]; then
	echo "Failures:"
	grep '^FAIL' build/results.all | sed 's/^/  /'
fi
if [ "$s" -ne 0 ]; then
	echo "Skipped:"
	grep '^SKIP' build/results.all | sed 's/^/  /'
	echo "$p passed, $f failed, $s skipped"
else
	echo "$p passed, $f failed"
fi
[ "$f" -eq 0 ]
