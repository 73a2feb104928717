'use strict';
// domtree.test.js - the console's dominator tree browser, in headless
// Chromium, against a collector with one mock agent.
//
// The tree's first level, then three levels opened one under the other:
// each opened row's children sum to no more than what it retains beyond
// its own size, and every row shown (type, own size, retained) equals
// `gcsnap dominators --json --top 0` of the same snapshot's file. "Show
// more" adds the next page of the roots; "Paths" of a row ends at that
// object. The second view of the snapshot is answered from the tree file
// cached in the store. The type histogram's retained column equals
// `gcsnap dominators --by-type`. Then a snapshot of a million objects:
// while its tree is computed, /progress and the page say how much of its
// file the analysis has read. Screenshots in GS_OUT.

const fs = require('fs');
const path = require('path');
const h = require('./harness');

const rowsOf = (page) => page.$$eval('table.domtree tbody tr[data-id]', (trs) => trs.map((tr) => ({
  id: tr.getAttribute('data-id'), depth: +tr.getAttribute('data-depth'), parent: tr.getAttribute('data-parent'),
  children: +tr.getAttribute('data-children'), retained: tr.cells[1].textContent, shallow: tr.cells[3].textContent,
  type: tr.cells[4].textContent,
})));

h.run('domtree', async (t) => {
  for (const name of ['gcsnapd', 'gcsnap', 'gcsnap-agent']) {
    if (!h.haveTool(name)) { t.skip(`no ${name} in ${h.BIN}`); return; }
  }
  const col = await h.startCollector();
  await h.startAgent(col, 'mock-tree', 'mock:objects=20000,types=50,seed=3');
  const res = await fetch(`${col.url}/api/devices/mock-tree/capture?wait=1`, { method: 'POST' });
  const snap = (await res.json()).snapshot_id;
  t.ok(res.ok && snap > 0, 'a snapshot is stored');
  const file = path.join(h.OUT, 'tree.gclog');
  fs.writeFileSync(file, Buffer.from(await (await fetch(`${col.url}/api/snapshots/${snap}/download?format=gclog`)).arrayBuffer()));
  const cli = h.gcsnapJson('dominators', '--json', '--top', '0', file).sections[0];
  const byId = new Map(cli.top_objects.map((o) => [o.id, o]));
  const fmt = (v) => v.toLocaleString('en-US');

  const { context } = await h.launch({ viewport: { width: 1280, height: 1000 } });
  const foreign = await h.onlyOrigin(context, col.url);
  const page = await context.newPage();
  const errors = h.watch(page);
  await page.goto(`${col.url}/#/snapshot/${snap}`);
  t.ok(await h.until(page, () => document.querySelector('table.domtree[data-state=ready]'), null, 20000),
    'the tree\'s first level is drawn');
  let rows = await rowsOf(page);
  t.equal(rows.length, 25, 'the first level shows a page of 25 roots');
  const wantTop = cli.top_objects.filter((o) => rows.some((r) => r.id === o.id));
  t.equal(rows.map((r) => r.id), wantTop.map((o) => o.id), 'the roots, largest retained first');
  const info = await page.$eval('table.domtree', (e) => e.previousSibling.textContent);
  t.ok(info.includes(`${fmt(cli.reachable_objects)} objects`), 'the reachable objects are those of the command', info);

  // Three levels: a chain found through the API whose nodes all have children.
  const kidsOf = async (id) => (await h.getJson(`${col.url}/api/snapshots/${snap}/dominators?parent=${id}&limit=25`)).children;
  const chainFrom = async (id, depth) => {
    if (depth === 3) return [];
    for (const k of (await kidsOf(id)).filter((x) => x.children > 0)) {
      const rest = await chainFrom(k.id, depth + 1);
      if (rest) return [k.id, ...rest];
    }
    return null;
  };
  const chain = await chainFrom('root', 0);
  t.ok(chain && chain.length === 3, 'the heap has three levels to open', JSON.stringify(chain));
  for (const id of chain || []) {
    const row = (await rowsOf(page)).find((r) => r.id === id);
    await page.click(`table.domtree tr[data-id="${id}"] button.expand`);
    t.ok(await h.until(page, (a) => document.querySelectorAll(`table.domtree tr[data-parent="${a.id}"]`).length ===
      Math.min(a.n, 25), { id, n: row.children }), `row ${id} opens to its children`);
    const kids = (await rowsOf(page)).filter((r) => r.parent === id);
    const own = byId.get(id);
    const sum = kids.reduce((s, k) => s + byId.get(k.id).retained, 0);
    t.ok(kids.length > 0 && sum <= own.retained - own.shallow, `the children of ${id} retain no more than it does`,
      `${sum} > ${own.retained} - ${own.shallow}`);
  }
  rows = await rowsOf(page);
  const wrong = rows.filter((r) => {
    const o = byId.get(r.id);
    return !o || r.type !== o.type || r.retained !== fmt(o.retained) || r.shallow !== fmt(o.shallow);
  });
  t.equal(wrong, [], 'every row shown equals gcsnap dominators --json');
  t.ok(rows.some((r) => r.depth === 3), 'rows of the third level are shown');
  await h.screenshot(page, 'domtree', page.locator('table.domtree'));

  // The next page of the roots.
  await page.click('table.domtree tr.more button');
  t.ok(await h.until(page, () => document.querySelectorAll('table.domtree tr[data-depth="0"][data-id]').length === 50),
    '"Show more" adds the next 25 roots');
  const roots = (await rowsOf(page)).filter((r) => r.depth === 0).map((r) => r.id);
  t.equal(roots, cli.top_objects.filter((o) => roots.includes(o.id)).map((o) => o.id), 'still largest first');

  // Paths to the deepest row shown.
  const deep = (await rowsOf(page)).find((r) => r.depth === 3);
  await page.click(`table.domtree tr[data-id="${deep.id}"] td button.paths`);
  t.ok(await h.until(page, (id) => {
    const li = document.querySelectorAll('ol.path li');
    return li.length && li[li.length - 1].textContent.startsWith(id + ' ');
  }, deep.id, 20000), 'a row\'s paths end at its object');
  await h.screenshot(page, 'domtree-paths', page.locator('main section').nth(2));

  // The tree was cached with the snapshot: a second view reads the file.
  const trees = fs.readdirSync(path.join(col.store, 'trees'));
  t.equal(trees, [`${snap}.dom`], 'the tree is cached in the store');
  const before = fs.statSync(path.join(col.store, 'trees', `${snap}.dom`)).ino;
  const again = await h.getJson(`${col.url}/api/snapshots/${snap}/dominators?parent=${deep.id}`);
  t.equal([again.node.retained, again.dominators.length], [byId.get(deep.id).retained, 4],
    'the API answers a node with its chain of dominators');
  t.equal(fs.statSync(path.join(col.store, 'trees', `${snap}.dom`)).ino, before, 'from the same file');
  // The histogram's retained column: dominators --by-type, by name.
  const byType = h.gcsnapJson('dominators', '--json', '--by-type', '--top', '0', file).sections[0].by_type;
  const retainedOf = new Map(byType.map((r) => [r.type, r.retained]));
  t.ok(await h.until(page, () => document.querySelector('table.types[data-state=ready]') &&
    [...document.querySelectorAll('table.types td.retained')].every((td) => /^[0-9,]+$/.test(td.textContent))),
  'the histogram\'s retained column is filled');
  const cells = await page.$$eval('table.types tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[4].textContent]));
  t.ok(cells.length > 10, 'the histogram has rows', cells.length);
  t.equal(cells, cells.map(([type]) => [type, fmt(retainedOf.get(type) || 0)]),
    'retained by type equals gcsnap dominators --by-type');
  const bad = await fetch(`${col.url}/api/snapshots/${snap}/dominators?parent=ffffffffff`);
  t.equal(bad.status, 422, 'an object not in the tree is refused');

  // A snapshot large enough that its tree takes a while: the page shows how
  // much of the file the analysis has read while it runs (every value the
  // progress line takes is recorded as it changes).
  await h.startAgent(col, 'mock-big', 'mock:objects=1000000,types=200,seed=4');
  const big = await fetch(`${col.url}/api/devices/mock-big/capture?wait=1`, { method: 'POST' });
  const bigSnap = (await big.json()).snapshot_id;
  t.ok(big.ok && bigSnap > 0, 'a snapshot of a million objects is stored');
  await page.evaluate(() => {
    window.seenProgress = [];
    new MutationObserver((ms) => ms.forEach((m) => window.seenProgress.push([m.target.getAttribute('data-percent'),
      m.target.textContent]))).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-percent'] });
  });
  const during = [];
  let drawn = false;
  const watching = (async () => {
    for (let i = 0; i < 1200 && !drawn; i++) {
      const p = await h.getJson(`${col.url}/api/snapshots/${bigSnap}/progress`);
      during.push(...p.analyses.filter((a) => a.kind === 'domtree'));
      await h.sleep(50);
    }
  })();
  await page.goto(`${col.url}/#/snapshot/${bigSnap}`);
  t.ok(await h.until(page, () => document.querySelector('table.domtree[data-state=ready]'), null, 60000),
    'the large snapshot\'s tree is drawn');
  drawn = true;
  await watching;
  // Before its first read a child knows no size yet: nothing read, no percentage.
  const running = during.filter((a) => a.state === 'running');
  const reading = running.filter((a) => a.reads >= 1);
  t.ok(reading.length > 0 && running.every((a) => a.files === 1 && (a.reads >= 1
    ? a.bytes_read <= a.file_bytes && Math.abs(a.percent - Math.min(100, a.bytes_read * 100 / a.file_bytes)) < 1e-6
    : a.bytes_read === 0 && a.percent === null)),
  '/progress reports the bytes read of the stored file while the tree is computed', JSON.stringify(running.slice(0, 3)));
  const seen = await page.evaluate(() => window.seenProgress);
  t.ok(seen.some(([pct, text]) => pct !== '' && Number(pct) >= 0 && Number(pct) <= 100 &&
    (Number(pct) < 100 ? text.includes(`reading the snapshot: ${pct}%`) : text.includes('snapshot read (100%)'))),
  'the page showed the percentage read while the tree was computed', JSON.stringify(seen.slice(0, 5)));
  t.equal((await h.getJson(`${col.url}/api/snapshots/${bigSnap}/progress`)).analyses, [], 'nothing runs once it is done');
  t.equal((await fetch(`${col.url}/api/snapshots/99999/progress`)).status, 404, 'no progress of an unknown snapshot');
  t.equal(errors, [], 'no console error or exception');
  t.equal(foreign, [], 'no request to anything but the collector');
});
