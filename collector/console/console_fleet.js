/* console_fleet.js - the console's landing page: the fleet overview,
 * loaded before console.js, which calls gcsnapViews.fleet with its helpers.
 *
 * Every device with its latest heap, its growth per hour (the collector's
 * least-squares fit over the last snapshots), a sparkline of them and a
 * flag when its leak suspects are not empty; sorted, filtered and paged
 * by the collector (/api/fleet), so thousands of devices cost one page. */
(function () {
  'use strict';

  var FLEET_PAGE = 50;

  function spark(points) {
    var SVG = document.getElementById('svg-ns').namespaceURI, W = 120, H = 24, s = document.createElementNS(SVG, 'svg');
    s.setAttribute('width', W); s.setAttribute('height', H); s.setAttribute('class', 'spark');
    if (points.length < 2) return s;
    var lo = Infinity, hi = -Infinity;
    points.forEach(function (p) { lo = Math.min(lo, p.bytes); hi = Math.max(hi, p.bytes); });
    var line = document.createElementNS(SVG, 'polyline'), xy = points.map(function (p, i) {
      var y = hi === lo ? H / 2 : 2 + (H - 4) * (1 - (p.bytes - lo) / (hi - lo));
      return (2 + i * (W - 4) / (points.length - 1)).toFixed(1) + ',' + y.toFixed(1);
    });
    line.setAttribute('points', xy.join(' '));
    s.appendChild(line);
    return s;
  }

  function fleet(ui, box) {
    var st = {sort: 'growth', order: 'desc', filter: '', offset: 0, last: 10, seq: 0};
    var tools = ui.el('div', 'tools'), input = ui.el('input'), info = ui.el('span', 'muted');
    input.type = 'search'; input.placeholder = 'Filter by device ID'; input.setAttribute('aria-label', 'Filter by device ID');
    ui.add(tools, input, info);
    var table = ui.el('table', 'grid fleet'), head = table.createTHead().insertRow(), body = table.createTBody();
    var pager = ui.el('div', 'pager'), where = ui.el('span');
    var prev = ui.button('Previous', function () { st.offset = Math.max(0, st.offset - FLEET_PAGE); load(); });
    var next = ui.button('Next', function () { st.offset += FLEET_PAGE; load(); });
    ui.add(pager, prev, where, next);
    var cols = [{key: 'device', label: 'Device'}, {label: 'Leak suspects'}, {key: 'bytes', label: 'Latest heap', num: 1},
                {key: 'growth', label: 'Growth per hour', num: 1}, {label: 'Last snapshots'},
                {key: 'snapshots', label: 'Snapshots', num: 1}, {label: 'Connection'}];
    cols.forEach(function (c) {
      var th = ui.el('th', c.num ? 'n' : '', c.label);
      if (c.key) {
        th.className += ' s'; th.title = 'Sort by ' + c.label; th.setAttribute('data-sort', c.key);
        th.addEventListener('click', function () {
          if (st.sort === c.key) st.order = st.order === 'desc' ? 'asc' : 'desc';
          else { st.sort = c.key; st.order = c.num ? 'desc' : 'asc'; }
          st.offset = 0; load();
        });
      }
      c.th = th; head.appendChild(th);
    });
    function row(d) {
      var tr = body.insertRow(), td = tr.insertCell();
      tr.setAttribute('data-device', d.device_id);
      tr.setAttribute('data-growth', d.growth_bytes_per_hour === null ? '' : String(d.growth_bytes_per_hour));
      td.appendChild(ui.link('#/device/' + encodeURIComponent(d.device_id), d.device_id));
      td = tr.insertCell();
      if (d.suspect) {
        var b = ui.el('span', 'badge new suspect', d.suspects.length + ' suspect type' + (d.suspects.length === 1 ? '' : 's'));
        b.title = d.suspects.join('\n'); td.appendChild(b);
      }
      td = tr.insertCell(); td.className = 'n'; td.textContent = d.latest_bytes === null ? '' : ui.bytes(d.latest_bytes);
      td = tr.insertCell(); td.className = 'n ' + (d.growth_bytes_per_hour > 0 ? 'up' : '');
      td.textContent = d.growth_bytes_per_hour === null ? 'n/a' : ui.bytes(Math.round(d.growth_bytes_per_hour)) + '/h';
      tr.insertCell().appendChild(spark(d.series || []));
      td = tr.insertCell(); td.className = 'n'; td.textContent = ui.fmt(d.snapshots);
      td = tr.insertCell(); td.appendChild(ui.el('span', 'badge ' + (d.connected ? 'on' : 'off'), d.connected ? 'connected' : 'offline'));
    }
    function load() {
      var seq = ++st.seq;
      var q = '/api/fleet?last=' + st.last + '&offset=' + st.offset + '&limit=' + FLEET_PAGE + '&sort=' + st.sort +
              '&order=' + st.order + (st.filter ? '&filter=' + encodeURIComponent(st.filter) : '');
      info.textContent = ' loading...';
      return ui.api(q).then(function (r) {
        if (seq !== st.seq) return;
        body.textContent = '';
        r.rows.forEach(row);
        cols.forEach(function (c) {
          c.th.classList.toggle('sorted', c.key === st.sort);
          c.th.classList.toggle('asc', c.key === st.sort && st.order === 'asc');
        });
        var end = r.offset + r.rows.length;
        info.textContent = ' ' + ui.fmt(r.matched) + ' of ' + ui.fmt(r.devices) + ' devices; growth fitted over the last ' +
          r.last + ' snapshots of each';
        where.textContent = r.matched ? 'rows ' + (r.offset + 1) + '-' + end + ' of ' + ui.fmt(r.matched) : 'no rows';
        prev.disabled = r.offset === 0; next.disabled = end >= r.matched;
        table.setAttribute('data-state', 'ready');
      }).catch(function (e) { info.textContent = ' ' + e.message; info.className = 'error'; });
    }
    var timer;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { st.filter = input.value; st.offset = 0; load(); }, 150);
    });
    ui.add(box, tools, table, pager);
    return load();
  }

  window.gcsnapViews = window.gcsnapViews || {};
  window.gcsnapViews.fleet = fleet;
})();
