# Extra libraries per benchmark: BENCH_LIBS_<name> := ...
BENCH_LIBS_backtrace := -ldl
BENCH_LIBS_unwind-snapshot := -lunwind-x86_64 -lunwind
BENCH_LIBS_sframe-lookup := -l:libsframe.a
BENCH_LIBS_sframe-encode := -l:libsframe.a
