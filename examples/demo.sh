#!/bin/sh
# make demo: the main job on a bundled example.
#
# Builds examples/demo.c without frame pointers, with gas's SFrame (this
# machine's binutils emits version 1), then shows what sfprof makes of it.
set -eu
BUILD=${1:-build}
SFPROF=$BUILD/sfprof
OUT=$BUILD/demo
mkdir -p "$OUT"

step() { printf '\n== %s\n' "$*"; }

step "compile examples/demo.c (-O2 -fomit-frame-pointer -Wa,--gsframe)"
gcc -O2 -g -fomit-frame-pointer -Wa,--gsframe -o "$OUT/demo" examples/demo.c
echo "$OUT/demo"

step "sfprof sframe check $OUT/demo"
"$SFPROF" sframe check "$OUT/demo"

step "sfprof sframe dump $OUT/demo (first functions)"
"$SFPROF" sframe dump "$OUT/demo" | head -30
