#!/bin/sh
# checks: 2
# `sframe encode` memory: the JSON dump of libc's table is encoded within
# about the JSON's size plus a fixed allowance (it took ~10x when the whole
# document was held as a tree).  Peak RSS is counted by the kernel
# (getrusage of the child), not timed; the same bytes as the original table
# come out.
. "$(dirname "$0")/test-subr.sh"

LIBC=
for f in /lib/x86_64-linux-gnu/libc.so.6 /lib64/libc.so.6 /usr/lib/libc.so.6; do
	[ -r "$f" ] && LIBC=$f && break
done
if [ -z "$LIBC" ] || ! command -v python3 > /dev/null; then
	skip_rest "sframe encode: peak RSS near the JSON size" "no libc.so.6 or python3"
fi
if ! $SFPROF sframe build -o "$TMP/libc.sframe" "$LIBC" 2> "$TMP/b.err" ||
   ! $SFPROF sframe dump --json "$TMP/libc.sframe" > "$TMP/libc.json" 2>> "$TMP/b.err"; then
	fail "sframe encode: peak RSS near the JSON size (build/dump failed)"
	sed 's/^/  /' "$TMP/b.err" | head -5
	exit 0
fi
# ASan keeps freed blocks in a quarantine (256 MB by default), which would
# count every freed function tree: keep it small for this measurement.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=4" \
python3 - "$SFPROF" "$TMP/libc.json" "$TMP/libc2.sframe" > "$TMP/mem.out" <<'EOF'
import os, resource, subprocess, sys
sfprof, js, out = sys.argv[1:4]
r = subprocess.run([sfprof, "sframe", "encode", "--version", "3", "-o", out, js])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(r.returncode, os.path.getsize(js), rss)
EOF
read -r rc jsz rss < "$TMP/mem.out"
# allowance: the JSON text itself (read whole), twice over, plus 32 MB of
# program, libraries and (under ASan) shadow memory
limit=$((jsz * 2 + 32 * 1024 * 1024))
if [ "$rc" = 0 ] && [ "$rss" -le "$limit" ]; then
	pass "sframe encode: peak RSS near the JSON size ($((rss / 1048576)) MB for $((jsz / 1048576)) MB of JSON)"
else
	fail "sframe encode: peak RSS near the JSON size"
	echo "  exit $rc; peak RSS $rss bytes for $jsz bytes of JSON (limit $limit)"
fi
addr=$(sed -n 's/^ *"section_addr": \([0-9]*\),*$/\1/p' "$TMP/libc.json" | head -1)
if [ -n "$addr" ] &&
   $SFPROF sframe dump "$TMP/libc.sframe" > "$TMP/a.dump" 2> "$TMP/d.err" &&
   $SFPROF sframe dump --section-addr "$addr" "$TMP/libc2.sframe" \
	> "$TMP/b.dump" 2>> "$TMP/d.err" &&
   cmp -s "$TMP/a.dump" "$TMP/b.dump"; then
	pass "sframe encode: the streamed encode gives back the same table"
else
	fail "sframe encode: the streamed encode gives back the same table"
	diff "$TMP/a.dump" "$TMP/b.dump" | head -10 | sed 's/^/  /'
	head -5 "$TMP/d.err" | sed 's/^/  /'
fi
