// The acp-normalize session viewer. It reads the capture data the page
// embeds (script elements of type application/json: acpn-rows-N, the
// replay's steps; acpn-meta-N, the header and the subagent tree) and draws
// them. Everything taken from a capture reaches the page as text
// (textContent, title): frame content is never parsed as HTML. Rows are
// virtualized: only those in view (and a few around) are in the DOM.
(function () {
  'use strict';

  var ROW_H = 24;
  var OVERSCAN = 10;
  var OPS = {
    replace: ['~', 'replaced'],
    drop: ['\u2717', 'dropped'],
    reply: ['\u21a9', 'answered'],
    emit: ['+', 'emitted'],
    request: ['\u21c4', 'requested']
  };
  // Runes that would steer how text is shown (controls, bidi overrides,
  // zero-width and line separators): shown as visible escapes.
  var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

  var state = {
    cap: -1, captures: 0, rows: [], meta: null, view: new Int32Array(0), sel: -1,
    f: { dir: '', method: '', kind: '', session: '', changed: false, q: '', node: -1 },
    hay: null, pool: [], kids: [], frameFilter: null, rendered: 0
  };

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  // appendText appends text to parent with invisible runes made visible.
  function appendText(parent, text) {
    INVISIBLE.lastIndex = 0;
    var last = 0, m;
    while ((m = INVISIBLE.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      var code = m[0].charCodeAt(0).toString(16);
      parent.appendChild(el('span', 'esc', '\\u' + ('0000' + code).slice(-4)));
      last = m.index + 1;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(last ? text.slice(last) : text));
  }

  function fmtTime(t) {
    if (t === undefined || t === null) return '';
    return '+' + (t / 1000).toFixed(3) + 's';
  }

  function fmtDur(ms) {
    if (ms === undefined || ms === null) return '';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    var m = Math.floor(ms / 60000);
    return m + ' min ' + Math.round((ms - m * 60000) / 1000) + ' s';
  }

  function short(id) {
    if (!id) return '';
    return id.length > 14 ? id.slice(0, 12) + '\u2026' : id;
  }

  // prettyJSON indents JSON text without parsing it into values: every
  // token keeps its spelling (number forms, escapes, key order,
  // duplicate keys). Text that is not JSON comes back as it is.
  function prettyJSON(s) {
    var c0 = s.replace(/^\s+/, '').charAt(0);
    if (c0 !== '{' && c0 !== '[') return s;
    var out = [], ind = 0, i = 0, n = s.length;
    function nl() { out.push('\n'); for (var k = 0; k < ind; k++) out.push('  '); }
    while (i < n) {
      var c = s.charAt(i);
      if (c === '"') {
        var j = i + 1;
        while (j < n) {
          var d = s.charAt(j);
          if (d === '\\') { j += 2; continue; }
          if (d === '"') break;
          j++;
        }
        out.push(s.slice(i, j + 1));
        i = j + 1;
        continue;
      }
      if (c === '{' || c === '[') {
        var k2 = i + 1;
        while (k2 < n && /\s/.test(s.charAt(k2))) k2++;
        var close = c === '{' ? '}' : ']';
        if (s.charAt(k2) === close) { out.push(c + close); i = k2 + 1; continue; }
        out.push(c); ind++; nl(); i++; continue;
      }
      if (c === '}' || c === ']') { ind = Math.max(0, ind - 1); nl(); out.push(c); i++; continue; }
      if (c === ',') { out.push(','); nl(); i++; continue; }
      if (c === ':') { out.push(': '); i++; continue; }
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue; }
      var st = i;
      while (i < n && !/[\s,:{}\[\]"]/.test(s.charAt(i))) i++;
      if (i === st) i++;
      out.push(s.slice(st, i));
    }
    return out.join('');
  }

  // lineDiff returns [op, line] pairs (' ', '-', '+') of a line diff of a
  // and b (longest common subsequence), or null when too large.
  function lineDiff(a, b) {
    var n = a.length, m = b.length;
    if (n * m > 4e6) return null;
    var w = m + 1, L = new Uint32Array((n + 1) * w);
    for (var i = n - 1; i >= 0; i--) {
      for (var j = m - 1; j >= 0; j--) {
        L[i * w + j] = a[i] === b[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
      }
    }
    var out = [], x = 0, y = 0;
    while (x < n && y < m) {
      if (a[x] === b[y]) { out.push([' ', a[x]]); x++; y++; } else if (L[(x + 1) * w + y] >= L[x * w + y + 1]) { out.push(['-', a[x]]); x++; } else { out.push(['+', b[y]]); y++; }
    }
    while (x < n) out.push(['-', a[x++]]);
    while (y < m) out.push(['+', b[y++]]);
    return out;
  }

  function readJSON(id) {
    var s = $(id);
    return s ? JSON.parse(s.textContent) : null;
  }

  function fail(err) {
    var f = $('failure');
    f.hidden = false;
    f.textContent = 'The viewer could not show this capture: ' + err;
    console.error('acp-normalize viewer:', err);
  }

  // ---- loading a capture ----

  function load(i) {
    state.cap = i;
    state.rows = readJSON('acpn-rows-' + i) || [];
    state.meta = readJSON('acpn-meta-' + i) || { header: { counts: {} }, tree: [] };
    state.hay = null;
    state.sel = -1;
    state.f = { dir: '', method: '', kind: '', session: '', changed: false, q: '', node: -1 };
    $('f-dir').value = '';
    $('f-changed').checked = false;
    $('f-q').value = '';
    var tree = state.meta.tree;
    state.kids = tree.map(function () { return []; });
    tree.forEach(function (n) { if (n.p >= 0 && n.p < tree.length) state.kids[n.p].push(n.id); });
    renderHeader();
    fillOptions();
    renderTree();
    closeDetail();
    setNode(-1, false);
  }

  function fact(box, name, value) {
    if (value === undefined || value === null || value === '') return;
    var f = box.appendChild(el('span', 'fact'));
    f.appendChild(el('span', 'k', name + ' '));
    appendText(f, String(value));
  }

  function renderHeader() {
    var h = state.meta.header, c = h.counts || {}, dl = $('facts');
    clear(dl);
    document.title = h.name + ' \u2014 acp-normalize';
    fact(dl, 'capture', h.name);
    fact(dl, 'client', [h.client, h.clientVersion].filter(Boolean).join(' ') || '(not named)');
    fact(dl, 'agent', [h.agent, h.agentVersion].filter(Boolean).join(' ') || '(not named)');
    fact(dl, 'protocol', h.protocol);
    fact(dl, 'modules', h.modules && h.modules.length ? h.modules.join(', ') : 'none');
    if (h.proxyVersion) fact(dl, 'acp-normalize', h.proxyVersion);
    fact(dl, 'subagent sessions', h.subagents ? 'client opted in' : 'client did not opt in');
    if (h.recorded) {
      var r = h.recorded;
      fact(dl, 'recorded by', 'acp-normalize ' + (r.version || '?') + (r.modules ? ', modules ' + r.modules.join(',') : ''));
      if (r.agent) fact(dl, 'agent command', r.agent.join(' '));
    }
    fact(dl, 'duration', h.durationMs !== undefined ? fmtDur(h.durationMs) : 'no timestamps');
    if (h.start) fact(dl, 'started', h.start);
    fact(dl, 'frames', c.frames + ' (' + c.fromClient + ' from the client, ' + c.fromAgent + ' from the agent' + (c.nonJSON ? ', ' + c.nonJSON + ' not JSON' : '') + ')');
    fact(dl, 'changed', c.changed + ' (' + c.replaced + ' replaced, ' + c.dropped + ' dropped, ' + c.replied + ' answered, ' + c.emitted + ' emitted, ' + c.requested + ' requested)');
    if (c.stderr) fact(dl, 'agent stderr', c.stderr + ' lines');
    fact(dl, 'ends', h.ending === 'exit' ? 'agent exited' + (h.exitCode !== undefined ? ' with code ' + h.exitCode : '') :
      h.ending === 'cut' ? 'cut off (no exit record: the proxy was killed?)' : 'end of frames (no exit record)');
    $('lane-client').textContent = 'client' + (h.client ? ' \u00b7 ' + h.client : '');
    $('lane-agent').textContent = 'agent' + (h.agent ? ' \u00b7 ' + h.agent : '');
  }

  function options(sel, label, values) {
    clear(sel);
    var all = el('option', null, 'all');
    all.value = '';
    sel.appendChild(all);
    values.forEach(function (v) {
      var o = el('option', null, v[1]);
      o.value = v[0];
      sel.appendChild(o);
    });
    sel.value = '';
    sel.disabled = values.length === 0;
    sel.title = label;
  }

  function tally(key) {
    var counts = new Map();
    state.rows.forEach(function (r) { var v = r[key]; if (v) counts.set(v, (counts.get(v) || 0) + 1); });
    return Array.from(counts.entries()).sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });
  }

  function fillOptions() {
    options($('f-method'), 'method (a response counts as its request\'s method)', tally('m').map(function (e) { return [e[0], e[0] + '  (' + e[1] + ')']; }));
    options($('f-kind'), 'sessionUpdate kind', tally('u').map(function (e) { return [e[0], e[0] + '  (' + e[1] + ')']; }));
    var kinds = {};
    state.meta.tree.forEach(function (n) { if (n.k !== 'launch') kinds[n.s] = n.k; });
    options($('f-session'), 'session', tally('s').map(function (e) {
      return [e[0], (kinds[e[0]] === 'child' ? 'child ' : '') + short(e[0]) + '  (' + e[1] + ')'];
    }));
  }

  // ---- filtering ----

  function haystack() {
    if (state.hay) return state.hay;
    state.hay = state.rows.map(function (r) {
      var parts = [r.h, r.x || '', r.i || r.ix || ''];
      (r.o || []).forEach(function (o) {
        parts.push(o.h || '', o.x || '', o.f || o.fx || '');
        (o.fc || []).forEach(function (f) { parts.push(f); });
      });
      return parts.join('\n').toLowerCase();
    });
    return state.hay;
  }

  function subtree(id) {
    var set = new Uint8Array(state.meta.tree.length), stack = [id];
    while (stack.length) {
      var n = stack.pop();
      if (set[n]) continue;
      set[n] = 1;
      Array.prototype.push.apply(stack, state.kids[n]);
    }
    return set;
  }

  function applyFilter() {
    var f = state.f, rows = state.rows, out = new Int32Array(rows.length), n = 0;
    var q = f.q.trim().toLowerCase(), hay = q ? haystack() : null;
    var sub = f.node >= 0 ? subtree(f.node) : null;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (f.dir) {
        if (f.dir === 'client' || f.dir === 'agent') {
          if (r.k !== 'frame' || r.d !== f.dir) continue;
        } else if (f.dir === 'stderr') {
          if (r.k !== 'stderr') continue;
        } else if (r.k !== 'event' && r.k !== 'end') continue;
      }
      if (f.method && r.m !== f.method) continue;
      if (f.kind && r.u !== f.kind) continue;
      if (f.session && r.s !== f.session) continue;
      if (f.changed && !r.c) continue;
      if (sub && !(r.n && sub[r.n - 1])) continue;
      if (q && hay[i].indexOf(q) < 0) continue;
      out[n++] = i;
    }
    state.view = out.subarray(0, n);
    var frames = 0;
    for (var k = 0; k < n; k++) if (rows[state.view[k]].k === 'frame') frames++;
    state.shownFrames = frames;
    $('count').textContent = n + ' of ' + rows.length + ' rows';
    $('spacer').style.height = (n * ROW_H) + 'px';
    render();
  }

  // ---- the virtual list ----

  function makeRow() {
    var d = el('div', 'row');
    d.t = d.appendChild(el('span', 'time'));
    d.l = d.appendChild(el('span', 'line'));
    d.c = d.appendChild(el('span', 'lane client'));
    d.p = d.appendChild(el('span', 'lane proxy'));
    d.a = d.appendChild(el('span', 'lane agent'));
    d.addEventListener('click', function () { if (d.pos >= 0) select(d.pos, false); });
    return d;
  }

  function summary(parent, r) {
    var b = el('b', r.e ? 'err' : null);
    appendText(b, r.h);
    parent.appendChild(b);
    if (r.x) {
      parent.appendChild(document.createTextNode('  '));
      appendText(parent, r.x);
    }
  }

  // badges marks what the proxy did; several marks in a row are shown by
  // their symbols (the words are in the tooltip and the detail).
  function badges(parent, r) {
    var outs = r.o || [];
    outs.forEach(function (o) {
      var op = OPS[o.op] || ['?', o.op];
      var b = parent.appendChild(el('span', 'badge op-' + o.op, outs.length > 1 ? op[0] : op[0] + ' ' + op[1]));
      b.title = op[1] + (o.op === 'drop' ? ': never reaches the ' + o.to : ' \u2192 ' + o.to);
    });
  }

  function fill(d, pos) {
    var r = state.rows[state.view[pos]];
    d.pos = pos;
    d.className = 'row k-' + r.k + (r.d ? ' d-' + r.d : '') + (r.c ? ' changed' : '') + (pos === state.sel ? ' sel' : '');
    d.style.top = (pos * ROW_H) + 'px';
    d.t.textContent = fmtTime(r.t);
    d.l.textContent = r.l ? String(r.l) : '';
    clear(d.c); clear(d.p); clear(d.a);
    d.c.title = d.p.title = d.a.title = '';
    var tip = r.h + (r.x ? '  ' + r.x : '');
    if (r.k === 'frame') {
      var lane = r.d === 'client' ? d.c : d.a;
      summary(lane, r);
      lane.title = tip;
      if (r.o && r.o.length) badges(d.p, r);
      else d.p.appendChild(el('span', 'pass', r.d === 'client' ? '\u2192' : '\u2190'));
      d.p.title = r.o ? r.o.map(function (o) { return (OPS[o.op] || [0, o.op])[1] + ' \u2192 ' + o.to; }).join(', ') : 'forwarded as it was';
    } else if (r.k === 'stderr') {
      d.a.appendChild(el('span', 'dim', 'stderr  '));
      appendText(d.a, r.h);
      d.a.title = r.h;
    } else {
      appendText(d.p, r.h);
      badges(d.p, r);
      d.p.title = tip;
    }
  }

  function render() {
    var list = $('list'), view = state.view;
    var top = list.scrollTop, h = list.clientHeight || 600;
    var first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    var last = Math.min(view.length, Math.ceil((top + h) / ROW_H) + OVERSCAN);
    var need = Math.max(0, last - first), spacer = $('spacer');
    while (state.pool.length < need) {
      var d = makeRow();
      state.pool.push(d);
      spacer.appendChild(d);
    }
    for (var k = 0; k < state.pool.length; k++) {
      var row = state.pool[k];
      if (k < need) {
        fill(row, first + k);
        row.hidden = false;
      } else {
        row.hidden = true;
        row.pos = -1;
      }
    }
    state.rendered = need;
  }

  var pending = false;
  function scheduleRender() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  }

  function scrollToPos(pos) {
    var list = $('list'), top = pos * ROW_H;
    if (top < list.scrollTop || top + ROW_H > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 3);
    }
    render();
  }

  // ---- the frame's detail ----

  function closeDetail() {
    $('detail').hidden = true;
    state.sel = -1;
  }

  function select(pos, scroll) {
    if (pos < 0 || pos >= state.view.length) return;
    state.sel = pos;
    showDetail(state.rows[state.view[pos]]);
    if (scroll) scrollToPos(pos); else render();
  }

  function selectRow(rowIndex) {
    for (var k = 0; k < state.view.length; k++) {
      if (state.view[k] === rowIndex) { select(k, true); return true; }
    }
    return false;
  }

  // framePanel shows one frame: pretty JSON, the wire bytes a click away.
  function framePanel(parent, title, text, escaped, diffWith) {
    var box = el('div', 'frame');
    var bar = box.appendChild(el('div', 'tabs'));
    bar.appendChild(el('span', 'ftitle', title));
    var pre = el('pre', 'code');
    var raw = escaped || text || '';
    var modes = [['JSON', function () { return prettyJSON(raw); }], ['wire bytes', function () { return raw; }]];
    if (diffWith !== undefined) modes.push(['diff', null]);
    var buttons = [];
    function show(k) {
      buttons.forEach(function (b, j) { b.classList.toggle('on', j === k); });
      clear(pre);
      if (modes[k][1]) {
        appendText(pre, modes[k][1]());
        pre.classList.toggle('wire', k === 1);
        return;
      }
      var d = lineDiff(prettyJSON(diffWith).split('\n'), prettyJSON(raw).split('\n'));
      if (!d) { pre.textContent = 'Too large to diff here: see the field changes above.'; return; }
      var ctx = 3;
      d.forEach(function (e, i) {
        var near = false;
        for (var j = Math.max(0, i - ctx); j <= Math.min(d.length - 1, i + ctx); j++) if (d[j][0] !== ' ') near = true;
        if (!near) {
          if (i > 0 && pre.lastChild && pre.lastChild.className === 'gap') return;
          pre.appendChild(el('span', 'gap', '\u2026\n'));
          return;
        }
        var line = el('span', e[0] === '+' ? 'add' : e[0] === '-' ? 'del' : null);
        appendText(line, e[0] + ' ' + e[1] + '\n');
        pre.appendChild(line);
      });
    }
    modes.forEach(function (m, k) {
      var b = el('button', null, m[0]);
      b.type = 'button';
      b.addEventListener('click', function () { show(k); });
      bar.appendChild(b);
      buttons.push(b);
    });
    box.appendChild(pre);
    parent.appendChild(box);
    show(diffWith !== undefined ? 2 : 0);
  }

  function showDetail(r) {
    var body = $('detail-body'), title = $('detail-title');
    $('detail').hidden = false;
    clear(body);
    var dir = r.k === 'frame' ? (r.d === 'client' ? 'client \u2192 agent' : 'agent \u2192 client') : r.k === 'stderr' ? 'agent stderr' : 'event';
    title.textContent = (r.l ? 'line ' + r.l + ' \u00b7 ' : '') + dir + (r.t !== undefined ? ' \u00b7 ' + fmtTime(r.t) : '');
    var head = body.appendChild(el('p', 'dhead'));
    summary(head, r);
    var facts = [];
    if (r.m) facts.push('method ' + r.m);
    if (r.u) facts.push('update ' + r.u);
    if (r.s) facts.push('session ' + r.s);
    if (r.n) {
      var node = state.meta.tree[r.n - 1];
      facts.push('in ' + nodeName(node));
    }
    if (facts.length) appendText(body.appendChild(el('p', 'dim')), facts.join(' \u00b7 '));
    if (r.o && r.o.length) {
      body.appendChild(el('h3', null, 'What acp-normalize did'));
      r.o.forEach(function (o) {
        var op = OPS[o.op] || ['?', o.op];
        var p = body.appendChild(el('p', 'did'));
        p.appendChild(el('span', 'badge op-' + o.op, op[0] + ' ' + op[1]));
        p.appendChild(document.createTextNode(o.op === 'drop' ? ' never reaches the ' + o.to : ' \u2192 ' + o.to));
        if (o.h) {
          p.appendChild(document.createTextNode(': '));
          summary(p, { h: o.h, x: o.x });
        }
        if (o.fc && o.fc.length) {
          var ul = body.appendChild(el('ul', 'fields'));
          o.fc.forEach(function (f) {
            var li = el('li', f.charAt(0) === '+' ? 'add' : f.charAt(0) === '-' ? 'del' : 'chg');
            appendText(li, f);
            ul.appendChild(li);
          });
        } else if (o.op === 'replace') {
          body.appendChild(el('p', 'dim', '(the same JSON value in other bytes)'));
        }
        if (o.f || o.fx) framePanel(body, 'written \u2192 ' + o.to, o.f, o.fx, o.op === 'replace' ? (r.i || r.ix || '') : undefined);
      });
    } else if (r.k === 'frame') {
      body.appendChild(el('p', 'dim', 'Forwarded byte for byte.'));
    }
    if (r.k === 'frame') {
      body.appendChild(el('h3', null, r.nj ? 'The line as read (not JSON)' : 'The frame as read'));
      framePanel(body, r.d === 'client' ? 'from the client' : 'from the agent', r.i, r.ix);
    } else if (r.k === 'stderr') {
      var pre = body.appendChild(el('pre', 'code wire'));
      appendText(pre, r.h);
    }
  }

  // ---- the subagent tree ----

  function nodeName(n) {
    if (!n) return '';
    if (n.k === 'session') return 'session ' + short(n.s);
    if (n.k === 'child') return 'child session ' + (n.title || short(n.s));
    return 'subagent ' + (n.desc || n.title || short(n.tc));
  }

  function renderTree() {
    var box = $('tree'), tree = state.meta.tree;
    clear(box);
    if (!tree.length) {
      box.appendChild(el('p', 'dim', 'No session in this capture.'));
      return;
    }
    var launches = tree.filter(function (n) { return n.k === 'launch'; }).length;
    var children = tree.filter(function (n) { return n.k === 'child'; }).length;
    box.appendChild(el('p', 'dim', launches + ' launch call' + (launches === 1 ? '' : 's') + ', ' + children + ' child session' + (children === 1 ? '' : 's')));
    tree.forEach(function (n) { if (n.p < 0) box.appendChild(treeNode(n)); });
  }

  function treeNode(n) {
    var d = el('div', 'tnode');
    d.dataset.kind = n.k;
    d.dataset.id = String(n.id);
    var line = d.appendChild(el('button', 'tline'));
    line.type = 'button';
    line.appendChild(el('span', 'ticon', n.k === 'session' ? '\u25c9' : n.k === 'launch' ? '\u2937' : '\u25ce'));
    var label = line.appendChild(el('span', 'tlabel'));
    if (n.k === 'session') {
      appendText(label, 'session ' + short(n.s));
    } else if (n.k === 'launch') {
      appendText(label, n.desc || n.title || n.tc);
    } else {
      appendText(label, (n.draft ? 'draft child ' : 'child ') + (n.title || short(n.s)));
    }
    if (n.status) line.appendChild(el('span', 'status s-' + n.status.split(' ')[0], n.status));
    var sub = [];
    if (n.k === 'launch') {
      if (n.vendor) sub.push(n.vendor);
      if (n.type) sub.push(n.type);
      if (n.bg) sub.push('background');
      if (n.child) sub.push('child ' + short(n.child));
    }
    if (n.k === 'child' && n.desc) sub.push(n.desc);
    if (n.model) sub.push('model ' + n.model);
    if (n.dur !== undefined) sub.push(fmtDur(n.dur) + (n.measured ? ' (agent\'s)' : n.status === 'launched' ? ' to launch' : n.open ? ' so far' : ''));
    sub.push(n.nf + ' frame' + (n.nf === 1 ? '' : 's'));
    appendText(d.appendChild(el('div', 'tsub')), sub.join(' \u00b7 '));
    line.title = n.k === 'launch' ? 'tool call ' + n.tc + ' on session ' + n.s : 'session ' + n.s;
    line.addEventListener('click', function () { setNode(n.id, true); });
    if (n.st && n.st.length > 1 || n.st && n.st.length === 1 && n.k !== 'session') {
      var st = d.appendChild(el('div', 'tstates'));
      n.st.forEach(function (s, i) {
        if (i) st.appendChild(document.createTextNode(' \u2192 '));
        var b = st.appendChild(el('button', 'tstate', s.v + (s.t !== undefined ? ' ' + fmtTime(s.t) : '')));
        b.type = 'button';
        b.title = 'go to line ' + (state.rows[s.r] ? state.rows[s.r].l : '?');
        b.addEventListener('click', function () { setNode(n.id, false); selectRow(s.r); });
      });
    }
    var kids = state.kids[n.id];
    if (kids.length) {
      var k = d.appendChild(el('div', 'tkids'));
      kids.forEach(function (id) { k.appendChild(treeNode(state.meta.tree[id])); });
    }
    return d;
  }

  function setNode(id, jump) {
    state.f.node = id;
    var chip = $('node-chip');
    chip.hidden = id < 0;
    document.querySelectorAll('.tnode.on').forEach(function (e) { e.classList.remove('on'); });
    if (id >= 0) {
      var n = state.meta.tree[id];
      $('node-label').textContent = nodeName(n);
      var e = document.querySelector('.tnode[data-id="' + id + '"]');
      if (e) e.classList.add('on');
    }
    state.sel = -1;
    applyFilter();
    if (jump && id >= 0 && state.view.length) select(0, true);
  }

  // ---- wiring ----

  function debounce(fn, ms) {
    var t = 0;
    return function () { clearTimeout(t); t = setTimeout(fn, ms); };
  }

  function wire() {
    function onFilter() {
      state.f.dir = $('f-dir').value;
      state.f.method = $('f-method').value;
      state.f.kind = $('f-kind').value;
      state.f.session = $('f-session').value;
      state.f.changed = $('f-changed').checked;
      state.sel = -1;
      $('detail').hidden = true;
      applyFilter();
    }
    ['f-dir', 'f-method', 'f-kind', 'f-session', 'f-changed'].forEach(function (id) { $(id).addEventListener('change', onFilter); });
    var search = debounce(function () { state.f.q = $('f-q').value; state.sel = -1; applyFilter(); }, 120);
    $('f-q').addEventListener('input', search);
    $('f-q').addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { state.f.q = $('f-q').value; applyFilter(); if (state.view.length) select(0, true); }
    });
    $('node-clear').addEventListener('click', function () { setNode(-1, false); });
    $('detail-close').addEventListener('click', function () { closeDetail(); render(); });
    $('list').addEventListener('scroll', scheduleRender, { passive: true });
    window.addEventListener('resize', scheduleRender);
    $('capture').addEventListener('change', function () { load(Number($('capture').value)); });
    document.addEventListener('keydown', function (e) {
      var typing = e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT');
      if (e.key === '/' && !typing) { e.preventDefault(); $('f-q').focus(); return; }
      if (e.key === 'Escape') { closeDetail(); render(); return; }
      if (typing) return;
      if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); select(Math.min(state.view.length - 1, state.sel + 1), true); }
      if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); select(Math.max(0, state.sel - 1), true); }
    });
  }

  // The page's own numbers, for people and for the browser tests.
  window.acpnViewer = {
    stats: function () {
      var tree = state.meta ? state.meta.tree : [];
      return {
        captures: state.captures,
        capture: state.cap,
        rows: state.rows.length,
        frames: state.rows.filter(function (r) { return r.k === 'frame'; }).length,
        shown: state.view.length,
        shownFrames: state.shownFrames || 0,
        // Rows the page really shows (laid out), not merely in the DOM.
        rendered: Array.prototype.filter.call(document.querySelectorAll('#spacer .row'), function (e) { return e.getClientRects().length > 0; }).length,
        count: $('count').textContent,
        nodes: document.querySelectorAll('#tree .tnode').length,
        launches: document.querySelectorAll('#tree .tnode[data-kind="launch"]').length,
        children: document.querySelectorAll('#tree .tnode[data-kind="child"]').length,
        sessions: document.querySelectorAll('#tree .tnode[data-kind="session"]').length,
        treeModel: tree.length,
        firstShownLine: state.view.length ? state.rows[state.view[0]].l : -1,
        selected: state.sel,
        detail: !$('detail').hidden
      };
    },
    scrollToEnd: function () { var l = $('list'); l.scrollTop = l.scrollHeight; render(); }
  };

  function boot() {
    try {
      wire();
      var n = 0;
      while ($('acpn-rows-' + n)) n++;
      state.captures = n;
      if (n === 0) {
        fail('the page holds no capture');
        document.body.dataset.ready = '1';
        return;
      }
      var sel = $('capture');
      if (n > 1) {
        for (var i = 0; i < n; i++) {
          var m = readJSON('acpn-meta-' + i);
          var o = el('option', null, (i + 1) + ': ' + (m && m.header ? m.header.name : ''));
          o.value = String(i);
          sel.appendChild(o);
        }
        sel.hidden = false;
      }
      load(0);
    } catch (err) {
      fail(err && err.message ? err.message : String(err));
    }
    document.body.dataset.ready = '1';
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
