#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Make a small seed from a real Go 1.18+ function table (little-endian,
# 64-bit): its first K functions re-packed with their names, function
# table entries and _func records as the Go linker wrote them; the
# header's offsets rewritten to the new places (the pc-value, file and
# compilation-unit tables are left out: the reader does not use them).
# usage: objcopy -O binary --only-section=.gopclntab BIN tab
#        trim.py tab K > seed
import struct
import sys

d = open(sys.argv[1], "rb").read()
k = int(sys.argv[2])
magic = struct.unpack_from("<I", d, 0)[0]
assert magic in (0xfffffff0, 0xfffffff1) and d[7] == 8
nfunc, nfiles, text, nameoff, cuoff, fileoff, pcoff, funcoff = \
    struct.unpack_from("<8Q", d, 8)
fixed = 40 if magic == 0xfffffff0 else 44
names = b""
funcs = []
for i in range(k + 1):
    entry, off = struct.unpack_from("<II", d, funcoff + 8 * i)
    if i == k:
        funcs.append((entry, None))
        break
    rec = d[funcoff + off:funcoff + off + fixed]
    npcdata = struct.unpack_from("<I", rec, 28)[0]
    nfuncdata = rec[fixed - 1]
    rec = bytearray(d[funcoff + off:funcoff + off + fixed + 4 * (npcdata + nfuncdata)])
    n = struct.unpack_from("<i", rec, 4)[0]
    name = d[nameoff + n:d.index(b"\0", nameoff + n) + 1]
    struct.pack_into("<i", rec, 4, len(names))
    names += name
    funcs.append((entry, bytes(rec)))
hdr = 8 + 8 * 8
new_nameoff = hdr
new_funcoff = hdr + len(names)
tab = b""
recs = b""
for (entry, rec) in funcs:
    tab += struct.pack("<II", entry, 8 * (k + 1) + len(recs) if rec else 0)
    if rec:
        recs += rec
out = d[:8] + struct.pack("<8Q", k, 0, text, new_nameoff, new_nameoff,
                          new_nameoff, new_nameoff, new_funcoff)
out += names + tab + recs
sys.stdout.buffer.write(out)
