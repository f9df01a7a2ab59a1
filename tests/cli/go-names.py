#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the names `sfprof script` gave a Go binary's frames with
`go tool addr2line` on the same binary (an independent reader of the same
function table).

usage: go-names.py BINARY SCRIPT_OUTPUT
       go-names.py --pprof BINARY PROFILE...

Script lines print a frame as "ADDR NAME+0xOFF (DSO)" with ADDR the offset
in the file (perf's map-relative address).  A pprof profile is read by
`go tool pprof -symbolize=none -raw` (not by sfprof, and without pprof's
own symbolization, which would name what sfprof left unnamed): a
location's address is the runtime one, made a file offset through its
mapping.  The binary's LOAD headers
(from readelf) turn the offset into the address addr2line takes.  Prints
"frames F named N distinct D differ X" and the first differences.
"""
import re
import subprocess
import sys

pprof = sys.argv[1] == "--pprof"
if pprof:
    del sys.argv[1]
binary, inputs = sys.argv[1], sys.argv[2:]
loads = []
for line in subprocess.run(["readelf", "-lW", binary], check=True,
                           capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))



def script_frames(script):
    """(file offset, name or None) of each frame of binary."""
    frame = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
    with open(script, errors="replace") as fh:
        for line in fh:
            m = frame.match(line)
            if not m or m.group(3) != binary:
                continue
            name = m.group(2)
            if name == "[unknown]":
                name = None
            else:
                name = re.sub(r"\+0x[0-9a-f]+$", "", name)
            yield int(m.group(1), 16), name


def pprof_frames(script):
    """(file offset, name or None) of each location in binary's mapping."""
    raw = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-raw", script],
                         capture_output=True, text=True)
    if raw.returncode:
        print("go tool pprof failed: " + raw.stderr.strip())
        sys.exit(1)
    maps = {}
    section = None
    locs = []
    for line in raw.stdout.splitlines():
        if line in ("Locations", "Mappings"):
            section = line
            continue
        m = re.match(r"^\s*(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)",
                     line)
        if section == "Mappings" and m:
            if m.group(5) == binary:
                maps[m.group(1)] = (int(m.group(2), 16), int(m.group(4), 16))
            continue
        # "N: 0xADDR M=ID NAME FILE:LINE s=START"; Go names may hold
        # spaces (type..hash.struct { ... }), so cut from the end
        m = re.match(r"^\s*\d+: 0x([0-9a-f]+) M=(\d+) ?(.*)$", line)
        if section == "Locations" and m:
            name = re.sub(r" s=\d+$", "", m.group(3))
            name = re.sub(r" ?\S*:-?\d+$", "", name)
            locs.append((int(m.group(1), 16), m.group(2), name))
    for (addr, mid, name) in locs:
        if mid in maps:
            start, pgoff = maps[mid]
            # a location sfprof could not name: "[compile]" (the DSO)
            if not name or (name.startswith("[") and name.endswith("]")):
                name = None
            yield addr - start + pgoff, name


frames = named = 0
pairs = {}
for (off, name) in (f for i in inputs
                    for f in (pprof_frames(i) if pprof else script_frames(i))):
        frames += 1
        if name is None:
            continue
        named += 1
        va = None
        for (o, v, fs) in loads:
            if o <= off < o + fs:
                va = v + off - o
        pairs.setdefault(va, set()).add(name)

addrs = sorted(a for a in pairs if a is not None)
out = subprocess.run(["go", "tool", "addr2line", binary],
                     input="".join("0x%x\n" % a for a in addrs),
                     capture_output=True, text=True)
if out.returncode:
    print("go tool addr2line failed: " + out.stderr.strip())
    sys.exit(1)
lines = out.stdout.splitlines()
differ = 0
for i, a in enumerate(addrs):
    want = lines[2 * i] if 2 * i < len(lines) else "(none)"
    got = pairs[a]
    if got != {want}:
        differ += 1
        if differ <= 5:
            print("  %#x: sfprof %s, addr2line %s" % (a, sorted(got), want))
differ += len([a for a in pairs if a is None])
print("frames %d named %d distinct %d differ %d" %
      (frames, named, len(addrs), differ))
