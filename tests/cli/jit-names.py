#!/usr/bin/env python3
"""Check the JIT frames of `sfprof script` output against the JIT's own file.

usage: jit-names.py SCRIPT_OUTPUT DSO_PATTERN (perfmap MAP | jitdump DUMP)

SCRIPT_OUTPUT is perf-script text; the frames checked are those whose DSO
(in parentheses) matches the regex DSO_PATTERN.  The JIT's entries are read
here, independently of sfprof: a perf map ("START SIZE name" lines) or a
jitdump (its JIT_CODE_LOAD records, decoded with struct from the layout in
the kernel's tools/perf/util/jitdump.h).  An address is named by the
newest entry covering it (the rule in docs/perf-names.md).  Prints
"frames N named N unknown N unknown-covered N wrong N" and the first wrong
lines; exit 1 when a frame covered by an entry is [unknown] or misnamed.
"""
import re
import struct
import sys


def perfmap_entries(path):
    ents = []
    with open(path, 'rb') as f:
        for line in f:
            parts = line.rstrip(b'\n').split(b' ', 2)
            if len(parts) != 3:
                continue
            try:
                start, size = int(parts[0], 16), int(parts[1], 16)
            except ValueError:
                continue
            ents.append((start, size, parts[2].decode('utf-8', 'replace')))
    return ents


JIT_CODE_LOAD = 0


def jitdump_entries(path):
    data = open(path, 'rb').read()
    magic, version, hsize = struct.unpack_from('<III', data, 0)
    if magic != 0x4A695444:
        sys.exit('%s: not a little-endian jitdump (magic %#x)' % (path, magic))
    off = hsize
    ents = []
    while off + 16 <= len(data):
        rid, rsize, _ts = struct.unpack_from('<IIQ', data, off)
        if rsize < 16 or off + rsize > len(data):
            break
        if rid == JIT_CODE_LOAD:
            # pid, tid, vma, code_addr, code_size, code_index, name
            _pid, _tid, _vma, addr, size, _idx = struct.unpack_from(
                '<IIQQQQ', data, off + 16)
            name = data[off + 56:off + rsize].split(b'\0', 1)[0]
            ents.append((addr, size, name.decode('utf-8', 'replace')))
        off += rsize
    return ents


def newest(ents, addr):
    for start, size, name in reversed(ents):
        if start <= addr < start + max(size, 1):
            return start, name
    return None


def main():
    out, pat, kind, src = sys.argv[1:5]
    ents = perfmap_entries(src) if kind == 'perfmap' else jitdump_entries(src)
    dso_re = re.compile(pat)
    frame = re.compile(r'^\s+([0-9a-f]+) (.*) \(([^()]*)\)$')
    n = named = unknown = unk_cov = wrong = 0
    cache = {}
    shown = 0
    with open(out, errors='replace') as f:
        for line in f:
            m = frame.match(line.rstrip('\n'))
            if not m or not dso_re.search(m.group(3)):
                continue
            addr = int(m.group(1), 16)
            sym = m.group(2)
            n += 1
            if addr not in cache:
                cache[addr] = newest(ents, addr)
            want = cache[addr]
            if sym == '[unknown]':
                unknown += 1
                if want:
                    unk_cov += 1
                    if shown < 5:
                        shown += 1
                        print('  [unknown] at %#x, want %s' % (addr, want[1]))
                continue
            named += 1
            exp = None if not want else '%s+%#x' % (want[1], addr - want[0])
            if sym != exp:
                wrong += 1
                if shown < 5:
                    shown += 1
                    print('  %#x: %s, want %s' % (addr, sym, exp))
    print('frames %d named %d unknown %d unknown-covered %d wrong %d'
          % (n, named, unknown, unk_cov, wrong))
    sys.exit(1 if (unk_cov or wrong or not n) else 0)


main()
