# sfprof script / convert against the real perf on this machine.
# Recordings are made here with `perf record` (cpu-clock: no hardware PMU).
# checks: 33
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
PROGS=${SFP_BUILD:?}/tests/progs
W="$PROGS/perf-work"
WN="$PROGS/perf-work-nofp"

if ! command -v perf >/dev/null 2>&1 ||
   ! perf record -q -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>&1; then
	skip_rest "perf tests" "perf record does not work here"
fi


# Lines of the first file (perf's) that diff finds unchanged in the
# second, in per mille, where every difference counts: a changed line
# once, a line of perf's missing once, and an extra line of ours once (the
# larger of diff's '<' and '>' counts).
same_permille() {
	t=$(wc -l < "$1")
	d=$(diff "$1" "$2" | grep -c '^<')
	a=$(diff "$1" "$2" | grep -c '^>')
	[ "$a" -gt "$d" ] && d=$a
	[ "$d" -gt "$t" ] && d=$t
	if [ "$t" -eq 0 ]; then echo 0; else echo $(( (t - d) * 1000 / t )); fi
}

# Every frame line of sfprof script equals perf script's, or differs by a
# rule of docs/perf-names.md whose name an independent tool confirms
# (perf-name-rules.sh), and such lines stay under 0.1 % of all the lines
# compared (summed over the files: one PLT sample in a short recording
# must not fail it, many must).  strict: frames
# paired by position, a frame only one side prints fails; addr (dwarf
# files, where each side unwinds): frames paired by address, frames only
# one unwinder found are left to the unwinding checks below.
. "$HERE/perf-name-rules.sh"
names_total=0 names_ruled=0
# (group mode: how many of the equal runs held perf's "(inlined)" lines)
inlined_said() {
	grep '^INLINED ' "$TMP/names.diff" |
		awk '{ printf " (%d of them with %d \"(inlined)\" lines)", $2, $3 }'
}
names_check() {
	label=$1 mode=$2
	awk -v mode="$mode" -f "$HERE/perf-names.awk" "$3" "$4" > "$TMP/names.diff"
	set -- $(grep '^TOTAL ' "$TMP/names.diff")
	total=${2:-0} same=${3:-0} differ=${4:-0} ponly=${5:-0} sonly=${6:-0}
	set -- $(explain_names "$TMP/names.diff" 2> "$TMP/names.bad")
	ruled=${1:-0} bad=${2:-1}
	if [ "$mode" != strict ]; then ponly=0 sonly=0; fi
	names_total=$((names_total + total))
	names_ruled=$((names_ruled + ruled))
	if [ "$total" -gt 0 ] && [ "$bad" -eq 0 ] && [ "$ponly" -eq 0 ] &&
	   [ "$sonly" -eq 0 ]; then
		pass "names: $label: $same of $total frame lines equal perf script's, $ruled by a documented rule$(inlined_said)"
	else
		fail "names: $label: $same of $total frame lines equal, $ruled by a rule, $bad unexplained, $ponly only perf's, $sonly only sfprof's"
		sed 's/^/  /' "$TMP/names.bad"
	fi
}

# --- frame-pointer recording: script output equals perf script ---------------
if ! rec "$TMP/fp.data" -F 2000 -g -- "$W" 300; then
	fail "perf record -g of the workload failed three times"
	exit 0
fi
perf script --no-inline -i "$TMP/fp.data" > "$TMP/fp.perf" 2>/dev/null
sfp script -i "$TMP/fp.data" > "$TMP/fp.sfp" 2> "$TMP/fp.err"
rc=$?
n=$(grep -c ' cpu-clock: $' "$TMP/fp.perf")
if [ $rc -eq 0 ] && [ "$n" -gt 50 ] &&
   [ "$(grep -v '^	' "$TMP/fp.perf" | md5sum)" = "$(grep -v '^	' "$TMP/fp.sfp" | md5sum)" ] &&
   [ "$(same_permille "$TMP/fp.perf" "$TMP/fp.sfp")" -ge 995 ]; then
	pass "script -g: same headers and >= 99.5% identical lines as perf script ($n samples)"
else
	fail "script -g vs perf script (rc $rc, $n samples, $(same_permille "$TMP/fp.perf" "$TMP/fp.sfp")/1000 same)"
	diff "$TMP/fp.perf" "$TMP/fp.sfp" | head -20 | sed 's/^/  /'
fi
names_check "fp file" strict "$TMP/fp.perf" "$TMP/fp.sfp"
# a mixed workload: many short processes (the loader's entry frames),
# PLT stubs of programs and of libc, vDSO calls, Python
if rec "$TMP/mix.data" -F 2000 -g -- sh -c \
	"ls -lR /usr/lib > /dev/null 2>&1; for i in 1 2 3 4 5 6 7 8; do date > /dev/null; done;
	 python3 -c 'import time, json
for i in range(200000): time.time()
for i in range(300): json.dumps(list(range(500)))' 2> /dev/null; $W 50"; then
	# perf's default output: its "(inlined)" lines are for frames of
	# its dwarf unwinder only, none in an fp file, nor in ours
	perf script -i "$TMP/mix.data" > "$TMP/mix.perf" 2>/dev/null
	sfp script -i "$TMP/mix.data" > "$TMP/mix.sfp" 2> "$TMP/mix.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q '(\[vdso\])$' "$TMP/mix.perf"; then
		names_check "fp file of a mixed workload (with [vdso] frames)" strict "$TMP/mix.perf" "$TMP/mix.sfp"
	else
		fail "names: fp file of a mixed workload (sfprof rc $rc, [vdso] frames: $(grep -c '(\[vdso\])$' "$TMP/mix.perf"))"
	fi
else
	fail "perf record -g of the mixed workload failed three times"
fi
# the workload's own frames are there, with full stacks through the recursion
if grep -q 'recurse+0x' "$TMP/fp.sfp" && grep -q 'cmp_u32+0x' "$TMP/fp.sfp" &&
   [ "$(grep -c 'recurse+0x' "$TMP/fp.sfp")" -gt 100 ]; then
	pass "script -g: deep recursion and qsort callback frames symbolized"
else
	fail "script -g: workload frames missing"
fi

# --- system-wide: every CPU, interleaved rings, [cpu] column ----------------
# Other programs on this shared machine come and go (binaries rebuilt
# under them show as "(deleted)"), so symbols are not compared here, only
# the headers (comm, tid, cpu, time, period, event) and frame addresses.
frames_only() {
	awk '/^\t/ { print "\t" $1; next } { print }' "$1"
}
if rec "$TMP/sys.data" -a -F 500 -g -- sleep 0.3; then
	perf script --no-inline -i "$TMP/sys.data" > "$TMP/sys.perf" 2>/dev/null
	sfp script -i "$TMP/sys.data" > "$TMP/sys.sfp" 2>&1
	frames_only "$TMP/sys.perf" > "$TMP/sys.perf.a"
	frames_only "$TMP/sys.sfp" > "$TMP/sys.sfp.a"
	if grep -q '^.* \[00[01]\] ' "$TMP/sys.sfp" && [ -s "$TMP/sys.perf.a" ] &&
	   cmp -s "$TMP/sys.perf.a" "$TMP/sys.sfp.a"; then
		pass "script -a -g: headers and frame addresses identical to perf script ($(grep -c ' cpu-clock: $' "$TMP/sys.perf") samples)"
	else
		fail "script -a -g: headers or frame addresses differ"
		diff "$TMP/sys.perf.a" "$TMP/sys.sfp.a" | head -10 | sed 's/^/  /'
	fi
	names_check "system-wide -a -g file" strict "$TMP/sys.perf" "$TMP/sys.sfp"
else
	# (rec said on stderr why each of its three attempts failed)
	fail "system-wide recording: perf record -a failed three times: $(head -1 "$TMP/rec.log")"
fi

# --- pipe mode, compressed records -------------------------------------------
perf record -q -e cpu-clock -o - -F 1000 -g -- "$W" 150 > "$TMP/pipe.data" 2>/dev/null
perf script --no-inline -i - < "$TMP/pipe.data" > "$TMP/pipe.perf" 2>/dev/null
sfp script -i - < "$TMP/pipe.data" > "$TMP/pipe.sfp" 2>&1
if [ -s "$TMP/pipe.perf" ] &&
   [ "$(same_permille "$TMP/pipe.perf" "$TMP/pipe.sfp")" -ge 995 ]; then
	pass "script -i - (pipe mode) matches perf script"
else
	fail "script -i - (pipe mode)"
	diff "$TMP/pipe.perf" "$TMP/pipe.sfp" | head -10 | sed 's/^/  /'
fi
cat "$TMP/pipe.data" | sfp script -i - > "$TMP/pipe2.sfp" 2>&1
check_eq "script -i - from a real pipe" "$TMP/pipe.sfp" "$TMP/pipe2.sfp"

if ! rec "$TMP/z.data" -z -F 1000 -g -- "$W" 150; then
	fail "perf record -z failed three times: $(head -1 "$TMP/rec.log")"
elif ! perf script --no-inline -i "$TMP/z.data" > "$TMP/z.perf" 2> "$TMP/z.perf.err" ||
     [ ! -s "$TMP/z.perf" ]; then
	fail "perf script cannot read back its own perf record -z file"
	head -5 "$TMP/z.perf.err" | sed 's/^/  perf: /'
else
	sfp script -i "$TMP/z.data" > "$TMP/z.sfp" 2>&1
	if [ "$(same_permille "$TMP/z.perf" "$TMP/z.sfp")" -ge 995 ]; then
		pass "script on zstd-compressed records (perf record -z)"
	else
		fail "script on perf record -z"
		diff "$TMP/z.perf" "$TMP/z.sfp" | head -10 | sed 's/^/  /'
	fi
fi

# --- convert --inline: perf 6.1 reads it cleanly, same stacks -----------------
check_rc "convert --inline exits 0" 0 \
	"$SFPROF" convert -i "$TMP/fp.data" -o "$TMP/inl.data" --inline
perf script --no-inline -i "$TMP/inl.data" > "$TMP/inl.perf" 2> "$TMP/inl.err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$TMP/inl.err" ] &&
   cmp -s "$TMP/fp.perf" "$TMP/inl.perf"; then
	pass "perf script on convert --inline: no errors, output identical to the original's"
else
	fail "perf script on convert --inline (rc $rc)"
	head -5 "$TMP/inl.err" | sed 's/^/  /'
	diff "$TMP/fp.perf" "$TMP/inl.perf" | head -10 | sed 's/^/  /'
fi
perf report --stdio -i "$TMP/inl.data" > "$TMP/rep.out" 2> "$TMP/rep.err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$TMP/rep.err" ] && grep -q 'recurse' "$TMP/rep.out" &&
   grep -q '^# Samples: ' "$TMP/rep.out"; then
	pass "perf report --stdio on convert --inline: clean, shows the call graph"
else
	fail "perf report --stdio on convert --inline (rc $rc)"
	head -5 "$TMP/rep.err" | sed 's/^/  /'
fi
perf evlist -v -i "$TMP/inl.data" > "$TMP/ev.out" 2> "$TMP/ev.err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$TMP/ev.err" ] &&
   grep -q '^cpu-clock: .*sample_type: .*CALLCHAIN' "$TMP/ev.out" &&
   ! grep -q 'defer' "$TMP/ev.out"; then
	pass "perf evlist -v on convert --inline"
else
	fail "perf evlist -v on convert --inline (rc $rc)"
	cat "$TMP/ev.out" "$TMP/ev.err" | head -5 | sed 's/^/  /'
fi
perf buildid-list -i "$TMP/inl.data" > "$TMP/bid.out" 2>&1
if grep -q "$(basename "$W")\$" "$TMP/bid.out" && grep -q 'libc.so.6$' "$TMP/bid.out"; then
	pass "convert writes the build-ids of the DSOs hit"
else
	fail "build-ids in the converted file"
	head -5 "$TMP/bid.out" | sed 's/^/  /'
fi

# --- convert --deferred: 6.19 form, stitched back to the same stacks ----------
check_rc "convert --deferred exits 0" 0 \
	"$SFPROF" convert -i "$TMP/fp.data" -o "$TMP/def.data" --deferred
sfp script -i "$TMP/def.data" > "$TMP/def.sfp" 2>&1
# The same samples with the same stacks.  The order may differ where the
# input delivered a sample late (after its round was flushed: perf counts
# these as out-of-order events); convert writes every sample in time
# order, so such a sample moves to its place.  Compare the samples as a
# set, one line per sample, and say how many moved.
blocks() { awk 'BEGIN { RS = ""; FS = "\n" } { gsub(/\n/, " | "); print }' "$1"; }
blocks "$TMP/fp.sfp" | sort > "$TMP/fp.set"
blocks "$TMP/def.sfp" | sort > "$TMP/def.set"
if cmp -s "$TMP/fp.sfp" "$TMP/def.sfp"; then
	pass "script merges deferred callchains back into the original stacks"
elif cmp -s "$TMP/fp.set" "$TMP/def.set"; then
	moved=$(blocks "$TMP/fp.sfp" > "$TMP/fp.seq"; blocks "$TMP/def.sfp" > "$TMP/def.seq";
		paste -d '\n' "$TMP/fp.seq" "$TMP/def.seq" | paste - - | awk -F '\t' '$1 != $2' | wc -l)
	pass "script merges deferred callchains back into the original stacks ($moved positions differ: late samples put in time order)"
else
	check_eq "script merges deferred callchains back into the original stacks" \
		"$TMP/fp.set" "$TMP/def.set"
fi
sfp script --no-merge-callchains -i "$TMP/def.data" > "$TMP/nm.sfp" 2>&1
nd=$(grep -c ': DEFERRED CALLCHAIN \[cookie: [0-9a-f]*\]$' "$TMP/nm.sfp")
nc=$(grep -c '^	 *[0-9a-f]* (cookie) (\[unknown\])$' "$TMP/nm.sfp")
if [ "$nd" -gt 0 ] && [ "$nc" -ge "$nd" ]; then
	pass "--no-merge-callchains: $nd DEFERRED CALLCHAIN records, $nc cookie frames"
else
	fail "--no-merge-callchains ($nd records, $nc cookies)"
fi
# perf 6.1 predates record type 22 and attr.defer_callchain: it must
# refuse the file for those reasons (its own words: the attr's reserved
# bits, an unknown record type), not for another (a file missing or
# unreadable) and not misread it.
perf script -i "$TMP/def.data" > /dev/null 2> "$TMP/def.perf.err"
rc=$?
if [ $rc -ne 0 ] && [ -s "$TMP/def.data" ] &&
   grep -q '^Reserved bits are set unexpectedly' "$TMP/def.perf.err" &&
   grep -q '^Found [1-9][0-9]* unknown events' "$TMP/def.perf.err"; then
	pass "perf 6.1 rejects the 6.19-only deferred file: reserved attr bits, unknown record type"
else
	fail "perf 6.1 rejects the 6.19-only deferred file for its new ABI (rc $rc)"
	ls -l "$TMP/def.data" 2>&1 | sed "s|$TMP/||; s/^/  /"
	head -5 "$TMP/def.perf.err" | sed 's/^/  perf: /'
fi
sfp convert -i "$TMP/def.data" -o "$TMP/back.data" --inline 2>/dev/null
perf script --no-inline -i "$TMP/back.data" > "$TMP/back.perf" 2>&1
check_eq "deferred -> inline round trip: perf script output unchanged" \
	"$TMP/fp.perf" "$TMP/back.perf"
# The same on the corpus and on the mixed recording (many processes and
# threads on both CPUs: cookies of several tids and CPUs interleave).  perf
# 6.1 cannot read the deferred form, so it reads the deferred file turned
# back inline; perf script of that must equal perf script of the input, and
# our script must print the same for the deferred file as for the input.
rt_bad= sc_bad= rt_n=0
nocomm='s/^.* +([0-9]+ +[0-9]+\.[0-9]+: )/\1/'
for f in "$SFP_TEST_DATA/perf/fp.data" "$SFP_TEST_DATA/perf/pipe.data" \
	 "$SFP_TEST_DATA/perf/z.data" "$TMP/mix.data"; do
	[ -s "$f" ] || continue
	b=$(basename "$f" .data)
	rt_n=$((rt_n + 1))
	sfp convert -i "$f" -o "$TMP/rt-$b.def" --deferred 2>/dev/null &&
	sfp convert -i "$TMP/rt-$b.def" -o "$TMP/rt-$b.inl" --inline 2>/dev/null
	perf script --no-inline -i "$f" > "$TMP/rt-$b.want" 2>&1
	perf script --no-inline -i "$TMP/rt-$b.inl" > "$TMP/rt-$b.got" 2>&1
	cmp -s "$TMP/rt-$b.want" "$TMP/rt-$b.got" || rt_bad="$rt_bad $b"
	# as sets of samples (late samples move to their time, see above),
	# without the comm: a sample at the very time of an exec may take
	# the new name once in time order
	sfp script -i "$f" > "$TMP/rt-$b.s" 2>/dev/null
	blocks "$TMP/rt-$b.s" | sed -E "$nocomm" | sort > "$TMP/rt-$b.swant"
	sfp script -i "$TMP/rt-$b.def" > "$TMP/rt-$b.s" 2>/dev/null
	blocks "$TMP/rt-$b.s" | sed -E "$nocomm" | sort > "$TMP/rt-$b.sgot"
	cmp -s "$TMP/rt-$b.swant" "$TMP/rt-$b.sgot" || sc_bad="$sc_bad $b"
done
if [ "$rt_n" -ge 4 ] && [ -z "$rt_bad" ]; then
	pass "convert --deferred then --inline of $rt_n files: perf script output unchanged"
else
	fail "convert --deferred then --inline: perf script differs for:${rt_bad:- (only $rt_n files)}"
	for b in $rt_bad; do
		diff "$TMP/rt-$b.want" "$TMP/rt-$b.got" | head -6 | sed "s/^/  $b: /"
	done
fi
if [ "$rt_n" -ge 4 ] && [ -z "$sc_bad" ]; then
	pass "script of convert --deferred output equals script of the input ($rt_n files)"
else
	fail "script of convert --deferred output differs from the input's for:${sc_bad:- (only $rt_n files)}"
	for b in $sc_bad; do
		diff "$TMP/rt-$b.swant" "$TMP/rt-$b.sgot" | head -6 | sed "s/^/  $b: /"
	done
fi

# --- dwarf mode: unwinding perf's snapshots ----------------------------------
rec "$TMP/dw.data" -F 1000 --call-graph dwarf,32768 -- "$WN" 400
perf script --no-inline -i "$TMP/dw.data" > "$TMP/dw.perf" 2>"$TMP/dw.perf.err"
sfp script --no-inline -i "$TMP/dw.data" > "$TMP/dw.sfp" 2>&1
names_check "dwarf file, --no-inline" addr "$TMP/dw.perf" "$TMP/dw.sfp"
# as both come: each dwarf-unwound frame with its "(inlined)" lines (from
# libc's and ld.so's debug files), a frame and its lines compared as one
perf script -i "$TMP/dw.data" > "$TMP/dwl.perf" 2>/dev/null
sfp script -i "$TMP/dw.data" > "$TMP/dwl.sfp" 2>&1
# (the a2l-order rule replays addr2line over both tools' --no-inline frames)
A2L_PERF_FRAMES=$TMP/dw.perf A2L_SFP_FRAMES=$TMP/dw.sfp
names_check "dwarf file with inlined lines" group "$TMP/dwl.perf" "$TMP/dwl.sfp"
unset A2L_PERF_FRAMES A2L_SFP_FRAMES
set -- $(awk -v show=3 -f "$HERE/perf-user-frames.awk" "$TMP/dw.perf" "$TMP/dw.sfp" 2>"$TMP/dw.diff")
# perf's libunwind/libdw sometimes gives up (a frame of -1) where sfprof
# goes on; those samples are counted apart (perf's frames are a prefix)
if [ "${3:-0}" -gt 20 ] && [ $(( ($1 + $2) * 100 )) -ge $(( $3 * 99 )) ]; then
	pass "dwarf mode: user frames equal perf's for $1 of $3 samples (+$2 where perf gave up early)"
else
	fail "dwarf mode: user frames equal perf's for ${1:-0} of ${3:-0} samples (+${2:-0} perf gave up)"
	sed 's/^/  /' "$TMP/dw.diff"
fi
sfp convert -i "$TMP/dw.data" -o "$TMP/dwd.data" --deferred 2>/dev/null
in=$(stat -c %s "$TMP/dw.data")
out=$(stat -c %s "$TMP/dwd.data")
if [ "$out" -gt 0 ] && [ $(( out * 50 )) -le "$in" ]; then
	pass "convert --deferred of a dwarf file: $out bytes <= 2% of $in"
else
	fail "convert --deferred of a dwarf file: $out bytes vs $in"
fi
sfp convert -i "$TMP/dw.data" -o "$TMP/dwi.data" --inline 2>/dev/null
perf script --no-inline -i "$TMP/dwi.data" > "$TMP/dwi.perf" 2> "$TMP/dwi.err"
sfp script -i "$TMP/dwd.data" > "$TMP/dwd.sfp" 2>&1
set -- $(awk -f "$HERE/perf-user-frames.awk" "$TMP/dwi.perf" "$TMP/dwd.sfp")
# perf may warn about chunks the recording itself lost: that warning,
# and nothing more, is fine where the recording has LOST records (perf
# 6.1 does not always warn on its own file when it has them)
lostw() { grep -c 'lost [0-9]* chunks' "$1"; }
lost_allowed=$(lostw "$TMP/dw.perf.err")
if [ "$lost_allowed" -eq 0 ] &&
   perf report --stats -i "$TMP/dw.data" 2>/dev/null | grep -q ' LOST events: *[1-9]'; then
	lost_allowed=1
fi
# (perf's warnings: "Warning:", "Processed N events and lost M chunks!",
# "Check IO/CPU overload!", and for PERF_RECORD_LOST_SAMPLES "Processed N
# samples and lost P%!")
lost_lines() {
	grep -v -e '^Warning:$' -e 'lost [0-9]* chunks' -e '^Check IO/CPU overload!$' \
		-e '^Processed [0-9]* samples and lost [0-9. ]*%!$' -e '^ *$' "$1"
}
other=$(lost_lines "$TMP/dwi.err" | wc -l)
if [ "$other" -eq 0 ] && [ "$(lostw "$TMP/dwi.err")" -le "$lost_allowed" ] &&
   [ "${3:-0}" -gt 20 ] && [ $(( $1 * 100 )) -ge $(( $3 * 99 )) ]; then
	pass "dwarf -> inline (read by perf 6.1) and -> deferred: same stacks for $1 of $3 samples"
else
	fail "dwarf -> inline/deferred stacks (${1:-0} of ${3:-0}; $other other lines on perf's stderr, $(lostw "$TMP/dwi.err") lost-chunks warnings of $lost_allowed allowed)"
	head -3 "$TMP/dwi.err" | sed 's/^/  /'
	lost_lines "$TMP/dwi.err" | head -3 | sed 's/^/  other: /'
	awk -v show=2 -f "$HERE/perf-user-frames.awk" "$TMP/dwi.perf" "$TMP/dwd.sfp" 2>&1 >/dev/null |
		cut -c1-400 | sed 's/^/  /'
fi

if [ "$names_total" -gt 1000 ] && [ $((names_ruled * 1000)) -le "$names_total" ]; then
	pass "names: $names_ruled of $names_total frame lines differ from perf script's by a documented rule (<= 0.1 %)"
else
	fail "names: $names_ruled of $names_total frame lines differ from perf script's by a documented rule (want <= 0.1 % of more than 1000)"
fi

# --- bad input ---------------------------------------------------------------
check_rc "script: missing file exits 2" 2 "$SFPROF" script -i "$TMP/nope.data"
printf 'this is not perf.data at all, not even close........' > "$TMP/junk.data"
check_rc "script: not perf.data exits 1" 1 "$SFPROF" script -i "$TMP/junk.data"
head -c 3000 "$TMP/fp.data" > "$TMP/trunc.data"
sfp -e 1 script -i "$TMP/trunc.data" > /dev/null 2> "$TMP/trunc.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'offset [0-9]*:' "$TMP/trunc.err"; then
	pass "script: truncated file exits 1 naming the offset"
else
	fail "script: truncated file (rc $rc)"
	head -3 "$TMP/trunc.err" | sed 's/^/  /'
fi
check_rc "convert: usage error exits 2" 2 "$SFPROF" convert -i "$TMP/fp.data"
check_rc "script --help exits 0" 0 "$SFPROF" script --help
check_rc "convert --help exits 0" 0 "$SFPROF" convert --help
