#!/bin/sh
# bpf-defer: a task_work callback that never comes.  Nothing on this
# kernel loses one by itself, so the test hook SFPROF_BPF_TEST_DROP_CALLBACK=N
# (docs/record-bpf.md) makes the BPF program leave every Nth callback a CPU
# asks for pending without asking for it.  Shown on a CPU-bound and a
# syscall-heavy program: the lost work is detected (stale) and a new cookie
# scheduled within the 20 ms grace, every sample is delivered (the ones of
# a lost cookie without their user part, counted exactly by script and
# report), and the samples that got their callback have complete stacks.
# checks: 10
. "$(dirname "$0")/test-subr.sh"

SPIN=$SFP_BUILD/tests/progs/record-spin

# Where the system can load bpf-defer (test-subr.sh), falling back fails.
if ! bpf_defer_expected; then
	skip "bpf-defer loads where root, BTF and the kfunc are there" "$BPF_WHY"
	for w in CPU-bound syscall-heavy; do
		for t in "detected as stale" "lost cookies in the file" \
			 "script and report read all samples" "stitched stacks"; do
			skip "bpf-defer, $w with lost callbacks: $t" "$BPF_WHY"
		done
	done
	skip "bpf-defer without the hook" "$BPF_WHY"
	exit 0
fi
sfp record --call-graph bpf-defer -o "$TMP/probe.data" -- true > "$TMP/probe.out" 2>&1
if grep -q "falling back" "$TMP/probe.out"; then
	fail "bpf-defer loads where root, BTF and the kfunc are there: $(grep -m1 "bpf-defer" "$TMP/probe.out")"
else
	pass "bpf-defer loads where root, BTF and the kfunc are there"
fi

# Per sample (from --no-merge-callchains): tid, time, cookie; per deferred
# record: its cookie.  Prints: lost cookies (no deferred record), samples
# carrying them, the longest time one lost cookie was shared (ms), lost
# cookies followed by a new cookie of the same task (the retry), tasks,
# samples released unmerged, and samples in user mode (no kernel frame)
# that shared a lost cookie more than the 20 ms grace after the sample
# that made it (the BPF side's rule: none; in the kernel, queued
# task_work keeps the cookie, so a kernel-mode sample may share later).
analyze() {
	awk '
	function done_sample() {
		if (have) { n++; stid[n] = tid; stime[n] = t; sck[n] = ck; skern[n] = kern }
		if (have && ck != "") { nw[tid]++; wck[tid, nw[tid]] = ck }
		have = 0; ck = ""
	}
	/cpu-clock:/ { done_sample(); have = 1; tid = $2; t = $3; sub(/:$/, "", t)
		       kern = -1; next }
	have && kern < 0 { kern = /kernel\.kallsyms/ ? 1 : 0 }
	# perf 6.19 stitching, in delivery order: a deferred record completes
	# the waiting samples of its task with its cookie and releases the
	# task'"'"'s others unmerged; what still waits at the end is unmerged
	/DEFERRED CALLCHAIN/ {
		done_sample(); c = $NF; sub(/\]$/, "", c); d[c] = 1
		for (k = 1; k <= nw[$2]; k++)
			if (wck[$2, k] != c)
				rel++
		nw[$2] = 0
		next
	}
	/\(cookie\)/ { ck = $1; next }
	END {
		done_sample()
		for (i = 1; i <= n; i++) {
			tids[stid[i]] = 1
			c = sck[i]
			if (c == "" || (c in d))
				continue
			u++
			if (!(c in first)) { first[c] = stime[i]; lost++ }
			last[c] = stime[i]
		}
		for (c in first) {
			span = (last[c] - first[c]) * 1000
			if (span > maxspan) maxspan = span
		}
		# (times are printed to the microsecond: 1 us of slack)
		for (i = 1; i <= n; i++) {
			c = sck[i]
			if (c != "" && !(c in d) && !skern[i] &&
			    (stime[i] - first[c]) * 1000 > 20.001)
				late++
		}
		for (i = 1; i <= n; i++) {
			c = sck[i]
			if (c == "" || (c in d) || (c in retried))
				continue
			for (j = i + 1; j <= n; j++)
				if (stid[j] == stid[i] && sck[j] != "" && sck[j] != c) {
					retried[c] = 1; r++; break
				}
		}
		for (k in tids) nt++
		for (k in nw) rel += nw[k]
		printf "%d %d %.1f %d %d %d %d\n", lost, u, maxspan, r, nt, rel, late
	}'
}

kstat() {	# name, summary file
	sed -n "s/.*kernel side:.* $1 \([0-9]*\).*/\1/p" "$2"
}

# what, drop every, command...
check_stale() {
	what=$1 every=$2
	shift 2
	out=$TMP/stale-$every
	SFPROF_BPF_TEST_DROP_CALLBACK=$every sfp record -F 4000 \
		--call-graph bpf-defer -o "$out.data" -- "$@" > "$out.out" 2>&1
	rc=$?
	nrec=$(sed -n 's/^sfprof record: \([0-9]*\) samples.*/\1/p' "$out.out")
	dropped=$(kstat test-dropped "$out.out")
	stale=$(kstat stale "$out.out")
	rbfull=$(kstat ring-full "$out.out")
	notw=$(sed -n 's/.*not written: \([0-9]*\).*/\1/p' "$out.out")
	if [ $rc -ne 0 ] || [ -z "$dropped" ] || [ "$dropped" -eq 0 ] ||
	   [ -z "$nrec" ] || [ "$rbfull" != 0 ]; then
		fail "bpf-defer, lost callbacks, $what: record (exit $rc, dropped '$dropped', ring-full '$rbfull')"
		tail -4 "$out.out" | sed 's/^/  /'
		return
	fi
	sfp script --no-merge-callchains -i "$out.data" 2> "$out.nm.err" | analyze > "$out.an"
	read -r lost unm span retried ntid exp late < "$out.an"

	# Detected: each drop is found stale, except at most the last one of
	# each task (it ended, or was not sampled again, within the grace).
	if [ "$stale" -le "$dropped" ] && [ $((dropped - stale)) -le "$ntid" ]; then
		pass "bpf-defer, $what: $stale of $dropped lost callbacks detected as stale ($ntid task(s))"
	else
		fail "bpf-defer, $what: $stale of $dropped lost callbacks detected as stale ($ntid task(s))"
	fi
	# In the file: the lost cookies are exactly the dropped ones (plus the
	# callbacks that ran in an exiting task and wrote nothing); no sample
	# in user mode shared one past the 20 ms grace (counted per sample
	# from the file's times, not a bound on a wall-clock span, which a
	# busy machine stretches: the task may be off the CPU between its
	# samples), and all but the last of a task were followed by a new
	# cookie (the retry).
	if [ "$lost" -eq $((dropped + notw)) ] && [ "$late" -eq 0 ] &&
	   [ "$retried" -ge $((lost - ntid)) ]; then
		pass "bpf-defer, $what: $lost lost cookies in the file, none shared in user mode past the grace (longest share $span ms), $retried retried"
	else
		fail "bpf-defer, $what: $lost lost cookies (dropped $dropped + not written $notw), $late user-mode samples shared one past the grace (longest $span ms), $retried retried"
	fi
	# Every sample is delivered; the unmerged ones are the samples of lost
	# cookies, plus any that perf 6.19's rule releases early (another
	# cookie's record of the same task came first), in script and report.
	sfp script -i "$out.data" > "$out.script" 2> "$out.err"
	src=$?
	ns=$(grep -c 'cpu-clock:' "$out.script")
	nu=$(grep -c '(cookie)' "$out.script")
	sfp report -i "$out.data" > "$out.report" 2> "$out.rerr"
	rrc=$?
	ru=$(sed -n 's/^# \([0-9]*\) samples without their deferred user callchain.*/\1/p' "$out.report")
	if [ $src -eq 0 ] && [ ! -s "$out.err" ] && [ ! -s "$out.nm.err" ] &&
	   [ "$ns" -eq "$nrec" ] && [ "$unm" -le "$exp" ] && [ "$nu" -eq "$exp" ] &&
	   [ $rrc -eq 0 ] && [ "${ru:-0}" -eq "$exp" ] && [ ! -s "$out.rerr" ]; then
		pass "bpf-defer, $what: script and report read all $ns samples, $nu without their user part (lost cookies)"
	else
		fail "bpf-defer, $what: script $ns of $nrec samples (exit $src), unmerged $nu / report ${ru:-none} (exit $rrc) vs $exp ($unm of lost cookies)"
		head -3 "$out.err" "$out.rerr" | sed 's/^/  /'
	fi
}

# CPU-bound: user-mode samples walk at once; cookies are scheduled where
# that walk cannot be done (startup, kernel-mode samples).
check_stale "CPU-bound" 2 "$SPIN" flat 500
set -- $(awk '/cpu-clock:/{if (s) n++; s=0; a=0; first=1; next}
	/\(cookie\)/{first=0; a=-9}
	first { first=0; if ($0 ~ /flat_leaf/) { t++; a=1 } }
	/flat_mid/{if(a==1)a=2} /flat_outer/{if(a==2)a=3} / main\+/{if(a==3)s=1}
	END{if (s) n++; print n+0, t+0}' "$TMP/stale-2.script")
if [ "$2" -gt 100 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; then
	pass "bpf-defer, CPU-bound with lost callbacks: leaf->main in $1 of $2 stitched leaf samples"
else
	fail "bpf-defer, CPU-bound with lost callbacks: leaf->main in $1 of $2 stitched leaf samples"
fi

# Syscall-heavy: mostly in the kernel, rarely seen in user mode; lost
# work is found from kernel-mode samples (no task_work queued).
check_stale "syscall-heavy" 20 "$SPIN" sys 500
set -- $(awk '/cpu-clock:/{if (r) { n++; if (m) f++ } r=0; m=0; next}
	/[ \t]sys_outer\+/{r=1} / main\+/{m=1}
	END{if (r) { n++; if (m) f++ } print n+0, f+0}' "$TMP/stale-20.script")
if [ "$1" -gt 100 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
	pass "bpf-defer, syscall-heavy with lost callbacks: sys_outer->main in $2 of $1 stitched samples"
else
	fail "bpf-defer, syscall-heavy with lost callbacks: sys_outer->main in $2 of $1 stitched samples"
fi

# Without the hook nothing is lost: the kernel-mode rule (no task_work
# queued) must not take work that is merely pending for stale.
sfp record -F 4000 --call-graph bpf-defer -o "$TMP/nohook.data" -- \
	"$SPIN" sys 300 > "$TMP/nohook.out" 2>&1
st=$(kstat stale "$TMP/nohook.out")
cb=$(kstat callbacks "$TMP/nohook.out")
if [ "$st" = 0 ] && [ -n "$cb" ] && [ "$cb" -gt 0 ] &&
   ! grep -q "test-dropped" "$TMP/nohook.out"; then
	pass "bpf-defer without the hook, syscall-heavy: 0 stale of $cb callbacks"
else
	fail "bpf-defer without the hook, syscall-heavy: stale '$st', callbacks '$cb'"
fi
