#!/bin/sh
# The agent on a churning host (issue 36 point 10, issue 39 point 3): the
# symbolizing agent and the --no-symbolize one side by side, in the same
# run, on the same machine:
#
#  - forty distinct binaries (a generated C program of BENCH_FUNCS, default
#    300, functions, -O2 -g, compiled once, each binary with a build-id of
#    its own: linked with a seed of its own), each running as a long-lived
#    process that works a few ms and sleeps (a few % of a CPU each), so
#    that samples hit all forty and the symbolizing agent reads forty
#    symbol and line tables;
#  - BENCH_RATE (default 150) process starts a second, round-robin over
#    the forty binaries, each working ~2 ms then exiting (a spawner in C:
#    a shell loop would start `sleep` as often as the programs);
#  - six "containers": one of the binaries copied into a tmpfs in its own
#    mount and pid namespace (another inode, the same build-id).
#
# Both agents at their defaults (19 Hz per CPU, --call-graph auto, a
# window every 10 s) with a files sink (--output-dir: windows are built,
# symbolized or not, encoded and written), a fresh SFPROF_CACHE_DIR each,
# for BENCH_SECONDS (default 60) after both sample.  Printed per agent:
# VmHWM (peak), VmRSS at the end, CPU over the run, and what the resident
# memory was at its largest (from /proc/PID/smaps, read every 2 s, the
# largest kept): heap and other anonymous memory, BPF maps and perf
# rings, file pages (the largest files named).
# BENCH_AGENT_ARGS adds options to both agents.  BENCH_CC=1 adds what a
# build host runs: gcc compiling a C file in a loop, so that the agents
# build the unwind tables of cc1 (33 MB, 443k CFI rows), as and ld.
# Usage: sh bench/agent-churn.sh [BUILD]   (root, gcc, python3, unshare)
set -u
B=${1:-build}
S=${BENCH_SECONDS:-60}
RATE=${BENCH_RATE:-150}
FUNCS=${BENCH_FUNCS:-300}
NBIN=40
NCTR=6
AARGS=${BENCH_AGENT_ARGS:-}
if [ "$(id -u)" != 0 ] || ! unshare --mount --pid --fork true 2>/dev/null; then
	echo "agent-churn: not root or no namespaces: skipped"
	exit 0
fi
for t in gcc python3 setpriv; do
	command -v $t > /dev/null || { echo "agent-churn: $t missing"; exit 2; }
done
[ -x "$B/sfprof" ] || { echo "agent-churn: $B/sfprof missing"; exit 2; }
B=$(cd "$B" && pwd)
T=$(mktemp -d)
PIDS= AGENTS=
cleanup() {
	for p in $AGENTS $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
unset DEBUGINFOD_URLS
PD="setpriv --pdeathsig KILL"

# --- the forty binaries and the spawner -----------------------------------
python3 - "$FUNCS" > "$T/gen.c" <<'EOF'
import sys
n = int(sys.argv[1])
print("#include <stdlib.h>\n#include <time.h>\n#include <unistd.h>")
print("volatile unsigned long sink;")
print("extern const unsigned long bench_seed;")
for i in range(n):
    print("static inline unsigned long in%d(unsigned long x) { return x * %d + bench_seed; }" % (i, 2 * i + 1))
    print("__attribute__((noinline)) unsigned long f%d(unsigned long x) "
          "{ for (int k = 0; k < 3; k++) sink += in%d(x + k); return sink; }" % (i, i))
print("static void round_(void) { unsigned long s = 0;")
for i in range(n):
    print("  s += f%d(s);" % i)
print("  sink += s; }")
print("""
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9; }
static void work(double sec) { double e = now() + sec; while (now() < e) round_(); }
int main(int argc, char **argv) {
  if (argc > 1) { work(0.002); return 0; }     /* a short-lived start */
  for (;;) { work(0.002); usleep(60000); }     /* long-lived: ~3 % of a CPU */
}""")
EOF
cat > "$T/spawn.c" <<'EOF'
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
extern char **environ;
/* spawn RATE DIR N: RATE starts a second of DIR/bI short, I round-robin */
int main(int argc, char **argv)
{
	long rate = atol(argv[1]), n = atol(argv[3]), i = 0;
	struct timespec next;
	char path[4096];

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		char *av[] = { path, "short", NULL };
		pid_t pid;

		snprintf(path, sizeof(path), "%s/b%ld", argv[2], i++ % n);
		posix_spawn(&pid, path, NULL, NULL, av, environ);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next.tv_nsec += 1000000000L / rate;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}
EOF
gcc -O2 -o "$T/spawn" "$T/spawn.c" || exit 2
mkdir -p "$T/bin"
echo "agent-churn: building $NBIN binaries of $FUNCS functions ..."
# compiled once, linked with a seed of its own each (its own build-id):
# forty compilations take minutes on a loaded machine
gcc -O2 -g -c -o "$T/gen.o" "$T/gen.c" || exit 2
i=0
while [ $i -lt $NBIN ]; do
	echo "const unsigned long bench_seed = $i;" > "$T/seed.c"
	gcc -O2 -g -o "$T/bin/b$i" "$T/gen.o" "$T/seed.c" || exit 2
	i=$((i + 1))
done

# --- the two agents -------------------------------------------------------
start_agent() {	# NAME ARGS...
	n=$1
	shift
	mkdir -p "$T/$n.out" "$T/$n.cache"
	SFPROF_CACHE_DIR=$T/$n.cache HOME=$T $PD "$B/sfprof" agent \
		--output-dir "$T/$n.out" $AARGS "$@" 2> "$T/$n.err" &
	echo $! > "$T/$n.pid"
	AGENTS="$AGENTS $!"
}
start_agent sym
start_agent nosym --no-symbolize
for n in sym nosym; do
	i=0
	while ! grep -q "sampling every CPU" "$T/$n.err" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "sampling every CPU" "$T/$n.err" ||
		{ echo "agent-churn: agent $n did not start:"; cat "$T/$n.err"; exit 2; }
done

# --- the load ---------------------------------------------------------------
i=0
while [ $i -lt $NBIN ]; do
	$PD "$T/bin/b$i" &
	PIDS="$PIDS $!"
	i=$((i + 1))
done
i=0
while [ $i -lt $NCTR ]; do
	mkdir -p "$T/ctr$i"
	$PD unshare --mount --pid --fork --kill-child sh -c \
		"mount -t tmpfs tmpfs '$T/ctr$i' && cp '$T/bin/b$i' '$T/ctr$i/' && exec '$T/ctr$i/b$i'" \
		> /dev/null 2>&1 &
	PIDS="$PIDS $!"
	i=$((i + 1))
done
$PD "$T/spawn" "$RATE" "$T/bin" $NBIN &
PIDS="$PIDS $!"
if [ "${BENCH_CC:-0}" = 1 ]; then
	$PD sh -c "while :; do gcc -O2 -c -o /dev/null '$T/gen.c'; done" &
	PIDS="$PIDS $!"
fi

# --- the measurement ------------------------------------------------------
# smaps to: anon (heap and other private anonymous memory), bpf (BPF maps),
# perf (perf rings), file (file pages), the largest files
smaps_sum() {
	awk '
	/^[0-9a-f]+-[0-9a-f]+ / { name = $6; for (i = 7; i <= NF; i++) name = name " " $i
		if (name == "" || name == "[heap]" || name ~ /^\[anon/) k = "anon"
		else if (name ~ /bpf-map|bpf_ringbuf/) k = "bpf"
		else if (name ~ /perf_event/) k = "perf"
		else if (name ~ /^\//) k = "file"
		else k = "other"
		next }
	/^Rss:/ { r[k] += $2; if (k == "file") f[name] += $2 }
	END {
		printf "anon %d bpf %d perf %d file %d other %d;", r["anon"], r["bpf"],
			r["perf"], r["file"], r["other"]
		n = 0
		for (x in f) { v[++n] = f[x]; nm[n] = x }
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (v[j] > v[i]) { t = v[i]; v[i] = v[j]; v[j] = t; t = nm[i]; nm[i] = nm[j]; nm[j] = t }
		for (i = 1; i <= n && i <= 4; i++) { sub(".*/", "", nm[i]); printf " %s %d", nm[i], v[i] }
	}' "$1"
}
tick=$(getconf CLK_TCK)
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null || echo 0; }
SP=$(cat "$T/sym.pid") NP=$(cat "$T/nosym.pid")
c0s=$(cpu_of $SP) c0n=$(cpu_of $NP)
t0=$(date +%s.%N)
echo "agent-churn: $NBIN binaries long-lived, $RATE starts/s over them, $NCTR containers$([ "${BENCH_CC:-0}" = 1 ] && echo ', gcc compiling in a loop');" \
     "$S s; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo 0 > "$T/sym.max"
echo 0 > "$T/nosym.max"
el=0
while [ $el -lt "$S" ]; do
	sleep 2
	el=$((el + 2))
	for n in sym nosym; do
		p=$(cat "$T/$n.pid")
		r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$r" ] || { echo "agent-churn: agent $n gone:"; tail -5 "$T/$n.err"; exit 1; }
		if [ "$r" -gt "$(cat "$T/$n.max")" ]; then
			echo "$r" > "$T/$n.max"
			cp "/proc/$p/smaps" "$T/$n.smaps" 2>/dev/null
		fi
	done
done
t1=$(date +%s.%N)
c1s=$(cpu_of $SP) c1n=$(cpu_of $NP)
for n in sym nosym; do
	p=$(cat "$T/$n.pid")
	awk '/^Vm(HWM|RSS):/ { printf "%s %s ", $1, $2 }' "/proc/$p/status" > "$T/$n.vm"
done
procs=$(ls /proc | grep -c '^[0-9]')
for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
PIDS=
kill -INT $SP $NP
wait $SP $NP 2>/dev/null
AGENTS=

cpu_pct() { awk -v a="$1" -v b="$2" -v t0="$t0" -v t1="$t1" -v tk="$tick" \
	'BEGIN { printf "%.2f", (b - a) / tk * 100 / (t1 - t0) }'; }
printf "%-14s %9s %9s %12s   %s\n" agent "VmHWM MB" "VmRSS MB" "CPU % core" \
	"at its largest RSS, kB: anon bpf perf file other; largest files"
for n in sym nosym; do
	if [ $n = sym ]; then c=$(cpu_pct $c0s $c1s); else c=$(cpu_pct $c0n $c1n); fi
	set -- $(cat "$T/$n.vm")
	printf "%-14s %9.1f %9.1f %12s   %s\n" \
		"$([ $n = sym ] && echo default || echo --no-symbolize)" \
		"$(echo "$2" | awk '{ print $1 / 1024 }')" "$(echo "$4" | awk '{ print $1 / 1024 }')" \
		"$c" "$(smaps_sum "$T/$n.smaps")"
done
for n in sym nosym; do
	grep -E 'symbol tables|windows,|lost' "$T/$n.err" | sed "s/^/  $n: /" | head -4
done
echo "  processes on the machine at the end: $procs; load $(cut -d' ' -f1-3 /proc/loadavg)"
