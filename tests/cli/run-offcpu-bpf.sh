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
# Blocks inside page faults (offcpu-work fault: userfaultfd holds 10
# faults 20 ms each, another thread keeps the mmap lock write-held): each
# (>= 99 % of them) has its user stack, walked at the block or, with the test hook
# SFPROF_BPF_TEST_NO_WALK_AT_ONCE, by the task_work on the way out of the
# fault, whose VMA look-ups find that lock taken.  With the test hook
# SFPROF_BPF_TEST_MISS_SWITCH_IN=2 the program leaves every other
# switch-in of a blocked task unseen, as this kernel now and then does:
# such a block reaches user space only at the task's next switch-out,
# after its entry's record, and must still get its user stack (the 5 ms
# of user time after each userfaultfd fault make such late blocks: the
# CPU-clock samples there end the fault's entry).  With
# SFPROF_BPF_TEST_BUSY_USER_TABLE ("user table") a walk that finds the
# mmap lock taken asks user space's table of the VMAs first.
# Blocks of one frame again and again (nap, wait_pipe): later entries take
# the last walk's stack and cookie (off-reused), the same stacks and times
# as with every entry walked (the hook SFPROF_BPF_TEST_NO_REUSE).
# checks: 41
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/offcpu-subr.sh"

OW=$SFP_BUILD/tests/progs/offcpu-work
CHOICE="choice bpf-defer, choice auto, fallback says why, fallback records,
page faults at once: userfaultfd blocks, page faults at once: stacks,
page faults by task_work: userfaultfd blocks, page faults by task_work: stacks,
page faults user table: userfaultfd blocks, page faults user table: stacks,
page faults user table: look-ups answered,
page faults switch-ins missed: userfaultfd blocks,
page faults switch-ins missed: stacks,
page faults switch-ins missed: late blocks served,
reuse: entries reused, reuse: nap stacks, reuse: nap time,
reuse: wait_pipe stacks, reuse: wait_pipe time"
RUN="nap, wait_pipe, wait_cond, stacks reach main or start_thread,
on+off per thread, spin thread, summary counts, bigwrite blocks,
bigwrite one unwind, summed totals, rate bound, summed nothing lost,
-p nap, -p wait_pipe, -a nap, -a wait_cond, bpftrace attached, bpftrace nap,
bpftrace wait_pipe, bpftrace wait_cond, bpftrace feed, stacks as deep as bpftrace's"

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
	"$(off_in "$TMP/f.s" nap)" "$(prog_field "$TMP/f.out" nap blocked_ns)" 3

# --- blocks inside page faults ---------------------------------------------
# A page fault from user mode is a kernel entry with user registers, left
# through the same exit as a syscall: its blocks get whole user stacks.
# (1 Dec 2026: one block waiting for the mmap lock in a fault, under load,
# came out without its user stack: the task_work's bpf_find_vma() only
# try-locks that lock, and the thread that held it for write still did.)
# "user table": by task_work, and a walk that finds the lock taken asks
# only user space's table of the process's VMAs (the hook of
# docs/record-bpf.md; the callbacks' cache answers most such look-ups
# otherwise, so that table would go untested; ASan's allocator made it
# miss libasan's VMA, 1 Dec 2026).
if grep -q " handle_userfault\$" /proc/kallsyms; then
	for how in "at once" "by task_work" "user table" "switch-ins missed"; do
		hook= uhook= miss=
		case $how in
		"by task_work") hook=1 ;;
		"user table") hook=1 uhook=1 ;;
		"switch-ins missed") miss=2 ;;
		esac
		SFPROF_BPF_TEST_MISS_SWITCH_IN=$miss \
		SFPROF_BPF_TEST_BUSY_USER_TABLE=$uhook \
		SFPROF_BPF_TEST_NO_WALK_AT_ONCE=$hook sfp record -m 16M --call-graph bpf-defer \
			--off-cpu --off-cpu-thresh 0 -o "$TMP/pf.data" -- "$OW" fault \
			> "$TMP/pf.out" 2> "$TMP/pf.err"
		sfp script -i "$TMP/pf.data" > "$TMP/pf.txt" 2> /dev/null
		awk -f "$(dirname "$0")/offcpu-samples.awk" "$TMP/pf.txt" > "$TMP/pf.s"
		tid=$(prog_field "$TMP/pf.out" fault_wait tid)
		# per block of fault_wait's thread inside a page fault: uffd
		# (held by the handler), lock (waiting for the mmap lock),
		# and whether its user stack reaches start_thread (through
		# fault_wait or fault_lock, or, under ASan, through the
		# runtime's thread setup before the thread's function: a
		# fault in pthread_getattr_np, 1 Dec 2026)
		awk -v t="$tid" '$1 == "offcpu-time" && $2 == t {
			k = ""; ok = 0; f = 0
			for (i = 4; i <= NF; i++) {
				if ($i == "exc_page_fault") f = 1
				if ($i == "handle_userfault") k = "uffd"
				if ($i == "lock_mm_and_find_vma" && k == "") k = "lock"
				if ($i == "asm_exc_page_fault") ok = 1
				if ($i == "start_thread" && ok) ok = 2
			}
			if (!f) next
			n++; u += (k == "uffd"); l += (k == "lock"); c += (ok == 2)
			if (ok != 2 && bad++ < 3) print "  incomplete:", $0 > "/dev/stderr"
		} END { print n + 0, u + 0, l + 0, c + 0 }' "$TMP/pf.s" > "$TMP/pf.n"
		read -r n u l c < "$TMP/pf.n"
		walked=$(sed -n 's/.* off-walked-at-once \([0-9]*\).*/\1/p' "$TMP/pf.err")
		busy=$(sed -n 's/.* vma-busy \([0-9]*\) vma-busy-cut \([0-9]*\).*/\1 answered, \2 cut/p' "$TMP/pf.err")
		buser=$(sed -n 's/.* vma-busy-user \([0-9]*\).*/\1/p' "$TMP/pf.err")
		bcut=$(sed -n 's/.* vma-busy-cut \([0-9]*\).*/\1/p' "$TMP/pf.err")
		echo "  $how: $n blocks in page faults ($u userfaultfd, $l waiting for the mmap lock); callbacks' VMA look-ups that found the lock taken: $busy (${buser:-0} by user space's table); blocks walked at once: ${walked:-0}"
		if [ "$u" -ge 10 ] && { [ -n "$hook" ] || [ "${walked:-0}" -gt 0 ]; } &&
		   { [ -z "$hook" ] || [ "${walked:-0}" = 0 ]; }; then
			pass "off-cpu bpf: page faults $how: fault_wait() blocked $u times held by userfaultfd"
		else
			fail "off-cpu bpf: page faults $how: $u userfaultfd blocks (want >= 10), ${walked:-0} walked at once"
			grep "off-cpu\|kernel side" "$TMP/pf.err" | sed 's/^/  /'
		fi
		# (>= 99 %; the kernel side's counters are printed with any
		# incomplete block.  Such a block was, until 2 Dec 2026, one
		# whose switch-in the program had not seen: "switch-ins
		# missed" below)
		if [ "$n" -ge 10 ] && [ $((c * 100)) -ge $((n * 99)) ]; then
			pass "off-cpu bpf: page faults $how: $c of $n blocks in page faults have their user stack to start_thread (>= 99 %)"
		else
			fail "off-cpu bpf: page faults $how: $c of $n blocks in page faults have their user stack (want >= 99 %)"
		fi
		[ "$c" = "$n" ] || grep "kernel side\|unwind stops\|off-cpu:" "$TMP/pf.err" | sed 's/^/  /'
		if [ -n "$miss" ]; then
			unseen=$(sed -n 's/.* off-in-unseen \([0-9]*\).*/\1/p' "$TMP/pf.err")
			late=$(sed -n "s/.*given their entry's record once more: \([0-9]*\).*/\1/p" "$TMP/pf.err")
			if [ "${unseen:-0}" -ge 1 ] && [ "${late:-0}" -ge 1 ]; then
				pass "off-cpu bpf: page faults $how: ${late} of ${unseen} blocks met at the next switch-out got their entry's record again"
			else
				fail "off-cpu bpf: page faults $how: ${late:-0} late blocks given their record, ${unseen:-0} switch-ins unseen (want >= 1 each)"
			fi
			continue
		fi
		[ -n "$uhook" ] || continue
		# look-ups that found the lock taken went to the table (the
		# hook) and the stacks above are whole.  (A cut is not a
		# failure by itself: a walk that read a bad return address
		# is cut there too, and counted, as under bpf_find_vma.)
		if [ "${buser:-0}" -ge 1 ]; then
			pass "off-cpu bpf: page faults $how: $buser look-ups that found the mmap lock taken answered by user space's table of the VMAs (${bcut:-?} cut)"
		else
			fail "off-cpu bpf: page faults $how: ${buser:-0} look-ups answered by user space's table (want >= 1), ${bcut:-?} cut"
		fi
	done
else
	for how in "at once" "by task_work" "user table" "switch-ins missed"; do
		for t in "userfaultfd blocks" stacks; do
			skip "off-cpu bpf: page faults $how: $t" "no userfaultfd in this kernel (handle_userfault not in /proc/kallsyms)"
		done
	done
	skip "off-cpu bpf: page faults user table: look-ups answered" "no userfaultfd in this kernel (handle_userfault not in /proc/kallsyms)"
	skip "off-cpu bpf: page faults switch-ins missed: late blocks served" "no userfaultfd in this kernel (handle_userfault not in /proc/kallsyms)"
fi

# --- the same stack, another entry: the last walk reused -------------------
# nap() sleeps and wait_pipe() reads again and again from one frame: each
# block a new kernel entry whose user stack is the last walk's, whose
# cookie it takes (off-reused) unless the hook (docs/record-bpf.md) walks
# every entry.  The reuse must change nothing the reader sees: in both
# runs the blocks of nap() and wait_pipe() have one user stack (from two
# frames below the function to the thread's start) in >= 90 % of them,
# the same in both, and the reuse run's blocked time per function is the
# program's own (+-3 %).
for mode in reuse walk; do
	hook=
	[ $mode = walk ] && hook=1
	SFPROF_BPF_TEST_NO_REUSE=$hook sfp record -m 16M --call-graph bpf-defer \
		--off-cpu --off-cpu-thresh 0 -o "$TMP/r$mode.data" -- "$OW" \
		> "$TMP/r$mode.out" 2> "$TMP/r$mode.err"
	sfp script -i "$TMP/r$mode.data" 2> /dev/null |
		awk -f "$(dirname "$0")/offcpu-samples.awk" > "$TMP/r$mode.s"
done
ru=$(sed -n 's/.* off-reused \([0-9]*\).*/\1/p' "$TMP/rreuse.err")
wu=$(sed -n 's/.* off-reused \([0-9]*\).*/\1/p' "$TMP/rwalk.err")
rw=$(sed -n 's/.* off-walked-at-once \([0-9]*\).*/\1/p' "$TMP/rreuse.err")
ww=$(sed -n 's/.* off-walked-at-once \([0-9]*\).*/\1/p' "$TMP/rwalk.err")
if [ "${ru:-0}" -ge 10 ] && [ "${wu:-0}" = 0 ]; then
	pass "off-cpu bpf: $ru block entries took the last walk's stack (${rw:-0} walked; with the hook ${ww:-0} walked, 0 reused)"
else
	fail "off-cpu bpf: ${ru:-0} block entries reused the last walk (want >= 10), ${wu:-none} with the hook (want 0)"
	grep "kernel side" "$TMP/rreuse.err" "$TMP/rwalk.err" | sed 's/^/  /'
fi
# main_stack FILE FN: "SHARE STACK" of FN's blocks' commonest stack from
# two frames below FN on
main_stack() {
	awk -v fn="$2" '$1 == "offcpu-time" { for (i = 4; i <= NF; i++) if ($i == fn) {
		k = i - 2 < 4 ? 4 : i - 2; s = ""
		for (j = k; j <= NF; j++) s = s " " $j
		c[s]++; n++; break } }
		END { for (s in c) if (c[s] > best) { best = c[s]; b = s }
		printf "%.0f%s\n", n ? 100 * best / n : 0, b }' "$1"
}
for fn in nap wait_pipe; do
	a=$(main_stack "$TMP/rreuse.s" $fn)
	b=$(main_stack "$TMP/rwalk.s" $fn)
	if [ "${a%% *}" -ge 90 ] && [ "${b%% *}" -ge 90 ] &&
	   [ "${a#* }" = "${b#* }" ]; then
		pass "off-cpu bpf: $fn()'s blocks have the same user stack with and without the reuse (${a%% *} / ${b%% *} % of them:${a#* })"
	else
		fail "off-cpu bpf: $fn()'s user stacks differ with the reuse: ${a%% *} %:${a#* }; without: ${b%% *} %:${b#* }"
	fi
	within "off-cpu bpf: with the reuse, blocked time in $fn() = the program's own measure" \
		"$(off_in "$TMP/rreuse.s" $fn)" "$(prog_field "$TMP/rreuse.out" $fn blocked_ns)" 3
done

# --- the checks of run-offcpu.sh through the BPF path ---------------------
CG="--call-graph bpf-defer" OC="off-cpu bpf" sh "$(dirname "$0")/run-offcpu.sh"
