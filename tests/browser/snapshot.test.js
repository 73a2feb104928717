'use strict';
// snapshot.test.js - a heap snapshot Chromium itself takes of a page (the
// DevTools protocol's HeapProfiler.takeHeapSnapshot, as the Memory panel
// does), read by gcsnap. The page keeps N instances of a class in a Map,
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

const h = require('./harness');
const fs = require('fs');
const path = require('path');

const N = 3000, DETACHED = 700, ATTACHED = 300;

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
});
