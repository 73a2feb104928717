'use strict';
// snapshot.test.js - heap snapshots V8 itself writes, read by gcsnap and by
// the DevTools of the Chromium under test. First one Chromium takes of a
// page (the DevTools protocol's HeapProfiler.takeHeapSnapshot, as the Memory
// panel does). The page keeps N instances of a class in a Map,
// holds DETACHED <div> elements no longer in the document in an array, and
// shows ATTACHED <span> elements. Checked:
//   gcsnap validate                    the file is valid
//   summary --json --top 0             N instances of the class; the
//                                      attached spans as "<span>"; every
//                                      native node detached, the divs and the
//                                      text nodes they hold, as "Detached
//                                      NAME" (DevTools' names), the state
//                                      passed on as DevTools does it, worked
//                                      out here from the file; objects and
//                                      bytes as the file's nodes add up
//   paths --type "Detached <div>"      every detached div is kept alive, and
//                                      one group holds them all
//   dominators --json --top 0          every object DevTools lists (those of
//                                      size 0 it leaves out), loaded from the
//                                      same file, is one gcsnap reaches, of the
//                                      same shallow and retained size
// Then a Node program's heap (v8.writeHeapSnapshot), of a Map of objects, a
// WeakMap, WeakRefs, closures, typed arrays, a long chain and bound
// functions. Checked: valid; every object DevTools lists is one gcsnap
// reaches, and none is unreachable (Node's own objects hang from a node of
// V8's root, "Node / Environment"); Node's objects ("Node / ..." classes)
// retain what DevTools says. (Objects the global object reaches may retain
// other sizes: DevTools leaves out, for them, the retainers the global does
// not reach, such as V8's caches and string table; gcsnap counts every
// strong reference. See collector/formats/README.md.)

const h = require('./harness');
const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

const N = 3000, DETACHED = 700, ATTACHED = 300;

const NODE_PROGRAM = `
  class Leaf { constructor(i) { this.i = i; this.s = 'leaf ' + i; } }
  const keep = new Map();
  for (let i = 0; i < 5000; i++) keep.set('k' + i, new Leaf(i));
  const weak = new WeakMap(), keys = [];
  for (let i = 0; i < 1000; i++) { const k = { k: i }; keys.push(k); weak.set(k, new Leaf(-i)); }
  const refs = [], held = [];
  for (let i = 0; i < 500; i++) refs.push(new WeakRef(new Leaf(1e6 + i)));
  for (let i = 0; i < 200; i++) { const l = new Leaf(2e6 + i); held.push(l); refs.push(new WeakRef(l)); }
  const closures = [], bound = [];
  for (let i = 0; i < 1000; i++) { const big = new Array(20).fill(i); closures.push(() => big.length + i); }
  for (let i = 0; i < 50; i++) bound.push(Math.max.bind(null, i));
  const buffers = [];
  for (let i = 0; i < 100; i++) buffers.push(new Float64Array(1000));
  const chain = { next: null };
  for (let c = chain, i = 0; i < 10000; i++) c = c.next = { next: null, v: i };
  globalThis.kept = { keep, weak, keys, refs, held, closures, bound, buffers, chain };
  require('v8').writeHeapSnapshot(process.argv[2]);
`;

const PAGE = `<!doctype html><html><body><div id="shown"></div><script>
  class GcsnapLeaky { constructor(i) { this.i = i; this.label = 'leaky ' + i; } }
  window.keep = new Map();
  for (let i = 0; i < ${N}; i++) window.keep.set(i, new GcsnapLeaky(i));
  window.removed = [];
  for (let i = 0; i < ${DETACHED}; i++) {
    const d = document.createElement('div');
    d.textContent = 'gone ' + i;
    window.removed.push(d);
  }
  const shown = document.getElementById('shown');
  for (let i = 0; i < ${ATTACHED}; i++) {
    const s = document.createElement('span');
    s.textContent = 'here ' + i;
    shown.appendChild(s);
  }
</script></body></html>`;

// Writes the page's heap snapshot, streamed in chunks, to file.
async function takeSnapshot(page, file) {
  const cdp = await page.context().newCDPSession(page);
  const chunks = [];
  cdp.on('HeapProfiler.addHeapSnapshotChunk', (e) => chunks.push(e.chunk));
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  fs.writeFileSync(file, chunks.join(''));
  await cdp.detach();
}

// What the file says, read here apart from gcsnap: the objects and bytes of
// the nodes that are objects (all but the root, its synthetic children and
// those of "(GC roots)", its categories), and the native nodes detached by
// name, their state passed on the way the DevTools documentation says:
// what an attached native node reaches through edges that are not hidden,
// invisible or weak is attached, then what a detached one reaches and is
// not attached yet is detached; a node that is not native stops it.
function readSnapshot(file) {
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  const meta = s.snapshot.meta, fields = meta.node_fields, width = fields.length;
  const ewidth = meta.edge_fields.length, eto = meta.edge_fields.indexOf('to_node');
  const etype = meta.edge_fields.indexOf('type'), etypes = meta.edge_types[0];
  const at = (name) => fields.indexOf(name);
  const types = meta.node_types[0];
  const type = (i) => types[s.nodes[i + at('type')]], name = (i) => s.strings[s.nodes[i + at('name')]];
  const firstEdge = new Map();
  let first = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    firstEdge.set(i, first);
    first += s.nodes[i + at('edge_count')];
  }
  const edges = (i, all) => {
    const out = [];
    for (let k = firstEdge.get(i); k < firstEdge.get(i) + s.nodes[i + at('edge_count')]; k++)
      if (all || !['hidden', 'invisible', 'weak'].includes(etypes[s.edges[k * ewidth + etype]]))
        out.push(s.edges[k * ewidth + eto]);
    return out;
  };
  const dropped = new Set([0]);
  const gcRoots = edges(0, true).filter((c) => type(c) === 'synthetic');
  gcRoots.forEach((c) => dropped.add(c));
  gcRoots.filter((c) => name(c) === '(GC roots)')
    .forEach((c) => edges(c, true).filter((g) => type(g) === 'synthetic').forEach((g) => dropped.add(g)));

  const state = new Map(), seen = new Set(), lists = { 1: [], 2: [] };
  const visit = (i, st) => {
    if (seen.has(i)) return;
    seen.add(i);
    if (type(i) !== 'native') return;
    state.set(i, st);
    lists[st].push(i);
  };
  for (let i = 0; at('detachedness') >= 0 && i < s.nodes.length; i += width)
    if (s.nodes[i + at('detachedness')]) visit(i, s.nodes[i + at('detachedness')]);
  for (const st of [1, 2])
    while (lists[st].length) edges(lists[st].pop(), false).forEach((c) => visit(c, st));

  const detached = {};
  let objects = 0, bytes = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    if (dropped.has(i)) continue;
    objects++;
    bytes += s.nodes[i + at('self_size')];
    if (state.get(i) === 2) detached[name(i)] = (detached[name(i)] || 0) + 1;
  }
  return { detached, objects, bytes, hasDetachedness: at('detachedness') >= 0 };
}

h.run('snapshot', async (t) => {
  const browser = await h.launch();
  const blocked = await h.blockNetwork(browser.context);
  const page = await browser.context.newPage();
  const errors = h.watch(page);
  await page.setContent(PAGE, { waitUntil: 'load' });
  const file = path.join(h.OUT, 'page.heapsnapshot');
  await takeSnapshot(page, file);
  t.equal(errors, [], 'the page ran without error');
  t.equal(blocked, [], 'no network request');
  t.note(`snapshot of ${fs.statSync(file).size} bytes`);

  t.ok(/valid/.test(h.gcsnap('validate', file)), 'gcsnap validate: the file is valid');
  const sum = h.gcsnapJson('summary', '--json', '--top', '0', file);
  const count = (type) => (sum.by_type.find((r) => r.type === type) || { count: 0 }).count;
  const inFile = readSnapshot(file);
  t.equal(count('GcsnapLeaky'), N, `${N} instances of the class`);
  t.equal(count('<span>'), ATTACHED, `${ATTACHED} attached spans, named as in the file`);
  t.ok(inFile.hasDetachedness, 'the file has the detachedness field');
  t.equal(inFile.detached['<div>'], DETACHED, `the ${DETACHED} divs are detached`);
  t.equal(inFile.detached.Text, DETACHED, 'so is the text node each one holds');
  const named = {};
  for (const r of sum.by_type)
    if (r.type.startsWith('Detached ')) named[r.type.slice('Detached '.length)] = r.count;
  t.equal(named, inFile.detached, 'each detached native node is named "Detached NAME", and only those');
  t.equal(count('<div>'), 0, 'no detached div keeps its plain name');
  t.equal([sum.objects, sum.bytes], [inFile.objects, inFile.bytes], 'objects and bytes of the file');

  const paths = h.gcsnapJson('paths', '--type', 'Detached <div>', '--json', file);
  const section = paths.sections[0];
  t.equal([section.objects, section.reachable], [DETACHED, DETACHED], 'every detached div is kept alive');
  t.equal(section.groups[0].objects, DETACHED, 'one group of roots holds them all');
  await browser.close();

  // DevTools needs the network the page's browser went without.
  const devtools = await h.launch({ remoteDebugging: true, viewport: { width: 1400, height: 900 } });
  const target = await h.devtoolsTarget(devtools);
  const pageSide = await bothSides(t, devtools, target, 'page', file);
  if (pageSide) {
    const differ = pageSide.listed.filter(([id, , retained, shallow]) => pageSide.ours.has(id) &&
      (pageSide.ours.get(id).retained !== retained || pageSide.ours.get(id).shallow !== shallow));
    t.equal(differ.slice(0, 5).map(([id, type, retained, shallow]) => [id, type, retained, shallow, pageSide.ours.get(id)]), [],
      `page: each of the ${pageSide.listed.length} objects has DevTools' shallow and retained size in dominators --json`);
  }

  const nodeFile = path.join(h.OUT, 'node.heapsnapshot');
  const program = path.join(h.OUT, 'program.js');
  fs.writeFileSync(program, NODE_PROGRAM);
  childProcess.execFileSync(process.execPath, [program, nodeFile], { stdio: 'inherit' });
  t.ok(/valid/.test(h.gcsnap('validate', nodeFile)), 'gcsnap validate: the Node heap is valid');
  const nodeSide = await bothSides(t, devtools, target, 'node', nodeFile);
  if (nodeSide) {
    t.equal([nodeSide.section.unreachable_objects, nodeSide.section.unreachable_bytes], [0, 0],
      'node: no object is unreachable, Node\'s own among them');
    const own = nodeSide.listed.filter(([, type]) => type.startsWith('Node / '));
    t.ok(own.length > 10, `node: DevTools lists Node's own objects (${own.length})`);
    t.equal(own.filter(([id, , retained]) => !nodeSide.ours.has(id) || nodeSide.ours.get(id).retained !== retained), [],
      'node: each of Node\'s own objects retains what DevTools says');
    const differ = nodeSide.listed.filter(([id, , retained]) => nodeSide.ours.has(id) && nodeSide.ours.get(id).retained !== retained);
    t.note(`node: ${differ.length} of ${nodeSide.listed.length} objects retain other sizes in DevTools, which leaves out ` +
      'the retainers the global object does not reach');
  }
  await devtools.close();
});

// The snapshot file loaded in DevTools and analysed by gcsnap: {listed (the
// objects DevTools lists), ours (gcsnap's reachable objects by ID), section
// (dominators --json)}, checked to list thousands of objects, each among
// gcsnap's; null when DevTools could not load it.
async function bothSides(t, browser, target, name, file) {
  const loaded = await h.loadInDevTools(t, browser, target, name, file);
  if (!loaded) return null;
  const listed = await h.devtoolsObjects(loaded.dt, name);
  await loaded.dt.close();
  t.ok(listed.length > 10000, `${name}: DevTools lists the snapshot's objects (${listed.length})`);
  const section = h.gcsnapJson('dominators', '--json', '--top', '0', file).sections[0];
  const ours = new Map(section.top_objects.map((o) => [parseInt(o.id, 16), o]));
  t.equal(listed.filter(([id]) => !ours.has(id)).slice(0, 5), [],
    `${name}: each of the ${listed.length} objects DevTools lists is one gcsnap reaches`);
  return { listed, ours, section };
}
