# eu-a2l-compare.py ELF LOCS: for every location line of LOCS (the
# "ADDR _ _ START OFFSET _ NAMES" lines push-check.py's locations-pprof
# prints), the frames eu-addr2line -i gives on ELF (the unstripped file),
# innermost first, against the profile's: "ADDR OURS THEIRS" (run-symbolize.sh,
# run-symbolize-listen.sh).
import subprocess, sys
elf, locs = sys.argv[1], [l.split() for l in open(sys.argv[2])]
# file offset -> link-time address through the file's PT_LOAD headers
segs = []
for l in subprocess.run(["readelf", "-lW", elf], capture_output=True,
                        text=True, check=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
def vaddr(off):
    for o, v, sz in segs:
        if o <= off < o + sz:
            return off - o + v
    return None
addrs = []
for addr, _, _, start, offset, _, names in locs:
    addrs.append(vaddr(int(addr, 16) - int(start, 16) + int(offset, 16)))
# eu-addr2line exits 1 when any address has no name (a PLT stub, a
# sample between functions) yet still answers every address: only a
# missing answer is an error here.
a2l = subprocess.run(["eu-addr2line", "-C", "-f", "-i", "-a", "-e", elf] +
                     ["0x%x" % (a or 0) for a in addrs], capture_output=True,
                     text=True)
out = a2l.stdout.splitlines()
if a2l.returncode not in (0, 1) or \
   sum(l.startswith("0x") for l in out) != len(addrs):
    sys.exit("eu-addr2line: exit %d, %d answers for %d addresses: %s" %
             (a2l.returncode, sum(l.startswith("0x") for l in out),
              len(addrs), a2l.stderr.strip()))
theirs, cur = [], None
for l in out:
    if l.startswith("0x"):
        cur = []
        theirs.append(cur)
    elif ":" not in l or " inlined at " in l:
        cur.append(l.split(" inlined at ")[0])
    elif not l.startswith("/") and not l.startswith(".") and not l.startswith("??"):
        cur.append(l)
for (addr, *_, names), t in zip(locs, theirs):
    print(addr, names, ";".join(t) or "-")
