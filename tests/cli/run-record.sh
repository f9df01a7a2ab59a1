#!/bin/sh
# `sfprof record` on this machine: options, the errors users meet (with the
# fix in the message), and recordings read back by `sfprof script` and by
# Debian's `perf script`.
# checks: 43
. "$(dirname "$0")/test-subr.sh"

SPIN=$SFP_BUILD/tests/progs/record-spin

# --help names every option and every call-graph mode.
sfp record --help > "$TMP/help" 2>&1
ok=1
for o in --event --freq --count --pid --tid --all-cpus --output --mmap-pages \
	--call-graph --inline --stack-size --max-depth --duration --no-inherit \
	--quiet --verbose --help sframe fp dwarf kernel-defer \
	--compression-level --no-compress; do
	grep -q -- "$o" "$TMP/help" || { ok=0; echo "  --help lacks $o"; }
done
[ $ok = 1 ] && pass "record --help documents every option" || fail "record --help documents every option"

check_rc "record without target is a usage error" 2 $SFPROF record -q
check_rc "record with two targets is a usage error" 2 $SFPROF record -q -a -- true
check_rc "record --call-graph bogus is a usage error" 2 $SFPROF record --call-graph bogus -- true
check_rc "record -m 3 (not a power of two) is a usage error" 2 $SFPROF record -q -m 3 -- true
check_rc "record --stack-size 100 (not a multiple of 8) is a usage error" 2 $SFPROF record -q --stack-size 100 -- true
check_rc "record --inline with --call-graph fp is a usage error" 2 $SFPROF record -q --inline --call-graph fp -- true
check_rc "record -m 64K --stack-size 8192 runs" 0 $SFPROF record -q -m 64K --stack-size 8192 -o "$TMP/m.data" -- true

# Errors that say what to do.
check_msg() {	# name, want rc, regex, cmd...
	name=$1 want=$2 re=$3
	shift 3
	"$@" > "$TMP/msg.out" 2>&1
	rc=$?
	if [ $rc -eq "$want" ] && grep -Eq "$re" "$TMP/msg.out" &&
	   ! grep -qE 'runtime error:|Sanitizer' "$TMP/msg.out"; then
		pass "$name"
	else
		fail "$name"
		echo "  exit $rc (want $want); output:"
		head -5 "$TMP/msg.out" | sed 's/^/  /'
	fi
}
check_msg "unknown event names the event and the known ones" 1 \
	"unknown event 'no-such'.*cpu-clock" \
	$SFPROF record -q -o "$TMP/x.data" -e no-such -- true
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	check_msg "hardware event says the machine has no PMU" 1 \
		"no.*PMU|PMU.*none|has none" \
		$SFPROF record -q -o "$TMP/x.data" -e cycles -- true
else
	skip "hardware event without PMU" "this machine has a CPU PMU"
fi
check_msg "a command that cannot run is named with the reason, exit 127 as sh" 127 \
	"cannot run the command: No such file" \
	$SFPROF record -q -o "$TMP/x.data" -- /nonexistent/prog
check_msg "a PID that is gone is named" 1 "process 4000000 not found" \
	$SFPROF record -q -o "$TMP/x.data" -p 4000000
if ! kernel_defer_expected; then
	check_msg "kernel-defer says the kernel lacks it (probed)" 1 \
		"lacks deferred user callchains.*sframe" \
		$SFPROF record -q -o "$TMP/x.data" --call-graph kernel-defer -- true
else
	check_rc "kernel-defer records on this kernel" 0 \
		$SFPROF record -q -o "$TMP/x.data" --call-graph kernel-defer -- true
fi
check_msg "paranoid/permission error says how to fix it" 1 \
	"perf_event_paranoid|run as root|permission" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	$SFPROF record -q -o /tmp/sfp-nobody.data -a --duration 0.1

if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	check_msg "paranoid 2: a user records its own command, user space only" 0 \
		"sample user space only" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		$SFPROF record -o /tmp/sfp-nobody.data -- "$SPIN" flat 100
	rm -f /tmp/sfp-nobody.data
fi

# Deferred form, read back by sfprof script: every sample is printed and
# gets the program's stack (stitched from the deferred records).
if sfp record -o "$TMP/d.data" -- "$SPIN" flat 300 > "$TMP/d.out" 2>&1; then
	pass "record (deferred form) of a program without frame pointers"
else
	fail "record (deferred form) of a program without frame pointers"
	head -5 "$TMP/d.out" | sed 's/^/  /'
fi
n=$(sed -n 's/^sfprof record: \([0-9]*\) samples.*/\1/p' "$TMP/d.out")
grep -q "deferred records (dedup" "$TMP/d.out" && pass "summary gives deferred records and dedup" || fail "summary gives deferred records and dedup"
grep -q "unwind stops:" "$TMP/d.out" && pass "summary gives unwind stop reasons" || fail "summary gives unwind stop reasons"
sfp script -i "$TMP/d.data" > "$TMP/d.script" 2> "$TMP/d.err"
got=$(grep -c 'cpu-clock:' "$TMP/d.script")
# Samples whose first frame is flat_leaf: how many show leaf->mid->outer->main.
leaf_full() {
	awk '/cpu-clock:/{if (s) n++; s=0; a=0; first=1; next}
	     first { first=0; if ($0 ~ /flat_leaf/) { t++; a=1 } }
	     /flat_mid/{if(a==1)a=2} /flat_outer/{if(a==2)a=3} / main\+/{if(a==3)s=1}
	     END{if (s) n++; print n+0, t+0}' "$1"
}
set -- $(leaf_full "$TMP/d.script")
full=$1 leaf=$2
if [ -n "$n" ] && [ "$got" -eq "$n" ] && [ ! -s "$TMP/d.err" ]; then
	pass "sfprof script reads the deferred form ($got samples)"
else
	fail "sfprof script reads the deferred form ($got of $n samples)"
	head -5 "$TMP/d.err" | sed 's/^/  /'
fi
# Most samples are in flat_leaf; from there the stack must be complete.
if [ "$leaf" -gt $((got / 2)) ] && [ $((full * 100)) -ge $((leaf * 99)) ]; then
	pass "deferred form: leaf->mid->outer->main in $full of $leaf samples in the leaf"
else
	fail "deferred form: leaf->mid->outer->main in $full of $leaf samples in the leaf ($got in all)"
fi

# Completeness: the walks end at the first frame (_start, or clone for
# threads) and know it ("outermost"), also through the program's own
# gas-made .sframe, which lacks the crt's _start: that PC comes from the
# table built from the CFI.  (Without that fallback: 0 outermost, every
# unwind "no-info" at _start.)
uw=$(sed -n 's/.* \([0-9]*\) unwinds.*/\1/p' "$TMP/d.out")
om=$(sed -n 's/.*unwind stops:.* outermost \([0-9]*\).*/\1/p' "$TMP/d.out")
# Of the samples taken while the program ran (main on the stack; not the
# loader's or a sanitizer runtime's start), how many end in _start/clone.
set -- $(awk 'function end_(){ if (m) { t++; if (l ~ /^(_start|__clone|clone3?)\+/) e++ } }
	      /cpu-clock:/{end_(); l=""; m=0; next}
	      /^\t/{l=$2; if ($2 ~ /^main\+/) m=1} END{end_(); print e+0, t+0}' "$TMP/d.script")
if [ -n "$uw" ] && [ -n "$om" ] && [ "$2" -gt 100 ] &&
   [ $((($1 + 1) * 100)) -ge $(($2 * 99)) ] && [ $((om + 1)) -ge "$1" ]; then
	pass "completeness: $1 of $2 stacks through main end in _start/clone; $om of $uw unwinds end outermost"
else
	fail "completeness: $1 of $2 stacks through main end in _start/clone; '$om' of '$uw' unwinds end outermost"
fi

# Inline form: sfprof script and Debian's perf script.
if sfp record -q --inline -o "$TMP/i.data" -- "$SPIN" flat 300; then
	pass "record --inline"
else
	fail "record --inline"
fi
sfp script -i "$TMP/i.data" > "$TMP/i.script" 2>&1
grep -q "flat_mid" "$TMP/i.script" && pass "sfprof script reads the inline form" || fail "sfprof script reads the inline form"
if command -v perf > /dev/null; then
	perf script -i "$TMP/i.data" > "$TMP/p.script" 2> "$TMP/p.err"
	rc=$?
	# (the writer declares 128-byte attrs, perf 6.1's own size, unless
	# an event needs config3: perf rejecting the file, "more recent and
	# unsupported ABI" or any other reason, is a bug of the writer)
	if [ $rc -eq 0 ] && [ ! -s "$TMP/p.err" ] && grep -q flat_mid "$TMP/p.script"; then
		pass "perf script reads the inline form without warnings"
	else
		fail "perf script reads the inline form without warnings (rc $rc)"
		head -5 "$TMP/p.err" | sed 's/^/  /'
		perf script -v -i "$TMP/i.data" 2>&1 > /dev/null |
			grep -m3 "ABI\|attr\|size" | sed 's/^/  perf -v: /'
	fi
	# perf's own view of the stacks: leaf -> ... -> main in nearly every
	# sample, and kernel frames named (the synthesized kernel map).
	set -- $(leaf_full "$TMP/p.script")
	ptot=$(grep -c 'cpu-clock:' "$TMP/p.script")
	if [ "$2" -gt $((ptot / 2)) ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; then
		pass "perf script: leaf->mid->outer->main in $1 of $2 samples in the leaf"
	else
		fail "perf script: leaf->mid->outer->main in $1 of $2 samples in the leaf ($ptot in all)"
	fi
	sfp record -q --inline -o "$TMP/k.data" -- "$SPIN" sys 200
	perf script -i "$TMP/k.data" > "$TMP/k.script" 2> "$TMP/k.err"
	if grep -Eq '[a-z_]+\+0x[0-9a-f]+ \(\[kernel\.kallsyms\]\)' "$TMP/k.script" &&
	   grep -q 'sys_outer' "$TMP/k.script" && [ ! -s "$TMP/k.err" ]; then
		pass "perf script: kernel and user frames of a syscall-heavy program"
	else
		fail "perf script: kernel and user frames of a syscall-heavy program"
	fi
else
	skip "perf script reads the inline form" "no perf"
fi

# Compression: zstd by default, in perf record -z's format (COMPRESSED
# records + HEADER_COMPRESSED), so perf reads it; -z is level 1 like perf's;
# --no-compress writes plain records.
check_rc "record --compression-level=23 is a usage error" 2 $SFPROF record -q --compression-level=23 -- true
bps() { sed -n 's/.*(\([0-9]*\) bytes\/sample.*/\1/p' "$1"; }
if command -v perf > /dev/null; then
	perf report --header-only -i "$TMP/i.data" 2>/dev/null | grep -q '^# compressed : Zstd, level = 5' &&
		pass "compressed by default (perf: zstd level 5)" ||
		fail "compressed by default (perf: zstd level 5)"
	perf report --stdio -i "$TMP/i.data" > "$TMP/i.report" 2> "$TMP/i.report.err"
	if [ $? -eq 0 ] && [ ! -s "$TMP/i.report.err" ] && grep -q 'flat_leaf' "$TMP/i.report"; then
		pass "perf report reads the compressed inline form without warnings"
	else
		fail "perf report reads the compressed inline form without warnings"
		head -3 "$TMP/i.report.err" | sed 's/^/  /'
	fi
	sfp record -z --inline -o "$TMP/z1.data" -- "$SPIN" flat 500 > "$TMP/z1.out" 2>&1
	perf report --header-only -i "$TMP/z1.data" 2>/dev/null | grep -q '^# compressed : Zstd, level = 1' &&
		pass "-z alone is level 1, like perf's" || fail "-z alone is level 1, like perf's"
	sfp record --no-compress --inline -o "$TMP/nz.data" -- "$SPIN" flat 500 > "$TMP/nz.out" 2>&1
	perf script -i "$TMP/nz.data" > "$TMP/nz.script" 2> "$TMP/nz.err"
	if [ $? -eq 0 ] && [ ! -s "$TMP/nz.err" ] && grep -q flat_mid "$TMP/nz.script" &&
	   ! perf report --header-only -i "$TMP/nz.data" 2>/dev/null | grep -q '^# compressed'; then
		pass "--no-compress: plain file, read by perf script without warnings"
	else
		fail "--no-compress: plain file, read by perf script without warnings"
	fi
	# the same workload, both ways: compression takes most of the bytes.
	# Half a second of samples, so that the headers and the mappings, which
	# compress little, are not most of the file: at 100 ms (about 110
	# samples) the ASan build's ratio was 3.0-3.1, at 500 ms it is about 7.
	a=$(bps "$TMP/z1.out") b=$(bps "$TMP/nz.out")
	if [ -n "$a" ] && [ -n "$b" ] && [ $((a * 3)) -lt "$b" ]; then
		pass "compressed: $a bytes/sample, plain: $b"
	else
		fail "compressed: '$a' bytes/sample, plain: '$b'"
	fi
else
	skip "perf reads compressed files" "no perf"
fi

# Kernel entries in a loop from one call site, with the same stack bytes:
# every 4 kHz sample falls in a different read(), and the engine sees it
# in the registers the kernel copied besides ip/sp/bp (the loop counter):
# one deferred record per sample.  (Comparing ip/sp/bp and the stack only,
# it merged 40-45% of them.)
if sfp record -F 4000 -o "$TMP/lp.data" -- "$SPIN" loop 300 > "$TMP/lp.out" 2>&1; then
	set -- $(sed -n 's/.* \([0-9]*\) samples with a user stack.* \([0-9]*\) deferred records.*/\1 \2/p' "$TMP/lp.out")
	if [ -n "$2" ] && [ "$1" -gt 100 ] && [ $(($2 * 100)) -ge $(($1 * 95)) ]; then
		pass "loop of syscalls: $2 deferred records for $1 samples (entries told apart)"
	else
		fail "loop of syscalls: '$2' deferred records for '$1' samples"
	fi
else
	fail "record of a syscall loop"
fi

# SIGINT stops cleanly and leaves a valid file.
$SFPROF record -q -o "$TMP/s.data" -- "$SPIN" cpu 100000 &
rp=$!
sleep 1
kill -INT $rp
wait $rp
rc=$?
if [ $rc -eq 0 ] && sfp script -i "$TMP/s.data" 2>&1 | has 'cpu-clock:'; then
	pass "SIGINT stops the recording with a valid file"
else
	fail "SIGINT stops the recording with a valid file (exit $rc)"
fi

# --duration on an attached process; the target keeps running.
"$SPIN" cpu 100000 &
sp=$!
sleep 0.2
if sfp record -q -o "$TMP/p.data" -p $sp --duration 0.5 && kill -0 $sp; then
	pass "-p with --duration stops after the time and leaves the target"
else
	fail "-p with --duration stops after the time and leaves the target"
fi
kill $sp 2> /dev/null
wait $sp 2> /dev/null
sfp script -i "$TMP/p.data" 2>&1 | has "spin_sort\|cmp_leaf" && pass "-p recording has the target's frames (synthesized maps)" || fail "-p recording has the target's frames (synthesized maps)"

# Disk full: a tiny tmpfs (plain records: compressed, they would fit).
if mkdir -p "$TMP/full" && mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2> /dev/null; then
	check_msg "disk full is reported with the fix" 2 "disk full" \
		$SFPROF record -q --no-compress -o "$TMP/full/x.data" --call-graph dwarf -- "$SPIN" cpu 300
	umount "$TMP/full"
else
	skip "disk full is reported" "cannot mount a small tmpfs"
fi

# System-wide: every CPU, kernel threads too; nothing lost at 999 Hz.
# cpu-clock gives an idle CPU next to no samples, so a spinner is pinned
# to each online CPU meanwhile (niced; stopped when the recording ends).
spinners=
for c in $(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
	for (c = r[1]; c <= r[n]; c++) print c } }' /sys/devices/system/cpu/online); do
	taskset -c "$c" nice -n 19 "$SPIN" cpu 60000 > /dev/null 2>&1 &
	spinners="$spinners $!"
done
arec=0
sfp record -o "$TMP/a.data" -a --duration 0.5 > "$TMP/a.out" 2>&1 || arec=$?
for p in $spinners; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
if [ $arec = 0 ]; then
	n=$(sed -n 's/^sfprof record: \([0-9]*\) samples.*/\1/p' "$TMP/a.out")
	got=$(sfp script -i "$TMP/a.data" 2>/dev/null | grep -c 'cpu-clock:')
	if [ -n "$n" ] && [ "$n" -gt 100 ] && [ "$got" -eq "$n" ]; then
		pass "-a records every CPU ($n samples, all read back)"
	else
		fail "-a records every CPU ($got of $n read back)"
	fi
	cpus=$(sfp script -i "$TMP/a.data" 2>/dev/null | sed -n 's/.*\[\([0-9]*\)\].*cpu-clock:.*/\1/p' | sort -u | wc -l)
	# every online CPU, whatever CPUs this shell may run on (nproc
	# counts only those of its affinity mask)
	ncpu=$(getconf _NPROCESSORS_ONLN)
	[ "$cpus" -eq "$ncpu" ] && pass "-a has samples of all $cpus CPUs" || fail "-a has samples of $cpus of $ncpu CPUs"
else
	fail "-a records every CPU"
	head -5 "$TMP/a.out" | sed 's/^/  /'
fi

# Several events, one of them a tracepoint (RAW data kept when rewriting).
if [ -r /sys/kernel/tracing/events/sched/sched_switch/id ] ||
   [ -r /sys/kernel/debug/tracing/events/sched/sched_switch/id ]; then
	if sfp record -q -o "$TMP/t.data" -e cpu-clock -e sched:sched_switch -- "$SPIN" sys 200; then
		sfp script -i "$TMP/t.data" > "$TMP/t.script" 2>&1
		if grep -q 'sched:sched_switch:\|sched_switch:' "$TMP/t.script" && grep -q 'cpu-clock:' "$TMP/t.script"; then
			pass "cpu-clock + sched:sched_switch recorded and told apart"
		else
			fail "cpu-clock + sched:sched_switch recorded and told apart"
			head -5 "$TMP/t.script" | sed 's/^/  /'
		fi
	else
		fail "record -e sched:sched_switch"
	fi
else
	skip "tracepoint recording" "tracefs not mounted"
fi

# The live status line, when stderr is a terminal.
if command -v script > /dev/null; then
	script -qec "$SFPROF record -o $TMP/st.data -- $SPIN cpu 800" /dev/null > "$TMP/st.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qE 'runtime error:|Sanitizer' "$TMP/st.out" &&
	   tr '\r' '\n' < "$TMP/st.out" | grep -Eq '^\[ *[0-9.]+s\] [0-9]+ samples, [0-9]+ lost, [0-9.]+ MB written'; then
		pass "status line on a terminal"
	else
		fail "status line on a terminal (exit $rc)"
	fi
	sfp record -o "$TMP/st2.data" -- "$SPIN" cpu 300 2> "$TMP/st2.err"
	tr '\r' '\n' < "$TMP/st2.err" | grep -Eq '^\[ *[0-9.]+s\]' && fail "no status line when stderr is not a terminal" || pass "no status line when stderr is not a terminal"
else
	skip "status line on a terminal" "no script(1)"
fi

# A syscall-heavy program: several samples per kernel entry share one
# deferred record (and one unwind), as the kernel would do it.
if sfp record -q -F 4000 -o "$TMP/y.data" -- "$SPIN" sys 300; then
	ns=$(sfp script -i "$TMP/y.data" 2>/dev/null | grep -c 'cpu-clock:')
	nd=$(sfp script --no-merge-callchains -i "$TMP/y.data" 2>/dev/null | grep -c 'DEFERRED CALLCHAIN')
	nk=$(sfp script -i "$TMP/y.data" 2>/dev/null | grep -c 'sys_outer')
	if [ "$ns" -gt 100 ] && [ "$nd" -gt 0 ] && [ "$nd" -lt "$ns" ] && [ "$nk" -gt $((ns / 2)) ]; then
		pass "syscall-heavy: $nd deferred records for $ns samples, stacks stitched"
	else
		fail "syscall-heavy: $nd deferred records for $ns samples ($nk with sys_outer)"
	fi
else
	fail "record of a syscall-heavy program"
fi
