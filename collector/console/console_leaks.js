/* console_leaks.js - the device page's leak suspects and a snapshot's
 * generations, loaded before console.js, which calls gcsnapViews.leaks and
 * gcsnapViews.generations with its helpers.
 *
 * "gcsnap trend" over the device's last N complete snapshots (N chosen
 * here, /api/devices/ID/trend): the suspect types ranked by bytes gained,
 * their count and bytes in each snapshot, and one retention chain each,
 * from the root (kind and flags) to an instance; with stable IDs, the
 * objects alive in every snapshot. Names from the wire go in as text. */
(function () {
  'use strict';

  var ROOT_FLAGS = {1: 'pinned', 2: 'weak', 4: 'interior'};

  function flagText(f) {
    var out = [];
    Object.keys(ROOT_FLAGS).forEach(function (b) { if (f & b) out.push(ROOT_FLAGS[b]); });
    return out.length ? out.join(', ') : 'no flags';
  }

  function chain(ui, held) {
    var ol = ui.el('ol', 'chain');
    var root = ui.el('li', 'root', held.root_kind + ' root (' + flagText(held.root_flags) + ')' +
                     (held.root_field ? ' field ' + held.root_field : '') +
                     (held.root_type && held.root_type !== '(not in the dump)' ? ' on ' + held.root_type : ''));
    ol.appendChild(root);
    (held.example_path || []).forEach(function (n, i, all) {
      var li = ui.el('li', i === all.length - 1 ? 'leaf' : null, n.type + '  ' + n.id + '  (' + ui.fmt(n.size) + ' B)');
      li.setAttribute('data-id', n.id);
      ol.appendChild(li);
    });
    return ol;
  }

  function series(ui, v, asBytes) {
    return v.map(function (x) { return asBytes ? ui.bytes(x) : ui.fmt(x); }).join(' \u2192 ');
  }

  function draw(ui, box, r) {
    box.textContent = '';
    var files = r.files || [];
    box.appendChild(ui.el('p', 'muted', files.length + ' snapshots, heap ' + series(ui, files.map(function (f) { return f.bytes; }), true)));
    if (!r.suspects.length) { box.appendChild(ui.el('p', 'ok', 'No type looks like a leak over these snapshots.')); return; }
    var table = ui.el('table', 'grid suspects'), head = table.createTHead().insertRow(), body = table.createTBody();
    ['#', 'Type', 'Objects per snapshot', 'Bytes per snapshot', 'Gained', 'Every interval'].forEach(function (x, i) {
      head.appendChild(ui.el('th', i === 4 ? 'n' : '', x));
    });
    r.suspects.forEach(function (s, i) {
      var tr = body.insertRow();
      tr.setAttribute('data-type', s.type);
      tr.insertCell().textContent = String(i + 1);
      var td = tr.insertCell(); td.className = 't'; td.textContent = s.type;
      tr.insertCell().textContent = series(ui, s.counts);
      tr.insertCell().textContent = series(ui, s.bytes, true);
      td = tr.insertCell(); td.className = 'n up'; td.textContent = ui.bytes(s.bytes_gained);
      tr.insertCell().textContent = s.grew_every_interval ? 'yes' : '';
      var sub = body.insertRow(), c = sub.insertCell();
      sub.className = 'held'; c.colSpan = 6;
      if (!s.held_by) { c.appendChild(ui.el('span', 'muted', 'No root holds its instances in the last snapshot.')); return; }
      ui.add(c, ui.el('span', 'muted', 'Held: ' + ui.fmt(s.held_by.objects) + ' objects, ' + ui.bytes(s.held_by.bytes) +
             ' through ' + s.held_by.first_hop_type + '; one chain from the root:'), chain(ui, s.held_by));
    });
    box.appendChild(table);
    var alive = r.alive_in_every_snapshot;
    if (r.stable_ids && alive) {
      box.appendChild(ui.el('h3', null, 'Alive in every snapshot: ' + ui.fmt(alive.objects) + ' objects, ' + ui.bytes(alive.bytes)));
      var ul = ui.el('ul', 'alive');
      alive.by_type.slice(0, 10).forEach(function (x) { ul.appendChild(ui.el('li', null, x.type + ': ' + ui.fmt(x.count) + ' (' + ui.bytes(x.bytes) + ')')); });
      box.appendChild(ul);
    } else {
      box.appendChild(ui.el('p', 'muted', 'Capture with stable IDs to see the objects alive in every snapshot.'));
    }
    table.setAttribute('data-state', 'ready');
  }

  function leaks(ui, box, deviceId, available) {
    var tools = ui.el('div', 'tools'), pick = ui.el('select'), out = ui.el('div'), old = ui.el('input'), label = ui.el('label');
    old.type = 'checkbox'; old.setAttribute('aria-label', 'Long-lived objects only');
    ui.add(label, old, ' generation 2 and large objects only (the long-lived ones)');
    pick.setAttribute('aria-label', 'Snapshots to compare');
    for (var n = 2; n <= 10; n++) {
      var o = ui.el('option', null, 'last ' + n); o.value = String(n);
      if (n === Math.min(10, Math.max(2, available))) o.selected = true;
      pick.appendChild(o);
    }
    ui.add(tools, 'Over the ', pick, ' complete snapshots; ', label);
    ui.add(box, tools, out);
    function load() {
      out.textContent = 'Comparing the last ' + pick.value + ' snapshots...';
      return ui.api('/api/devices/' + encodeURIComponent(deviceId) + '/trend?top=10&last=' + pick.value + (old.checked ? '&long_lived=1' : ''))
        .then(function (r) { draw(ui, out, r); })
        .catch(function (e) { out.textContent = ''; out.appendChild(ui.el('p', 'error', e.message)); });
    }
    pick.addEventListener('change', load);
    old.addEventListener('change', load);
    if (available < 2) { out.appendChild(ui.el('p', 'muted', 'A trend needs two complete snapshots.')); return; }
    load();
  }

  /* A snapshot's objects and bytes by generation (gens: the promise of its
   * /api/snapshots/ID/generations, every type by generation, sorted by bytes):
   * gen 2 and the large object heap hold the long-lived objects, where leaks live. */
  function generations(ui, box, gens) {
    box.textContent = 'Loading...';
    return gens.then(function (r) {
      var total = 0, table = ui.el('table', 'grid gens'), head = table.createTHead().insertRow(), body = table.createTBody();
      r.generations.forEach(function (g) { total += g.bytes; });
      ['Generation', 'Objects', 'Bytes', 'Share %', 'Largest types'].forEach(function (x, i) {
        head.appendChild(ui.el('th', i >= 1 && i <= 3 ? 'n' : '', x));
      });
      r.generations.forEach(function (g) {
        var tr = body.insertRow();
        tr.setAttribute('data-generation', g.generation);
        tr.insertCell().textContent = g.generation === 'loh' ? 'large objects' : g.generation === 'poh' ? 'pinned objects' : g.generation === 'unknown' ? 'outside every range' : 'gen ' + g.generation;
        [ui.fmt(g.objects), ui.fmt(g.bytes), (total ? 100 * g.bytes / total : 0).toFixed(2)].forEach(function (v) {
          var c = tr.insertCell(); c.className = 'n'; c.textContent = v;
        });
        var td = tr.insertCell(); td.className = 't';
        td.textContent = g.types.slice(0, 5).map(function (t) { return t.type + ' (' + ui.bytes(t.bytes) + ')'; }).join(', ');
      });
      box.textContent = '';
      ui.add(box, ui.el('p', 'muted', 'Objects placed by address in the ' + r.ranges + ' generation ranges the agent sent.'), table);
    }).catch(function (e) {
      box.textContent = '';
      box.appendChild(ui.el('p', e.status === 404 ? 'muted' : 'error', e.message));
    });
  }

  window.gcsnapViews = window.gcsnapViews || {};
  window.gcsnapViews.leaks = leaks;
  window.gcsnapViews.generations = generations;
})();
