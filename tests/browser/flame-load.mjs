// How long a flame graph page takes to show its first picture in headless
// Chromium: a benchmark's probe (bench/bench-flamegraph.c runs it), not a
// test.  Each page is opened --runs times in one browser, the pages taking
// turns so that a burst of load on the machine hits them alike.
//
//   node flame-load.mjs --runs 5 PAGE.html [PAGE2.html ...]
//
// Per page and run it measures, in the page's own clock (milliseconds from
// the start of the navigation):
//   draw   the first picture: the viewer's sfpFlame.firstDrawMs (when its
//          first render() returned, drawing the preview of a big tree),
//          or, for pages that predate it, when the viewer set
//          window.sfpFlame after its first render() (caught by a setter
//          installed before any of the page's scripts run)
//   frame  the first animation frame after the first draw: the picture
//          on screen
//   ready  when the whole page is interactive (window.sfpFlame set)
// and the viewer's own sfpFlame.loadMs (its script start to ready).
// Prints one line per run and, per page, the median of each figure as
//   RESULT <page> draw_ms=.. frame_ms=.. ready_ms=.. script_ms=.. bytes=..
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launch } from './lib.mjs';

const argv = process.argv.slice(2);
let runs = 5;
const pages = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--runs') runs = Number(argv[++i]);
  else pages.push(argv[i]);
}
if (!pages.length || !(runs > 0)) {
  console.error('usage: node flame-load.mjs [--runs N] PAGE.html...');
  process.exit(2);
}

const hook = () => {
  let v;
  // the first animation frame after the first draw: a page's preview is
  // drawn by a script that runs before the rest of the page is parsed, so
  // its frame may come before window.sfpFlame exists
  const frames = [];
  const tick = () => { frames.push(performance.now()); if (!v) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  window.__sfpFrames = frames;
  Object.defineProperty(window, 'sfpFlame', {
    configurable: true,
    get() { return v; },
    set(x) {
      v = x;
      window.__sfpReadyAt = performance.now();
      requestAnimationFrame(() => { frames.push(performance.now()); window.__sfpDone = true; });
    },
  });
};

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const b = await launch();
let rc = 0;
try {
  const res = pages.map(() => ({ draw: [], frame: [], ready: [], script: [] }));
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < pages.length; k++) {
      const page = await b.context.newPage();
      await page.addInitScript(hook);
      await page.goto(pathToFileURL(resolve(pages[k])).href, { waitUntil: 'load', timeout: 120000 });
      await page.waitForFunction(() => window.__sfpDone === true, null, { timeout: 120000 });
      const m = await page.evaluate(() => {
        const f = window.sfpFlame, draw = f.firstDrawMs || window.__sfpReadyAt;
        return { draw, frame: window.__sfpFrames.find((t) => t >= draw), ready: window.__sfpReadyAt,
          script: f.loadMs, drawn: f.drawnCount(), previewed: !!f.previewed };
      });
      await page.close();
      res[k].draw.push(m.draw); res[k].frame.push(m.frame); res[k].ready.push(m.ready); res[k].script.push(m.script);
      console.log(`  run ${r + 1} ${pages[k]}: first draw ${m.draw.toFixed(0)} ms` +
        `${m.previewed ? ' (preview)' : ''}, on screen ${m.frame.toFixed(0)} ms, ` +
        `interactive ${m.ready.toFixed(0)} ms, viewer script ${m.script.toFixed(0)} ms, ${m.drawn} frames drawn`);
    }
  }
  pages.forEach((p, k) => {
    console.log(`RESULT ${p} draw_ms=${median(res[k].draw).toFixed(0)} ` +
      `frame_ms=${median(res[k].frame).toFixed(0)} ready_ms=${median(res[k].ready).toFixed(0)} ` +
      `script_ms=${median(res[k].script).toFixed(0)} ` +
      `bytes=${statSync(p).size}`);
  });
} catch (e) {
  console.error(e && e.stack || e);
  rc = 1;
} finally {
  await b.close();
}
process.exit(rc);
