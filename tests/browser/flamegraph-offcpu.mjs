// Open the flame graph of a `sfprof record --off-cpu` file in headless
// Chromium and check what a person sees: the on/off/both switch, widths in
// time (blocked ns of the waiting function and on-CPU ns of the spinning
// one against what the program measured itself), off-CPU frames painted in
// blues and on-CPU ones in warm colours (read back from the canvas), and a
// click on the switch changing what is drawn.  Prints PASS:/FAIL: lines.
//
//   node flamegraph-offcpu.mjs --html FILE --tag T --shots DIR
//        --initial on|off|both --off-fn NAME --off-ns NS
//        --on-fn NAME --on-ns NS [--on-stolen-ns S]
//
// S: what irq and a hypervisor's steal took from the CPUs while the
// spinning thread ran; cpu-clock samples count it, the thread's CPU time
// (NS) does not, so the on-CPU width may be off by S beside its 10 %.
//
// Always 16 check lines (a session that dies midway adds one FAIL).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { args, check, fail, failed, launch } from './lib.mjs';

const a = args();
const tag = a.tag || 'offcpu';
const shots = a.shots || '.';
mkdirSync(shots, { recursive: true });
const url = pathToFileURL(resolve(a.html)).href;
const offNs = Number(a['off-ns']), onNs = Number(a['on-ns']);
const onStolen = Number(a['on-stolen-ns'] || 0);
const within = (got, want, pctv, slack = 0) =>
  want > 0 && Math.abs(got - want) <= want * pctv / 100 + slack;

// hue of an "hsl(h,s%,l%)" colour; -1 for anything else (grey, match)
const hue = (c) => { const m = /^hsl\((\d+),(\d+)%/.exec(c || ''); return m && +m[2] > 0 ? +m[1] : -1; };
const blue = (h) => h >= 195 && h <= 255;
const warm = (h) => h >= 0 && h <= 60;

// In the page: per named function, the time of its outermost frames (a
// frame inside another of the same name is not counted twice), what is
// drawn, and the canvas pixel inside its widest drawn frame.
function probe(name) {
  const ids = sfpFlame.find(name);
  const top = ids.filter((i) => { for (let p = sfpFlame.parent(i); p > 0; p = sfpFlame.parent(p)) if (ids.includes(p)) return false; return true; });
  let on = 0, off = 0, value = 0, best = -1, bw = 0;
  for (const i of top) {
    const d = sfpFlame.info(i);
    on += d.on; off += d.off; value += d.value;
    const r = sfpFlame.rect(i);
    if (r && r.w > bw) { bw = r.w; best = i; }
  }
  let px = null, colour = '';
  if (best >= 0) {
    const r = sfpFlame.rect(best), c = document.getElementById('fg'), b = c.getBoundingClientRect();
    const sx = c.width / b.width;
    // one pixel in from the left edge: inside the fill, before the label
    const d = c.getContext('2d').getImageData(Math.floor((r.x - b.left + 1) * sx),
      Math.floor((r.y - b.top + r.h / 2) * sx), 1, 1).data;
    px = [d[0], d[1], d[2]];
    colour = sfpFlame.colourOf(best);
  }
  return { n: ids.length, on, off, value, drawn: best >= 0, width: bw, px, colour };
}

function hues() {	// hues of every drawn non-root frame
  const out = [];
  for (let i = 1; i < sfpFlame.nodes; i++) { const c = sfpFlame.colourOf(i); if (c) out.push(c); }
  return out;
}

let close = async () => {};
try {
  const b = await launch();
  close = b.close;
  const page = b.context.pages()[0] || await b.context.newPage();
  const requests = [], problems = [];
  page.on('request', (r) => requests.push(r.url()));
  // (Chromium's hint about the test's own repeated getImageData is not the page's)
  page.on('console', (m) => { if ((m.type() === 'error' || m.type() === 'warning') && !/willReadFrequently/.test(m.text())) problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(url, { waitUntil: 'load', timeout: 120000 });
  await page.waitForFunction(() => window.sfpFlame !== undefined, null, { timeout: 120000 });
  // the helpers above, defined in the page (evaluated by the driver, not
  // by the page's own scripts)
  await page.evaluate(`window.probe = ${probe.toString()}; window.hues = ${hues.toString()};`);

  // 1-3: the page, its switch and its statement of the unit
  const st = await page.evaluate(() => ({
    timed: sfpFlame.timed, view: sfpFlame.view(), total: sfpFlame.total,
    root: sfpFlame.info(0),
    radios: [...document.querySelectorAll('#views input')].filter((r) => r.offsetParent !== null).map((r) => r.value),
    note: document.getElementById('unitnote').offsetParent !== null ? document.getElementById('unitnote').textContent : '',
  }));
  check(`${tag}: page in time with a visible on/off/both switch`,
    st.timed && st.radios.join(',') === 'on,off,both', JSON.stringify(st));
  check(`${tag}: the page says widths are time in ns`, /time/.test(st.note) && /ns/.test(st.note), st.note);
  check(`${tag}: first view is ${a.initial}, its total on+off as the view asks`,
    st.view === a.initial && st.total === (a.initial === 'on' ? st.root.on : a.initial === 'off' ? st.root.off : st.root.on + st.root.off) &&
    st.root.on > 0 && st.root.off > 0, JSON.stringify(st));

  // 4-8: both, chosen by clicking the switch as a person would
  await page.click('#views input[value="both"]');
  const both = await page.evaluate(([o, n]) => ({ view: sfpFlame.view(), off: probe(o), on: probe(n) }),
    [a['off-fn'], a['on-fn']]);
  check(`${tag}: both: ${a['off-fn']}() off-CPU time = the program's blocked time +-3 %`,
    within(both.off.off, offNs, 3), `${both.off.off} vs ${offNs}`);
  check(`${tag}: both: ${a['on-fn']}() on-CPU time = the program's CPU time +-10 %`,
    within(both.on.on, onNs, 10, onStolen), `${both.on.on} vs ${onNs} (+ ${onStolen} stolen)`);
  check(`${tag}: both: ${a['off-fn']}() drawn in an off-CPU blue (canvas pixel)`,
    both.off.drawn && blue(hue(both.off.colour)) && both.off.px[2] > both.off.px[0] + 40, JSON.stringify(both.off));
  check(`${tag}: both: ${a['on-fn']}() drawn in an on-CPU warm colour (canvas pixel)`,
    both.on.drawn && warm(hue(both.on.colour)) && both.on.px[0] > both.on.px[2] + 40, JSON.stringify(both.on));
  await page.screenshot({ path: join(shots, `${tag}-both.png`), fullPage: false });

  // 9-12: off-CPU only
  await page.click('#views input[value="off"]');
  const off = await page.evaluate(([o, n]) => ({ view: sfpFlame.view(), total: sfpFlame.total, root: sfpFlame.info(0),
    off: probe(o), on: probe(n), hues: hues() }), [a['off-fn'], a['on-fn']]);
  check(`${tag}: clicking off-CPU switches the view, total = all blocked time`,
    off.view === 'off' && off.total === off.root.off, JSON.stringify({ v: off.view, t: off.total, r: off.root }));
  check(`${tag}: off: ${a['on-fn']}() (never blocks) is not drawn`, !off.on.drawn, JSON.stringify(off.on));
  check(`${tag}: off: ${a['off-fn']}() is drawn wider than in both`,
    off.off.drawn && off.off.width > both.off.width, `${off.off.width} vs ${both.off.width}`);
  check(`${tag}: off: every drawn frame is blue`, off.hues.length > 0 && off.hues.every((c) => blue(hue(c))),
    off.hues.filter((c) => !blue(hue(c))).slice(0, 5).join(' '));
  await page.screenshot({ path: join(shots, `${tag}-off.png`), fullPage: false });

  // 13-15: on-CPU only
  await page.click('#views input[value="on"]');
  const on = await page.evaluate(([o, n]) => ({ view: sfpFlame.view(), total: sfpFlame.total, root: sfpFlame.info(0),
    off: probe(o), on: probe(n), hues: hues() }), [a['off-fn'], a['on-fn']]);
  check(`${tag}: clicking on-CPU switches the view, total = all on-CPU time`,
    on.view === 'on' && on.total === on.root.on, JSON.stringify({ v: on.view, t: on.total, r: on.root }));
  check(`${tag}: on: ${a['off-fn']}() shrinks to its CPU time (< 10 % of its width in both)`,
    !on.off.drawn || on.off.width < both.off.width / 10, `${on.off.width} vs ${both.off.width}`);
  check(`${tag}: on: no drawn frame is blue, ${a['on-fn']}() is drawn`,
    on.on.drawn && on.hues.length > 0 && !on.hues.some((c) => blue(hue(c))),
    on.hues.filter((c) => blue(hue(c))).slice(0, 5).join(' '));
  await page.screenshot({ path: join(shots, `${tag}-on.png`), fullPage: false });

  const others = requests.filter((u) => u !== url);
  check(`${tag}: no network request, no script error`, others.length === 0 && problems.length === 0,
    others.concat(problems).join('\n'));
} catch (e) {
  fail(`${tag}: browser session`, e && e.stack || e);
} finally {
  await close();
}
process.exit(failed() ? 1 : 0);
