#!/bin/sh
# Four "containers" (mount and pid namespaces, each with its own tmpfs at
# one path) run four builds as the same file name at once under one
# `sfprof agent`: alpha, beta (another layout: functions 4 KiB-aligned),
# gamma (stripped; its debug file exists only inside its namespace's
# /usr/lib/debug/.build-id) and delta (functions 256-aligned: ld's build-id
# hashes the loaded bytes, which would not differ from alpha's; its file
# deleted once it runs).
#  - the pull, /debug/pprof/profile?seconds=N&pid=P for each container:
#    >= 99 % of its samples reach main through its own build's functions
#    and no other's; its program's mapping carries its own build-id
#    (readelf -n of that build), and no other;
#  - the --output-dir files (one profile for the service "prog", the four
#    merged): every stack through the program is one build's own, >= 99 %
#    reach main, and the program's mappings carry exactly the four
#    build-ids.
# Needs root, unshare(1) that can make the namespaces, gcc, readelf,
# objcopy, curl, protoc with the pprof schema.
# checks: 4
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/containers-subr.sh"
. "$(dirname "$0")/agent-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
NCHECKS=4
V="alpha beta gamma delta"

skip_all() {
	for i in $(seq $NCHECKS); do skip "agent, containers at one path $i" "$1"; done
	exit 0
}
fail_all() {
	for i in $(seq $NCHECKS); do fail "agent, containers at one path: $1"; done
	exit 0
}
ct_usable || skip_all "$CT_WHY"
for t in gcc readelf objcopy strip curl protoc python3; do
	command -v $t > /dev/null || skip_all "$t missing (make deps)"
done
[ -f "$PROTO/pprof/profile.proto" ] || skip_all "$PROTO/pprof/profile.proto missing"
SRC=$SFP_TEST_DATA/containers/ns-work.c
NS=$TMP/ns		# the path every container has its own tmpfs at
mkdir -p "$NS"
EXTRA_CLEANUP=ct_kill

if ! ct_build alpha || ! ct_build beta -falign-functions=4096 ||
   ! ct_build gamma -g || ! ct_build delta -falign-functions=256; then
	fail_all "build the test programs ($(head -1 "$TMP/cc.err"))"
fi
objcopy --only-keep-debug "$TMP/gamma" "$TMP/gamma.debug" && strip "$TMP/gamma" ||
	fail_all "objcopy/strip gamma"
for v in $V; do
	eval "BID_$v=$(ct_bid "$TMP/$v")"
done
if [ -z "$BID_alpha" ] || [ -z "$BID_delta" ] || [ -z "$BID_gamma" ] ||
   [ "$(for v in $V; do eval "echo \$BID_$v"; done | sort -u | wc -l)" != 4 ]; then
	fail_all "four builds with four build-ids"
fi
G=$BID_gamma
GD=/usr/lib/debug/.build-id/$(echo "$G" | cut -c1-2)
GF=$(echo "$G" | cut -c3-).debug
[ -e "$GD/$GF" ] && fail_all "gamma's debug file is on the host ($GD/$GF)"

# start NAME [SETUP]: the build as $NS/prog, pid 1 of new namespaces;
# sets PID_NAME to its pid out here.
start() {
	ct_start "$1" "$TMP/$1" prog "$2"
}
start alpha
start beta
start gamma "mount -t tmpfs tmpfs /usr/lib/debug && mkdir -p '$GD' && cp '$TMP/gamma.debug' '$GD/$GF'"
start delta
for v in $V; do
	eval "[ -n \"\$PID_$v\" ]" || fail_all "the programs did not start ($(cat "$TMP"/*.out | head -2))"
done
# delta's file deleted while it runs (from out here, through its root)
rm -f "/proc/$PID_delta/root$NS/prog"
grep -q "$NS/prog (deleted)" "/proc/$PID_delta/maps" ||
	fail_all "delta's file could not be deleted under it"

agent_start -F 199 --interval 4 --comm '^prog$' --output-dir "$TMP/out"
[ -n "$APORT" ] || fail_all "the agent did not start ($(tail -1 "$TMP/agent.err"))"
URL=http://127.0.0.1:$APORT
# The pulls, and the windows judged, once the four programs' tables are
# built (agent-subr.sh): the windows written by then, and the one open
# then, are left out.
tables_ready || echo "  the agent's tables still pending after 60 s"
WIN0=$(($(metric sfprof_agent_windows_total) + 1))
# one pull per container, at once
for v in $V; do
	eval "p=\$PID_$v"
	curl -sf -m 60 -o "$TMP/$v.pb.gz" "$URL/debug/pprof/profile?seconds=8&pid=$p" &
	eval "CURL_$v=$!"
done
for v in $V; do
	eval "wait \$CURL_$v" || echo "  curl for $v: exit $?"
done
# and at least one complete window in the files
wait_metric sfprof_agent_windows_total $((WIN0 + 1)) "" 30 || true
kill -TERM "$AGENT_PID"
agent_end 20 || echo "  agent: exit $rc"

decode() {	# FILE.pb.gz -> FILE.txt, or 1
	gunzip -c "$1" > "${1%.gz}" 2>/dev/null &&
	protoc --proto_path="$PROTO/pprof" --decode perftools.profiles.Profile \
		"$PROTO/pprof/profile.proto" < "${1%.gz}" > "${1%.pb.gz}.txt" 2> "$TMP/protoc.err"
}

# check STACKS WANT-BUILDS: stacks ("samples/count<TAB>root;..;leaf<TAB>N")
# through the program: each one build's own (PFX_outer;PFX_middle;PFX_leaf
# below main, no other build's names, no bare address in between);
# prints "total reach-main-own bad"
judge() {
	awk -F'\t' -v want="$2" '
	$1 != "samples/count" { next }
	{
		n = split($2, f, ";"); pfx = ""; bad = 0; m = 0
		for (i = 1; i <= n; i++) {
			if (f[i] == "main") m = 1
			if (f[i] ~ /^(alpha|beta|gamma|delta)_/) {
				p = f[i]; sub(/_.*/, "", p)
				if (pfx == "") pfx = p
				else if (p != pfx) bad = 1
			}
		}
		if (pfx == "") next	# not in the program (its start, the kernel)
		if (want !~ pfx) bad = 1
		tot += $3
		if (bad) nbad += $3
		else if (m && $2 ~ (pfx "_outer;" pfx "_middle;" pfx "_leaf")) ok += $3
	}
	END { print tot + 0, ok + 0, nbad + 0 }' "$1"
}

# The pulls
ok=1 why=
for v in $V; do
	if ! decode "$TMP/$v.pb.gz"; then
		ok=0 why="$why $v: not a pprof ($(head -1 "$TMP/protoc.err"))"
		continue
	fi
	python3 "$HERE/push-check.py" stacks-pprof "$TMP/$v.txt" > "$TMP/$v.stacks"
	set -- $(judge "$TMP/$v.stacks" "$v")
	why="$why $v: $1 samples, $2 own and whole, $3 wrong;"
	[ "$1" -ge 20 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] && [ "$3" = 0 ] || ok=0
done
if [ $ok = 1 ]; then
	pass "agent, containers at one path: each container's pull: >= 99 % of samples whole and named by its own build ($why)"
else
	fail "agent, containers at one path: each container's pull whole and named by its own build"
	echo "  $why"
fi
ok=1 why=
for v in $V; do
	[ -f "$TMP/$v.txt" ] || { ok=0; continue; }
	python3 "$HERE/push-check.py" buildids-pprof "$TMP/$v.txt" |
		grep "/ns/prog" | sort -u > "$TMP/$v.ids"
	eval "echo \"\$BID_$v\"" > "$TMP/$v.want"
	if ! awk '{ print $NF }' "$TMP/$v.ids" | cmp -s - "$TMP/$v.want"; then
		ok=0 why="$why $v: $(tr '\n' ' ' < "$TMP/$v.ids") want $(cat "$TMP/$v.want");"
	fi
done
if [ $ok = 1 ]; then
	pass "agent, containers at one path: each container's pull: the program's mapping carries that build's own build-id (readelf -n)"
else
	fail "agent, containers at one path: each container's pull carries its own build-id"
	echo "  $why"
fi

# The files: every window of the service "prog"
: > "$TMP/files.stacks"
: > "$TMP/files.ids"
nf=0
k=0
for f in "$TMP"/out/*prog*.pb.gz; do	# (their names sort by time)
	[ -f "$f" ] || continue
	k=$((k + 1))
	[ $k -gt "$WIN0" ] || continue	# written before the tables were there
	cp "$f" "$TMP/w$nf.pb.gz"
	if decode "$TMP/w$nf.pb.gz"; then
		python3 "$HERE/push-check.py" stacks-pprof "$TMP/w$nf.txt" >> "$TMP/files.stacks"
		python3 "$HERE/push-check.py" buildids-pprof "$TMP/w$nf.txt" |
			grep "/ns/prog" >> "$TMP/files.ids"
	else
		echo "  $f: not a pprof ($(head -1 "$TMP/protoc.err"))"
	fi
	nf=$((nf + 1))
done
seen_all() {
	for _v in $V; do grep -q "${_v}_leaf" "$1" || return 1; done
}
set -- $(judge "$TMP/files.stacks" "alpha beta gamma delta")
if [ $nf -ge 1 ] && [ "$1" -ge 80 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] && [ "$3" = 0 ] &&
   seen_all "$TMP/files.stacks"; then
	pass "agent, containers at one path: --output-dir ($nf files): $1 samples, $2 whole and named by one build's own functions, each build seen"
else
	fail "agent, containers at one path: --output-dir stacks whole and named by their own builds"
	echo "  $nf files; $1 samples, $2 whole and own, $3 wrong"
	grep -E "alpha|beta|gamma|delta" "$TMP/files.stacks" | sort -t'	' -k3 -n -r | head -6 | sed 's/^/  /'
fi
awk '{ print $NF }' "$TMP/files.ids" | sort -u > "$TMP/files.got"
for v in $V; do eval "echo \"\$BID_$v\""; done | sort > "$TMP/files.want"
if [ $nf -ge 1 ] && cmp -s "$TMP/files.got" "$TMP/files.want"; then
	pass "agent, containers at one path: --output-dir: the program's mappings carry exactly the four builds' build-ids"
else
	fail "agent, containers at one path: --output-dir mappings carry the four builds' own build-ids"
	diff "$TMP/files.want" "$TMP/files.got" | head -8 | sed 's/^/  /'
fi
exit 0
