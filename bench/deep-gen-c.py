# The cc1 workload of bench/RESULTS.md "Deep stacks" (issue 37): python3
# bench/deep-gen-c.py writes big.c (560 KB; gcc -O2 -c big.c, about 12 s of CPU).
# A large C file for cc1: many functions with nested control flow, inlined
# helpers, structs and long expressions (deep trees in the front end and
# the optimizer).
import random
random.seed(7)
out = []
out.append("#include <stddef.h>\nstruct node { int k; long v; struct node *l, *r; double w[4]; };\n")
N = 150
def expr(d):
    if d == 0:
        return random.choice(["a", "b", "c", "p->k", "p->v", "x[%d]" % random.randint(0, 7), str(random.randint(1, 99))])
    op = random.choice(["+", "-", "*", "^", "&", "|", "<<"])
    e = "(%s %s %s)" % (expr(d - 1), op, expr(random.randint(0, d - 1)))
    if random.random() < 0.2:
        e = "(%s ? %s : %s)" % (expr(d - 1), e, expr(0))
    return e
def stmt(d, i):
    r = random.random()
    if d == 0 or r < 0.25:
        return "a = %s;" % expr(random.randint(2, 8))
    if r < 0.45:
        return "for (int j%d = 0; j%d < n; j%d++) { %s %s }" % (d, d, d, stmt(d - 1, i), stmt(d - 1, i))
    if r < 0.65:
        return "if (%s > b) { %s } else { %s }" % (expr(3), stmt(d - 1, i), stmt(d - 1, i))
    if r < 0.8:
        cases = " ".join("case %d: %s break;" % (k, stmt(d - 1, i)) for k in range(4))
        return "switch (a & 3) { %s default: b++; }" % cases
    if i > 0:
        return "b += f%d(p, a, b, c, x, n);" % random.randint(max(0, i - 3), i - 1)
    return "b ^= a;"
for i in range(N):
    st = " ".join(stmt(random.randint(2, 4), i) for _ in range(3))
    out.append("long f%d(struct node *p, long a, long b, long c, long *x, int n)\n{ %s return a + b + c; }\n" % (i, st))
out.append("long entry(struct node *p, long *x, int n) { long s = 0;\n")
for i in range(0, N, 7):
    out.append(" s += f%d(p, s, n, %d, x, n);\n" % (i, i))
out.append(" return s; }\n")
open("big.c", "w").write("".join(out))
