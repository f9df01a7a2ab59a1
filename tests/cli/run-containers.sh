#!/bin/sh
# Processes in their own mount and pid namespaces (a container) running a
# program without frame pointers from a tmpfs only the namespace sees,
# and a build-id cache that keeps them readable afterwards:
#  - sfprof unwind -p, record -p and record -a: >= 99 % of the program's
#    stacks reach main, with its names;
#  - the binary replaced on disk while it runs (rename, as upgrades do)
#    by one whose functions have other names: still unwound and named
#    from the mapped file (map_files + build-id), never the new one's;
#  - once the namespace is gone: sfprof report (cache), perf report
#    against the same cache, and sfprof archive unpacked elsewhere with
#    report --symfs / --buildid-dir name the frames;
#  - --no-buildid-cache and --buildid-cache-size.
# Needs root, unshare(1) that can make the namespaces, gcc; perf for the
# perf report check.
# checks: 22
. "$(dirname "$0")/test-subr.sh"

if [ "$(id -u)" != 0 ]; then
	skip_rest "containers" "needs root"
fi
if ! unshare --mount --pid --fork true 2>/dev/null; then
	skip_rest "containers" "unshare --mount --pid --fork does not work here"
fi
SRC=$SFP_TEST_DATA/containers/ns-work.c
for v in alpha beta; do
	if ! gcc -O2 -fomit-frame-pointer -fno-inline -DPFX=$v -o "$TMP/$v" \
		"$SRC" 2>"$TMP/cc.err"; then
		fail "containers: build test program ($(head -1 "$TMP/cc.err"))"
		exit 0
	fi
done

NS=$TMP/nsroot		# empty here; a tmpfs inside the namespace
BID=$TMP/bid		# the build-id cache of the recordings
mkdir -p "$NS"
UPID=
cleanup() {
	[ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null
	[ -n "$PPID_NS" ] && kill -9 "$PPID_NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# Start alpha as pid 1 of new namespaces; PPID_NS = its pid out here.
unshare --mount --pid --fork sh -c \
	"mount -t tmpfs tmpfs '$NS' && cp '$TMP/alpha' '$NS/prog' && exec '$NS/prog'" \
	> "$TMP/ns.out" 2>&1 &
UPID=$!
i=0
while ! grep -q ready "$TMP/ns.out" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
PPID_NS=$(tr -d ' \n' < /proc/$UPID/task/$UPID/children 2>/dev/null)
if [ -z "$PPID_NS" ] || ! grep -q ready "$TMP/ns.out"; then
	fail "containers: program did not start in its namespaces"
	sed 's/^/  /' "$TMP/ns.out" | head -5
	exit 0
fi
if [ -e "$NS/prog" ]; then
	fail "containers: the namespace's tmpfs is visible outside"
fi
# (The program is pid 1 in there, another pid here.)
grep -q "^NSpid:.*[[:space:]]1$" /proc/$PPID_NS/status ||
	fail "containers: program is not in its own pid namespace"

# sfprof script output -> "samples main named wrong" for comm prog:
# main = stacks reaching main, named = with a NAME_leaf frame, wrong =
# frames named by the other build.
count() {
	awk -v good="$1" -v bad="$2" '
	/^[^ \t]/ { if (inprog) flush(); inprog = ($1 == "prog"); m = g = b = 0; next }
	/^$/ { if (inprog) flush(); inprog = 0; next }
	inprog {
		if ($2 == "main" || $2 ~ /^main\+/) m = 1
		if ($2 ~ "^" good "_leaf") g = 1
		if ($2 ~ "^" bad "_") b = 1
	}
	function flush() { n++; nm += m; ng += g; nb += b; m = g = b = 0 }
	END { if (inprog) flush(); printf "%d %d %d %d\n", n, nm, ng, nb }'
}

# check_stacks NAME FILE GOOD BAD [script options]: >= 99 % reach main,
# >= 90 % have the leaf named (the rest: samples in main's loop itself),
# none has the other build's names.
check_stacks() {
	name=$1 file=$2 good=$3 bad=$4
	shift 4
	if ! sfp script -i "$file" "$@" > "$TMP/script.out" 2>"$TMP/script.err"; then
		fail "$name (sfprof script failed)"
		sed 's/^/  /' "$TMP/script.err" | head -5
		return
	fi
	set -- $(count "$good" "$bad" < "$TMP/script.out")
	if [ "$1" -gt 0 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] &&
	   [ $(($3 * 100)) -ge $(($1 * 90)) ] && [ "$4" -eq 0 ]; then
		pass "$name"
	else
		fail "$name"
		echo "  $1 samples of prog, $2 reach main, $3 named ${good}_leaf, $4 with ${bad}_ names"
		grep -A8 '^prog ' "$TMP/script.out" | head -10 | sed 's/^/  /'
	fi
}

# check_unwind NAME GOOD BAD: sfprof unwind -p of the program.
check_unwind() {
	if sfp unwind -p "$PPID_NS" > "$TMP/unwind.out" 2>&1 &&
	   grep -q " main+" "$TMP/unwind.out" &&
	   grep -q " $2_outer+" "$TMP/unwind.out" &&
	   ! grep -q " $3_" "$TMP/unwind.out"; then
		pass "$1"
	else
		fail "$1"
		sed 's/^/  /' "$TMP/unwind.out" | head -12
	fi
}

check_unwind "containers: unwind -p in another mount+pid namespace" alpha beta
check_rc "containers: record -p" 0 "$SFPROF" record -q -p "$PPID_NS" \
	--duration 1 -o "$TMP/p.data" --buildid-dir "$BID"
check_stacks "containers: record -p stacks reach main, named" "$TMP/p.data" \
	alpha beta --buildid-dir "$BID"
check_rc "containers: record -a" 0 "$SFPROF" record -q -a --duration 1 \
	-o "$TMP/a.data" --buildid-dir "$BID"
check_stacks "containers: record -a stacks reach main, named" "$TMP/a.data" \
	alpha beta --buildid-dir "$BID"

# Upgrade while running: beta renamed over the path inside the namespace.
if nsenter -t "$PPID_NS" -m sh -c \
	"cp '$TMP/beta' '$NS/prog.new' && mv '$NS/prog.new' '$NS/prog'"; then
	check_unwind "containers: unwind -p of a replaced binary" alpha beta
	check_rc "containers: record -p of a replaced binary" 0 "$SFPROF" \
		record -q -p "$PPID_NS" --duration 1 -o "$TMP/r.data" \
		--buildid-dir "$BID"
	check_stacks "containers: replaced binary unwound and named from the mapped file" \
		"$TMP/r.data" alpha beta --buildid-dir "$BID"
	check_rc "containers: record -a of a replaced binary" 0 "$SFPROF" \
		record -q -a --duration 1 -o "$TMP/ra.data" --buildid-dir "$BID"
	check_stacks "containers: record -a of a replaced binary, named from the mapped file" \
		"$TMP/ra.data" alpha beta --buildid-dir "$BID"
	# perf 6.1 reads the inline form only
	check_rc "containers: record --inline -p of a replaced binary" 0 \
		"$SFPROF" record -q --inline -p "$PPID_NS" --duration 1 \
		-o "$TMP/ri.data" --buildid-dir "$BID"
else
	fail "containers: replace the binary inside the namespace (nsenter)"
fi

# The namespace goes, and its tmpfs with it.
kill -9 "$PPID_NS"
wait "$UPID" 2>/dev/null
UPID= PPID_NS=

report_names() {
	name=$1
	shift
	if sfp report --stdio "$@" > "$TMP/report.out" 2>"$TMP/report.err" &&
	   grep -q "alpha_leaf" "$TMP/report.out" &&
	   grep -q "alpha_outer" "$TMP/report.out" &&
	   ! grep -q "beta_" "$TMP/report.out"; then
		pass "$name"
	else
		fail "$name"
		sed 's/^/  /' "$TMP/report.out" "$TMP/report.err" | grep -v '^  #' | head -10
	fi
}
report_names "containers: report names frames after the namespace is gone" \
	-i "$TMP/p.data" --buildid-dir "$BID"
check_stacks "containers: replaced binary still named after the namespace is gone" \
	"$TMP/r.data" alpha beta --buildid-dir "$BID"

# perf report reads our cache (perf's layout) for the deleted binary.
if ! command -v perf > /dev/null 2>&1; then
	skip "containers: perf report reads the build-id cache" "perf not installed"
elif [ -f "$TMP/ri.data" ]; then
	perf --buildid-dir "$BID" report -i "$TMP/ri.data" --stdio --sort sym \
		--no-children > "$TMP/perf.out" 2>"$TMP/perf.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "\[\.\] alpha_leaf" "$TMP/perf.out" &&
	   ! grep -q "beta_" "$TMP/perf.out"; then
		pass "containers: perf report reads the build-id cache"
	else
		fail "containers: perf report reads the build-id cache (exit $rc)"
		grep -v '^#' "$TMP/perf.out" "$TMP/perf.err" | head -10 | sed 's/^/  /'
	fi
fi

# sfprof archive, unpacked elsewhere, the cache itself moved away.
check_rc "containers: archive" 0 "$SFPROF" archive -i "$TMP/p.data" \
	-o "$TMP/p.tar.bz2" --buildid-dir "$BID"
mkdir -p "$TMP/unpacked"
if tar xf "$TMP/p.tar.bz2" -C "$TMP/unpacked"; then
	mv "$BID" "$BID.away"
	report_names "containers: report --symfs on an unpacked archive" \
		-i "$TMP/p.data" --symfs "$TMP/unpacked"
	report_names "containers: report --buildid-dir on an unpacked archive" \
		-i "$TMP/p.data" --buildid-dir "$TMP/unpacked"
	mv "$BID.away" "$BID"
else
	fail "containers: unpack the archive with tar"
fi
check_rc "containers: archive of a file whose DSOs are not cached" 1 \
	"$SFPROF" archive -i "$TMP/p.data" -o "$TMP/none.tar.bz2" \
	--buildid-dir "$TMP/empty-cache"

# The layout is perf's: the same binary put in by perf buildid-cache -a
# gives the same link and the same bytes.
SPIN=$SFP_BUILD/tests/progs/record-spin
if ! command -v perf > /dev/null 2>&1; then
	skip "containers: build-id cache layout equals perf buildid-cache's" "perf not installed"
elif sfp record -q --buildid-dir "$TMP/spin" -o "$TMP/spin.data" \
	-- "$SPIN" flat 300 > /dev/null 2>&1 &&
     perf --buildid-dir "$TMP/perfc" buildid-cache -a "$SPIN" > /dev/null 2>&1; then
	id=$(perf buildid-list -i "$TMP/spin.data" 2>/dev/null |
	     awk -v p="$SPIN" '$2 == p { print $1 }')
	l=.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)
	if [ -n "$id" ] && [ -L "$TMP/spin/$l" ] &&
	   [ "$(readlink "$TMP/spin/$l")" = "$(readlink "$TMP/perfc/$l")" ] &&
	   cmp -s "$TMP/spin/$l/elf" "$TMP/perfc/$l/elf"; then
		pass "containers: build-id cache layout equals perf buildid-cache's"
	else
		fail "containers: build-id cache layout equals perf buildid-cache's"
		echo "  build-id '$id' of $SPIN in the file; links:"
		ls -l "$TMP/spin/$l" "$TMP/perfc/$l" 2>&1 | sed 's/^/  /'
	fi
else
	fail "containers: build-id cache layout equals perf buildid-cache's (record or perf buildid-cache failed)"
fi

# Options: no cache at all; a budget too small for anything.
check_rc "containers: record --no-buildid-cache" 0 "$SFPROF" record -q \
	--no-buildid-cache --buildid-dir "$TMP/nocache" -o "$TMP/n.data" \
	-- "$SFP_BUILD/tests/progs/record-spin" flat 100 2>/dev/null
if [ -e "$TMP/nocache" ]; then
	fail "containers: --no-buildid-cache left no cache"
else
	pass "containers: --no-buildid-cache left no cache"
fi
sfp record --buildid-cache-size 1K --buildid-dir "$TMP/small" \
	-o "$TMP/s.data" -- "$SFP_BUILD/tests/progs/record-spin" flat 100 \
	> /dev/null 2> "$TMP/small.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "over the size budget" "$TMP/small.err" &&
   [ -z "$(find "$TMP/small" -name elf 2>/dev/null)" ]; then
	pass "containers: --buildid-cache-size keeps the cache within budget"
else
	fail "containers: --buildid-cache-size keeps the cache within budget (exit $rc)"
	sed 's/^/  /' "$TMP/small.err" | tail -4
fi
