# SPDX-License-Identifier: MIT
# Run by gdb-multiarch (test-unwind-gdb-aarch64): connect to qemu-aarch64's
# gdb stub, break at every instruction of the functions named in
# $SNAP_FUNCS, and at each first hit write the registers, gdb's backtrace
# and the stack from sp to its top to $SNAP_OUT; then drop that breakpoint.
# (x0..x28 too: test-unwind-gdb-aarch64 also writes the stops as perf
# samples with arm64's full user register set.)
import os
import time

import gdb

out = open(os.environ["SNAP_OUT"], "w")
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry off")

# qemu opens its port before the guest starts, but may not have yet.
for attempt in range(100):
    try:
        gdb.execute("target remote :" + os.environ["SNAP_PORT"], to_string=True)
        break
    except gdb.error:
        time.sleep(0.1)
else:
    raise SystemExit("cannot connect to qemu")

arch = gdb.newest_frame().architecture()
bps = {}
for name in os.environ["SNAP_FUNCS"].split(","):
    sym = gdb.lookup_global_symbol(name) or gdb.lookup_static_symbol(name)
    start = int(sym.value().address)
    block = gdb.block_for_pc(start)
    for insn in arch.disassemble(block.start, block.end - 1):
        bp = gdb.Breakpoint("*0x%x" % insn["addr"], internal=True)
        bps[insn["addr"]] = bp
out.write("bps %d\n" % len(bps))


def stack_top(sp):
    inf = gdb.selected_inferior()
    page = sp & ~4095
    for i in range(64):
        try:
            inf.read_memory(page + 4096 * (i + 1) - 8, 8)
        except gdb.MemoryError:
            return page + 4096 * i
    return page + 4096 * 64


while bps:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().threads():
        break
    f = gdb.newest_frame()
    pc = f.pc()
    regs = [int(f.read_register(r)) & (2**64 - 1) for r in ("sp", "x29", "x30")]
    frames = []
    tailcalls = 0
    fr = f
    while fr is not None and len(frames) < 64:
        # A frame gdb infers from the debug info's call sites for a
        # function that was left by a tail call: nothing of it is on the
        # stack, so no stack unwinder can list it.
        if fr.type() == gdb.TAILCALL_FRAME:
            tailcalls += 1
        else:
            frames.append(fr.pc())
        fr = fr.older()
    sp = regs[0]
    top = stack_top(sp)
    mem = bytes(gdb.selected_inferior().read_memory(sp, top - sp))
    xregs = [int(f.read_register("x%d" % i)) & (2**64 - 1) for i in range(29)]
    out.write("stop %x %x %x %x\n" % (pc, regs[0], regs[1], regs[2]))
    out.write("xregs %s\n" % " ".join("%x" % v for v in xregs))
    out.write("frames %d %s\n" % (len(frames), " ".join("%x" % a for a in frames)))
    out.write("tailcalls %d\n" % tailcalls)
    out.write("mem %x %s\n" % (sp, mem.hex()))
    bp = bps.pop(pc, None)
    if bp is not None:
        bp.delete()
out.write("end\n")
out.close()
try:
    gdb.execute("kill", to_string=True)
except gdb.error:
    pass
