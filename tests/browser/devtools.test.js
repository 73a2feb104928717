'use strict';
// devtools.test.js - `gcsnap export --format heapsnapshot` loaded into the
// real Chrome DevTools of the Chromium under test: the bundled frontend
// (devtools://devtools/bundled/devtools_app.html, attached to a blank page
// of the same browser) opens on the Memory panel, the file goes in through
// the panel's "Load profile" file input, and once the snapshot is loaded the
// test reads what DevTools shows and compares it with `gcsnap summary --json`:
//
//   the snapshot's title in the sidebar  "(SIZE)": the bytes, as DevTools rounds them
//   each row of the Summary grid shown count (exact), shallow size (rounded) and its
//                                      share of the total (whole percent) of its type
//                                      in summary --json; when the grid shows every
//                                      row, the counts add up to the objects with a
//                                      size above 0 (DevTools leaves nodes of size 0
//                                      out of its Summary)
//   (only the grid and the sidebar: the toolbar's "N objects (SIZE)" is not
//   shown by every Chromium release Debian ships)
//   the loaded snapshot (DevTools' own worker, through the panel's view):
//     totalSize, Statistics total      bytes, exactly
//     every Summary row                every type of summary --json --top 0 with
//                                      its count and bytes (objects of size 0 aside)
//     nodeCount                        objects + one placeholder per distinct object
//                                      that is referenced or rooted but not in the
//                                      dump + 9 synthetic nodes (the root, "(GC roots)",
//                                      one per root kind, "(unreachable objects)")
//     the root's children              "(GC roots)" retaining the reachable bytes and
//                                      "(unreachable objects)" the unreachable bytes,
//                                      exactly (and as rounded in the Containment view)
//     retained size of the first 5 objects of `gcsnap dominators --json`: the same
//
// for a small dump made to hit the edges (two type IDs with one name, an
// undefined type, a dangling reference, an object of size 0, an object only
// a weak root holds), a mock heap, and wpfapp.gclog (skipped when absent).

const h = require('./harness');
const fs = require('fs');
const path = require('path');

const SYNTHETIC_NODES = 9;
const TOP_OBJECTS = 5;     // objects of dominators --json whose retained size is compared

h.run('browser_devtools', async (t) => {
  if (!h.haveTool('gcsnap')) { t.skip('gcsnap is not built'); return; }
  const cases = [];
  const edge = path.join(h.OUT, 'edge.gclog');
  fs.writeFileSync(edge, [
    'a 2 edge cases 0', 't 1 App.Twice', 't 2 App.Twice', 't 3 App.Empty',
    'o 10 1 20 18 99', 'o 18 2 30 18', 'o 20 9 40', 'o 28 3 0', 'o 30 1 50',
    'r 10 1 0', 'r 30 3 2', 'r 28 1 0', 'c edge cases 0', ''].join('\n'));
  cases.push(['edge', edge]);
  if (h.haveTool('gcsnap-agent')) cases.push(['mock', h.mockDump('mock:objects=20000,seed=3', 'mock.gclog')]);
  else t.skip('the mock heap (gcsnap-agent is not built)');
  const wpfapp = h.sharedFixture('wpfapp.gclog');
  if (wpfapp) cases.push(['wpfapp', wpfapp]);
  else t.skip('wpfapp.gclog (no shared fixtures; GS_SHARED_DIR)');

  const browser = await h.launch({ remoteDebugging: true, viewport: { width: 1400, height: 900 } });
  const target = await h.devtoolsTarget(browser);

  for (const [name, dump] of cases) {
    const started = Date.now();
    const snapshot = path.join(h.OUT, `${name}.heapsnapshot`);
    h.gcsnap('export', '--format', 'heapsnapshot', '-o', snapshot, dump);
    const sum = h.gcsnapJson('summary', '--json', '--top', '0', dump);
    const facts = scanFirstSection(fs.readFileSync(dump, 'utf8'));
    t.equal([sum.sections.length, facts.objects, facts.bytes], [1, sum.objects, sum.bytes], `${name}: one section, read alike`);
    // (DevTools lists no object of size 0 in a class.)
    const dom = h.gcsnapJson('dominators', '--json', dump).sections[0].top_objects.filter((o) => o.shallow > 0)
      .slice(0, TOP_OBJECTS);
    const wanted = dom.map((o) => [o.type, facts.devtoolsId(o.id)]);
    const shown = await readDevTools(t, browser, target, name, snapshot, wanted);
    if (!shown) continue;
    t.note(`${name}: DevTools shows ${shown.rows.length} Summary rows, sidebar "${shown.subtitle}"; nodeCount ${shown.model.nodeCount}, ` +
      `totalSize ${shown.model.totalSize}, ${shown.model.rows.length} Summary rows of ${shown.model.objects} objects, ` +
      `retained ${shown.model.top.map(([n, r]) => `${n} ${r}`).join(', ')} ` +
      `(gcsnap: ${sum.objects} objects, ${sum.bytes} bytes, ${sum.by_type.length} types; ${facts.zeroSize} of size 0, ` +
      `${facts.missing} placeholders) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // What DevTools should show, from summary --json.
    const expected = new Map();
    for (const r of sum.by_type) {
      const count = r.count - (facts.zeroByType.get(r.type) || 0);
      if (count > 0) expected.set(r.type, [count, r.bytes]);
    }
    const listed = sum.objects - facts.zeroSize;

    const size = /^\((.+)\)$/.exec(shown.subtitle);
    t.ok(size && sizeMatches(size[1], sum.bytes), `${name}: the sidebar shows the dump's bytes, rounded`,
      `${shown.subtitle} vs ${sum.bytes}`);
    t.ok(shown.rows.length > 0, `${name}: the Summary grid shows rows`);
    const share = (bytes) => (bytes === undefined ? NaN : 100 * bytes / sum.bytes);
    t.equal(shown.rows.map(([type, count, size, pct]) => {
      const bytes = (expected.get(type) || [])[1];
      return [type, count, sizeMatches(size, bytes) || size, Math.abs(pct - share(bytes)) <= 1 || pct];
    }), shown.rows.map(([type]) => [type, (expected.get(type) || ['not in summary --json'])[0], true, true]),
    `${name}: each Summary row shown has its type's count, shallow size and share of the dump's bytes`);
    if (shown.rows.length === expected.size) {
      t.equal(shown.rows.reduce((n, r) => n + r[1], 0), listed,
        `${name}: the Summary grid's rows add up to every object of the dump with a size`);
    }

    t.equal(shown.model.totalSize, sum.bytes, `${name}: DevTools' total size is the dump's bytes`);
    t.equal(shown.model.statisticsTotal, sum.bytes, `${name}: the Statistics total is the dump's bytes`);
    t.equal(shown.model.objects, listed, `${name}: the Summary rows add up to the objects with a size`);
    t.equal(shown.model.rows.sort(byName), [...expected].map(([type, v]) => [type, ...v]).sort(byName),
      `${name}: every Summary row is a type of summary --json --top 0 with its count and bytes`);
    t.equal(shown.model.nodeCount, sum.objects + facts.missing + SYNTHETIC_NODES,
      `${name}: DevTools' nodes are the objects, the placeholders and ${SYNTHETIC_NODES} synthetic nodes`);
    const reachable = sum.bytes - sum.unreachable_bytes;
    const retains = [['(GC roots)', reachable], ['(unreachable objects)', sum.unreachable_bytes]];
    t.equal(shown.containment.map(([node, retained]) => [node, sizeMatches(retained, new Map(retains).get(node)) || retained]).sort(byName),
      retains.map(([node]) => [node, true]),
      `${name}: Containment shows "(GC roots)" retaining the reachable bytes, "(unreachable objects)" the others`);
    t.equal(shown.model.top.sort(byName), retains,
      `${name}: the root holds "(GC roots)" retaining exactly the reachable bytes, "(unreachable objects)" the unreachable ones`);
    t.equal(shown.model.retained, dom.map((o) => [o.type, facts.devtoolsId(o.id), o.retained]),
      `${name}: the retained sizes of the first ${dom.length} objects of dominators --json are DevTools' too`);
    t.equal(shown.errors, [], `${name}: DevTools reports no error`);
  }
  await browser.close();
});

function byName(a, b) {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

// "4.1 MB", "802 kB", "224 B" (DevTools' decimal units) against bytes, within
// the rounding of the digits shown.
function sizeMatches(text, bytes) {
  const m = /^([\d.,]+)\s*(B|kB|MB|GB)$/.exec(text.replace(/[\u00a0\u202f]/g, ' '));
  if (!m) return false;
  const unit = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[m[2]];
  const digits = m[1].replace(/,/g, '');
  const decimals = digits.includes('.') ? digits.split('.')[1].length : 0;
  return Math.abs(Number(digits) * unit - bytes) <= 0.5 * unit * 10 ** -decimals + 1e-9;
}

// What summary --json does not say: objects of size 0 (by type name), and
// the distinct objects referenced or rooted but absent, in the first section.
function scanFirstSection(text) {
  const names = new Map(), defined = new Set(), targets = new Set(), zero = [];
  let objects = 0, bytes = 0, inSection = false;
  for (const line of text.split(/\r?\n/)) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'a') { if (objects || inSection) break; inSection = true; continue; }
    if (f[0] === 'c') break;
    if (f[0] === 't') names.set(f[1].toLowerCase(), /^\s*t\s+\S+\s+(.*?)\s*$/.exec(line)[1]);
    if (f[0] === 'o') {
      objects++;
      bytes += parseInt(f[3], 16);
      defined.add(BigInt('0x' + f[1]));
      if (parseInt(f[3], 16) === 0) zero.push(f[2].toLowerCase());
      for (const ref of f.slice(4)) targets.add(BigInt('0x' + ref));
    }
    if (f[0] === 'r') targets.add(BigInt('0x' + f[1]));
  }
  const zeroByType = new Map();
  for (const type of zero) {
    const name = names.get(type) ?? `?${BigInt('0x' + type).toString(16)}`;
    zeroByType.set(name, (zeroByType.get(name) || 0) + 1);
  }
  let missing = 0;
  for (const id of targets) if (!defined.has(id)) missing++;
  // DevTools IDs: the exporter numbers object nodes 2 * (9 + rank) + 1, rank
  // being the object's place among the section's IDs in increasing order.
  const sorted = [...defined].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const devtoolsId = (hex) => 2 * (SYNTHETIC_NODES + sorted.indexOf(BigInt('0x' + hex))) + 1;
  return { objects, bytes, zeroSize: zero.length, zeroByType, missing, devtoolsId };
}

// Opens DevTools on the Memory panel, loads the file through "Load profile",
// selects the snapshot and returns what it shows.
async function readDevTools(t, browser, target, name, file, wanted) {
  const loaded = await h.loadInDevTools(t, browser, target, name, file);
  if (!loaded) return null;
  const { dt, item, errors } = loaded;
  const subtitle = item.locator('.subtitle');
  await h.screenshot(dt, `devtools-${name}-summary`);
  const shown = {
    subtitle: (await subtitle.textContent()).replace(/[\u00a0\u202f]/g, ' ').trim(),
    errors,
  };
  // The Summary rows in view: type, count (×N, none for 1), shallow size
  // (rounded as DevTools shows sizes; exact below 1000 B) and its percent.
  shown.rows = await dt.locator('tr.data-grid-data-grid-node').evaluateAll((rows) => rows
    .filter((r) => r.querySelector('td.object-column'))
    .map((r) => {
      const first = r.querySelector('td.object-column');
      const count = first.querySelector('.objects-count');
      const name = [...first.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
      const shallow = r.querySelectorAll('td.numeric-column')[1];
      const pct = shallow.querySelector('.percent-column');
      return [name, count ? count.textContent : "×1", shallow.querySelector('span[title]').title,
        pct ? pct.textContent : ''];
    }));
  shown.rows = shown.rows.map(([type, count, size, pct]) => [type, h.parseCount(count.replace('×', '')),
    size.replace(/[\u00a0\u202f]/g, ' '), h.parseCount(pct.replace('%', ''))]);
  // The snapshot as DevTools' worker holds it, through the panel's view.
  shown.model = await dt.evaluate(async ([title, wanted]) => {
    const profiler = await import('./panels/profiler/profiler.js');
    const view = profiler.HeapProfilerPanel.HeapProfilerPanel.instance().visibleView;
    if (!view || !view.profile || view.profile.title !== title) return { error: 'no view of the snapshot' };
    const proxy = view.profile.snapshotProxy;
    const aggregates = await proxy.aggregatesWithFilter({});
    const rows = Object.values(aggregates).map((a) => [a.name, a.count, a.self]);
    const statistics = await proxy.getStatistics();
    // The root's children with their exact retained sizes.
    const edges = proxy.createEdgesProvider(proxy.rootNodeIndex);
    const range = await edges.serializeItemsRange(0, 10);
    edges.dispose();
    const top = range.items.map((e) => [e.node.name, e.node.retainedSize]);
    // Retained sizes of chosen objects, found among the instances of their class.
    const keyOf = new Map(Object.entries(aggregates).map(([key, a]) => [a.name, key]));
    const retained = [];
    for (const [type, id] of wanted) {
      const key = keyOf.get(type);
      if (key === undefined) { retained.push([type, id, 'no such class']); continue; }
      const nodes = proxy.createNodesProviderForClass(key, {});
      const items = (await nodes.serializeItemsRange(0, aggregates[key].count)).items;
      nodes.dispose();
      const node = items.find((n) => n.id === id);
      retained.push([type, id, node ? node.retainedSize : null]);
    }
    return { nodeCount: proxy.nodeCount, totalSize: proxy.totalSize, statisticsTotal: statistics.total,
      rows, objects: rows.reduce((n, r) => n + r[1], 0), top, retained };
  }, [name, wanted]);
  if (shown.model.error) t.ok(false, `${name}: DevTools' model of the snapshot`, shown.model.error);
  // The Containment view: the root holds "(GC roots)" and "(unreachable
  // objects)"; [name, retained size as shown] of each.
  const perspective = dt.locator('select[aria-label="Perspective"]');
  await perspective.selectOption({ label: 'Containment' });
  const top = dt.locator('tr.data-grid-data-grid-node', { hasText: '(GC roots)' });
  shown.containment = await top.first().waitFor({ timeout: 10000 }).then(() => dt.locator('tr.data-grid-data-grid-node')
    .evaluateAll((rows) => rows.filter((r) => r.querySelector('td.object-column')).map((r) => [
      r.querySelector('td.object-column').textContent.replace(/^\[\d+\]::/, '').replace(/@\d+$/, ''),
      r.querySelectorAll('td.numeric-column')[2].querySelector('span[title]').title.replace(/[\u00a0\u202f]/g, ' ')])),
  () => []);
  await h.screenshot(dt, `devtools-${name}-containment`);
  // The Statistics view, for the picture.
  await perspective.selectOption({ label: 'Statistics' });
  await dt.waitForTimeout(300);
  await h.screenshot(dt, `devtools-${name}-statistics`);
  await dt.close();
  return shown;
}
