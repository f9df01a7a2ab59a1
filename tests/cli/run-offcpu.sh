#!/bin/sh
# `sfprof record --off-cpu`: where threads wait, with deferred user stacks.
# The workload (tests/progs/offcpu-work.c, no frame pointers) times its own
# waits, so every comparison is with what the program measured in the same
# run, never with the test's clock: blocked time per function (+-3 %),
# stacks that reach main/start_thread, on+off-CPU per thread against its
# wall time, one user unwind for 1,023 blocks in one write(), the summing
# of short blocks and the rate bound (nothing lost), -p and -a, perf 6.1
# reading the file, pprof/folded, and bpftrace's offcputime on the same
# run (same totals +-5 %; sfprof's user stacks at least as deep as bpftrace's).
# run-offcpu-bpf.sh runs sections 1-4 and 7 again through the BPF path
# (--call-graph bpf-defer): it sets CG to that option and OC to the prefix
# of the check names; sections 5 and 6 test the readers, not the recorder.
# checks: 30
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/offcpu-subr.sh"

OC=${OC:-off-cpu}
CG=${CG:-}
OW=$SFP_BUILD/tests/progs/offcpu-work
AWKS="$(dirname "$0")/offcpu-samples.awk"
ALL="nap, wait_pipe, wait_cond, stacks reach main or start_thread,
on+off per thread, spin thread, summary counts, bigwrite blocks,
bigwrite one unwind, summed totals, rate bound, summed nothing lost,
-p nap, -p wait_pipe, -a nap, -a wait_cond, bpftrace attached, bpftrace nap,
bpftrace wait_pipe, bpftrace wait_cond, bpftrace feed, stacks as deep as bpftrace's"
[ -n "$CG" ] || ALL="$ALL, perf script offcpu-time, perf script totals,
perf report, pprof off_cpu type, pprof nap, folded nap, folded wait_pipe, speedscope"

skip_all() {
	echo "$ALL" | tr ',' '\n' | sed 's/^ *//' | grep . | while read -r t; do
		skip "$OC: $t" "$1"
	done
	exit 0
}

# What the system allows, decided from the system: root (kernel stacks,
# -a, tracepoints), tracefs with sched_switch.
[ "$(id -u)" = 0 ] || skip_all "not root"
FMT=/sys/kernel/tracing/events/sched/sched_switch/format
if [ ! -r $FMT ] && [ ! -r /sys/kernel/debug/tracing/events/sched/sched_switch/format ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
	[ -r $FMT ] || skip_all "no tracefs with sched:sched_switch"
fi

# samples FILE.data [script options]: one line per sample (offcpu-samples.awk)
samples() {
	_f=$1
	shift
	sfp script -i "$_f" "$@" > "$TMP/script.txt" 2> "$TMP/script.err" ||
		return 1
	awk -f "$AWKS" "$TMP/script.txt"
}


# --- 1. the main workload, every block its own sample --------------------
sfp record $CG -m 16M --off-cpu --off-cpu-thresh 0 -o "$TMP/ow.data" -- "$OW" \
	> "$TMP/ow.out" 2> "$TMP/ow.err"
samples "$TMP/ow.data" > "$TMP/ow.s"
for fn in nap wait_pipe wait_cond; do
	within "$OC: blocked time in $fn() = the program's own measure" \
		"$(off_in "$TMP/ow.s" $fn)" "$(prog_field "$TMP/ow.out" $fn blocked_ns)" 3
done
# every off-CPU stack of the program's threads reaches main (through
# libc's __libc_start_call_main) or start_thread, through libc's waits
# (a block before main exists -- a page fault on a cold binary, in the
# dynamic loader or in the program's own _start before it calls
# __libc_start_main -- ends at ld.so's _dl_start_user or at _start, the
# entry point: complete, counted apart; so is a block inside execve itself,
# loading the cold binary, whose user stack is not the program's yet: seen
# in fresh clones, bprm_execve among its kernel frames; and so is a block
# of an exiting thread, do_exit among its kernel frames, whose memory may
# be gone: the kernel itself defers no user stack there, seen under ASan
# as a wait for the mmap lock in exit_mmap)
# Only the program's own threads and its main thread: a sanitizer build
# adds LeakSanitizer's tracer, a raw clone() without start_thread.
sfp report --threads --plain -i "$TMP/ow.data" > "$TMP/threads.txt" 2> /dev/null
mine=$(for t in nap wait_pipe wait_cond spin feed; do prog_field "$TMP/ow.out" $t tid; done | tr '\n' ' ')
mine="$mine $(awk -F'\t' -v t="$(prog_field "$TMP/ow.out" nap tid)" '$1 == "thread" && $3 == t { print $2 }' "$TMP/threads.txt")"
awk -v mine="$mine" 'BEGIN { k = split(mine, a, " "); for (i = 1; i <= k; i++) want[a[i]] = 1 }
	$1 == "offcpu-time" && ($2 in want) { n++
	for (i = 4; i <= NF; i++) if ($i == "bprm_execve" || $i == "do_exit") { ld++; next }
	for (i = 4; i <= NF; i++)
	if ($i == "start_thread" || $i == "__libc_start_call_main") { ok++; next }
	if ($NF == "_dl_start_user" || $NF == "_start") { ld++; next }
	if (bad++ < 3) print "  incomplete:", $0 > "/dev/stderr" }
	END { printf "%d %d %d\n", ok, n - ld, ld }' "$TMP/ow.s" > "$TMP/complete"
read -r ok n ld < "$TMP/complete"
if [ "${n:-0}" -gt 50 ] && [ $((ok * 100)) -ge $((n * 99)) ]; then
	pass "$OC: $ok of $n off-CPU stacks reach main or start_thread (>= 99 %; $ld more before main or in exit: execve, loader, _start, do_exit)"
else
	fail "$OC: $ok of $n off-CPU stacks reach main or start_thread (want >= 99 %; $ld before main)"
fi
# (where a stack ends short, the recorder's own account of its unwinds)
[ "${ok:-0}" = "${n:-0}" ] || grep "unwind stops\|kernel side" "$TMP/ow.err" | sed 's/^/  /'

# on + off per thread (report --threads, the wall-clock view): the
# waiting threads are off-CPU for their wall time but the few microseconds
# they run (sampled as cpu-clock)
bad=
for t in nap wait_pipe wait_cond feed; do
	tid=$(prog_field "$TMP/ow.out" $t tid)
	wall=$(prog_field "$TMP/ow.out" $t wall_ns)
	sum=$(awk -F'\t' -v t="$tid" '$1 == "thread" && $3 == t { print $7 }' "$TMP/threads.txt")
	echo "  $t: on+off $sum ns, wall $wall ns"
	awk -v g="$sum" -v w="$wall" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= w * 0.05) }' ||
		bad="$bad $t"
done
if [ -z "$bad" ]; then
	pass "$OC: report --threads: on-CPU + off-CPU per waiting thread = its wall time +-5 %"
else
	fail "$OC: on-CPU + off-CPU differs from wall time by > 5 % for:$bad"
fi
# The CPU loop: its on-CPU time is its CPU time; the rest of its wall time
# it was runnable (preempted, both cores busy), which neither counts. The
# cpu-clock event counts what irq and a hypervisor's steal took from the
# thread's CPU time too (333 samples for 300 ms under a full make check,
# 7 Dec 2026): the program measures that as well.
tid=$(prog_field "$TMP/ow.out" spin tid)
within_cpu "$OC: spin thread's on+off-CPU = its CPU time" \
	"$(awk -v t="$tid" '$2 == t && ($1 == "offcpu-time" || $1 == "cpu-clock") { s += $3 }
		END { printf "%.0f\n", s }' "$TMP/ow.s")" "$(prog_field "$TMP/ow.out" spin cpu_ns)" 5 \
	"$(prog_field "$TMP/ow.out" spin stolen_ns)"
nblk=$(awk '$1 == "offcpu-time" { n++ } END { print n + 0 }' "$TMP/ow.s")
if grep -q "off-cpu: $nblk blocks" "$TMP/ow.err" && grep -q "user unwinds" "$TMP/ow.err" &&
   grep -q "); 0 without a switch-in\$" "$TMP/ow.err"; then
	pass "$OC: the summary counts the $nblk blocks and their unwinds"
else
	fail "$OC: the summary does not count $nblk blocks, or has blocks without a switch-in"
	grep "off-cpu\|lost" "$TMP/ow.err" | sed 's/^/  /'
fi

# --- 2. 1,023 blocks in one kernel entry: one user unwind ---------------
sfp record $CG -m 16M --stack-size 4096 --off-cpu --off-cpu-thresh 0 -o "$TMP/bw.data" \
	-- "$OW" bigwrite > "$TMP/bw.out" 2> "$TMP/bw.err"
samples "$TMP/bw.data" --no-merge-callchains > "$TMP/bw.s"
tid=$(prog_field "$TMP/bw.out" big_write tid)
# The blocks inside the write() (vfs_write in their kernel stack): an
# ASan-built thread also blocks on a futex as it starts (ASan's thread
# start handshake, 8 ms here), which is another kernel entry with its own
# unwind, rightly.
awk -v t="$tid" '$1 == "offcpu-time" && $2 == t { w = 0
	for (i = 4; i < NF; i++) {
		if ($i == "vfs_write") w = 1
		if ($i == "(cookie)" && w) { n++; c[$(i + 1)] = 1 }
	} } END { k = 0; for (x in c) k++; print n + 0, k }' \
	"$TMP/bw.s" > "$TMP/bw.n"
read -r nb nc < "$TMP/bw.n"
if [ "$nb" -ge 1000 ]; then
	pass "$OC: big_write() blocked $nb times in one write()"
else
	fail "$OC: big_write() blocked $nb times, want >= 1000"
	grep "lost\|off-cpu" "$TMP/bw.err" | sed 's/^/  /'
fi
if [ "$nc" = 1 ]; then
	pass "$OC: its $nb blocks cost one user unwind (one deferred cookie)"
else
	fail "$OC: its $nb blocks cost $nc user unwinds, want 1"
	awk -v t="$tid" '$1 == "offcpu-time" && $2 == t' "$TMP/bw.s" | cut -c1-300 |
		uniq -c | head -20 | sed 's/^/  /'
fi

# --- 3. short blocks summed, the rate bound: totals unchanged ------------
sfp record $CG -m 16M --off-cpu --off-cpu-thresh 60 --off-cpu-max-rate 4 -o "$TMP/th.data" \
	-- "$OW" > "$TMP/th.out" 2> "$TMP/th.err"
samples "$TMP/th.data" > "$TMP/th.s"
bad=
for fn in nap wait_pipe wait_cond; do
	awk -v g="$(off_in "$TMP/th.s" $fn)" -v w="$(prog_field "$TMP/th.out" $fn blocked_ns)" \
		'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= w * 0.03) }' || bad="$bad $fn"
done
line=$(grep "^  off-cpu:" "$TMP/th.err")
summed=$(echo "$line" | sed -n 's/.*(\([0-9]*\) under the threshold.*/\1/p')
over=$(echo "$line" | sed -n 's/.*, \([0-9]*\) over the rate bound.*/\1/p')
own=$(echo "$line" | sed -n 's/.*; \([0-9]*\) own samples.*/\1/p')
if [ -z "$bad" ]; then
	pass "$OC: with --off-cpu-thresh 60 the per-function totals stay within 3 %"
else
	fail "$OC: with --off-cpu-thresh 60 the totals moved for:$bad"
fi
# own samples per second of their timestamps (the sums are the ones
# stamped with the recording's last time)
sfp script -i "$TMP/th.data" 2> /dev/null | awk '/ offcpu-time:/ {
	match($0, /[0-9]+\.[0-9]+:/); t = substr($0, RSTART, RLENGTH - 1)
	n++; tm[n] = t; if (t + 0 > last + 0) last = t }
	END { for (i = 1; i <= n; i++) if (tm[i] != last) c[int(tm[i])]++
		m = 0; for (s in c) if (c[s] > m) m = c[s]; print m }' > "$TMP/th.max"
max=$(cat "$TMP/th.max")
if [ "${max:-99}" -le 4 ] && [ "${over:-0}" -gt 0 ] && [ "${own:-0}" -gt 0 ]; then
	pass "$OC: --off-cpu-max-rate 4: $own own samples, at most $max a second, $over over the bound counted"
else
	fail "$OC: rate bound: $own own samples, $max in one second, $over over the bound"
	echo "  $line"
fi
nsum=$(awk '$1 == "offcpu-time" { s += $3 } END { printf "%.0f\n", s }' "$TMP/th.s")
bsum=$(echo "$line" | sed -n 's/.*blocks (\([0-9.]*\) s blocked).*/\1/p')
if [ "${summed:-0}" -gt 0 ] &&
   awk -v a="$nsum" -v b="$bsum" 'BEGIN { d = a / 1e9 - b; exit !(d < 0.002 && d > -0.002) }'; then
	pass "$OC: $summed short blocks summed, the file holds all ${bsum} s blocked"
else
	fail "$OC: summed $summed; file $nsum ns vs summary $bsum s"
fi

# --- 4. -p and -a: the workload waits in linger() for a start file ------
rm -f "$TMP/go"
"$OW" start "$TMP/go" > "$TMP/p.out" &
pid=$!
sfp record $CG -m 16M --off-cpu --off-cpu-thresh 0 -o "$TMP/p.data" -p $pid \
	> /dev/null 2> "$TMP/p.err" &
rec=$!
i=0
while [ ! -s "$TMP/p.data" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
touch "$TMP/go"
wait $pid
wait $rec
samples "$TMP/p.data" > "$TMP/p.s"
for fn in nap wait_pipe; do
	within "$OC: -p: blocked time in $fn()" \
		"$(off_in "$TMP/p.s" $fn)" "$(prog_field "$TMP/p.out" $fn blocked_ns)" 3 ||
		grep "off-cpu\|lost\|kernel side" "$TMP/p.err" | sed 's/^/  /'
done
rm -f "$TMP/go"
"$OW" start "$TMP/go" > "$TMP/a.out" &
pid=$!
# (bpf-defer's SFrame tables live in BPF arrays, by default 1M rows, least
# recently used evicted: -a on a machine that runs compilers loads each
# cc1's table, which is most of that; larger arrays keep the workload's)
[ -n "$CG" ] && export SFPROF_BPF_MAX_FRES=8388608 SFPROF_BPF_MAX_FDES=2097152
sfp record $CG -a -m 32M --stack-size 8192 --off-cpu --off-cpu-thresh 0 -o "$TMP/a.data" \
	--duration 20 > /dev/null 2> "$TMP/a.err" &
rec=$!
unset SFPROF_BPF_MAX_FRES SFPROF_BPF_MAX_FDES
i=0
while [ ! -s "$TMP/a.data" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
touch "$TMP/go"
wait $pid
kill -INT $rec
wait $rec
samples "$TMP/a.data" > "$TMP/a.s"
for fn in nap wait_cond; do
	tid=$(prog_field "$TMP/a.out" $fn tid)
	within "$OC: -a: blocked time in $fn()" \
		"$(awk -v t="$tid" '$2 == t' "$TMP/a.s" > "$TMP/a1.s"; off_in "$TMP/a1.s" $fn)" \
		"$(prog_field "$TMP/a.out" $fn blocked_ns)" 3 ||
		grep "off-cpu\|lost\|kernel side" "$TMP/a.err" | sed 's/^/  /'
done

# --- 5. perf 6.1 reads the inline form ----------------------------------
if [ -z "$CG" ]; then
sfp record -q -m 16M --inline --off-cpu --off-cpu-thresh 0 -o "$TMP/in.data" \
	-- "$OW" > "$TMP/in.out" 2> /dev/null
sfp script -i "$TMP/in.data" > "$TMP/in-sfp.txt" 2> /dev/null
if command -v perf > /dev/null && perf script -i "$TMP/in.data" > "$TMP/in-perf.txt" 2> "$TMP/in-perf.err"; then
	awk -f "$AWKS" "$TMP/in-perf.txt" > "$TMP/in-perf.s"
	awk -f "$AWKS" "$TMP/in-sfp.txt" > "$TMP/in-sfp.s"
	np=$(awk '$1 == "offcpu-time"' "$TMP/in-perf.s" | wc -l)
	if [ "$np" -gt 50 ] && has "nap" "$TMP/in-perf.s"; then
		pass "$OC: perf script shows $np offcpu-time samples with user stacks"
	else
		fail "$OC: perf script shows $np offcpu-time samples"
	fi
	awk '$1 == "offcpu-time" { s[$2] += $3 } END { for (t in s) print t, s[t] }' "$TMP/in-perf.s" | sort > "$TMP/tp"
	awk '$1 == "offcpu-time" { s[$2] += $3 } END { for (t in s) print t, s[t] }' "$TMP/in-sfp.s" | sort > "$TMP/ts"
	check_eq "$OC: perf script and sfprof script sum the same blocked ns per thread" "$TMP/ts" "$TMP/tp"
	if perf report -i "$TMP/in.data" --stdio --children 2> /dev/null > "$TMP/in-rep.txt" &&
	   grep -q "of event 'offcpu-time'" "$TMP/in-rep.txt" && grep -q "\[\.\] nap" "$TMP/in-rep.txt"; then
		pass "$OC: perf report has the offcpu-time event, nap() in it"
	else
		fail "$OC: perf report lacks offcpu-time or nap()"
	fi
else
	skip "$OC: perf script offcpu-time" "no perf"
	skip "$OC: perf script totals" "no perf"
	skip "$OC: perf report" "no perf"
fi

# --- 6. pprof (go tool pprof) and folded --------------------------------
sfp export -f pprof -i "$TMP/ow.data" -o "$TMP/ow.pb.gz" 2> /dev/null
if command -v go > /dev/null &&
   go tool pprof -raw "$TMP/ow.pb.gz" > "$TMP/pp.raw" 2> "$TMP/pp.err"; then
	if grep -q "off_cpu/nanoseconds" "$TMP/pp.raw"; then
		pass "$OC: pprof has the sample type off_cpu/nanoseconds"
	else
		fail "$OC: pprof lacks off_cpu/nanoseconds"
		head -3 "$TMP/pp.raw" | sed 's/^/  /'
	fi
	go tool pprof -sample_index=off_cpu -top -nodecount=500 -unit=ns "$TMP/ow.pb.gz" \
		> "$TMP/pp.top" 2> /dev/null
	within "$OC: go tool pprof: nap() cumulative off_cpu" \
		"$(awk '$NF == "nap" { v = $4; sub(/ns$/, "", v); print v }' "$TMP/pp.top")" \
		"$(off_in "$TMP/ow.s" nap)" 0.1
else
	skip "$OC: pprof off_cpu type" "no go tool pprof"
	skip "$OC: pprof nap" "no go tool pprof"
fi
sfp export -f folded --event offcpu-time -i "$TMP/ow.data" -o "$TMP/ow.folded" 2> /dev/null
for fn in nap wait_pipe; do
	within "$OC: folded --event offcpu-time: ns under $fn" \
		"$(awk -v fn="$fn" 'index($1, ";" fn ";") { s += $2 } END { printf "%.0f\n", s }' "$TMP/ow.folded")" \
		"$(off_in "$TMP/ow.s" $fn)" 0.1
done

sfp export -f speedscope -i "$TMP/ow.data" -o "$TMP/ow.ss.json" 2> /dev/null
tid=$(prog_field "$TMP/ow.out" nap tid)
within "$OC: speedscope: nap thread's offcpu-time profile in nanoseconds" \
	"$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(sum(p["weights"]) for p in d["profiles"]
	  if p["name"].endswith("/" + sys.argv[2] + " offcpu-time") and p["unit"] == "nanoseconds"))' \
	"$TMP/ow.ss.json" "$tid")" \
	"$(awk -v t="$tid" '$1 == "offcpu-time" && $2 == t { s += $3 } END { printf "%.0f\n", s }' "$TMP/ow.s")" 0.1

fi	# [ -z "$CG" ]: sections 5 and 6

# --- 7. side by side with bpftrace's offcputime -------------------------
if ! command -v bpftrace > /dev/null; then
	for t in "bpftrace attached" "bpftrace nap" "bpftrace wait_pipe" \
		 "bpftrace wait_cond" "bpftrace feed" "stacks as deep as bpftrace's"; do
		skip "$OC: $t" "no bpftrace (mk/deps.sh installs it)"
	done
	exit 0
fi
# The classic offcputime: per-tid switch-out time and stacks at a blocking
# sched_switch (of the workload's processes only: the maps stay small),
# the blocked time summed at the switch-in; ustack walks frame pointers.
cat > "$TMP/offcputime.bt" << 'EOF'
BEGIN { printf("probes attached\n"); }
tracepoint:sched:sched_switch
/ curtask->group_leader->comm == "offcpu-work" /
{
	if (args->prev_state & 0xcf) {
		@start[args->prev_pid] = nsecs;
		@ust[args->prev_pid] = ustack(perf);
	}
}
tracepoint:sched:sched_switch
{
	$t = @start[args->next_pid];
	if ($t) {
		$d = nsecs - $t;
		@blocked[args->next_pid] = sum($d);
		@stacks[args->next_pid, @ust[args->next_pid]] = sum($d);
		delete(@start[args->next_pid]);
	}
}
END { clear(@start); clear(@ust); }
EOF
ulimit -l unlimited 2> /dev/null
bpftrace "$TMP/offcputime.bt" > "$TMP/bt.out" 2> "$TMP/bt.err" &
bt=$!
i=0
# (BEGIN runs once every probe is attached)
while ! grep -q "probes attached" "$TMP/bt.out" 2> /dev/null && [ $i -lt 600 ] &&
      kill -0 $bt 2> /dev/null; do
	sleep 0.1
	i=$((i + 1))
done
if ! grep -q "probes attached" "$TMP/bt.out" 2> /dev/null; then
	fail "$OC: bpftrace did not attach"
	head -5 "$TMP/bt.err" | sed 's/^/  /'
	kill $bt 2> /dev/null
	exit 0
fi
pass "$OC: bpftrace offcputime attached"
sfp record $CG -m 16M --off-cpu --off-cpu-thresh 0 -o "$TMP/bt.data" -- "$OW" \
	> "$TMP/btw.out" 2> "$TMP/btw.err"
# SIGINT makes bpftrace print its maps; 0.17 can miss one that comes
# while it is busy, so say it again until it is gone.
i=0
while kill -0 $bt 2> /dev/null && [ $i -lt 150 ]; do
	[ $((i % 10)) = 0 ] && kill -INT $bt
	sleep 0.2
	i=$((i + 1))
done
kill -KILL $bt 2> /dev/null
wait $bt
samples "$TMP/bt.data" > "$TMP/bt.s"
# near A B PCT: |A - B| <= PCT % of B (silent)
near() {
	awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d
		exit !(w > 0 && d <= w * p / 100) }'
}
# The program's own count is the referee when the two tools disagree:
# bpftrace's program can miss a switch (1 Dec 2026, beside two CPU hogs:
# nap 900.8 ms by bpftrace, one 100 ms block short, against sfprof's
# 1,001.2 and the program's 1,001.5).  That is a SKIP naming bpftrace's
# miss; sfprof away from the program's own count is a FAIL.
for fn in nap wait_pipe wait_cond feed; do
	tid=$(prog_field "$TMP/btw.out" $fn tid)
	got=$(awk -v t="$tid" '$1 == "offcpu-time" && $2 == t { s += $3 } END { printf "%.0f\n", s }' "$TMP/bt.s")
	bt=$(sed -n "s/^@blocked\[$tid\]: //p" "$TMP/bt.out")
	# feed() does not time its sleeps: its wall time is its blocked time
	own=$(prog_field "$TMP/btw.out" $fn blocked_ns)
	[ "${own:-0}" -gt 0 ] || own=$(prog_field "$TMP/btw.out" $fn wall_ns)
	name="$OC: same blocked time as bpftrace for thread $fn"
	if near "$got" "$bt" 5; then
		pass "$name ($got vs $bt, +-5 %)"
	elif near "$got" "$own" 3 && ! near "$bt" "$own" 5; then
		skip "$name" "bpftrace missed blocks: $bt ns against the program's own $own ns; sfprof $got ns"
		bt_mismatch=1
	else
		fail "$name ($got vs $bt, +-5 %; the program's own $own)"
		bt_mismatch=1
	fi
done
if [ -n "${bt_mismatch:-}" ]; then
	grep "lost\|off-cpu" "$TMP/btw.err" | sed 's/^/  sfprof: /'
	grep "^@blocked" "$TMP/bt.out" | sed 's/^/  bpftrace: /'
	cat "$TMP/btw.out" | sed 's/^/  program: /'
fi
# User-stack completeness: sfprof's stacks against bpftrace's frame
# pointer walks of the same threads (frames per stack).  The workload and
# Debian's libc have no frame pointers, so bpftrace's walks end after a
# frame or two (6 Dec 2026: 14 distinct stacks, 1.9 user frames each, none
# with 4 or more) where sfprof's reach start_thread (63 stacks, 6.2
# frames each): sfprof must be at least as deep, stack for stack on
# average.
tids=$(for fn in nap wait_pipe wait_cond feed; do prog_field "$TMP/btw.out" $fn tid; done | tr '\n' ' ')
awk -v tids="$tids" 'BEGIN { n = split(tids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	/^@stacks\[/ { t = $0; sub(/^@stacks\[/, "", t); sub(/,.*/, "", t); intid = (t in want); nf = 0; next }
	intid && /^\t/ { nf++; next }
	intid && /^\]/ { st++; fr += nf; if (nf >= 4) deep++; intid = 0 }
	END { printf "%d %d %d\n", st, fr, deep }' "$TMP/bt.out" > "$TMP/btc"
read -r bst bfr bdeep < "$TMP/btc"
# (sfprof's user frames: those outside [kernel.kallsyms], as ustack's)
sfp script -i "$TMP/bt.data" > "$TMP/bt.script" 2> /dev/null
awk -v tids="$tids" 'BEGIN { n = split(tids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	/^[^\t]/ { in_ = 0
		if ($NF != "offcpu-time:") next
		t = $2; sub(/\/.*/, "", t)
		if (t in want) { st++; in_ = 1 }
		next }
	in_ && /^\t/ && !/\(\[kernel\.kallsyms\]\)$/ { fr++
		if ($2 ~ /^start_thread\+/) okk++ }
	END { printf "%d %d %d\n", st, fr, okk }' "$TMP/bt.script" > "$TMP/sfc"
read -r sst sfr sok < "$TMP/sfc"
echo "  user stacks of the waiting threads: sfprof $sst stacks, $(awk -v a="$sfr" -v b="$sst" 'BEGIN { printf "%.1f", b ? a / b : 0 }') user frames each, $sok reach start_thread;"
echo "  bpftrace $bst distinct stacks, $(awk -v a="$bfr" -v b="$bst" 'BEGIN { printf "%.1f", b ? a / b : 0 }') user frames each, $bdeep with 4 or more frames (frame pointers end at the first frame without them)"
if [ "${sst:-0}" -gt 0 ] && [ "${bst:-0}" -gt 0 ] &&
   [ $((sfr * bst)) -ge $((bfr * sst)) ]; then
	pass "$OC: sfprof's user stacks are at least as deep as bpftrace's frame-pointer walks"
else
	fail "$OC: sfprof's user stacks at least as deep as bpftrace's (sfprof $sst stacks, $sfr frames; bpftrace $bst stacks, $bfr frames)"
fi
