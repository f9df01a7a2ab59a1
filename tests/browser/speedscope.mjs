// Load an `sfprof export --format speedscope` file into the real speedscope
// viewer (the npm package's release build, served from 127.0.0.1 by this
// script) in headless Chromium, and check that speedscope imports it and
// shows the expected hot function.  Prints PASS:/FAIL: lines.
//
//   node speedscope.mjs --json FILE --hot NAME --shots DIR --tag T
//                       [--min-share 0.3]
import { createServer } from 'node:http';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { args, check, fail, failed, launch, pass } from './lib.mjs';

const a = args();
const tag = a.tag || 'speedscope';
const shots = a.shots || '.';
mkdirSync(shots, { recursive: true });

const require = createRequire(import.meta.url);
const release = join(dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const profile = readFileSync(resolve(a.json));
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.png': 'image/png', '.wasm': 'application/wasm',
  '.woff2': 'font/woff2', '.ico': 'image/x-icon', '.txt': 'text/plain' };

/* a static server for speedscope's files plus /profile.json; loopback only */
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (path === '/profile.json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(profile);
  }
  const f = normalize(join(release, path === '/' ? 'index.html' : path));
  if (!f.startsWith(release) || !existsSync(f)) { res.writeHead(404); return res.end(); }
  res.writeHead(200, { 'content-type': types[extname(f)] || 'application/octet-stream' });
  res.end(readFileSync(f));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

// speedscope draws its flame charts with WebGL: SwiftShader renders it on
// the CPU (no GPU here)
// launching is part of the session: a browser that does not start is a
// FAIL, as is one that crashes later
let close = async () => {};
try {
  const b = await launch(['--use-angle=swiftshader', '--enable-unsafe-swiftshader']);
  close = b.close;
  const context = b.context;
  const page = context.pages()[0] || await context.newPage();
  const outside = [], problems = [];
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(base + '/') || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    outside.push(u);
    return route.abort();
  });
  page.on('pageerror', (e) => problems.push(String(e)));

  const t0 = Date.now();
  await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profile.json')}`,
    { waitUntil: 'load', timeout: 60000 });
  // the profile's name appears in the toolbar once imported
  const imported = await page.waitForFunction(() => {
    const t = document.body.innerText;
    return /Time Order/.test(t) && /Sandwich/.test(t) && !/Drag and drop a profile/.test(t);
  }, null, { timeout: 60000 }).then(() => true, () => false);
  console.log(`  ${tag}: speedscope import ${Date.now() - t0} ms`);
  check(`${tag}: speedscope imports the file`, imported,
    (await page.evaluate(() => document.body.innerText)).slice(0, 400));
  check(`${tag}: no request outside the local server`, outside.length === 0, outside.join('\n'));
  check(`${tag}: no script errors`, problems.length === 0, problems.join('\n'));

  await page.screenshot({ path: join(shots, `${tag}-timeorder.png`) });

  // the sandwich view lists every function with its total and self time
  await page.getByText(/Sandwich$/).first().click();
  const row = page.locator('tr', { hasText: a.hot }).first();
  const found = await row.waitFor({ timeout: 20000 }).then(() => true, () => false);
  check(`${tag}: sandwich view lists ${a.hot}`, found);
  if (found) {
    const text = await row.innerText();
    // "Total  Self  Symbol": the first percentage is the total share
    const m = text.match(/([0-9.]+)%/);
    const share = m ? Number(m[1]) / 100 : -1;
    console.log(`  ${tag}: sandwich row: ${text.replace(/\s+/g, ' ')}`);
    const minShare = Number(a['min-share'] || 0);
    check(`${tag}: ${a.hot} total >= ${minShare * 100}% in speedscope`, share >= minShare, text);
    // selecting it shows its callers and callees
    await row.click();
    const sel = await page.waitForFunction((name) => document.body.innerText.includes(name) &&
      /Callers|Callees/i.test(document.body.innerText), a.hot, { timeout: 20000 }).then(() => true, () => false);
    check(`${tag}: selecting ${a.hot} shows its callers/callees`, sel);
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(shots, `${tag}-sandwich.png`) });
  }
  pass(`${tag}: screenshots in ${shots}`);
} catch (e) {
  fail(`${tag}: browser session`, e && e.stack || e);
} finally {
  await close();
  server.close();
}
process.exit(failed() ? 1 : 0);
