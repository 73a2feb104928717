/* console.js - the gcsnap console: devices, snapshots, diffs, drawn from
 * the collector's JSON API (same origin, nothing else).
 *
 * Views are routed by the URL's hash: #/devices, #/device/ID,
 * #/snapshot/ID, #/diff/OLD/NEW, #/snapshots. Every name that comes from
 * the wire (device IDs, application and type names, reasons) goes into the
 * page as text (textContent, createTextNode, attribute values), never as
 * markup. Long tables are drawn a page at a time; the type histogram is
 * paged, sorted and filtered by the collector (/api/snapshots/ID/types). */
(function () {
  'use strict';

  var PAGE = 100;
  var view = document.getElementById('view');
  var crumbs = document.getElementById('crumbs');
  var generation = 0;          /* bumped on every route: stale answers are dropped */
  var timers = [];             /* intervals of the current view */
  var inflight = 0;            /* captures started here and not ended */

  /* ---- helpers ---------------------------------------------------------- */

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function link(href, text) { var a = el('a', null, text); a.href = href; return a; }
  /* A download link; with a token, the file is fetched with it and saved
   * from memory, since a plain link cannot carry the header. */
  function download(href, text) {
    var a = link(href, text);
    a.addEventListener('click', function (ev) {
      if (!token()) return;
      ev.preventDefault();
      fetch(href, {headers: {'Authorization': 'Bearer ' + token()}}).then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        var name = /filename="([^"]+)"/.exec(r.headers.get('Content-Disposition') || '');
        return r.blob().then(function (b) {
          var save = el('a'), url = URL.createObjectURL(b);
          save.href = url; save.download = name ? name[1] : 'snapshot';
          document.body.appendChild(save); save.click(); save.remove();
          setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
        });
      }).catch(function (e) { a.textContent = text + ' (' + e.message + ')'; });
    });
    return a;
  }
  function button(text, onclick) {
    var b = el('button', null, text); b.type = 'button'; b.addEventListener('click', onclick); return b;
  }
  function fmt(v, signed) {
    if (typeof v !== 'number') return v === null || v === undefined ? '' : String(v);
    var s = Math.abs(v).toLocaleString('en-US');
    return (v < 0 ? '-' : signed && v > 0 ? '+' : '') + s;
  }
  function bytes(v) {
    if (typeof v !== 'number') return '';
    var u = ['B', 'KB', 'MB', 'GB', 'TB'], i = 0, x = Math.abs(v);
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (v < 0 ? '-' : '') + (i ? x.toFixed(1) : String(x)) + ' ' + u[i];
  }
  function when(unix_s) {
    if (typeof unix_s !== 'number') return '';
    return new Date(unix_s * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  }
  function enc(s) { return encodeURIComponent(String(s)); }
  function section(title) {
    var s = el('section'); if (title) s.appendChild(el('h2', null, title)); view.appendChild(s); return s;
  }
  function kv(rows) {
    var t = el('table', 'kv'), b = t.createTBody();
    rows.forEach(function (r) {
      var tr = b.insertRow(), th = el('th', null, r[0]), td = tr.insertCell();
      tr.insertBefore(th, td);
      if (r[1] instanceof Node) td.appendChild(r[1]); else td.textContent = r[1] === undefined ? '' : r[1];
      if (r[2]) td.className = 'n';
    });
    return t;
  }
  function message(box, text, cls) { box.textContent = ''; box.appendChild(el('p', cls || 'muted', text)); }

  /* The API token, when the collector has one (--http-token-file): asked
   * for once, kept for the browser tab only (sessionStorage). */
  var TOKEN_KEY = 'gcsnap-token';
  function token() { try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; } }
  function askToken(why) {
    if (document.getElementById('token-form')) return;
    var f = el('form', 'inline'), input = el('input'), s = el('section');
    f.id = 'token-form';
    input.type = 'password'; input.name = 'token'; input.autocomplete = 'off'; input.className = 'wide';
    input.setAttribute('aria-label', 'API token');
    var ok = el('button', null, 'Use token'); ok.type = 'submit';
    add(f, el('h2', null, 'This collector needs its API token'), el('p', 'muted', why),
        el('label', null, 'Token '), input, ' ', ok);
    f.addEventListener('submit', function (ev) {
      ev.preventDefault();
      try { sessionStorage.setItem(TOKEN_KEY, input.value.trim()); } catch (e) { /* private mode: this page only */ }
      s.remove(); route(); health();
    });
    s.appendChild(f);
    view.insertBefore(s, view.firstChild);
    input.focus();
  }

  /* The API: JSON in and out; errors become Error with the collector's message. */
  function api(path, opts) {
    opts = opts || {};
    var init = {method: opts.method || 'GET', headers: {'Accept': 'application/json'}};
    if (token()) init.headers['Authorization'] = 'Bearer ' + token();
    if (opts.body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(opts.body);
    }
    return fetch(path, init).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (r.status === 401) askToken(token() ? 'The collector refused the token given.' :
          'It was started with --http-token-file; the file\'s first line is the token.');
        if (!r.ok) {
          var err = new Error((data && data.message) || ('HTTP ' + r.status));
          err.status = r.status; err.code = data && data.error;
          throw err;
        }
        return data;
      });
    });
  }
  /* Calls fn with the answer only if the view is still the one that asked. */
  function current(fn) {
    var g = generation;
    return function (x) { if (g === generation) return fn(x); };
  }
  function every(ms, fn) { timers.push(setInterval(fn, ms)); }

  /* While an analysis of snapshot id runs (kind as /progress names it),
   * node says how far its child has read the snapshot's file and for how
   * long it has been at it, polling /api/snapshots/ID/progress until the
   * returned function is called or node leaves the page. */
  function progress(id, kind, node, label) {
    var started = Date.now(), stopped = false;
    function show(x) {
      var text = label, pct = x && x.state === 'running' && x.percent !== null ? Math.floor(x.percent) : null;
      if (x && x.state === 'waiting') text += ' waiting for another analysis,';
      if (x && x.files > 1) text += ' file ' + Math.min(Math.max(x.reads, 1), x.files) + ' of ' + x.files + ',';
      if (pct !== null) text += pct < 100 ? ' reading the snapshot: ' + pct + '%,' : ' snapshot read (100%), computing,';
      node.setAttribute('data-percent', pct === null ? '' : String(pct));
      node.textContent = text + ' ' + Math.round((Date.now() - started) / 1000) + ' s';
    }
    function poll() {
      if (stopped || !node.isConnected) return;
      api('/api/snapshots/' + id + '/progress').then(function (r) {
        if (stopped) return;
        show(r.analyses.filter(function (a) { return a.kind === kind; })[0]);
        setTimeout(poll, 500);
      }, function () { if (!stopped) setTimeout(poll, 2000); });
    }
    node.textContent = label;
    setTimeout(poll, 200);
    return function () { stopped = true; };
  }

  /* What the views of console_tree.js and console_fleet.js use. */
  var helpers = {el: el, add: add, api: api, fmt: fmt, bytes: bytes, button: button, link: link, progress: progress};

  /* ---- tables ----------------------------------------------------------- */

  /* A sortable, filterable table over rows in memory, a page at a time.
   * cols: {key, label, num, signed, render(td, row)}. */
  function grid(box, rows, cols, opts) {
    var st = {key: opts.key, desc: opts.desc, filter: '', page: 0, view: rows};
    var tools = el('div', 'tools'), input = el('input'), info = el('span', 'muted');
    input.type = 'search'; input.placeholder = opts.placeholder || 'Filter';
    input.setAttribute('aria-label', input.placeholder);
    add(tools, opts.noFilter ? null : input, info);
    var table = el('table', 'grid'), head = table.createTHead().insertRow(), body = table.createTBody();
    var pager = el('div', 'pager'), prev = button('Previous', function () { st.page--; draw(); });
    var next = button('Next', function () { st.page++; draw(); }), where = el('span');
    add(pager, prev, where, next);
    cols.forEach(function (c) {
      var th = el('th', null, c.label);
      if (c.key) {
        th.title = 'Sort by ' + c.label;
        th.addEventListener('click', function () {
          if (st.key === c.key) st.desc = !st.desc; else { st.key = c.key; st.desc = !!c.num; }
          sort(); draw();
        });
      }
      c.th = th; head.appendChild(th);
    });
    function sort() {
      var k = st.key, d = st.desc ? -1 : 1, tie = opts.tie;
      if (!k) return;
      st.view = st.view.slice().sort(function (a, b) {
        var x = a[k], y = b[k];
        if (x === y) return tie ? (a[tie] < b[tie] ? -1 : a[tie] > b[tie] ? 1 : 0) : 0;
        return (x < y ? -1 : 1) * d;
      });
      st.page = 0;
    }
    function filter() {
      var f = st.filter.toLowerCase(), test = opts.test;
      st.view = f ? rows.filter(function (r) { return test(r).toLowerCase().indexOf(f) >= 0; }) : rows;
      sort(); draw();
    }
    function draw() {
      var n = st.view.length, pages = Math.max(1, Math.ceil(n / PAGE));
      if (st.page >= pages) st.page = pages - 1;
      if (st.page < 0) st.page = 0;
      var a = st.page * PAGE, b = Math.min(n, a + PAGE);
      body.textContent = '';
      for (var i = a; i < b; i++) {
        var r = st.view[i], tr = body.insertRow();
        if (opts.onRow) opts.onRow(tr, r);
        cols.forEach(function (c) {
          var td = tr.insertCell();
          if (c.num) td.className = 'n';
          if (c.render) c.render(td, r); else td.textContent = c.num ? fmt(r[c.key], c.signed) : r[c.key];
        });
      }
      cols.forEach(function (c) {
        c.th.className = (c.key ? 's ' : '') + (c.num ? 'n ' : '') + (c.key && c.key === st.key ? 'sorted' + (st.desc ? '' : ' asc') : '');
      });
      info.textContent = ' ' + n.toLocaleString('en-US') + ' of ' + rows.length.toLocaleString('en-US') + ' ' + (opts.noun || 'rows');
      where.textContent = n ? ('rows ' + (a + 1) + '-' + b + ' of ' + n + ', page ' + (st.page + 1) + ' of ' + pages) : 'no rows';
      prev.disabled = st.page === 0; next.disabled = st.page >= pages - 1;
    }
    var timer;
    input.addEventListener('input', function () {
      clearTimeout(timer); timer = setTimeout(function () { st.filter = input.value; filter(); }, 150);
    });
    box.appendChild(tools); box.appendChild(table); box.appendChild(pager);
    sort(); draw();
    return {redraw: draw, setRows: function (r) { rows = r; filter(); }};
  }

  /* ---- capture ---------------------------------------------------------- */

  /* Asks for a capture, shows its progress in status, and opens the new
   * snapshot once it is stored. */
  function captureNow(deviceId, btn, status) {
    var g = generation, ended = false;
    function end() { if (!ended) { ended = true; inflight--; } }
    inflight++;
    btn.disabled = true;
    status.className = 'muted';
    status.textContent = 'requesting...';
    api('/api/devices/' + enc(deviceId) + '/capture', {method: 'POST'}).then(function (r) {
      var started = Date.now();
      function poll() {
        if (g !== generation) { end(); return; }
        api('/api/captures/' + r.request_id).then(function (c) {
          if (g !== generation) { end(); return; }
          if (c.state === 'stored') {
            end();
            status.className = 'ok';
            status.textContent = 'stored as snapshot ' + c.snapshot_id;
            location.hash = '#/snapshot/' + c.snapshot_id;
          } else if (c.state === 'failed') {
            end();
            status.className = 'error';
            status.textContent = 'failed: ' + (c.reason || 'unknown reason');
            btn.disabled = false;
          } else {
            status.textContent = c.state + '... ' + Math.round((Date.now() - started) / 1000) + ' s';
            setTimeout(poll, 250);
          }
        }).catch(function (e) {
          end(); status.className = 'error'; status.textContent = e.message; btn.disabled = false;
        });
      }
      poll();
    }).catch(function (e) {
      end();
      if (g !== generation) return;
      status.className = 'error'; status.textContent = e.message; btn.disabled = false;
    });
  }

  /* ---- devices ---------------------------------------------------------- */

  function schedulesOf(schedules, deviceId) {
    return schedules.filter(function (s) {
      return s.device === deviceId || (s.devices || []).some(function (d) { return d.device_id === deviceId; });
    });
  }
  function scheduleText(s) {
    var t = 'every ' + s.every;
    if (s.keep) t += ', keep ' + s.keep;
    if (s.max_bytes) t += ', at most ' + bytes(s.max_bytes);
    return t + ' (#' + s.id + ')';
  }
  function connection(d) {
    var span = el('span');
    add(span, el('span', 'badge ' + (d.busy ? 'busy' : d.connected ? 'on' : 'off'),
                 d.busy ? 'capturing' : d.connected ? 'connected' : 'disconnected'));
    if (d.connected && d.address) add(span, ' ', el('span', 'muted', d.address));
    if (!d.connected && d.last_seen) add(span, ' ', el('span', 'muted', 'last seen ' + when(d.last_seen)));
    return span;
  }

  function devicesView() {
    crumbs.textContent = '';
    var box = section('Devices'), list = el('div');
    message(list, 'Loading...');
    box.appendChild(list);
    var sbox = section('Schedules'), slist = el('div');
    sbox.appendChild(slist);
    sbox.appendChild(scheduleForm(null, refresh));
    var lastTimes = {};
    function refresh() {
      Promise.all([api('/api/devices'), api('/api/schedules')]).then(current(function (r) {
        drawDevices(list, r[0].devices, r[1].schedules, lastTimes);
        drawSchedules(slist, r[1].schedules, refresh);
      })).catch(current(function (e) { message(list, e.message, 'error'); }));
    }
    refresh();
    every(5000, refresh);
  }

  function drawDevices(box, devices, schedules, lastTimes) {
    if (!devices.length) { message(box, 'No device has connected yet.'); return; }
    var t = el('table', 'grid devices'), h = t.createTHead().insertRow(), b = t.createTBody();
    ['Device', 'Application', 'Connection', 'Snapshots', 'Last capture', 'Schedule', ''].forEach(function (x) {
      h.appendChild(el('th', null, x));
    });
    devices.forEach(function (d) {
      var tr = b.insertRow();
      tr.setAttribute('data-device', d.device_id);
      add(tr.insertCell(), link('#/device/' + enc(d.device_id), d.device_id));
      tr.insertCell().textContent = d.app_name || '';
      tr.insertCell().appendChild(connection(d));
      var n = tr.insertCell(); n.className = 'n'; n.textContent = fmt(d.snapshots);
      var last = tr.insertCell();
      if (d.last_snapshot_id) {
        var a = link('#/snapshot/' + d.last_snapshot_id, '#' + d.last_snapshot_id);
        add(last, a);
        var time = el('span', 'muted');
        add(last, ' ', time);
        var id = d.last_snapshot_id;
        if (lastTimes[id]) time.textContent = lastTimes[id];
        else api('/api/snapshots/' + id).then(function (s) {
          lastTimes[id] = when(s.created) + ' (' + s.trigger + ')'; time.textContent = lastTimes[id];
        }).catch(function () {});
      } else {
        last.textContent = 'none';
      }
      var sc = tr.insertCell();
      schedulesOf(schedules, d.device_id).forEach(function (s) { add(sc, el('div', null, scheduleText(s))); });
      var act = tr.insertCell(), status = el('span', 'muted capture-status');
      var btn = button('Capture now', function () { captureNow(d.device_id, btn, status); });
      btn.className = 'capture';
      btn.disabled = !d.connected || d.busy;
      add(act, btn, ' ', status);
    });
    /* A capture in progress shows its state in the table: keep it. */
    if (inflight) return;
    box.textContent = '';
    box.appendChild(t);
  }

  function drawSchedules(box, schedules, refresh) {
    box.textContent = '';
    if (!schedules.length) { box.appendChild(el('p', 'muted', 'No schedule.')); return; }
    var t = el('table', 'grid schedules'), h = t.createTHead().insertRow(), b = t.createTBody();
    ['ID', 'Devices', 'Every', 'Jitter', 'Keep', 'Max bytes', 'Next runs', ''].forEach(function (x) {
      h.appendChild(el('th', null, x));
    });
    schedules.forEach(function (s) {
      var tr = b.insertRow();
      tr.insertCell().textContent = '#' + s.id;
      tr.insertCell().textContent = s.device;
      tr.insertCell().textContent = s.every;
      tr.insertCell().textContent = s.jitter_ms ? (s.jitter_ms / 1000) + ' s' : '';
      tr.insertCell().textContent = s.keep || '';
      tr.insertCell().textContent = s.max_bytes ? bytes(s.max_bytes) : '';
      var next = tr.insertCell();
      (s.devices || []).forEach(function (d) {
        add(next, el('div', null, d.device_id + ': ' +
          (d.next_run_ms ? new Date(d.next_run_ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : 'not connected')));
      });
      var act = tr.insertCell(), status = el('span', 'error');
      add(act, button('Remove', function () {
        api('/api/schedules/' + s.id, {method: 'DELETE'}).then(refresh)
          .catch(function (e) { status.textContent = e.message; });
      }), ' ', status);
    });
    box.appendChild(t);
  }

  /* The form that adds a schedule; device is fixed when given. */
  function scheduleForm(device, done) {
    var f = el('form', 'inline schedule-form'), status = el('span');
    f.appendChild(el('h3', null, 'Add a schedule'));
    function field(name, label, value, cls, hint) {
      var l = el('label', null, label + ' '), i = el('input', cls);
      i.name = name; i.value = value || ''; if (hint) i.placeholder = hint;
      l.appendChild(i); f.appendChild(l); return i;
    }
    var dev = field('device', 'Devices', device || '', 'wide', 'ID or pattern (app-*)');
    field('every', 'every', '', null, '30s, 5m, 1h');
    field('jitter', 'jitter', '', null, 'optional');
    field('keep', 'keep', '', null, 'snapshots');
    field('max_bytes', 'max bytes', '', null, '500M');
    var submit = el('button', null, 'Add'); submit.type = 'submit';
    add(f, submit, ' ', status);
    f.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var body = {};
      ['device', 'every', 'jitter', 'keep', 'max_bytes'].forEach(function (k) {
        var v = f.elements[k].value.trim();
        if (v) body[k] = /^\d+$/.test(v) && (k === 'keep' || k === 'max_bytes') ? Number(v) : v;
      });
      api('/api/schedules', {method: 'POST', body: body}).then(function (s) {
        status.className = 'ok'; status.textContent = 'added schedule #' + s.id;
        if (!device) dev.value = '';
        done();
      }).catch(function (e) { status.className = 'error'; status.textContent = e.message; });
    });
    return f;
  }

  /* ---- one device: chart and snapshots ---------------------------------- */

  /* The SVG namespace, from an <svg> of the page (which the HTML parser
   * puts in it), so that no URL is written here. */
  var SVG = document.getElementById('svg-ns').namespaceURI;
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    return e;
  }
  function triggerOf(s) { return s.schedule_id ? 'schedule #' + s.schedule_id : (s.trigger || ''); }
  var TRIGGER_COLORS = ['#0f766e', '#7c3aed', '#b45309', '#be185d', '#4d7c0f', '#1d4ed8'];

  /* Total bytes (left axis) and objects (right axis) of the snapshots,
   * oldest first, one point each; clicking a point selects it. */
  function chart(box, snaps, selected, onPick) {
    var W = Math.max(720, Math.min(1200, snaps.length * 4 + 120)), H = 300, L = 70, R = 70, T = 16, B = 40;
    var s = svg('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'class': 'trend'});
    var maxB = 1, maxO = 1, n = snaps.length;
    snaps.forEach(function (x) { if (x.bytes > maxB) maxB = x.bytes; if (x.objects > maxO) maxO = x.objects; });
    function X(i) { return L + (n < 2 ? (W - L - R) / 2 : i * (W - L - R) / (n - 1)); }
    function YB(v) { return T + (H - T - B) * (1 - v / maxB); }
    function YO(v) { return T + (H - T - B) * (1 - v / maxO); }
    for (var k = 0; k <= 4; k++) {
      var y = T + (H - T - B) * k / 4;
      s.appendChild(svg('line', {x1: L, x2: W - R, y1: y, y2: y, stroke: '#eceff4'}));
      var tl = svg('text', {x: L - 6, y: y + 4, 'text-anchor': 'end'}); tl.textContent = bytes(maxB * (4 - k) / 4);
      var tr = svg('text', {x: W - R + 6, y: y + 4}); tr.textContent = fmt(Math.round(maxO * (4 - k) / 4));
      s.appendChild(tl); s.appendChild(tr);
    }
    /* Time labels under the first, last and (when there is room) three
     * points between; the points are evenly spaced, not by time. */
    var ticks = n > 4 && W >= 900 ? [0, 0.25, 0.5, 0.75, 1] : [0, 1];
    ticks.forEach(function (f, k) {
      if (!n || (n === 1 && k)) return;
      var i = Math.round(f * (n - 1));
      var anchor = k === 0 ? 'start' : k === ticks.length - 1 ? 'end' : 'middle';
      var label = svg('text', {x: X(i), y: H - B + 16, 'text-anchor': anchor});
      label.textContent = when(snaps[i].created);
      s.appendChild(svg('line', {x1: X(i), x2: X(i), y1: H - B, y2: H - B + 4, stroke: '#9aa3b5'}));
      s.appendChild(label);
    });
    var pb = [], po = [];
    snaps.forEach(function (x, i) { pb.push(X(i).toFixed(1) + ',' + YB(x.bytes).toFixed(1)); po.push(X(i).toFixed(1) + ',' + YO(x.objects).toFixed(1)); });
    s.appendChild(svg('polyline', {points: pb.join(' '), fill: 'none', stroke: '#c2410c', 'stroke-width': 1.5}));
    s.appendChild(svg('polyline', {points: po.join(' '), fill: 'none', stroke: '#2563eb', 'stroke-width': 1.5}));
    var triggers = {}, nt = 0;
    snaps.forEach(function (x) { var t = triggerOf(x); if (!(t in triggers)) triggers[t] = TRIGGER_COLORS[nt++ % TRIGGER_COLORS.length]; });
    var r = n > 200 ? 2.5 : 4;
    function tip(x) {
      var title = svg('title', {});
      title.textContent = '#' + x.id + ' ' + when(x.created) + '\n' + triggerOf(x) + '\n' + bytes(x.bytes) + ', ' + fmt(x.objects) + ' objects';
      return title;
    }
    function point(shape, x) {
      shape.setAttribute('class', 'pt' + (selected.indexOf(x.id) >= 0 ? ' sel' : ''));
      shape.setAttribute('data-id', x.id);
      shape.appendChild(tip(x));
      shape.addEventListener('click', function () { onPick(x.id); });
      s.appendChild(shape);
    }
    /* Objects first, so that the bytes points (coloured by trigger) are on top. */
    snaps.forEach(function (x, i) {
      point(svg('rect', {x: (X(i) - r * 0.8).toFixed(1), y: (YO(x.objects) - r * 0.8).toFixed(1),
                         width: r * 1.6, height: r * 1.6, fill: '#2563eb'}), x);
    });
    snaps.forEach(function (x, i) {
      point(svg('circle', {cx: X(i).toFixed(1), cy: YB(x.bytes).toFixed(1), r: r, fill: triggers[triggerOf(x)]}), x);
    });
    box.textContent = '';
    var legend = el('div', 'legend');
    var lb = el('span'); add(lb, el('span', 'sw bytes'), 'total bytes (left, circles)');
    var lo = el('span'); add(lo, el('span', 'sw objects'), 'objects (right, squares)');
    add(legend, lb, lo);
    Object.keys(triggers).forEach(function (t) {
      var sw = el('span', 'sw'); sw.style.background = triggers[t];
      var l = el('span'); add(l, sw, t || '(no trigger)'); legend.appendChild(l);
    });
    var wrap = el('div', 'chart'); wrap.appendChild(s);
    add(box, legend, wrap);
  }

  function deviceView(id) {
    crumbs.textContent = ' / device ' + id;
    var head = section('Device ' + id), info = el('div');
    message(info, 'Loading...');
    head.appendChild(info);
    var csec = section('Heap over time'), tools = el('div', 'tools'), cbox = el('div');
    var diffBtn = button('Diff the two selected', function () {
      var a = Math.min(selected[0], selected[1]), b = Math.max(selected[0], selected[1]);
      location.hash = '#/diff/' + a + '/' + b;
    });
    diffBtn.className = 'diff';
    var picked = el('span', 'muted');
    add(tools, diffBtn, ' ', picked);
    add(csec, el('p', 'muted', 'Click two points (or tick two rows below) to compare them.'), tools, cbox);
    var lsec = section('Leak suspects'), lbox = el('div');
    message(lbox, 'Loading...');
    lsec.appendChild(lbox);
    var tsec = section('Snapshots'), tbox = el('div');
    tsec.appendChild(tbox);
    var selected = [], snaps = [], table;
    function pick(sid) {
      var i = selected.indexOf(sid);
      if (i >= 0) selected.splice(i, 1); else { selected.push(sid); if (selected.length > 2) selected.shift(); }
      update();
    }
    function update() {
      diffBtn.disabled = selected.length !== 2;
      picked.textContent = selected.length ? 'selected: ' + selected.map(function (x) { return '#' + x; }).join(', ') : 'nothing selected';
      var chartSnaps = snaps.filter(function (x) { return x.status === 'complete'; }).reverse();
      chart(cbox, chartSnaps, selected, pick);
      if (table) table.redraw();
    }
    Promise.all([api('/api/devices'), api('/api/schedules'),
                 api('/api/snapshots?device=' + enc(id) + '&limit=500')]).then(current(function (r) {
      var d = r[0].devices.filter(function (x) { return x.device_id === id; })[0];
      info.textContent = '';
      if (!d) { message(info, 'The collector does not know this device.', 'error'); }
      else {
        var status = el('span', 'muted capture-status');
        var btn = button('Capture now', function () { captureNow(id, btn, status); });
        btn.className = 'capture';
        btn.disabled = !d.connected || d.busy;
        var sc = el('div');
        schedulesOf(r[1].schedules, id).forEach(function (s) { add(sc, el('div', null, scheduleText(s))); });
        if (!sc.childNodes.length) sc.textContent = 'none';
        add(info, kv([['Application', d.app_name], ['Architecture', (d.architecture || '') + (d.pointer_size ? ', ' + d.pointer_size * 8 + '-bit' : '')],
                      ['Agent', d.agent_version], ['Connection', connection(d)], ['Snapshots', fmt(d.snapshots)],
                      ['Schedules', sc]]),
            el('p', null), btn, ' ', status, scheduleForm(id, function () { route(); }));
      }
      snaps = r[2].snapshots;
      lbox.textContent = '';
      window.gcsnapViews.leaks(helpers, lbox, id, snaps.filter(function (x) { return x.status === 'complete'; }).length);
      if (snaps.length === 500) csec.insertBefore(el('p', 'muted', 'The newest 500 snapshots.'), tools);
      table = grid(tbox, snaps, [
        {label: '', render: function (td, x) {
          if (x.status !== 'complete') return;
          var c = el('input'); c.type = 'checkbox'; c.checked = selected.indexOf(x.id) >= 0;
          c.setAttribute('aria-label', 'select snapshot ' + x.id);
          c.addEventListener('change', function () { pick(x.id); });
          td.appendChild(c);
        }},
        {key: 'id', label: 'ID', num: 1, render: function (td, x) {
          td.className = 'n'; td.appendChild(x.status === 'complete' ? link('#/snapshot/' + x.id, '#' + x.id) : el('span', null, '#' + x.id));
        }},
        {key: 'created', label: 'Created', render: function (td, x) { td.textContent = when(x.created); }},
        {key: 'trigger', label: 'Trigger', render: function (td, x) { td.textContent = triggerOf(x); }},
        {key: 'status', label: 'Status', render: function (td, x) {
          td.textContent = x.status; if (x.reason) { td.className = 'error'; td.title = x.reason; td.textContent += ': ' + x.reason; }
        }},
        {key: 'objects', label: 'Objects', num: 1},
        {key: 'bytes', label: 'Bytes', num: 1},
        {key: 'types', label: 'Types', num: 1},
        {key: 'file_bytes', label: 'File', num: 1, render: function (td, x) { td.className = 'n'; td.textContent = bytes(x.file_bytes); }}
      ], {key: 'id', desc: true, noun: 'snapshots', placeholder: 'Filter by trigger or status',
          test: function (x) { return triggerOf(x) + ' ' + x.status; }});
      update();
    })).catch(current(function (e) { message(info, e.message, 'error'); }));
  }

  /* ---- all snapshots ---------------------------------------------------- */

  function snapshotsView() {
    crumbs.textContent = ' / snapshots';
    var box = section('Snapshots (newest 1000)'), list = el('div');
    message(list, 'Loading...');
    box.appendChild(list);
    api('/api/snapshots?limit=1000').then(current(function (r) {
      list.textContent = '';
      grid(list, r.snapshots, [
        {key: 'id', label: 'ID', num: 1, render: function (td, x) {
          td.className = 'n'; td.appendChild(x.status === 'complete' ? link('#/snapshot/' + x.id, '#' + x.id) : el('span', null, '#' + x.id));
        }},
        {key: 'device_id', label: 'Device', render: function (td, x) { td.appendChild(link('#/device/' + enc(x.device_id), x.device_id)); }},
        {key: 'created', label: 'Created', render: function (td, x) { td.textContent = when(x.created); }},
        {key: 'trigger', label: 'Trigger', render: function (td, x) { td.textContent = triggerOf(x); }},
        {key: 'status', label: 'Status'},
        {key: 'objects', label: 'Objects', num: 1},
        {key: 'bytes', label: 'Bytes', num: 1}
      ], {key: 'id', desc: true, noun: 'snapshots', placeholder: 'Filter by device',
          test: function (x) { return x.device_id; }});
    })).catch(current(function (e) { message(list, e.message, 'error'); }));
  }

  /* ---- one snapshot ----------------------------------------------------- */

  /* The histogram, a page at a time from the collector; gens, the promise of
   * the snapshot's /generations?top=0, adds each type's bytes by generation. */
  var GENS = [['0', 'Gen 0'], ['1', 'Gen 1'], ['2', 'Gen 2'], ['loh', 'LOH'], ['poh', 'POH'], ['unknown', 'No gen']];
  function typeTable(box, id, gens, onType) {
    var st = {sort: 'bytes', order: 'desc', filter: '', offset: 0, seq: 0};
    var tools = el('div', 'tools'), input = el('input'), info = el('span', 'muted');
    input.type = 'search'; input.placeholder = 'Filter by type name';
    input.setAttribute('aria-label', 'Filter by type name');
    add(tools, input, info);
    var table = el('table', 'grid types'), head = table.createTHead().insertRow(), body = table.createTBody();
    var pager = el('div', 'pager'), where = el('span');
    var prev = button('Previous', function () { st.offset = Math.max(0, st.offset - PAGE); load(); });
    var next = button('Next', function () { st.offset += PAGE; load(); });
    add(pager, prev, where, next);
    var cols = [{key: 'name', field: 'type', label: 'Type'}, {key: 'count', label: 'Objects', num: 1},
                {key: 'bytes', label: 'Bytes', num: 1}, {label: 'Share %', field: 'percent', num: 1},
                {label: 'Retained', num: 1}].concat(GENS.map(function (g) {
                  return {label: g[1], gen: g[0], num: 1}; }));
    var retained = null;         /* {type: bytes} from the dominator tree, once it is known */
    var byGen = null, shownGens = {};    /* {gen: {type: {count, bytes}}}, the generations with objects */
    function fillGens() {
      Array.prototype.forEach.call(table.querySelectorAll('.gen'), function (c) {
        var g = c.getAttribute('data-gen'), x;
        c.hidden = !shownGens[g];
        if (!byGen || c.tagName !== 'TD') return;
        x = byGen[g][c.getAttribute('data-type')];
        c.textContent = x ? fmt(x.bytes) : '';
        c.title = x ? fmt(x.count) + ' objects of this type in ' + c.getAttribute('data-label') : '';
      });
    }
    gens.then(current(function (r) {
      byGen = {};
      r.generations.forEach(function (g) {
        var m = byGen[g.generation] = {};
        g.types.forEach(function (t) { m[t.type] = t; });
        shownGens[g.generation] = g.objects > 0;
      });
      fillGens();
    })).catch(function () { /* no ranges: no columns */ });
    function fillRetained() {
      if (!retained) return;
      Array.prototype.forEach.call(body.querySelectorAll('td.retained'), function (td) {
        td.textContent = fmt(retained[td.getAttribute('data-type')] || 0);
      });
    }
    api('/api/snapshots/' + id + '/dominators?parent=root&limit=1&by_type=1').then(current(function (r) {
      retained = r.retained_by_type; fillRetained();
    })).catch(current(function (e) {
      Array.prototype.forEach.call(body.querySelectorAll('td.retained'), function (td) { td.textContent = 'n/a'; td.title = e.message; });
    }));
    cols.forEach(function (c) {
      var th = el('th', c.num ? 'n' : '', c.label);
      if (c.gen) { th.className += ' gen'; th.setAttribute('data-gen', c.gen); th.title = 'Bytes in ' + c.label; }
      if (c.key) {
        th.className += ' s'; th.title = 'Sort by ' + c.label;
        th.addEventListener('click', function () {
          if (st.sort === c.key) st.order = st.order === 'desc' ? 'asc' : 'desc';
          else { st.sort = c.key; st.order = c.num ? 'desc' : 'asc'; }
          st.offset = 0; load();
        });
      }
      c.th = th; head.appendChild(th);
    });
    function load() {
      var seq = ++st.seq, started = performance.now();
      var q = '/api/snapshots/' + id + '/types?offset=' + st.offset + '&limit=' + PAGE + '&sort=' + st.sort +
              '&order=' + st.order + (st.filter ? '&filter=' + enc(st.filter) : '');
      info.textContent = ' loading...';
      api(q).then(current(function (r) {
        if (seq !== st.seq) return;
        body.textContent = '';
        r.rows.forEach(function (x) {
          var tr = body.insertRow();
          tr.className = 'pick';
          tr.title = 'Show what keeps ' + x.type + ' alive';
          tr.addEventListener('click', function () {
            Array.prototype.forEach.call(body.rows, function (o) { o.classList.remove('chosen'); });
            tr.classList.add('chosen'); onType(x.type);
          });
          var td = tr.insertCell(); td.className = 't'; td.textContent = x.type;
          td = tr.insertCell(); td.className = 'n'; td.textContent = fmt(x.count);
          td = tr.insertCell(); td.className = 'n'; td.textContent = fmt(x.bytes);
          td = tr.insertCell(); td.className = 'n'; td.textContent = x.percent.toFixed(2);
          td = tr.insertCell(); td.className = 'n retained'; td.setAttribute('data-type', x.type);
          td.title = 'What the heap would lose without this type\'s objects (no double counting)';
          td.textContent = '...';
          GENS.forEach(function (g) {
            td = tr.insertCell(); td.className = 'n gen';
            td.setAttribute('data-gen', g[0]); td.setAttribute('data-label', g[1]); td.setAttribute('data-type', x.type);
          });
        });
        fillRetained();
        fillGens();
        cols.forEach(function (c) {
          c.th.classList.toggle('sorted', c.key === st.sort);
          c.th.classList.toggle('asc', c.key === st.sort && st.order === 'asc');
        });
        var end = r.offset + r.rows.length;
        info.textContent = ' ' + fmt(r.matched) + ' of ' + fmt(r.types) + ' types with objects' +
          (r.filter ? ' (' + fmt(r.matched_objects) + ' objects, ' + bytes(r.matched_bytes) + ')' : '');
        where.textContent = r.matched ? 'rows ' + (r.offset + 1) + '-' + end + ' of ' + fmt(r.matched) +
          ', page ' + (Math.floor(r.offset / PAGE) + 1) + ' of ' + Math.max(1, Math.ceil(r.matched / PAGE)) : 'no rows';
        prev.disabled = r.offset === 0; next.disabled = end >= r.matched;
        table.setAttribute('data-ms', String(Math.round(performance.now() - started)));
        table.setAttribute('data-state', 'ready');
      })).catch(current(function (e) { info.textContent = ' ' + e.message; info.className = 'error'; }));
    }
    var timer;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { st.filter = input.value; st.offset = 0; load(); }, 150);
    });
    add(box, tools, table, pager);
    load();
  }

  function drawPaths(box, r) {
    box.textContent = '';
    (r.sections || []).forEach(function (s) {
      var h = el('h3');
      add(h, s.type + ' in ' + s.name + ': ' + fmt(s.objects) + ' objects, ' + bytes(s.bytes) + ', ' + fmt(s.reachable) + ' reachable');
      box.appendChild(h);
      if (!s.groups || !s.groups.length) { box.appendChild(el('p', 'muted', 'No root keeps these objects alive.')); return; }
      s.groups.forEach(function (g) {
        var p = el('p');
        add(p, el('strong', null, fmt(g.objects) + ' objects, ' + bytes(g.bytes)),
            ' held by a ' + g.root_kind + ' root' + (g.root_flags ? ' (flags ' + g.root_flags + ')' : '') +
            (g.root_field ? ' (field ' + g.root_field + ')' : '') +
            ' on ' + g.root_type + ', first through ' + g.first_hop_type + '. Example:');
        var ol = el('ol', 'path');
        (g.example_path || []).forEach(function (n) {
          ol.appendChild(n.elided ? el('li', 'muted', '... ' + fmt(n.elided) + ' more objects on this path ...')
            : el('li', null, n.id + '  ' + n.type + '  (' + fmt(n.size) + ' B)'));
        });
        add(box, p, ol);
      });
    });
  }

  function drawObjectPaths(box, r) {
    box.textContent = '';
    (r.sections || []).forEach(function (s) {
      var o = s.object || {};
      box.appendChild(el('h3', null, 'Object ' + o.id + ' (' + o.type + ', ' + fmt(o.size) + ' B) in ' + s.name));
      if (!s.paths || !s.paths.length) { box.appendChild(el('p', 'muted', 'No root keeps this object alive.')); return; }
      s.paths.forEach(function (p) {
        var rt = p.root || {};
        box.appendChild(el('p', null, 'From a ' + rt.kind + ' root' + (rt.flags ? ' (flags ' + rt.flags + ')' : '') +
                                      (rt.field ? ' (field ' + rt.field + ')' : '') +
                                      (rt.container ? ' on ' + rt.container : '') + ':'));
        var ol = el('ol', 'path');
        (p.path || []).forEach(function (n) { ol.appendChild(el('li', null, n.id + '  ' + n.type + '  (' + fmt(n.size) + ' B)')); });
        box.appendChild(ol);
      });
    });
  }

  function snapshotView(id) {
    crumbs.textContent = ' / snapshot ' + id;
    var top = section('Snapshot #' + id), info = el('div');
    message(info, 'Loading...');
    top.appendChild(info);
    var hsec = section('Types by bytes'), hbox = el('div');
    hsec.appendChild(hbox);
    var psec = section('What keeps a type alive'), pbox = el('div');
    message(pbox, 'Click a type in the table above.');
    psec.appendChild(pbox);
    var dsec = section('Largest objects by retained size'), dbox = el('div');
    message(dbox, 'Computing the dominator tree...');
    dsec.appendChild(dbox);
    var gsec = section('By generation'), gbox = el('div');
    gsec.appendChild(gbox);
    var tsec = section('Dominator tree'), tbox = el('div');
    message(tbox, 'Computing the dominator tree...');
    tsec.appendChild(tbox);
    function showObjectPaths(obj) {
      message(pbox, 'Finding the paths to object ' + obj + '...');
      psec.scrollIntoView();
      api('/api/snapshots/' + id + '/paths?max=5&object=' + enc(obj)).then(current(function (r) { drawObjectPaths(pbox, r); }))
        .catch(current(function (e) { message(pbox, e.message, 'error'); }));
    }
    api('/api/snapshots/' + id).then(current(function (s) {
      var sum = s.summary || {};
      info.textContent = '';
      var totals = kv([['Device', link('#/device/' + enc(s.device_id), s.device_id)], ['Created', when(s.created)],
        ['Trigger', triggerOf(s)], ['Objects', fmt(s.objects), 1], ['Bytes', fmt(s.bytes) + ' (' + bytes(s.bytes) + ')', 1],
        ['References', fmt(s.references), 1], ['Roots', fmt(s.roots), 1], ['Types', fmt(s.types), 1],
        ['Unreachable', fmt(s.unreachable) + ' objects, ' + bytes(sum.unreachable_bytes), 1],
        ['Dangling references', fmt(s.dangling_references), 1], ['Sections', fmt(s.sections), 1],
        ['Stored', bytes(s.file_bytes) + ' (wire ' + bytes(s.wire_bytes) + ')', 1]]);
      var roots = el('div');
      roots.appendChild(el('h3', null, 'Roots by kind'));
      var rk = sum.roots_by_kind || {};
      roots.appendChild(kv(Object.keys(rk).map(function (k) { return [k, fmt(rk[k]), 1]; })));
      var rf = sum.roots_by_flag || {};
      roots.appendChild(el('h3', null, 'Roots by flag'));
      roots.appendChild(kv(Object.keys(rf).map(function (k) { return [k, fmt(rf[k]), 1]; })));
      var dl = el('p');
      add(dl, 'Download: ', download('/api/snapshots/' + id + '/download?format=gclog', '.gclog'), ' ',
          download('/api/snapshots/' + id + '/download', '.gclog.zst'));
      var row = el('div', 'row'); add(row, totals, roots);
      add(info, row, dl);
      if (s.status !== 'complete') { message(hbox, 'This snapshot failed: ' + (s.reason || ''), 'error'); return; }
      var gens = api('/api/snapshots/' + id + '/generations?top=0');
      window.gcsnapViews.generations(helpers, gbox, gens);
      typeTable(hbox, id, gens, function (type) {
        message(pbox, 'Finding the paths to ' + type + '...');
        api('/api/snapshots/' + id + '/paths?max=5&type=' + enc(type)).then(current(function (r) { drawPaths(pbox, r); }))
          .catch(current(function (e) { message(pbox, e.message, 'error'); }));
      });
      var stopTop = progress(id, 'dominators', dbox.firstChild, 'Computing the dominator tree...');
      api('/api/snapshots/' + id + '/dominators?top=20').then(current(function (r) {
        stopTop();
        dbox.textContent = '';
        (r.sections || []).forEach(function (sec) {
          dbox.appendChild(el('h3', null, sec.name + ': ' + bytes(sec.reachable_bytes) + ' reachable in ' + fmt(sec.reachable_objects) + ' objects'));
          var g = el('div'); dbox.appendChild(g);
          grid(g, sec.top_objects || [], [
            {key: 'retained', label: 'Retained', num: 1}, {key: 'shallow', label: 'Own size', num: 1},
            {key: 'type', label: 'Type', render: function (td, x) { td.className = 't'; td.textContent = x.type; }},
            {key: 'id', label: 'Object', render: function (td, x) { td.textContent = x.id; }}
          ], {key: 'retained', desc: true, noun: 'objects', noFilter: true});
        });
        (r.sections || []).forEach(function (sec, i) {
          var t = el('div'); tbox.appendChild(t);
          window.gcsnapViews.domTree(helpers, t, id, i, showObjectPaths).catch(current(function (e) { message(t, e.message, 'error'); }));
        });
        if (!(r.sections || []).length) message(tbox, 'No section.');
      })).catch(current(function (e) { stopTop(); message(dbox, e.message, 'error'); message(tbox, e.message, 'error'); }));
    })).catch(current(function (e) { message(info, e.message, 'error'); hsec.remove(); psec.remove(); dsec.remove(); gsec.remove(); tsec.remove(); }));
  }

  /* ---- diff ------------------------------------------------------------- */

  function diffView(a, b) {
    crumbs.textContent = ' / diff ' + a + ' to ' + b;
    var top = section('Snapshot #' + a + ' to #' + b), info = el('div');
    message(info, 'Comparing...');
    top.appendChild(info);
    var tsec = section('Types by growth'), tools = el('div', 'tools'), tbox = el('div');
    add(tsec, tools, tbox);
    api('/api/diff?top=0&old=' + enc(a) + '&new=' + enc(b)).then(current(function (d) {
      info.textContent = '';
      add(info, kv([['Old', link('#/snapshot/' + a, '#' + a + ': ' + fmt(d.old.objects) + ' objects, ' + bytes(d.old.bytes))],
                    ['New', link('#/snapshot/' + b, '#' + b + ': ' + fmt(d.new.objects) + ' objects, ' + bytes(d.new.bytes))],
                    ['Objects change', fmt(d.objects_change, true), 1],
                    ['Bytes change', fmt(d.bytes_change, true) + ' (' + bytes(d.bytes_change) + ')', 1]]));
      var all = d.types || [], table;
      var kinds = {all: 'All changed', grew: 'Grew', 'new': 'New', gone: 'Vanished', shrank: 'Shrank'};
      var counts = {all: all.length, grew: 0, 'new': 0, gone: 0, shrank: 0};
      all.forEach(function (t) {
        if (t.status === 'new') counts['new']++; else if (t.status === 'gone') counts.gone++;
        if (t.bytes_change > 0) counts.grew++; else if (t.bytes_change < 0) counts.shrank++;
      });
      Object.keys(kinds).forEach(function (k) {
        var b = button(kinds[k] + ' (' + counts[k] + ')', function () {
          Array.prototype.forEach.call(tools.children, function (o) { o.classList.toggle('active', o === b); });
          table.setRows(k === 'all' ? all : all.filter(function (t) {
            return k === 'new' || k === 'gone' ? t.status === k : k === 'grew' ? t.bytes_change > 0 : t.bytes_change < 0;
          }));
        });
        if (k === 'all') b.className = 'active';
        tools.appendChild(b);
      });
      table = grid(tbox, all, [
        {key: 'status', label: 'Status', render: function (td, r) {
          if (r.status === 'new' || r.status === 'gone') td.appendChild(el('span', 'badge ' + r.status, r.status === 'gone' ? 'vanished' : 'new'));
        }},
        {key: 'type', label: 'Type', render: function (td, r) { td.className = 't'; td.textContent = r.type; }},
        {key: 'count_before', label: 'Objects before', num: 1}, {key: 'count_after', label: 'Objects after', num: 1},
        {key: 'count_change', label: 'Change', num: 1, signed: 1},
        {key: 'bytes_before', label: 'Bytes before', num: 1}, {key: 'bytes_after', label: 'Bytes after', num: 1},
        {key: 'bytes_change', label: 'Change', num: 1, signed: 1, render: function (td, r) {
          td.className = 'n ' + (r.bytes_change > 0 ? 'up' : r.bytes_change < 0 ? 'down' : '');
          td.textContent = fmt(r.bytes_change, true);
        }}
      ], {key: 'bytes_change', desc: true, tie: 'type', noun: 'types', placeholder: 'Filter by type name',
          test: function (r) { return r.type; }});
    })).catch(current(function (e) { message(info, e.message, 'error'); }));
  }

  /* ---- fleet ------------------------------------------------------------ */

  function fleetView() {
    crumbs.textContent = ' / fleet';
    var box = el('div');
    section('Fleet: which devices are growing').appendChild(box);
    window.gcsnapViews.fleet(helpers, box);
  }

  /* ---- routing ---------------------------------------------------------- */

  function route() {
    generation++;
    timers.forEach(clearInterval);
    timers = [];
    view.textContent = '';
    var parts = location.hash.replace(/^#\/?/, '').split('/').map(function (p) {
      try { return decodeURIComponent(p); } catch (e) { return p; }
    });
    var id = /^[1-9][0-9]*$/;
    if (parts[0] === 'device' && parts.length === 2 && parts[1]) deviceView(parts[1]);
    else if (parts[0] === 'snapshot' && parts.length === 2 && id.test(parts[1])) snapshotView(parts[1]);
    else if (parts[0] === 'diff' && parts.length === 3 && id.test(parts[1]) && id.test(parts[2])) diffView(parts[1], parts[2]);
    else if (parts[0] === 'snapshots' && parts.length === 1) snapshotsView();
    else if (parts[0] === 'devices' && parts.length === 1) devicesView();
    else if (parts[0] === 'fleet' || parts[0] === '') fleetView();
    else { crumbs.textContent = ''; message(section('Not found'), 'No view for ' + location.hash + '.', 'error'); }
  }

  function health() {
    var h = document.getElementById('health');
    api('/api/health').then(function (r) {
      h.textContent = 'collector ' + r.version + ', ' + r.devices_connected + ' device' +
        (r.devices_connected === 1 ? '' : 's') + ' connected, up ' + Math.round(r.uptime_s / 60) + ' min';
    }).catch(function (e) {
      h.textContent = e.status === 401 ? 'the collector needs its API token' : 'collector unreachable: ' + e.message;
    });
  }

  window.addEventListener('hashchange', route);
  route();
  health();
  setInterval(health, 10000);
})();
