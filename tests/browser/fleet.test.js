'use strict';
// fleet.test.js - the console's fleet overview in headless Chromium: the
// demo application with its leak, the same program standing still
// (every=0: no step between two captures) and a mock heap, each captured
// four times a second apart. The landing page ranks the leaking device
// first by its growth per hour, flags it alone, and its flags agree with
// `gcsnap trend --json` over the same four files; sorting, the filter and
// the API's paging. Then its device page's suspects against gcsnap trend,
// and its last snapshot by generation. Screenshots in GS_OUT.

const fs = require('fs');
const path = require('path');
const h = require('./harness');

const ROUNDS = 4;
const DEVICES = { leaky: 'demo:objects=300,steps=5,every=20', steady: 'demo:objects=300,steps=5,every=0',
  mock: 'mock:objects=2000,seed=1' };

h.run('fleet', async (t) => {
  for (const name of ['gcsnapd', 'gcsnap', 'gcsnap-agent']) {
    if (!h.haveTool(name)) { t.skip(`no ${name} in ${h.BIN}`); return; }
  }
  const col = await h.startCollector();
  for (const [id, source] of Object.entries(DEVICES)) await h.startAgent(col, id, source);
  // Catalog times are in seconds: a round a second, so the fit has a slope.
  for (let i = 0; i < ROUNDS; i++) {
    const started = Date.now();
    for (const id of Object.keys(DEVICES)) {
      const res = await fetch(`${col.url}/api/devices/${id}/capture?wait=1`, { method: 'POST' });
      t.ok(res.ok, `capture ${i + 1} of ${id}`);
    }
    if (i < ROUNDS - 1) await h.sleep(Math.max(0, 1050 - (Date.now() - started)));
  }
  // What gcsnap trend says of each device's four files.
  const trendSuspects = {};
  const lastRows = {};             // each device's stored summaries' type rows, oldest first
  let leakyTrend = null;
  for (const id of Object.keys(DEVICES)) {
    const snaps = (await h.getJson(`${col.url}/api/snapshots?device=${id}`)).snapshots.reverse();
    const files = [];
    for (const s of snaps) {
      const file = path.join(h.OUT, `${id}-${s.id}.gclog`);
      fs.writeFileSync(file, Buffer.from(await (await fetch(`${col.url}/api/snapshots/${s.id}/download?format=gclog`)).arrayBuffer()));
      files.push(file);
    }
    trendSuspects[id] = h.gcsnapJson('trend', '--json', '--top', '0', ...files).suspects.map((s) => s.type);
    if (id === 'leaky') leakyTrend = h.gcsnapJson('trend', '--json', '--top', '10', ...files);
    lastRows[id] = [];
    for (const s of snaps) lastRows[id].push((await h.getJson(`${col.url}/api/snapshots/${s.id}`)).summary.by_type.map((r) => r.type));
  }
  t.ok(trendSuspects.leaky.includes('Contoso.Contacts.UI.ContactDetailsPage') && trendSuspects.steady.length === 0 &&
    trendSuspects.mock.length === 0, 'gcsnap trend: the leaking demo has suspects, the others none',
  JSON.stringify(trendSuspects));

  const { context } = await h.launch({ viewport: { width: 1280, height: 800 } });
  const foreign = await h.onlyOrigin(context, col.url);
  const page = await context.newPage();
  const errors = h.watch(page);
  await page.goto(`${col.url}/`);
  t.ok(await h.until(page, () => document.querySelector('table.fleet[data-state=ready] tbody tr')),
    'the landing page is the fleet overview');
  const rows = () => page.$$eval('table.fleet tbody tr', (trs) => trs.map((tr) => ({
    id: tr.getAttribute('data-device'), growth: tr.getAttribute('data-growth'),
    suspect: !!tr.querySelector('.suspect'), spark: tr.querySelectorAll('svg.spark polyline').length,
  })));
  let shown = await rows();
  t.equal(shown.map((r) => r.id)[0], 'leaky', 'the leaking device is ranked first');
  t.ok(Number(shown[0].growth) > 0 && shown.slice(1).every((r) => Number(r.growth) < Number(shown[0].growth) &&
    Math.abs(Number(r.growth)) < 1), 'it grows; the steady ones do not', JSON.stringify(shown));
  t.equal(shown.map((r) => [r.id, r.suspect]), shown.map((r) => [r.id, trendSuspects[r.id].length > 0]),
    'each device\'s flag is whether gcsnap trend finds suspects');
  t.ok(shown.every((r) => r.spark === 1), 'each device has a sparkline');
  const api = await h.getJson(`${col.url}/api/fleet`);
  const leaky = api.rows.find((r) => r.device_id === 'leaky');
  // The documented condition for the fleet to equal trend: trend's suspects
  // are among the last snapshot's stored rows, and those rows are among
  // every earlier snapshot's. It holds for the demo, and then the lists are
  // equal, not only the flags.
  for (const id of Object.keys(DEVICES)) {
    const rowsOf = lastRows[id], last = rowsOf[rowsOf.length - 1];
    t.ok(trendSuspects[id].every((s) => last.includes(s)) && rowsOf.every((r) => last.every((x) => r.includes(x))),
      `${id}: the stored rows decide as trend does`, JSON.stringify(rowsOf));
    t.equal(api.rows.find((r) => r.device_id === id).suspects, trendSuspects[id], `${id}: the suspects are gcsnap trend's, in its order`);
  }
  t.ok(leaky.suspects.includes('Contoso.Contacts.UI.ContactDetailsPage'), 'the leaking page type is a suspect');
  await h.screenshot(page, 'fleet');

  await page.click('table.fleet th[data-sort="device"]');
  t.ok(await h.until(page, () => [...document.querySelectorAll('table.fleet tbody tr')].map((tr) =>
    tr.getAttribute('data-device')).join() === 'leaky,mock,steady'), 'sorted by device ID');
  await page.fill('input[aria-label="Filter by device ID"]', 'STEA');
  t.ok(await h.until(page, () => [...document.querySelectorAll('table.fleet tbody tr')].map((tr) =>
    tr.getAttribute('data-device')).join() === 'steady'), 'filtered by device ID, in any case');
  const second = await h.getJson(`${col.url}/api/fleet?limit=1&offset=1&sort=bytes`);
  const all = await h.getJson(`${col.url}/api/fleet?sort=bytes`);
  t.equal([second.matched, second.rows.map((r) => r.device_id)], [3, [all.rows[1].device_id]],
    'the API pages the sorted rows');
  t.equal((await fetch(`${col.url}/api/fleet?sort=nothing`)).status, 400, 'a bad sort is refused');

  // ---- the leaking device's page: its suspects as gcsnap trend has them
  await page.fill('input[aria-label="Filter by device ID"]', '');
  t.ok(await h.until(page, () => document.querySelector('table.fleet tr[data-device="leaky"] a')), 'the leaky row is back');
  await page.click('table.fleet tr[data-device="leaky"] a');
  t.ok(await h.until(page, () => document.querySelector('table.suspects[data-state=ready]'), null, 20000),
    'the device page shows its leak suspects');
  t.equal(await page.$eval('select[aria-label="Snapshots to compare"]', (e) => e.value), String(ROUNDS),
    'over its last four snapshots');
  const fmt = (v) => v.toLocaleString('en-US');
  const got = await page.$$eval('table.suspects tbody tr[data-type]', (trs) => trs.map((tr) => ({
    type: tr.getAttribute('data-type'), counts: tr.cells[2].textContent,
    chain: [...tr.nextSibling.querySelectorAll('ol.chain li[data-id]')].map((li) => li.getAttribute('data-id')),
    root: (tr.nextSibling.querySelector('ol.chain li.root') || {}).textContent,
    leaf: (tr.nextSibling.querySelector('ol.chain li.leaf') || {}).textContent,
  })));
  t.equal(got.map((r) => [r.type, r.counts, r.chain]), leakyTrend.suspects.map((s) => [s.type,
    s.counts.map(fmt).join(' \u2192 '), s.held_by ? s.held_by.example_path.map((n) => n.id) : []]),
  'types, counts and chains equal gcsnap trend --json');
  const page_ = got.find((r) => r.type === 'Contoso.Contacts.UI.ContactDetailsPage');
  const want = leakyTrend.suspects.find((s) => s.type === 'Contoso.Contacts.UI.ContactDetailsPage');
  t.ok(page_ && page_.leaf.startsWith('Contoso.Contacts.UI.ContactDetailsPage ') &&
    page_.root.startsWith(`${want.held_by.root_kind} root (`), 'the leaking type\'s chain runs from its root to an instance',
  JSON.stringify(page_));
  await h.screenshot(page, 'device-leaks', page.locator('main section').nth(2));
  await page.selectOption('select[aria-label="Snapshots to compare"]', '2');
  const two = await h.getJson(`${col.url}/api/devices/leaky/trend?last=2&top=10`);
  t.ok(await h.until(page, (n) => document.querySelector('table.suspects[data-state=ready]') &&
    document.querySelectorAll('table.suspects tbody tr[data-type]').length === n &&
    /^2 snapshots/.test(document.querySelector('table.suspects').previousSibling.textContent), two.suspects.length),
  'choosing the last two snapshots redraws the suspects');

  // ---- long-lived objects only: the API, the page and gcsnap trend --old-only
  const stored = (await h.getJson(`${col.url}/api/snapshots?device=leaky`)).snapshots.reverse()
    .map((x) => path.join(col.store, 'snapshots', 'leaky', `${x.id}.gclog.zst`));
  const oldCli = h.gcsnapJson('trend', '--old-only', '--json', '--top', '10', ...stored);
  const oldApi = await h.getJson(`${col.url}/api/devices/leaky/trend?last=4&top=10&long_lived=1`);
  const brief = (x) => x.suspects.map((s) => [s.type, s.counts, s.bytes]);
  t.equal(brief(oldApi), brief(oldCli), 'long_lived=1 equals gcsnap trend --old-only');
  // --device fetches each snapshot's ranges with it, so --old-only works there too.
  const oldDevice = h.gcsnapJson('trend', '--old-only', '--device', 'leaky', '--last', '4', '--collector', col.url,
    '--json', '--top', '10');
  t.equal(brief(oldDevice), brief(oldCli), 'gcsnap trend --device --old-only, from the fetched ranges');
  const diffCli = h.gcsnapJson('diff', '--old-only', '--json', '--top', '0', stored[0], stored[3]);
  const ids = (await h.getJson(`${col.url}/api/snapshots?device=leaky`)).snapshots.map((x) => x.id);
  const diffApi = await h.getJson(`${col.url}/api/diff?old=${ids[3]}&new=${ids[0]}&top=0&long_lived=1`);
  t.equal(diffApi.types, diffCli.types, 'diff long_lived=1 equals gcsnap diff --old-only');
  t.ok(diffCli.generations && diffCli.generations.length === 6, 'diff of two stored snapshots by generation');
  t.equal(diffApi.generations, diffCli.generations, '/api/diff by generation equals gcsnap diff --json');
  await page.selectOption('select[aria-label="Snapshots to compare"]', '4');
  await page.check('input[aria-label="Long-lived objects only"]');
  t.ok(await h.until(page, (want) => document.querySelector('table.suspects[data-state=ready]') &&
    [...document.querySelectorAll('table.suspects tbody tr[data-type]')].map((tr) => tr.getAttribute('data-type')).join('\n') === want,
  oldCli.suspects.map((x) => x.type).join('\n')), 'the page redraws the long-lived suspects');

  // ---- the leaking device's last snapshot by generation
  const lastId = (await h.getJson(`${col.url}/api/snapshots?device=leaky`)).snapshots[0].id;
  const snap = await h.getJson(`${col.url}/api/snapshots/${lastId}`);
  const gens = await h.getJson(`${col.url}/api/snapshots/${lastId}/generations?top=5`);
  const sumOf = (k) => gens.generations.reduce((a, g) => a + g[k], 0);
  t.equal([sumOf('objects'), sumOf('bytes')], [snap.objects, snap.bytes], 'the generations add up to the snapshot');
  t.ok(gens.ranges > 0 && gens.generations.find((g) => g.generation === 'unknown').objects === 0,
    'every object of the demo lies in a range the agent sent', JSON.stringify(gens.generations.map((g) => [g.generation, g.objects])));
  await page.goto(`${col.url}/#/snapshot/${lastId}`);
  t.ok(await h.until(page, () => document.querySelectorAll('table.gens tbody tr').length === 6), 'the snapshot page shows its generations');
  const genRows = await page.$$eval('table.gens tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-generation'),
    tr.cells[1].textContent, tr.cells[2].textContent]));
  t.equal(genRows, gens.generations.map((g) => [g.generation, fmt(g.objects), fmt(g.bytes)]), 'as the API counts them');
  await h.screenshot(page, 'snapshot-generations', page.locator('table.gens'));
  // The histogram's columns by generation: those with objects shown, each
  // type's bytes as the API places them, adding up to its Bytes cell.
  const every = await h.getJson(`${col.url}/api/snapshots/${lastId}/generations?top=0`);
  const withObjects = every.generations.filter((g) => g.objects > 0).map((g) => g.generation);
  t.ok(await h.until(page, () => document.querySelector('table.types[data-state=ready] td.gen[data-type]:not([hidden])')),
    'the histogram shows bytes by generation');
  const shownCols = await page.$$eval('table.types thead th.gen', (ths) => ths.filter((th) => !th.hidden).map((th) => th.getAttribute('data-gen')));
  t.equal(shownCols, withObjects, 'a column for each generation with objects');
  const histo = await page.$$eval('table.types tbody tr', (trs) => trs.map((tr) => ({
    type: tr.cells[0].textContent, bytes: tr.cells[2].textContent,
    gens: Array.from(tr.querySelectorAll('td.gen:not([hidden])')).map((td) => [td.getAttribute('data-gen'), td.textContent]) })));
  const place = (g, type) => { const x = every.generations.find((y) => y.generation === g).types.find((y) => y.type === type); return x ? fmt(x.bytes) : ''; };
  t.ok(histo.length > 0 && histo.every((r) => r.gens.every(([g, v]) => v === place(g, r.type))),
    'each type\'s bytes by generation as the API places them', JSON.stringify(histo.slice(0, 3)));
  const num = (v) => Number(v.replace(/,/g, '')) || 0;
  t.ok(histo.every((r) => r.gens.reduce((a, [, v]) => a + num(v), 0) === num(r.bytes)),
    'a type\'s generations add up to its bytes');
  await h.screenshot(page, 'snapshot-histogram-generations', page.locator('table.types'));
  t.equal(errors, [], 'no console error or exception');
  t.equal(foreign, [], 'no request to anything but the collector');
});
