// Shared pieces of the browser tests: the system Chromium driven by
// playwright-core (no browser download), PASS/FAIL lines as the CLI tests
// print them, and a guard that records every network request a page tries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.SFP_CHROMIUM || '/usr/bin/chromium';

let failures = 0;
export function pass(name) { console.log(`PASS: ${name}`); }
export function fail(name, why) {
  failures++;
  console.log(`FAIL: ${name}`);
  if (why) for (const l of String(why).split('\n').slice(0, 15)) console.log(`  ${l}`);
}
export function check(name, ok, why) { if (ok) pass(name); else fail(name, why); return ok; }
export function failed() { return failures; }

/* argv of the form --key value into an object */
export function args() {
  const a = {}, v = process.argv.slice(2);
  for (let i = 0; i < v.length; i++) {
    if (!v[i].startsWith('--')) continue;
    const k = v[i].slice(2);
    a[k] = i + 1 < v.length && !v[i + 1].startsWith('--') ? v[++i] : true;
  }
  return a;
}

/*
 * A fresh headless Chromium with its own profile directory.  The flags
 * keep it from talking to anything by itself (updates, sync, field
 * trials), so that a request seen by the test was made by the page.
 */
export async function launch(extraArgs = []) {
  const userDir = mkdtempSync(join(process.env.SFP_TEST_TMP || tmpdir(), 'chromium-'));
  // playwright passes the directory as --user-data-dir itself
  let context;
  try {
    context = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
        '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage', ...extraArgs],
    });
  } catch (e) {
    // the caller reports it (a browser that does not start is a FAIL)
    rmSync(userDir, { recursive: true, force: true });
    throw e;
  }
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(userDir, { recursive: true, force: true });
  };
  return { context, close };
}

/*
 * Record every request the page makes; those not allowed by @allow (a
 * function of the URL) are aborted so a test never reaches the network.
 */
export async function guardRequests(page, allow) {
  const seen = [], blocked = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    seen.push(url);
    if (allow(url)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  page.on('request', (r) => { if (!seen.includes(r.url())) seen.push(r.url()); });
  return { seen, blocked };
}
