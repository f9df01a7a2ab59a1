#!/bin/sh
# Recipe of aarch64-v1-le.dump: the text GNU objdump 2.40 prints for the
# raw section aarch64-v1-le.sframe placed at address 0x10000 (as the test
# dumps it with --section-addr 0x10000).  objdump reads SFrame only inside
# an ELF, so the blob is added as .sframe to an empty AArch64 object.
# Needs binutils-aarch64-linux-gnu (the aarch64 as/objcopy); plain
# objdump (x86-64 Debian) prints the same text.  Run it here:
#   sh mk-v1-dump.sh > aarch64-v1-le.dump
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
: > "$t/empty.s"
aarch64-linux-gnu-as "$t/empty.s" -o "$t/empty.o"
aarch64-linux-gnu-objcopy --add-section .sframe=aarch64-v1-le.sframe \
	--set-section-flags .sframe=alloc,contents,readonly \
	--change-section-address .sframe=0x10000 "$t/empty.o" "$t/wrapped.o"
# From the header on (objdump first names the file and the section).
objdump --sframe=.sframe "$t/wrapped.o" | sed -n '/^  Header :/,$p'
