#!/bin/sh
# `sfprof sframe encode` against the real CLI and the shared vectors:
#   dump --json X | encode -o Y -   then   dump --json Y  ==  the JSON again
# (the header too where the version and encoding are kept), the objdump-style
# dump of Y equals X's, v2 refusals, --raw/--section-addr, and error paths.
# checks: 19
. "$(dirname "$0")/test-subr.sh"

BLOB=$SFP_BUILD/tests/progs/sframe-enc-blob
V=$SFP_TEST_VECTORS

if [ ! -d "$V" ]; then
	skip_rest "sframe encode CLI" "no vectors at $V"
fi

# The "functions" part of a JSON dump (the header has counts and flags
# that legitimately change with the version).
funcs() { sed -n '/^  "functions"/,$p' "$1"; }

n=0 bad=0 v2no=0 same_hdr=0
for vec in "$V"/*.json; do
	name=$(basename "$vec" .json)
	addr=$("$BLOB" "$vec" "$TMP/$name.bin") || { fail "blob $name"; continue; }
	[ -s "$TMP/$name.bin" ] || continue	# the linker dropped it
	n=$((n + 1))
	sfp sframe dump --json --section-addr "$addr" "$TMP/$name.bin" \
		> "$TMP/a.json" || { fail "dump --json $name"; bad=$((bad + 1)); continue; }
	# The version the vector was written in (v1 → 3, the default).
	ver=$(sed -n 's/^    "version": \([0-9]\),$/\1/p' "$TMP/a.json")
	pcrel=no
	grep -q '"fde_func_start_pcrel"' "$TMP/a.json" && pcrel=yes
	[ "$ver" = 1 ] && ver=3

	if ! sfp sframe dump --json --section-addr "$addr" \
		"$TMP/$name.bin" | sfp sframe encode -o "$TMP/y.sft" - \
		2> "$TMP/err"; then
		fail "encode $name"; sed 's/^/  /' "$TMP/err"
		bad=$((bad + 1)); continue
	fi
	sfp sframe dump --json "$TMP/y.sft" > "$TMP/b.json"
	if [ "$pcrel" = yes ]; then
		# Same version, same encoding: the whole JSON is equal.
		if cmp -s "$TMP/a.json" "$TMP/b.json"; then
			same_hdr=$((same_hdr + 1))
		else
			fail "json round trip $name"
			diff -u "$TMP/a.json" "$TMP/b.json" | head -20 | sed 's/^/  /'
			bad=$((bad + 1)); continue
		fi
		# ... and so is the objdump-style dump.
		sfp sframe dump --section-addr "$addr" "$TMP/$name.bin" \
			> "$TMP/a.txt"
		sfp sframe dump "$TMP/y.sft" > "$TMP/b.txt"
		if ! cmp -s "$TMP/a.txt" "$TMP/b.txt"; then
			fail "text dump of re-encoded $name"
			diff -u "$TMP/a.txt" "$TMP/b.txt" | head -20 | sed 's/^/  /'
			bad=$((bad + 1)); continue
		fi
	else
		funcs "$TMP/a.json" > "$TMP/a.f"
		funcs "$TMP/b.json" > "$TMP/b.f"
		if ! [ -s "$TMP/a.f" ] || ! cmp -s "$TMP/a.f" "$TMP/b.f"; then
			fail "json round trip (functions) $name"
			diff -u "$TMP/a.f" "$TMP/b.f" | head -20 | sed 's/^/  /'
			bad=$((bad + 1)); continue
		fi
	fi

	# Version 2 refuses what only v3 can say; otherwise it round-trips.
	if grep -q -e '"fde_type": "flex"' -e '"signal": true' \
		-e '"ra_undefined"' "$TMP/a.json"; then
		sfp -e 1 sframe encode --version 2 -o "$TMP/y2.sft" "$TMP/a.json" \
			2> "$TMP/err"
		rc=$?
		if [ $rc -ne 1 ] || ! grep -q "need.* version 3" "$TMP/err"; then
			fail "v2 refusal $name (exit $rc)"; sed 's/^/  /' "$TMP/err"
			bad=$((bad + 1)); continue
		fi
		v2no=$((v2no + 1))
	else
		sfp sframe encode --version 2 -o "$TMP/y2.sft" "$TMP/a.json" &&
		sfp sframe dump --json "$TMP/y2.sft" > "$TMP/c.json" &&
		funcs "$TMP/a.json" > "$TMP/a.f" && funcs "$TMP/c.json" > "$TMP/c.f" &&
		cmp -s "$TMP/a.f" "$TMP/c.f" || {
			fail "v2 round trip $name"; bad=$((bad + 1)); continue; }
	fi
done
if [ $bad -eq 0 ] && [ $n -gt 0 ] && [ $v2no -gt 0 ]; then
	pass "encode CLI round trip of $n vectors ($same_hdr with identical JSON and text dumps, $v2no refused as v2)"
else
	fail "encode CLI round trip: $bad of $n failed, $v2no v2 refusals"
fi

# --raw writes the bare section, encoded for --section-addr.
vec=$V/cfi-sframe-x86_64-ra-undefined-flex-1-2.46.json
addr=$("$BLOB" "$vec" "$TMP/orig.bin")
sfp sframe dump --json --section-addr "$addr" "$TMP/orig.bin" > "$TMP/o.json"
check_rc "encode --raw" 0 "$SFPROF" sframe encode --raw -o "$TMP/raw.bin" "$TMP/o.json"
check_eq "encode --raw reproduces binutils' bytes" "$TMP/orig.bin" "$TMP/raw.bin"
check_rc "encode --raw --section-addr" 0 "$SFPROF" sframe encode --raw \
	--section-addr 0x5000 -o "$TMP/raw5.bin" "$TMP/o.json"
sfp sframe dump --json --section-addr 0x5000 "$TMP/raw5.bin" > "$TMP/r5.json"
funcs "$TMP/o.json" > "$TMP/o.f"
funcs "$TMP/r5.json" > "$TMP/r5.f"
check_eq "functions keep their addresses at another section address" \
	"$TMP/o.f" "$TMP/r5.f"
if cmp -s "$TMP/raw.bin" "$TMP/raw5.bin"; then
	fail "section address changes the PC-relative starts"
else
	pass "section address changes the PC-relative starts"
fi
check_rc "encode to stdout" 0 sh -c "'$SFPROF' sframe encode --raw '$TMP/o.json' > '$TMP/stdout.bin'"
check_eq "encode to stdout writes the same bytes" "$TMP/raw.bin" "$TMP/stdout.bin"
# The table file (not --raw) through a pipe: it still records the address.
sfp sframe encode "$TMP/o.json" | cat > "$TMP/piped.sft"
sfp sframe dump --json "$TMP/piped.sft" > "$TMP/piped.json"
check_eq "table file written to a pipe" "$TMP/o.json" "$TMP/piped.json"

# Errors: invalid input exits 1 and names the place; usage/IO exits 2.
printf '{"format": "sfprof-sframe-json", "format_version": 1,\n  "header": {"abi": "amd64"' \
	> "$TMP/trunc.json"
check_rc "truncated JSON exits 1" 1 "$SFPROF" sframe encode -o "$TMP/x" "$TMP/trunc.json"
sed 's/"kind": "reg", "reg": 6/"kind": "bogus", "reg": 6/' "$TMP/o.json" > "$TMP/kind.json"
sfp -e 1 sframe encode -o "$TMP/x" "$TMP/kind.json" 2> "$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'functions\[0\]\.rows\[2\]\.cfa\.kind: unknown value "bogus"' "$TMP/err"; then
	pass "schema error names the JSON path"
else
	fail "schema error names the JSON path (exit $rc)"; sed 's/^/  /' "$TMP/err"
fi
sed 's/"start": 4198404,/"start": 4198401,/' "$TMP/o.json" > "$TMP/order.json"
sfp -e 1 sframe encode -o "$TMP/x" "$TMP/order.json" 2> "$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'functions\[0\]' "$TMP/err" &&
   grep -q 'row 2 starts at 0x401001, not after row 1' "$TMP/err"; then
	pass "row order error names the function and row"
else
	fail "row order error names the function and row (exit $rc)"; sed 's/^/  /' "$TMP/err"
fi
echo '{"format": "something-else"}' > "$TMP/other.json"
check_rc "foreign JSON exits 1" 1 "$SFPROF" sframe encode -o "$TMP/x" "$TMP/other.json"
check_rc "--version 4 exits 2" 2 "$SFPROF" sframe encode --version 4 -o "$TMP/x" "$TMP/o.json"
check_rc "missing input exits 2" 2 "$SFPROF" sframe encode -o "$TMP/x" "$TMP/nonexistent.json"
check_rc "unwritable output exits 2" 2 "$SFPROF" sframe encode -o "$TMP/no/such/dir/x" "$TMP/o.json"
check_rc "no arguments exits 2" 2 "$SFPROF" sframe encode
check_rc "--help exits 0" 0 "$SFPROF" sframe encode --help

# --merge-rows drops a row equal to the one before it; by default both stay.
cat > "$TMP/dup.json" <<'JSON'
{"format": "sfprof-sframe-json", "format_version": 1,
 "header": {"abi": "amd64", "section_addr": 4096},
 "functions": [{"start": 8192, "size": 8, "rows": [
  {"start": 8192, "cfa": {"kind": "reg", "reg": 7, "offset": 8}, "ra": {"kind": "cfa_deref", "offset": -8, "fixed": true}},
  {"start": 8196, "cfa": {"kind": "reg", "reg": 7, "offset": 8}, "ra": {"kind": "cfa_deref", "offset": -8, "fixed": true}}]}]}
JSON
sfp sframe encode -o "$TMP/dup.sft" "$TMP/dup.json" &&
	sfp sframe encode --merge-rows -o "$TMP/merged.sft" "$TMP/dup.json" &&
	sfp sframe dump "$TMP/dup.sft" > "$TMP/dup.txt" &&
	sfp sframe dump "$TMP/merged.sft" > "$TMP/merged.txt"
if grep -q 'Num FREs: 2' "$TMP/dup.txt" && grep -q 'Num FREs: 1' "$TMP/merged.txt"; then
	pass "rows kept as given; --merge-rows merges"
else
	fail "rows kept as given; --merge-rows merges"
fi
