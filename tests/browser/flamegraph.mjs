// Open an `sfprof flamegraph` page in headless Chromium and use it as a
// person would: find the hot frame, hover it, click it to zoom, zoom out,
// search for it.  Prints PASS:/FAIL: lines; screenshots go to --shots.
//
//   node flamegraph.mjs --html FILE --hot NAME --shots DIR --tag T
//                       [--min-share 0.3] [--kernel] [--path a,b,c] [--empty]
//
// --empty: a profile without samples (the page must say so, without errors).
// --hot @widest: the widest frame two levels below the root, whatever its
//   name (for synthetic profiles).
// --kernel: also require a kernel frame drawn in the kernel colour family.
// --path: the zoomed frame's breadcrumb must end with these callers.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { args, check, fail, failed, launch, pass } from './lib.mjs';

const a = args();
const tag = a.tag || 'flamegraph';
const shots = a.shots || '.';
mkdirSync(shots, { recursive: true });
const url = pathToFileURL(resolve(a.html)).href;

// launching is part of the session: a browser that does not start is a
// FAIL, as is one that crashes later
let close = async () => {};
try {
  const b = await launch();
  close = b.close;
  const context = b.context;
  const page = context.pages()[0] || await context.newPage();
  const requests = [], problems = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));

  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load', timeout: 120000 });
  await page.waitForFunction(() => window.sfpFlame !== undefined, null, { timeout: 120000 });
  const loadMs = Date.now() - t0;
  const st = await page.evaluate(() => ({ nodes: sfpFlame.nodes, total: sfpFlame.total,
    drawn: sfpFlame.drawnCount(), ms: sfpFlame.loadMs, first: sfpFlame.firstDrawMs,
    previewed: sfpFlame.previewed }));
  console.log(`  ${tag}: ${st.nodes} frames in the tree, ${st.total} samples, ` +
    `${st.drawn} drawn; first draw ${Math.round(st.first)} ms after navigation` +
    `${st.previewed ? ' (the preview)' : ''}, interactive after ${loadMs} ms ` +
    `(viewer script ${Math.round(st.ms)} ms)`);
  if (a.empty) {
    const msg = await page.evaluate(() => document.getElementById('details').textContent);
    check(`${tag}: an empty profile says so`, st.total === 0 && /no samples/.test(msg), msg);
  } else {
    check(`${tag}: page loads and draws frames`, st.nodes > 1 && st.drawn > 1, JSON.stringify(st));
  }

  // geometry: every drawn frame lies within its parent's span
  const bad = await page.evaluate(() => {
    const out = [];
    for (let i = 1; i < sfpFlame.nodes && out.length < 5; i++) {
      const r = sfpFlame.rect(i), p = sfpFlame.parent(i);
      if (!r || p < 0) continue;
      const q = sfpFlame.rect(p);
      if (!q || r.x < q.x - 0.01 || r.x + r.w > q.x + q.w + 0.01)
        out.push(`${sfpFlame.info(i).name} [${r.x},${r.w}] outside its parent [${q && q.x},${q && q.w}]`);
    }
    return out;
  });
  check(`${tag}: every drawn frame lies within its caller`, bad.length === 0, bad.join('\n'));

  const others = requests.filter((u) => u !== url);
  check(`${tag}: no network request attempted`, others.length === 0, others.join('\n'));
  check(`${tag}: no script errors or policy violations`, problems.length === 0, problems.join('\n'));

  if (a.hot === '@widest') {
    a.hot = await page.evaluate(() => {
      let best = -1, bv = -1;
      for (let i = 1; i < sfpFlame.nodes; i++) {
        if (sfpFlame.parent(i) < 0 || sfpFlame.parent(sfpFlame.parent(i)) !== 0) continue;
        const v = sfpFlame.info(i).value;
        if (v > bv) { bv = v; best = i; }
      }
      return best > 0 ? sfpFlame.info(best).name : null;
    });
    console.log(`  ${tag}: widest frame at depth 2: ${a.hot}`);
  }
  if (a.hot) {
    const hot = await page.evaluate((name) => {
      const ids = sfpFlame.find(name);
      let best = -1, bv = -1;
      for (const id of ids) { const v = sfpFlame.info(id).value; if (v > bv) { bv = v; best = id; } }
      return best < 0 ? null : { id: best, info: sfpFlame.info(best), rect: sfpFlame.rect(best) };
    }, a.hot);
    if (!check(`${tag}: hot frame ${a.hot} is in the graph`, hot && hot.rect,
      hot ? 'found but not drawn' : 'not found')) throw new Error('no hot frame');
    const minShare = Number(a['min-share'] || 0);
    check(`${tag}: ${a.hot} holds >= ${minShare * 100}% of the samples`,
      hot.info.share >= minShare, `share ${hot.info.share}`);
    if (a.kernel) {
      const k = await page.evaluate(() => {
        for (let i = 1; i < sfpFlame.nodes; i++) if (sfpFlame.info(i).kernel && sfpFlame.rect(i)) return i;
        return -1;
      });
      check(`${tag}: kernel frames present and drawn`, k > 0);
    }

    // hover: the tooltip names the frame, its DSO and its share
    const cx = hot.rect.x + hot.rect.w / 2, cy = hot.rect.y + hot.rect.h / 2;
    await page.mouse.move(cx, cy);
    const tip = await page.evaluate(() => {
      const t = document.getElementById('tip');
      return { hidden: t.hidden, text: t.textContent };
    });
    check(`${tag}: hovering shows name, samples and share`, !tip.hidden &&
      tip.text.includes(a.hot) && /%/.test(tip.text) && /samples/.test(tip.text), JSON.stringify(tip));

    // click to zoom: the frame then spans the whole width, and the
    // breadcrumb ends with it
    await page.mouse.click(cx, cy);
    const z = await page.evaluate((id) => ({
      zoomed: sfpFlame.zoomed(), rect: sfpFlame.rect(id),
      crumb: document.querySelector('#crumbs .cur')?.textContent,
    }), hot.id);
    check(`${tag}: click zooms to ${a.hot}`, z.zoomed === hot.id, JSON.stringify(z));
    check(`${tag}: zoomed frame spans the full width`,
      z.rect && Math.abs(z.rect.w - z.rect.canvasWidth) < 1, JSON.stringify(z.rect));
    check(`${tag}: breadcrumb ends with the zoomed frame`, z.crumb === a.hot, `crumb ${z.crumb}`);
    if (a.path) {
      const crumbs = await page.evaluate(() =>
        [...document.querySelectorAll('#crumbs a, #crumbs .cur')].map((e) => e.textContent));
      const want = a.path.split(',');
      check(`${tag}: call path ${want.join(' > ')}`,
        crumbs.slice(-want.length).join(',') === want.join(','), crumbs.join(' > '));
    }
    await page.mouse.move(5, 5);
    await page.screenshot({ path: join(shots, `${tag}-zoomed.png`), fullPage: false });

    await page.keyboard.press('Escape');
    const back = await page.evaluate((id) => ({ zoomed: sfpFlame.zoomed(), rect: sfpFlame.rect(id) }), hot.id);
    check(`${tag}: Esc zooms back out`, back.zoomed === 0 && back.rect && back.rect.w < back.rect.canvasWidth - 1 ||
      back.zoomed === 0 && hot.info.share > 0.999, JSON.stringify(back));

    // root at the bottom: the hot frame is drawn above the root, clicking
    // it still zooms to it
    await page.click('#invert');
    const inv = await page.evaluate((id) => ({ hot: sfpFlame.rect(id), root: sfpFlame.rect(0) }), hot.id);
    check(`${tag}: "root at bottom" draws callees above their callers`,
      inv.hot && inv.root && inv.hot.y < inv.root.y, JSON.stringify(inv));
    if (inv.hot) {
      await page.mouse.click(inv.hot.x + inv.hot.w / 2, inv.hot.y + inv.hot.h / 2);
      check(`${tag}: click zooms with the root at the bottom`,
        await page.evaluate(() => sfpFlame.zoomed()) === hot.id);
    }
    await page.keyboard.press('Escape');
    await page.click('#invert');

    // search: typed as a person would; matches drawn in the match colour
    // and their share shown
    await page.click('#search');
    await page.keyboard.type(a.hot.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    await page.keyboard.press('Enter');
    const s = await page.evaluate(() => ({ text: document.getElementById('matched').textContent,
      hl: sfpFlame.highlighted(), m: sfpFlame.matched() }));
    check(`${tag}: search highlights matching frames`, s.hl > 0, JSON.stringify(s));
    check(`${tag}: search shows the matched share`, /Matched: [0-9.]+%/.test(s.text) &&
      s.m.share >= hot.info.share - 1e-9, JSON.stringify(s));
    // the highlight is really painted: sample the canvas at the frame
    const px = await page.evaluate((id) => {
      const r = sfpFlame.rect(id), c = document.getElementById('fg'), b = c.getBoundingClientRect();
      const sx = c.width / b.width;
      const d = c.getContext('2d').getImageData(Math.floor((r.x - b.left + 2) * sx),
        Math.floor((r.y - b.top + r.h / 2) * sx), 1, 1).data;
      return [d[0], d[1], d[2]];
    }, hot.id);
    check(`${tag}: matched frame painted in the match colour`,
      px[0] > 180 && px[1] < 110 && px[2] > 170, `pixel ${px}`);
    await page.screenshot({ path: join(shots, `${tag}-search.png`), fullPage: false });
    pass(`${tag}: screenshots in ${shots}`);
  } else {
    await page.screenshot({ path: join(shots, `${tag}.png`), fullPage: false });
  }
} catch (e) {
  fail(`${tag}: browser session`, e && e.stack || e);
} finally {
  await close();
}
process.exit(failed() ? 1 : 0);
