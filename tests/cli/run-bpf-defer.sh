#!/bin/sh
# `sfprof record --call-graph bpf-defer` on this machine: the kernel's
# deferred user callchains done with BPF task_work and an SFrame unwind in
# BPF.  Needs root and a kernel with the task_work kfunc (6.18+); skips
# with the reason otherwise.  Record sizes and chain depths are read from
# the file itself (perfdata-records.py): `sfprof script` shows at most 127
# frames, as perf does.
# checks: 16
. "$(dirname "$0")/test-subr.sh"

DEEP=$SFP_BUILD/tests/progs/bpf-deep
SPIN=$SFP_BUILD/tests/progs/record-spin
RECS="python3 $(dirname "$0")/perfdata-records.py"

sfp record --help > "$TMP/help" 2>&1
if grep -q "bpf-defer" "$TMP/help" && grep -q "kernel-defer when" "$TMP/help"; then
	pass "record --help documents bpf-defer and which mode to choose when"
else
	fail "record --help documents bpf-defer and which mode to choose when"
fi

# Not allowed to load BPF: a clear message, and the sframe mode instead.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		$SFPROF record --call-graph bpf-defer -o /tmp/sfp-bpf-nobody.data \
		-- "$SPIN" flat 100 > "$TMP/nobody.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q "falling back to --call-graph sframe" "$TMP/nobody.out" &&
	   grep -q "call graph: sframe" "$TMP/nobody.out"; then
		pass "bpf-defer without BPF rights falls back to sframe with the reason"
	else
		fail "bpf-defer without BPF rights falls back to sframe (exit $rc)"
		head -5 "$TMP/nobody.out" | sed 's/^/  /'
	fi
	rm -f /tmp/sfp-bpf-nobody.data
else
	skip "bpf-defer fallback without BPF rights" "not root or no setpriv"
fi

# Is the mode available here?  The system says (test-subr.sh), not
# sfprof: where it can load, falling back is a failure.
sfp record --call-graph bpf-defer -o "$TMP/probe.data" -- true > "$TMP/probe.out" 2>&1
if ! bpf_defer_expected; then
	why=$(grep -m1 "bpf-defer" "$TMP/probe.out")
	if grep -q "falling back" "$TMP/probe.out" &&
	   grep -q "task_work\|BTF\|not allowed" "$TMP/probe.out"; then
		pass "bpf-defer ($BPF_WHY) says why it is not available: $why"
	else
		fail "bpf-defer ($BPF_WHY) unavailable without a clear reason"
		head -20 "$TMP/probe.out" | sed 's/^/  /'
	fi
	for t in "two-thread recording" "two threads through libc qsort" "syscall-heavy dedup" \
		 "3000-frame recursion" "zero stack bytes" "table eviction" \
		 "fork/exec churn" "-p attach" "tracepoint refusal" "vDSO" \
		 "walked at once" "program's own .sframe" "BPF program names"; do
		skip "bpf-defer: $t" "$BPF_WHY"
	done
	exit 0
fi
if grep -q "falling back" "$TMP/probe.out"; then
	fail "bpf-defer loads where root, BTF and the kfunc are there: $(grep -m1 "bpf-defer" "$TMP/probe.out")"
	head -20 "$TMP/probe.out" | sed 's/^/  /'
else
	pass "bpf-defer loads where root, BTF and the kfunc are there"
fi

# Two threads, no frame pointers, comparator called back from libc's qsort:
# the stack must reach start_thread (complete) in >= 99% of the samples in
# the workers, and the file holds no stack bytes.
# (--no-compress: perfdata-records.py reads the records' own sizes.)
if sfp record --no-compress --call-graph bpf-defer -o "$TMP/t.data" -- "$DEEP" threads 700 > "$TMP/t.out" 2>&1; then
	pass "bpf-defer records a two-thread program without frame pointers"
else
	fail "bpf-defer records a two-thread program without frame pointers"
	head -20 "$TMP/t.out" | sed 's/^/  /'
fi
sfp script -i "$TMP/t.data" > "$TMP/t.script" 2> "$TMP/t.err"
set -- $(awk '/cpu-clock:/{if (w) { n++; if (s) f++ } w=0; s=0; next}
	/worker_/{w=1} /start_thread/{s=1}
	END{if (w) { n++; if (s) f++ } print n+0, f+0}' "$TMP/t.script")
tids=$(awk '/cpu-clock:/{print $2}' "$TMP/t.script" | sort -u | wc -l)
if [ "$1" -gt 200 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] && [ "$tids" -ge 2 ] &&
   grep -q "worker_cmp" "$TMP/t.script" && grep -q "msort\|qsort" "$TMP/t.script"; then
	pass "bpf-defer: complete stacks in $2 of $1 worker samples (2 threads, through qsort)"
else
	fail "bpf-defer: complete stacks in $2 of $1 worker samples ($tids tids)"
	grep "unwind stops\|tables:" "$TMP/t.out" | sed 's/^/  /'
fi
# Both ways of unwinding ran: user-mode samples walked in the perf_event
# program, the rest (and the 3000-frame stacks below) in the callback.
wa=$(sed -n 's/.*walked-at-once \([0-9]*\).*/\1/p' "$TMP/t.out")
cb=$(sed -n 's/.*kernel side:.* callbacks \([0-9]*\).*/\1/p' "$TMP/t.out")
if [ -n "$wa" ] && [ "$wa" -gt 0 ] && [ -n "$cb" ]; then
	pass "bpf-defer: $wa samples walked at once, $cb callbacks"
else
	fail "bpf-defer: walked at once '$wa', callbacks '$cb'"
fi
$RECS "$TMP/t.data" > "$TMP/t.recs"
sb=$(sed -n 's/^stack_bytes //p' "$TMP/t.recs")
rs=$(sed -n 's/^regs_or_stack //p' "$TMP/t.recs")
ns=$(sed -n 's/^samples //p' "$TMP/t.recs")
bytes=$(sed -n 's/^sample_bytes //p' "$TMP/t.recs")
if [ "$sb" = 0 ] && [ "$rs" = 0 ] && [ "$ns" -gt 0 ] && [ $((bytes / ns)) -le 200 ]; then
	pass "bpf-defer: zero stack bytes per sample ($((bytes / ns)) bytes per sample record)"
else
	fail "bpf-defer: zero stack bytes per sample (extra $sb, regs/stack $rs, $bytes bytes in $ns samples)"
fi

# The same with the program's own .sframe (record-spin): leaf->mid->outer->main.
sfp record -q --call-graph bpf-defer -o "$TMP/f.data" -- "$SPIN" flat 400
set -- $(sfp script -i "$TMP/f.data" 2>/dev/null | awk '
	/cpu-clock:/{if (s) n++; s=0; a=0; first=1; next}
	first { first=0; if ($0 ~ /flat_leaf/) { t++; a=1 } }
	/flat_mid/{if(a==1)a=2} /flat_outer/{if(a==2)a=3} / main\+/{if(a==3)s=1}
	END{if (s) n++; print n+0, t+0}')
if [ "$2" -gt 100 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; then
	pass "bpf-defer with the program's own .sframe: leaf->main in $1 of $2 leaf samples"
else
	fail "bpf-defer with the program's own .sframe: leaf->main in $1 of $2 leaf samples"
fi

# The vDSO has no file: its table is the one of sfprof's own vDSO.
sfp record -q --call-graph bpf-defer -o "$TMP/v.data" -- "$DEEP" vdso 400
set -- $(sfp script -i "$TMP/v.data" 2>/dev/null | awk '
	/cpu-clock:/{if (v) { n++; if (m) f++ } v=0; m=0; next}
	/\[vdso\]/{v=1} / main\+/{m=1}
	END{if (v) { n++; if (m) f++ } print n+0, f+0}')
if [ "$1" -gt 100 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "bpf-defer through the vDSO: main reached in $2 of $1 samples in [vdso]"
else
	fail "bpf-defer through the vDSO: main reached in $2 of $1 samples in [vdso]"
fi

# Syscall-heavy: samples of one kernel entry share a cookie and one unwind.
if sfp record -q -F 4000 --call-graph bpf-defer -o "$TMP/y.data" -- "$SPIN" sys 300; then
	ns=$(sfp script -i "$TMP/y.data" 2>/dev/null | grep -c 'cpu-clock:')
	nd=$(sfp script --no-merge-callchains -i "$TMP/y.data" 2>/dev/null | grep -c 'DEFERRED CALLCHAIN')
	nk=$(sfp script -i "$TMP/y.data" 2>/dev/null | grep -c 'sys_outer')
	kf=$(sfp script -i "$TMP/y.data" 2>/dev/null | grep -c 'kernel.kallsyms')
	if [ "$ns" -gt 100 ] && [ "$nd" -gt 0 ] && [ "$nd" -lt "$ns" ] &&
	   [ "$nk" -gt $((ns / 2)) ] && [ "$kf" -gt 0 ]; then
		pass "bpf-defer syscall-heavy: $nd deferred records for $ns samples, kernel + user stitched"
	else
		fail "bpf-defer syscall-heavy: $nd deferred records for $ns samples ($nk with sys_outer, $kf kernel frames)"
	fi
else
	fail "bpf-defer record of a syscall-heavy program"
fi

# 3000 frames of ~300 bytes: deeper than any snapshot (65528 bytes).  The
# BPF walk reads the live stack and stops at the depth cap (510, the
# kernel's); the snapshot mode stops where its copy ends.
sfp record --no-compress --call-graph bpf-defer -o "$TMP/d.data" -- "$DEEP" deep 3000 300 > "$TMP/d.out" 2>&1
sfp record --no-compress --stack-size 65528 -o "$TMP/s.data" -- "$DEEP" deep 3000 300 > "$TMP/s.out" 2>&1
bd=$($RECS "$TMP/d.data" | sed -n 's/^deferred_max_nr //p')
sd=$($RECS "$TMP/s.data" | sed -n 's/^deferred_max_nr //p')
dcb=$(sed -n 's/.*kernel side:.* callbacks \([0-9]*\).*/\1/p' "$TMP/d.out")
if [ "$bd" = 510 ] && grep -q "depth" "$TMP/d.out" && [ "$sd" -lt 510 ] &&
   [ -n "$dcb" ] && [ "$dcb" -gt 0 ] &&
   grep -q "truncated" "$TMP/s.out"; then
	pass "3000-frame recursion: bpf-defer unwinds to the depth cap ($bd), sframe snapshot truncates ($sd)"
else
	fail "3000-frame recursion: bpf-defer $bd frames, sframe snapshot $sd frames"
	grep "unwind stops" "$TMP/d.out" "$TMP/s.out" | sed 's/^/  /'
fi

# Tables that do not fit (libc 25k FREs + the program + ld.so 2k > 26k):
# evicted least recently used, and the samples
# that met a module without a table are counted in the summary.
SFPROF_BPF_MAX_FRES=26000 sfp record --call-graph bpf-defer -o "$TMP/e.data" \
	-- "$DEEP" threads 300 > "$TMP/e.out" 2>&1
ev=$(sed -n 's/.*tables: [0-9]* loaded, \([0-9]*\) evicted.*/\1/p' "$TMP/e.out")
nt=$(sed -n 's/.*; \([0-9]*\) samples ([0-9]* unwinds) met a module without.*/\1/p' "$TMP/e.out")
got=$(sfp script -i "$TMP/e.data" 2>/dev/null | grep -c 'cpu-clock:')
if [ -n "$ev" ] && [ "$ev" -gt 0 ] && [ -n "$nt" ] && [ "$got" -gt 0 ]; then
	pass "table eviction under a small FRE array: $ev evicted, $nt samples without a table reported"
else
	fail "table eviction under a small FRE array (evicted '$ev', no-table '$nt', $got samples)"
	tail -4 "$TMP/e.out" | sed 's/^/  /'
fi

# Many short processes (fork, exec, exit, tid reuse): every sample is
# written and read back, nothing is left pending.
if sfp record -F 4000 --call-graph bpf-defer -o "$TMP/x.data" -- \
	sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done' > "$TMP/x.out" 2>&1; then
	n=$(sed -n 's/^sfprof record: \([0-9]*\) samples.*/\1/p' "$TMP/x.out")
	got=$(sfp script -i "$TMP/x.data" 2> "$TMP/x.err" | grep -c 'cpu-clock:')
	if [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$got" -eq "$n" ] && [ ! -s "$TMP/x.err" ]; then
		ks=$(sed -n 's/.*kernel side:.* exec \([0-9]*\) exiting \([0-9]*\).*/exec \1, exiting \2/p' "$TMP/x.out")
		pass "fork/exec churn: all $n samples written and read back ($ks)"
	else
		fail "fork/exec churn: $got of $n samples read back"
		head -3 "$TMP/x.err" | sed 's/^/  /'
	fi
else
	fail "fork/exec churn recording"
	tail -5 "$TMP/x.out" | sed 's/^/  /'
fi

# Attached to a running process (-p): its tables are loaded from its maps.
"$DEEP" threads 100000 &
dp=$!
sleep 0.3
sfp record -q --call-graph bpf-defer -p $dp --duration 0.5 -o "$TMP/p.data"
kill $dp 2> /dev/null
wait $dp 2> /dev/null
set -- $(sfp script -i "$TMP/p.data" 2>/dev/null | awk '
	/cpu-clock:/{if (w) { n++; if (s) f++ } w=0; s=0; next}
	/worker_/{w=1} /start_thread/{s=1}
	END{if (w) { n++; if (s) f++ } print n+0, f+0}')
if [ "$1" -gt 50 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "bpf-defer -p: complete stacks in $2 of $1 worker samples"
else
	fail "bpf-defer -p: complete stacks in $2 of $1 worker samples"
fi

# perf names the BPF programs its samples land in from the KSYMBOL
# records it writes (the programs may be gone when the file is read, as
# these are): script and report must name them as perf does.  The agent
# (it asks for no build-ids, which would make perf 6.1's record abort)
# runs bpf-defer's programs at 4999 Hz on a 3000-frame recursion (each
# sample's walk goes to the 510-frame cap), so that perf's samples land
# in them (813 of ~12k frames on a quiet machine).
# The report's children view lists every program a chain passed through.
if command -v perf > /dev/null; then
	"$DEEP" deep 3000 8000 &
	dp=$!
	$SFPROF agent --listen 127.0.0.1:0 -F 4999 --call-graph bpf-defer \
		--interval 60s > "$TMP/ka.out" 2> "$TMP/ka.err" &
	ka=$!
	i=0
	while ! grep -q "sampling every CPU" "$TMP/ka.err" && [ $i -lt 300 ] &&
	      kill -0 $ka 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	perf record -q -a -g -F 1999 -o "$TMP/k.data" -- sleep 3 > "$TMP/k.rec" 2>&1
	prc=$?
	kill -INT $ka 2> /dev/null
	wait $ka
	arc=$?
	kill $dp 2> /dev/null
	wait $dp 2> /dev/null
	BPFRE='bpf_prog_[0-9a-f]{16}_'
	perf script -i "$TMP/k.data" 2> /dev/null | grep -E "$BPFRE" > "$TMP/k.perf"
	sfp script -i "$TMP/k.data" 2> "$TMP/k.err" | grep -E "$BPFRE" > "$TMP/k.sfp"
	src=$?
	# (sorted: entries of equal percentage may come in another order)
	perf report -i "$TMP/k.data" --stdio --children -g none --sort dso,sym 2> /dev/null |
		grep -E "$BPFRE" | sort > "$TMP/k.prep"
	sfp report -i "$TMP/k.data" --stdio --children -g none --sort dso,sym 2> /dev/null |
		grep -E "$BPFRE" | sort > "$TMP/k.srep"
	n=$(wc -l < "$TMP/k.perf")
	if [ $prc -eq 0 ] && [ $arc -eq 0 ] && [ $src -eq 0 ] && [ "$n" -gt 0 ] &&
	   cmp -s "$TMP/k.perf" "$TMP/k.sfp" && [ -s "$TMP/k.prep" ] &&
	   cmp -s "$TMP/k.prep" "$TMP/k.srep"; then
		pass "script and report name BPF program frames as perf does (KSYMBOL): $n frames, $(wc -l < "$TMP/k.prep") report entries"
	else
		fail "script and report name BPF program frames as perf does (KSYMBOL): $n frames, $(wc -l < "$TMP/k.prep") report entries"
		echo "  perf record $prc, agent $arc, script $src"
		diff "$TMP/k.perf" "$TMP/k.sfp" | head -4 | sed 's/^/  /'
		diff "$TMP/k.prep" "$TMP/k.srep" | head -4 | sed 's/^/  /'
		tail -2 "$TMP/k.rec" "$TMP/ka.err" | sed 's/^/  /'
	fi
else
	skip "BPF program names" "perf is not installed (make deps)"
fi

# Tracepoints need another program type: refused with the way out.
if [ -r /sys/kernel/tracing/events/sched/sched_switch/id ]; then
	sfp -e 1 record -q --call-graph bpf-defer -e sched:sched_switch \
		-o "$TMP/tp.data" -- true > "$TMP/tp.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "tracepoint.*not supported.*sframe" "$TMP/tp.out"; then
		pass "bpf-defer refuses tracepoint events and names the alternative"
	else
		fail "bpf-defer refuses tracepoint events (exit $rc)"
		head -3 "$TMP/tp.out" | sed 's/^/  /'
	fi
else
	skip "bpf-defer with a tracepoint" "tracefs not mounted"
fi
