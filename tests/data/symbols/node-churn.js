// Many short-lived functions: V8 compiles each (baseline/optimized code with
// --perf-basic-prof entries), the garbage collector frees them, and new code
// is put at the addresses the dead code had: the map's entries overlap.
let s = 0;
for (let r = 0; r < +(process.argv[2] || 200); r++) {
  const fns = [];
  for (let i = 0; i < 20; i++)
    fns.push(new Function("n", "let t = 0; for (let k = 0; k < n; k++) t += (k * " + (r * 20 + i) + ") % 7; return t;"));
  for (const f of fns) for (let j = 0; j < 50; j++) s += f(200 + (r % 13) * 37);
  if (globalThis.gc) gc();
}
console.log(s > 0 ? "ok" : "no");
