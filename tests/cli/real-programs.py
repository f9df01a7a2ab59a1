#!/usr/bin/env python3
# Figures of one `perf script` layout output (sfprof script's or perf
# script's) for tests/cli/run-real-programs.sh: how many samples, how many
# of them have a user stack that reaches the root, how many user frames are
# named, and whether the names are the ones an independent tool gives.
#
#   real-programs.py RUNTIME FILE [COMM...]
#
# RUNTIME picks the set of root frames (ROOTS below); COMM, when given,
# keeps only samples of threads with one of these names (the program's
# processes in a recording of a driver: cc1 under gcc, compile under go).
#
# Prints one line of NAME=VALUE fields:
#   samples      samples kept (exec_exit ones not counted)
#   exec_exit    samples without user frames taken in the kernel's exec or
#                exit paths (no user stack exists then): left out
#   no_user      other samples without user frames (counted as not
#                reaching the root)
#   root         samples whose outermost user frame is a root frame
#   frames       user frames in the kept samples
#   named        of those, frames the tool named (not [unknown])
#   nameable     frames the independent tool names (the share "named" is
#                judged over these: a stripped file's frames have no name
#                anywhere)
#   named_ok     frames the tool named among the nameable ones
#   checked      named frames compared with the independent tool
#   wrong        of those, names (or offsets) the independent tool denies
#   ruled        named frames left out by a documented rule: PLT stubs
#                (docs/perf-names.md; any frame in .plt, .plt.sec or
#                .plt.got, whatever its name)
# and, on stderr, up to 5 examples of non-root outermost frames and of
# wrong names.
#
# The independent namers, per file a frame's DSO names:
#   Go binaries (a .gopclntab or .go.buildinfo section): `go tool
#     addr2line` (function names from the binary's own pc table);
#   other ELF files: nm (the .symtab and .dynsym, and the debug file the
#     build-id names under /usr/lib/debug/.build-id if installed), the
#     C++ names demangled by c++filt -p (perf's form: no parameters); a
#     stripped executable's entry point (readelf -h) counts as _start;
#   /tmp/perf-PID.map (JIT frames): the map file itself, read here; the
#     entry written last among those that cover the address (sfprof's
#     rule, docs/perf-names.md).
import bisect
import os
import re
import subprocess
import sys

# The outermost user frame of a stack that reached its root, per runtime.
# Every thread of every runtime here starts in one of:
#   _start          the main thread (the program's, or ld.so's while the
#                   loader runs: it calls _dl_start, whose return address is
#                   the label _dl_start_user, which sfprof prints for the
#                   return address and perf, which subtracts one, as _start)
#   clone3 / __clone3 / clone / __clone
#                   other threads: glibc's pthread_create starts them there
#                   (start_thread, then the thread's routine: Java's
#                   thread_native_entry, Node's and V8's workers)
#   Go: runtime.rt0_go (the main thread's g0 stack: the entry jumps
#       there, no caller), runtime.goexit (every goroutine's fake caller),
#       runtime.mstart (the g0 stack of every other thread), runtime.clone
#       (it calls mstart in a new thread), runtime.mcall (it clears the
#       frame pointer and runs its function on the g0 stack for good: the
#       goroutine it left is parked, no caller of the g0 frames).
#       Not roots: runtime.systemstack and runtime.morestack, which run a
#       function on the g0 stack and keep the frame pointer into the
#       goroutine's stack, whose frames are the rest of the stack (an
#       unwinder that stops there has not seen them); runtime.sigtramp
#       (the interrupted code's frames are the rest).
C_ROOTS = {'_start', '_dl_start_user', 'clone3', '__clone3', 'clone',
           '__clone'}
ROOTS = {
    'c': C_ROOTS,
    'python': C_ROOTS,
    'node': C_ROOTS,
    'java': C_ROOTS,
    # (_rt0_amd64_linux is a Go program's ELF entry point, its _start; it
    # jumps to _rt0_amd64, which jumps to runtime.rt0_go: a sample there
    # is at the first instructions of the main thread)
    'go': C_ROOTS | {'_rt0_amd64_linux', '_rt0_amd64', 'runtime.rt0_go',
                     'runtime.goexit', 'runtime.mstart', 'runtime.clone',
                     'runtime.mcall'},
}

# Kernel functions that show a sample was taken while the task had no user
# stack to unwind (the exec that replaces it, the exit that drops it).
EXEC_EXIT = re.compile(r'^(load_elf_binary|bprm_execve|begin_new_exec|'
                       r'do_exit|do_group_exit|exit_mm|mmput)\+')

HEAD = re.compile(r'^(\S.*?)\s+(\d+)(?:/(\d+))?(?:\s+\[\d+\])?\s+'
                  r'(\d+\.\d+):')
FRAME = re.compile(r'^\t\s*([0-9a-f]+) (.*) \((.*)\)$')


def parse(path, comms):
    out = []
    cur = None
    keep = False
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            if line[0] != '\t':
                m = HEAD.match(line)
                if not m:
                    continue
                keep = not comms or m.group(1).strip() in comms
                cur = []
                if keep:
                    out.append(cur)
                continue
            if cur is None or not keep:
                continue
            m = FRAME.match(line)
            # (perf's "(inlined)" lines are not frames)
            if m and m.group(3) != 'inlined':
                cur.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return out


def split_name(s):
    if s == '[unknown]':
        return None, None
    m = re.match(r'^(.*)\+0x([0-9a-f]+)$', s)
    if m:
        return m.group(1), int(m.group(2), 16)
    return s, None


def base(name):
    # version suffixes (nm -D: name@@GLIBC_2.34, name@GLIBC_2.2.5)
    return re.sub(r'@@?[A-Za-z0-9_.]+$', '', name)


# c++filt expands the standard substitutions (DMGL_VERBOSE); perf and
# sfprof print their short forms (So: std::ostream)
VERBOSE = [
    ('std::basic_string<char, std::char_traits<char>, std::allocator<char> >',
     'std::string'),
    ('std::basic_istream<char, std::char_traits<char> >', 'std::istream'),
    ('std::basic_ostream<char, std::char_traits<char> >', 'std::ostream'),
    ('std::basic_iostream<char, std::char_traits<char> >', 'std::iostream'),
]


def short(name):
    for v, sh in VERBOSE:
        name = name.replace(v, sh)
    return name


def run(cmd, inp=None):
    r = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('%s: exit %d: %s' % (' '.join(cmd), r.returncode,
                                       r.stderr.strip()[:300]))
    return r.stdout


class Elf:
    """Symbols of one ELF file from nm (and its debug file)."""

    def __init__(self, path):
        self.path = path
        self.syms = {}          # value -> [(name, size)]
        hdr = run(['readelf', '-hSnlW', path])
        # perf script prints a file's addresses as offsets in the file
        # (perf's map_ip); symbols and pc tables hold virtual addresses
        self.loads = []
        for m in re.finditer(r'^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+'
                             r'0x[0-9a-f]+\s+0x([0-9a-f]+)', hdr, re.M):
            self.loads.append(tuple(int(x, 16) for x in m.groups()))
        self.entry = None
        # PLT stubs (.plt, .plt.sec, .plt.got): named by the rule of
        # docs/perf-names.md from the relocations, not from nm
        self.plt = []
        for m in re.finditer(r'\] (\.plt(?:\.sec|\.got)?)\s+\S+\s+([0-9a-f]+)\s+'
                             r'[0-9a-f]+\s+([0-9a-f]+)', hdr):
            a, sz = int(m.group(2), 16), int(m.group(3), 16)
            self.plt.append((a, a + sz))
        self.is_go = ('.gopclntab' in hdr or '.go.buildinfo' in hdr)
        self.go = {}
        if self.is_go:
            return
        files = [path]
        m = re.search(r'Build ID: ([0-9a-f]+)', hdr)
        if m:
            bid = m.group(1)
            dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (bid[:2], bid[2:])
            if os.path.exists(dbg):
                files.append(dbg)
        lines = []
        for f in files:
            for opt in ([], ['-D']):
                r = subprocess.run(['nm', '-S', '--defined-only'] + opt + [f],
                                   capture_output=True, text=True)
                # "no symbols" is an answer (a stripped file), not a failure
                if r.returncode != 0 and 'no symbols' not in r.stderr:
                    sys.exit('nm %s: %s' % (f, r.stderr.strip()[:300]))
                lines += r.stdout.splitlines()
        rows = []
        for ln in lines:
            p = ln.split()
            if len(p) == 4:
                v, sz, t, n = int(p[0], 16), int(p[1], 16), p[2], p[3]
            elif len(p) == 3:
                v, sz, t, n = int(p[0], 16), 0, p[1], p[2]
            else:
                continue
            if t not in 'TtWwi':
                continue
            rows.append((v, sz, n))
        names = run(['c++filt', '-p'], '\n'.join(r[2] for r in rows) + '\n')
        for (v, sz, _), n in zip(rows, names.splitlines()):
            self.syms.setdefault(v, []).append((short(base(n)), sz))
        # a stripped executable's entry point: glibc's _start (start.S,
        # 0x26 bytes on x86-64); shared libraries have other entry points
        m = re.search(r'Entry point address:\s+0x([0-9a-f]+)', hdr)
        if m and '.so' not in os.path.basename(path) and \
                not any(n == '_start' for ss in self.syms.values()
                        for n, _ in ss):
            self.entry = int(m.group(1), 16)
            self.syms.setdefault(self.entry, []).append(('_start', 0x26))
        self.starts = sorted(self.syms)

    def vaddr(self, off):
        for o, v, sz in self.loads:
            if o <= off < o + sz:
                return off - o + v
        return off

    def in_plt(self, addr):
        v = self.vaddr(addr)
        return any(a <= v < e for a, e in self.plt)

    def synthetic(self, addr):
        """Is addr's name only the entry point's (no symbol names it)?"""
        v = self.vaddr(addr)
        return self.entry is not None and self.entry <= v < self.entry + 0x26

    def names_at(self, addr):
        """The independent tool's names for addr (aliases: one address,
        several names), or []: the symbols that start at or before addr
        nearest to it, if their size covers addr or they have no size (a
        label such as ld.so's _dl_start_user)."""
        if self.is_go:
            n = self.go.get(addr)
            return [n] if n else []
        addr = self.vaddr(addr)
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return []
        v = self.starts[i]
        ss = self.syms[v]
        if any(addr < v + sz for _, sz in ss) or all(sz == 0 for _, sz in ss):
            return [n for n, _ in ss]
        return []

    def name_at(self, addr):
        n = self.names_at(addr)
        return n[0] if n else None

    def confirms(self, addr, name, off):
        """Does nm have a symbol NAME at addr - off that covers addr?"""
        if self.is_go:
            return self.go.get(addr) == name
        if off is None:
            return False
        for n, sz in self.syms.get(self.vaddr(addr) - off, []):
            if n == base(name) and (sz == 0 or off < sz):
                return True
        return False

    def resolve_go(self, addrs):
        todo = sorted(a for a in addrs if a not in self.go)
        if not todo:
            return
        out = run(['go', 'tool', 'addr2line', self.path],
                  ''.join('0x%x\n' % self.vaddr(a) for a in todo)).splitlines()
        if len(out) != 2 * len(todo):
            sys.exit('go tool addr2line %s: %d lines for %d addresses'
                     % (self.path, len(out), len(todo)))
        for i, a in enumerate(todo):
            n = out[2 * i]
            self.go[a] = None if n == '?' else n


class PerfMap:
    """A JIT's /tmp/perf-PID.map: START SIZE NAME lines, in file order."""

    def __init__(self, path):
        self.entries = []
        with open(path, errors='replace') as f:
            for ln in f:
                p = ln.rstrip('\n').split(' ', 2)
                if len(p) == 3:
                    try:
                        self.entries.append((int(p[0], 16), int(p[1], 16),
                                             p[2]))
                    except ValueError:
                        pass
        self.cache = {}

    def entry(self, addr):
        if addr not in self.cache:
            e = None
            for s, sz, n in self.entries:     # the last one written wins
                if s <= addr < s + sz:
                    e = (s, n)
            self.cache[addr] = e
        return self.cache[addr]

    def name_at(self, addr):
        e = self.entry(addr)
        return e[1] if e else None

    def names_at(self, addr):
        e = self.entry(addr)
        return [e[1]] if e else []

    def confirms(self, addr, name, off):
        e = self.entry(addr)
        return e is not None and e[1] == name and (off is None or
                                                   addr - e[0] == off)


def namer(dso, cache):
    if dso in cache:
        return cache[dso]
    n = None
    if re.match(r'^/tmp/perf-\d+\.map$', dso) and os.path.exists(dso):
        n = PerfMap(dso)
    elif dso.startswith('/') and os.path.isfile(dso):
        with open(dso, 'rb') as f:
            if f.read(4) == b'\x7fELF':
                n = Elf(dso)
    cache[dso] = n
    return n


def main():
    runtime, path, comms = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    roots = ROOTS[runtime]
    samples = parse(path, comms)
    cache = {}
    # Go: one addr2line run per binary for all its addresses
    goaddrs = {}
    for s in samples:
        for a, _, d in s:
            if a < 1 << 47:
                n = namer(d, cache)
                if isinstance(n, Elf) and n.is_go:
                    goaddrs.setdefault(d, set()).add(a)
    for d, addrs in goaddrs.items():
        cache[d].resolve_go(addrs)

    f = dict(samples=0, exec_exit=0, no_user=0, root=0, frames=0, named=0,
             nameable=0, named_ok=0, checked=0, wrong=0, ruled=0)
    notroot = {}
    wrong = {}
    for s in samples:
        user = [fr for fr in s if fr[0] < 1 << 47 and
                fr[2] != '[kernel.kallsyms]']
        if not user:
            if any(EXEC_EXIT.match(fr[1]) for fr in s):
                f['exec_exit'] += 1
                continue
            f['samples'] += 1
            f['no_user'] += 1
            notroot['(no user frames)'] = notroot.get('(no user frames)',
                                                      0) + 1
            continue
        f['samples'] += 1
        a, sym, dso = user[-1]
        nm = namer(dso, cache)
        # the independent tool's names where it has one, else the tool's
        names = nm.names_at(a) if nm else []
        name = names[0] if names else None
        if not names and split_name(sym)[0] is not None:
            names = [split_name(sym)[0]]
        if any(base(n) in roots for n in names):
            f['root'] += 1
        else:
            k = '%x %s (%s) [%s]' % (a, sym, dso, name)
            notroot[k] = notroot.get(k, 0) + 1
        for a, sym, dso in user:
            f['frames'] += 1
            name, off = split_name(sym)
            nm = namer(dso, cache)
            ind = nm.name_at(a) if nm else None
            if ind is not None and not (isinstance(nm, Elf) and
                                        nm.synthetic(a)):
                f['nameable'] += 1
            if name is None:
                continue
            f['named'] += 1
            if ind is not None and not (isinstance(nm, Elf) and
                                        nm.synthetic(a)):
                f['named_ok'] += 1
            if name.endswith('@plt') or name == '.plt' or \
                    (isinstance(nm, Elf) and nm.in_plt(a)):
                f['ruled'] += 1
                continue
            if nm is None:
                continue
            f['checked'] += 1
            if not nm.confirms(a, name, off):
                f['wrong'] += 1
                k = '%x %s (%s): independent tool: %s' % (a, sym, dso, ind)
                wrong[k] = wrong.get(k, 0) + 1
    print(' '.join('%s=%d' % kv for kv in f.items()))
    for k, v in sorted(notroot.items(), key=lambda kv: -kv[1])[:5]:
        print('  not at the root: %d x %s' % (v, k), file=sys.stderr)
    for k, v in sorted(wrong.items(), key=lambda kv: -kv[1])[:5]:
        print('  wrong name: %d x %s' % (v, k), file=sys.stderr)


main()
