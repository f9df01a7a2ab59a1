#!/bin/sh
# checks: 64
# Error messages and option values (issue 13, defect 11): a missing file
# is named with the system's reason, a zombie is called a zombie, an input
# problem names the input, another user's process is not blamed on
# perf_event_paranoid, "-z 5" does not run "5", and no number option takes
# nan, inf, trailing text or a value out of range.  Each check looks at
# the exit code AND the message.
. "$(dirname "$0")/test-subr.sh"

# check_msg NAME WANT_RC REGEX CMD...: exit code and a stderr line matching
# REGEX (grep -E), and no sanitizer report; the output is shown on failure.
check_msg() {
	name=$1 want=$2 re=$3
	shift 3
	"$@" > "$TMP/msg.out" 2> "$TMP/msg.err"
	rc=$?
	cat "$TMP/msg.err" >> "$TMP/all.err"
	if [ "$rc" -eq "$want" ] && grep -Eq -- "$re" "$TMP/msg.err" &&
	   ! grep -Eq 'runtime error:|Sanitizer' "$TMP/msg.err"; then
		pass "$name"
	else
		fail "$name"
		echo "  exit $rc (want $want); want a line matching: $re"
		head -5 "$TMP/msg.err" | sed 's/^/  stderr: /'
	fi
}

D=${SFP_TEST_DATA:?}/perf
M=$TMP/missing.data
: > "$TMP/all.err"

# -- missing inputs: the path and the system's reason, exit 2 -----------
for cmd in script report; do
	check_msg "errmsg: $cmd -i MISSING names the file and ENOENT" 2 \
		"^sfprof $cmd: cannot open '$M': No such file or directory\$" \
		$SFPROF $cmd -i "$M"
done
check_msg "errmsg: export -i MISSING names the file and ENOENT" 2 \
	"^sfprof export: cannot open '$M': No such file or directory\$" \
	$SFPROF export --format folded -i "$M" -o "$TMP/out.folded"
check_msg "errmsg: flamegraph -i MISSING names the file and ENOENT" 2 \
	"^sfprof flamegraph: cannot open '$M': No such file or directory\$" \
	$SFPROF flamegraph -i "$M" -o "$TMP/fg.html"
check_msg "errmsg: convert -i MISSING names the file and ENOENT" 2 \
	"^sfprof convert: cannot open '$M': No such file or directory\$" \
	$SFPROF convert -i "$M" -o "$TMP/conv.data"
check_msg "errmsg: flamegraph --kallsyms MISSING names the kallsyms file" 2 \
	"^sfprof flamegraph: cannot open kallsyms '$TMP/nokallsyms': No such file or directory\$" \
	$SFPROF flamegraph -i "$D/plain.data" -o "$TMP/fg.html" \
	--kallsyms "$TMP/nokallsyms"
check_msg "errmsg: export --kallsyms MISSING names the kallsyms file" 2 \
	"^sfprof export: cannot open kallsyms '$TMP/nokallsyms': No such file or directory\$" \
	$SFPROF export --format folded -i "$D/plain.data" -o "$TMP/o.folded" \
	--kallsyms "$TMP/nokallsyms"
check_msg "errmsg: script -i DIRECTORY says it is a directory" 2 \
	"^sfprof script: cannot open '$TMP': Is a directory\$" \
	$SFPROF script -i "$TMP"
if grep -q "no information for this address" "$TMP/all.err"; then
	fail "errmsg: no library 'no entry' string for a missing file"
else
	pass "errmsg: no library 'no entry' string for a missing file"
fi

# -- unwind -p ZOMBIE ------------------------------------------------------
# A parent that never reaps its exited child keeps it a zombie.
python3 -c 'import os, sys, time
p = os.fork()
if p == 0:
    os._exit(0)
sys.stdout.write("%d\n" % p)
sys.stdout.flush()
time.sleep(30)' > "$TMP/zpid" &
holder=$!
n=0
st=
while [ $n -lt 500 ]; do
	if [ -s "$TMP/zpid" ]; then
		z=$(cat "$TMP/zpid")
		st=$(sed 's/.*) //' "/proc/$z/stat" 2>/dev/null | cut -d' ' -f1)
		[ "$st" = Z ] && break
	fi
	n=$((n + 1))
	sleep 0.02
done
if [ "$st" = Z ]; then
	check_msg "errmsg: unwind -p ZOMBIE says zombie" 1 \
		"^sfprof: process $z: is a zombie .*no memory" \
		$SFPROF unwind -p "$z"
else
	fail "errmsg: unwind -p ZOMBIE (no zombie made: state '$st')"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# -- sframe build: an input problem names the input ----------------------
printf 'not an ELF\n' > "$TMP/notelf"
check_msg "errmsg: sframe build -o OUT NOTELF names the input" 1 \
	"^sfprof: $TMP/notelf: corrupt input\$" \
	$SFPROF sframe build -o "$TMP/out.sframe" "$TMP/notelf"
if grep -q "out.sframe" "$TMP/msg.err"; then
	fail "errmsg: sframe build does not blame the output for the input"
else
	pass "errmsg: sframe build does not blame the output for the input"
fi
check_msg "errmsg: sframe build -o BADDIR/OUT names the output, exit 2" 2 \
	"^sfprof: cannot write $TMP/nodir/out.sframe: No such file or directory\$" \
	$SFPROF sframe build -o "$TMP/nodir/out.sframe" /bin/true

# -- record -z N -----------------------------------------------------------
mkdir -p "$TMP/bin"
printf '#!/bin/sh\ntouch "%s/ran5"\n' "$TMP" > "$TMP/bin/5"
chmod +x "$TMP/bin/5"
PATH="$TMP/bin:$PATH" check_msg "errmsg: record -z 5 refuses, says why" 2 \
	"^sfprof: -z takes its level attached \(-z5 or --compression-level=5\)" \
	$SFPROF record -q -z 5 -o "$TMP/z.data"
if [ -e "$TMP/ran5" ]; then
	fail "errmsg: record -z 5 did not run '5' as the command"
else
	pass "errmsg: record -z 5 did not run '5' as the command"
fi
check_rc "errmsg: record -z5 -- true (attached level)" 0 \
	$SFPROF record -q -z5 -o "$TMP/z.data" -- true
check_rc "errmsg: record --compression-level=3 -- true" 0 \
	$SFPROF record -q --compression-level=3 -o "$TMP/z.data" -- true
PATH="$TMP/bin:$PATH" check_rc "errmsg: record -z -- 5 runs '5' (asked for)" 0 \
	$SFPROF record -q -z -o "$TMP/z.data" -- 5
if [ -e "$TMP/ran5" ]; then
	pass "errmsg: record -z -- 5 ran '5'"
else
	fail "errmsg: record -z -- 5 ran '5'"
fi

# -- number options: no nan, inf, trailing text, sign or overflow --------
for v in nan inf -1 101 5x '' ' 5' 1e999 0x1p3; do
	check_msg "errmsg: report --percent-limit '$v' refused" 2 \
		"invalid argument '$v' for --percent-limit" \
		$SFPROF report -i "$D/plain.data" --percent-limit "$v"
done
check_rc "errmsg: report --percent-limit 2.5 accepted" 0 \
	$SFPROF report -i "$D/plain.data" --percent-limit 2.5
for v in graph,nan graph,inf graph,-1 graph,200 graph,1x; do
	check_msg "errmsg: report -g '$v' refused" 2 \
		"invalid argument '$v' for --call-graph" \
		$SFPROF report -i "$D/plain.data" -g "$v"
done
# --call-graph: one table (cli-parse.c), each command naming what it takes
check_msg "errmsg: record --call-graph bogus refused, with every mode" 2 \
	"^sfprof: --call-graph: unknown mode 'bogus' \(sframe, fp, dwarf, kernel-defer, none, bpf-defer, auto\)\$" \
	$SFPROF record -q --call-graph bogus -o "$TMP/d.data" -- true
check_msg "errmsg: agent --call-graph dwarf refused, with the agent's modes" 2 \
	"^sfprof: --call-graph: unknown mode 'dwarf' \(sframe, fp, bpf-defer, auto\)\$" \
	$SFPROF agent --call-graph dwarf
for v in nan inf -1 0 1x; do
	check_msg "errmsg: record --duration '$v' refused" 2 \
		"^sfprof: --duration: bad duration '$v'\$" \
		$SFPROF record -q --duration "$v" -o "$TMP/d.data" -- true
done
for v in ' 99' +99 -99 99x 18446744073709551616; do
	check_msg "errmsg: record -F '$v' refused" 2 \
		"^sfprof: -F: bad frequency '.+'\$" \
		$SFPROF record -q -F "$v" -o "$TMP/d.data" -- true
done
check_msg "errmsg: unwind -p '-1' refused" 2 "^sfprof: bad --pid '-1'\$" \
	$SFPROF unwind -p -1
check_msg "errmsg: unwind -p '+1' refused" 2 "^sfprof: bad --pid '\+1'\$" \
	$SFPROF unwind -p +1

# -- record -p PID of another user, run unprivileged ---------------------
if [ "$(id -u)" != 0 ]; then
	skip "errmsg: record -p ROOT_PID as nobody" "not root: cannot switch user"
elif ! command -v setpriv > /dev/null || ! id nobody > /dev/null 2>&1; then
	skip "errmsg: record -p ROOT_PID as nobody" "no setpriv or no user nobody"
elif ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
	test -x "$SFPROF"; then
	skip "errmsg: record -p ROOT_PID as nobody" "nobody cannot run $SFPROF"
else
	sleep 30 &
	victim=$!
	(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		$SFPROF record -p "$victim" --duration 0.2 -o /dev/null) \
		> "$TMP/np.out" 2> "$TMP/np.err"
	rc=$?
	kill "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
	if [ $rc -eq 1 ] &&
	   grep -Eq "no permission to attach to $victim .*belongs to uid 0" \
		"$TMP/np.err" &&
	   ! grep -q "perf_event_paranoid=" "$TMP/np.err"; then
		pass "errmsg: record -p ROOT_PID as nobody blames ownership, not paranoid"
	else
		fail "errmsg: record -p ROOT_PID as nobody blames ownership, not paranoid"
		echo "  exit $rc (want 1)"
		sed 's/^/  stderr: /' "$TMP/np.err" | head -5
	fi
fi

# -- campaign finding: an ELF in which no FDE survives -------------------
# (a truncated gcc program; UBSan reported qsort(NULL, 0) in the asan tier)
check_msg "errmsg: sframe build of an ELF without usable FDEs fails cleanly" 1 \
	"no-fde-truncated.elf" \
	$SFPROF sframe build --stats -o "$TMP/nofde.sframe" \
	"${SFP_TEST_DATA:?}/cfi/no-fde-truncated.elf"
if grep -Eq "runtime error|Sanitizer" "$TMP/msg.err"; then
	fail "errmsg: sframe build of an ELF without usable FDEs: no sanitizer report"
else
	pass "errmsg: sframe build of an ELF without usable FDEs: no sanitizer report"
fi

# -- one wording for a corrupt input (issue 38, point 20) ---------------------
# The same corrupt perf.data through every reader: the file, the offset
# and what was wrong, then "FILE: corrupt input" (flamegraph said "Bad
# message"), exit 1.  The first record's size is made 3 (less than its
# own header).
if sfp record -q -o "$TMP/ok.data" -- true > /dev/null 2>&1; then
	cp "$TMP/ok.data" "$TMP/bad.data"
	doff=$(od -An -t u8 -j 40 -N 8 "$TMP/bad.data" | tr -d ' ')
	printf '\003\000' | dd of="$TMP/bad.data" bs=1 seek=$((doff + 6)) \
		conv=notrunc 2>/dev/null
	B=$TMP/bad.data
	for c in "report" "script" "export -f folded -o $TMP/b.folded" \
		 "flamegraph -o $TMP/b.html" "convert -o $TMP/b2.data"; do
		check_msg "errmsg: ${c%% *} of a corrupt perf.data: file, offset, what; 'corrupt input'" 1 \
			"^sfprof: $B: offset $doff: record size out of bounds\$" \
			$SFPROF $c -i "$B"
		if grep -q "^sfprof: \(convert: \)\?$B: corrupt input\$" "$TMP/msg.err" &&
		   ! grep -qi "bad message" "$TMP/msg.err"; then
			pass "errmsg: ${c%% *} of a corrupt perf.data ends with '$B: corrupt input'"
		else
			fail "errmsg: ${c%% *} of a corrupt perf.data ends with '$B: corrupt input'"
			sed 's/^/  stderr: /' "$TMP/msg.err" | head -5
		fi
	done
else
	fail "errmsg: record of the corrupt-input test file"
fi
# A truncated ELF (its section headers cut off): what is wrong and where,
# not "no entry" for the sections libelf then does not show.
head -c 4096 "$SFP_BUILD/tests/progs/record-spin" > "$TMP/trunc.elf"
shoff=$(od -An -t u8 -j 40 -N 8 "$TMP/trunc.elf" | tr -d ' ')
check_msg "errmsg: sframe build of a truncated ELF names the file, offset and the truncation" 1 \
	"^sfprof: $TMP/trunc.elf: offset $(printf '0x%x' "$shoff"): section header table \([0-9]+ entries\) beyond the end of the file \(4096 bytes\): truncated\$" \
	$SFPROF sframe build -o "$TMP/trunc.sframe" "$TMP/trunc.elf"
if grep -q "^sfprof: $TMP/trunc.elf: corrupt input\$" "$TMP/msg.err" &&
   ! grep -q "no entry" "$TMP/msg.err"; then
	pass "errmsg: sframe build of a truncated ELF: 'corrupt input', no 'no entry'"
else
	fail "errmsg: sframe build of a truncated ELF: 'corrupt input', no 'no entry'"
	sed 's/^/  stderr: /' "$TMP/msg.err" | head -5
fi
# no-fde-truncated.elf above is now refused at open (its section headers
# are cut off); the path it was kept for -- an ELF in which no FDE
# survives -- is taken by a whole ELF whose CFI and PLTs objcopy removed.
if command -v objcopy > /dev/null; then
	if objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
		--remove-section=.debug_frame --remove-section=.plt \
		--remove-section=.plt.got --remove-section=.plt.sec \
		"$SFP_BUILD/tests/progs/record-spin" "$TMP/nocfi.elf" 2> "$TMP/oc.err"; then
		check_msg "errmsg: sframe build of an ELF without CFI: 0 FDEs, exit 1, no sanitizer report" 1 \
			"nocfi.elf" \
			$SFPROF sframe build --stats -o "$TMP/nocfi.sframe" "$TMP/nocfi.elf"
	else
		fail "errmsg: objcopy could not strip the CFI ($(head -1 "$TMP/oc.err"))"
	fi
else
	skip "errmsg: sframe build of an ELF without CFI" "objcopy not installed"
fi
