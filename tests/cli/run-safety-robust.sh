#!/bin/sh
# What a hostile user or a broken environment does to sfprof, with real
# processes, FIFOs, symbolic links and broken binaries (issue 13):
#  - a FIFO, a link or another user's file in the SFrame cache (unwind -p
#    must not hang with its target stopped, nor read through links);
#  - `sframe cache clear|list` on a cache directory that is a link, or
#    that others can write;
#  - `record`'s exit status is the command's (1, 139 = 128 + SIGSEGV);
#  - `record` and a command that ignores SIGTERM/SIGINT: SIGKILL after
#    --kill-after, or at a second signal;
#  - `sframe build` of an ELF without any CFI (no qsort(NULL, 0) under
#    UBSan) and of a broken .eh_frame (error with offset, exit 1);
#  - `sframe check` of a 0-byte section, a header without FDEs, and FDEs
#    that repeat (the same function 200,000 times) or overlap.
# Waits poll for an observable event with a generous bound that only ever
# turns into a FAIL; hangs are bounded by timeout(1) and are FAILs too.
# checks: 35
. "$(dirname "$0")/test-subr.sh"
PROGS=$SFP_BUILD/tests/progs
HERE=$(dirname "$0")

# wait_for NAME CMD...: poll CMD every 0.1 s, up to 120 s.
wait_for() {
	i=0
	while ! "$@" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 1200 ]; then
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# no_san FILE...: no sanitizer report in FILE (for runs under timeout(1)
# or in the background, where sfp cannot be used; their exit status is
# compared where they run).
no_san() {
	! grep -qE 'runtime error:|LeakSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer' "$@"
}

# True while PID is stopped (ptrace or job control): state t or T.
stopped() {
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ "$st" = t ] || [ "$st" = T ]
}

# ---------------------------------------------------------------------
# 6. The table cache: a FIFO, a link, another user's file.
if [ -x "$PROGS/unwind-target" ]; then
	C6=$TMP/cache6
	mkdir -m 700 "$C6"
	"$PROGS/unwind-target" > "$TMP/target.out" &
	TPID=$!
	if wait_for grep -q ready "$TMP/target.out"; then
		SFPROF_CACHE_DIR=$C6 timeout 120 "$SFPROF" unwind -p $TPID \
			> "$TMP/u1.out" 2> "$TMP/u1.err"
		rc=$?
		n=$(ls "$C6" | grep -c '\.sframe$')
		if [ $rc -eq 0 ] && no_san "$TMP/u1.err" && [ "$n" -ge 1 ]; then
			pass "unwind -p fills the cache ($n tables)"
		else
			fail "unwind -p fills the cache (exit $rc, $n tables)"
			head -5 "$TMP/u1.err" | sed 's/^/  /'
		fi
		# Every entry replaced by a FIFO: open() must not block.
		for e in "$C6"/*.sframe; do
			rm -f "$e" && mkfifo "$e"
		done
		SFPROF_CACHE_DIR=$C6 timeout 120 "$SFPROF" unwind -p $TPID \
			> "$TMP/u2.out" 2> "$TMP/u2.err"
		rc=$?
		if [ $rc -eq 0 ] && no_san "$TMP/u2.err" && cmp -s "$TMP/u1.out" "$TMP/u2.out"; then
			pass "unwind -p with FIFOs in the cache: same stacks, no hang"
		else
			fail "unwind -p with FIFOs in the cache (exit $rc; 124: hung)"
			diff "$TMP/u1.out" "$TMP/u2.out" | head -5 | sed 's/^/  /'
			head -5 "$TMP/u2.err" | sed 's/^/  /'
		fi
		if grep -q 'not a regular file of ours' "$TMP/u2.err"; then
			pass "cache FIFO is reported"
		else
			fail "cache FIFO is reported"
			head -5 "$TMP/u2.err" | sed 's/^/  /'
		fi
		if stopped $TPID; then
			fail "unwind target left stopped"
		else
			pass "unwind target running after unwind -p"
		fi
		n=0
		for e in "$C6"/*.sframe; do
			[ -f "$e" ] && ! [ -p "$e" ] && n=$((n + 1))
		done
		[ $n -ge 1 ] && pass "FIFO entries replaced by rebuilt tables" ||
			fail "FIFO entries replaced by rebuilt tables"

		# An entry that is a link to a file elsewhere: not read through,
		# the file it points at is untouched.
		e=$(ls "$C6"/*.sframe | head -1)
		echo "precious" > "$TMP/precious"
		rm -f "$e" && ln -s "$TMP/precious" "$e"
		SFPROF_CACHE_DIR=$C6 timeout 120 "$SFPROF" unwind -p $TPID \
			> "$TMP/u3.out" 2> "$TMP/u3.err"
		rc=$?
		if [ $rc -eq 0 ] && no_san "$TMP/u3.err" && [ "$(cat "$TMP/precious")" = precious ] &&
		   ! [ -L "$e" ] && cmp -s "$TMP/u1.out" "$TMP/u3.out"; then
			pass "cache entry that is a link: not followed, replaced"
		else
			fail "cache entry that is a link (exit $rc)"
			head -5 "$TMP/u3.err" | sed 's/^/  /'
		fi

		# Another user's entry (valid content): not used, rebuilt ours.
		if [ "$(id -u)" = 0 ]; then
			chown 65534:65534 "$e"
			SFPROF_CACHE_DIR=$C6 timeout 120 "$SFPROF" unwind -p $TPID \
				> "$TMP/u4.out" 2> "$TMP/u4.err"
			rc=$?
			if [ $rc -eq 0 ] && no_san "$TMP/u4.err" && [ "$(stat -c %u "$e")" = 0 ]; then
				pass "cache entry of another user is not used"
			else
				fail "cache entry of another user is not used (exit $rc, owner $(stat -c %u "$e"))"
				head -5 "$TMP/u4.err" | sed 's/^/  /'
			fi
		else
			skip "cache entry of another user is not used" "needs root to chown"
		fi
	else
		fail "unwind-target did not start"
	fi
	kill $TPID 2>/dev/null
	wait $TPID 2>/dev/null
else
	fail "unwind-target not built"
fi

# ---------------------------------------------------------------------
# 7. cache clear / list on an unsafe directory.
mkdir -m 700 "$TMP/victim"
echo keep > "$TMP/victim/aa-g1-v1.sframe"
echo keep > "$TMP/victim/.tmp-1-2"
ln -s "$TMP/victim" "$TMP/cache-link"
SFPROF_CACHE_DIR=$TMP/cache-link sfp -e 2 sframe cache clear > "$TMP/c7.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && [ -f "$TMP/victim/aa-g1-v1.sframe" ] && [ -f "$TMP/victim/.tmp-1-2" ] &&
   grep -q 'symbolic link' "$TMP/c7.out"; then
	pass "cache clear refuses a symlinked cache directory"
else
	fail "cache clear refuses a symlinked cache directory (exit $rc)"
	ls -a "$TMP/victim" | sed 's/^/  /'
	sed 's/^/  /' "$TMP/c7.out" | head -3
fi
check_rc "cache list refuses a symlinked cache directory" 2 \
	env SFPROF_CACHE_DIR="$TMP/cache-link" "$SFPROF" sframe cache list
chmod 777 "$TMP/victim"
SFPROF_CACHE_DIR=$TMP/victim sfp -e 2 sframe cache clear > "$TMP/c7b.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && [ -f "$TMP/victim/aa-g1-v1.sframe" ] &&
   grep -q 'writable by others' "$TMP/c7b.out"; then
	pass "cache clear refuses a world-writable cache directory"
else
	fail "cache clear refuses a world-writable cache directory (exit $rc)"
fi
chmod 700 "$TMP/victim"
if [ "$(id -u)" = 0 ]; then
	chown 65534:65534 "$TMP/victim"
	check_rc "cache clear refuses another user's cache directory" 2 \
		env SFPROF_CACHE_DIR="$TMP/victim" "$SFPROF" sframe cache clear
	[ -f "$TMP/victim/aa-g1-v1.sframe" ] && pass "another user's cache kept" ||
		fail "another user's cache kept"
	chown 0:0 "$TMP/victim"
else
	skip "cache clear refuses another user's cache directory" "needs root to chown"
fi
# Our own directory: cleared, also of a link entry (the link goes, not
# its target).
ln -s "$TMP/precious-7" "$TMP/victim/bb-g1-v1.sframe"
echo keep > "$TMP/precious-7"
SFPROF_CACHE_DIR=$TMP/victim sfp sframe cache clear > "$TMP/c7c.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'removed 3 files' "$TMP/c7c.out" &&
   [ "$(cat "$TMP/precious-7")" = keep ]; then
	pass "cache clear of our own directory (links removed, not followed)"
else
	fail "cache clear of our own directory (exit $rc)"
	sed 's/^/  /' "$TMP/c7c.out" | head -3
fi

# ---------------------------------------------------------------------
# 8. record exits with the command's status.
cat > "$TMP/segv.c" <<'EOF'
int main(void)
{
	volatile int *p = 0;

	*p = 1;		/* SIGSEGV */
	return 0;
}
EOF
gcc -O0 -o "$TMP/segv" "$TMP/segv.c" || fail "cannot build segv.c"
rec_status() {	# name, want rc, summary regex, command...
	name=$1 want=$2 re=$3
	shift 3
	sfp -e "$want" record -o "$TMP/st.data" -- "$@" > "$TMP/st.out" 2>&1
	rc=$?
	sfp script -i "$TMP/st.data" > /dev/null 2>&1
	src=$?
	if [ $rc -eq "$want" ] && [ $src -eq 0 ] && grep -Eq "$re" "$TMP/st.out"; then
		pass "$name"
	else
		fail "$name (exit $rc, want $want; script exit $src)"
		head -5 "$TMP/st.out" | sed 's/^/  /'
	fi
}
rec_status "record -- false exits 1 and says so" 1 \
	'command: exited with status 1; sfprof exits 1' false
rec_status "record -- (SIGSEGV) exits 139 and says so" 139 \
	'command: killed by signal 11 \(SIGSEGV\).*sfprof exits 139' "$TMP/segv"
rec_status "record -- sh -c 'exit 3' exits 3" 3 'exited with status 3' sh -c 'exit 3'
rec_status "record -- true exits 0" 0 'command: exited with status 0$' true

# ---------------------------------------------------------------------
# 3. A command that ignores SIGTERM and SIGINT.  Recorded for --duration
# 0.5 s, then SIGTERM, and SIGKILL 2 s later: from the command's start
# (its pid file, seen by polling) to its death (polled) is at least 1.5 s
# (the 2 s of --kill-after after a SIGTERM that comes after the command
# started; the pid file can show up late: 1.3 s after the command's
# start under the ASan build on a busy machine, 1,858 ms measured; an
# immediate SIGKILL measured 642 ms), and at most duration + kill-after +
# 5 s (a grace 10 times too long, or never ending, fails).
# The recording, complete before the command is signalled, reads back
# with every sample the summary counted.
IGN='echo $$ > "$0"; trap "" TERM INT; while :; do :; done'
rm -f "$TMP/k.pid"
timeout 120 "$SFPROF" record -o "$TMP/k.data" --duration 0.5 --kill-after 2 \
	-- sh -c "$IGN" "$TMP/k.pid" > "$TMP/k.out" 2>&1 &
kpid=$!
if wait_for test -s "$TMP/k.pid"; then
	t0=$(date +%s%N)
	cpid=$(cat "$TMP/k.pid")
	i=0
	while kill -0 "$cpid" 2>/dev/null && [ $i -lt 2400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	t1=$(date +%s%N)
	lived=$(( (t1 - t0) / 1000000 ))
else
	cpid= lived=-1
fi
wait $kpid
rc=$?
if [ $rc -eq 0 ] && no_san "$TMP/k.out" &&
   grep -q 'SIGKILL after --kill-after; killed by signal 9' "$TMP/k.out" &&
   [ -n "$cpid" ] && ! kill -0 "$cpid" 2>/dev/null &&
   [ "$lived" -ge 1500 ] && [ "$lived" -le 7500 ]; then
	pass "record --duration 0.5 --kill-after 2: SIGKILL for a command ignoring SIGTERM, $lived ms after it started (1500-7500)"
else
	fail "record --duration 0.5 --kill-after 2 (exit $rc, 124: hung; the command lived $lived ms, want 1500-7500)"
	head -5 "$TMP/k.out" | sed 's/^/  /'
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
fi
sfp script -i "$TMP/k.data" > "$TMP/k.script" 2> "$TMP/k.serr"
rc=$?
want=$(sed -n 's/^sfprof record: \([0-9]*\) samples in .*/\1/p' "$TMP/k.out")
n=$(grep -c ' cpu-clock: ' "$TMP/k.script")
other=$(grep ' cpu-clock: ' "$TMP/k.script" | grep -vc '^sh ')
if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$n" -gt 0 ] && [ "$n" = "$want" ] &&
   [ "$other" = 0 ] && ! grep -q 'not finished' "$TMP/k.serr"; then
	pass "record --kill-after: the recording reads back whole, $n samples of the command as the summary said"
else
	fail "record --kill-after: the recording reads back (script exit $rc, $n samples, the summary's '$want', $other of another command)"
	head -3 "$TMP/k.serr" | sed 's/^/  /'
fi
check_rc "record --kill-after bogus is a usage error" 2 \
	"$SFPROF" record -q --kill-after 5x -- true

# A second SIGINT (or SIGTERM) kills the command at once; --kill-after
# is long, so only the second signal can end this in time.
for sigs in "INT INT" "TERM TERM" "INT TERM"; do
	s1=${sigs% *} s2=${sigs#* }
	rm -f "$TMP/s.pid"
	"$SFPROF" record -o "$TMP/s.data" --kill-after 1d -- sh -c "$IGN" "$TMP/s.pid" \
		> "$TMP/s.out" 2>&1 &
	spid=$!
	ok=1
	wait_for test -s "$TMP/s.pid" || { ok=0; echo "  the command did not start"; }
	cpid=$(cat "$TMP/s.pid" 2>/dev/null)
	kill -$s1 $spid
	wait_for grep -q 'waiting for the command' "$TMP/s.out" ||
		{ ok=0; echo "  no 'waiting for the command' after SIG$s1"; }
	kill -$s2 $spid
	wait_for sh -c "! kill -0 $spid" || { ok=0; echo "  sfprof still runs after SIG$s2"; }
	if [ $ok = 0 ]; then
		kill -KILL $spid "$cpid" 2>/dev/null
	fi
	wait $spid
	rc=$?
	if [ $ok = 1 ] && [ $rc -eq 0 ] && no_san "$TMP/s.out" &&
	   ! kill -0 "$cpid" 2>/dev/null &&
	   grep -q 'SIGKILL at a second signal' "$TMP/s.out" &&
	   sfp script -i "$TMP/s.data" > /dev/null 2>&1; then
		pass "record: SIG$s1 then SIG$s2 kill a command that ignores them"
	else
		fail "record: SIG$s1 then SIG$s2 (exit $rc)"
		head -8 "$TMP/s.out" | sed 's/^/  /'
	fi
done

# ---------------------------------------------------------------------
# 9. An ELF without any CFI: no function survives, nothing to sort.
printf 'void _start(void) { for (;;) __asm__ volatile("" ::: "memory"); }\n' > "$TMP/nocfi.c"
if gcc -nostdlib -static -fno-asynchronous-unwind-tables -o "$TMP/nocfi" "$TMP/nocfi.c"; then
	for a in "" --no-plt; do
		sfp -e 1 sframe build $a "$TMP/nocfi" > "$TMP/n.out" 2>&1
		rc=$?
		if [ $rc -eq 1 ] && ! grep -q 'runtime error' "$TMP/n.out"; then
			pass "sframe build ${a:-(PLT too)} of an ELF without CFI: exit 1, no UB"
		else
			fail "sframe build ${a:-(PLT too)} of an ELF without CFI (exit $rc)"
			head -5 "$TMP/n.out" | sed 's/^/  /'
		fi
	done
else
	fail "cannot build an ELF with -nostdlib -static"
fi

# ---------------------------------------------------------------------
# 10. Validation.  The inputs come from gas (--gsframe) and objcopy.
SPIN=$PROGS/record-spin	# gcc -Wa,--gsframe
objcopy -O binary --only-section=.sframe "$SPIN" "$TMP/spin.sframe"
ADDR=0x$(readelf -SW "$SPIN" | awk '$2 == ".sframe" { print $4 }')
: > "$TMP/zero.sframe"
sfp -e 1 sframe check "$TMP/zero.sframe" > "$TMP/v.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'offset 0x0: empty section (0 bytes)' "$TMP/v.out"; then
	pass "sframe check: a 0-byte section is invalid"
else
	fail "sframe check: a 0-byte section is invalid (exit $rc)"
	sed 's/^/  /' "$TMP/v.out" | head -3
fi
# A header with no FDE: valid (libsframe decodes it too), and said so.
python3 "$HERE/sframe-repeat-fde.py" "$TMP/spin.sframe" "$TMP/nofde.sframe" 0 0 0
sfp sframe check "$TMP/nofde.sframe" > "$TMP/v.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '0 FDEs.*no function described' "$TMP/v.out"; then
	pass "sframe check: a header without FDEs is valid and said so"
else
	fail "sframe check: a header without FDEs (exit $rc)"
	sed 's/^/  /' "$TMP/v.out" | head -3
fi
# The same function 200,000 times.
python3 "$HERE/sframe-repeat-fde.py" "$TMP/spin.sframe" "$TMP/rep.sframe" 1 200000 0
sfp -e 1 sframe check --section-addr "$ADDR" "$TMP/rep.sframe" > "$TMP/v.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -Eq 'offset 0x[0-9a-f]+: FDE 1 \[0x[0-9a-f]+, 0x[0-9a-f]+\) repeats FDE 0' "$TMP/v.out" &&
   grep -q '199999 FDEs overlap or repeat' "$TMP/v.out" && [ "$(wc -l < "$TMP/v.out")" -le 13 ]; then
	pass "sframe check: 200,000 repeated FDEs are invalid, named by index and address"
else
	fail "sframe check: 200,000 repeated FDEs (exit $rc)"
	sed 's/^/  /' "$TMP/v.out" | head -4
fi
# Overlapping (each starts 16 bytes after the previous).
python3 "$HERE/sframe-repeat-fde.py" "$TMP/spin.sframe" "$TMP/ovl.sframe" 1 3 16
sfp -e 1 sframe check --section-addr "$ADDR" "$TMP/ovl.sframe" > "$TMP/v.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'FDE 1 .* overlaps FDE 0' "$TMP/v.out" &&
   grep -q 'FDE 2 .* overlaps FDE 1' "$TMP/v.out"; then
	pass "sframe check: overlapping FDEs are invalid"
else
	fail "sframe check: overlapping FDEs (exit $rc)"
	sed 's/^/  /' "$TMP/v.out" | head -4
fi
# Control: one copy, and the step of exactly the size, are fine.
python3 "$HERE/sframe-repeat-fde.py" "$TMP/spin.sframe" "$TMP/one.sframe" 1 1 0
check_rc "sframe check: the single FDE is valid" 0 \
	"$SFPROF" sframe check --section-addr "$ADDR" "$TMP/one.sframe"
check_rc "sframe check: gas's own section is valid" 0 "$SFPROF" sframe check "$SPIN"

# `sframe build` of a broken .eh_frame: the first entry's length made
# 0x7fffffff (past the section), and separately the CIE version byte
# made 9 (unsupported).
EH=$(readelf -SW "$SPIN" | awk '$2 == ".eh_frame" { print $5 }')
cp "$SPIN" "$TMP/broken-len"
printf '\377\377\377\177' | dd of="$TMP/broken-len" bs=1 seek=$((0x$EH)) conv=notrunc status=none
cp "$SPIN" "$TMP/broken-cie"
printf '\011' | dd of="$TMP/broken-cie" bs=1 seek=$((0x$EH + 8)) conv=notrunc status=none
for a in --no-plt ""; do
	sfp -e 1 sframe build $a -o "$TMP/b.sft" "$TMP/broken-len" > "$TMP/b.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'broken-len: .eh_frame offset 0x0: bad CFI entry length' "$TMP/b.out"; then
		pass "sframe build ${a:-(PLT too)}: unreadable .eh_frame is an error with its offset"
	else
		fail "sframe build ${a:-(PLT too)}: unreadable .eh_frame (exit $rc)"
		sed 's/^/  /' "$TMP/b.out" | head -4
	fi
done
rm -f "$TMP/b.sft"
sfp -e 1 sframe build --no-plt -o "$TMP/b.sft" "$TMP/broken-cie" > "$TMP/b.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'broken-cie: .eh_frame offset 0x[0-9a-f]*: FDE: ' "$TMP/b.out" &&
   grep -q 'malformed and left out' "$TMP/b.out" &&
   sfp sframe check "$TMP/b.sft" > /dev/null 2>&1; then
	pass "sframe build: malformed FDEs named, exit 1, the rest written"
else
	fail "sframe build: malformed FDEs (exit $rc)"
	sed 's/^/  /' "$TMP/b.out" | head -4
fi
check_rc "sframe build of the intact ELF exits 0" 0 \
	"$SFPROF" sframe build --no-plt -o "$TMP/b.sft" "$SPIN"
