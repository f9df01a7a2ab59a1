#!/bin/sh
# make demo: the main job on a bundled workload.
#
# 1. Build examples/demo.c without frame pointers and, like nearly every
#    binary on a real system, without .sframe; a second copy is assembled
#    with gas's --gsframe to show a section made by binutils.
# 2. Show the tables: gas's section, and the one sfprof builds from .eh_frame.
# 3. Record the workload with sfprof record (deferred user callchains,
#    unwound in user space with SFrame) and print the first stitched stacks.
# 4. Read it like people do: the top of `sfprof report` and an interactive,
#    self-contained flame graph (flamegraph.html).
set -eu
BUILD=${1:-build}
SFPROF=$BUILD/sfprof
OUT=$BUILD/demo
mkdir -p "$OUT"
export SFPROF_CACHE_DIR="${SFPROF_CACHE_DIR:-$PWD/$OUT/cache}"

step() { printf '\n== %s\n' "$*"; }

step "compile examples/demo.c (-O2 -fomit-frame-pointer; a copy with -Wa,--gsframe)"
gcc -O2 -g -fomit-frame-pointer -o "$OUT/demo" examples/demo.c
gcc -O2 -g -fomit-frame-pointer -Wa,--gsframe -o "$OUT/demo-gas" examples/demo.c
echo "$OUT/demo $OUT/demo-gas"

step "sfprof sframe check $OUT/demo-gas"
"$SFPROF" sframe check "$OUT/demo-gas"

step "sfprof sframe dump $OUT/demo-gas  (gas's SFrame v1, first functions)"
"$SFPROF" sframe dump "$OUT/demo-gas" | head -24

step "sfprof sframe build --stats $OUT/demo  (SFrame v3 from its .eh_frame)"
"$SFPROF" sframe build --stats -o "$OUT/demo.sframe" "$OUT/demo"

step "sfprof sframe build --stats  (SFrame v3 from .eh_frame, for libc)"
LIBC=$(ldd "$OUT/demo" | awk '/libc.so/ { print $3 }')
"$SFPROF" sframe build --stats -o "$OUT/libc.sframe" "$LIBC"

if "$SFPROF" --help | grep -q '^  record'; then
	step "sfprof record -F 999 -o $OUT/perf.data -- $OUT/demo 2"
	"$SFPROF" record -F 999 -o "$OUT/perf.data" -- "$OUT/demo" 2
	step "sfprof script -i $OUT/perf.data  (first stitched samples)"
	"$SFPROF" script -i "$OUT/perf.data" | head -24
	step "sfprof report -i $OUT/perf.data --no-children  (top entries)"
	"$SFPROF" report -i "$OUT/perf.data" --no-children -g none \
		--percent-limit 2 | head -30
	step "sfprof report -i $OUT/perf.data -g none  (children: share of time under each function)"
	"$SFPROF" report -i "$OUT/perf.data" -g none --percent-limit 4 | head -30
	step "sfprof flamegraph -i $OUT/perf.data -o $OUT/flamegraph.html"
	"$SFPROF" flamegraph -i "$OUT/perf.data" -o "$OUT/flamegraph.html"
	printf 'Open %s in a browser: click to zoom, type to search.\n' \
		"$(cd "$OUT" && pwd)/flamegraph.html"
fi

printf '\nDone.  Files are in %s\n' "$OUT"
