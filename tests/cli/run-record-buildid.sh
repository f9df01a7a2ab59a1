#!/bin/sh
# Build-ids of `sfprof record`: read from the mapped files by sfprof, not
# asked of the kernel (attr.build_id).  While any session on the machine
# has attr.build_id, this kernel leaves the MMAP2 build-id flag in other
# sessions' records and Debian's perf 6.1 aborts its own `perf record`
# (src/record/pipeline.c, mmap2_fill_build_id()).  So:
#  - a `perf record` started beside a system-wide `sfprof record` runs;
#  - the file's MMAP2 records still carry build-ids, and perf reads them:
#    `perf buildid-list` gives readelf's build-ids for the command, its
#    libc and its dynamic loader, and `perf script --show-mmap-events`
#    shows them in the records themselves.
# checks: 3
. "$(dirname "$0")/test-subr.sh"

SPIN=$SFP_BUILD/tests/progs/record-spin
elf_id() {
	readelf -n "$1" 2> /dev/null | awk '/Build ID:/ { print $3; exit }'
}

if [ "$(id -u)" != 0 ] || ! command -v perf > /dev/null; then
	for t in "perf record beside sfprof record -a" "perf buildid-list" \
		 "MMAP2 records"; do
		skip "record build-ids: $t" "needs root (system-wide) and perf (make deps)"
	done
	exit 0
fi

sfp record -q -a --duration 4 -o "$TMP/a.data" > "$TMP/a.out" 2>&1 &
SREC=$!
sleep 1.5
perf record -q -o "$TMP/beside.data" -- /bin/true > "$TMP/beside.out" 2>&1
prc=$?
wait $SREC
src=$?
if [ $prc -eq 0 ] && [ $src -eq 0 ]; then
	pass "record build-ids: a perf record beside sfprof record -a runs (exit 0)"
else
	fail "record build-ids: a perf record beside sfprof record -a runs (perf exit $prc, sfprof exit $src)"
	tail -3 "$TMP/beside.out" "$TMP/a.out" | sed 's/^/  /'
fi

# A command: its own binary, libc and ld.so, as perf reads them (fp: perf
# 6.1 does not read the deferred form, docs/record.md).
sfp record -q --call-graph fp -o "$TMP/c.data" -- "$SPIN" flat 200 > "$TMP/c.out" 2>&1
LIBC=$(ldd "$SPIN" | awk '$1 ~ /^libc\.so/ { print $3 }')
LD=$(ldd "$SPIN" | awk '$1 ~ /ld-linux/ { print $1 }')
perf buildid-list -i "$TMP/c.data" > "$TMP/ids" 2> "$TMP/ids.err"
ok=1
for f in "$SPIN" "$LIBC" "$LD"; do
	real=$(readlink -f "$f")
	want=$(elf_id "$real")
	# perf names a file as its MMAP2 does (the canonical path)
	got=$(awk -v f="$real" '{ p = $2; sub(/.*\//, "", p); q = f; sub(/.*\//, "", q) }
		p == q { print $1; exit }' "$TMP/ids")
	if [ -z "$want" ] || [ "$got" != "$want" ]; then
		ok=0
		echo "  $real: perf ${got:-none}, readelf ${want:-none}"
	fi
done
if [ $ok = 1 ]; then
	pass "record build-ids: perf buildid-list gives readelf's build-ids for the command, libc and ld.so"
else
	fail "record build-ids: perf buildid-list gives readelf's build-ids for the command, libc and ld.so"
	sed 's/^/  /' "$TMP/ids" "$TMP/ids.err" | head -8
fi
perf script -i "$TMP/c.data" --show-mmap-events 2> /dev/null |
	grep 'PERF_RECORD_MMAP2' > "$TMP/mmap2"
want=$(elf_id "$(readlink -f "$LIBC")")
if [ -n "$want" ] && grep -q "<$want>.*libc\.so" "$TMP/mmap2" &&
   ! grep ' /[^ ]*$' "$TMP/mmap2" | grep -q '@ 0x[0-9a-f]* [0-9a-f]*:[0-9a-f]* [0-9]* [0-9]*\]'; then
	pass "record build-ids: the MMAP2 records carry them (perf script --show-mmap-events: libc's <$want>, no file mapping with device and inode)"
else
	fail "record build-ids: the MMAP2 records carry them"
	head -6 "$TMP/mmap2" | sed 's/^/  /'
fi
