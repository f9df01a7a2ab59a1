#!/usr/bin/env python3
# Facts about the records of a perf.data file, for the bpf-defer tests:
# what `sfprof script` cannot show (it prints at most 127 frames, like
# perf) and the record sizes themselves.
#
#   perfdata-records.py FILE
#
# prints, one per line:
#   samples N            PERF_RECORD_SAMPLE records
#   stack_bytes B        bytes in samples beyond their declared fields and
#                        callchain (user regs, stack copies): 0 expected
#   sample_bytes B       total bytes of the sample records
#   deferred M           PERF_RECORD_CALLCHAIN_DEFERRED records
#   deferred_max_nr X    the deepest deferred chain
#   regs_or_stack 0|1    the attr asks for REGS_USER or STACK_USER
# Reads the first attr only (the tests record one event).
import struct
import sys

IDENT, IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD, STREAM = (
    1 << 16, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6,
    1 << 7, 1 << 8, 1 << 9)
REGS_USER, STACK_USER = 1 << 12, 1 << 13


def main():
    data = open(sys.argv[1], 'rb').read()
    if data[:8] != b'PERFILE2':
        sys.exit('not a perf.data file (or pipe mode)')
    _, _, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from(
        '<8sQQQQQQ', data, 0)
    if a_size < attr_size or attr_size < 48:
        sys.exit('no attrs')
    st = struct.unpack_from('<Q', data, a_off + 24)[0]
    fixed = 0
    for bit in (IDENT, IP, TID, TIME, ADDR, ID, STREAM, CPU, PERIOD):
        if st & bit:
            fixed += 8
    pos, end = d_off, d_off + d_size
    n = extra = sbytes = nd = maxnr = 0
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', data, pos)
        if size < 8:
            sys.exit('bad record size at %d' % pos)
        if typ == 81:
            sys.exit('compressed records: record without compression')
        if typ == 9:
            n += 1
            sbytes += size
            want = 8 + fixed
            if st & CALLCHAIN:
                nr = struct.unpack_from('<Q', data, pos + 8 + fixed)[0]
                want += 8 + 8 * nr
            if st & (1 << 10):  # RAW: u32 size + data, padded
                raw = struct.unpack_from('<I', data, pos + want)[0]
                want += (4 + raw + 7) & ~7
            extra += max(0, size - want)
        elif typ == 22:
            nd += 1
            nr = struct.unpack_from('<Q', data, pos + 16)[0]
            maxnr = max(maxnr, nr)
        pos += size
    print('samples', n)
    print('stack_bytes', extra)
    print('sample_bytes', sbytes)
    print('deferred', nd)
    print('deferred_max_nr', maxnr)
    print('regs_or_stack', 1 if st & (REGS_USER | STACK_USER) else 0)


main()
