#!/bin/sh
# One image in many containers costs the agent one unwind table and one
# symbol table per file, however many containers run it (issue 35: a file
# is its build-id).  The image: a build of tests/data/containers/ns-work.c
# (its own build-id) with the libraries it loads, copied; a container: new
# mount and pid namespaces, the image copied into a tmpfs at one path,
# the program chroot'ed into it (every container maps its own inodes, at
# the same paths, with the image's build-ids).  One agent (-v, a fresh
# cache directory) with 1 container, another with 4, started after the
# agent samples (their maps come from the kernel's MMAP2 records):
#  - each run: every container's pull (2 s) names its program's leaf,
#    >= 20 samples per container kept;
#  - the program's unwind table loaded exactly once in each run (its
#    build-id is the image's alone), and no file the containers map
#    loaded more than once through a container (libc's build-id is the
#    host's too: a load through a host process may come first);
#  - symbol tables: none loaded twice for one build-id, the program's
#    exactly once, and sfprof_agent_symbol_tables_loaded_total equal to
#    the number of files loaded in each run (it does not grow with the
#    containers);
#  - a program the filter leaves out, run 40 times for 30 ms each while
#    the containers run (each gone long before the agent reads most of
#    its samples), never gets an unwind table: --comm judges a process
#    that is gone by the name its records gave (a build's compilers on a
#    busy host cost nothing).
# Counts, not times: exact on a loaded machine.  Needs root, unshare(1)
# that can make the namespaces, gcc, readelf, ldd, chroot, curl.
# checks: 4
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/agent-subr.sh"
NCHECKS=4
K=4
# comm: unique, so that no other test's containers pass the filter
PROG=sfpimg35work

skip_all() {
	for i in $(seq $NCHECKS); do skip "agent, one image in containers $i" "$1"; done
	exit 0
}
fail_all() {
	for i in $(seq $NCHECKS); do fail "agent, one image in containers: $1"; done
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "needs root"
unshare --mount --pid --fork true 2>/dev/null ||
	skip_all "unshare --mount --pid --fork does not work here"
for t in gcc readelf ldd chroot curl; do
	command -v $t > /dev/null || skip_all "$t missing (make deps)"
done
IMG=$TMP/img
ROOT=$TMP/root		# the path every container has its own tmpfs at
mkdir -p "$IMG" "$ROOT"
PIDS=
ns_cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
}
EXTRA_CLEANUP=ns_cleanup

gcc -O2 -fomit-frame-pointer -fno-inline -DPFX=img -DIDLE_US=20000 \
	-o "$IMG/$PROG" "$SFP_TEST_DATA/containers/ns-work.c" 2> "$TMP/cc.err" ||
	fail_all "build the program ($(head -1 "$TMP/cc.err"))"
for l in $(ldd "$IMG/$PROG" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
	mkdir -p "$IMG$(dirname "$l")" && cp -L "$l" "$IMG$l" ||
		fail_all "copy $l into the image"
done
# the program the filter leaves out: 30 ms of CPU, then exit
cat > "$TMP/noise.c" << 'EOF'
#include <time.h>
int main(void)
{
	struct timespec a, b;
	volatile unsigned long n = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			n++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec <
		 30000000L);
	return 0;
}
EOF
gcc -O2 -o "$TMP/sfpimg35noise" "$TMP/noise.c" 2> "$TMP/cc.err" ||
	fail_all "build the noise program ($(head -1 "$TMP/cc.err"))"
bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
BID_NOISE=$(bid "$TMP/sfpimg35noise")
BID_PROG=$(bid "$IMG/$PROG")
[ -n "$BID_PROG" ] || fail_all "the program has no build-id (readelf -n)"
# the image's files' build-ids (readelf -n), one a line
for f in $(find "$IMG" -type f); do bid "$f"; done | sort -u > "$TMP/image.ids"

# start: one container, its pid (the program's) appended to $TMP/pids
start() {
	unshare --mount --pid --fork --kill-child sh -c \
		"mount -t tmpfs tmpfs '$ROOT' && cp -a '$IMG/.' '$ROOT/' && exec chroot '$ROOT' '/$PROG'" \
		> "$TMP/c.out" 2>&1 &
	_u=$!
	PIDS="$PIDS $_u"
	_i=0 _p=
	while [ -z "$_p" ] && [ $_i -lt 300 ]; do
		sleep 0.05
		_p=$(tr -d ' \n' < /proc/$_u/task/$_u/children 2>/dev/null)
		_i=$((_i + 1))
	done
	echo "$_p" >> "$TMP/pids"
}

# run N: the agent with N containers; leaves $TMP/run.N.{err,metrics,pids}
run() {
	: > "$TMP/pids"
	SFPROF_CACHE_DIR=$TMP/cache.$1 agent_start -v --call-graph sframe \
		-F 499 --interval 2 --comm "^$PROG\$" --output-dir "$TMP/out.$1"
	[ -n "$APORT" ] || fail_all "the agent did not start ($(tail -1 "$TMP/agent.err"))"
	_n=0		# (start uses _i)
	while [ $_n -lt "$1" ]; do
		start
		_n=$((_n + 1))
	done
	if [ "$1" = "$K" ]; then
		for _n in $(seq 40); do "$TMP/sfpimg35noise"; done
	fi
	# enough samples of every container, and two windows symbolized
	wait_metric sfprof_agent_samples_kept_total $((60 * $1)) "" 90 || true
	_w=$(metric sfprof_agent_windows_total)
	wait_metric sfprof_agent_windows_total $((${_w:-0} + 2)) "" 30 || true
	curl -s "http://127.0.0.1:$APORT/metrics" > "$TMP/run.$1.metrics"
	# per container: its samples in a pull of 2 s
	for p in $(cat "$TMP/pids"); do
		curl -sf -m 30 -o "$TMP/pull.$p.gz" \
			"http://127.0.0.1:$APORT/debug/pprof/profile?seconds=2&pid=$p" &
	done
	wait_metric sfprof_agent_pulls_total "$1" "" 40 || true
	sleep 0.5
	kill -INT "$AGENT_PID"
	agent_end 20 || echo "  agent ($1 containers): exit $rc"
	cp "$TMP/agent.err" "$TMP/run.$1.err"
	cp "$TMP/pids" "$TMP/run.$1.pids"
	ns_cleanup
	wait 2>/dev/null
	PIDS=
}
run 1
run $K

mval() { awk -v n="$2" '$1 == n { print $2; exit }' "$TMP/run.$1.metrics"; }
# loads KIND N: "count build-id" of the unwinder's (module) or the
# symbolizer's (symbols) table loads in run N
loads() {
	sed -n "s/.*debug: $1 .* (build-id \([0-9a-f]*\)) loaded from \(.*\)/\1 \2/p" "$TMP/run.$2.err"
}

# 1. every container sampled (a pull per container: its samples kept)
ok=1 why=
for n in 1 $K; do
	np=0
	for p in $(cat "$TMP/run.$n.pids"); do
		np=$((np + 1))
		gunzip -c "$TMP/pull.$p.gz" 2>/dev/null | grep -aq img_leaf ||
			{ ok=0; why="$why container $p's pull names no img_leaf ($n containers);"; }
	done
	k=$(mval $n sfprof_agent_samples_kept_total)
	why="$why $n containers: ${k:-?} samples kept;"
	[ "$np" = "$n" ] && [ "${k:-0}" -ge $((20 * n)) ] || ok=0
done
if [ $ok = 1 ]; then
	pass "agent, one image in containers: every container sampled and pulled ($why)"
else
	fail "agent, one image in containers: every container sampled and pulled"
	echo "  $why"
fi

# 2. unwind tables: the program's once per run; none of the image's files
#    more than once through the containers
ok=1 why=
for n in 1 $K; do
	loads module $n > "$TMP/u.$n"
	np=$(awk -v b="$BID_PROG" '$1 == b' "$TMP/u.$n" | wc -l)
	pidre=$(tr '\n' '|' < "$TMP/run.$n.pids" | sed 's/|$//')
	dup=$(awk -v re="^/proc/($pidre)/" 'FNR == NR { img[$1] = 1; next }
		($1 in img) && $2 ~ re { c[$1]++ }
		END { for (b in c) if (c[b] > 1) printf "%s x%d ", b, c[b] }' \
		"$TMP/image.ids" "$TMP/u.$n")
	why="$why $n containers: the program's table loaded $np time(s)${dup:+, more than once: $dup}, tables built $(mval $n sfprof_agent_unwind_tables_built_total) in all;"
	[ "$np" = 1 ] && [ -z "$dup" ] || ok=0
done
if [ $ok = 1 ]; then
	pass "agent, one image in containers: one unwind table per file, for 1 and for $K containers ($why)"
else
	fail "agent, one image in containers: one unwind table per file, for 1 and for $K containers"
	echo "  $why"
	grep "debug: module .*$BID_PROG" "$TMP/run.$K.err" | head -6 | sed 's/^/  /'
fi

# 3. symbol tables: one per build-id, the program's once, and the counter
#    as many as the files
ok=1 why=
for n in 1 $K; do
	loads symbols $n > "$TMP/s.$n"
	np=$(awk -v b="$BID_PROG" '$1 == b' "$TMP/s.$n" | wc -l)
	nl=$(wc -l < "$TMP/s.$n")
	nu=$(awk '{ print $1 }' "$TMP/s.$n" | sort -u | wc -l)
	c=$(mval $n sfprof_agent_symbol_tables_loaded_total)
	why="$why $n containers: $c symbol tables ($nl loads of $nu files, the program's $np);"
	[ "$np" = 1 ] && [ "$nl" = "$nu" ] && [ "${c:-x}" = "$nl" ] || ok=0
done
if [ $ok = 1 ]; then
	pass "agent, one image in containers: one symbol table per file, for 1 and for $K containers ($why)"
else
	fail "agent, one image in containers: one symbol table per file, for 1 and for $K containers"
	echo "  $why"
	sort "$TMP/s.$K" | uniq -c | sort -rn | head -4 | sed 's/^/  /'
fi
# 4. the short-lived program the filter leaves out: no table, though it
#    took samples (the records counted as not unwound)
loads module $K > "$TMP/u.noise"
nn=$(awk -v b="$BID_NOISE" '$1 == b' "$TMP/u.noise" | wc -l)
nu=$(mval $K sfprof_agent_samples_not_unwound_total)
if [ "$nn" = 0 ] && [ "${nu:-0}" -gt 0 ]; then
	pass "agent, --comm: 40 short-lived processes of another program get no unwind table ($nu samples not unwound)"
else
	fail "agent, --comm: 40 short-lived processes of another program get no unwind table"
	echo "  its table loaded $nn time(s); samples not unwound: ${nu:-?}"
	grep "debug: module .*$BID_NOISE" "$TMP/run.$K.err" | head -3 | sed 's/^/  /'
fi
exit 0
