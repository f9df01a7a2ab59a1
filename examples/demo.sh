#!/bin/sh
# make demo: the main job on a bundled workload.
#
# 1. Build examples/demo.c without frame pointers (gas also writes its own
#    SFrame v1 section, so both kinds of table can be shown).
# 2. Show the tables: gas's section, and the one sfprof builds from .eh_frame.
# 3. Record the workload with sfprof record (deferred user callchains,
#    unwound in user space with SFrame) and print the first stitched stacks.
set -eu
BUILD=${1:-build}
SFPROF=$BUILD/sfprof
OUT=$BUILD/demo
mkdir -p "$OUT"
export SFPROF_CACHE_DIR="${SFPROF_CACHE_DIR:-$PWD/$OUT/cache}"

step() { printf '\n== %s\n' "$*"; }

step "compile examples/demo.c (-O2 -fomit-frame-pointer -Wa,--gsframe)"
gcc -O2 -g -fomit-frame-pointer -Wa,--gsframe -o "$OUT/demo" examples/demo.c
echo "$OUT/demo"

step "sfprof sframe check $OUT/demo"
"$SFPROF" sframe check "$OUT/demo"

step "sfprof sframe dump $OUT/demo  (gas's SFrame v1, first functions)"
"$SFPROF" sframe dump "$OUT/demo" | head -24

step "sfprof sframe build --stats  (SFrame v3 from .eh_frame, for libc)"
LIBC=$(ldd "$OUT/demo" | awk '/libc.so/ { print $3 }')
"$SFPROF" sframe build --stats -o "$OUT/libc.sframe" "$LIBC"

if "$SFPROF" --help | grep -q '^  record'; then
	step "sfprof record -F 999 -o $OUT/perf.data -- $OUT/demo 2"
	"$SFPROF" record -F 999 -o "$OUT/perf.data" -- "$OUT/demo" 2
	step "sfprof script -i $OUT/perf.data  (first stitched samples)"
	"$SFPROF" script -i "$OUT/perf.data" | head -40
fi

printf '\nDone.  Files are in %s\n' "$OUT"
