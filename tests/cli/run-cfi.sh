#!/bin/sh
# sfprof sframe build / cache against real binaries of this machine.
# checks: 19
. "$(dirname "$0")/test-subr.sh"

CORPUS=$SFP_TEST_DATA/cfi
export SFPROF_CACHE_DIR="$TMP/cache"

# A program of our own (the CFI corpus), built without .sframe.
if gcc -O2 -o "$TMP/prog" "$CORPUS/corpus.c" "$CORPUS/corpus-asm.S" 2>"$TMP/cc.err"; then
	check_rc "build -o writes a table file" 0 \
		"$SFPROF" sframe build -o "$TMP/prog.sframe" "$TMP/prog"
	# dump prints each function at its ELF address: main must be there.
	main=$(nm "$TMP/prog" | awk '$3 == "main" { print $1 }' | sed 's/^0*//')
	sfp sframe dump "$TMP/prog.sframe" > "$TMP/dump.txt" 2>&1
	if grep -q "pc = 0x$main, " "$TMP/dump.txt"; then
		pass "dump of the table shows main at 0x$main"
	else
		fail "dump of the table shows main at 0x$main"
		head -20 "$TMP/dump.txt" | sed 's/^/  /'
	fi
	grep -q "SFRAME_VERSION_3" "$TMP/dump.txt" && pass "default version is 3" ||
		fail "default version is 3"

	sfp sframe build --version 2 -o "$TMP/prog2.sframe" "$TMP/prog" &&
	sfp sframe dump "$TMP/prog2.sframe" | has "SFRAME_VERSION_2" &&
		pass "--version 2" || fail "--version 2"

	# --add-section: the copy still runs and carries the same table.
	if sfp sframe build --add-section "$TMP/prog.sf" "$TMP/prog"; then
		"$TMP/prog" > "$TMP/run1.txt" 2>&1
		"$TMP/prog.sf" > "$TMP/run2.txt" 2>&1
		check_eq "--add-section copy runs like the original" \
			"$TMP/run1.txt" "$TMP/run2.txt"
		sfp sframe dump "$TMP/prog.sf" > "$TMP/dump2.txt" 2>&1
		check_eq "dump of the copy equals dump of -o" "$TMP/dump.txt" \
			"$TMP/dump2.txt"
	else
		fail "--add-section"
	fi

	# --stats: the counts add up and name the skip reasons.
	sfp sframe build --stats --version 2 "$TMP/prog" > "$TMP/st.txt"
	fdes=$(awk '/^  FDEs:/ { print $2 }' "$TMP/st.txt")
	emitted=$(awk '/^  emitted:/ { print $2 }' "$TMP/st.txt")
	skipped=$(awk '/^  skipped:/ { print $2 }' "$TMP/st.txt")
	if [ -n "$fdes" ] && [ $((emitted + skipped)) -eq "$fdes" ] &&
	   grep -q "cfa-register" "$TMP/st.txt" && grep -q "text bytes:" "$TMP/st.txt"; then
		pass "--stats: $emitted emitted + $skipped skipped = $fdes FDEs"
	else
		fail "--stats"
		sed 's/^/  /' "$TMP/st.txt"
	fi
else
	# (gcc builds every test program: failing here is a FAIL)
	fail "build corpus program: gcc failed: $(head -1 "$TMP/cc.err")"
fi

# A system library: the dump of its table decodes and has PLT entries.
LIBC=/lib/x86_64-linux-gnu/libc.so.6
if [ -r "$LIBC" ]; then
	sfp sframe build -o "$TMP/libc.sframe" "$LIBC" &&
	sfp sframe check "$TMP/libc.sframe" > /dev/null 2>&1 &&
		pass "libc table passes sframe check" || fail "libc table passes sframe check"
	sfp sframe dump "$TMP/libc.sframe" | has 'STARTPC\[m\]' &&
		pass "libc table has PCMASK PLT entries" || fail "libc table has PCMASK PLT entries"
fi

# Errors: usage 2, invalid input 1.
check_rc "no argument is a usage error" 2 "$SFPROF" sframe build
check_rc "--version 4 is a usage error" 2 "$SFPROF" sframe build --version 4 /bin/true
check_rc "missing file is an I/O error" 2 "$SFPROF" sframe build /nonexistent
printf 'not an ELF file\n' > "$TMP/junk"
check_rc "non-ELF input is invalid" 1 "$SFPROF" sframe build "$TMP/junk"
check_rc "build --help" 0 "$SFPROF" sframe build --help

# The cache commands.
check_rc "cache list on an empty cache" 0 "$SFPROF" sframe cache list
sfp sframe cache dir | has -x "$SFPROF_CACHE_DIR" &&
	pass "cache dir follows SFPROF_CACHE_DIR" || fail "cache dir follows SFPROF_CACHE_DIR"
mkdir -p "$SFPROF_CACHE_DIR"
cp "$TMP/libc.sframe" "$SFPROF_CACHE_DIR/00112233-g1-v3.sframe" 2>/dev/null
sfp sframe cache list > "$TMP/list.txt"
grep -q " ok .*00112233-g1-v3.sframe" "$TMP/list.txt" && grep -q "^1 table in" "$TMP/list.txt" &&
	pass "cache list shows the entry" || { fail "cache list shows the entry"; sed 's/^/  /' "$TMP/list.txt"; }
sfp sframe cache clear | has "removed 1 file" &&
	pass "cache clear" || fail "cache clear"
check_rc "cache with a bad subcommand" 2 "$SFPROF" sframe cache frob
