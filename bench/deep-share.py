# usage: sfprof script -i F | python3 bench/deep-share.py BINARY go|ENTRY
# Share of samples with a frame in BINARY whose outermost user frame is a
# root: for Go (mode go) runtime.goexit / runtime.mstart / runtime.rt0_go
# named by `go tool addr2line`; for C (mode c) the ELF entry point (_start).
import sys, subprocess, collections
binary, mode = sys.argv[1], sys.argv[2]
base = 0x400000
last = collections.Counter()
tot = 0
frames = []
def flush():
    global tot, frames
    if frames and any(binary in f[1] for f in frames):
        tot += 1
        a, d = frames[-1]
        last[(a, binary in d)] += 1
    frames = []
for line in sys.stdin:
    if not line.strip() or not line[0].isspace():
        flush(); continue
    p = line.split()
    if '[kernel.kallsyms]' in line: continue
    frames.append((p[0], p[-1]))
flush()
roots = 0
names = {}
if mode == 'go':
    addrs = [a for (a, inb) in last if inb]
    out = subprocess.run(['go', 'tool', 'addr2line', binary], input='\n'.join('0x%x' % (int(a, 16) + base) for a in addrs) + '\n', capture_output=True, text=True).stdout.split('\n')
    for i, a in enumerate(addrs):
        names[a] = out[2 * i]
    rootset = {'runtime.goexit', 'runtime.mstart', 'runtime.rt0_go'}
else:
    entry = int(mode, 16)
    rootset = {'_start'}
    for (a, inb) in last:
        if inb and 0 <= int(a, 16) + base - entry < 0x40:
            names[a] = '_start'
by = collections.Counter()
for (a, inb), c in last.items():
    n = names.get(a, '?') if inb else 'other DSO'
    by[n if n in rootset or n in ('runtime.systemstack', 'runtime.morestack', 'runtime.mcall', 'runtime.sigtramp', 'other DSO') else 'elsewhere (cut)'] += c
    if n in rootset: roots += c
print('samples %d root %d (%.1f%%)' % (tot, roots, 100.0 * roots / max(tot, 1)), dict(by.most_common()))
