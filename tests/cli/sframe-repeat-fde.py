#!/usr/bin/env python3
# Make an SFrame section whose FDEs repeat or overlap, from a real one:
#   sframe-repeat-fde.py IN OUT INDEX COPIES STEP
# takes FDE INDEX of the v1/v2 section IN (as gas wrote it) and writes OUT
# with COPIES FDEs, copy k starting STEP*k bytes after the original (STEP
# 0: the same function COPIES times; STEP below the size: overlaps), each
# with its own copy of the original's FREs (so that the header's counts
# stay consistent and only the overlap is wrong).  Header fields follow the SFrame spec:
# preamble (magic, version, flags), abi, fixed offsets, auxhdr_len,
# num_fdes, num_fres, fre_len, fdeoff, freoff.
import struct
import sys

src, dst = sys.argv[1], sys.argv[2]
idx, copies, step = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
b = open(src, 'rb').read()
(magic, ver, flags, abi, fpo, rao, auxlen, nfdes, nfres, frelen, fdeoff,
 freoff) = struct.unpack_from('<HBBBbbBIIIII', b, 0)
if magic != 0xdee2 or ver not in (1, 2):
    sys.exit('%s: not a little-endian SFrame v1/v2 section' % src)
hs = 28 + auxlen
fsz = 17 if ver == 1 else 20
if idx >= nfdes:
    sys.exit('%s: has %d FDEs' % (src, nfdes))
fdes = b[hs + fdeoff:hs + fdeoff + nfdes * fsz]
fde = fdes[idx * fsz:(idx + 1) * fsz]
start, _, fre_off, n = struct.unpack_from('<iIII', fde, 0)
# This FDE's FRE bytes end where the next FDE's begin.
ends = [struct.unpack_from('<I', fdes, i * fsz + 8)[0] for i in range(nfdes)]
fre_end = min([e for e in ends if e > fre_off] + [frelen])
fres = b[hs + freoff + fre_off:hs + freoff + fre_end]
pcrel = ver == 2 and flags & 0x4    # SFRAME_F_FDE_FUNC_START_PCREL
out = bytearray()
for k in range(copies):
    g = bytearray(fde)
    s = start + k * step
    if pcrel:   # relative to the field itself: it moved
        s += (idx - k) * fsz
    struct.pack_into('<iII', g, 0, s, struct.unpack_from('<I', fde, 4)[0],
                     k * len(fres))
    out += g
hdr = struct.pack('<HBBBbbBIIIII', magic, ver, flags, abi, fpo, rao, auxlen,
                  copies, n * copies, len(fres) * copies, 0, len(out))
open(dst, 'wb').write(hdr + b[28:hs] + bytes(out) + fres * copies)
