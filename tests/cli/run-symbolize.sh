#!/bin/sh
# symbolize: a stripped program's profile taken by `sfprof agent
# --no-symbolize` (addresses and build-ids only) named afterwards by
# `sfprof symbolize`, and checked frame by frame against eu-addr2line on
# the unstripped file: from a debug directory, with the binary gone (its
# debug file stands in), from a real debuginfod server, and with nothing
# to name it from (the account says which build-id was missing).  The
# profiles are read with protoc and the upstream schema, and by go tool
# pprof.  The same window as an OTLP request, named to the same stacks.
# Then inputs that are not profiles.
# checks: 23
. "$(dirname "$0")/test-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
CHECK=$HERE/push-check.py
. "$HERE/agent-subr.sh"
EXTRA_CLEANUP=symz_cleanup
symz_cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; }
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT

sfp symbolize --help > "$TMP/help" 2>&1
if grep -q -- '--debug-dir DIR' "$TMP/help" && grep -q -- '--symfs DIR' "$TMP/help" &&
   grep -q -- '--debuginfod-timeout' "$TMP/help"; then
	pass "symbolize --help"
else
	fail "symbolize --help"
fi
check_rc "symbolize without -o is a usage error" 2 $SFPROF symbolize -i /dev/null

missing=
for t in protoc python3 go eu-addr2line debuginfod objcopy strip readelf; do
	command -v $t > /dev/null 2>&1 || missing="$missing $t"
done
[ -f "$PROTO/pprof/profile.proto" ] || missing="$missing $PROTO/pprof/profile.proto"
[ -z "$missing" ] || skip_rest "symbolize" "missing:$missing (make deps)"
. "$HERE/push-subr.sh"
. "$HERE/debuginfod-subr.sh"

# --- a stripped program, its debug file in a debug directory ---------------
FULL=$SFP_BUILD/tests/progs/agent-work	# -O2 -g: now_ms() is inlined
mkdir -p "$TMP/bin" "$TMP/srv" "$TMP/home" "$TMP/out" "$TMP/away"
PROG=$TMP/bin/app
cp "$FULL" "$PROG"
strip -s "$PROG"
ID=$(readelf -n "$PROG" | awk '/Build ID:/ { print $3 }')
DBG=$TMP/dbg/.build-id/$(echo "$ID" | cut -c1-2)
mkdir -p "$DBG"
objcopy --only-keep-debug "$FULL" "$DBG/$(echo "$ID" | cut -c3-).debug"
cp "$DBG/$(echo "$ID" | cut -c3-).debug" "$TMP/srv/app.debug"
# the host's build-id cache is not a source here
export HOME="$TMP/home"

# --- the agent's profile: addresses only ------------------------------------
"$PROG" 30 > /dev/null &
WPID=$!
agent_start --no-symbolize -p "$WPID" -F 499 --interval 60s --output-dir "$TMP/out"
sleep 4
kill -INT "$AGENT_PID" 2>/dev/null
agent_end 60
RAW=$(ls "$TMP/out"/*.pb.gz 2>/dev/null | head -1)
kill -9 "$WPID" 2>/dev/null
WPID=
decode_pprof "$RAW" "$TMP/raw.txt"
python3 "$CHECK" locations-pprof "$TMP/raw.txt" > "$TMP/raw.locs"
nraw=$(awk -v id="$ID" '$3 == id && $6 == 0' "$TMP/raw.locs" | wc -l)
if [ "$rc" = 0 ] && [ "$nraw" -ge 5 ]; then
	pass "agent --no-symbolize: $nraw locations of the stripped program, no functions"
else
	fail "agent --no-symbolize: locations of the stripped program without functions"
	echo "  agent rc=$rc, $nraw locations; $(cat "$TMP/agent.err" | tail -3)"
	exit 0
fi

# names KEY FILE: for every location of the build-ids KEY matches, the
# frames eu-addr2line gives on FILE (the unstripped file), innermost
# first, against those of the named profile: "ADDR OURS THEIRS"
compare() {
	awk -v id="$1" '$3 ~ id' "$3" > "$TMP/cmp.in"
	python3 "$HERE/eu-a2l-compare.py" "$2" "$TMP/cmp.in" > "$TMP/cmp.out"
}

check_named() {
	compare "$ID" "$FULL" "$1"
	n=$(wc -l < "$TMP/cmp.out")
	same=$(awk '$2 == $3' "$TMP/cmp.out" | wc -l)
	named=$(awk '$2 != "-" && $2 !~ /^\[/' "$TMP/cmp.out" | wc -l)
	if [ "$n" -ge 5 ] && [ "$same" = "$n" ] && [ $((named * 100)) -ge $((n * 99)) ]; then
		pass "$2: $named of $n locations of the program named, all as eu-addr2line names them"
	else
		fail "$2: locations named as eu-addr2line names them ($same of $n equal, $named named)"
		awk '$2 != $3' "$TMP/cmp.out" | head -5 | sed 's/^/  /'
	fi
}

# --- from a debug directory --------------------------------------------------
sfp symbolize -i "$RAW" -o "$TMP/named.pb.gz" --debug-dir "$TMP/dbg" 2> "$TMP/s1.err"
rc=$?
decode_pprof "$TMP/named.pb.gz" "$TMP/named.txt"
python3 "$CHECK" locations-pprof "$TMP/named.txt" > "$TMP/named.locs"
if [ $rc = 0 ] && [ -s "$TMP/named.txt" ]; then
	pass "symbolize: exit 0, the output decodes with the upstream schema"
else
	fail "symbolize: exit 0, the output decodes with the upstream schema (rc $rc)"
	cat "$TMP/s1.err" "$TMP/named.txt.err" 2>/dev/null | head -5 | sed 's/^/  /'
fi
check_named "$TMP/named.locs" "debug directory"
# libc's frames too, from the host's own debug file (libc6-dbg), as
# eu-addr2line finds it
LIBC=$(awk '$2 ~ /libc\.so\.6$/ { print $2; exit }' "$TMP/named.locs")
LIBC_ID=$(awk '$2 ~ /libc\.so\.6$/ { print $3; exit }' "$TMP/named.locs")
if [ -n "$LIBC_ID" ]; then
	compare "$LIBC_ID" "$LIBC" "$TMP/named.locs"
	n=$(wc -l < "$TMP/cmp.out")
	same=$(awk '$2 == $3' "$TMP/cmp.out" | wc -l)
	# Where no DWARF covers an address (glibc's assembly string
	# functions), both name it from the symbol table, and where several
	# symbols share the address each tool picks its own alias
	# (__memcpy_avx512_unaligned_erms, __memmove_avx512_unaligned_erms):
	# a difference only if the two names are not at one address in the
	# debug file's .symtab.
	LDBG=/usr/lib/debug/.build-id/$(echo "$LIBC_ID" | cut -c1-2)/$(echo "$LIBC_ID" | cut -c3-).debug
	readelf -sW "$LDBG" 2>/dev/null | awk '$4 == "FUNC" { print $2, $8 }' > "$TMP/libc.syms"
	alias=$(awk 'NR == FNR { a[$2] = a[$2] " " $1; next }
		$2 != $3 && $2 !~ /;/ && $3 !~ /;/ && a[$2] != "" && a[$2] == a[$3]' \
		"$TMP/libc.syms" "$TMP/cmp.out" | wc -l)
	# and what eu-addr2line cannot name ("??": PLT stubs) is no evidence
	unk=$(awk '$3 == "??" || $3 == "-"' "$TMP/cmp.out" | wc -l)
	if [ "$n" -ge 1 ] && [ $((same + alias + unk)) = "$n" ] && [ "$same" -ge $((n / 2)) ]; then
		pass "libc: $n locations named as eu-addr2line names them ($alias by another alias at the same address, $unk it cannot name)"
	else
		fail "libc: locations named as eu-addr2line names them ($same of $n)"
		awk '$2 != $3' "$TMP/cmp.out" | head -5 | sed 's/^/  /'
	fi
else
	fail "libc: locations named as eu-addr2line names them (no libc mapping)"
fi
total=$(wc -l < "$TMP/named.locs")
nnamed=$(awk '$NF != "-" && $NF !~ /^\[/' "$TMP/named.locs" | wc -l)
# (the file at its path: libraries with their own .symtab, such as the
# ASan build's libasan; the program itself only from the debug directory)
set -- $(sed -n 's/.*locations: \([0-9]*\) named (\([0-9]*\) the file at its path, \([0-9]*\) debug directories, 0 build-id cache, 0 debuginfod; .*, 0 in files not found$/\1 \2 \3/p' "$TMP/s1.err")
if [ "${1:-x}" = "$nnamed" ] && [ $(($2 + $3)) = "$nnamed" ] && [ "$3" -ge "$nraw" ]; then
	pass "the account: $nnamed named ($2 from the files at their paths, $3 from debug directories), none missing"
else
	fail "the account: $nnamed named from the files or debug directories, none missing"
	sed 's/^/  /' "$TMP/s1.err"
fi
if go tool pprof -top "$TMP/named.pb.gz" > "$TMP/top" 2> "$TMP/top.err" &&
   grep -q 'agent_hot' "$TMP/top"; then
	pass "go tool pprof reads the named profile (agent_hot in -top)"
else
	fail "go tool pprof reads the named profile (agent_hot in -top)"
	head -5 "$TMP/top.err" "$TMP/top" | sed 's/^/  /'
fi
# twice: nothing more to do, not a byte changed
sfp symbolize -i "$TMP/named.pb.gz" -o "$TMP/named2.pb.gz" --debug-dir "$TMP/dbg" 2> "$TMP/s2.err"
if cmp -s "$TMP/named.pb.gz" "$TMP/named2.pb.gz" &&
   grep -q ": 0 named (.*, $nnamed already named" "$TMP/s2.err"; then
	pass "a named profile goes through again unchanged ($nnamed already named)"
else
	fail "a named profile goes through again unchanged"
	sed 's/^/  /' "$TMP/s2.err"
fi

# --- OTLP: the same window as the agent's OTLP sink sends it ----------------
SERVER=$HERE/push-server.py
SRV_DIR=$TMP/otlp
start_server "$SRV_DIR"
sfp push --otlp "http://127.0.0.1:$PORT" -l service_name=app "$RAW" > "$TMP/push.out" 2>&1
stop_server "otlp"
BODY=$SRV_DIR/req-000.otlp
decode_otlp "$BODY" "$TMP/rawotlp.txt"
python3 "$CHECK" stacks-otlp "$TMP/rawotlp.txt" > "$TMP/rawotlp.stacks" 2>&1
python3 "$CHECK" stacks-pprof "$TMP/raw.txt" > "$TMP/raw.stacks"
# the program's frames as addresses (no lines; the pprof view shows its
# "[app]" placeholders as addresses too), every stack as in the pprof
if [ -s "$TMP/rawotlp.stacks" ] && grep -q ';0x[0-9a-f]*	' "$TMP/rawotlp.stacks" &&
   cmp -s "$TMP/rawotlp.stacks" "$TMP/raw.stacks" &&
   ! grep -q '\[app\]' "$TMP/rawotlp.stacks" && grep -q '\[app\]' "$TMP/raw.txt"; then
	pass "OTLP: the window's unnamed frames of the program have no lines (pprof: [app])"
else
	fail "OTLP: the window's unnamed frames of the program have no lines"
	head -3 "$TMP/rawotlp.stacks" "$TMP/push.out" | sed 's/^/  /'
fi
sfp symbolize -i "$BODY" -o "$TMP/named.otlp" --debug-dir "$TMP/dbg" 2> "$TMP/so.err"
rc=$?
decode_otlp "$TMP/named.otlp" "$TMP/named.otlp.txt"
python3 "$CHECK" stacks-otlp "$TMP/named.otlp.txt" > "$TMP/named.otlp.stacks" 2>&1
python3 "$CHECK" stacks-pprof "$TMP/named.txt" > "$TMP/named.stacks"
if [ $rc = 0 ] && [ -s "$TMP/named.otlp.stacks" ] &&
   cmp -s "$TMP/named.otlp.stacks" "$TMP/named.stacks" &&
   grep -q ": [0-9]* locations: $nnamed named" "$TMP/so.err"; then
	pass "OTLP: named ($nnamed), every stack equal to the named pprof's, decoded with the upstream protos"
else
	fail "OTLP: named, every stack equal to the named pprof's (rc $rc)"
	diff "$TMP/named.stacks" "$TMP/named.otlp.stacks" | head -6 | sed 's/^/  /'
	sed 's/^/  /' "$TMP/so.err" "$TMP/named.otlp.txt.err" 2>/dev/null | head -4
fi

# --- the binary gone: its debug file stands in --------------------------------
mv "$PROG" "$TMP/away/"
sfp symbolize -i "$RAW" -o "$TMP/gone.pb.gz" --debug-dir "$TMP/dbg" 2> "$TMP/s3.err"
if cmp -s "$TMP/named.pb.gz" "$TMP/gone.pb.gz"; then
	pass "binary gone: the debug file stands in, the same profile"
else
	fail "binary gone: the debug file stands in, the same profile"
	sed 's/^/  /' "$TMP/s3.err"
fi

# --- nothing to name it from: said, and the frames left as they were ---------
sfp symbolize -i "$RAW" -o "$TMP/none.pb.gz" 2> "$TMP/s4.err"
rc=$?
decode_pprof "$TMP/none.pb.gz" "$TMP/none.txt"
python3 "$CHECK" locations-pprof "$TMP/none.txt" > "$TMP/none.locs"
left=$(awk -v id="$ID" '$3 == id && $6 == 0' "$TMP/none.locs" | wc -l)
if [ $rc = 0 ] && [ "$left" = "$nraw" ] &&
   grep -q "build-id $ID ($PROG) not found: $nraw locations left unnamed" "$TMP/s4.err" &&
   grep -q ", $nraw in files not found$" "$TMP/s4.err"; then
	pass "no file, no debug file: the build-id said, its $nraw locations left as they were"
else
	fail "no file, no debug file: the build-id said, its locations left as they were ($left of $nraw)"
	sed 's/^/  /' "$TMP/s4.err"
fi
# the same profile with the names after all: the placeholders go, once
sfp symbolize -i "$TMP/none.pb.gz" -o "$TMP/later.pb.gz" --debug-dir "$TMP/dbg" 2> "$TMP/s5.err"
decode_pprof "$TMP/later.pb.gz" "$TMP/later.txt"
python3 "$CHECK" locations-pprof "$TMP/later.txt" > "$TMP/later.locs"
check_named "$TMP/later.locs" "named later, from a profile already once through"

# --- from a real debuginfod server -------------------------------------------
if start_debuginfod; then
	pass "debuginfod on 127.0.0.1:$PORT serves the debug file"
	DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$TMP/dcache \
		sfp symbolize -i "$RAW" -o "$TMP/dfd.pb.gz" --debuginfod-timeout 60 2> "$TMP/s6.err"
	decode_pprof "$TMP/dfd.pb.gz" "$TMP/dfd.txt"
	python3 "$CHECK" locations-pprof "$TMP/dfd.txt" > "$TMP/dfd.locs"
	check_named "$TMP/dfd.locs" "debuginfod"
	napp=$(awk -v id="$ID" '$3 == id' "$TMP/dfd.locs" | wc -l)
	if grep -q "named (.*[1-9][0-9]* debuginfod;" "$TMP/s6.err" &&
	   ! grep -q "build-id $ID" "$TMP/s6.err"; then
		pass "the account says debuginfod named the program's $napp locations"
	else
		fail "the account says debuginfod named the program's locations"
		sed 's/^/  /' "$TMP/s6.err"
	fi
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=
	# the server down: the frames it would have named stay as they were
	DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$TMP/dcache2 \
		sfp symbolize -i "$RAW" -o "$TMP/down.pb.gz" --debuginfod-timeout 10 2> "$TMP/s7.err"
	rc=$?
	if [ $rc = 0 ] && grep -q "build-id $ID ($PROG) not found: $nraw locations" "$TMP/s7.err"; then
		pass "debuginfod down: exit 0, the build-id said"
	else
		fail "debuginfod down: exit 0, the build-id said (rc $rc)"
		sed 's/^/  /' "$TMP/s7.err"
	fi
else
	fail "debuginfod on 127.0.0.1 serves the debug file"
	for c in 1 2 3; do fail "debuginfod check $c (no server)"; done
fi

# --- inputs that are not profiles ---------------------------------------------
printf 'not a profile at all' > "$TMP/junk"
check_rc "junk: exit 1" 1 $SFPROF symbolize -i "$TMP/junk" -o "$TMP/o1"
head -c 200 "$RAW" > "$TMP/cut.pb.gz"
check_rc "a gzip stream cut short: exit 1" 1 $SFPROF symbolize -i "$TMP/cut.pb.gz" -o "$TMP/o2"
if grep -q 'cut.pb.gz.*not a whole gzip stream' "$TMP/stderr" 2>/dev/null ||
   $SFPROF symbolize -i "$TMP/cut.pb.gz" -o "$TMP/o2" 2>&1 | grep -q 'cut.pb.gz: .*not a whole gzip stream'; then
	pass "a gzip stream cut short: the file and why named"
else
	fail "a gzip stream cut short: the file and why named"
fi
# valid protobuf, a location whose mapping is not in the profile
printf 'string_table: ""\nlocation { id: 1 mapping_id: 7 address: 4096 }\n' |
	protoc --proto_path="$PROTO/pprof" --encode perftools.profiles.Profile \
		"$PROTO/pprof/profile.proto" > "$TMP/badmap.pb"
$SFPROF symbolize -i "$TMP/badmap.pb" -o "$TMP/o3" > /dev/null 2> "$TMP/s8.err"
rc=$?
if [ $rc = 1 ] && grep -q 'badmap.pb: neither a pprof profile (.*mapping.*) nor an OTLP' "$TMP/s8.err" &&
   [ ! -e "$TMP/o3" ]; then
	pass "a location of a mapping that does not exist: exit 1, said, no output"
else
	fail "a location of a mapping that does not exist: exit 1, said, no output (rc $rc)"
	sed 's/^/  /' "$TMP/s8.err"
fi
: > "$TMP/empty"
check_rc "an empty file: exit 1" 1 $SFPROF symbolize -i "$TMP/empty" -o "$TMP/o4"
