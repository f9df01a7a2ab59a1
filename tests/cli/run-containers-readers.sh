#!/bin/sh
# Three "containers" (mount and pid namespaces, each with its own tmpfs
# at one path) run three different builds as the same file name at once:
# alpha and beta (other layouts: beta's functions 4 KiB-aligned) and
# gamma, stripped, whose debug file exists only inside its namespace's
# /usr/lib/debug/.build-id.  One `sfprof record -a`, then the readers:
#  - sfprof script, while the containers run and after they are gone
#    (from the build-id cache alone): >= 99 % of each container's samples
#    reach main, every frame of the program named with its own build's
#    names, none with another's;
#  - sfprof flamegraph while they run with an empty build-id cache (each
#    file through its container's root, gamma's debug file only inside
#    its image) and after they are gone (the cache): all three builds'
#    functions named, none of the program's frames unnamed; export
#    folded after they are gone: each build's chain named to its leaf;
#  - sfprof archive packs gamma's debug file (found in its image, cached
#    by record) in perf's layout and says so; script with the unpacked
#    archive as the only source names all three as above;
#  - sfprof report --sort pid,dso: each file its own row, marked with the
#    short build-id readelf gives for that build (docs/report.md);
#    --dso with the plain name selects all three;
#  - sfprof export --format pprof: one mapping per file, each with its
#    own build-id (decoded by protoc with the upstream schema);
#  - perf's own recording of the same setup as a second opinion: sfprof
#    script and perf script name each sample's leaf alike.
# Needs root, unshare(1) that can make the namespaces, gcc, readelf,
# objcopy; protoc for the pprof check; perf for the second opinion.
# checks: 12
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/containers-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
NCHECKS=12

if ! ct_usable; then
	for i in $(seq $NCHECKS); do skip "containers at one path $i" "$CT_WHY"; done
	exit 0
fi
SRC=$SFP_TEST_DATA/containers/ns-work.c
NS=$TMP/ns		# the path every container has its own tmpfs at
BID=$TMP/bid		# the recording's build-id cache
mkdir -p "$NS"

if ! ct_build alpha || ! ct_build beta -falign-functions=4096 ||
   ! ct_build gamma -g; then
	for i in $(seq $NCHECKS); do fail "containers at one path: build the test programs ($(head -1 "$TMP/cc.err"))"; done
	exit 0
fi
objcopy --only-keep-debug "$TMP/gamma" "$TMP/gamma.debug" &&
	strip "$TMP/gamma" ||
	fail "containers at one path: objcopy/strip gamma"
for v in alpha beta gamma; do
	eval "BID_$v=$(ct_bid "$TMP/$v")"
done
G=$BID_gamma
GD=/usr/lib/debug/.build-id/$(echo "$G" | cut -c1-2)
GF=$(echo "$G" | cut -c3-).debug
if [ -z "$BID_alpha" ] || [ "$BID_alpha" = "$BID_beta" ] || [ -z "$G" ]; then
	for i in $(seq $NCHECKS); do fail "containers at one path: three builds with three build-ids ($BID_alpha $BID_beta $G)"; done
	exit 0
fi
if [ -e "$GD/$GF" ]; then
	fail "containers at one path: gamma's debug file is on the host ($GD/$GF)"
fi

# start NAME [SETUP]: the build as $NS/prog, pid 1 of new namespaces;
# sets PID_NAME to its pid out here.
start() {
	ct_start "$1" "$TMP/$1" prog "$2"
}
start alpha
start beta
start gamma "mount -t tmpfs tmpfs /usr/lib/debug && mkdir -p '$GD' && cp '$TMP/gamma.debug' '$GD/$GF'"
if [ -z "$PID_alpha" ] || [ -z "$PID_beta" ] || [ -z "$PID_gamma" ]; then
	for i in $(seq $NCHECKS); do fail "containers at one path: the three programs did not start"; done
	cat "$TMP"/*.out | head -5 | sed 's/^/  /'
	exit 0
fi

sfp record -a -F 499 --duration 2 --buildid-dir "$BID" -o "$TMP/rec.data" \
	> "$TMP/rec.log" 2>&1

# count FILE: per container "NAME samples main own other" from script
# output (one pid a container; the program is single-threaded)
count() {
	awk -v pa="$PID_alpha" -v pb="$PID_beta" -v pg="$PID_gamma" '
	BEGIN { name[pa] = "alpha"; name[pb] = "beta"; name[pg] = "gamma" }
	function flush() {
		if (cur == "") return
		n[cur]++
		if (m) nm[cur]++
		if (own && !bad) ok[cur]++
	}
	/^[^ \t]/ { flush(); cur = ($1 == "prog" && ($2 in name)) ? name[$2] : ""
		    m = own = bad = 0; next }
	/^$/ { flush(); cur = ""; next }
	cur != "" && /\(.*\/ns\/prog\)$/ {
		if ($2 ~ /^main\+/) m = 1
		else if ($2 ~ "^" cur "_") own = 1
		else if ($2 ~ /^(alpha|beta|gamma)_/ || $2 ~ /^\[unknown\]/ ||
			 $2 ~ /^0x/) bad = 1
	}
	END { flush(); for (c in n) print c, n[c], nm[c] + 0, ok[c] + 0 }' "$1" | sort
}
# complete FILE: every container's samples >= 99 % reach main and are
# named by their own build only
complete() {
	count "$1" > "$1.count"
	[ "$(wc -l < "$1.count")" = 3 ] &&
	awk '$2 < 20 || $3 * 100 < $2 * 99 || $4 * 100 < $2 * 99 { bad = 1 }
	     END { exit bad }' "$1.count"
}

# While the containers run.
sfp script -i "$TMP/rec.data" --buildid-dir "$BID" > "$TMP/live.txt" 2>"$TMP/live.err"
if complete "$TMP/live.txt"; then
	pass "containers at one path: script while they run: each container's stacks reach main, named by its own build ($(tr '\n' ' ' < "$TMP/live.txt.count"))"
else
	fail "containers at one path: script while they run names each container's stacks by its own build"
	echo "  container samples reach-main own-names-only:"
	sed 's/^/    /' "$TMP/live.txt.count"
fi

# fg_named HTML: 0 when the flame graph names each container's three
# functions (NAME_leaf, _middle, _outer), each in $NS/prog, and none of
# its frames in $NS/prog is unnamed ([unknown], an address); FG_WHY says
# what was missing.  The page's data object: "names" and, per name, its
# DSO (an index into "dsos", in "fdso"), "$NS/prog [SHORT-BUILD-ID]"
# where files share the path (docs/report.md).
fg_named() {
	python3 - "$1" "$NS/prog" > "$1.names" 2> "$1.err" <<-'EOF'
	import json, sys
	t = open(sys.argv[1]).read()
	d, _ = json.JSONDecoder().raw_decode(t[t.index('{"v":'):])
	for n, i in zip(d["names"], d["fdso"]):
	    if d["dsos"][i].split(" [")[0] == sys.argv[2]:
	        print(n)
	EOF
	FG_WHY=
	for v in alpha beta gamma; do
		for f in leaf middle outer; do
			grep -qx "${v}_$f" "$1.names" || FG_WHY="$FG_WHY ${v}_$f missing;"
		done
	done
	_bad=$(grep -cE '^(\[unknown\]|0x)' "$1.names")
	[ "$_bad" = 0 ] || FG_WHY="$FG_WHY $_bad unnamed;"
	[ -s "$1.names" ] || FG_WHY="$FG_WHY no data ($(head -1 "$1.err"));"
	[ -z "$FG_WHY" ]
}

# flamegraph while they run, with an empty build-id cache: each file
# read through its container's root, gamma's names from the debug file
# found only inside its image (/proc/PID/root/usr/lib/debug/.build-id).
mkdir -p "$TMP/nobid"
sfp flamegraph -i "$TMP/rec.data" --buildid-dir "$TMP/nobid" \
	-o "$TMP/fg-live.html" > "$TMP/fg-live.log" 2>&1
if fg_named "$TMP/fg-live.html"; then
	pass "containers at one path: flamegraph while they run, empty cache: each build's functions named, the stripped one's from the debug file inside its image"
else
	fail "containers at one path: flamegraph while they run names each build's functions (the stripped one's from inside its image)"
	echo " $FG_WHY"
	grep -v lost "$TMP/fg-live.log" | head -3 | sed 's/^/  /'
fi

ct_kill
wait 2>/dev/null

# Gone: only the build-id cache has their files.
sfp script -i "$TMP/rec.data" --buildid-dir "$BID" > "$TMP/gone.txt" 2>"$TMP/gone.err"
if complete "$TMP/gone.txt"; then
	pass "containers at one path: script after they are gone (build-id cache): the same ($(tr '\n' ' ' < "$TMP/gone.txt.count"))"
else
	fail "containers at one path: script after they are gone names each container's stacks by its own build"
	sed 's/^/    /' "$TMP/gone.txt.count"
fi
if grep -q gamma_leaf "$TMP/gone.txt" && [ -f "$BID/.build-id/$(echo "$G" | cut -c1-2)/$(echo "$G" | cut -c3-)/debug" ]; then
	pass "containers at one path: the stripped build is named from the debug file found inside its namespace (cached beside it)"
else
	fail "containers at one path: the stripped build named from the debug file inside its namespace"
	ls -R "$BID/.build-id" 2>/dev/null | head -5 | sed 's/^/  /'
fi

sfp flamegraph -i "$TMP/rec.data" --buildid-dir "$BID" \
	-o "$TMP/fg-gone.html" > "$TMP/fg-gone.log" 2>&1
if fg_named "$TMP/fg-gone.html"; then
	pass "containers at one path: flamegraph after they are gone (build-id cache): each build's functions named, the stripped one's from its cached debug file"
else
	fail "containers at one path: flamegraph after they are gone names each build's functions"
	echo " $FG_WHY"
	grep -v lost "$TMP/fg-gone.log" | head -3 | sed 's/^/  /'
fi
# export folded: each container's chain named to its leaf (the comm,
# prog, is all three's: one chain each)
sfp export -i "$TMP/rec.data" --buildid-dir "$BID" --format folded \
	-o "$TMP/folded.txt" > "$TMP/folded.log" 2>&1
ok=1 why=
for v in alpha beta gamma; do
	n=$(grep -E "(^|;)main;${v}_outer;${v}_middle;${v}_leaf [0-9]+\$" "$TMP/folded.txt" |
		awk '{ s += $NF } END { print s + 0 }')
	why="$why $v $n;"
	[ "$n" -ge 20 ] || ok=0
done
if [ $ok = 1 ]; then
	pass "containers at one path: export folded after they are gone: each build's chain main;NAME_outer;NAME_middle;NAME_leaf named, the stripped one's too ($why)"
else
	fail "containers at one path: export folded names each build's chain, the stripped one's too ($why)"
	grep ';prog\|prog;' "$TMP/folded.txt" | sort -k2 -n -r | head -4 | sed 's/^/  /'
	grep -v lost "$TMP/folded.log" | head -2 | sed 's/^/  /'
fi

# archive: the cache entries with the debug file record found inside
# gamma's image (perf's layout: <path>/<build-id>/debug beside elf, reached
# through .build-id/xx/rest), said; unpacked alone, it names gamma.
sfp archive -i "$TMP/rec.data" --buildid-dir "$BID" -o "$TMP/a.tar.bz2" \
	> "$TMP/arch.log" 2>&1
tar tjf "$TMP/a.tar.bz2" > "$TMP/arch.list" 2>&1
GL=.build-id/$(echo "$G" | cut -c1-2)/$(echo "$G" | cut -c3-)
if grep -qx "$GL" "$TMP/arch.list" &&
   grep -q "/$G/debug\$" "$TMP/arch.list" && grep -q "/$G/elf\$" "$TMP/arch.list" &&
   grep -q "with their debug files" "$TMP/arch.log"; then
	pass "containers at one path: archive packs the stripped build's debug file (.../$G/debug, perf's layout) and says so"
else
	fail "containers at one path: archive packs the stripped build's debug file and says so"
	grep -E "$G|^sfprof" "$TMP/arch.list" "$TMP/arch.log" | head -6 | sed 's/^/  /'
fi
mkdir -p "$TMP/unpacked"
tar xjf "$TMP/a.tar.bz2" -C "$TMP/unpacked" 2> "$TMP/untar.err"
sfp script -i "$TMP/rec.data" --buildid-dir "$TMP/unpacked" > "$TMP/unp.txt" 2>"$TMP/unp.err"
if complete "$TMP/unp.txt"; then
	pass "containers at one path: script with the unpacked archive as the only source: the same, gamma named from the debug file it carries ($(tr '\n' ' ' < "$TMP/unp.txt.count"))"
else
	fail "containers at one path: script with the unpacked archive names each container's stacks by its own build"
	sed 's/^/    /' "$TMP/unp.txt.count"
	head -3 "$TMP/untar.err" | sed 's/^/  /'
fi

# report --sort pid,dso: its own row per file, with readelf's short ids.
sfp report -i "$TMP/rec.data" --buildid-dir "$BID" --sort pid,dso \
	--no-children -g none --comm prog > "$TMP/rep.txt" 2>&1
ok=1
for v in alpha beta gamma; do
	eval "p=\$PID_$v b=\$BID_$v"
	s=$(echo "$b" | cut -c1-8)
	grep -Eq "^ +[0-9.]+% +$p:prog +prog \[$s\]\$" "$TMP/rep.txt" || ok=0
done
rows=$(grep -c "prog \[" "$TMP/rep.txt")
if [ $ok = 1 ] && [ "$rows" = 3 ]; then
	pass "containers at one path: report --sort pid,dso: three rows 'prog [SHORT-BUILD-ID]', each with its build's id"
else
	fail "containers at one path: report --sort pid,dso shows each file with its short build-id"
	grep -v '^#' "$TMP/rep.txt" | head -8 | sed 's/^/  /'
fi
sfp report -i "$TMP/rec.data" --buildid-dir "$BID" --sort dso,sym \
	--no-children -g none --dso prog > "$TMP/repf.txt" 2>&1
ok=1
for v in alpha beta gamma; do
	eval "b=\$BID_$v"
	grep -Eq "prog \[$(echo "$b" | cut -c1-8)\] +\[\.\] ${v}_leaf" "$TMP/repf.txt" || ok=0
done
if [ $ok = 1 ] && ! grep -Eq '\[\.\] (0x|\[unknown\])' "$TMP/repf.txt"; then
	pass "containers at one path: report --dso prog selects all three files, each leaf named by its own build"
else
	fail "containers at one path: report --dso prog selects all three files"
	grep -v '^#' "$TMP/repf.txt" | head -8 | sed 's/^/  /'
fi

# pprof: one mapping per file, each with its own build-id.
if ! command -v protoc > /dev/null || [ ! -f "$PROTO/pprof/profile.proto" ]; then
	skip "containers at one path: pprof mappings" "protoc or $PROTO missing (make deps)"
else
	sfp export -i "$TMP/rec.data" --buildid-dir "$BID" --format pprof \
		-o "$TMP/p.pb.gz" > /dev/null 2>&1
	gunzip -c "$TMP/p.pb.gz" > "$TMP/p.pb"
	if protoc --proto_path="$PROTO/pprof" --decode perftools.profiles.Profile \
		"$PROTO/pprof/profile.proto" < "$TMP/p.pb" > "$TMP/p.txt" 2> "$TMP/p.err"; then
		python3 "$HERE/push-check.py" buildids-pprof "$TMP/p.txt" |
			grep "/ns/prog " | sort -u > "$TMP/p.ids"
		printf '%s\n' "$NS/prog $BID_alpha" "$NS/prog $BID_beta" "$NS/prog $G" |
			sort > "$TMP/p.want"
		if cmp -s "$TMP/p.ids" "$TMP/p.want"; then
			pass "containers at one path: pprof keeps one mapping per file, each with its own build-id"
		else
			fail "containers at one path: pprof keeps one mapping per file"
			diff "$TMP/p.want" "$TMP/p.ids" | head -6 | sed 's/^/  /'
		fi
	else
		fail "containers at one path: protoc decodes the pprof export ($(head -1 "$TMP/p.err"))"
	fi
fi

# perf's own recording of the setup: perf 6.1 keeps one build-id per
# path in its header, so one container's samples are named from the other
# build's file by perf script; sfprof, seeing two files (device, inode) at
# one path and no build-id to tell them apart, names neither wrongly and
# says so.
if ! command -v perf > /dev/null; then
	skip "containers at one path: perf's recording" "perf missing (make deps)"
	exit 0
fi
start alpha
start beta
HOME=$TMP perf record -q -a -F 499 -o "$TMP/perf.data" -- sleep 2 \
	> "$TMP/perf-rec.log" 2>&1
prc=$?
ct_kill
wait 2>/dev/null
# leaves PROGRAM-OUTPUT: "pid name" of the two containers' samples in
# the program file (perf script's one-line samples)
leaves() {
	awk -v pa="$PID_alpha" -v pb="$PID_beta" -v f="($NS/prog)" '
	($2 == pa || $2 == pb) && $NF == f { print $2, $(NF - 1) }' "$1"
}
HOME=$TMP perf script -i "$TMP/perf.data" > "$TMP/perf.txt" 2> "$TMP/perf-s.err"
HOME=$TMP sfp script -i "$TMP/perf.data" > "$TMP/sfp.txt" 2> "$TMP/sfp-s.err"
leaves "$TMP/perf.txt" > "$TMP/perf.leaves"
leaves "$TMP/sfp.txt" > "$TMP/sfp.leaves"
# wrong: a container's sample named by anything but its own build
wrong() {
	awk -v pa="$PID_alpha" -v pb="$PID_beta" '
	!(($1 == pa && $2 ~ /^alpha_/) || ($1 == pb && $2 ~ /^beta_/) ||
	  $2 == "[unknown]") { n++ } END { print n + 0 }' "$1"
}
sw=$(wrong "$TMP/sfp.leaves")
pw=$(wrong "$TMP/perf.leaves")
total=$(wc -l < "$TMP/sfp.leaves")
if [ $prc != 0 ]; then
	fail "containers at one path: perf record failed ($(tail -1 "$TMP/perf-rec.log"))"
elif [ "$total" -ge 40 ] && [ "$total" = "$(wc -l < "$TMP/perf.leaves")" ] &&
     [ "$sw" = 0 ] &&
     grep -q "$NS/prog is 2 different files in this recording" "$TMP/sfp-s.err"; then
	pass "containers at one path: on perf's recording sfprof names none of $total samples from the other build's file and says why (perf script: $pw)"
else
	fail "containers at one path: on perf's recording sfprof names no sample from the other build's file, and says so"
	echo "  sfprof: $sw of $total named wrongly; perf script $pw"
	head -3 "$TMP/sfp-s.err" | sed 's/^/  /'
fi
exit 0
