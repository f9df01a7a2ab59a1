#!/bin/sh
# Issue 37, point 3: CPython -X perf stacks, sfprof record at its defaults
# against perf record --call-graph dwarf,65528 on the same workload
# (tests/cli/run-python-perf.sh's recursion: DEPTH Python frames of rec()
# under a busy leaf), for each pyenv CPython 3.12/3.13.  Per run: samples,
# the share whose outermost frame is _start (or ld.so's _dl_start_user),
# the frames stepped through trampolines, sfprof's bytes per sample and
# the CPU seconds of record and the workload together (the workload spins
# for SECS of its own CPU, so the rest is the recorder); the ratio of the
# shares.  BEFORE=path/to/sfprof
# adds the same figures for another build (e.g. one without the
# trampoline step).
# Usage: sh bench/python-perf.sh [BUILD]   (env: DEPTH=20 SECS=2 ROUNDS=3
#        STACK=<--stack-size for sfprof, default the default>)
set -u
B=${1:-build}
DEPTH=${DEPTH:-20}
SECS=${SECS:-2}
ROUNDS=${ROUNDS:-3}
AWKS=$(dirname "$0")/../tests/cli/python-stacks.awk
PYROOT=$(pyenv root 2>/dev/null) || PYROOT=${PYENV_ROOT:-$HOME/.pyenv}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
command -v perf > /dev/null || { echo "python-perf: perf missing"; exit 2; }
cat > "$T/wl.py" <<'EOF'
import sys, time
def leaf(t):
    x = 0
    while time.process_time() < t:
        x += 1
    return x
def rec(n, t):
    if n == 0:
        return leaf(t)
    return rec(n - 1, t)
rec(int(sys.argv[1]), time.process_time() + float(sys.argv[2]))
EOF

pid_of() { awk '/^[^\t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' "$1"; }

# stacks LISTING: "SAMPLES ROOT"
stacks() {
	p=$(pid_of "$1")
	awk -v map="/tmp/perf-$p.map" -v wl="$T/wl.py" -v depth="$DEPTH" \
		-f "$AWKS" "$1" 2> /dev/null | awk '{ print $1, $2 }'
	rm -f "/tmp/perf-$p.map"
}

# sfp BIN LABEL PY
sfp() {
	/usr/bin/time -f %U+%S -o "$T/time" "$1" record ${STACK:+--stack-size $STACK} \
		-o "$T/s.data" -- "$3" -X perf "$T/wl.py" "$DEPTH" "$SECS" \
		> /dev/null 2> "$T/s.err" || { echo "  $2: record failed"; return; }
	"$1" script -i "$T/s.data" > "$T/s.txt" 2> /dev/null
	set -- "$2" $(stacks "$T/s.txt")
	tr=$(sed -n 's/^  \([0-9]*\) frames stepped through interpreter.*/\1/p' "$T/s.err")
	bps=$(sed -n 's/.*(\([0-9.]*\) bytes\/sample.*/\1/p' "$T/s.err")
	cpu=$(awk -F+ '{ printf "%.2f", $1 + $2 }' "$T/time")
	printf "  %-8s %5d samples, %5.1f %% reach the root, %6d trampoline frames, %s bytes/sample, CPU %s s (record + workload)\n" \
		"$1" "$2" "$(awk -v a="$3" -v b="$2" 'BEGIN { print b ? 100 * a / b : 0 }')" \
		"${tr:-0}" "${bps:-?}" "$cpu"
	echo "$1 $2 $3" >> "$T/shares"
}

for v in 3.12 3.13; do
	py=$(ls -d "$PYROOT"/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	[ -n "$py" ] || { echo "python$v: not installed under $PYROOT"; continue; }
	echo "== $py -X perf, depth $DEPTH, $SECS s, $ROUNDS rounds"
	: > "$T/shares"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		sfp "$B/sfprof" sfprof "$py"
		[ -n "${BEFORE:-}" ] && sfp "$BEFORE" before "$py"
		perf record -q -F 999 --call-graph dwarf,65528 -o "$T/p.data" \
			-- "$py" -X perf "$T/wl.py" "$DEPTH" "$SECS" > /dev/null 2>&1 &&
		perf script -i "$T/p.data" -F tid,time,ip,sym,symoff,dso \
			> "$T/p.txt" 2> /dev/null || { echo "  perf failed"; continue; }
		set -- $(stacks "$T/p.txt")
		printf "  %-8s %5d samples, %5.1f %% reach the root\n" perf "$1" \
			"$(awk -v a="$2" -v b="$1" 'BEGIN { print b ? 100 * a / b : 0 }')"
		echo "perf $1 $2" >> "$T/shares"
	done
	awk '{ n[$1] += $2; r[$1] += $3 }
	     END { for (k in n) s[k] = n[k] ? 100 * r[k] / n[k] : 0
		   printf "  all rounds:"
		   for (k in n) printf " %s %.1f %%", k, s[k]
		   if (s["perf"] > 0) printf "; sfprof/perf %.1fx", s["sfprof"] / s["perf"]
		   printf "\n" }' "$T/shares"
done
