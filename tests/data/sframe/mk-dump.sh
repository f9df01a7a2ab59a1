#!/bin/sh
# Recipe of the expected `sframe dump` text of a raw section: what this
# machine's GNU objdump --sframe prints for SECTION placed at ADDR
# (default 0x10000, as tests/cli/run-sframe.sh dumps it), from the
# "  Header :" line on (objdump first names the file and the section).
# objdump reads SFrame only inside an ELF: the blob becomes the .sframe
# section of an ELF object of the section's own byte order (generic
# elf64-little / elf64-big, so plain x86-64 binutils do; the SFrame
# header names the ABI).  Run at test time by run-sframe.sh; no dump is
# committed.
#   sh mk-dump.sh SECTION [ADDR]
#
# Which fixtures a tool here can dump (Debian 12: binutils 2.40, and the
# same 2.40 in binutils-aarch64-linux-gnu / binutils-s390x-linux-gnu):
#   aarch64-v1-le, aarch64-v1-be   yes, whole text: 2.40 dumps SFrame v1.
#   aarch64-v2-be, aarch64-v3-le, aarch64-v3-be
#                                  no: 2.40 refuses v2 and v3 ("file in
#       wrong format"); binutils 2.45/2.46 are not in Debian 12.  The test
#       compares them with 2.40's dump of their v1 twin (same FDEs and
#       FREs), whose "Version:" and "Flags:" lines it replaces with the
#       lines binutils 2.45 (v2) and 2.46 (v3) printed for real sections in
#       /work/shared/testdata/sframe-vectors.  No tool here prints the rows
#       of an AArch64 v2/v3 section: whether 2.45/2.46 print them as 2.40
#       does (`u` for an untracked RA, `[s]`, `pauth = B key`) is not
#       known here -- the check asserts that sfprof decodes the same
#       content from every encoding, with 2.40 as the judge of the
#       content.
#   s390x-v2-be                    no: s390x SFrame (ABI 4, CFA words
#       w*8+160, register-held FP/RA, RA padding) came with binutils 2.45,
#       and the vectors are x86-64 only.  No line of its dump can be
#       produced here, so there is no golden: the test compares only what
#       2.40 reads the same way from its v1 twin s390x-v1-be (header
#       counts, functions' pc, size and [m], each row's start address and
#       CFA base register); the s390x meaning of the offsets is asserted
#       by tests/unit/test-sframe-decode.c from the format description.
set -eu
sec=${1:?usage: mk-dump.sh SECTION [ADDR]}
addr=${2:-0x10000}
case $(od -An -tx1 -N2 "$sec" | tr -d ' \n') in
e2de) e=little ;;
dee2) e=big ;;
*)	echo "mk-dump.sh: $sec: offset 0: no SFrame magic 0xdee2" >&2
	exit 1 ;;
esac
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
objcopy -I binary -O "elf64-$e" \
	--rename-section .data=.sframe,alloc,contents,readonly "$sec" "$t/a.o"
objcopy -I "elf64-$e" --change-section-address .sframe="$addr" "$t/a.o" "$t/b.o"
objdump --sframe=.sframe "$t/b.o" > "$t/out"
if ! grep -q '^  Header :' "$t/out"; then
	echo "mk-dump.sh: objdump --sframe printed no SFrame header for $sec" >&2
	exit 1
fi
sed -n '/^  Header :/,$p' "$t/out"
