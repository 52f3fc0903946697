// pi-rs session export: shows and hides the server-rendered blocks. Selecting a tree row
// (a link to #entry=<id>) shows the root→entry path; filters and search re-lay out the
// tree with the same algorithm as the exporter (src/export/tree.rs, fn layout).
(function () {
  'use strict';

  var rows = [];
  var byId = new Map();
  document.querySelectorAll('#tree .node').forEach(function (el) {
    var flags = ' ' + (el.getAttribute('data-f') || '') + ' ';
    var node = {
      id: el.getAttribute('data-id'),
      parent: el.getAttribute('data-parent'),
      el: el,
      prefix: el.querySelector('.prefix'),
      marker: el.querySelector('.marker'),
      settings: flags.indexOf(' s ') >= 0,
      toolResult: flags.indexOf(' t ') >= 0,
      user: flags.indexOf(' u ') >= 0,
      labeled: flags.indexOf(' l ') >= 0,
      quiet: flags.indexOf(' q ') >= 0,
      section: null,
      text: null
    };
    if (!byId.has(node.id)) {
      rows.push(node);
      byId.set(node.id, node);
    }
  });
  document.querySelectorAll('#messages > .entry').forEach(function (section) {
    var node = byId.get(section.getAttribute('data-id'));
    if (node) node.section = section;
  });

  var leafRow = document.querySelector('#tree .node.leaf');
  var leafId = leafRow ? leafRow.getAttribute('data-id') : null;
  var filterMode = 'default';
  var query = '';
  var selectedId = leafId;
  var status = document.getElementById('tree-status');
  var search = document.getElementById('tree-search');

  function passesFilter(node) {
    switch (filterMode) {
      case 'no-tools': return !node.settings && !node.quiet && !node.toolResult;
      case 'user': return node.user;
      case 'labeled': return node.labeled;
      case 'all': return true;
      default: return !node.settings && !node.quiet;
    }
  }

  function searchText(node) {
    if (node.text === null) {
      var body = node.section ? node.section.textContent : '';
      node.text = (node.el.textContent + ' ' + body).toLowerCase();
    }
    return node.text;
  }

  function matchesSearch(node, words) {
    for (var i = 0; i < words.length; i++) {
      if (searchText(node).indexOf(words[i]) < 0) return false;
    }
    return true;
  }

  function prefixText(displayIndent, connector, isLast, gutters) {
    var connectorLevel = connector ? displayIndent - 1 : -1;
    var out = '';
    for (var level = 0; level < displayIndent; level++) {
      var gutter = null;
      for (var g = 0; g < gutters.length; g++) {
        if (gutters[g][0] === level) { gutter = gutters[g]; break; }
      }
      if (gutter) out += gutter[1] ? '│  ' : '   ';
      else if (level === connectorLevel) out += isLast ? '└─ ' : '├─ ';
      else out += '   ';
    }
    return out;
  }

  // Chains of single children stay flat; the children of a node with several get
  // connectors one level deeper; hidden entries are skipped and their visible
  // descendants hang from the nearest visible ancestor.
  function layout() {
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    var visible = new Set();
    rows.forEach(function (node) {
      var show = node.id === leafId || node.id === selectedId ||
        (passesFilter(node) && matchesSearch(node, words));
      if (show) visible.add(node.id);
    });
    var children = new Map();
    children.set(null, []);
    rows.forEach(function (node) {
      if (!visible.has(node.id)) return;
      var anc = node.parent;
      var steps = 0;
      while (anc !== null && !visible.has(anc) && steps++ < rows.length) {
        var a = byId.get(anc);
        anc = a ? a.parent : null;
      }
      if (anc !== null && !visible.has(anc)) anc = null;
      if (!children.has(anc)) children.set(anc, []);
      children.get(anc).push(node.id);
    });
    var roots = children.get(null);
    var multipleRoots = roots.length > 1;
    var stack = [];
    for (var r = roots.length - 1; r >= 0; r--) {
      stack.push({ id: roots[r], indent: multipleRoots ? 1 : 0, justBranched: multipleRoots,
        showConnector: multipleRoots, isLast: r === roots.length - 1, gutters: [],
        virtualRootChild: multipleRoots });
    }
    var done = new Set();
    while (stack.length) {
      var item = stack.pop();
      if (done.has(item.id)) continue;
      done.add(item.id);
      var displayIndent = multipleRoots ? Math.max(0, item.indent - 1) : item.indent;
      var connector = item.showConnector && !item.virtualRootChild;
      byId.get(item.id).prefix.textContent =
        prefixText(displayIndent, connector, item.isLast, item.gutters);
      var kids = children.get(item.id) || [];
      var branching = kids.length > 1;
      var childIndent = branching || (item.justBranched && item.indent > 0) ? item.indent + 1 : item.indent;
      var childGutters = item.gutters.slice();
      if (connector) childGutters.push([Math.max(0, displayIndent - 1), !item.isLast]);
      for (var k = kids.length - 1; k >= 0; k--) {
        stack.push({ id: kids[k], indent: childIndent, justBranched: branching,
          showConnector: branching, isLast: k === kids.length - 1, gutters: childGutters,
          virtualRootChild: false });
      }
    }
    rows.forEach(function (node) { node.el.hidden = !visible.has(node.id); });
    if (status) status.textContent = visible.size + ' / ' + rows.length + ' entries';
  }

  function select(id, scroll) {
    var node = byId.get(id) || byId.get(leafId);
    if (!node) return;
    selectedId = node.id;
    var path = new Set();
    for (var cur = node; cur && !path.has(cur.id); cur = cur.parent === null ? null : byId.get(cur.parent)) {
      path.add(cur.id);
    }
    rows.forEach(function (row) {
      var onPath = path.has(row.id);
      row.el.classList.toggle('on-path', onPath);
      row.el.classList.toggle('selected', row.id === selectedId);
      row.marker.textContent = onPath ? '•' : ' ';
      if (row.section) {
        row.section.hidden = !onPath;
        row.section.classList.toggle('target', row.id === selectedId && scroll);
      }
    });
    document.body.setAttribute('data-selected', selectedId);
    if (node.el.hidden) layout();
    if (scroll) {
      if (node.section) node.section.scrollIntoView({ block: 'start' });
      node.el.scrollIntoView({ block: 'nearest' });
    }
  }

  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ''));
    return { entry: params.get('entry'), filter: params.get('filter'), q: params.get('q') };
  }

  function setFilter(mode) {
    var found = false;
    document.querySelectorAll('.filter').forEach(function (button) {
      var active = button.getAttribute('data-filter') === mode;
      button.classList.toggle('active', active);
      if (active) found = true;
    });
    if (found) filterMode = mode;
    return found;
  }

  // Wiring
  document.querySelectorAll('.filter').forEach(function (button) {
    button.addEventListener('click', function () {
      setFilter(button.getAttribute('data-filter'));
      layout();
    });
  });
  if (search) {
    search.addEventListener('input', function () {
      query = search.value;
      layout();
    });
  }

  function closeSidebar() { document.body.classList.remove('sidebar-open'); }
  var menu = document.getElementById('menu-button');
  if (menu) menu.addEventListener('click', function () { document.body.classList.add('sidebar-open'); });
  var overlay = document.getElementById('overlay');
  if (overlay) overlay.addEventListener('click', closeSidebar);
  var close = document.getElementById('sidebar-close');
  if (close) close.addEventListener('click', closeSidebar);

  document.getElementById('tree').addEventListener('click', function (event) {
    var row = event.target.closest('.node');
    if (!row) return;
    closeSidebar();
    // Re-clicking the selected row does not change the hash; scroll to it anyway.
    if (row.getAttribute('data-id') === readHash().entry) select(row.getAttribute('data-id'), true);
  });
  window.addEventListener('hashchange', function () {
    var hash = readHash();
    if (hash.entry !== null) select(hash.entry, true);
  });

  var zoom = document.getElementById('zoom');
  var zoomImage = zoom ? zoom.querySelector('img') : null;
  document.addEventListener('click', function (event) {
    var target = event.target;
    if (target.classList && target.classList.contains('expand')) {
      var output = target.previousElementSibling;
      if (!output) return;
      if (!target.hasAttribute('data-label')) target.setAttribute('data-label', target.textContent);
      var expanded = output.classList.toggle('expanded');
      target.textContent = expanded ? 'Show less' : target.getAttribute('data-label');
    } else if (target.classList && target.classList.contains('zoomable') && zoom && zoomImage) {
      zoomImage.src = target.src;
      zoom.hidden = false;
    } else if (zoom && (target === zoom || target === zoomImage)) {
      zoom.hidden = true;
    }
  });
  document.addEventListener('keydown', function (event) {
    if (event.key !== 'Escape') return;
    if (zoom) zoom.hidden = true;
    closeSidebar();
  });

  document.querySelectorAll('time[datetime]').forEach(function (el) {
    var date = new Date(el.getAttribute('datetime'));
    if (isNaN(date.getTime())) return;
    el.title = el.getAttribute('datetime');
    el.textContent = el.hasAttribute('data-date') ? date.toLocaleString() : date.toLocaleTimeString();
  });

  // Initial state: #entry=<id> selects an entry, #filter=<mode> and #q=<words> set the tree view.
  var initial = readHash();
  var relayout = false;
  if (initial.filter !== null && setFilter(initial.filter)) relayout = true;
  if (initial.q !== null) {
    query = initial.q;
    if (search) search.value = query;
    relayout = true;
  }
  if (relayout) layout();
  select(initial.entry !== null && byId.has(initial.entry) ? initial.entry : leafId, initial.entry !== null);
})();
