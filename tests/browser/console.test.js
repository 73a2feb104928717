'use strict';
// console.test.js - the web console gcsnapd serves, in headless Chromium.
//
// A collector with two agents (a mock heap, and the demo application whose
// device ID is markup on purpose); the console's device list, "Capture
// now" opening the new snapshot, the histogram filtered and a type's paths,
// a schedule added and removed, two snapshots picked on the chart and
// their diff. Every view is saved as a screenshot in GS_OUT. Throughout:
// no console error or exception, and no request to anything but the
// collector. Then the scale: a snapshot of 10,000 types (first histogram
// page and a filter, timed) and a device with 500 snapshots (its chart,
// timed).

const fs = require('fs');
const path = require('path');
const h = require('./harness');

const MARKUP_ID = 'demo-<b>&"x"';            // must show as text, never as markup
const FIRST_PAGE_MS = 10000;                  // 10k types, cold: the collector reads the heap once
const FILTER_MS = 2000;                       // typing to the new first page, 150 ms pause included
const CHART_MS = 5000;                        // 500 snapshots: navigation to the drawn chart
const MANY = 500;

async function post(url) {
  const res = await fetch(url, { method: 'POST' });
  const body = await res.json();
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

h.run('console', async (t) => {
  for (const name of ['gcsnapd', 'gcsnap', 'gcsnap-agent']) {
    if (!h.haveTool(name)) { t.skip(`no ${name} in ${h.BIN}`); return; }
  }
  const col = await h.startCollector();
  let guarded = '';                           // the collector with a token, at the end
  const guardedOrigin = () => guarded && new URL(guarded).origin;
  const origin = new URL(col.url).origin;
  await h.startAgent(col, 'mock-1', 'mock:objects=20000,types=400,seed=3', ['--app', 'Mock <App>']);
  await h.startAgent(col, MARKUP_ID, 'demo:objects=300,steps=5,every=20');
  await h.startAgent(col, 'many', 'mock:objects=50,types=20');
  await h.startAgent(col, 'big', 'mock:objects=500000,types=10000');

  // 500 snapshots of "many", taken while the rest of the test runs.
  const manyDone = (async () => {
    for (let i = 0; i < MANY; i++) await post(`${col.url}/api/devices/many/capture?wait=1`);
  })();
  manyDone.catch(() => {});
  // Two snapshots of the demo for the diff; its heap grows between them.
  await post(`${col.url}/api/devices/${encodeURIComponent(MARKUP_ID)}/capture?wait=1`);
  await post(`${col.url}/api/devices/${encodeURIComponent(MARKUP_ID)}/capture?wait=1`);

  const { context } = await h.launch({ viewport: { width: 1280, height: 1000 } });
  const foreign = [];
  const allowed = (url) => url.startsWith('data:') || /^http:\/\/127\.0\.0\.1:\d+\//.test(url) &&
    [origin, guardedOrigin()].includes(new URL(url).origin);
  context.on('request', (req) => { if (!allowed(req.url())) foreign.push(req.url()); });
  // Anything but the collector is refused, so a slip cannot reach out.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  const errors = h.watch(page);

  // ---- devices
  await page.goto(`${col.url}/#/devices`);
  t.ok(await h.until(page, () => document.querySelectorAll('table.devices tbody tr').length >= 4),
    'the device list shows the four devices');
  const rows = await page.$$eval('table.devices tbody tr', (trs) => trs.map((tr) => ({
    id: tr.getAttribute('data-device'), first: tr.cells[0].textContent, app: tr.cells[1].textContent,
    state: tr.cells[2].textContent,
    markup: tr.cells[0].querySelector('a').childElementCount + tr.cells[1].childElementCount,
  })));
  const markupRow = rows.find((r) => r.id === MARKUP_ID);
  t.ok(markupRow && markupRow.first === MARKUP_ID && markupRow.markup === 0,
    'a device ID with markup shows as text', JSON.stringify(rows));
  const mockRow = rows.find((r) => r.id === 'mock-1');
  t.ok(mockRow && mockRow.app === 'Mock <App>' && /connected/.test(mockRow.state),
    'the mock device: application and connection', JSON.stringify(mockRow));
  await h.screenshot(page, 'devices');

  // ---- a schedule added from the form, then removed
  await page.fill('form.schedule-form input[name=device]', 'mock-1');
  await page.fill('form.schedule-form input[name=every]', '1h');
  await page.fill('form.schedule-form input[name=keep]', '50');
  await page.click('form.schedule-form button[type=submit]');
  t.ok(await h.until(page, () => document.querySelectorAll('table.schedules tbody tr').length === 1),
    'the new schedule is listed');
  t.ok(await h.until(page, () => /every 1h/.test(
    document.querySelector('table.devices tr[data-device="mock-1"]').cells[5].textContent)),
    'the device list shows the schedule of mock-1');
  const schedules = await h.getJson(`${col.url}/api/schedules`);
  t.equal(schedules.schedules.map((s) => [s.device, s.every_ms, s.keep]), [['mock-1', 3600000, 50]],
    'the API has the schedule the form made');
  await h.screenshot(page, 'devices-schedule');
  await page.click('table.schedules tbody tr button');
  t.ok(await h.until(page, () => !document.querySelector('table.schedules')),
    'the removed schedule is gone from the page');
  t.equal((await h.getJson(`${col.url}/api/schedules`)).schedules.length, 0, 'and from the API');

  // ---- capture now: progress, then the new snapshot opens
  await page.click('table.devices tr[data-device="mock-1"] button.capture');
  t.ok(await h.until(page, () => /^#\/snapshot\/\d+$/.test(location.hash), null, 30000),
    'Capture now opens the new snapshot');
  const snapId = Number((await page.evaluate(() => location.hash)).split('/')[2]);
  const mockSnaps = (await h.getJson(`${col.url}/api/snapshots?device=mock-1`)).snapshots;
  t.ok(mockSnaps.length === 1 && mockSnaps[0].id === snapId, 'it is the snapshot the collector stored',
    JSON.stringify(mockSnaps.map((s) => s.id)));
  t.ok(await h.until(page, () => document.querySelector('table.types[data-state=ready]')),
    'the histogram of the new snapshot is drawn');
  const typeRows = await page.$$eval('table.types tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
  const full = await h.getJson(`${col.url}/api/snapshots/${snapId}/types?limit=0`);
  t.equal(typeRows, full.rows.slice(0, 100).map((r) => r.type), 'the first page: the 100 largest types, in order');
  await h.screenshot(page, 'snapshot');

  // ---- filter the histogram, then the paths of a type
  await page.fill('input[aria-label="Filter by type name"]', 'dictionary');
  const wantFiltered = full.rows.filter((r) => r.type.toLowerCase().includes('dictionary'));
  t.ok(await h.until(page, (n) => {
    const info = document.querySelector('table.types').previousSibling.querySelector('span').textContent;
    return info.trim().startsWith(n.toLocaleString('en-US') + ' of');
  }, wantFiltered.length), 'the filter finds the Dictionary types', wantFiltered.length);
  const filtered = await page.$$eval('table.types tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
  t.equal(filtered, wantFiltered.slice(0, 100).map((r) => r.type), 'the filtered rows, largest first');
  await page.click('table.types tbody tr:first-child');
  t.ok(await h.until(page, () => document.querySelector('ol.path') ||
    /No root keeps/.test(document.body.textContent), null, 20000), 'clicking a type shows its paths');
  t.ok(await h.until(page, () => document.querySelectorAll('section')[3].querySelector('table.grid tbody tr'), null, 20000),
    'the largest objects by retained size are listed');
  await h.screenshot(page, 'snapshot-filtered', page.locator('main section').nth(1));
  await h.screenshot(page, 'snapshot-paths', page.locator('main section').nth(2));
  await h.screenshot(page, 'snapshot-dominators', page.locator('main section').nth(3));

  // ---- the demo device: pick two points on the chart, open their diff
  await page.goto(`${col.url}/#/device/${encodeURIComponent(MARKUP_ID)}`);
  t.ok(await h.until(page, () => document.querySelectorAll('svg.trend circle.pt').length === 2),
    'the chart of the demo device has its two snapshots');
  const title = await page.$eval('main section h2', (e) => e.textContent);
  t.equal(title, `Device ${MARKUP_ID}`, 'the device view names the device as text');
  await page.click('svg.trend circle.pt >> nth=0');
  await page.click('svg.trend circle.pt >> nth=1');
  await h.screenshot(page, 'device');
  await page.click('button.diff');
  t.ok(await h.until(page, () => /^#\/diff\/\d+\/\d+$/.test(location.hash)), 'the diff opens');
  t.ok(await h.until(page, () => document.querySelectorAll('table.grid tbody tr').length > 0, null, 20000),
    'the diff lists the types that changed');
  const [, , a, b] = (await page.evaluate(() => location.hash)).split('/');
  const diff = await h.getJson(`${col.url}/api/diff?old=${a}&new=${b}&top=0`);
  // The rows the wait saw may be the device view's, still on the page while
  // the diff renders: wait for the diff's own first row before reading.
  const first = diff.types.length ? diff.types.slice().sort((x, y) => y.bytes_change - x.bytes_change ||
    y.count_change - x.count_change)[0].type : '';
  await h.until(page, (name) => [...document.querySelectorAll('table.grid tbody tr')]
    .some((tr) => tr.cells[1] && tr.cells[1].textContent === name), first, 20000);
  const shown = await page.$$eval('table.grid tbody tr', (trs) => trs.map((tr) => tr.cells[1].textContent));
  // The API's order: bytes gained, then objects gained, then name (bytes of UTF-8, as strcmp).
  const utf8 = (s) => Buffer.from(s, 'utf8');
  const byGrowth = diff.types.slice().sort((x, y) => y.bytes_change - x.bytes_change ||
    y.count_change - x.count_change || Buffer.compare(utf8(x.type), utf8(y.type)));
  t.equal(shown, byGrowth.slice(0, 100).map((r) => r.type), 'types sorted by growth, largest first');
  t.ok(Number(a) < Number(b), 'the older snapshot is the base');
  await h.screenshot(page, 'diff');

  // ---- a diff across heaps: new and vanished types, and their buttons
  await page.goto(`${col.url}/#/diff/${a}/${snapId}`);
  t.ok(await h.until(page, () => document.querySelectorAll('table.grid tbody tr').length > 0, null, 20000),
    'the diff of the demo and the mock heap is drawn');
  const cross = await h.getJson(`${col.url}/api/diff?old=${a}&new=${snapId}&top=0`);
  const count = (status) => cross.types.filter((r) => r.status === status).length;
  const buttons = await page.$$eval('main .tools button', (bs) => bs.map((b) => b.textContent));
  t.ok(count('new') > 0 && count('gone') > 0, 'the two heaps have new and vanished types');
  t.ok(buttons.includes(`New (${count('new')})`) && buttons.includes(`Vanished (${count('gone')})`),
    'the buttons count the new and vanished types', JSON.stringify(buttons));
  await page.click(`main .tools button:text("Vanished (${count('gone')})")`);
  t.ok(await h.until(page, () => Array.prototype.every.call(document.querySelectorAll('table.grid tbody tr'),
    (tr) => tr.cells[0].textContent === 'vanished')), 'Vanished shows only the vanished types');
  await h.screenshot(page, 'diff-vanished');
  await page.click(`main .tools button:text("New (${count('new')})")`);
  t.ok(await h.until(page, () => Array.prototype.every.call(document.querySelectorAll('table.grid tbody tr'),
    (tr) => tr.cells[0].textContent === 'new')), 'New shows only the new types');

  // ---- every snapshot, and a URL with no view
  await page.goto(`${col.url}/#/snapshots`);
  t.ok(await h.until(page, () => /of \d+ snapshots/.test(document.body.textContent) &&
    document.querySelectorAll('table.grid tbody tr').length > 0), 'the snapshots view lists snapshots');
  await page.goto(`${col.url}/#/nothing/here`);
  t.ok(await h.until(page, () => /No view for #\/nothing\/here/.test(document.body.textContent)),
    'an unknown URL says there is no such view');

  // ---- scale: 10,000 types
  const bigSnap = await post(`${col.url}/api/devices/big/capture?wait=1&timeout=120`);
  let t0 = Date.now();
  await page.goto(`${col.url}/#/snapshot/${bigSnap.snapshot_id}`);
  t.ok(await h.until(page, () => document.querySelector('table.types[data-state=ready]'), null, FIRST_PAGE_MS),
    `10k types: the first histogram page within ${FIRST_PAGE_MS} ms`);
  const firstPageMs = Date.now() - t0;
  const bigInfo = await page.$eval('table.types', (e) => e.previousSibling.textContent);
  t.ok(/of 9,9\d\d types/.test(bigInfo), 'the histogram has about 10,000 types', bigInfo);
  t.equal(await page.$$eval('table.types tbody tr', (r) => r.length), 100, 'a page holds 100 rows');
  t0 = Date.now();
  await page.fill('input[aria-label="Filter by type name"]', 'Collections.Generic');
  t.ok(await h.until(page, () => {
    const rows = document.querySelectorAll('table.types tbody tr');
    return rows.length > 0 && Array.prototype.every.call(rows, (r) => r.cells[0].textContent.includes('Collections.Generic'));
  }, null, FILTER_MS), `10k types: filtered within ${FILTER_MS} ms`);
  const filterMs = Date.now() - t0;
  t.note(`10,000 types: first page ${firstPageMs} ms (cold), filter ${filterMs} ms (150 ms pause included)`);
  await h.screenshot(page, 'snapshot-10k-types');

  // ---- scale: 500 snapshots on one chart
  await manyDone;
  t0 = Date.now();
  await page.goto(`${col.url}/#/device/many`);
  t.ok(await h.until(page, (n) => document.querySelectorAll('svg.trend circle.pt').length === n, MANY, CHART_MS),
    `500 snapshots: the chart drawn within ${CHART_MS} ms`);
  const chartMs = Date.now() - t0;
  t.note(`500 snapshots: chart drawn in ${chartMs} ms`);
  const pager = await page.$eval('.pager span', (e) => e.textContent);
  t.ok(/of 500, page 1 of 5/.test(pager), 'the snapshot table is paged', pager);
  await h.screenshot(page, 'device-500-snapshots');

  t.equal(errors, [], 'no console error or exception in the page');

  // ---- a collector with an API token: the console asks for it
  const tokenFile = path.join(h.OUT, 'api.token');
  fs.writeFileSync(tokenFile, 'console-secret-1\n', { mode: 0o600 });
  const httpPort = await h.freePort();
  guarded = `http://127.0.0.1:${httpPort}`;
  h.spawnLogged(h.tool('gcsnapd'), ['--listen', `127.0.0.1:${await h.freePort()}`, '--http', `127.0.0.1:${httpPort}`,
    '--store', path.join(h.OUT, 'token-store'), '--http-token-file', tokenFile], 'gcsnapd-token.log');
  await h.waitFor('the collector with a token', async () => (await fetch(`${guarded}/api/health`)).status === 401);
  const tokenPage = await context.newPage();
  const tokenErrors = h.watch(tokenPage);
  await tokenPage.goto(`${guarded}/#/devices`);
  t.ok(await h.until(tokenPage, () => document.getElementById('token-form')), 'without the token, the console asks for it');
  await tokenPage.fill('#token-form input', 'wrong');
  await tokenPage.click('#token-form button');
  t.ok(await h.until(tokenPage, () => /refused the token/.test((document.getElementById('token-form') || {}).textContent)),
    'a wrong token is refused');
  await h.screenshot(tokenPage, 'token');
  await tokenPage.fill('#token-form input', 'console-secret-1');
  await tokenPage.click('#token-form button');
  t.ok(await h.until(tokenPage, () => !document.getElementById('token-form') &&
    /No device has connected yet/.test(document.body.textContent)), 'with the token, the devices view loads');
  t.ok(tokenErrors.length > 0 && tokenErrors.every((e) => /status of 401/.test(e)),
    'the only errors are the 401 answers', JSON.stringify(tokenErrors));
  await tokenPage.close();
  t.equal(foreign, [], 'no request to anything but the collector');
});
