# sfprof — build, test, install.
#
#   make            library (static + shared), the sfprof CLI
#   make deps       install missing Debian packages (apt-get)
#   make check      unit + CLI + fuzz-corpus tests, then all again under
#                   ASan+UBSan, and a clang -Werror build; last line is
#                   "N passed, N failed[, N skipped]"
#   make demo       build and run the main job
#   make bench      benchmarks against the peers (see bench/RESULTS.md)
#   make fuzz       libFuzzer binaries (clang) under build/fuzz-libfuzzer
#   make install PREFIX=/usr/local
#
# Variables: CC (gcc), BUILD (build), SAN=1 for sanitizers, V=1 verbose.

VERSION_MAJOR := 0
VERSION_MINOR := 1
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR)

ifeq ($(origin CC),default)
CC := gcc
endif
# ARCH=aarch64: cross-build into build/aarch64 with Debian's cross
# toolchain and arm64 multiarch libraries (`make deps ARCH=aarch64`);
# `make check-aarch64` runs its unit tests under qemu-aarch64.
ARCH ?=
ifeq ($(ARCH),aarch64)
CROSS ?= aarch64-linux-gnu-
CC := $(CROSS)gcc
AR := $(CROSS)ar
BUILD ?= build/aarch64
QEMU_RUN := qemu-aarch64 -L /usr/aarch64-linux-gnu
# --call-graph bpf-defer is left out: its BPF object is compiled against
# the running (x86-64) kernel's BTF, whose pt_regs is not arm64's.
NO_BPF := 1
else ifneq ($(ARCH),)
$(error ARCH=$(ARCH): only aarch64 can be cross-built)
endif
BUILD ?= build
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin

ifneq ($(V),1)
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter
OPT ?= -O2
CFLAGS ?= $(OPT) -g
BASE_CFLAGS := -std=gnu11 $(WARNINGS) -fPIC -fvisibility=hidden \
	-D_GNU_SOURCE -Iinclude -Isrc
BASE_CFLAGS += -I$(BUILD)/bpf
ifeq ($(SAN),1)
BASE_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -DSFP_DEBUG_BUILD
SAN_LDFLAGS := -fsanitize=address,undefined
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LIBS := -lelf -lzstd -llzma -lz -lpthread -ldl
LIBS += -ldw -liberty
ifneq ($(NO_BPF),1)
LIBS += -lbpf
endif
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)

# ---- sources: one folder per component, picked up automatically ----------
LIB_SRCS := $(sort $(wildcard src/*/*.c))
LIB_SRCS := $(filter-out %.bpf.c,$(LIB_SRCS))
ifeq ($(NO_BPF),1)
LIB_SRCS := $(filter-out src/bpf/loader.c src/bpf/records.c src/bpf/tables.c,$(LIB_SRCS))
else
LIB_SRCS := $(filter-out src/bpf/none.c,$(LIB_SRCS))
endif
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
CLI_SRCS := $(sort $(wildcard tools/sfprof/*.c))
CLI_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRCS))
TEST_SRCS := $(sort $(wildcard tests/unit/test-*.c))
ifeq ($(NO_BPF),1)
TEST_SRCS := $(filter-out tests/unit/test-bpf-tables.c,$(TEST_SRCS))
endif
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_HELPER_SRCS := $(sort $(wildcard tests/progs/*.c))
TEST_HELPER_BINS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(TEST_HELPER_SRCS))
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz-*.c))
FUZZ_BINS := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
BENCH_SRCS := $(sort $(wildcard bench/bench-*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

STATIC_LIB := $(BUILD)/libsfprof.a
SONAME := libsfprof.so.$(VERSION_MAJOR)
SHARED_LIB := $(BUILD)/libsfprof.so.$(VERSION)
CLI := $(BUILD)/sfprof
MAPFILE := src/libsfprof.map

.PHONY: all deps check check-tier demo bench bench-build fuzz install clean \
	check-versions tests

all: $(STATIC_LIB) $(SHARED_LIB) $(CLI) $(BUILD)/sfprof.pc

deps:
	$(Q)sh mk/deps.sh $(ARCH)

# The map file's newest version node must match the release.
check-versions:
	$(Q)grep -q "LIBSFPROF_$(VERSION) " $(MAPFILE) || \
		{ echo "$(MAPFILE) lacks node LIBSFPROF_$(VERSION)"; exit 1; }

$(BUILD)/%.o: %.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS) $(MAPFILE) | check-versions
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=$(MAPFILE) $(ALL_LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LIBS)
	$(Q)ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(BUILD)/libsfprof.so

$(CLI): $(CLI_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(STATIC_LIB) $(LIBS)

$(BUILD)/sfprof.pc: mk/sfprof.pc.in
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		$< > $@

# Unit tests link the static library (internals visible); test-api-*
# binaries link the shared one so that a missing export fails the build.
$(BUILD)/tests/test-api-%: tests/unit/test-api-%.c tests/unit/harness.c $(SHARED_LIB)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -o $@ $< \
		tests/unit/harness.c -L$(BUILD) -lsfprof -Wl,-rpath,$(abspath $(BUILD)) $(LIBS)

$(BUILD)/tests/test-%: tests/unit/test-%.c tests/unit/harness.c $(STATIC_LIB)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -o $@ $< \
		tests/unit/harness.c $(STATIC_LIB) $(LIBS)

# Programs the tests run (unwinding targets, workloads).  Built like the
# rest unless a rule in tests/progs/progs.mk says otherwise.
-include tests/progs/progs.mk
$(BUILD)/tests/progs/%: tests/progs/%.c $(STATIC_LIB)
	$(call msg,PROG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(PROG_CFLAGS_$*) $(ALL_LDFLAGS) -o $@ $< \
		$(STATIC_LIB) $(LIBS) $(PROG_LIBS_$*)

# Fuzz targets: fuzz_main.c replays files (any compiler); `make fuzz`
# builds real libFuzzer binaries with clang.
$(BUILD)/fuzz/fuzz-%: fuzz/fuzz-%.c fuzz/fuzz_main.c $(STATIC_LIB)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< fuzz/fuzz_main.c \
		$(STATIC_LIB) $(LIBS)

FUZZ_BUILD := build/fuzz-libfuzzer
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -DSFP_DEBUG_BUILD" \
		LDFLAGS="-fsanitize=address,undefined" $(FUZZ_BUILD)/libsfprof.a
	$(Q)for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
		echo "  FUZZ     $(FUZZ_BUILD)/$$n"; \
		clang $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
			-DSFP_DEBUG_BUILD -o $(FUZZ_BUILD)/$$n $$f \
			$(FUZZ_BUILD)/libsfprof.a $(LIBS) || exit 1; done

$(BUILD)/bench/bench-%: bench/bench-%.c $(STATIC_LIB)
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Ibench -o $@ $< $(STATIC_LIB) \
		$(LIBS) $(BENCH_LIBS_$*)
-include bench/bench.mk
ifneq ($(NO_BPF),1)
-include src/bpf/bpf.mk
endif

tests: all $(TEST_BINS) $(TEST_HELPER_BINS) $(FUZZ_BINS)

# One tier: build everything in $(BUILD) and run it.
check-tier: tests
	$(Q)sh tests/run-tests.sh $(BUILD) "$(TIER)"

check: deps
	$(Q)rm -f build/results-*
	$(Q)$(MAKE) --no-print-directory bench-build BUILD=build
	$(Q)$(MAKE) --no-print-directory check-tier BUILD=build TIER=gcc
	$(Q)$(MAKE) --no-print-directory check-tier BUILD=build/asan SAN=1 \
		TIER=asan+ubsan
	$(Q)$(MAKE) --no-print-directory check-aarch64
	$(Q)$(MAKE) --no-print-directory bench-build BUILD=build/clang CC=clang \
		&& echo "PASS: clang -Wall -Wextra -Werror build" \
			> build/results-clang || \
		echo "FAIL: clang -Wall -Wextra -Werror build" > build/results-clang
	$(Q)sh tests/summary.sh build/results-*

# The arm64 build's library and unwinder tests under qemu-aarch64 (the
# recording tests need a kernel to sample, which qemu-user does not have;
# Debian's qemu-user 7.2 hangs here in any program that starts a thread
# (a 4-thread loop, 1 Dec 2026), so tests skip their threads when
# SFP_TEST_NO_THREADS is set).
# Cross-building them and running them took ~4 min here (2 shared cores).
AARCH64_UNIT_TESTS := test-api-cfi test-api-export test-api-perf \
	test-api-sframe test-api-sframe-encode test-api-unwind test-cfi-build \
	test-cfi-parse test-common test-common-json test-elf test-export-pb \
	test-perf-callchain test-perf-reader test-perf-stitch \
	test-sframe-decode test-sframe-encode test-sframe-file \
	test-sframe-validate test-sframe-vectors test-unwind \
	test-unwind-epilogue test-unwind-glibc test-unwind-snapwalk
.PHONY: check-aarch64
check-aarch64:
	$(Q)sh mk/deps.sh aarch64
	$(Q)$(MAKE) --no-print-directory ARCH=aarch64 \
		$(patsubst %,build/aarch64/tests/%,$(AARCH64_UNIT_TESTS))
	$(Q)SFP_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" SFP_UNIT_ONLY=1 \
		SFP_TEST_NO_THREADS=1 \
		SFP_UNIT_TESTS="$(AARCH64_UNIT_TESTS)" \
		sh tests/run-tests.sh build/aarch64 aarch64

demo: deps all
	$(Q)sh examples/demo.sh $(BUILD)

# The benchmarks are built (not run) by `make check` too, so that both
# compilers keep them clean.
bench-build: all $(BENCH_BINS)

bench: deps bench-build
	$(Q)sh bench/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/sfprof \
		$(DESTDIR)$(BINDIR)
	install -m 644 include/sfprof/*.h $(DESTDIR)$(INCLUDEDIR)/sfprof/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsfprof.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		mk/sfprof.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/sfprof.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)

# The flame graph viewer (src/export/flamegraph/) is compiled into the
# library as byte arrays by mk/embed.sh: the HTML it writes needs no file
# at run time.
FG_ASSETS := src/export/flamegraph/template.html \
	src/export/flamegraph/viewer.css src/export/flamegraph/viewer.js
$(BUILD)/gen/flamegraph-assets.h: $(FG_ASSETS) mk/embed.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sh mk/embed.sh $@ $(FG_ASSETS)
$(BUILD)/src/export/flamegraph.o: $(BUILD)/gen/flamegraph-assets.h
$(BUILD)/src/export/flamegraph.o: ALL_CFLAGS += -I$(BUILD)/gen

# Browser tests (tests/cli/run-browser.sh): Debian's chromium and nodejs
# from mk/deps.sh, then the npm packages of tests/browser when missing.
deps: deps-browser
.PHONY: deps-browser
deps-browser:
	$(Q)sh mk/deps.sh && sh tests/browser/setup.sh
