'use strict';
// snapshot.test.js - a heap snapshot Chromium itself takes of a page (the
// DevTools protocol's HeapProfiler.takeHeapSnapshot, as the Memory panel
// does), read by gcsnap. The page keeps N instances of a class in a Map,
// holds DETACHED <div> elements no longer in the document in an array, and
// shows ATTACHED <span> elements. Checked:
//   gcsnap validate                    the file is valid
//   summary --json --top 0             N instances of the class; the
//                                      detached divs as "Detached <div>", as
//                                      DevTools names them, and exactly the
//                                      native nodes the file marks detached;
//                                      the attached spans as "<span>"; objects
//                                      and bytes as the file's nodes add up
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

// What the file says, read here apart from gcsnap: the native nodes marked
// detached (state 2) by name, and the objects and bytes of the nodes that
// are objects: all but the root, its synthetic children and those of
// "(GC roots)" (its categories).
function readSnapshot(file) {
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  const meta = s.snapshot.meta, fields = meta.node_fields, width = fields.length;
  const ewidth = meta.edge_fields.length, eto = meta.edge_fields.indexOf('to_node');
  const at = (name) => fields.indexOf(name);
  const types = meta.node_types[0];
  const type = (i) => types[s.nodes[i + at('type')]], name = (i) => s.strings[s.nodes[i + at('name')]];
  const children = (i, first) => {
    const out = [];
    for (let k = 0; k < s.nodes[i + at('edge_count')]; k++) out.push(s.edges[(first + k) * ewidth + eto]);
    return out;
  };
  const dropped = new Set([0]);
  const gcRoots = children(0, 0).filter((c) => type(c) === 'synthetic');
  gcRoots.forEach((c) => dropped.add(c));
  const detached = {};
  let objects = 0, bytes = 0, first = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    if (type(i) === 'synthetic' && name(i) === '(GC roots)' && gcRoots.includes(i))
      children(i, first).filter((c) => type(c) === 'synthetic').forEach((c) => dropped.add(c));
    first += s.nodes[i + at('edge_count')];
  }
  for (let i = 0; i < s.nodes.length; i += width) {
    if (dropped.has(i)) continue;
    objects++;
    bytes += s.nodes[i + at('self_size')];
    if (type(i) === 'native' && at('detachedness') >= 0 && s.nodes[i + at('detachedness')] === 2)
      detached[name(i)] = (detached[name(i)] || 0) + 1;
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
  t.equal(inFile.detached['<div>'], DETACHED, `the file marks the ${DETACHED} divs detached`);
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
