# Per-program flags for tests/progs/<name>.c: PROG_CFLAGS_<name> := ...
PROG_CFLAGS_symprog := -g -O2 -fvisibility=default
# Unwinder checks: no frame pointers anywhere in the program's own code.
PROG_CFLAGS_unwind-check := -O2 -fomit-frame-pointer -rdynamic -pthread
PROG_CFLAGS_unwind-check-sframe := -O2 -fomit-frame-pointer -rdynamic -pthread -Wa,--gsframe
PROG_CFLAGS_unwind-target := -O2 -fomit-frame-pointer -g0 -pthread
# Programs link libsfprof.a: rebuild them when it changes (and never link
# before it exists under make -j).
$(TEST_HELPER_BINS): $(STATIC_LIB)
$(BUILD)/tests/progs/unwind-check-sframe: tests/progs/unwind-check.c
$(BUILD)/tests/progs/perf-work-nofp: tests/progs/perf-work.c
$(BUILD)/tests/progs/report-work-dbg: tests/progs/report-work.c
# perf.data tests: the same workload with and without frame pointers.
PROG_CFLAGS_perf-work := -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
PROG_CFLAGS_perf-work-nofp := -O2 -fomit-frame-pointer
# record tests: no frame pointers, own .sframe, fixed addresses.
PROG_CFLAGS_record-spin := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -Wa,--gsframe -no-pie
# flame graph / speedscope browser tests: no frame pointers, no .sframe
# (sfprof builds the tables from .eh_frame).
PROG_CFLAGS_flame-work := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
# export tests: inlined functions with DWARF line info, frame pointers.
PROG_CFLAGS_export-inline := -O2 -g -fno-omit-frame-pointer
# report tests: inlined functions as perf report shows them (DWARF, frame
# pointers for the fp recording).
PROG_CFLAGS_report-inline := -O2 -g -fno-omit-frame-pointer
# report tests: a known call path, no frame pointers, no tail calls.
PROG_CFLAGS_report-work := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
PROG_CFLAGS_report-work-dbg := -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
# bpf-defer tests: no frame pointers, no own .sframe (tables from .eh_frame).
PROG_CFLAGS_bpf-deep := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
# off-CPU tests: no frame pointers, no own .sframe, threads that wait.
PROG_CFLAGS_offcpu-work := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
# agent tests: no frame pointers, no own .sframe, the hot path through qsort.
PROG_CFLAGS_agent-work := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
# off-CPU under heavy switching: pairs of threads ping-ponging over pipes.
PROG_CFLAGS_offcpu-pingpong := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
# deep stacks: no frame pointers, no tail calls, tables from .eh_frame.
PROG_CFLAGS_deep-stack := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
# stack switches as Go's (g0 and goroutine stacks): frame pointers, tables
# from .eh_frame, the switching helpers in assembly without CFI.
PROG_CFLAGS_stack-switch := -O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls
