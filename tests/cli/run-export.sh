#!/bin/sh
# `sfprof export`: folded, pprof and Firefox Profiler output of real
# recordings, each checked against stacks computed here independently
# from `sfprof script` / `perf script` of the same file, and read back by
# real consumers (protoc with the pprof schema, `go tool pprof`, node).
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
W=${SFP_BUILD:?}/tests/progs/perf-work
WN=$SFP_BUILD/tests/progs/perf-work-nofp

# --- the command line ----------------------------------------------------------
$SFPROF export --help > "$TMP/help" 2>&1
ok=1
for f in $(sed -n 's/^SFP_EXPORT_FORMAT(\([a-z0-9_-]*\),.*/\1/p' "$ROOT/src/export/formats.def"); do
	grep -q "one of:.* $f\b" "$TMP/help" || { ok=0; echo "  --help lacks format $f"; }
done
for o in --format --input --output --user-only --annotate --inline --title; do
	grep -q -- "$o" "$TMP/help" || { ok=0; echo "  --help lacks $o"; }
done
[ $ok = 1 ] && pass "export --help lists every library format and option" ||
	fail "export --help lists every library format and option"
check_rc "export without --format is a usage error" 2 $SFPROF export -o "$TMP/x"
check_rc "export without -o is a usage error" 2 $SFPROF export --format folded
check_rc "export --format bogus is a usage error" 2 $SFPROF export --format bogus -o "$TMP/x"
check_rc "export of a missing file is an I/O error" 2 \
	$SFPROF export --format folded -i "$TMP/none.data" -o "$TMP/x"
head -c 4096 /dev/urandom > "$TMP/garbage.data"
check_rc "export of a file that is not perf.data is invalid input" 1 \
	$SFPROF export --format folded -i "$TMP/garbage.data" -o "$TMP/x"
if [ ! -e "$TMP/x" ]; then
	pass "a failed export leaves no output file"
else
	fail "a failed export leaves no output file"
fi

if ! command -v perf >/dev/null 2>&1 ||
   ! perf record -q -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>&1; then
	skip "export of recordings" "perf record does not work here"
	exit 0
fi

# Record; now and then perf record on this shared machine ends without
# finishing its file (data size 0), so try up to three times.
rec() {	# out, perf record args...
	out=$1
	shift
	for try in 1 2 3; do
		if perf record -q -e cpu-clock -o "$out" "$@" >"$TMP/rec.log" 2>&1 &&
		   [ "$(od -An -t u8 -j 48 -N 8 "$out" | tr -d ' ')" != 0 ]; then
			return 0
		fi
	done
	return 1
}

fold() {	# script output, awk vars... -> sorted folded lines
	f=$1
	shift
	awk "$@" -f "$HERE/fold-script.awk" "$f" | LC_ALL=C sort
}

# samples matched between two folded files, per mille of the first's
match_permille() {
	awk 'NR == FNR { n = $NF; sub(/ [0-9]+$/, ""); a[$0] = n; tot += n; next }
	     { n = $NF; sub(/ [0-9]+$/, ""); if ($0 in a) same += (a[$0] < n ? a[$0] : n) }
	     END { print tot ? int(same * 1000 / tot) : 0 }' "$1" "$2"
}

# strip the comm field and merge: what a per-thread format keeps
no_comm() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); i = index($0, ";");
	       s = i ? substr($0, i + 1) : ""; c[s] += n }
	     END { for (s in c) print s, c[s] }' "$1" | LC_ALL=C sort
}

check_file() {	# name, data file, main binary
	name=$1 data=$2 bin=$3
	$SFPROF script -i "$data" > "$TMP/$name.script" 2> "$TMP/$name.script.err"
	fold "$TMP/$name.script" > "$TMP/$name.expect"
	nsamples=$(grep -c '^[^	]' "$TMP/$name.script")
	periods=$(awk '/^[^\t]/ { s += $(NF - 1) } END { printf "%d", s }' "$TMP/$name.script")

	# folded: equal to the stacks of sfprof script, sorted, merged
	if $SFPROF export --format folded -i "$data" -o "$TMP/$name.folded" \
		2> "$TMP/$name.err" &&
	   [ "$nsamples" -gt 50 ] &&
	   cmp -s "$TMP/$name.expect" "$TMP/$name.folded"; then
		pass "$name: folded equals the stacks of sfprof script ($nsamples samples, $(wc -l < "$TMP/$name.folded") stacks)"
	else
		fail "$name: folded equals the stacks of sfprof script ($nsamples samples)"
		head -3 "$TMP/$name.err" | sed 's/^/  /'
		diff "$TMP/$name.expect" "$TMP/$name.folded" | head -10 | cut -c1-200 | sed 's/^/  /'
	fi
	if sed 's/ [0-9]*$//' "$TMP/$name.folded" | LC_ALL=C sort -c -u 2>/dev/null &&
	   ! grep -qv ' [1-9][0-9]*$' "$TMP/$name.folded"; then
		pass "$name: folded lines sorted, unique, each ending in a count"
	else
		fail "$name: folded lines sorted, unique, each ending in a count"
	fi
	if grep -q "^perf-work[-a-z]*;.*main;worker;recurse;recurse;.*;spin [0-9]" "$TMP/$name.folded"; then
		pass "$name: folded has the workload's full path main;worker;recurse...;spin"
	else
		fail "$name: folded has the workload's full path main;worker;recurse...;spin"
	fi
	fold "$TMP/$name.script" -v user_only=1 > "$TMP/$name.expect-u"
	$SFPROF export --format folded --user-only -i "$data" -o "$TMP/$name.folded-u" 2>/dev/null
	if cmp -s "$TMP/$name.expect-u" "$TMP/$name.folded-u" &&
	   ! grep -q 'entry_SYSCALL\|asm_sysvec\|kallsyms' "$TMP/$name.folded-u"; then
		pass "$name: folded --user-only drops exactly the kernel frames"
	else
		fail "$name: folded --user-only drops exactly the kernel frames"
		diff "$TMP/$name.expect-u" "$TMP/$name.folded-u" | head -6 | cut -c1-200 | sed 's/^/  /'
	fi
	fold "$TMP/$name.script" -v annotate=1 > "$TMP/$name.expect-k"
	$SFPROF export --format folded --annotate -i "$data" -o - > "$TMP/$name.folded-k" 2>/dev/null
	if cmp -s "$TMP/$name.expect-k" "$TMP/$name.folded-k"; then
		pass "$name: folded --annotate marks kernel frames _[k] (to stdout with -o -)"
	else
		fail "$name: folded --annotate marks kernel frames _[k]"
		diff "$TMP/$name.expect-k" "$TMP/$name.folded-k" | head -6 | cut -c1-200 | sed 's/^/  /'
	fi

	# pprof: gzip, decoded by protoc with the schema, same stacks
	if $SFPROF export --format pprof -i "$data" -o "$TMP/$name.pb.gz" 2> "$TMP/$name.err" &&
	   gzip -t "$TMP/$name.pb.gz" 2>/dev/null; then
		pass "$name: pprof output is valid gzip"
	else
		fail "$name: pprof output is valid gzip"
		head -3 "$TMP/$name.err" | sed 's/^/  /'
	fi
	if ! command -v protoc >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
		skip "$name: pprof decoded by protoc" "protoc or node missing (make deps)"
	elif gzip -dc "$TMP/$name.pb.gz" | protoc --proto_path="$ROOT/tests/data" \
		--decode perftools.profiles.Profile "$ROOT/tests/data/profile.proto" \
		> "$TMP/$name.pb.txt" 2> "$TMP/$name.protoc.err" &&
	     node "$HERE/pprof-check.js" "$TMP/$name.pb.txt" "$bin" "$periods" \
		2> "$TMP/$name.check.err" | LC_ALL=C sort > "$TMP/$name.pb.folded" &&
	     [ -s "$TMP/$name.pb.folded" ] &&
	     cmp -s "$TMP/$name.folded" "$TMP/$name.pb.folded"; then
		pass "$name: pprof decoded by protoc: tables consistent, cpu total = recorded periods ($periods ns), stacks equal folded"
	else
		fail "$name: pprof decoded by protoc"
		cat "$TMP/$name.protoc.err" "$TMP/$name.check.err" 2>/dev/null | head -10 | sed 's/^/  /'
		diff "$TMP/$name.folded" "$TMP/$name.pb.folded" 2>/dev/null | head -6 | cut -c1-200 | sed 's/^/  /'
	fi
	if ! command -v go >/dev/null 2>&1; then
		skip "$name: go tool pprof reads the profile" "go missing (make deps)"
	else
		# pprof's own view: -traces lists every stack with its value
		# (leaf first, one frame a line); refold them and compare
		go tool pprof -traces -sample_index=samples "$TMP/$name.pb.gz" \
			> "$TMP/$name.traces" 2> "$TMP/$name.go.err"
		awk '/^-----------\+/ { if (n) { s = ""; for (i = n; i >= 1; i--) s = s (s == "" ? "" : ";") f[i]; c[s] += v } n = 0; next }
		     /^ +[a-z_]+:  / { next }
		     /^ +[0-9]+ +[^ ]/ { v = $1; sub(/^ +[0-9]+ +/, ""); f[++n] = $0; next }
		     /^          +[^ ]/ && n { sub(/^ +/, ""); f[++n] = $0; next }
		     END { for (s in c) print s, c[s] }' "$TMP/$name.traces" |
			LC_ALL=C sort > "$TMP/$name.traces.folded"
		no_comm "$TMP/$name.folded" | grep -v '^ ' > "$TMP/$name.folded-nc"
		if [ -s "$TMP/$name.traces.folded" ] &&
		   cmp -s "$TMP/$name.folded-nc" "$TMP/$name.traces.folded"; then
			pass "$name: go tool pprof -traces shows the same stacks and counts"
		else
			fail "$name: go tool pprof -traces shows the same stacks and counts"
			head -5 "$TMP/$name.go.err" | sed 's/^/  /'
			diff "$TMP/$name.folded-nc" "$TMP/$name.traces.folded" | head -6 | cut -c1-200 | sed 's/^/  /'
		fi
		# -top: the hottest leaf and its flat count
		top_exp=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";"); if (k > 1) c[a[k]] += n }
			       END { for (f in c) print c[f], f }' "$TMP/$name.folded" | sort -rn | head -1)
		top_got=$(go tool pprof -top -sample_index=samples "$TMP/$name.pb.gz" 2>/dev/null |
			  awk '/flat%/ { t = 1; next } t && NF >= 6 { n = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print n, $0; exit }')
		if [ -n "$top_exp" ] && [ "$top_exp" = "$top_got" ]; then
			pass "$name: go tool pprof -top: hottest function and flat samples as folded ($top_got)"
		else
			fail "$name: go tool pprof -top: want '$top_exp', got '$top_got'"
		fi
	fi

	# Firefox Profiler: schema points, one thread per tid, same stacks
	if ! command -v node >/dev/null 2>&1; then
		skip "$name: firefox profile checked" "node missing (make deps)"
	elif $SFPROF export --format firefox -i "$data" -o "$TMP/$name.json" 2> "$TMP/$name.err" &&
	     node "$HERE/firefox-check.js" "$TMP/$name.json" "$TMP/$name.ff-tids" \
		2> "$TMP/$name.check.err" | LC_ALL=C sort > "$TMP/$name.ff" &&
	     no_comm "$TMP/$name.folded" > "$TMP/$name.folded-nc2" &&
	     [ -s "$TMP/$name.ff" ] && cmp -s "$TMP/$name.folded-nc2" "$TMP/$name.ff"; then
		pass "$name: firefox profile passes the format checks, stacks equal folded"
	else
		fail "$name: firefox profile"
		cat "$TMP/$name.err" "$TMP/$name.check.err" 2>/dev/null | head -10 | sed 's/^/  /'
		diff "$TMP/$name.folded-nc2" "$TMP/$name.ff" 2>/dev/null | head -6 | cut -c1-200 | sed 's/^/  /'
	fi
	awk '/^[^\t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $(i - 1); sub(/.*\//, "", t); c[t]++; break } }
	     END { for (t in c) print t, c[t] }' "$TMP/$name.script" | sort > "$TMP/$name.tids"
	if [ -s "$TMP/$name.ff-tids" ] &&
	   awk '{ print $2, $3 }' "$TMP/$name.ff-tids" | sort | cmp -s "$TMP/$name.tids" -; then
		pass "$name: firefox has one thread per tid with its sample count ($(wc -l < "$TMP/$name.tids") threads)"
	else
		fail "$name: firefox threads and sample counts per tid"
	fi
}

# --- a frame-pointer recording by perf ----------------------------------------
if rec "$TMP/fp.data" -F 2000 -g -- "$W" 150; then
	check_file fp "$TMP/fp.data" "$W"
	# and against Debian's perf script of the same file
	perf script --no-inline -i "$TMP/fp.data" > "$TMP/fp.perf" 2>/dev/null
	fold "$TMP/fp.perf" > "$TMP/fp.perf-expect"
	pm=$(match_permille "$TMP/fp.perf-expect" "$TMP/fp.folded")
	if [ "$pm" -ge 990 ]; then
		pass "fp: folded matches perf script's stacks for $pm/1000 of the samples"
	else
		fail "fp: folded matches perf script's stacks for only $pm/1000 of the samples"
	fi
else
	fail "perf record -g of the workload failed three times"
fi

# --- sfprof record of a program without frame pointers --------------------------
if $SFPROF record -q -F 1000 -o "$TMP/nofp.data" -- "$WN" 150 > "$TMP/srec.log" 2>&1; then
	check_file nofp "$TMP/nofp.data" "$WN"
else
	fail "sfprof record of the workload"
	head -5 "$TMP/srec.log" | sed 's/^/  /'
fi
