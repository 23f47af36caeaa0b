// Browser checks of inferbench pages, run by the Go tests (report and web) through node.
//
//   node check.mjs report FILE OUTDIR         load a report, draw every chart, screenshot it
//   node check.mjs dashboard URL OUTDIR [TOKEN]  walk the dashboard: run list → a run → a compare → trends
//   node check.mjs time FILE [N]              open a report N times, print load-to-first-charts times
//
// It prints one JSON object: {"pages": [{name, url, charts, rendered, ms}], "errors": [...]}.
// Any console error, page error or dialog (an injected alert) is an error. Chromium is Debian's
// (CHROMIUM overrides /usr/bin/chromium); playwright-core drives it, pinned in web/package.json.
import { chromium } from 'playwright-core';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, target, outDir, token] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const errors = [];
const pages = [];
const context = await browser.newContext({
  viewport: { width: 1280, height: 900 },
  extraHTTPHeaders: token ? { Authorization: 'Bearer ' + token } : {},
});
// Reports must open offline: any request off the page's own origin is an error.
const page = await context.newPage();
page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
page.on('dialog', async (d) => { errors.push(`dialog: ${d.type()} ${d.message()}`); await d.dismiss(); });

// check draws every chart on the current page and verifies each holds a non-empty canvas.
async function check(name, shot, full) {
  const t0 = Date.now();
  const total = await page.evaluate(() => (window.inferbench ? window.inferbench.renderAll() : -1));
  if (total < 0) { errors.push(`${name}: page script did not run`); }
  const bad = await page.evaluate(() => {
    const out = [];
    document.querySelectorAll('[data-chart]').forEach((d) => {
      const c = d.querySelector('canvas');
      if (d.getAttribute('data-rendered') !== 'ok' || !c || c.width === 0 || c.height === 0) {
        out.push(`${d.getAttribute('data-chart')} (${d.getAttribute('aria-label')}): ${d.getAttribute('data-rendered')}`);
      }
    });
    return out;
  });
  bad.forEach((b) => errors.push(`${name}: chart not rendered: ${b}`));
  const st = await page.evaluate(() => (window.inferbench ? window.inferbench.status() : {}));
  if (shot && outDir) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(outDir, shot), fullPage: !!full, clip: full ? { x: 0, y: 0, width: 1280, height: Math.min(full, 6000) } : undefined });
  }
  pages.push({ name, url: page.url(), charts: Math.max(total, 0), rendered: st.ok || 0, ms: Date.now() - t0 });
}

// firstScreen is the time from navigation to the load event and the charts in view drawn.
async function openTimed(url) {
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => {
    if (!window.inferbench) return false;
    const visible = Array.from(document.querySelectorAll('[data-chart]')).filter((d) => d.getBoundingClientRect().top < window.innerHeight);
    return visible.every((d) => d.getAttribute('data-rendered'));
  }, null, { timeout: 30000 });
  return Date.now() - t0;
}

try {
  if (mode === 'report') {
    const url = pathToFileURL(path.resolve(target)).href;
    page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push(`network request from a report: ${r.url()}`); });
    const ms = await openTimed(url);
    await check('report', 'report.png', 1400);
    pages[pages.length - 1].open_ms = ms;
    if (outDir) {
      const sections = page.locator('section.bench');
      const n = Math.min(await sections.count(), 2);
      for (let i = 0; i < n; i++) { await sections.nth(i).screenshot({ path: path.join(outDir, `report-bench-${i + 1}.png`) }); }
    }
  } else if (mode === 'time') {
    const url = pathToFileURL(path.resolve(target)).href;
    const n = Number(outDir || 5);
    const times = [];
    for (let i = 0; i < n; i++) { times.push(await openTimed(url)); }
    pages.push({ name: 'time', url, times });
  } else if (mode === 'dashboard') {
    const base = target.replace(/\/$/, '');
    await openTimed(base + '/');
    await check('runs', 'dashboard-runs.png', 1100);
    await page.click('a.run-link');
    await page.waitForLoadState('load');
    await check('run', 'dashboard-run.png', 1800);
    await page.goto(base + '/', { waitUntil: 'load' });
    await page.click('a.compare-link');
    await page.waitForLoadState('load');
    await check('compare', 'dashboard-compare.png', 1800);
    await page.goto(base + '/', { waitUntil: 'load' });
    await page.click('a.trends-link');
    await page.waitForLoadState('load');
    await check('trends', 'dashboard-trends.png', 1500);
    await page.goto(base + '/live', { waitUntil: 'load' });
    await check('live', 'dashboard-live.png', 900);
  } else {
    errors.push(`unknown mode ${mode}`);
  }
} catch (e) {
  errors.push(`exception: ${e.message}`);
}
await browser.close();
console.log(JSON.stringify({ pages, errors }));
