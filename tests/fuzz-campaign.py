#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Corrupt-input campaign over every sfprof reader (issue 13).

Not part of `make check` (it takes tens of minutes): run it against an
ASan+UBSan build, niced, e.g.

    make -j2 BUILD=build/asan SAN=1 tests
    nice -n 19 python3 tests/fuzz-campaign.py build/asan

It derives inputs from seeds (tests/data, a small ELF compiled here with
and without --gsframe, tables and JSON made from it, recordings made with
perf and sfprof) with a fixed random seed, so a run is reproducible:

  - truncations at every N bytes (N chosen per seed, all of the first 64)
  - byte flips (1-4 bytes set to random or boundary values)
  - record-aware perf.data mutations: header fields (attr/data offsets and
    sizes, feature bits), the feature-section table, record sizes, types
    and misc bits, dropped and duplicated records, in file and pipe mode
  - ELF-aware: flips inside .eh_frame, .eh_frame_hdr, .sframe and the
    section headers
  - JSON-aware: numbers replaced by boundary values, tokens deleted

and runs each through the CLI readers (sframe dump/check/build/encode,
script/report/export/convert/flamegraph in file mode and `-i -` pipe
mode, export --kallsyms) and the symbol fuzz harness (kallsyms and perf
maps), each under `timeout`.  A run counts as

  crash      killed by a signal, or an exit code other than 0, 1, 2
  hang       still running at the time limit
  sanitizer  an ASan/UBSan/LSan report (exit 99 or its text on stderr)

Every finding is saved with its command line and stderr under
OUT/findings/.  The last line is the summary.
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BOUNDARY64 = [0, 1, 7, 8, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000,
              0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
              0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff]
BOUNDARY16 = [0, 1, 4, 7, 8, 9, 15, 16, 0x7fff, 0x8000, 0xfff8, 0xffff]


def interesting(rng, size_hint):
    vals = BOUNDARY64 + [size_hint, size_hint - 1, size_hint + 1,
                         size_hint // 2, size_hint * 2]
    return rng.choice(vals) & 0xffffffffffffffff


# ---- generic mutators ---------------------------------------------------

def truncations(data, cuts):
    n = len(data)
    step = max(1, n // cuts)
    points = set(range(0, min(n, 64)))
    points.update(range(0, n, step))
    return [data[:p] for p in sorted(points)]


def flips(rng, data, count):
    out = []
    if not data:
        return out
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            r = rng.random()
            if r < 0.4:
                b[i] ^= 1 << rng.randrange(8)
            elif r < 0.8:
                b[i] = rng.choice([0, 1, 0x7f, 0x80, 0xfe, 0xff])
            else:
                b[i] = rng.randrange(256)
        out.append(bytes(b))
    return out


# ---- perf.data ----------------------------------------------------------

PERF_MAGIC = b'PERFILE2'


def perf_records(data, start, end):
    """(offset, size) of each record header between start and end."""
    recs = []
    off = start
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', data, off)
        if size < 8:
            break
        recs.append((off, size))
        off += size
    return recs


def perf_mutations(rng, data, count):
    out = []
    if len(data) < 16 or data[:8] != PERF_MAGIC:
        return out
    hsize = struct.unpack_from('<Q', data, 8)[0]
    pipe = hsize == 16
    if pipe:
        recs = perf_records(data, 16, len(data))
        header_fields = [8]
        feat_table = []
    else:
        if len(data) < 104:
            return out
        (_, _, attr_size, a_off, a_size, d_off, d_size, e_off,
         e_size) = struct.unpack_from('<8sQQQQQQQQ', data, 0)
        recs = perf_records(data, d_off, min(len(data), d_off + d_size))
        header_fields = [8, 16, 24, 32, 40, 48, 56, 64]
        feats = int.from_bytes(data[72:104], 'little')
        nfeat = bin(feats).count('1')
        ft = d_off + d_size
        feat_table = [ft + 16 * i for i in range(nfeat)
                      if ft + 16 * i + 16 <= len(data)]
    for _ in range(count):
        b = bytearray(data)
        what = rng.random()
        if what < 0.15:
            # a header field (offsets, sizes)
            o = rng.choice(header_fields)
            struct.pack_into('<Q', b, o, interesting(rng, len(data)))
        elif what < 0.22 and not pipe:
            # feature bits: set or clear one
            bit = rng.randrange(256)
            b[72 + bit // 8] ^= 1 << (bit % 8)
        elif what < 0.35 and feat_table:
            # a feature section's offset or size
            o = rng.choice(feat_table) + rng.choice([0, 8])
            struct.pack_into('<Q', b, o, interesting(rng, len(data)))
        elif recs and what < 0.55:
            # a record's size
            o, sz = rng.choice(recs)
            struct.pack_into('<H', b, o + 6, rng.choice(BOUNDARY16 +
                                                        [sz - 8, sz + 8]) & 0xffff)
        elif recs and what < 0.7:
            # a record's type (user types 64..84 are perf's own)
            o, sz = rng.choice(recs)
            struct.pack_into('<I', b, o, rng.choice(
                list(range(0, 22)) + list(range(64, 86)) + [0xffff, 0xffffffff]))
        elif recs and what < 0.78:
            # a record's misc bits
            o, sz = rng.choice(recs)
            struct.pack_into('<H', b, o + 4, rng.randrange(0x10000))
        elif recs and what < 0.86:
            # a field inside a record's body
            o, sz = rng.choice(recs)
            if sz >= 16:
                f = o + 8 + 8 * rng.randrange((sz - 8) // 8)
                struct.pack_into('<Q', b, f, interesting(rng, sz))
        elif recs and what < 0.93 and len(recs) > 1:
            # drop a record (sizes in the header stay: a short data part)
            o, sz = rng.choice(recs)
            del b[o:o + sz]
        elif recs:
            # duplicate a record
            o, sz = rng.choice(recs)
            b[o:o] = b[o:o + sz]
        out.append(bytes(b))
    return out


# ---- ELF ----------------------------------------------------------------

def elf_sections(data):
    """{name: (offset, size)} of a little-endian ELF64, and the shdr range."""
    try:
        if data[:4] != b'\x7fELF' or data[4] != 2:
            return {}, None
        shoff, = struct.unpack_from('<Q', data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
        secs = []
        for i in range(shnum):
            secs.append(struct.unpack_from('<IIQQQQIIQQ', data,
                                           shoff + i * shentsize))
        stro = secs[shstrndx][4]
        names = {}
        for s in secs:
            n = data[stro + s[0]:data.index(b'\0', stro + s[0])].decode()
            names[n] = (s[4], s[5])
        return names, (shoff, shentsize * shnum)
    except (struct.error, ValueError, IndexError):
        return {}, None


def elf_mutations(rng, data, count):
    secs, shdr = elf_sections(data)
    ranges = [secs[n] for n in ('.eh_frame', '.eh_frame_hdr', '.sframe',
                                '.debug_frame') if n in secs and secs[n][1]]
    if shdr:
        ranges.append(shdr)
    out = []
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            o, sz = rng.choice(ranges) if ranges else (0, len(b))
            i = o + rng.randrange(max(1, sz))
            if i >= len(b):
                continue
            if rng.random() < 0.5:
                b[i] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
            else:
                j = i - i % 4
                if j + 4 <= len(b):
                    struct.pack_into('<I', b, j,
                                     interesting(rng, sz) & 0xffffffff)
        out.append(bytes(b))
    return out


# ---- JSON ---------------------------------------------------------------

def json_mutations(rng, data, count):
    import re
    text = data.decode('utf-8', 'replace')
    nums = [m.span() for m in re.finditer(r'-?\d+', text)]
    out = []
    repl = ['0', '-1', '1e400', '1.5', '18446744073709551616',
            '-9223372036854775809', '4294967296', '65536', '"x"', 'null',
            '[]', '{}', '99999999999999999999999999']
    for _ in range(count):
        t = text
        r = rng.random()
        if r < 0.6 and nums:
            a, z = rng.choice(nums)
            t = t[:a] + rng.choice(repl) + t[z:]
        elif r < 0.8:
            i = rng.randrange(len(t))
            t = t[:i] + t[i + rng.randint(1, 8):]
        else:
            i = rng.randrange(len(t))
            t = t[:i] + rng.choice(['{', '[', '"', ',', ']', '}', '\\u', '\0']) + t[i:]
        out.append(t.encode('utf-8', 'surrogatepass'))
    return out


# ---- running --------------------------------------------------------------

class Campaign:
    def __init__(self, build, out, timeout):
        self.sfprof = os.path.join(build, 'sfprof')
        self.build = build
        self.out = out
        self.timeout = timeout
        self.runs = self.inputs = 0
        self.crashes = self.hangs = self.sanitizer = 0
        self.per_target = {}
        self.lock = threading.Lock()
        self.batch_fail = 0
        self.nfiles = 0
        self.env = dict(os.environ)
        self.env['ASAN_OPTIONS'] = ('detect_leaks=1:abort_on_error=0:'
                                    'exitcode=99:quarantine_size_mb=16')
        self.env['UBSAN_OPTIONS'] = 'print_stacktrace=1:halt_on_error=1'
        self.env['SFPROF_CACHE_DIR'] = os.path.join(out, 'cache')
        # no kernel symbols from the machine: the readers, not /proc, run
        self.work = os.path.join(out, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(os.path.join(out, 'findings'), exist_ok=True)

    def run(self, target, argv, data, stdin=None):
        """Run one task (from a worker thread)."""
        try:
            p = subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=self.env,
                               timeout=self.timeout, cwd=self.work)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = 'timeout', e.stderr or b''
        with self.lock:
            self.account(target, argv, data, stdin, rc, err)

    def account(self, target, argv, data, stdin, rc, err):
        self.runs += 1
        t = self.per_target.setdefault(target, [0, 0, 0, 0])
        t[0] += 1
        kind = None
        if rc == 'timeout':
            kind = 'hang'
            self.hangs += 1
            t[2] += 1
        elif rc == 99 or b'Sanitizer' in err or b'runtime error:' in err:
            kind = 'sanitizer'
            self.sanitizer += 1
            t[3] += 1
        elif rc < 0 or rc not in (0, 1, 2):
            kind = 'crash'
            self.crashes += 1
            t[1] += 1
        if kind:
            n = self.crashes + self.hangs + self.sanitizer
            base = os.path.join(self.out, 'findings',
                                '%03d-%s-%s' % (n, target, kind))
            with open(base + '.input', 'wb') as f:
                f.write(data)
            with open(base + '.txt', 'wb') as f:
                f.write(('exit %s\n%s%s\n\n' % (
                    rc, ' '.join(argv),
                    ' < input' if stdin is not None else '')).encode())
                f.write(err[-8000:])
            print('  %s: %s (%s)' % (kind, ' '.join(argv[1:4]), base),
                  flush=True)

    def infile(self, data, name):
        self.nfiles += 1
        # unique: batches and runs of several workers are in flight
        path = os.path.join(self.work, '%d-%s' % (self.nfiles, name))
        with open(path, 'wb') as f:
            f.write(data)
        return path


def make_seeds(c, tmp):
    """Seeds that need building: a small ELF with and without .sframe,
    its table, JSON dumps, recordings by perf and sfprof."""
    seeds = {'perf': [], 'sframe': [], 'elf': [], 'json': [],
             'kallsyms': [], 'perfmap': []}
    d = os.path.join(ROOT, 'tests', 'data')
    for f in sorted(os.listdir(os.path.join(d, 'perf'))):
        if f.endswith('.data'):
            seeds['perf'].append(open(os.path.join(d, 'perf', f), 'rb').read())
    for f in sorted(os.listdir(os.path.join(d, 'sframe'))):
        if f.endswith('.sframe'):
            seeds['sframe'].append(open(os.path.join(d, 'sframe', f), 'rb').read())
    seeds['kallsyms'].append(open(os.path.join(d, 'symbols', 'kallsyms.txt'),
                                  'rb').read())
    seeds['perfmap'].append(b''.join(
        b'%x %x jit_func_%d\n' % (0x7f0000000000 + i * 0x40, 0x40, i)
        for i in range(40)))
    src = os.path.join(tmp, 'p.c')
    with open(src, 'w') as f:
        f.write('#include <stdio.h>\n'
                'static int __attribute__((noinline)) f(int x)'
                '{ volatile int a[16]; a[x & 15] = x; return a[3] + x; }\n'
                'int main(int c, char **v) { (void)v; int s = 0;'
                ' for (int i = 0; i < 100; i++) s += f(i + c);'
                ' printf("%d\\n", s); return 0; }\n')
    for name, extra in (('p-eh', []), ('p-sframe', ['-Wa,--gsframe'])):
        exe = os.path.join(tmp, name)
        r = subprocess.run(['gcc', '-O2', '-o', exe, src] + extra,
                           stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            seeds['elf'].append(open(exe, 'rb').read())
    tab = os.path.join(tmp, 'p.sframe')
    if seeds['elf'] and subprocess.run(
            [c.sfprof, 'sframe', 'build', '-o', tab,
             os.path.join(tmp, 'p-eh')], env=c.env,
            stderr=subprocess.DEVNULL).returncode == 0:
        seeds['sframe'].append(open(tab, 'rb').read())
        j = subprocess.run([c.sfprof, 'sframe', 'dump', '--json', tab],
                           env=c.env, capture_output=True)
        if j.returncode == 0:
            seeds['json'].append(j.stdout)
    j = subprocess.run([c.sfprof, 'sframe', 'dump', '--json',
                        os.path.join(d, 'sframe', 'aarch64-v3-le.sframe')],
                       env=c.env, capture_output=True)
    if j.returncode == 0:
        seeds['json'].append(j.stdout)
    # recordings by sfprof (its own records: deferred callchains, zstd)
    w = ['sh', '-c', 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done']
    for name, extra in (('s-z.data', []), ('s-plain.data', ['--no-compress']),
                        ('s-inline.data', ['--inline', '--no-compress'])):
        out = os.path.join(tmp, name)
        if subprocess.run([c.sfprof, 'record', '-q', '-F', '999', '-o', out]
                          + extra + ['--'] + w, env=c.env,
                          stderr=subprocess.DEVNULL).returncode == 0:
            seeds['perf'].append(open(out, 'rb').read())
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('build', help='build directory (ASan+UBSan), e.g. build/asan')
    ap.add_argument('--out', default=None, help='results (default BUILD/campaign)')
    ap.add_argument('--seed', type=int, default=13)
    ap.add_argument('--scale', type=float, default=1.0,
                    help='multiply the number of mutants per seed')
    ap.add_argument('--timeout', type=float, default=30.0,
                    help='seconds per run before it counts as a hang')
    ap.add_argument('--jobs', type=int, default=3,
                    help='runs at a time (they mostly wait for the CPU)')
    ap.add_argument('--cli-every', type=int, default=4,
                    help='run a CLI reader on every Nth input (all go '
                    'through the harnesses)')
    ap.add_argument('--kinds', default='',
                    help='only these input kinds (comma list of perf, sframe, '
                    'elf, json, kallsyms, perfmap)')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out or os.path.join(build, 'campaign'))
    shutil.rmtree(out, ignore_errors=True)
    c = Campaign(build, out, a.timeout)
    rng = random.Random(a.seed)
    S = c.sfprof
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        seeds = make_seeds(c, tmp)
    n = lambda k: max(1, int(k * a.scale))
    print('seeds: ' + ', '.join('%s %d' % (k, len(v)) for k, v in seeds.items()),
          flush=True)

    # a recording with kernel samples for --kallsyms runs
    ks_data = os.path.join(ROOT, 'tests', 'data', 'perf', 'plain.data')

    # Each input goes through one reader, taken in turn from its kind's
    # list, so that every reader sees a share of every mutation kind
    # (ASan runs take about a second each on a busy machine).
    W = c.work
    fz = os.path.join(build, 'fuzz', 'fuzz-symbols')
    perf_cmds = [
        ('script', lambda f: [S, 'script', '-i', f], False),
        ('script-pipe', lambda f: [S, 'script', '-i', '-'], True),
        ('report', lambda f: [S, 'report', '-i', f], False),
        ('export-folded', lambda f: [S, 'export', '--format', 'folded',
                                     '-i', f, '-o', f + '.out'], False),
        ('script', lambda f: [S, 'script', '-i', f], False),
        ('convert-deferred', lambda f: [S, 'convert', '-i', f, '-o',
                                        f + '.out', '--deferred'], False),
        ('export-pprof', lambda f: [S, 'export', '--format', 'pprof',
                                    '-i', f, '-o', f + '.out'], False),
        ('script-pipe', lambda f: [S, 'script', '-i', '-'], True),
        ('export-firefox', lambda f: [S, 'export', '--format', 'firefox',
                                      '-i', f, '-o', f + '.out'], False),
        ('report-pipe', lambda f: [S, 'report', '-i', '-'], True),
        ('convert-inline', lambda f: [S, 'convert', '-i', f, '-o',
                                      f + '.out', '--inline'], False),
        ('export-speedscope', lambda f: [S, 'export', '--format',
                                         'speedscope', '-i', f, '-o',
                                         f + '.out'], False),
        ('flamegraph', lambda f: [S, 'flamegraph', '-i', f, '-o',
                                  f + '.out'], False),
    ]
    sframe_cmds = [
        ('sframe-dump', lambda f: [S, 'sframe', 'dump', '--section-addr',
                                   '0x10000', f], False),
        ('sframe-dump-json', lambda f: [S, 'sframe', 'dump', '--json', f],
         False),
        ('sframe-check', lambda f: [S, 'sframe', 'check', f], False),
    ]
    elf_cmds = [
        ('sframe-build', lambda f: [S, 'sframe', 'build', '--stats', '-o',
                                    f + '.out', f], False),
        ('elf-sframe-dump', lambda f: [S, 'sframe', 'dump', f], False),
        ('sframe-build', lambda f: [S, 'sframe', 'build', f], False),
        ('elf-sframe-check', lambda f: [S, 'sframe', 'check', f], False),
    ]
    json_cmds = [
        ('sframe-encode', lambda f: [S, 'sframe', 'encode', '-o', f + '.out',
                                     f], False),
        ('sframe-encode-pipe', lambda f: [S, 'sframe', 'encode', '-o',
                                          f + '.out', '-'], True),
    ]
    ks_cmds = [
        ('export-kallsyms', lambda f: [S, 'export', '--format', 'folded',
                                       '-i', ks_data, '-o', f + '.out',
                                       '--kallsyms', f], False),
        ('fuzz-symbols', lambda f: [fz, f], False),
    ]
    map_cmds = [('fuzz-symbols', lambda f: [fz, f], False)]

    def task(cmds, i, data):
        target, mk, pipe = cmds[i % len(cmds)]

        def go():
            f = c.infile(data, 'in')
            try:
                c.run(target, mk(f), data, stdin=data if pipe else None)
            finally:
                for g in (f, f + '.out'):
                    try:
                        os.unlink(g)
                    except OSError:
                        pass
        return go

    # Every input also goes, in batches of BATCH files per process, through
    # the in-process harnesses of its kind (fuzz/): thousands of inputs
    # at the cost of a few ASan start-ups.  A failing batch is replayed
    # file by file to name the input.
    harness = {
        'perf': ['fuzz-perfdata', 'fuzz-profile'],
        'sframe': ['fuzz-sframe'],
        'elf': ['fuzz-cfi', 'fuzz-symbols'],
        'json': ['fuzz-sframe-json', 'fuzz-json'],
        'kallsyms': ['fuzz-symbols'],
        'perfmap': ['fuzz-symbols'],
    }
    BATCH = 64

    def batch(h, datas):
        def go():
            files = []
            for d in datas:
                files.append(c.infile(d, 'b'))
            try:
                argv = [os.path.join(build, 'fuzz', h)]
                p = None
                try:
                    p = subprocess.run(argv + files, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, env=c.env,
                                       timeout=c.timeout * 4, cwd=c.work)
                    ok = p.returncode == 0 and b'Sanitizer' not in p.stderr \
                        and b'runtime error:' not in p.stderr
                except subprocess.TimeoutExpired:
                    ok = False
                if not ok:
                    # note why (a batch can fail where single files pass:
                    # state kept between inputs, or the batch's time)
                    with c.lock:
                        c.batch_fail += 1
                        with open(os.path.join(c.out, 'findings', 'batch-%d-%s.txt' % (c.batch_fail, h)), 'wb') as f:
                            f.write(b'exit %s\n' % str(p.returncode if p else 'timeout').encode())
                            f.write(p.stderr[-4000:] if p else b'')
                if ok:
                    with c.lock:
                        c.runs += len(files)
                        t = c.per_target.setdefault(h, [0, 0, 0, 0])
                        t[0] += len(files)
                    return
                for f, d in zip(files, datas):
                    c.run(h, argv + [f], d)
            finally:
                for f in files:
                    try:
                        os.unlink(f)
                    except OSError:
                        pass
        return go

    plan = [('perf', perf_cmds, 48, 40, perf_mutations, 110),
            ('sframe', sframe_cmds, 32, 40, None, 0),
            ('elf', elf_cmds, 48, 60, elf_mutations, 120),
            ('json', json_cmds, 48, 40, json_mutations, 120),
            ('kallsyms', ks_cmds, 64, 80, None, 0),
            ('perfmap', map_cmds, 64, 80, None, 0)]
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for kind, cmds, cuts, nflips, aware, naware in plan:
            if a.kinds and kind not in a.kinds.split(','):
                continue
            for si, seed in enumerate(seeds[kind]):
                inputs = truncations(seed, n(cuts))
                inputs += flips(rng, seed, n(nflips))
                if aware:
                    inputs += aware(rng, seed, n(naware))
                c.inputs += len(inputs)
                # the seed itself through every reader of its kind
                jobs = [ex.submit(task(cmds, k, seed))
                        for k in range(len(cmds))]
                # a CLI reader for every cli_every-th input
                jobs += [ex.submit(task(cmds, i // a.cli_every + si, d))
                         for i, d in enumerate(inputs)
                         if i % a.cli_every == 0]
                for h in harness[kind]:
                    for b0 in range(0, len(inputs), BATCH):
                        jobs.append(ex.submit(batch(h, inputs[b0:b0 + BATCH])))
                for j in jobs:
                    j.result()
                print('%s seed %d: %d inputs; total %d inputs, %d runs, '
                      '%d crashes, %d hangs, %d sanitizer reports (%.0f s)' % (
                          kind, si, len(inputs), c.inputs, c.runs, c.crashes,
                          c.hangs, c.sanitizer, time.time() - t0), flush=True)
    print('per target: runs, crashes, hangs, sanitizer reports')
    for k in sorted(c.per_target):
        print('  %-20s %6d %3d %3d %3d' % ((k,) + tuple(c.per_target[k])))
    print('campaign: %d inputs, %d runs (harness inputs included), %d crashes, %d hangs, %d sanitizer '
          'reports (%.0f s, seed %d, scale %g)' % (
              c.inputs, c.runs, c.crashes, c.hangs, c.sanitizer,
              time.time() - t0, a.seed, a.scale))
    return 1 if c.crashes + c.hangs + c.sanitizer else 0


if __name__ == '__main__':
    sys.exit(main())
