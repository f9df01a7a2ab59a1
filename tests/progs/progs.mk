# Per-program flags for tests/progs/<name>.c (one line per program).
PROG_CFLAGS_record-spin := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -Wa,--gsframe -no-pie
