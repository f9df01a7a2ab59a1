#!/bin/sh
# `sfprof export`: folded, pprof and Firefox Profiler output of real
# recordings, each checked against stacks computed here independently
# from `sfprof script` / `perf script` of the same file, and read back by
# real consumers (protoc with the pprof schema, `go tool pprof`, node).
# checks: 55
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# pprof's own schema, as upstream publishes it (golden input, never edited)
PPROF_PROTO_DIR=$ROOT/../shared/testdata/proto/pprof
W=${SFP_BUILD:?}/tests/progs/perf-work
WN=$SFP_BUILD/tests/progs/perf-work-nofp

# BPF programs come and go while the suite runs (other tests load them)
# and each command names them from /proc/kallsyms as it is then: a frame
# in one may be "[[kernel.kallsyms]]" in the next.  Such frames are
# compared as one placeholder; everything else exactly.
norm() {
	sed -e 's/;bpf_prog_[0-9a-f]*_[A-Za-z0-9_]*_\[k\]/;[bpf]_[k]/g' \
	    -e 's/;bpf_prog_[0-9a-f]*_[A-Za-z0-9_]*/;[bpf]/g' \
	    -e 's/;\[\[kernel\.kallsyms\]\]/;[bpf]/g' "$@" |
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); c[$0] += n } END { for (s in c) print s, c[s] }' |
	LC_ALL=C sort
}
same() {	# file file: equal after norm
	norm "$1" > "$1.n" && norm "$2" > "$2.n" && cmp -s "$1.n" "$2.n"
}

# --- the command line ----------------------------------------------------------
sfp export --help > "$TMP/help" 2>&1
ok=1
for f in $(sed -n 's/^SFP_EXPORT_FORMAT(\([a-z0-9_-]*\),.*/\1/p' "$ROOT/src/export/formats.def"); do
	grep -q "one of:.* $f\b" "$TMP/help" || { ok=0; echo "  --help lacks format $f"; }
done
for o in --format --input --output --user-only --annotate --inline --title --kallsyms; do
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

# pipe-mode perf.data on standard input (the committed fixture)
sfp script -i - < "$SFP_TEST_DATA/perf/pipe.data" 2>/dev/null |
	awk -f "$HERE/fold-script.awk" | LC_ALL=C sort > "$TMP/pipe.expect"
if sfp export --format folded -i - -o "$TMP/pipe.folded" \
	< "$SFP_TEST_DATA/perf/pipe.data" 2> "$TMP/pipe.err" &&
   [ -s "$TMP/pipe.expect" ] && same "$TMP/pipe.expect" "$TMP/pipe.folded"; then
	pass "export -i - reads a pipe-mode stream ($(wc -l < "$TMP/pipe.folded") stacks as sfprof script)"
else
	fail "export -i - reads a pipe-mode stream"
	head -3 "$TMP/pipe.err" | sed 's/^/  /'
fi

# perf record on this shared machine now and then fails for a moment: a
# probe that fails three times means perf cannot record here at all
perf_ok=0
if command -v perf >/dev/null 2>&1; then
	for try in 1 2 3; do
		if perf record -q -e cpu-clock -o "$TMP/probe.data" true > "$TMP/probe.log" 2>&1; then
			perf_ok=1
			break
		fi
		sleep 1
	done
fi
if [ $perf_ok = 0 ]; then
	skip_rest "export of recordings" "perf record does not work here: $(head -1 "$TMP/probe.log" 2>/dev/null)"
fi


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
	sfp script -i "$data" > "$TMP/$name.script" 2> "$TMP/$name.script.err"
	fold "$TMP/$name.script" > "$TMP/$name.expect"
	nsamples=$(grep -c '^[^	]' "$TMP/$name.script")
	periods=$(awk '/^[^\t]/ { s += $(NF - 1) } END { printf "%d", s }' "$TMP/$name.script")

	# folded: equal to the stacks of sfprof script, sorted, merged
	if sfp export --format folded -i "$data" -o "$TMP/$name.folded" \
		2> "$TMP/$name.err" &&
	   [ "$nsamples" -gt 20 ] &&
	   same "$TMP/$name.expect" "$TMP/$name.folded"; then
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
	sfp export --format folded --user-only -i "$data" -o "$TMP/$name.folded-u" 2>/dev/null
	if same "$TMP/$name.expect-u" "$TMP/$name.folded-u" &&
	   ! grep -q 'entry_SYSCALL\|asm_sysvec\|kallsyms' "$TMP/$name.folded-u"; then
		pass "$name: folded --user-only drops exactly the kernel frames"
	else
		fail "$name: folded --user-only drops exactly the kernel frames"
		diff "$TMP/$name.expect-u" "$TMP/$name.folded-u" | head -6 | cut -c1-200 | sed 's/^/  /'
	fi
	fold "$TMP/$name.script" -v annotate=1 > "$TMP/$name.expect-k"
	sfp export --format folded --annotate -i "$data" -o - > "$TMP/$name.folded-k" 2>/dev/null
	if same "$TMP/$name.expect-k" "$TMP/$name.folded-k"; then
		pass "$name: folded --annotate marks kernel frames _[k] (to stdout with -o -)"
	else
		fail "$name: folded --annotate marks kernel frames _[k]"
		diff "$TMP/$name.expect-k" "$TMP/$name.folded-k" | head -6 | cut -c1-200 | sed 's/^/  /'
	fi

	# pprof: gzip, decoded by protoc with the schema, same stacks
	if sfp export --format pprof -i "$data" -o "$TMP/$name.pb.gz" 2> "$TMP/$name.err" &&
	   gzip -t "$TMP/$name.pb.gz" 2>/dev/null; then
		pass "$name: pprof output is valid gzip"
	else
		fail "$name: pprof output is valid gzip"
		head -3 "$TMP/$name.err" | sed 's/^/  /'
	fi
	if ! command -v protoc >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
		skip "$name: pprof decoded by protoc" "protoc or node missing (make deps)"
	elif gzip -dc "$TMP/$name.pb.gz" | protoc --proto_path="$PPROF_PROTO_DIR" \
		--decode perftools.profiles.Profile "$PPROF_PROTO_DIR/profile.proto" \
		> "$TMP/$name.pb.txt" 2> "$TMP/$name.protoc.err" &&
	     node "$HERE/pprof-check.js" "$TMP/$name.pb.txt" "$bin" "$periods" \
		2> "$TMP/$name.check.err" | LC_ALL=C sort > "$TMP/$name.pb.folded" &&
	     [ -s "$TMP/$name.pb.folded" ] &&
	     same "$TMP/$name.folded" "$TMP/$name.pb.folded"; then
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
		   same "$TMP/$name.folded-nc" "$TMP/$name.traces.folded"; then
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
	elif sfp export --format firefox -i "$data" -o "$TMP/$name.json" 2> "$TMP/$name.err" &&
	     node "$HERE/firefox-check.js" "$TMP/$name.json" "$TMP/$name.ff-tids" \
		2> "$TMP/$name.check.err" | LC_ALL=C sort > "$TMP/$name.ff" &&
	     no_comm "$TMP/$name.folded" > "$TMP/$name.folded-nc2" &&
	     [ -s "$TMP/$name.ff" ] && same "$TMP/$name.folded-nc2" "$TMP/$name.ff"; then
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
	# where sfprof keeps a better name than perf 6.1 (a PLT stub,
	# docs/perf-names.md), take sfprof's line when objdump confirms it
	# (perf-name-rules.sh); every other frame must be perf's
	. "$HERE/perf-name-rules.sh"
	awk -f "$HERE/perf-names.awk" "$TMP/fp.perf" "$TMP/fp.script" |
		grep '^DIFF' > "$TMP/fp.ndiff"
	: > "$TMP/fp.subst"
	while IFS='	' read -r tag p q; do
		[ -n "$(name_rule "$p" "$q")" ] && printf '%s\t%s\n' "$p" "$q" >> "$TMP/fp.subst"
	done < "$TMP/fp.ndiff"
	awk -F '\t' 'FILENAME == ARGV[1] { s[$1] = $2; next }
		/^\t/ { t = $0; sub(/^[\t ]+/, "", t); if (t in s) { match($0, /^[\t ]+/); $0 = substr($0, 1, RLENGTH) s[t] } }
		{ print }' "$TMP/fp.subst" "$TMP/fp.perf" > "$TMP/fp.perf-ruled"
	fold "$TMP/fp.perf-ruled" > "$TMP/fp.perf-expect"
	pm=$(match_permille "$TMP/fp.perf-expect" "$TMP/fp.folded")
	grep ';main;' "$TMP/fp.perf-expect" > "$TMP/fp.perf-main"
	grep ';main;' "$TMP/fp.folded" > "$TMP/fp.folded-main"
	pmm=$(match_permille "$TMP/fp.perf-main" "$TMP/fp.folded-main")
	if [ "$pm" -eq 1000 ] && [ "$pmm" -eq 1000 ]; then
		pass "fp: folded matches perf script's stacks (documented name rules applied, $(wc -l < "$TMP/fp.subst") lines) for all samples"
	else
		fail "fp: folded matches perf script's stacks for only $pmm/1000 of the workload's samples, $pm/1000 of all"
		diff "$TMP/fp.perf-expect" "$TMP/fp.folded" | head -6 | cut -c1-200 | sed 's/^/  /'
	fi
else
	fail "perf record -g of the workload failed three times"
fi

# --- sfprof record of a program without frame pointers --------------------------
if sfp record -q -F 1000 -o "$TMP/nofp.data" -- "$WN" 300 > "$TMP/srec.log" 2>&1; then
	check_file nofp "$TMP/nofp.data" "$WN"
	# kernel symbols from a given file: a snapshot of /proc/kallsyms
	# names the kernel frames as the default does
	cp /proc/kallsyms "$TMP/kallsyms"
	if sfp export --format folded --kallsyms "$TMP/kallsyms" -i "$TMP/nofp.data" \
		-o "$TMP/nofp.folded-ks" 2> "$TMP/ks.err" &&
	   { ! grep -q 'entry_SYSCALL_64\|asm_sysvec\|asm_exc' "$TMP/nofp.folded" ||
	     grep -q 'entry_SYSCALL_64\|asm_sysvec\|asm_exc' "$TMP/nofp.folded-ks"; } &&
	   same "$TMP/nofp.folded" "$TMP/nofp.folded-ks"; then
		pass "nofp: --kallsyms FILE names kernel frames from that file"
	else
		fail "nofp: --kallsyms FILE names kernel frames from that file"
		head -3 "$TMP/ks.err" | sed 's/^/  /'
	fi
else
	fail "sfprof record of the workload"
	head -5 "$TMP/srec.log" | sed 's/^/  /'
fi

# --- --inline: DWARF lines and inlined functions --------------------------------
WI=$SFP_BUILD/tests/progs/export-inline
if ! rec "$TMP/inl.data" -F 2000 -g -- "$WI" 200; then
	fail "perf record -g of the inline workload failed three times"
elif ! command -v protoc >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1 ||
     ! command -v eu-addr2line >/dev/null 2>&1; then
	skip "export --inline" "protoc, node or eu-addr2line missing (make deps)"
else
	sfp export --format folded --inline -i "$TMP/inl.data" -o "$TMP/inl.folded" 2> "$TMP/inl.err"
	sfp export --format folded --inline --annotate -i "$TMP/inl.data" -o "$TMP/inl.folded-k" 2>> "$TMP/inl.err"
	if grep -q ';hot;mix_many;mix [0-9]' "$TMP/inl.folded" &&
	   grep -q ';hot;mix_many_\[i\];mix_\[i\] [0-9]' "$TMP/inl.folded-k"; then
		pass "inline: folded shows the inlined callees as frames (marked _[i] with --annotate)"
	else
		fail "inline: folded shows the inlined callees as frames"
		head -3 "$TMP/inl.err" | sed 's/^/  /'
		grep hot "$TMP/inl.folded-k" | head -3 | sed 's/^/  /'
	fi
	sfp export --format pprof --inline -i "$TMP/inl.data" -o "$TMP/inl.pb.gz" 2>> "$TMP/inl.err"
	periods=$(sfp script -i "$TMP/inl.data" | awk '/^[^\t]/ { s += $(NF - 1) } END { printf "%d", s }')
	if gzip -dc "$TMP/inl.pb.gz" | protoc --proto_path="$PPROF_PROTO_DIR" \
		--decode perftools.profiles.Profile "$PPROF_PROTO_DIR/profile.proto" \
		> "$TMP/inl.pb.txt" 2> "$TMP/inl.protoc.err" &&
	   node "$HERE/pprof-check.js" "$TMP/inl.pb.txt" "$WI" "$periods" "$TMP/inl.locs" \
		2> "$TMP/inl.check.err" | LC_ALL=C sort > "$TMP/inl.pb.folded" &&
	   same "$TMP/inl.folded" "$TMP/inl.pb.folded"; then
		pass "inline: pprof stacks with inline lines equal folded --inline"
	else
		fail "inline: pprof stacks with inline lines equal folded --inline"
		cat "$TMP/inl.protoc.err" "$TMP/inl.check.err" 2>/dev/null | head -5 | sed 's/^/  /'
	fi
	# every location of the workload against elfutils' own answer:
	# eu-addr2line -i names the same functions with the same lines
	readelf -lW "$WI" | awk '$1 == "LOAD" { print $2, $3, $5 }' > "$TMP/inl.loads"
	: > "$TMP/inl.want"
	: > "$TMP/inl.got"
	while read -r off lines; do
		# file offset -> ELF address through the LOAD segment holding it
		va=
		while read -r po pv pf; do
			if [ -z "$va" ] && [ $((0x$off)) -ge $((po)) ] &&
			   [ $((0x$off)) -lt $((po + pf)) ]; then
				va=$(printf '0x%x' $((0x$off - po + pv)))
			fi
		done < "$TMP/inl.loads"
		[ -n "$va" ] || va=0x$off
		# a return address (any frame but the leaf) is looked up one
		# byte back like perf does; the leaf's own ip directly.  Both
		# forms are tried: the model may have either.
		for a in "$va" "$(printf '0x%x' $((va - 1)))"; do
			eu-addr2line --pretty-print -f -i -e "$WI" "$a" |
				sed -e 's/^ (inlined by) //' -e 's/ at \(.*\):\([0-9]*\):[0-9]*$/ at \1:\2/' \
				    -e 's/ at .*:\([0-9]*\)$/:\1/' -e 's/ at ??:0$/:0/' |
				paste -sd'|' -
		done > "$TMP/inl.one"
		echo "$lines" >> "$TMP/inl.got"
		# a sample in a PLT stub: elfutils has no name there (no
		# DWARF covers the stub), ours is the stub's symbol, no line
		if ! grep -qvx '??:0' "$TMP/inl.one" &&
		   expr "$lines" : '[^|]*@plt:0$' > /dev/null; then
			echo "$lines" >> "$TMP/inl.want"
			continue
		fi
		if grep -qxF "$lines" "$TMP/inl.one"; then echo "$lines"; else head -1 "$TMP/inl.one"; fi >> "$TMP/inl.want"
	done < "$TMP/inl.locs"
	if [ -s "$TMP/inl.got" ] && grep -q '^mix:[1-9][0-9]*|mix_many:[1-9][0-9]*|hot:[1-9]' "$TMP/inl.got" &&
	   cmp -s "$TMP/inl.want" "$TMP/inl.got"; then
		pass "inline: pprof lines of every workload location equal eu-addr2line -i ($(wc -l < "$TMP/inl.got") locations)"
	else
		fail "inline: pprof lines of the workload's locations vs eu-addr2line -i"
		diff "$TMP/inl.want" "$TMP/inl.got" | head -6 | sed 's/^/  /'
	fi
	if grep -A12 '^mapping {' "$TMP/inl.pb.txt" | head -14 | grep -q 'has_inline_frames: true' &&
	   grep -A12 '^mapping {' "$TMP/inl.pb.txt" | head -14 | grep -q 'has_line_numbers: true' &&
	   grep -q '^string_table: ".*export-inline.c"' "$TMP/inl.pb.txt"; then
		pass "inline: pprof mapping[0] has line numbers and inline frames, functions name the source file"
	else
		fail "inline: pprof mapping[0] flags / source file names"
	fi
	sfp export --format firefox --inline -i "$TMP/inl.data" -o "$TMP/inl.json" 2>> "$TMP/inl.err"
	if node "$HERE/firefox-check.js" "$TMP/inl.json" "$TMP/inl.ff-tids" 2> "$TMP/inl.check.err" |
		LC_ALL=C sort > "$TMP/inl.ff" &&
	   no_comm "$TMP/inl.folded" > "$TMP/inl.folded-nc" && same "$TMP/inl.folded-nc" "$TMP/inl.ff" &&
	   node -e '
		const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		let ok = false;
		for (const t of p.threads)
			for (const f of t.frameTable.data)
				if (/^mix \(in /.test(t.stringTable[f[0]]) && f[5] > 0) ok = true;
		process.exit(ok ? 0 : 1);' "$TMP/inl.json"; then
		pass "inline: firefox stacks equal folded --inline, inlined frames carry their line"
	else
		fail "inline: firefox --inline"
		head -5 "$TMP/inl.check.err" | sed 's/^/  /'
	fi
fi

# --- two events: a pprof column and a Firefox track per event ----------------
if ! rec "$TMP/two.data" -F 2000 -e page-faults -g -- "$W" 150; then
	fail "perf record of two events failed three times"
elif ! command -v protoc >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	skip "two events" "protoc or node missing (make deps)"
else
	sfp script -i "$TMP/two.data" > "$TMP/two.script" 2>/dev/null
	sums=$(awk '/^[^\t]/ { ev = $NF; sub(/:$/, "", ev); s[ev] += $(NF - 1) }
		    END { for (e in s) printf "%s%s=%d", n++ ? "," : "", e == "cpu-clock" ? "cpu" : e, s[e] }' "$TMP/two.script")
	sfp export --format pprof -i "$TMP/two.data" -o "$TMP/two.pb.gz" 2> "$TMP/two.err"
	if echo "$sums" | grep -q 'page-faults=' &&
	   gzip -dc "$TMP/two.pb.gz" | protoc --proto_path="$PPROF_PROTO_DIR" \
		--decode perftools.profiles.Profile "$PPROF_PROTO_DIR/profile.proto" > "$TMP/two.pb.txt" &&
	   node "$HERE/pprof-check.js" "$TMP/two.pb.txt" "$W" "$sums" > /dev/null 2> "$TMP/two.check"; then
		pass "two events: pprof has a column per event, each summing to its periods ($sums)"
	else
		fail "two events: pprof columns per event ($sums)"
		cat "$TMP/two.err" "$TMP/two.check" | head -5 | sed 's/^/  /'
	fi
	sfp export --format firefox -i "$TMP/two.data" -o "$TMP/two.json" 2>> "$TMP/two.err"
	awk '/^[^\t]/ { ev = $NF; sub(/:$/, "", ev)
			for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $(i - 1); sub(/.*\//, "", t); break }
			c[t " " ev]++ }
	     END { for (k in c) print k, c[k] }' "$TMP/two.script" | sort > "$TMP/two.want"
	if node "$HERE/firefox-check.js" "$TMP/two.json" "$TMP/two.tids" > /dev/null 2> "$TMP/two.check" &&
	   awk '{ ev = $NF; gsub(/[()]/, "", ev); print $2, ev, $3 }' "$TMP/two.tids" | sort |
		cmp -s "$TMP/two.want" -; then
		pass "two events: firefox has a track per thread and event with its sample count"
	else
		fail "two events: firefox tracks per thread and event"
		head -5 "$TMP/two.check" | sed 's/^/  /'
	fi
fi

# --- a fixed period (-c): perf records no per-sample period then -------------
if ! rec "$TMP/fixed.data" -c 250000 -g -- "$W" 100; then
	fail "fixed period: perf record -c failed three times: $(head -1 "$TMP/rec.log")"
elif ! command -v protoc >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	skip "fixed period" "protoc or node missing (make deps)"
else
	n=$(sfp script -i "$TMP/fixed.data" 2>/dev/null | grep -c '^[^	]')
	sfp export --format pprof -i "$TMP/fixed.data" -o "$TMP/fixed.pb.gz" 2> "$TMP/fixed.err"
	if [ "$n" -gt 0 ] && gzip -dc "$TMP/fixed.pb.gz" | protoc --proto_path="$PPROF_PROTO_DIR" \
		--decode perftools.profiles.Profile "$PPROF_PROTO_DIR/profile.proto" \
		> "$TMP/fixed.pb.txt" 2> "$TMP/fixed.protoc" &&
	   node "$HERE/pprof-check.js" "$TMP/fixed.pb.txt" "$W" "cpu=$((n * 250000))" > /dev/null 2> "$TMP/fixed.check" &&
	   grep -q '^period: 250000$' "$TMP/fixed.pb.txt"; then
		pass "fixed period: pprof cpu column is samples x 250000 ns, period 250000"
	else
		fail "fixed period: pprof cpu column and period ($n samples)"
		cat "$TMP/fixed.err" "$TMP/fixed.protoc" "$TMP/fixed.check" | head -5 | sed 's/^/  /'
	fi
fi

# --- awkward paths: parentheses and a byte that is not UTF-8 -------------------
odd=$(printf '%s/odd(dir)\377' "$TMP")
mkdir -p "$odd" && cp "$W" "$odd/perf-work"
if ! rec "$TMP/odd.data" -F 2000 -g -- "$odd/perf-work" 100; then
	fail "firefox: awkward DSO path: perf record failed three times: $(head -1 "$TMP/rec.log")"
elif ! command -v node >/dev/null 2>&1; then
	skip "firefox: awkward DSO path" "node missing (make deps)"
else
	sfp export --format firefox -i "$TMP/odd.data" -o "$TMP/odd.json" 2> "$TMP/odd.err"
	if node "$HERE/firefox-check.js" "$TMP/odd.json" "$TMP/odd.tids" > /dev/null 2> "$TMP/odd.check" &&
	   grep -q '(in [^)]*/odd\[dir\]\\ufffd/perf-work)' "$TMP/odd.json"; then
		pass "firefox: a DSO path with '(', ')' and a non-UTF-8 byte stays strict UTF-8 JSON and parses as '(in LIB)'"
	else
		fail "firefox: awkward DSO path"
		head -5 "$TMP/odd.err" "$TMP/odd.check" | sed 's/^/  /'
	fi
fi

# --- a real consumer of folded and pprof: the speedscope viewer ----------------
# Debian packages no folded-stack reader (flamegraph.pl, inferno); speedscope
# imports both Brendan Gregg's collapsed stacks and pprof.  Its release build
# and the Chromium driver come with the flame graph work's browser tests
# (tests/browser, set up by make deps); without them this part is skipped.
SS=$ROOT/tests/browser
if [ -f "$SS/speedscope.mjs" ] && [ -f "$SS/node_modules/speedscope/package.json" ] &&
   [ -f "$SS/node_modules/playwright-core/package.json" ] && [ -x /usr/bin/chromium ] &&
   [ -s "$TMP/nofp.folded" ] && [ -s "$TMP/nofp.pb.gz" ]; then
	# speedscope's "total" of spin: the share of samples with spin on the stack
	share=$(awk '{ n = $NF; t += n; if ($0 ~ /;spin( |;)/) s += n }
		     END { printf "%.2f", t ? 0.9 * s / t : 0 }' "$TMP/nofp.folded")
	mkdir -p "$SFP_TEST_TMP/export-shots"
	for f in folded pb.gz; do
		checker "speedscope.mjs for $f" env -C "$SS" SFP_TEST_TMP="$TMP" \
			timeout 300 node speedscope.mjs --json "$TMP/nofp.$f" --hot spin \
			--min-share "$share" --tag "export-$f" \
			--shots "$SFP_TEST_TMP/export-shots"
	done
else
	skip "folded and pprof loaded into speedscope" "tests/browser viewer setup not in this tree"
fi
