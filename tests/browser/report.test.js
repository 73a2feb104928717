'use strict';
// report.test.js - the page of `gcsnap report` in headless Chromium, opened
// from file:// with the network blocked: the totals it shows are those of
// `gcsnap summary --json`, the type histogram sorts, filters and pages, the
// retainers are those of `dominators --json --by-type`, the diff and trend
// sections show `diff --json --top 0` and `trend --json`, names from the
// dump stay text, and the page logs no error and requests nothing.
// Screenshots of each view go to the output folder.

const h = require('./harness');
const path = require('path');
const fs = require('fs');
const { pathToFileURL } = require('url');

const PAGE_ROWS = 100;   // rows per page of the report's tables
const EVIL = 'Evil</script><b x="1">&amp;\'q\'<!--';

h.run('browser_report', async (t) => {
  for (const name of ['gcsnap', 'gcsnap-agent']) {
    if (!h.haveTool(name)) { t.skip(`${name} is not built`); return; }
  }

  // Three mock snapshots of one application, the last with two sections, and
  // a small dump whose type name is markup.
  const m1 = h.mockDump('mock:objects=3000,types=2500,seed=5', 'm1.gclog');
  const m2 = h.mockDump('mock:objects=4000,types=2500,seed=5', 'm2.gclog');
  const m3 = h.mockDump('mock:objects=6000,types=2500,sections=2,seed=5', 'm3.gclog');
  const evil = path.join(h.OUT, 'evil.gclog');
  fs.writeFileSync(evil, `a 2 app 0\nt 1 App.Root\nt 2 ${EVIL}\no 10 1 40 20\no 20 2 18\nr 10 1 0\nc app 0\n`);

  const report = (out, ...args) => { h.gcsnap('report', ...args, '-o', out); return path.join(h.OUT, out); };
  const pages = {
    plain: report('plain.html', m3),
    diff: report('diff.html', m2, '--baseline', m1),
    trend: report('trend.html', m3, '--series', m1, m2),
    evil: report('evil.html', evil),
  };
  const sum3 = h.gcsnapJson('summary', '--json', '--top', '0', m3);
  const dom3 = h.gcsnapJson('dominators', '--json', '--by-type', m3);
  const sum2 = h.gcsnapJson('summary', '--json', '--top', '0', m2);
  const diff = h.gcsnapJson('diff', '--json', '--top', '0', m1, m2);
  const trend = h.gcsnapJson('trend', '--json', m1, m2, m3);

  const browser = await h.launch();
  const blocked = await h.blockNetwork(browser.context);
  const open = async (file) => {
    const page = await browser.context.newPage();
    const errors = h.watch(page);
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    t.ok(await h.until(page, () => !!document.querySelector('#histogram .grid table tbody')), `${path.basename(file)}: the histogram is drawn`);
    return { page, errors };
  };

  // ---- plain report: summary, histogram, retainers -----------------------
  const plain = await open(pages.plain);
  await checkSummary(t, plain.page, sum3);
  await h.screenshot(plain.page, 'report-summary', plain.page.locator('#summary'));
  await checkHistogram(t, plain.page, sum3.by_type);
  await checkRetainers(t, plain.page, dom3);
  await h.screenshot(plain.page, 'report-retainers', plain.page.locator('#retainers'));
  await checkTree(t, plain.page, h.gcsnapJson('dominators', '--json', '--top', '0', m3));
  await h.screenshot(plain.page, 'report-domtree', plain.page.locator('#domtree'));
  t.equal(await plain.page.locator('#diff, #trend').count(), 0, 'plain report: no diff or trend section');
  t.equal(plain.errors, [], 'plain report: no console error or exception');

  // ---- baseline: the diff ---------------------------------------------------
  const withDiff = await open(pages.diff);
  await checkSummary(t, withDiff.page, sum2);
  await checkDiff(t, withDiff.page, diff);
  await h.screenshot(withDiff.page, 'report-diff', withDiff.page.locator('#diff'));
  t.equal(withDiff.errors, [], 'diff report: no console error or exception');

  // ---- series: the trend ----------------------------------------------------
  const withTrend = await open(pages.trend);
  await checkSummary(t, withTrend.page, sum3);
  await checkTrend(t, withTrend.page, trend);
  await h.screenshot(withTrend.page, 'report-trend', withTrend.page.locator('#trend'));
  t.equal(withTrend.errors, [], 'trend report: no console error or exception');

  // ---- a type name made of markup stays text --------------------------------
  const marked = await open(pages.evil);
  const cells = await marked.page.locator('#histogram tbody td.t').allTextContents();
  t.ok(cells.includes(EVIL), 'the markup type name is shown as its text in the histogram', JSON.stringify(cells));
  t.equal(await marked.page.locator('b[x]').count(), 0, 'no element made from the type name');
  t.ok((await marked.page.locator('#retainers').innerText()).includes(EVIL), 'the markup type name is text in the retainers');
  await h.screenshot(marked.page, 'report-markup-name');
  t.equal(marked.errors, [], 'markup report: no console error or exception');

  t.equal(blocked, [], 'the reports requested nothing but file: URLs');
  await browser.close();
});

// The key/value tables of #summary: [[label, number], ...] per caption.
async function kvTables(page) {
  return page.evaluate(() => {
    const out = {};
    for (const tb of document.querySelectorAll('#summary table.kv')) {
      out[tb.caption.textContent] = [...tb.tBodies[0].rows].map((r) => [r.cells[0].textContent, r.cells[1].textContent]);
    }
    return out;
  });
}

async function checkSummary(t, page, sum) {
  const kv = await kvTables(page);
  const nums = (rows) => (rows || []).map(([k, v]) => [k, h.parseCount(v)]);
  t.equal(nums(kv.Totals), [
    ['Sections', sum.sections.length], ['Objects', sum.objects], ['Bytes', sum.bytes], ['Types', sum.types],
    ['References', sum.references], ['Dangling references', sum.dangling_references], ['Roots', sum.roots],
    ['Dangling roots', sum.dangling_roots], ['Reachable objects', sum.objects - sum.unreachable],
    ['Reachable bytes', sum.bytes - sum.unreachable_bytes],
  ], `${sum.file}: the totals shown are those of summary --json`);
  t.equal(nums(kv['Roots by kind']), Object.entries(sum.roots_by_kind), `${sum.file}: roots by kind`);
  t.equal(nums(kv['Roots by flag']), Object.entries(sum.roots_by_flag), `${sum.file}: roots by flag`);
  t.equal(nums(kv['Unreachable (no strong root)']), [['Objects', sum.unreachable], ['Bytes', sum.unreachable_bytes]],
    `${sum.file}: unreachable objects and bytes`);
  const rows = await page.evaluate(() => [...document.querySelectorAll('#summary table:not(.kv) tbody tr')]
    .map((r) => [...r.cells].map((c) => c.textContent)));
  t.equal(rows.map((r) => [r[0], ...r.slice(1).map(h.parseCount)]),
    sum.sections.map((s) => [s.name, s.objects, s.bytes, s.roots, s.unreachable, s.unreachable_bytes]),
    `${sum.file}: one row per section with its figures`);
  t.ok(await page.locator('#summary').isVisible(), `${sum.file}: the summary is visible`);
}

// The state of the grid in the section with that id.
async function grid(page, id) {
  return page.evaluate((sel) => {
    const box = document.querySelector(sel);
    return {
      heads: [...box.querySelectorAll('thead th')].map((th) => [th.textContent, th.className]),
      rows: [...box.querySelectorAll('tbody tr')].map((r) => [...r.cells].map((c) => c.textContent)),
      info: box.querySelector('.tools .muted').textContent.trim(),
      where: box.querySelector('.pager span').textContent,
    };
  }, `#${id} .grid`);
}

function infoCounts(info) {
  const m = /^([\d,]+) of ([\d,]+) types$/.exec(info);
  return m ? [h.parseCount(m[1]), h.parseCount(m[2])] : null;
}

function sortedBy(values, desc) {
  for (let i = 1; i < values.length; i++) if (desc ? values[i] > values[i - 1] : values[i] < values[i - 1]) return false;
  return true;
}

async function clickHead(t, page, label, sortedClass) {
  await page.locator('#histogram .grid thead th', { hasText: new RegExp(`^${label}$`) }).click();
  return t.ok(await h.until(page, ([l, c]) => [...document.querySelectorAll('#histogram .grid thead th')]
    .some((th) => th.textContent === l && th.className.split(' ').filter((x) => x && x !== 'n').join(' ') === c),
  [label, sortedClass]), `histogram: clicking ${label} marks it ${sortedClass}`);
}

async function checkHistogram(t, page, byType) {
  const n = byType.length;
  const types = new Map(byType.map((r) => [r.type, r]));
  const asShown = (r) => [r.type, r.count, r.bytes, r.percent];
  const fromRow = (c) => [c[0], h.parseCount(c[1]), h.parseCount(c[2]), h.parseCount(c[3])];
  let g = await grid(page, 'histogram');
  t.equal(g.heads.map((x) => x[0]), ['Type', 'Objects', 'Bytes', 'Share %'], 'histogram: the columns');
  t.equal(infoCounts(g.info), [n, n], 'histogram: every type of summary --json --top 0 is in it');
  t.equal(g.rows.length, Math.min(n, PAGE_ROWS), 'histogram: one page of rows');
  t.equal(g.rows.map(fromRow), g.rows.map((c) => asShown(types.get(c[0]) || {})),
    'histogram: each row shows the count, bytes and share of its type');
  t.ok(sortedBy(g.rows.map((c) => h.parseCount(c[2])), true), 'histogram: sorted by bytes, largest first');
  const byBytes = byType.slice().sort((a, b) => b.bytes - a.bytes || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  t.equal(g.rows.map((c) => c[0]), byBytes.slice(0, PAGE_ROWS).map((r) => r.type), 'histogram: the first page is the largest types');
  t.ok(/Bytes/.test(g.heads.find((x) => x[1].includes('sorted'))[0]), 'histogram: the Bytes column is marked sorted');
  await h.screenshot(page, 'report-histogram', page.locator('#histogram'));

  // Sorting by a column, both ways, and by name.
  if (await clickHead(t, page, 'Objects', 'sorted')) {
    g = await grid(page, 'histogram');
    t.ok(sortedBy(g.rows.map((c) => h.parseCount(c[1])), true), 'histogram: sorted by objects, most first');
    t.equal(h.parseCount(g.rows[0][1]), Math.max(...byType.map((r) => r.count)), 'histogram: the first row has the most objects');
  }
  if (await clickHead(t, page, 'Objects', 'sorted asc')) {
    g = await grid(page, 'histogram');
    t.ok(sortedBy(g.rows.map((c) => h.parseCount(c[1])), false), 'histogram: sorted by objects, fewest first');
    t.equal(h.parseCount(g.rows[0][1]), Math.min(...byType.map((r) => r.count)), 'histogram: the first row has the fewest objects');
  }
  if (await clickHead(t, page, 'Type', 'sorted asc')) {
    g = await grid(page, 'histogram');
    const names = byType.map((r) => r.type).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    t.equal(g.rows.map((c) => c[0]), names.slice(0, PAGE_ROWS), 'histogram: sorted by type name');
    await h.screenshot(page, 'report-histogram-sorted', page.locator('#histogram'));
  }

  // Paging: the second page follows the first.
  await page.locator('#histogram .pager button', { hasText: 'Next' }).click();
  g = await grid(page, 'histogram');
  const pages = Math.max(1, Math.ceil(n / PAGE_ROWS));
  if (n > PAGE_ROWS) {
    t.equal(g.where, `rows 101-${Math.min(n, 2 * PAGE_ROWS)} of ${n}, page 2 of ${pages}`, 'histogram: Next shows page 2');
    const names = byType.map((r) => r.type).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    t.equal(g.rows.map((c) => c[0]), names.slice(PAGE_ROWS, 2 * PAGE_ROWS), 'histogram: page 2 holds the next rows');
  } else {
    t.skip('histogram paging (fewer than two pages of types)');
  }

  // Filtering by part of a name, case-insensitive.
  const needle = ['Dictionary', 'String', 'Object', '[]'].find((w) => {
    const k = byType.filter((r) => r.type.toLowerCase().includes(w.toLowerCase())).length;
    return k > 0 && k < n;
  }) || byType[0].type;
  const typed = needle.toUpperCase();
  const matching = byType.filter((r) => r.type.toLowerCase().includes(needle.toLowerCase()));
  const input = page.locator('#histogram .tools input');
  await input.fill(typed);
  const want = `${matching.length.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} types`;
  t.ok(await h.until(page, (w) => document.querySelector('#histogram .tools .muted').textContent.trim() === w, want),
    `histogram: filtering by "${typed}" keeps the ${matching.length} types whose name holds it`);
  g = await grid(page, 'histogram');
  t.equal(g.rows.length, Math.min(matching.length, PAGE_ROWS), 'histogram: the filtered rows');
  t.ok(g.rows.every((c) => c[0].toLowerCase().includes(needle.toLowerCase())), 'histogram: every row shown matches the filter');
  t.equal(g.where.startsWith('rows 1-'), true, 'histogram: filtering goes back to page 1');
  await h.screenshot(page, 'report-histogram-filtered', page.locator('#histogram'));
  await input.fill('no type is named like this');
  t.ok(await h.until(page, () => document.querySelector('#histogram .pager span').textContent === 'no rows'),
    'histogram: a filter that matches nothing shows no rows');
  await input.fill('');
  t.ok(await h.until(page, (w) => document.querySelector('#histogram .tools .muted').textContent.trim() === w,
    `${n.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} types`), 'histogram: clearing the filter shows every type');
}

async function checkRetainers(t, page, dom) {
  const shown = await page.evaluate(() => {
    const box = document.querySelector('#retainers');
    return {
      heads: [...box.querySelectorAll('h3')].map((x) => x.textContent),
      objects: [...box.querySelectorAll('table')].filter((tb) => tb.caption.textContent === 'Objects by retained size')
        .map((tb) => [...tb.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent))),
      types: [...box.querySelectorAll('table')].filter((tb) => tb.caption.textContent === 'Types by retained size')
        .map((tb) => [...tb.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent))),
    };
  });
  t.equal(shown.heads, dom.sections.map((s) => s.name), 'retainers: one part per section');
  t.equal(shown.objects.map((rows) => rows.map((c) => [h.parseCount(c[0]), h.parseCount(c[2]), c[3], c[4]])),
    dom.sections.map((s) => s.top_objects.map((o) => [o.retained, o.shallow, o.id, o.type])),
    'retainers: the objects of dominators --json, retained and shallow');
  t.equal(shown.types.map((rows) => rows.map((c) => [h.parseCount(c[0]), h.parseCount(c[2]), h.parseCount(c[3]), c[4]])),
    dom.sections.map((s) => s.by_type.map((o) => [o.retained, o.count, o.shallow, o.type])),
    'retainers: the types of dominators --json --by-type');
}

async function checkDiff(t, page, diff) {
  t.ok(await page.locator('#diff').isVisible(), 'diff: the section is shown');
  t.equal(await page.locator('nav a[href="#diff"]').count(), 1, 'diff: the navigation links to it');
  const kv = await page.evaluate(() => [...document.querySelectorAll('#diff table.kv tbody tr')]
    .map((r) => [...r.cells].map((c) => c.textContent)));
  const arrow = (s) => s.split('\u2192').map(h.parseCount);
  t.equal(kv.slice(0, 2).map((c) => [c[0], ...arrow(c[1]), h.parseCount(c[2])]), [
    ['Objects', diff.old.objects, diff.new.objects, diff.objects_change],
    ['Bytes', diff.old.bytes, diff.new.bytes, diff.bytes_change],
  ], 'diff: objects and bytes before, after and the change, as diff --json');
  const g = await grid(page, 'diff');
  const n = diff.types.length;
  t.equal(infoCounts(g.info), [n, n], 'diff: every changed type of diff --json --top 0 is in the table');
  const types = new Map(diff.types.map((r) => [r.type, r]));
  const status = (s) => (s === 'new' || s === 'gone' ? s : '');
  t.equal(g.rows.map((c) => [c[0], c[1], ...c.slice(2).map(h.parseCount)]),
    g.rows.map((c) => {
      const r = types.get(c[1]) || {};
      return [status(r.status), r.type, r.count_before, r.count_after, r.count_change, r.bytes_before, r.bytes_after, r.bytes_change];
    }), 'diff: each row shows its type\'s status, counts and bytes');
  t.ok(sortedBy(g.rows.map((c) => h.parseCount(c[7])), true), 'diff: sorted by the change in bytes, largest first');
  t.equal(await page.locator('#diff tbody .badge.new').count(),
    g.rows.filter((c) => c[0] === 'new').length, 'diff: new types carry a badge');
}

async function checkTrend(t, page, trend) {
  t.ok(await page.locator('#trend').isVisible(), 'trend: the section is shown');
  t.equal(await page.locator('#trend svg.chart polyline').count(), 2, 'trend: the chart draws bytes and objects');
  t.equal(await page.locator('#trend svg.chart circle').count(), 2 * trend.files.length, 'trend: one point per snapshot and line');
  const box = await page.locator('#trend svg.chart').boundingBox();
  t.ok(box && box.width > 300 && box.height > 100, 'trend: the chart is laid out', JSON.stringify(box));
  const rows = await page.evaluate(() => [...document.querySelector('#trend table').tBodies[0].rows]
    .map((r) => [...r.cells].map((c) => c.textContent)));
  t.equal(rows.map((c) => [h.parseCount(c[0]), c[1], h.parseCount(c[2]), h.parseCount(c[3])]),
    trend.files.map((f, i) => [i + 1, f.file, f.objects, f.bytes]), 'trend: one row per snapshot, as trend --json');
  const heading = await page.locator('#trend h3', { hasText: 'Leak suspects' }).textContent();
  t.equal(heading, `Leak suspects (${trend.suspects.length})`, 'trend: the number of suspects');
  t.equal(await page.locator('#trend .suspect h3').allTextContents(),
    trend.suspects.map((s, i) => `${i + 1}. ${s.type}`), 'trend: the suspects, in order');
}

// The embedded dominator tree: each section's first level, then three
// levels opened along rows that have children; each opened row's children
// retain no more than it does beyond its own size, and every row equals
// `gcsnap dominators --json --top 0` of the same file.
async function checkTree(t, page, dom) {
  const tables = page.locator('#domtree table.domtree');
  t.equal(await tables.count(), dom.sections.length, 'report tree: one table a section');
  const rowsOf = (i) => tables.nth(i).evaluate((tb) => [...tb.tBodies[0].rows].filter((tr) => tr.hasAttribute('data-id'))
    .map((tr) => ({ id: tr.getAttribute('data-id'), depth: +tr.getAttribute('data-depth'), retained: tr.cells[1].textContent,
      shallow: tr.cells[3].textContent, type: tr.cells[4].textContent, open: !!tr.querySelector('button.expand') })));
  for (let i = 0; i < dom.sections.length; i++) {
    const byId = new Map(dom.sections[i].top_objects.map((o) => [o.id, o]));
    // A chain of three nodes with children, found in the page's own data.
    const chain = await page.evaluate((k) => {
      const find = (n, d) => {
        if (d === 3) return [];
        for (const c of n.kids.filter((x) => x.kids.length)) { const r = find(c, d + 1); if (r) return [c.id, ...r]; }
        return null;
      };
      return find(JSON.parse(document.getElementById('gcsnap-data').textContent).tree.sections[k].root, 0);
    }, i);
    t.ok(chain && chain.length === 3, `report tree, section ${i}: three levels to open`, JSON.stringify(chain));
    for (const [depth, id] of (chain || []).entries()) {
      await tables.nth(i).locator(`tr[data-id="${id}"][data-depth="${depth}"] button.expand`).click();
      const rows = await rowsOf(i);
      const at = rows.findIndex((r) => r.id === id && r.depth === depth);
      const kids = [];
      for (let k = at + 1; k < rows.length && rows[k].depth > depth; k++) if (rows[k].depth === depth + 1) kids.push(rows[k]);
      const own = byId.get(id);
      const sum = kids.reduce((a, k) => a + byId.get(k.id).retained, 0);
      t.ok(kids.length > 0 && sum <= own.retained - own.shallow,
        `report tree, section ${i}: the children of ${id} retain no more than it does`);
    }
    const wrong = (await rowsOf(i)).filter((r) => {
      const o = byId.get(r.id);
      return !o || r.type !== o.type || r.retained !== o.retained.toLocaleString('en-US') ||
        r.shallow !== o.shallow.toLocaleString('en-US');
    });
    t.equal(wrong, [], `report tree, section ${i}: every row equals gcsnap dominators --json`);
  }
}
