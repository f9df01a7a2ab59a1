PROG_CFLAGS_symprog := -g -O2 -fvisibility=default
# Per-program flags for tests/progs/<name>.c: PROG_CFLAGS_<name> := ...
# Unwinder checks: no frame pointers anywhere in the program's own code.
PROG_CFLAGS_unwind-check := -O2 -fomit-frame-pointer -rdynamic
PROG_CFLAGS_unwind-check-sframe := -O2 -fomit-frame-pointer -rdynamic -Wa,--gsframe
# perf.data tests: the same workload with and without frame pointers.
PROG_CFLAGS_perf-work := -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
PROG_CFLAGS_perf-work-nofp := -O2 -fomit-frame-pointer
