#!/bin/sh
# `sfprof record --off-cpu` through BPF (--call-graph bpf-defer): a BPF
# program on sched_switch takes each block's kernel stack and its kernel
# entry's cookie, the entry's one user unwind is bpf-defer's task_work.
# The checks of run-offcpu.sh (blocked time per function +-3 %, stacks
# that reach main/start_thread, on+off per thread +-5 % of wall, one user
# unwind for 1,023 blocks in one write(), the sums and the rate bound, -p
# and -a, bpftrace's offcputime beside it) run again through this path
# (run-offcpu.sh with CG set: 22 checks); before them, which path record
# takes and says: bpf-defer and auto take BPF, a bpf-defer that does not
# load falls back to the tracepoint and says why.  Skips only when the
# system lacks what bpf-defer needs (bpf_defer_expected: root, BTF, the
# kfuncs), as the other bpf-defer scripts do.
# checks: 26
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/offcpu-subr.sh"

OW=$SFP_BUILD/tests/progs/offcpu-work
CHOICE="choice bpf-defer, choice auto, fallback says why, fallback records"
RUN="nap, wait_pipe, wait_cond, stacks reach main or start_thread,
on+off per thread, spin thread, summary counts, bigwrite blocks,
bigwrite one unwind, summed totals, rate bound, summed nothing lost,
-p nap, -p wait_pipe, -a nap, -a wait_cond, bpftrace attached, bpftrace nap,
bpftrace wait_pipe, bpftrace wait_cond, bpftrace feed, completeness printed"

skip_all() {
	echo "$CHOICE, $RUN" | tr ',' '\n' | sed 's/^ *//' | grep . | while read -r t; do
		skip "off-cpu bpf: $t" "$1"
	done
	exit 0
}

bpf_defer_expected || skip_all "$BPF_WHY"
FMT=/sys/kernel/tracing/events/sched/sched_switch/format
if [ ! -r $FMT ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
	[ -r $FMT ] || skip_all "no tracefs with sched:sched_switch (the fallback and bpftrace need it)"
fi

# --- which path, and why -------------------------------------------------
for cg in bpf-defer auto; do
	sfp record -m 16M --call-graph $cg --off-cpu --off-cpu-thresh 0 \
		-o "$TMP/c.data" -- "$OW" > "$TMP/c.out" 2> "$TMP/c.err"
	n=$(sfp script -i "$TMP/c.data" 2> /dev/null | grep -c " offcpu-time:")
	if grep -q "^sfprof: --off-cpu: BPF program on sched_switch" "$TMP/c.err" &&
	   grep -q "off-blocks [1-9]" "$TMP/c.err" && [ "$n" -gt 20 ]; then
		pass "off-cpu bpf: --call-graph $cg --off-cpu takes the BPF path and says so ($n blocks)"
	else
		fail "off-cpu bpf: --call-graph $cg --off-cpu: not the BPF path ($n blocks)"
		grep "off-cpu\|bpf\|auto" "$TMP/c.err" | sed 's/^/  /'
	fi
done
# A bpf-defer that cannot load (a real verifier rejection, the test hook
# of docs/record-bpf.md): the tracepoint path, with the reason.
SFPROF_BPF_TEST_VERIFIER_REJECT=1 sfp record -m 16M --call-graph bpf-defer \
	--off-cpu --off-cpu-thresh 0 -o "$TMP/f.data" -- "$OW" > "$TMP/f.out" 2> "$TMP/f.err"
if grep -q "verifier rejected" "$TMP/f.err" &&
   grep -q "^sfprof: --off-cpu: sched:sched_switch tracepoint .*(bpf-defer did not load" "$TMP/f.err"; then
	pass "off-cpu bpf: a bpf-defer that does not load: the tracepoint path, saying why"
else
	fail "off-cpu bpf: a bpf-defer that does not load: no fallback line"
	grep "off-cpu\|bpf" "$TMP/f.err" | sed 's/^/  /'
fi
sfp script -i "$TMP/f.data" 2> /dev/null | awk -f "$(dirname "$0")/offcpu-samples.awk" > "$TMP/f.s"
within "off-cpu bpf: the fallback's blocked time in nap()" \
	"$(awk '$1 == "offcpu-time" { for (i = 4; i <= NF; i++) if ($i == "nap") { s += $3; break } }
		END { printf "%.0f\n", s }' "$TMP/f.s")" "$(prog_field "$TMP/f.out" nap blocked_ns)" 3

# --- the checks of run-offcpu.sh through the BPF path ---------------------
CG="--call-graph bpf-defer" OC="off-cpu bpf" sh "$(dirname "$0")/run-offcpu.sh"
