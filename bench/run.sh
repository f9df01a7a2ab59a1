#!/bin/sh
# Run every benchmark built in $1/bench (make bench).  Each prints its own
# figures and the ratio against its peer.  The machine may be shared:
# numbers vary with load; the ratios matter, not the absolute times.
BUILD=${1:-build}
echo "== benchmarks ($(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg))"
for b in "$BUILD"/bench/bench-*; do
	[ -x "$b" ] || continue
	"$b" || echo "$(basename "$b") failed (exit $?)"
	echo
done
