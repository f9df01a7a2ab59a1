#!/bin/sh
# Install the Debian packages sfprof needs, and only those that are missing.
# Run by `make deps` (and so by `make demo` and `make check`).  A no-op when
# everything is present.  `sh mk/deps.sh aarch64` (`make deps ARCH=aarch64`,
# `make check-aarch64`) adds what the arm64 cross build links against.
set -eu

# Build: compilers and libraries the library links against.
PKGS="make gcc clang pkg-config libelf-dev zlib1g-dev libzstd-dev liblzma-dev libdeflate-dev"
# Fuzzing (libFuzzer ships with clang's runtime) and sanitizers.
PKGS="$PKGS libclang-rt-14-dev"
# Peers measured in tests and benchmarks: libsframe (binutils-dev),
# libunwind, perf, gdb.
PKGS="$PKGS binutils binutils-dev libunwind-dev linux-perf gdb"
# Symbolizer: libdw (DWARF lines/inlines), libiberty (demangling), eu-addr2line;
# libbz2-dev: libdw.a needs libbz2.a (the CLI links archives).
PKGS="$PKGS libdw-dev libiberty-dev elfutils libbz2-dev"
# debuginfod: the client's header (the library itself is dlopen()ed at run
# time), and the server the tests fetch a stripped program's debug file from.
PKGS="$PKGS libdebuginfod-dev debuginfod"
# Browser tests of the flame graph and speedscope export: headless
# Chromium driven by playwright-core (npm, tests/browser/setup.sh).
PKGS="$PKGS chromium nodejs"
# Export tests: protoc decodes pprof output, `go tool pprof` reads it, node
# checks the pprof and Firefox Profiler output.
PKGS="$PKGS protobuf-compiler golang-go nodejs"
# sfprof agent's sinks: libcurl (HTTP pushes to Pyroscope and OTLP),
# protobuf-c (its protoc-c generates the C of the push messages at build
# time, the library encodes and decodes them).
PKGS="$PKGS libcurl4-openssl-dev protobuf-c-compiler libprotobuf-c-dev"
# --call-graph bpf-defer: libbpf, bpftool (vmlinux.h, skeleton); clang/llvm
# above compile the BPF object.
PKGS="$PKGS libbpf-dev bpftool llvm"
# AArch64: the cross toolchain whose gas --gsframe (binutils 2.40, SFrame
# v1) the CFI converter is compared with, its libc, and qemu-user to run
# the programs (tests/unit/test-cfi-gas-aarch64.c).  ~100 MB; installing
# them took 77 s here (1 Dec 2026, 2 shared cores), so always.
PKGS="$PKGS gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++6-arm64-cross qemu-user"
# Offline AArch64 unwinding is checked against gdb reading qemu-aarch64's
# gdb stub (tests/unit/test-unwind-gdb-aarch64.c).
PKGS="$PKGS gdb-multiarch"
# The arm64 cross build (make ARCH=aarch64): the libraries the library
# links against, as arm64 multiarch packages.  apt keeps multiarch
# libraries of both architectures at one version, so this may upgrade the
# amd64 ones too.  All of them exist for arm64; only bpf-defer is left out
# of that build (its BPF object needs an arm64 kernel's BTF).
FOREIGN_ARCH=
if [ "${1:-}" = aarch64 ]; then
	FOREIGN_ARCH=arm64
	PKGS="$PKGS libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 libdeflate-dev:arm64"
	PKGS="$PKGS liblzma-dev:arm64 libdw-dev:arm64 libiberty-dev:arm64"
	# sfprof archive's bzip2 (the CLI links it)
	PKGS="$PKGS libbz2-dev:arm64"
	# the delivery sinks (src/agent): HTTP and protobuf
	PKGS="$PKGS libcurl4-openssl-dev:arm64 libprotobuf-c-dev:arm64"
	# the agent's pull listener
	PKGS="$PKGS libmicrohttpd-dev:arm64"
fi
# sfprof archive writes its tar.bz2 itself through libbz2 (libbz2-dev
# above); tests compare it with GNU tar's and unpack it with tar and bzip2.
PKGS="$PKGS tar bzip2"
# off-CPU tests: the reference offcputime program (sched_switch, kstack/ustack).
PKGS="$PKGS bpftrace"
# sfprof agent: the HTTP listener for pull delivery.
PKGS="$PKGS libmicrohttpd-dev"
# Agent tests: an independent parser of its /metrics (Prometheus text).
PKGS="$PKGS python3-prometheus-client"
# perf's names on perf's files (tests/cli/run-perf-inline.sh): libc's
# debug file, whose .symtab and DWARF perf and sfprof name libc frames
# and their "(inlined)" lines by.
PKGS="$PKGS libc6-dbg"
# The real-programs suite (tests/cli/run-real-programs.sh): programs nobody
# here wrote, recorded by sfprof and perf (gcc, golang-go, nodejs above;
# CPython comes from the machine's pyenv), and the debug file of glibc,
# whose symbols (clone3, ld.so's _start) name the threads' outermost
# frames for the independent check (nm).
PKGS="$PKGS openjdk-17-jdk-headless sqlite3 xz-utils libc6-dbg"
# Extra packages named by the caller (e.g. later components).
PKGS="$PKGS ${SFP_EXTRA_PKGS:-}"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "deps: not root; run: apt-get install$missing" >&2
		exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$FOREIGN_ARCH" ] &&
   ! dpkg --print-foreign-architectures | grep -qx "$FOREIGN_ARCH"; then
	$SUDO dpkg --add-architecture "$FOREIGN_ARCH"
fi
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
