/* console_tree.js - the console's dominator tree browser, loaded before
 * console.js, which calls gcsnapViews.domTree with its helpers.
 *
 * The tree starts at the virtual root's children (what each strong root
 * keeps alive on its own); a row opens to its dominated children, largest
 * retained first, TREE_PAGE at a time from
 * /api/snapshots/ID/dominators?parent=OBJ, so a heap of millions of
 * objects puts only the rows opened into the page. Names from the wire go
 * in as text. */
(function () {
  'use strict';

  var TREE_PAGE = 25;

  function domTree(ui, box, id, section, onPaths) {
    var table = ui.el('table', 'grid domtree'), head = table.createTHead().insertRow(), body = table.createTBody();
    var info = ui.el('p', 'muted');
    ['', 'Retained', 'Share %', 'Own size', 'Type', 'Object', ''].forEach(function (x, i) {
      head.appendChild(ui.el('th', i >= 1 && i <= 3 ? 'n' : '', x));
    });

    function pageUrl(parent, offset) {
      return '/api/snapshots/' + id + '/dominators?section=' + section + '&parent=' + encodeURIComponent(parent) +
             '&offset=' + offset + '&limit=' + TREE_PAGE;
    }
    /* The rows under tr (deeper than it, up to the next of its depth). */
    function below(tr) {
      var out = [], depth = +tr.getAttribute('data-depth'), n = tr.nextSibling;
      while (n && +n.getAttribute('data-depth') > depth) { out.push(n); n = n.nextSibling; }
      return out;
    }
    function nodeRow(x, depth, parentId) {
      var tr = ui.el('tr'), td = tr.insertCell(), toggle = null;
      tr.setAttribute('data-id', x.id); tr.setAttribute('data-depth', String(depth));
      tr.setAttribute('data-parent', parentId); tr.setAttribute('data-retained', String(x.retained));
      tr.setAttribute('data-children', String(x.children));
      td.style.paddingLeft = (4 + depth * 16) + 'px';
      if (x.children > 0) {
        toggle = ui.button('\u25B8', function () { flip(tr, toggle); });
        toggle.className = 'expand'; toggle.title = 'Show the ' + ui.fmt(x.children) + ' objects it dominates';
        td.appendChild(toggle);
      }
      [ui.fmt(x.retained), x.percent.toFixed(2), ui.fmt(x.shallow)].forEach(function (v) {
        var c = tr.insertCell(); c.className = 'n'; c.textContent = v;
      });
      td = tr.insertCell(); td.className = 't'; td.textContent = x.type;
      tr.insertCell().textContent = x.id;
      tr.insertCell().appendChild(ui.button('Paths', function () { onPaths(x.id); })).className = 'paths';
      return tr;
    }
    /* Rows for one page of parent's children, put before `before` (null: at the end). */
    function page(parentId, depth, offset, before) {
      return ui.api(pageUrl(parentId, offset)).then(function (r) {
        var frag = document.createDocumentFragment();
        r.children.forEach(function (x) { frag.appendChild(nodeRow(x, depth, parentId)); });
        var left = r.node.children - offset - r.children.length;
        if (left > 0) {
          var tr = ui.el('tr', 'more'), td = tr.insertCell();
          tr.setAttribute('data-depth', String(depth));
          td.colSpan = 7; td.style.paddingLeft = (4 + depth * 16) + 'px';
          td.appendChild(ui.button('Show ' + Math.min(left, TREE_PAGE) + ' more of ' + ui.fmt(left), function () {
            var next = tr.nextSibling;
            tr.remove();
            page(parentId, depth, offset + TREE_PAGE, next);
          }));
          frag.appendChild(tr);
        }
        body.insertBefore(frag, before);
        return r;
      });
    }
    function flip(tr, toggle) {
      var open = tr.classList.toggle('open');
      toggle.textContent = open ? '\u25BE' : '\u25B8';
      if (!open) { below(tr).forEach(function (n) { n.remove(); }); return; }
      toggle.disabled = true;
      page(tr.getAttribute('data-id'), +tr.getAttribute('data-depth') + 1, 0, tr.nextSibling)
        .then(function () { toggle.disabled = false; })
        .catch(function (e) { toggle.disabled = false; info.textContent = e.message; info.className = 'error'; });
    }

    /* The first request of a snapshot computes its tree (seconds for
     * millions of objects): how much of the file is read, and the time so
     * far, show it is under way. */
    ui.add(box, info, table);
    var stop = ui.progress(id, 'domtree', info, 'Computing the dominator tree...');
    return page('root', 0, 0, null).then(function (r) {
      stop();
      info.textContent = r.name + ': ' + ui.bytes(r.reachable_bytes) + ' reachable in ' + ui.fmt(r.reachable_objects) +
        ' objects; ' + ui.fmt(r.node.children) + ' held by no single object. Open a row for what it dominates.';
      table.setAttribute('data-state', 'ready');
      return r;
    }, function (e) { stop(); throw e; });
  }

  window.gcsnapViews = window.gcsnapViews || {};
  window.gcsnapViews.domTree = domTree;
})();
