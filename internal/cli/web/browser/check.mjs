// Browser checks of inferbench pages, run by the Go tests (report and web) through node.
//
//   node check.mjs report FILE OUTDIR         load a report, draw every chart, screenshot it
//   node check.mjs dashboard URL OUTDIR [TOKEN]  walk the dashboard: run list → a run → a compare → trends
//   node check.mjs time FILE [N]              open a report N times, print load-to-first-charts times
//   node check.mjs flame FILE OUTDIR          the differential flame graphs of a page: each frame drawn
//                                             with a size, each label inside its frame
//
// It prints one JSON object: {"pages": [{name, url, charts, rendered, drawn, ms}], "errors": [...]}
// (drawn: the titles of the charts drawn).
// Any console error, page error or dialog (an injected alert) is an error. Chromium is Debian's
// (CHROMIUM overrides /usr/bin/chromium); playwright-core drives it, pinned in internal/cli/web/package.json.
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
  // The titles of the charts drawn, so that a test can name the charts it expects.
  const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('[data-chart][data-rendered="ok"]')).map((d) => d.getAttribute('aria-label')));
  if (shot && outDir) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(outDir, shot), fullPage: !!full, clip: full ? { x: 0, y: 0, width: 1280, height: Math.min(full, 6000) } : undefined });
  }
  pages.push({ name, url: page.url(), charts: Math.max(total, 0), rendered: st.ok || 0, drawn, ms: Date.now() - t0 });
}

// overlaps returns the visible texts of the chart drawn in the element of id that intersect
// (a legend entry over an axis label, a rotated label over the axis name, crowded tick labels)
// or leave the chart, with their boxes: every text of a chart must be readable.
async function overlaps(id) {
  return page.evaluate((id) => {
    const div = document.getElementById(id);
    const chart = div && window.echarts && window.echarts.getInstanceByDom(div);
    if (!chart) { return [`${id}: no chart`]; }
    // Each text as the four corners of its box, rotated as drawn (a rotated label's upright
    // bounding box would cover its neighbours' although the texts do not touch).
    const boxes = [];
    chart.getZr().storage.getDisplayList(true).forEach((el) => {
      const text = (el.type === 'tspan' || el.type === 'text') && el.style ? el.style.text : null;
      if (!text || el.invisible || el.ignore || el.style.opacity === 0) { return; }
      const r = el.getBoundingRect();
      if (!(r.width > 0 && r.height > 0)) { return; }
      // zrender's box of a text line is 0.6 em high around its middle; a glyph takes an em.
      const h = Number(el.style.fontSize) || r.height / 0.6;
      const top = r.y + r.height / 2 - h / 2;
      const m = el.getComputedTransform() || [1, 0, 0, 1, 0, 0];
      const pts = [[r.x, top], [r.x + r.width, top], [r.x + r.width, top + h], [r.x, top + h]]
        .map(([x, y]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]]);
      boxes.push({ text: String(text), pts });
    });
    // separated reports whether an edge of p is a separating axis of the convex polygons p and q,
    // with one pixel of slack (glyph boxes of neighbouring lines touch).
    const separated = (p, q) => p.some((a, i) => {
      const b = p[(i + 1) % p.length];
      const nx = a[1] - b[1], ny = b[0] - a[0];
      const len = Math.hypot(nx, ny) || 1;
      const proj = (pts) => pts.map(([x, y]) => (nx * x + ny * y) / len);
      const pp = proj(p), qq = proj(q);
      return Math.max(...pp) <= Math.min(...qq) + 1 || Math.max(...qq) <= Math.min(...pp) + 1;
    });
    const out = [];
    const where = (pts) => `(${pts.map(([x, y]) => `${Math.round(x)},${Math.round(y)}`).join(' ')})`;
    const w = chart.getWidth(), h = chart.getHeight();
    boxes.forEach((b) => {
      if (b.pts.some(([x, y]) => x < -1 || y < -1 || x > w + 1 || y > h + 1)) { out.push(`"${b.text}" ${where(b.pts)} is cut off the ${w}x${h} chart`); }
    });
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (!separated(a.pts, b.pts) && !separated(b.pts, a.pts)) {
          out.push(`"${a.text}" ${where(a.pts)} overlaps "${b.text}" ${where(b.pts)}`);
        }
      }
    }
    return out.length ? out : (boxes.length ? [] : [`${id}: no text drawn`]);
  }, id);
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
  } else if (mode === 'flame') {
    const url = pathToFileURL(path.resolve(target)).href;
    await page.goto(url, { waitUntil: 'load' });
    // Per graph: its frames with a drawn size, and the labels whose text (as the browser's fonts
    // draw it) leaves its frame's rectangle.
    const graphs = await page.evaluate(() => Array.from(document.querySelectorAll('svg.flame')).map((svg) => {
      const box = svg.getBoundingClientRect();
      const frames = Array.from(svg.querySelectorAll('g.frame'));
      const drawn = [];
      const out = [];
      frames.forEach((g) => {
        const r = g.querySelector('rect').getBoundingClientRect();
        if (r.width > 0 && r.height > 0) { drawn.push(g.getAttribute('data-name')); }
        const t = g.querySelector('text');
        if (!t) { return; }
        const tb = t.getBoundingClientRect();
        if (tb.left < r.left - 0.5 || tb.right > r.right + 0.5 || tb.top < r.top - 0.5 || tb.bottom > r.bottom + 0.5) {
          out.push(`label "${t.textContent}" (${Math.round(tb.width)}×${Math.round(tb.height)} px) leaves its frame (${Math.round(r.width)}×${Math.round(r.height)} px)`);
        }
      });
      return { width: box.width, height: box.height, frames: frames.length, drawn, out };
    }));
    graphs.forEach((g, i) => {
      if (!(g.width > 0 && g.height > 0)) { errors.push(`flame graph ${i + 1}: drawn ${g.width}×${g.height} px`); }
      g.out.forEach((o) => errors.push(`flame graph ${i + 1}: ${o}`));
      pages.push({ name: `flame ${i + 1}`, url, charts: g.frames, rendered: g.drawn.length, drawn: g.drawn });
    });
    if (outDir) {
      const svg = page.locator('svg.flame');
      if (await svg.count() > 0) { await svg.first().screenshot({ path: path.join(outDir, 'flame.png') }); }
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
    await page.waitForFunction(() => document.querySelectorAll('#live-rows tr').length > 0, null, { timeout: 10000 });
    await check('live', 'dashboard-live.png', 900);
    (await overlaps('live-chart')).forEach((o) => errors.push(`live chart: ${o}`));
  } else {
    errors.push(`unknown mode ${mode}`);
  }
} catch (e) {
  errors.push(`exception: ${e.message}`);
}
await browser.close();
console.log(JSON.stringify({ pages, errors }));
