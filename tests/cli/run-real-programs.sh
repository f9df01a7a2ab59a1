# Real programs nobody here wrote (issue 37, point 6): each recorded by
# `sfprof record` at its defaults and by `perf record --call-graph
# dwarf,65528` (separate runs of the same workload, perf at sfprof's 999
# Hz), then for each tool's `script` output (real-programs.py):
#   root   the share of samples whose user stack reaches its root: the
#          outermost user frame is where the thread began (_start, clone3,
#          Go's runtime.goexit ...; the rule per runtime is ROOTS in
#          real-programs.py), named by an independent tool where one names
#          the address, else by the tool's own name.  Samples taken in the
#          kernel's exec or exit paths (no user stack exists) are left out;
#          any other sample without user frames counts as not reaching it.
#   named  the share of the user frames an independent tool can name
#          (go tool addr2line, nm, the JIT's perf map) that the tool named
#   names  every name sfprof gives (and its offset) is the one the
#          independent tool gives at that address (PLT stubs: the rule of
#          docs/perf-names.md, counted apart)
# Shares are over what was sampled (perf loses samples under load); a
# recording with fewer than MIN_SAMPLES samples of the program fails with
# its numbers.  The figures table at the end goes to bench/RESULTS.md.
# checks: 45
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

# What each program must reach: PROGRAM MIN_ROOT_% MIN_NAMED_% PERF_SLACK
# (sfprof's root share >= perf's minus PERF_SLACK points).  The issue's
# targets are 99, 99, 0; the programs whose feature is not merged yet
# stand at what main reached on 6 Dec 2026 (bench/RESULTS.md, "Real
# programs") less a margin for load and workload noise.
THRESHOLDS="
go-compile 80 99 0
cc1 90 99 5
python3.11 85 99 10
python3.12-perf 90 99 0
node 90 99 0
node-perfmap 90 99 0
java-pfp 85 99 0
sqlite3 98 99 0
xz 99 99 0
"
# go-compile: root 80 since the walks follow the frame-pointer chain from
#   g0 onto the goroutine's stack (docs/record.md "Stack switches": 91-94 %
#   measured on a quiet machine; the first samples of each compile process
#   before it is followed, and a few % not helped, stay short); 99 when the
#   rest of issue 37 point 1 lands; named at 99 since issue 37 point 2
#   landed (.gopclntab names: 100 % measured)
# cc1: root raised to 99 and PERF_SLACK to 0 when issue 37 point 1 lands
#   (perf's 64 KiB copies reach the root of its deepest stacks)
# java-pfp: root raised to 99 when issue 37 point 1 lands
# python3.11: root raised to 99 and PERF_SLACK to 0 when issue 37 point 1
#   lands (perf's 64 KiB copies reach the root more often today)
# python3.12-perf: the trampolines are stepped since issue 37 point 3
#   landed (96.3 % measured, perf 8.6 %): root raised to 99 when point 1
#   lands (its deepest stacks outgrow the 16 KiB copy)
# node, node-perfmap: root raised to 99 when issue 37 points 1 and 4 land
# sqlite3: 98, not 99: its ~300 samples reached 99.3-99.8 % in three runs,
#   so two misses more (a loader or exit sample) would fail 99
# ~0.3-1.5 s of CPU each; under load cpu-clock gave sqlite3 268-546 and
# python3.11 344-653 samples in five runs
MIN_SAMPLES=150
# sampling noise between two runs of the same workload (~1000 samples)
NOISE=1

PY=/root/.pyenv/versions
GO_COMPILE=/usr/lib/go-1.19/pkg/tool/linux_amd64/compile

if ! command -v perf >/dev/null 2>&1 ||
   ! perf record -q -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>&1; then
	skip_rest "real programs" "perf record does not work here"
fi

W=$TMP/w
mkdir -p "$W"
# Both tools' build-id caches here: what other runs left in ~/.debug
# (copies, debug files) changes what perf unwinds with and names
export PERF_BUILDID_DIR="$W/buildid"
FIGS=$TMP/figures

# Perf maps the runtimes write to /tmp (python -X perf, node
# --perf-basic-prof, the JVM's DumpPerfMapAtExit): removed once read.
drop_maps() {
	for _m in $(cat "$@" 2>/dev/null | grep -o '/tmp/perf-[0-9]*\.map' | sort -u); do
		rm -f "$_m"
	done
}

# measure PROGRAM RUNTIME COMMS CMD...: record CMD with both tools, print
# the program's checks and add its row to $FIGS.  COMMS: the thread
# names kept ("" for all: the command is the program).
measure() {
	p=$1 rt=$2 comms=$3
	shift 3
	th=$(echo "$THRESHOLDS" | awk -v p="$p" '$1 == p')
	min_root=$(echo "$th" | awk '{ print $2 }')
	min_named=$(echo "$th" | awk '{ print $3 }')
	slack=$(echo "$th" | awk '{ print $4 }')
	# (sfprof's own status and sanitizer reports are checked here: the
	# five checks fail with them)
	"$SFPROF" record -o "$W/$p.sf" -- "$@" > "$W/$p.out" 2> "$W/$p.sf.log"
	src=$?
	"$SFPROF" script -i "$W/$p.sf" > "$W/$p.sf.txt" 2> "$W/$p.sf.script.log" ||
		src=$((src + 100))
	grep -qE 'runtime error:|LeakSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer' \
		"$W/$p.sf.log" "$W/$p.sf.script.log" && src=99
	if ! rec "$W/$p.perf" -F 999 --call-graph dwarf,65528 -- "$@" > "$W/$p.out" 2>&1; then
		prc=1
	else
		prc=0
		# (no inline lines: perf 6.1 runs addr2line for them, minutes
		# on Node's debug info, and they are not frames)
		perf script --no-inline -i "$W/$p.perf" > "$W/$p.perf.txt" 2> "$W/$p.perf.script.log" || prc=2
	fi
	if [ "$src" -ne 0 ] || [ "$prc" -ne 0 ]; then
		for c in "samples" "root" "root vs perf" "named" "names"; do
			fail "$p: $c: sfprof record/script status $src (99: a sanitizer's report), perf record/script status $prc"
		done
		tail -3 "$W/$p.sf.log" "$W/$p.out" "$W/$p.perf.script.log" 2>/dev/null | sed 's/^/  /'
		drop_maps "$W/$p.sf.txt" "$W/$p.perf.txt"
		return
	fi
	# shellcheck disable=SC2086
	sf=$(python3 "$HERE/real-programs.py" "$rt" "$W/$p.sf.txt" $comms 2> "$W/$p.sf.an")
	# shellcheck disable=SC2086
	pf=$(python3 "$HERE/real-programs.py" "$rt" "$W/$p.perf.txt" $comms 2> "$W/$p.perf.an")
	drop_maps "$W/$p.sf.txt" "$W/$p.perf.txt"
	# (perf's files are 20-140 MB each: not kept for the next program)
	rm -f "$W/$p.perf" "$W/$p.sf"
	if [ -z "$sf" ] || [ -z "$pf" ]; then
		for c in "samples" "root" "root vs perf" "named" "names"; do
			fail "$p: $c: the analysis failed"
		done
		cat "$W/$p.sf.an" "$W/$p.perf.an" | head -6 | sed 's/^/  /'
		return
	fi
	eval "$(echo "$sf" | tr ' ' '\n' | sed 's/^/s_/')"
	eval "$(echo "$pf" | tr ' ' '\n' | sed 's/^/p_/')"
	# shares in tenths of a per cent
	s_rootp=$((s_root * 1000 / (s_samples > 0 ? s_samples : 1)))
	p_rootp=$((p_root * 1000 / (p_samples > 0 ? p_samples : 1)))
	s_namedp=$((s_named_ok * 1000 / (s_nameable > 0 ? s_nameable : 1)))
	p_namedp=$((p_named_ok * 1000 / (p_nameable > 0 ? p_nameable : 1)))
	pct() { echo "$(($1 / 10)).$(($1 % 10))"; }
	lost=$(sed -n 's/^ *lost: //p' "$W/$p.sf.log" | head -1)
	plost=$(grep -o 'lost [0-9]* chunks' "$W/$p.perf.script.log" | head -1)
	echo "| $p | $s_samples | $(pct $s_rootp) % | $(pct $s_namedp) % ($s_named_ok/$s_nameable) | $s_checked | $s_wrong | $p_samples | $(pct $p_rootp) % | $(pct $p_namedp) % | ${lost:-?} | ${plost:-0} |" >> "$FIGS"

	if [ "$s_samples" -ge "$MIN_SAMPLES" ] && [ "$p_samples" -ge "$MIN_SAMPLES" ]; then
		pass "$p: samples: sfprof $s_samples, perf $p_samples (>= $MIN_SAMPLES each)"
	else
		fail "$p: samples: sfprof $s_samples, perf $p_samples (want >= $MIN_SAMPLES each; left out in exec/exit: $s_exec_exit, $p_exec_exit)"
		grep -E 'samples|lost' "$W/$p.sf.log" | head -3 | sed 's/^/  /'
	fi
	if [ "$s_rootp" -ge $((min_root * 10)) ]; then
		pass "$p: root: $(pct $s_rootp) % of sfprof's stacks reach the root (>= $min_root %)"
	else
		fail "$p: root: $(pct $s_rootp) % of sfprof's stacks reach the root ($s_root of $s_samples; want >= $min_root %)"
		sed 's/^/  /' "$W/$p.sf.an" | grep 'not at the root' | head -5
	fi
	if [ "$s_rootp" -ge $((p_rootp - (slack + NOISE) * 10)) ]; then
		pass "$p: root vs perf: sfprof $(pct $s_rootp) %, perf dwarf $(pct $p_rootp) % (slack $slack + noise $NOISE points)"
	else
		fail "$p: root vs perf: sfprof $(pct $s_rootp) % < perf dwarf $(pct $p_rootp) % - $slack - $NOISE points"
		sed 's/^/  /' "$W/$p.sf.an" | grep 'not at the root' | head -5
	fi
	if [ "$s_namedp" -ge $((min_named * 10)) ]; then
		pass "$p: named: sfprof named $(pct $s_namedp) % of the $s_nameable frames the independent tool names (>= $min_named %)"
	else
		fail "$p: named: sfprof named $(pct $s_namedp) % of the $s_nameable frames the independent tool names (want >= $min_named %)"
	fi
	if [ "$s_wrong" -eq 0 ]; then
		pass "$p: names: all $s_checked names sfprof gave are the independent tool's ($s_ruled PLT frames by rule)"
	else
		fail "$p: names: $s_wrong of $s_checked names sfprof gave differ from the independent tool's"
		sed 's/^/  /' "$W/$p.sf.an" | grep 'wrong name' | head -5
	fi
}

# skip_prog PROGRAM REASON: its five checks cannot run here
skip_prog() {
	for c in "samples" "root" "root vs perf" "named" "names"; do
		skip "$1: $c" "$2"
	done
}

# --- the workloads (each about 1 s of CPU) ---------------------------------
cat > "$W/work.py" <<'EOF'
# CPU-bound Python with calls from C into Python (sorted's key, map,
# functools.reduce), so that interpreter entries from C are on stacks.
import functools

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def key(x):
    return (x * 7919) % 10007

def step(acc, x):
    return (acc * 31 + key(x)) & 0xffffffff

def rounds(n):
    total = 0
    for i in range(n):
        total += fib(17)
        data = sorted(range(2000), key=key)
        total += functools.reduce(step, map(key, data), 0)
    return total

print(rounds(300))
EOF
cat > "$W/work.js" <<'EOF'
// CPU-bound JavaScript: recursion, closures, arrays, sorting, strings.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function key(x) { return (x * 7919) % 10007; }
function round(i) {
	const a = [];
	for (let j = 0; j < 3000; j++) a.push(key(j + i));
	a.sort((x, y) => x - y);
	let s = fib(20);
	for (const v of a) s = (s * 31 + v) >>> 0;
	return s + JSON.stringify(a.slice(0, 50)).length;
}
let t = 0;
for (let i = 0; i < 400; i++) t += round(i);
console.log(t);
EOF
cat > "$W/Work.java" <<'EOF'
// CPU-bound Java: recursion, collections, sorting, strings (enough for
// the JIT to compile the hot methods).
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public class Work {
	static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
	static int key(int x) { return (x * 7919) % 10007; }
	static long round(int i) {
		List<Integer> a = new ArrayList<>();
		for (int j = 0; j < 3000; j++) a.add(key(j + i));
		Collections.sort(a);
		long s = fib(20);
		StringBuilder b = new StringBuilder();
		for (int v : a) {
			s = (s * 31 + v) & 0xffffffffL;
			if (v % 97 == 0) b.append(v).append(',');
		}
		return s + b.length();
	}
	public static void main(String[] args) {
		long t = 0;
		int n = Integer.parseInt(args[0]);
		for (int i = 0; i < n; i++) t += round(i);
		System.out.println(t);
	}
}
EOF
mkdir -p "$W/gop" "$W/cc"
cat > "$W/gop/p.go" <<'EOF'
// Package p: a small stdlib-only package; `go build -a` compiles it and
// the standard packages it imports (math, unicode, unicode/utf8).
package p

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// Score sums a measure of the letters of s.
func Score(s string) float64 {
	t := 0.0
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		if unicode.IsLetter(r) {
			t += math.Sqrt(float64(r))
		}
	}
	return t
}
EOF
printf 'module example.com/p\n\ngo 1.19\n' > "$W/gop/go.mod"

# Go compiler: `go build -a` (cache, module path and no network in $W)
if [ -x "$GO_COMPILE" ] && command -v go >/dev/null 2>&1; then
	cd "$W/gop" || exit 1
	(
		export GOCACHE="$W/gocache" GOPATH="$W/gopath" GOPROXY=off GOFLAGS=
		measure go-compile go compile go build -a -o /dev/null .
	)
	cd "$W" || exit 1
else
	skip_prog go-compile "no $GO_COMPILE (golang-go, mk/deps.sh)"
fi

# gcc's cc1: -O2 of two of this project's largest sources
cd "$W/cc" || exit 1
measure cc1 c cc1 gcc -O2 -D_GNU_SOURCE -I"$HERE/../../include" -I"$HERE/../../src" \
	-c "$HERE/../../src/perf/reader.c" "$HERE/../../src/record/session.c"
cd "$W" || exit 1

# CPython 3.11 (no -X perf before 3.12) and 3.12 with -X perf
if [ -x "$PY/3.11.7/bin/python3.11" ]; then
	measure python3.11 python "" "$PY/3.11.7/bin/python3.11" "$W/work.py"
else
	skip_prog python3.11 "no pyenv CPython 3.11.7 ($PY)"
fi
if [ -x "$PY/3.12.1/bin/python3.12" ]; then
	measure python3.12-perf python "" "$PY/3.12.1/bin/python3.12" -X perf "$W/work.py"
else
	skip_prog python3.12-perf "no pyenv CPython 3.12.1 ($PY)"
fi

# Node without and with perf maps
measure node node "" node "$W/work.js"
measure node-perfmap node "" node --perf-basic-prof "$W/work.js"

# Java 17 with frame pointers; the JIT's names from the perf map the JVM
# writes at exit
if javac -d "$W" "$W/Work.java" > "$W/javac.log" 2>&1; then
	measure java-pfp java "" java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions \
		-XX:+DumpPerfMapAtExit -cp "$W" Work 400
else
	skip_prog java-pfp "javac failed: $(head -1 "$W/javac.log")"
fi

# SQLite: a recursive CTE sorted and aggregated
measure sqlite3 c "" sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 800000) SELECT count(*), sum(length(printf('%08d', x * 7919 % 10007))) FROM (SELECT x FROM c ORDER BY x * 7919 % 10007);"

# xz: 1.5 MB of a compiler binary
head -c 1500000 "$GO_COMPILE" > "$W/xz.in" 2>/dev/null || head -c 1500000 "$(command -v gcc)" > "$W/xz.in"
measure xz c "" xz -T1 -6 -c "$W/xz.in"

echo "  figures (sfprof at its defaults; perf --call-graph dwarf,65528 -F 999):"
echo "  | program | sfprof samples | sfprof root | sfprof named | names checked | wrong | perf samples | perf root | perf named | sfprof lost | perf lost |"
echo "  | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
sed 's/^/  /' "$FIGS" 2>/dev/null
