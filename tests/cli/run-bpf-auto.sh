#!/bin/sh
# `sfprof record --call-graph auto` (kernel-defer for frame-pointer code
# where the kernel defers, else bpf-defer, else sframe) and a real verifier
# rejection of the bpf-defer object (test hook SFPROF_BPF_TEST_VERIFIER_REJECT,
# docs/record-bpf.md): the message names the verifier's reason and the
# recording completes in sframe mode.  What this machine offers is decided
# from the system (the kernel's release, root, BTF, kallsyms, the
# verifier), never from sfprof's own probes, so the expectations hold on
# kernels with defer_callchain too.
# checks: 11
. "$(dirname "$0")/test-subr.sh"

NOFP=$SFP_BUILD/tests/progs/bpf-deep
FP=$SFP_BUILD/tests/progs/perf-work
SPIN=$SFP_BUILD/tests/progs/record-spin

# Samples in the program's own code whose stack is complete (reaches
# start_thread or main), of all of them.  nolibc: only the samples not in
# a qsort() callback (the kernel's frame-pointer walk cannot cross
# Debian's libc, which has none).
complete_workers() {
	sfp script -i "$1" 2>/dev/null | awk -v nolibc="${2:-}" '
	function end_() { if (w && !(nolibc && q)) { n++; if (s) f++ } w = 0; s = 0; q = 0 }
	/cpu-clock:/{end_(); next}
	/worker_|recurse|sort_some|cmp_u32|spin\+/{w=1} /start_thread| main\+/{s=1}
	/cmp_u32|qsort|msort/{q=1}
	END{end_(); print n+0, f+0}'
}

sfp record --help > "$TMP/help" 2>&1
if grep -q "^        auto " "$TMP/help" && grep -q "sframe stays the default" "$TMP/help" &&
   grep -q "frame-pointer code" "$TMP/help"; then
	pass "record --help: auto says which mode is chosen when, sframe stays the default"
else
	fail "record --help documents --call-graph auto"
fi

# What the machine offers, decided from the system (test-subr.sh): the
# kernel's deferral, and BPF task_work.
if kernel_defer_expected; then
	kdefer=1
else
	kdefer=0
fi
# BPF task_work: decided from the system (test-subr.sh); where it can
# load, an explicit bpf-defer that falls back fails.
sfp record --call-graph bpf-defer -o "$TMP/probe.data" -- true > "$TMP/probe.out" 2>&1
if bpf_defer_expected; then
	bpf=1
	if grep -q "falling back" "$TMP/probe.out"; then
		fail "bpf-defer loads where root, BTF and the kfunc are there: $(grep -m1 "bpf-defer" "$TMP/probe.out")"
	else
		pass "bpf-defer loads where root, BTF and the kfunc are there"
	fi
else
	bpf=0
	skip "bpf-defer loads where root, BTF and the kfunc are there" "$BPF_WHY"
fi

# A program without frame pointers: bpf-defer (the kernel's deferral would
# walk frame pointers only), complete stacks.
sfp record --call-graph auto -o "$TMP/n.data" -- "$NOFP" threads 500 > "$TMP/n.out" 2>&1
line=$(grep "^sfprof: --call-graph auto:" "$TMP/n.out")
if [ $bpf = 1 ]; then want=bpf-defer; else want=sframe; fi
if [ "$(grep -c "^sfprof: --call-graph auto:" "$TMP/n.out")" = 1 ] &&
   echo "$line" | grep -q "auto: $want (.*code without frame pointers, 0 of [0-9]* framed" &&
   grep -q "chosen by --call-graph auto: $want (" "$TMP/n.out" &&
   grep -q "call graph: $want" "$TMP/n.out"; then
	pass "auto on a program without frame pointers: $want, said once and in the summary"
else
	fail "auto on a program without frame pointers: want $want"
	sed 's/^/  /' "$TMP/n.out" | head -8
fi
set -- $(complete_workers "$TMP/n.data")
if [ "$1" -gt 100 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "auto ($want): complete stacks in $2 of $1 samples in its code"
else
	fail "auto ($want): complete stacks in $2 of $1 samples in its code"
fi

# A frame-pointer program: kernel-defer where the kernel defers, else
# bpf-defer with the reason.
sfp record --call-graph auto -o "$TMP/f.data" -- "$FP" 400 > "$TMP/f.out" 2>&1
line=$(grep "^sfprof: --call-graph auto:" "$TMP/f.out")
if [ $kdefer = 1 ]; then
	want=kernel-defer why="the kernel has defer_callchain"
elif [ $bpf = 1 ]; then
	want=bpf-defer why="kernel lacks defer_callchain"
else
	want=sframe why="kernel lacks defer_callchain; bpf-defer not available"
fi
if echo "$line" | grep -q "auto: $want (.*perf-work: frame-pointer code, [0-9]* of [0-9]* framed functions FP-based; $why" &&
   grep -q "chosen by --call-graph auto: $want" "$TMP/f.out"; then
	pass "auto on a frame-pointer program: $want ($why)"
else
	fail "auto on a frame-pointer program: want $want ($why)"
	sed 's/^/  /' "$TMP/f.out" | head -8
fi
# (kernel-defer: the kernel walks frame pointers, and Debian's libc
# (qsort) has none: the samples in a qsort callback, about 5 in 6 of this
# workload's, are left out)
if [ $want = kernel-defer ]; then
	set -- $(complete_workers "$TMP/f.data" nolibc)
	also=" outside qsort callbacks" min=50
else
	set -- $(complete_workers "$TMP/f.data")
	also= min=100
fi
if [ "$1" -gt $min ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "auto ($want) on frame-pointer code: complete stacks in $2 of $1 samples in its code$also"
else
	fail "auto ($want) on frame-pointer code: complete stacks in $2 of $1 samples in its code$also"
fi

# -p: the code is judged by /proc/PID/exe.
"$FP" 5000 &
fp_pid=$!
sleep 0.2
sfp record --call-graph auto -p $fp_pid --duration 0.3 -o "$TMP/p.data" > "$TMP/p.out" 2>&1
kill $fp_pid 2> /dev/null
wait $fp_pid 2> /dev/null
if grep -q "auto: $want (/proc/$fp_pid/exe: frame-pointer code" "$TMP/p.out"; then
	pass "auto -p judges /proc/PID/exe: $want"
else
	fail "auto -p judges /proc/PID/exe: want $want"
	sed 's/^/  /' "$TMP/p.out" | head -4
fi

# Not allowed to load BPF (nobody): sframe, with the reason.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		$SFPROF record --call-graph auto -o /tmp/sfp-auto-nobody.$$.data \
		-- "$NOFP" threads 300 > "$TMP/nobody.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] &&
	   grep -q "^sfprof: --call-graph auto: sframe (.*bpf-defer not available: .*not allowed to load BPF" "$TMP/nobody.out" &&
	   grep -q "call graph: sframe" "$TMP/nobody.out"; then
		pass "auto without BPF rights: sframe, with the reason"
	else
		fail "auto without BPF rights: sframe, with the reason (exit $rc)"
		head -5 "$TMP/nobody.out" | sed 's/^/  /'
	fi
	rm -f /tmp/sfp-auto-nobody.$$.data
else
	skip "auto without BPF rights" "not root or no setpriv"
fi

if [ $bpf = 0 ]; then
	for t in "verifier rejection" "after the verifier rejection, sframe" \
		 "auto after a verifier rejection"; do
		skip "bpf-defer: $t" "$BPF_WHY"
	done
	exit 0
fi

# A real verifier rejection: the message gives the verifier's reason, which
# is a line of the verifier's own log (seen with SFPROF_DEBUG), and the
# recording goes on in sframe mode with complete stacks.
SFPROF_BPF_TEST_VERIFIER_REJECT=1 sfp record --call-graph bpf-defer \
	-o "$TMP/r.data" -- "$SPIN" flat 400 > "$TMP/r.out" 2>&1
rc=$?
SFPROF_DEBUG=1 SFPROF_BPF_TEST_VERIFIER_REJECT=1 sfp record -q \
	--call-graph bpf-defer -o "$TMP/r2.data" -- true > "$TMP/r2.out" 2>&1
reason=$(sed -n "s/^sfprof: bpf-defer: the kernel's verifier rejected the BPF program: \(.*\) ([^;]*; the whole log with -v).*/\1/p" "$TMP/r.out")
inlog=$(sed -n '/BEGIN PROG LOAD LOG/,/END PROG LOAD LOG/p' "$TMP/r2.out" | grep -cxF "sfprof: debug: $reason")
if [ $rc -eq 0 ] && [ -n "$reason" ] && [ "$inlog" -ge 1 ] &&
   grep -q "falling back to --call-graph sframe" "$TMP/r.out" &&
   grep -q "call graph: sframe, deferred form" "$TMP/r.out"; then
	pass "verifier rejection: the message names the verifier's reason ('$reason'), sframe records"
else
	fail "verifier rejection: reason '$reason' ($inlog times in the log), exit $rc"
	head -5 "$TMP/r.out" | sed 's/^/  /'
fi
set -- $(sfp script -i "$TMP/r.data" 2>/dev/null | awk '
	/cpu-clock:/{if (s) n++; s=0; a=0; first=1; next}
	first { first=0; if ($0 ~ /flat_leaf/) { t++; a=1 } }
	/flat_mid/{if(a==1)a=2} /flat_outer/{if(a==2)a=3} / main\+/{if(a==3)s=1}
	END{if (s) n++; print n+0, t+0}')
if [ "$2" -gt 100 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; then
	pass "after the verifier rejection, sframe: leaf->main in $1 of $2 leaf samples"
else
	fail "after the verifier rejection, sframe: leaf->main in $1 of $2 leaf samples"
fi

# auto meets the same rejection: sframe, and its one line names the reason.
SFPROF_BPF_TEST_VERIFIER_REJECT=1 sfp record --call-graph auto \
	-o "$TMP/ra.data" -- "$SPIN" flat 200 > "$TMP/ra.out" 2>&1
if [ -n "$reason" ] &&
   grep "^sfprof: --call-graph auto: sframe (" "$TMP/ra.out" | grep -qF "$reason" &&
   ! grep -q "BEGIN PROG LOAD LOG" "$TMP/ra.out" &&
   grep -q "call graph: sframe" "$TMP/ra.out"; then
	pass "auto after a verifier rejection: sframe, one line with the reason"
else
	fail "auto after a verifier rejection: sframe, one line with the reason"
	head -4 "$TMP/ra.out" | sed 's/^/  /'
fi
