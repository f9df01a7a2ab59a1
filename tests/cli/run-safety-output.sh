#!/bin/sh
# Output files are never lost or half-written (docs/record.md, "Output
# files"): an output that is its input, a device, a planted symlink, a job
# that fails, a full disk, a recording killed with SIGKILL.  Real devices
# (a node made here with mknod, never the system's /dev/full), real
# symlinks, a real tmpfs filled to the brim and a real `kill -9`.
# checks: 38
. "$(dirname "$0")/test-subr.sh"

SPIN=$SFP_BUILD/tests/progs/record-spin
SMALL=$TMP/small
trap 'umount "$SMALL" 2>/dev/null; rm -rf "$TMP"' EXIT

ok() { if [ "$2" = 1 ]; then pass "$1"; else fail "$1"; fi; }
# samples in `sfprof script` output
nsamples() { grep -c ' cpu-clock: ' "$1"; }
# no temporary file left in a directory
no_tmp() { ! ls -a "$1" | grep -q '\.tmp-'; }

# An input recording (sfprof's own, plain records).
if ! sfp record -q --no-compress -o "$TMP/in.data" -- "$SPIN" cpu 300 \
		> "$TMP/rec.log" 2>&1; then
	fail "record of the input file"
	sed 's/^/  /' "$TMP/rec.log" | head -5
	exit 0
fi
sfp script -i "$TMP/in.data" > "$TMP/in.script" 2>&1
rc=$?
n_in=$(nsamples "$TMP/in.script")
ok "input recording has samples" $([ $rc = 0 ] && [ "$n_in" -gt 0 ] && echo 1)

# --- 1. output == input ----------------------------------------------------
cp "$TMP/in.data" "$TMP/F"
sfp convert -i "$TMP/F" -o "$TMP/F" > "$TMP/c.log" 2>&1
rc=$?
sfp script -i "$TMP/F" > "$TMP/F.script" 2>&1
rc2=$?
# (the whole of script's output, every sample with its stack and period,
# not only their count: convert rewrites every record)
ok "convert -i F -o F succeeds and F reads back as the input did (script output identical)" \
	$([ $rc = 0 ] && [ $rc2 = 0 ] && cmp -s "$TMP/in.script" "$TMP/F.script" && echo 1)
cmp -s "$TMP/in.script" "$TMP/F.script" ||
	diff "$TMP/in.script" "$TMP/F.script" | head -6 | sed 's/^/  /'
ok "convert -i F -o F keeps the input as F.old (as perf keeps .old)" \
	$(cmp -s "$TMP/in.data" "$TMP/F.old" && echo 1)

mkdir "$TMP/l"
cp "$TMP/in.data" "$TMP/l/target"
ln -s target "$TMP/l/link"
sfp convert -i "$TMP/l/link" -o "$TMP/l/link" > "$TMP/c.log" 2>&1
rc=$?
sfp script -i "$TMP/l/link" > "$TMP/l.script" 2>&1
rc2=$?
ok "convert -i LINK -o LINK succeeds, the link's target is left alone, LINK reads as the input" \
	$([ $rc = 0 ] && [ $rc2 = 0 ] && cmp -s "$TMP/in.data" "$TMP/l/target" &&
	  cmp -s "$TMP/in.script" "$TMP/l.script" && echo 1)

# an output of another kind than the input never replaces it
cp "$TMP/in.data" "$TMP/G"
sfp -e 2 export -f folded -i "$TMP/G" -o "$TMP/G" > "$TMP/e.log" 2>&1
rc=$?
ok "export -i F -o F refuses (exit 2) and leaves F as it was" \
	$([ $rc = 2 ] && cmp -s "$TMP/in.data" "$TMP/G" &&
	  grep -q "is the input file" "$TMP/e.log" && echo 1)
sfp -e 2 flamegraph -i "$TMP/G" -o "$TMP/G" > "$TMP/e.log" 2>&1
rc=$?
ok "flamegraph -i F -o F refuses (exit 2) and leaves F as it was" \
	$([ $rc = 2 ] && cmp -s "$TMP/in.data" "$TMP/G" && echo 1)

# --- 2. devices are written in place and never removed ---------------------
if mknod "$TMP/full" c 1 7 2>/dev/null && [ -c "$TMP/full" ]; then
	sfp -e 2 export -f folded -i "$TMP/in.data" -o "$TMP/full" \
		> "$TMP/e.log" 2>&1
	rc=$?
	ok "export -o DEVICE (full): exit 2" $([ $rc = 2 ] && echo 1)
	ok "export -o DEVICE (full): the device node survives" \
		$([ -c "$TMP/full" ] && echo 1)
	ok "export -o DEVICE (full): says no space, naming the device" \
		$(grep -q "$TMP/full: No space left on device" "$TMP/e.log" && echo 1)
	sfp -e 2 flamegraph -i "$TMP/in.data" -o "$TMP/full" > "$TMP/e.log" 2>&1
	rc=$?
	ok "flamegraph -o DEVICE (full): exit 2, node survives, no space said" \
		$([ $rc = 2 ] && [ -c "$TMP/full" ] &&
		  grep -q "No space left on device" "$TMP/e.log" && echo 1)
	sfp -e 2 record -q -o "$TMP/full" -- "$SPIN" cpu 100 > "$TMP/e.log" 2>&1
	rc=$?
	ok "record -o DEVICE (full): exit 2, node survives, disk full named" \
		$([ $rc = 2 ] && [ -c "$TMP/full" ] &&
		  grep -q "$TMP/full: disk full" "$TMP/e.log" && echo 1)
	ok "no temporary file is left beside a device output" \
		$(no_tmp "$TMP" && echo 1)
else
	skip "export -o DEVICE" "mknod not permitted here"
fi
if mknod "$TMP/null" c 1 3 2>/dev/null; then
	sfp export -f folded -i "$TMP/in.data" -o "$TMP/null" \
		> "$TMP/e.log" 2>&1
	rc=$?
	ok "export -o DEVICE (null): exit 0, written in place" \
		$([ $rc = 0 ] && [ -c "$TMP/null" ] && echo 1)
else
	skip "export -o DEVICE (null)" "mknod not permitted here"
fi
# /dev/stdout redirected to a file is that file, not a link to replace
sfp export -f folded -i "$TMP/in.data" -o /dev/stdout \
	> "$TMP/stdout.folded" 2> "$TMP/e.log"
rc=$?
ok "export -o /dev/stdout > FILE writes FILE, /dev/stdout stays a link" \
	$([ $rc = 0 ] && [ -s "$TMP/stdout.folded" ] && [ -L /dev/stdout ] &&
	  echo 1)

# --- 4. nothing emptied before the job, .old kept, no symlink followed ----
echo "precious" > "$TMP/keep.data"
sfp -e 127 record -q -o "$TMP/keep.data" -- /nonexistent/prog > "$TMP/r.log" 2>&1
rc=$?
ok "record -o keep.data -- (a command that cannot run) fails" \
	$([ $rc != 0 ] && echo 1)
ok "... and leaves keep.data as it was" \
	$([ "$(cat "$TMP/keep.data")" = precious ] && echo 1)
ok "... and no temporary file" $(no_tmp "$TMP" && echo 1)
sfp record -q -o "$TMP/keep.data" -- "$SPIN" cpu 100 > "$TMP/r.log" 2>&1
rc=$?
sfp script -i "$TMP/keep.data" > "$TMP/k.script" 2>&1
rc2=$?
ok "record over an existing file keeps it as FILE.old, as perf does" \
	$([ $rc = 0 ] && [ $rc2 = 0 ] &&
	  [ "$(cat "$TMP/keep.data.old")" = precious ] && echo 1)

echo "victim" > "$TMP/victim"
ln -s "$TMP/victim" "$TMP/planted.data"
sfp record -q -o "$TMP/planted.data" -- "$SPIN" cpu 100 > "$TMP/r.log" 2>&1
rc=$?
ok "record -o PLANTED-SYMLINK does not write through the link" \
	$([ $rc = 0 ] && [ "$(cat "$TMP/victim")" = victim ] &&
	  [ -f "$TMP/planted.data" ] && [ ! -L "$TMP/planted.data" ] && echo 1)
ln -s "$TMP/victim" "$TMP/planted.folded"
sfp export -f folded -i "$TMP/in.data" -o "$TMP/planted.folded" \
	> "$TMP/e.log" 2>&1
rc=$?
ok "export -o PLANTED-SYMLINK does not write through the link" \
	$([ $rc = 0 ] && [ "$(cat "$TMP/victim")" = victim ] &&
	  [ -s "$TMP/planted.folded" ] && [ ! -L "$TMP/planted.folded" ] && echo 1)
ln -s "$TMP/victim" "$TMP/planted.sframe"
sfp sframe build -o "$TMP/planted.sframe" "$SPIN" > "$TMP/e.log" 2>&1
rc=$?
ok "sframe build -o PLANTED-SYMLINK does not write through the link" \
	$([ $rc = 0 ] && [ "$(cat "$TMP/victim")" = victim ] &&
	  [ ! -L "$TMP/planted.sframe" ] && echo 1)

# a failed export leaves the previous output as it was
echo "old output" > "$TMP/prev.folded"
sfp -e 2 export -f folded -i "$TMP/no-such.data" -o "$TMP/prev.folded" \
	> "$TMP/e.log" 2>&1
rc=$?
ok "a failed export leaves the existing -o file untouched" \
	$([ $rc != 0 ] && [ "$(cat "$TMP/prev.folded")" = "old output" ] && echo 1)

# --- 11. messages that name the output and say why ------------------------
check_msg() {	# name, want rc, regex, cmd...
	name=$1 want=$2 re=$3
	shift 3
	"$@" > "$TMP/msg.out" 2>&1
	rc=$?
	if [ $rc -eq "$want" ] && grep -Eq -- "$re" "$TMP/msg.out" &&
	   ! grep -q "no entry" "$TMP/msg.out" &&
	   ! grep -qE 'runtime error:|Sanitizer' "$TMP/msg.out"; then
		pass "$name"
	else
		fail "$name"
		echo "  exit $rc (want $want); output:"
		head -5 "$TMP/msg.out" | sed 's/^/  /'
	fi
}
check_msg "record -o /nonexistent/x names the path and the errno" 2 \
	"/nonexistent/x: No such file or directory" \
	"$SFPROF" record -q -o /nonexistent/x -- true
check_msg "record -o - says pipe mode is not supported" 2 \
	"-o -.*not supported" \
	sh -c "cd '$TMP' && exec '$SFPROF' record -q -o - -- true"
ok "record -o - writes no file named '-'" $([ ! -e "$TMP/-" ] && echo 1)
check_msg "export -o /nonexistent/x names the output" 2 \
	"cannot create /nonexistent/x: No such file or directory" \
	"$SFPROF" export -f folded -i "$TMP/in.data" -o /nonexistent/x
mkdir "$TMP/ro"
chmod 755 "$TMP"
chmod 555 "$TMP/ro"
chmod 644 "$TMP/in.data"
if command -v setpriv > /dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c "test -x '$SFPROF' && test -r '$TMP/in.data'" 2>/dev/null; then
	check_msg "convert -o <read-only dir>/x names the output, exit 2" 2 \
		"$TMP/ro/x: Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SFPROF" convert -i "$TMP/in.data" -o "$TMP/ro/x"
else
	skip "convert -o <read-only dir>/x" "cannot run as another user here"
fi

# --- a full disk: a real 64 KiB tmpfs -------------------------------------
mkdir "$SMALL"
if mount -t tmpfs -o size=64k tmpfs "$SMALL" 2>/dev/null; then
	echo "old output" > "$SMALL/prev.folded"
	dd if=/dev/zero of="$SMALL/filler" bs=4k 2>/dev/null
	check_msg "export on a full disk says no space, naming the file" 2 \
		"$SMALL/prev.folded: No space left on device" \
		"$SFPROF" export -f folded -i "$TMP/in.data" -o "$SMALL/prev.folded"
	ok "... and leaves the previous file and no temporary" \
		$([ "$(cat "$SMALL/prev.folded")" = "old output" ] &&
		  no_tmp "$SMALL" && echo 1)
	check_msg "convert on a full disk says no space, naming the file" 2 \
		"$SMALL/c.data: No space left on device" \
		"$SFPROF" convert -i "$TMP/in.data" -o "$SMALL/c.data"
	check_msg "record on a full disk says disk full, naming the file" 2 \
		"$SMALL/r.data: disk full" \
		"$SFPROF" record -q -o "$SMALL/r.data" -- "$SPIN" cpu 300
	umount "$SMALL"
else
	skip "full disk" "cannot mount a tmpfs here"
fi

# --- 5. a recording killed with SIGKILL -----------------------------------
# Poll until `sfprof script` reads samples from the growing file, then
# kill -9 sfprof (and its workload, by pid).  Every record up to the last
# flush must read back, with a warning that the file was not finished.
killed_rec() {	# name, record options...
	name=$1
	shift
	f=$TMP/killed.data
	rm -f "$f"
	"$SFPROF" record -q "$@" -o "$f" -- "$SPIN" cpu 60000 > "$TMP/k.log" 2>&1 &
	rpid=$!
	seen=0 i=0
	while [ $i -lt 600 ]; do
		if [ -s "$f" ]; then
			seen=$(sfp script -i "$f" 2>/dev/null | grep -c ' cpu-clock: ')
			[ "$seen" -gt 0 ] && break
		fi
		kill -0 $rpid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	kids=$(cat /proc/$rpid/task/*/children 2>/dev/null)
	kill -9 $rpid 2>/dev/null
	wait $rpid 2>/dev/null
	rrc=$?
	for k in $kids; do kill -9 "$k" 2>/dev/null; done
	# killed by our SIGKILL (137 = 128 + 9), not ended before it
	if [ $rrc -ne 137 ]; then
		fail "$name: record ended before the SIGKILL (exit $rrc)"
		head -5 "$TMP/k.log" | sed 's/^/  /'
	elif grep -qE 'runtime error:|Sanitizer' "$TMP/k.log"; then
		fail "$name: sanitizer report from record before the SIGKILL"
		grep -E -A3 'runtime error:|Sanitizer' "$TMP/k.log" | head -8 | sed 's/^/  /'
	fi
	if [ "$seen" -le 0 ]; then
		fail "$name: the recording's file never had samples"
		head -5 "$TMP/k.log" | sed 's/^/  /'
		return
	fi
	sfp script -i "$f" > "$TMP/ks.out" 2> "$TMP/ks.err"
	rc=$?
	n=$(nsamples "$TMP/ks.out")
	ok "$name: script reads the killed file ($n samples, >= $seen seen live), exit 0" \
		$([ $rc = 0 ] && [ "$n" -ge "$seen" ] && echo 1)
	ok "$name: script says the file was not finished" \
		$(grep -q "not finished" "$TMP/ks.err" && echo 1)
	sfp report -i "$f" > "$TMP/kr.out" 2> "$TMP/kr.err"
	rc=$?
	ok "$name: report reads the killed file, says it was not finished" \
		$([ $rc = 0 ] && grep -q "not finished" "$TMP/kr.err" &&
		  grep -q record-spin "$TMP/kr.out" && echo 1)
}
killed_rec "killed recording (--no-compress)" --no-compress
killed_rec "killed recording (zstd)"

# perf's own killed recording: data size 0, feature bits already set, no
# feature table.  sfprof reads its records and says it was not finished.
# perf writes that header as it starts (data size 0 until its exit): a
# perf that ended before the kill, or left no such file, failed, and its
# words are shown.
if command -v perf > /dev/null; then
	f=$TMP/perf-killed.data
	perf record -q -e cpu-clock -o "$f" -- "$SPIN" cpu 60000 > /dev/null 2> "$TMP/pr.err" &
	ppid=$!
	i=0
	while [ $i -lt 600 ] && [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -lt 1024 ]; do
		kill -0 $ppid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	kids=$(cat /proc/$ppid/task/*/children 2>/dev/null)
	kill -9 $ppid 2>/dev/null
	wait $ppid 2>/dev/null
	prc=$?
	for k in $kids; do kill -9 "$k" 2>/dev/null; done
	dsize=$(od -An -t u8 -j 48 -N 8 "$f" 2>/dev/null | tr -d ' ')
	if [ $prc -ne 137 ] || [ "$dsize" != 0 ] ||
	   [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -lt 1024 ]; then
		fail "perf's killed recording: perf record (exit $prc, want 137: our SIGKILL) left no growing file with data size 0 (data size '$dsize')"
		head -5 "$TMP/pr.err" | sed 's/^/  perf: /'
	else
		sfp script -i "$f" > "$TMP/pk.out" 2> "$TMP/pk.err"
		rc=$?
		ok "perf's killed recording: script exit 0, says not finished, no feature noise" \
			$([ $rc = 0 ] && grep -q "not finished" "$TMP/pk.err" &&
			  ! grep -q "feature" "$TMP/pk.err" && echo 1)
	fi
else
	skip "perf's killed recording" "no perf"
fi
