#!/usr/bin/env python3
# Writes the hand-built SFrame sections of this directory (run it here).
# Each section is laid out from the format description in
# /work/shared/docs/sframe-format.md §1.  Their expected dumps are not
# committed: mk-dump.sh has objdump print them at test time (see there
# which ones objdump 2.40 can read, and how the others are checked).
import struct

def section(ver, flags, abi, ffp, fra, fdes, be):
    e = '>' if be else '<'
    fde_size = {1: 17, 2: 20, 3: 16}[ver]
    hdr = 28
    fre_blob = b''
    fde_blob = b''
    nfres = 0
    for i, f in enumerate(fdes):
        start, size, info, info2, rep, fres = f
        off = len(fre_blob)
        if ver == 3:
            fre_blob += struct.pack(e + 'HBBB', len(fres), info, info2, rep)
        asz = {0: 'B', 1: 'H', 2: 'I'}[info & 0xf]
        for (s, finfo, words) in fres:
            wsz = {0: 'b', 1: 'h', 2: 'i'}[(finfo >> 5) & 3]
            fre_blob += struct.pack(e + asz + 'B', s, finfo)
            for w in words:
                fre_blob += struct.pack(e + wsz, w)
            nfres += 1
        field = hdr + i * fde_size
        val = start - field if flags & 4 else start
        if ver == 3:
            fde_blob += struct.pack(e + 'qII', val, size, off)
        elif ver == 2:
            fde_blob += struct.pack(e + 'iIIIBBH', val, size, off, len(fres), info, rep, 0)
        else:
            fde_blob += struct.pack(e + 'iIIIB', val, size, off, len(fres), info)
    h = struct.pack(e + 'HBBBbbBIIIII', 0xdee2, ver, flags, abi, ffp, fra, 0,
                    len(fdes), nfres, len(fre_blob), 0, len(fde_blob))
    return h + fde_blob + fre_blob

def fi(sp, n, size=0, mangled=0):
    return sp | (n << 1) | (size << 5) | (mangled << 7)

# AArch64 (little endian, v3): function 0 pauth key B with PAC-signed RA,
# function 1 key A, a PCINC FDE; rows with CFA only, CFA+RA+FP.
aarch64_fdes = [
    (-0x1000, 0x40, (1 << 5) | 0, 0, 0, [
        (0x0, fi(1, 1), [0]),
        (0x4, fi(1, 1, 0, 1), [0]),
        (0x8, fi(1, 3, 0, 1), [32, -8, -16]),
        (0xc, fi(0, 3, 0, 1), [32, -8, -16]),
        (0x3c, fi(1, 1), [0]),
    ]),
    (-0xfc0, 0x20, 0, 0, 0, [
        (0x0, fi(1, 1), [0]),
        (0x4, fi(1, 3, 1), [400, -392, -400]),
    ]),
]
# s390x (big endian, v2 with PCREL): encoded CFA words, RA padding,
# register-held FP/RA (LSB set), and a PCMASK PLT FDE with rep 32.
s390x_fdes = [
    (-0x2000, 0x40, 1 << 4, 0, 32, [
        (0x0, fi(1, 1), [0]),
        (0xe, fi(1, 1), [1]),
    ]),
    (-0x1f00, 0x30, 0, 0, 0, [
        (0x0, fi(1, 1), [0]),
        (0x6, fi(1, 3), [1, 0, -72]),
        (0xa, fi(1, 3), [1, -48, -56]),
        (0xe, fi(1, 3), [0, 29, 23]),
        (0x12, fi(0, 2), [2, -48]),
    ]),
]
fix = {
    'aarch64-v3-le.sframe': section(3, 5, 2, 0, 0, aarch64_fdes, False),
    'aarch64-v2-be.sframe': section(2, 5, 1, 0, 0, aarch64_fdes, True),
    'aarch64-v3-be.sframe': section(3, 5, 1, 0, 0, aarch64_fdes, True),
    's390x-v2-be.sframe': section(2, 5, 4, 0, 0, s390x_fdes, True),
    # v1 twins, the versions binutils 2.40 (Debian 12) can dump: the same
    # FDEs and FREs, flags SORTED only (v1 has no FUNC_START_PCREL).
    'aarch64-v1-le.sframe': section(1, 1, 2, 0, 0, aarch64_fdes, False),
    'aarch64-v1-be.sframe': section(1, 1, 1, 0, 0, aarch64_fdes, True),
    # s390x's twin: 2.40 has no s390x ABI and reads the words raw, but its
    # functions, rows and CFA base registers are the v2 section's.
    's390x-v1-be.sframe': section(1, 1, 4, 0, 0, s390x_fdes, True),
}
for n, b in fix.items():
    open(n, 'wb').write(b)
