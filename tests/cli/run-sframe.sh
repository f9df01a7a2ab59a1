#!/bin/sh
# sfprof sframe dump / check against real tools: the shared vectors are
# covered by the unit test test-sframe-vectors; here the hand-built
# AArch64/s390x/big-endian fixtures against objdump's dumps of them (or of
# their v1 twins) made at test time, real objects and executables built
# with this machine's GNU as (--gsframe) compared to its objdump --sframe,
# the PT_GNU_SFRAME fall-back, and check's exit codes.
# checks: 29
. "$(dirname "$0")/test-subr.sh"
DATA=${SFP_TEST_DATA:-tests/data}/sframe

# 1. Hand-built fixtures (tests/data/sframe), judged by this machine's
# objdump at test time (the recipe and what it cannot dump: mk-dump.sh).
# objdump 2.40 dumps the v1 sections whole; the v2/v3 ones are compared
# with its dump of their v1 twin, the "Version:"/"Flags:" lines being those
# binutils 2.45/2.46 printed in the shared vectors; s390x only in what 2.40
# reads the same way from the twin.
VEC=${SFP_TEST_VECTORS:-../shared/testdata/sframe-vectors}
# vec_header FILE: the Version and Flags lines of a vector's objdump text.
vec_header() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["groundtruth"])' "$1" |
		sed -n '/^    Version:/,/^    Num FDEs:/p' | sed '$d' | grep -v '^    CFA fixed'
}
# with_header DUMP HEADER: DUMP with its Version and Flags lines replaced.
with_header() {
	sed -n '1,/^    Version:/p' "$1" | sed '$d'
	cat "$2"
	sed -n '/^    Num FDEs:/,$p' "$1"
}
# structure: what a dump says independently of the ABI's offsets.
structure() {
	awk '/Num F|func idx/ { print; next }
	     /^    [0-9a-f]+  / { print $1, substr($2, 1, 2) }' "$1"
}
DUMP="sh $DATA/mk-dump.sh"
if ! command -v objdump >/dev/null || ! objdump --help 2>/dev/null | grep -q -- --sframe; then
	for t in aarch64-v1-le aarch64-v1-be "aarch64-v1-le --section-addr decimal" \
		aarch64-v3-le aarch64-v2-be aarch64-v3-be s390x-v2-be; do
		skip "sframe dump fixture $t vs objdump" "objdump without --sframe"
	done
elif ! $DUMP "$DATA/aarch64-v1-le.sframe" > "$TMP/v1le.exp" 2> "$TMP/v1le.err" ||
     ! $DUMP "$DATA/aarch64-v1-be.sframe" > "$TMP/v1be.exp" 2> "$TMP/v1be.err" ||
     ! $DUMP "$DATA/aarch64-v1-le.sframe" 65536 > "$TMP/v1dec.exp" 2> "$TMP/v1dec.err" ||
     ! $DUMP "$DATA/s390x-v1-be.sframe" > "$TMP/s390v1.exp" 2> "$TMP/s390v1.err"; then
	for t in aarch64-v1-le aarch64-v1-be "aarch64-v1-le --section-addr decimal" \
		aarch64-v3-le aarch64-v2-be aarch64-v3-be s390x-v2-be; do
		fail "sframe dump fixture $t vs objdump: objdump failed on a v1 fixture"
	done
	cat "$TMP"/*.err | head -5 | sed 's/^/  /'
else
	for f in aarch64-v1-le aarch64-v1-be; do
		sfp sframe dump --section-addr 0x10000 "$DATA/$f.sframe" > "$TMP/$f.out" 2>&1
	done
	check_eq "sframe dump fixture aarch64-v1-le == objdump" "$TMP/v1le.exp" "$TMP/aarch64-v1-le.out"
	check_eq "sframe dump fixture aarch64-v1-be == objdump (foreign byte order)" "$TMP/v1be.exp" "$TMP/aarch64-v1-be.out"
	sfp sframe dump --section-addr 65536 "$DATA/aarch64-v1-le.sframe" > "$TMP/dec.out" 2>&1
	check_eq "sframe dump --section-addr decimal == objdump" "$TMP/v1dec.exp" "$TMP/dec.out"
	# v2 with FUNC_START_PCREL: binutils 2.45's header; v3: 2.46's.
	vec_header "$VEC/cfi-sframe-common-1-2.45.json" > "$TMP/h2.45"
	vec_header "$VEC/cfi-sframe-common-1-2.46.json" > "$TMP/h2.46"
	for f in aarch64-v3-le:2.46 aarch64-v2-be:2.45 aarch64-v3-be:2.46; do
		n=${f%:*} bu=${f#*:}
		with_header "$TMP/v1le.exp" "$TMP/h$bu" > "$TMP/$n.exp"
		sfp sframe dump --section-addr 0x10000 "$DATA/$n.sframe" > "$TMP/$n.out" 2>&1
		if [ "$(grep -c '' "$TMP/h$bu")" -lt 2 ]; then
			fail "sframe dump fixture $n: no Version/Flags lines in binutils $bu's vector cfi-sframe-common-1"
		else
			check_eq "sframe dump fixture $n == objdump 2.40 of its v1 twin, header lines of binutils $bu" \
				"$TMP/$n.exp" "$TMP/$n.out"
		fi
	done
	sfp sframe dump --section-addr 0x10000 "$DATA/s390x-v2-be.sframe" > "$TMP/s390.out" 2>&1
	structure "$TMP/s390v1.exp" > "$TMP/s390.exp.st"
	structure "$TMP/s390.out" > "$TMP/s390.out.st"
	if [ "$(grep -c '' "$TMP/s390.exp.st")" -lt 10 ]; then
		fail "sframe dump fixture s390x-v2-be: objdump's dump of s390x-v1-be has no rows"
	else
		check_eq "sframe dump fixture s390x-v2-be: functions and rows as objdump reads its v1 twin" \
			"$TMP/s390.exp.st" "$TMP/s390.out.st"
	fi
fi

# 2. Real objects and executables from this machine's toolchain.
cat > "$TMP/p.c" <<'CEOF'
#include <stdio.h>
static int f(int x) { volatile int a[10]; a[x % 10] = x; return a[(x + 1) % 10]; }
int g(int x) { return f(x) + printf("%d\n", x); }
int main(int argc, char **argv) { (void)argv; return g(argc); }
CEOF
# (what the tools offer is asked of their --help; a tool that offers it
# and then fails is a FAIL with its message)
if ! command -v objdump >/dev/null || ! objdump --help 2>/dev/null | grep -q -- --sframe; then
	skip "sframe dump vs objdump" "objdump without --sframe"
elif ! as --help 2>/dev/null | grep -q -- --gsframe; then
	skip "sframe dump vs objdump" "assembler without --gsframe"
elif ! gcc -O2 -Wa,--gsframe -c "$TMP/p.c" -o "$TMP/p.o" 2> "$TMP/gsf.err"; then
	fail "sframe dump vs objdump: gcc -Wa,--gsframe failed: $(head -1 "$TMP/gsf.err")"
else
	gcc -O2 -Wa,--gsframe "$TMP/p.c" -o "$TMP/p"
	gcc -O0 -fno-omit-frame-pointer -Wa,--gsframe "$TMP/p.c" -o "$TMP/pfp"
	for b in p.o p pfp; do
		objdump --sframe "$TMP/$b" | sed '1,/Contents of the SFrame section/d' > "$TMP/$b.exp"
		sfp sframe dump "$TMP/$b" > "$TMP/$b.out" 2>&1
		if [ -s "$TMP/$b.exp" ]; then
			check_eq "sframe dump $b == objdump --sframe" "$TMP/$b.exp" "$TMP/$b.out"
		else
			fail "objdump printed no SFrame section for $b"
		fi
	done
	# Section renamed: found through PT_GNU_SFRAME instead.
	if objcopy --rename-section .sframe=.notsframe "$TMP/p" "$TMP/p-phdr" 2> "$TMP/oc.err"; then
		sfp sframe dump "$TMP/p-phdr" > "$TMP/p-phdr.out" 2>&1
		check_eq "sframe dump via PT_GNU_SFRAME" "$TMP/p.exp" "$TMP/p-phdr.out"
	else
		fail "sframe dump via PT_GNU_SFRAME: objcopy --rename-section failed: $(head -1 "$TMP/oc.err")"
	fi
	check_rc "sframe check ELF executable and object" 0 "$SFPROF" sframe check "$TMP/p" "$TMP/p.o"
	# An ELF with an empty .sframe section: nothing to print (as objdump),
	# but invalid for check: a section holds at least its header (no
	# tool writes one empty; linkers drop empty sections).
	: > "$TMP/empty.bin"
	gcc -O2 -c "$TMP/p.c" -o "$TMP/pe.o"
	if objcopy --add-section .sframe="$TMP/empty.bin" "$TMP/pe.o" "$TMP/pe2.o" 2> "$TMP/oc.err"; then
		sfp sframe dump "$TMP/pe2.o" > "$TMP/pe2.out" 2>&1
		check_eq "sframe dump of an ELF with an empty .sframe prints nothing" "$TMP/empty.bin" "$TMP/pe2.out"
		check_rc "sframe check ELF with an empty .sframe exits 1" 1 "$SFPROF" sframe check "$TMP/pe2.o"
	else
		fail "empty .sframe in ELF: objcopy --add-section failed: $(head -1 "$TMP/oc.err")"
	fi
	# An ELF without any SFrame table is invalid input for check.
	gcc -O2 "$TMP/p.c" -o "$TMP/nosf"
	objcopy --remove-section .sframe "$TMP/nosf" 2> "$TMP/oc.err" ||
		fail "objcopy --remove-section failed: $(head -1 "$TMP/oc.err")"
	check_rc "sframe check ELF without .sframe exits 1" 1 "$SFPROF" sframe check "$TMP/nosf"
fi

# 3. check: exit codes and messages.
check_rc "sframe check fixtures" 0 "$SFPROF" sframe check "$DATA/aarch64-v3-le.sframe" "$DATA/s390x-v2-be.sframe"
head -c 40 "$DATA/aarch64-v3-le.sframe" > "$TMP/trunc.sframe"
check_rc "sframe check truncated section exits 1" 1 "$SFPROF" sframe check "$TMP/trunc.sframe"
sfp -e 1 sframe check "$TMP/trunc.sframe" > "$TMP/trunc.out" 2>&1
if grep -q "trunc.sframe: SFrame offset 0x" "$TMP/trunc.out"; then
	pass "sframe check names file and offset"
else
	fail "sframe check names file and offset"
	sed 's/^/  /' "$TMP/trunc.out"
fi
printf 'hello, world, this is not an SFrame section' > "$TMP/junk"
check_rc "sframe check junk exits 1" 1 "$SFPROF" sframe check "$TMP/junk"
check_rc "sframe check mixed valid+invalid exits 1" 1 "$SFPROF" sframe check "$DATA/aarch64-v3-le.sframe" "$TMP/junk"
check_rc "sframe check missing file exits 2" 2 "$SFPROF" sframe check "$TMP/does-not-exist"
check_rc "sframe check without files exits 2" 2 "$SFPROF" sframe check
check_rc "sframe check --help" 0 "$SFPROF" sframe check --help
check_rc "sframe dump --help" 0 "$SFPROF" sframe dump --help
check_rc "sframe dump bad --section-addr exits 2" 2 "$SFPROF" sframe dump --section-addr 12z "$DATA/aarch64-v3-le.sframe"
check_rc "sframe dump corrupt exits 1" 1 "$SFPROF" sframe dump "$TMP/junk"
check_rc "sframe dump missing file exits 2" 2 "$SFPROF" sframe dump "$TMP/does-not-exist"
: > "$TMP/empty.sframe"
sfp sframe dump "$TMP/empty.sframe" > "$TMP/empty.out" 2>&1
check_eq "sframe dump of an empty section prints nothing" "$TMP/empty.sframe" "$TMP/empty.out"
sfp sframe dump --json "$DATA/aarch64-v3-le.sframe" > "$TMP/j.out" 2>&1
if grep -q '"abi": "aarch64_le"' "$TMP/j.out" && grep -q '"pauth_key": "B"' "$TMP/j.out" &&
   grep -q '"flags": \["mangled_ra"\]' "$TMP/j.out"; then
	pass "sframe dump --json"
else
	fail "sframe dump --json"
	head -20 "$TMP/j.out" | sed 's/^/  /'
fi
