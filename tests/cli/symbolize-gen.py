#!/usr/bin/env python3
# Inputs for `sfprof symbolize` at scale (bench/symbolize.sh,
# tests/cli/run-symbolize-memory.sh), written for them, none of sfprof's
# code:
#
#   source N           a C file of N noinline functions, each calling an
#                      inline helper of its own, and a main calling them
#                      all; its binaries take their build-id from an
#                      extern `bench_seed` linked in beside it
#   binaries T BINS FUNCS  T/bin/b0..b{BINS-1}: the source of FUNCS
#                      functions compiled once (-O2 -g), linked with a seed
#                      of each binary's own, stripped; the unstripped
#                      file's debug part beside it (T/bin/bI.debug) and in
#                      T/dbg/.build-id/; "I BUILD-ID" lines in T/ids
#   profile T FIRST END  the pprof text (protoc --encode
#                      perftools.profiles.Profile) of binaries FIRST..END-1
#                      of T/bin/bI (their debug files T/bin/bI.debug, the
#                      build-ids in T/ids as "I ID" lines): one mapping
#                      each, at 0x100000000 * (I + 1), named /srv/bI (a path
#                      the service does not have: the build-id finds the
#                      file), and a location inside each function fK, by
#                      nm of its debug file; their "DEBUG-FILE 0xADDR" lines
#                      appended to T/addrs for the peers
import subprocess
import sys


def source(n):
    print("volatile unsigned long sink;")
    print("extern const unsigned long bench_seed;")
    for i in range(n):
        print("static inline unsigned long in%d(unsigned long x) "
              "{ return x * %d + bench_seed; }" % (i, 2 * i + 1))
        print("__attribute__((noinline)) unsigned long f%d(unsigned long x) "
              "{ for (int k = 0; k < 3; k++) sink += in%d(x + k); return sink; }"
              % (i, i))
    print("int main(void) { unsigned long s = 0;")
    for i in range(n):
        print("  s += f%d(s);" % i)
    print("  return (int)s; }")


def binaries(t, bins, funcs):
    import contextlib
    import io
    import os

    def run(*argv):
        subprocess.run(argv, check=True)

    for d in ("bin", "dbg"):
        os.makedirs(os.path.join(t, d), exist_ok=True)
    src = io.StringIO()
    with contextlib.redirect_stdout(src):
        source(funcs)
    with open(t + "/gen.c", "w") as f:
        f.write(src.getvalue())
    run("gcc", "-O2", "-g", "-c", "-o", t + "/gen.o", t + "/gen.c")
    ids = open(t + "/ids", "w")
    for i in range(bins):
        b = "%s/bin/b%d" % (t, i)
        with open(t + "/seed.c", "w") as f:
            f.write("const unsigned long bench_seed = %d;\n" % i)
        run("gcc", "-O2", "-g", "-o", b, t + "/gen.o", t + "/seed.c")
        out = subprocess.run(["readelf", "-n", b], capture_output=True,
                             text=True, check=True).stdout
        bid = [l.split()[2] for l in out.splitlines() if "Build ID:" in l][0]
        d = "%s/dbg/.build-id/%s" % (t, bid[:2])
        os.makedirs(d, exist_ok=True)
        run("objcopy", "--only-keep-debug", b, b + ".debug")
        run("cp", b + ".debug", "%s/%s.debug" % (d, bid[2:]))
        run("strip", "-s", b)
        ids.write("%d %s\n" % (i, bid))
    ids.close()


def profile(t, first, end):
    ids = dict(l.split() for l in open(t + "/ids"))
    strs = [""]

    def s(x):
        strs.append(x)
        return len(strs) - 1

    maps, locs, samples = [], [], []
    addrs = open(t + "/addrs", "a")
    lid = 0
    for b in range(first, end):
        path = "%s/bin/b%d" % (t, b)
        start = 0x100000000 * (b + 1)
        maps.append("mapping { id: %d memory_start: %d memory_limit: %d "
                    "file_offset: 0 filename: %d build_id: %d }"
                    % (b + 1, start, start + 0x40000000, s("/srv/b%d" % b),
                       s(ids[str(b)])))
        nm = subprocess.run(["nm", path + ".debug"], capture_output=True,
                            text=True).stdout
        for line in nm.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] == "T" and f[2].startswith("f"):
                a = int(f[0], 16) + 4          # inside the function
                lid += 1
                locs.append("location { id: %d mapping_id: %d address: %d }"
                            % (lid, b + 1, start + a))
                samples.append("sample { location_id: %d value: 1 }" % lid)
                addrs.write("%s 0x%x\n" % (path + ".debug", a))
    print('sample_type { type: %d unit: %d }' % (s("samples"), s("count")))
    print("\n".join(samples))
    print("\n".join(maps))
    print("\n".join(locs))
    for x in strs:
        print('string_table: "%s"' % x)


if __name__ == "__main__":
    if sys.argv[1] == "source":
        source(int(sys.argv[2]))
    elif sys.argv[1] == "binaries":
        binaries(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "profile":
        profile(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("symbolize-gen.py: source N | binaries T BINS FUNCS | "
                 "profile T FIRST END")
