#!/bin/sh
# sfprof sframe dump of AArch64 SFrame made by GNU as: the CFI corpus
# (tests/data/cfi/corpus.c, + corpus-aarch64.S for the executables) built
# with Debian's aarch64-linux-gnu-gcc -Wa,--gsframe (binutils 2.40: SFrame
# v1) in four ways, objects and linked executables, each dump equal to
# aarch64-linux-gnu-objdump --sframe's.  The cross toolchain comes from
# mk/deps.sh: its absence is a failure.
# checks: 9
. "$(dirname "$0")/test-subr.sh"
CFI=${SFP_TEST_DATA:-tests/data}/cfi
X=aarch64-linux-gnu-

if ! ${X}gcc --version > /dev/null 2>&1 || ! ${X}objdump --help 2>/dev/null | grep -q -- --sframe; then
	fail "aarch64 cross toolchain with objdump --sframe (mk/deps.sh installs it)"
	exit 0
fi
n=0
for v in "-O2" "-O0 -fno-omit-frame-pointer" "-O2 -mbranch-protection=pac-ret+leaf" \
	"-O2 -mbranch-protection=pac-ret+leaf+b-key"; do
	n=$((n + 1))
	if ! ${X}gcc $v -w -Wa,--gsframe -c "$CFI/corpus.c" -o "$TMP/c$n.o" ||
	   ! ${X}gcc $v -w -Wa,--gsframe "$CFI/corpus.c" "$CFI/corpus-aarch64.S" -o "$TMP/e$n"; then
		fail "build the corpus with $v"
		fail "build the corpus with $v (executable)"
		continue
	fi
	for f in c$n.o e$n; do
		${X}objdump --sframe "$TMP/$f" | sed '1,/Contents of the SFrame section/d' > "$TMP/$f.exp"
		sfp sframe dump "$TMP/$f" > "$TMP/$f.out"
		if [ -s "$TMP/$f.exp" ]; then
			check_eq "aarch64 sframe dump $f ($v) == objdump --sframe" "$TMP/$f.exp" "$TMP/$f.out"
		else
			fail "objdump printed no SFrame section for $f ($v)"
		fi
	done
done
# The pac-ret builds really have signed rows and the B key to print.
if grep -q '\[s\]' "$TMP/e3.exp" && grep -q 'pauth = B key' "$TMP/e4.exp"; then
	pass "aarch64 pac-ret dumps carry mangled-RA rows and the B key"
else
	fail "aarch64 pac-ret dumps carry mangled-RA rows and the B key"
fi
