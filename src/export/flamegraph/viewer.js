/*
 * sfprof flame graph viewer.
 *
 * The data: per function names[f], dsos[fdso[f]], fkind[f] (0 user,
 * 1 kernel, 2 the subtree of one event when the file has several) in the
 * <script id="sfp-data"> JSON, and the merged call tree in depth-first
 * pre-order packed into the text of <script id="sfp-tree"> (the format:
 * docs/flamegraph.md and src/export/flame-tree.h).  Unpacked, in typed
 * arrays:
 *   depth[i]  0 for the root, a child is one deeper than its parent
 *   func[i]   index into the per-function arrays (-1 for the root)
 *   valAll[i] samples in the subtree of node i
 *   parent[i], end[i]  the subtree of i is the range [i, end[i])
 * A file with off-CPU samples comes in time (unit "ns", offcpu true): then
 * valAll[i] is on-CPU + off-CPU nanoseconds and valOff[i] the off-CPU
 * part, and the page switches between three views (on, off, both) by
 * drawing the same tree with other widths; off-CPU frames are drawn in
 * blues.
 *
 * Nothing before the first draw costs more than one pass over the packed
 * text: x positions are not laid out ahead but found while drawing (a
 * frame starts where its previous drawn or skipped sibling ended), and
 * only frames at least MIN_PX wide are visited -- a narrower subtree is
 * skipped whole -- so drawing costs what is visible, not what is in the
 * file.
 */
(function () {
  'use strict';

  var ROW = 17;          /* px per stack level */
  var MIN_PX = 0.5;      /* narrower frames (and their subtrees) are not drawn */
  var MAX_CANVAS_PX = 30000;
  var t0 = performance.now();

  var D = JSON.parse(document.getElementById('sfp-data').textContent);
  var timed = !!D.offcpu;
  var maxDepth = D.maxDepth || 0;
  var names = D.names, dsos = D.dsos, fdso = D.fdso, fkind = D.fkind;
  var unit = D.unit || 'samples';
  /* the widths of the current view (valAll unless off-CPU data is split) */
  var view = timed && /^(on|off|both)$/.test(D.view) ? D.view : 'both';
  var value = null, total = 0;
  /* the tree drawn: the preview first, then the whole tree (use()) */
  var N = 0, depth, func, parent, end, valAll, valOff, gap = null;
  var ready = false;       /* the whole tree is in: the page is interactive */

  /*
   * Unpacking (the format: docs/flamegraph.md).  Two letters of the
   * 91-letter alphabet carry 13 bits; per frame its function (a canonical
   * Huffman code: funcCode[l - 1] functions have codes of l bits, given
   * in the order of names[]), gamma(up + 1) -- the next frame is up - 1
   * levels shallower -- delta(value), in time a 2-bit off-CPU kind (0
   * none, 1 all, 2 then delta(off)) and in the preview delta(gap + 1).
   * The root has only delta(value + 1) and its off-CPU part.
   */
  var ALPHA = "!#$%&'()*+,-.0123456789:;=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
  var DIG = new Int32Array(128);
  for (var k0 = 0; k0 < ALPHA.length; k0++) DIG[ALPHA.charCodeAt(k0)] = k0;

  function Reader(text) { this.t = text; this.pos = 0; this.acc = 0; this.nb = 0; }
  /* the next 13 bits into acc, which holds nb unread bits */
  Reader.prototype.fill = function () {
    var t = this.t, p = this.pos;
    if (p + 1 >= t.length) throw new Error('the flame graph data ends early (a truncated page?)');
    this.acc = this.acc << 13 | (DIG[t.charCodeAt(p)] * 91 + DIG[t.charCodeAt(p + 1)]);
    this.pos = p + 2;
    this.nb += 13;
  };
  /* the next n <= 16 bits */
  Reader.prototype.bits = function (n) {
    while (this.nb < n) this.fill();
    var nb = this.nb - n, v = this.acc >>> nb;
    this.nb = nb;
    this.acc &= (1 << nb) - 1;
    return v;
  };
  /* n up to 64 bits (exact up to 2^53) */
  Reader.prototype.wide = function (n) {
    var v = 0;
    for (; n > 16; n -= 16) v = v * 65536 + this.bits(16);
    return v * (1 << n) + this.bits(n);
  };
  Reader.prototype.gamma = function () {
    var z = 0;
    while (this.bits(1) === 0) if (++z > 64) throw new Error('the flame graph data is damaged');
    return z <= 16 ? (1 << z | this.bits(z)) >>> 0 : Math.pow(2, z) + this.wide(z);
  };
  Reader.prototype.delta = function () {
    var n = this.gamma() - 1;
    return n <= 16 ? ((1 << n) >>> 0) + this.bits(n) : Math.pow(2, n) + this.wide(n);
  };
  /* a function by its canonical code: the codes of l bits are first ..
   * first + cl[l - 1] - 1, for the functions from index on */
  Reader.prototype.func = function (cl) {
    var code = 0, first = 0, index = 0, l, c, nb;
    for (l = 0; l < cl.length; l++) {
      if (this.nb === 0) this.fill();
      nb = --this.nb;
      code |= this.acc >>> nb;
      this.acc &= (1 << nb) - 1;
      c = cl[l];
      if (code - first < c) return index + code - first;
      index += c;
      first = (first + c) << 1;
      code <<= 1;
    }
    throw new Error('the flame graph data is damaged');
  };
  /* the next bit is a 1 (gamma(1), delta(1)): take it */
  Reader.prototype.one = function () {
    if (this.nb === 0) this.fill();
    var nb = this.nb - 1;
    if ((this.acc >>> nb) === 0) return false;
    this.nb = nb;
    this.acc &= (1 << nb) - 1;
    return true;
  };

  /* @n frames from the text of element @id, in typed arrays */
  function unpack(id, n, withGap) {
    var t = {
      n: n, depth: new Int32Array(n), func: new Int32Array(n),
      parent: new Int32Array(n), end: new Int32Array(n),
      valAll: new Float64Array(n), valOff: timed ? new Float64Array(n) : null,
      gap: withGap ? new Float64Array(n) : null
    };
    if (!n) return t;
    var r = new Reader(document.getElementById(id).textContent);
    var dep = t.depth, fn = t.func, par = t.parent, en = t.end, va = t.valAll, vo = t.valOff, gp = t.gap;
    var open = new Int32Array(maxDepth + 2), cl = Int32Array.from(D.funcCode || []);
    var i, d = 1, up, f;
    function off(i) {
      if (!va[i]) return;
      var kind = r.bits(2);
      vo[i] = kind === 0 ? 0 : kind === 1 ? va[i] : r.delta();
    }
    fn[0] = -1; par[0] = -1; en[0] = n;
    va[0] = r.delta() - 1;
    if (timed) off(0);
    for (i = 1; i < n; i++) {
      dep[i] = d;
      fn[i] = r.func(cl);
      par[i] = open[d - 1];
      open[d] = i;
      /* most frames: next is my child (up 0), one sample */
      up = r.one() ? 0 : r.gamma() - 1;
      va[i] = r.one() ? 1 : r.delta();
      if (timed) off(i);
      if (withGap) gp[i] = r.delta() - 1;
      for (f = 0; f < up; f++) en[open[d - f]] = i + 1;
      d += 1 - up;
    }
    return t;
  }

  function use(t) {
    N = t.n; depth = t.depth; func = t.func; parent = t.parent; end = t.end;
    valAll = t.valAll; valOff = t.valOff; gap = t.gap;
    layout(view);
  }

  /* The widths of view @v. */
  function layout(v) {
    var i;
    view = v;
    if (!timed || v === 'both') value = valAll;
    else if (v === 'off') value = valOff;
    else { value = new Float64Array(N); for (i = 0; i < N; i++) value[i] = valAll[i] - valOff[i]; }
    total = N ? value[0] : 0;
  }
  var $ = function (id) { return document.getElementById(id); };
  var canvas = $('fg'), ctx = canvas.getContext('2d');
  var tip = $('tip'), details = $('details'), crumbs = $('crumbs');
  var searchBox = $('search'), matchedEl = $('matched');

  var zoom = 0;            /* node shown full width */
  var inverted = false;    /* root at the bottom (classic flame graph) */
  var matchRe = null;      /* current search */
  var funcMatch = null;    /* Uint8Array per function, 1 = matches */
  var hover = -1;
  var cssW = 0, cssH = 0, dpr = 1, rows = 0;
  /* what was drawn, per row: node ids and their left/right px, in x order */
  var drawn = [];

  function fname(i) { return i === 0 || func[i] < 0 ? 'all' : names[func[i]]; }
  function fdsoName(i) { return func[i] < 0 ? '' : dsos[fdso[func[i]]] || ''; }
  function isKernel(i) { return func[i] >= 0 && fkind[func[i]] === 1; }

  function pct(v, of) {
    if (!of) return '0%';
    var p = 100 * v / of;
    return (p >= 10 ? p.toFixed(1) : p >= 0.01 ? p.toFixed(2) : p.toPrecision(2)) + '%';
  }
  function fmtNum(v) { return Math.round(v).toLocaleString('en-US'); }
  /* nanoseconds as people read them */
  function fmtTime(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toPrecision(4) + ' s';
    if (a >= 1e6) return (ns / 1e6).toPrecision(4) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toPrecision(4) + ' \u00b5s';
    return fmtNum(ns) + ' ns';
  }
  function fmtVal(v) { return timed ? fmtTime(v) : fmtNum(v) + ' ' + unit; }
  /* A frame is drawn as off-CPU when, in this view, most of its width is
   * blocked time. */
  function isOff(i) {
    if (!timed || view === 'on') return false;
    return view === 'off' || 2 * valOff[i] > valAll[i];
  }

  /* A stable colour per name, from one hue family per kind. */
  var colourCache = new Map();
  function hash(s) {
    var h = 2166136261;
    for (var k = 0; k < s.length; k++) { h ^= s.charCodeAt(k); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  function colour(i) {
    if (i === 0) return '#c8c8c0';
    var f = func[i];
    if (funcMatch && funcMatch[f]) return '#d63fd0';
    var off = isOff(i), key = off ? -1 - f : f;
    var c = colourCache.get(key);
    if (c) return c;
    var nm = names[f], h = hash(nm), r = (h & 0xff) / 255, g = ((h >>> 8) & 0xff) / 255;
    if (off && fkind[f] === 1) /* off-CPU, kernel: lavender blues */
      c = 'hsl(' + (232 + 18 * r).toFixed(0) + ',' + (45 + 20 * g).toFixed(0) + '%,' + (72 + 8 * r).toFixed(0) + '%)';
    else if (off) /* off-CPU, user: blues, as off-CPU flame graphs draw them */
      c = 'hsl(' + (200 + 22 * r).toFixed(0) + ',' + (60 + 25 * g).toFixed(0) + '%,' + (52 + 12 * g).toFixed(0) + '%)';
    else if (timed && fkind[f] === 1) /* on-CPU kernel beside off-CPU blues: tans */
      c = 'hsl(' + (28 + 14 * r).toFixed(0) + ',' + (35 + 20 * g).toFixed(0) + '%,' + (58 + 10 * r).toFixed(0) + '%)';
    else if (nm === '[unknown]') c = 'hsl(0,0%,' + (70 + 10 * r).toFixed(0) + '%)';
    else if (fkind[f] === 2) c = 'hsl(95,25%,' + (68 + 8 * r).toFixed(0) + '%)'; /* an event */
    else if (fkind[f] === 1) /* kernel: blues and teals */
      c = 'hsl(' + (190 + 30 * r).toFixed(0) + ',' + (45 + 25 * g).toFixed(0) + '%,' + (58 + 12 * r).toFixed(0) + '%)';
    else /* user: reds through yellows, like fire */
      c = 'hsl(' + (8 + 42 * r).toFixed(0) + ',' + (75 + 20 * g).toFixed(0) + '%,' + (55 + 10 * g).toFixed(0) + '%)';
    colourCache.set(key, c);
    return c;
  }

  function path(i) {
    var p = [];
    for (; i >= 0; i = parent[i]) p.push(i);
    return p.reverse();
  }

  function rowY(level) { return inverted ? (rows - 1 - level) * ROW : level * ROW; }

  /* Collect the visible frames of the zoomed subtree, then paint them. */
  function render() {
    var zpath = path(zoom), zd = depth[zoom];
    var scale, i, w, d, x, k;
    cssW = canvas.parentNode.clientWidth - 20;
    if (cssW < 100) cssW = 100;
    scale = value[zoom] > 0 ? cssW / value[zoom] : 0;

    /* x positions as we go: a frame starts where the previous frame at
     * its depth (a sibling, drawn or skipped) ended, a first child where
     * its parent starts */
    var vis = [], visX = [], visDepth = zd, curX = new Float64Array(maxDepth + 2);
    for (i = zoom; i < end[zoom];) {
      d = depth[i];
      w = value[i] * scale;
      x = curX[d];
      if (gap) x += gap[i] * scale;   /* the preview's left-out siblings */
      curX[d] = x + w;
      if (w < MIN_PX) { i = end[i]; continue; }
      curX[d + 1] = x;
      vis.push(i);
      visX.push(x);
      if (d > visDepth) visDepth = d;
      i++;
    }
    rows = Math.min(visDepth + 1, Math.floor(MAX_CANVAS_PX / ROW));
    cssH = rows * ROW;
    dpr = window.devicePixelRatio || 1;
    if (cssH * dpr > MAX_CANVAS_PX) dpr = MAX_CANVAS_PX / cssH;
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
    canvas.style.height = cssH + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.font = '11.5px ui-monospace, "DejaVu Sans Mono", Menlo, monospace';
    ctx.textBaseline = 'middle';
    var charW = ctx.measureText('m').width || 7;

    drawn = [];
    for (d = 0; d < rows; d++) drawn.push({ ids: [], x0: [], x1: [] });

    function box(id, x0, width, dim) {
      var lv = depth[id];
      if (lv >= rows) return;
      var y = rowY(lv);
      ctx.globalAlpha = dim ? 0.45 : 1;
      ctx.fillStyle = colour(id);
      ctx.fillRect(x0, y, Math.max(width - (width > 3 ? 1 : 0), 0.5), ROW - 1);
      if (width > 3 * charW) {
        var label = fname(id), max = Math.floor((width - 6) / charW);
        if (label.length > max) label = label.slice(0, Math.max(max - 2, 1)) + '..';
        ctx.fillStyle = dim ? '#333' : '#111';
        ctx.fillText(label, x0 + 3, y + ROW / 2);
      }
      if (id === hover) {
        ctx.globalAlpha = 1;
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1;
        ctx.strokeRect(x0 + 0.5, y + 0.5, Math.max(width - 2, 1), ROW - 2);
      }
      var r = drawn[lv];
      r.ids.push(id); r.x0.push(x0); r.x1.push(x0 + width);
    }

    /* the zoomed frame's ancestors span the width, dimmed: click one to zoom out */
    for (k = 0; k < zpath.length - 1; k++) box(zpath[k], 0, cssW, true);
    for (k = 0; k < vis.length; k++) box(vis[k], visX[k], value[vis[k]] * scale, false);
    ctx.globalAlpha = 1;
    renderCrumbs(zpath);
  }

  function renderCrumbs(zpath) {
    crumbs.textContent = '';
    zpath.forEach(function (id, k) {
      if (k) { var s = document.createElement('span'); s.className = 'sep'; s.textContent = '\u203a'; crumbs.appendChild(s); }
      var el = document.createElement(k === zpath.length - 1 ? 'span' : 'a');
      el.textContent = fname(id);
      if (k === zpath.length - 1) el.className = 'cur';
      else el.addEventListener('click', function () { setZoom(id); });
      el.dataset.node = id;
      crumbs.appendChild(el);
    });
  }

  function hit(px, py) {
    var lv = Math.floor(py / ROW);
    if (inverted) lv = rows - 1 - lv;
    if (lv < 0 || lv >= drawn.length) return -1;
    var r = drawn[lv], lo = 0, hi = r.ids.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (px < r.x0[mid]) hi = mid - 1;
      else if (px >= r.x1[mid]) lo = mid + 1;
      else return r.ids[mid];
    }
    return -1;
  }

  function describe(i) {
    var self = value[i], c;
    for (c = i + 1; c < end[i]; c = end[c]) self -= value[c];
    var d = {
      name: fname(i), dso: fdsoName(i), kernel: isKernel(i),
      value: value[i], self: self, share: total ? value[i] / total : 0,
      zoomShare: value[zoom] ? value[i] / value[zoom] : 0
    };
    if (timed) {
      d.on = valAll[i] - valOff[i];
      d.off = valOff[i];
      d.offCpu = isOff(i);
    }
    return d;
  }

  function showTip(i, ev) {
    if (i < 0) { tip.hidden = true; return; }
    var d = describe(i);
    tip.textContent = '';
    var b = document.createElement('b'); b.textContent = d.name; tip.appendChild(b);
    function line(k, v) {
      var div = document.createElement('div');
      var ks = document.createElement('span'); ks.className = 'k'; ks.textContent = k + ': ';
      div.appendChild(ks); div.appendChild(document.createTextNode(v)); tip.appendChild(div);
    }
    if (d.dso) line(d.kernel ? 'kernel' : 'dso', d.dso);
    if (func[i] >= 0 && fkind[func[i]] === 2) line('event', 'samples of this event below');
    line(timed ? 'time' : unit, (timed ? fmtTime(d.value) : fmtNum(d.value)) + ' (' + pct(d.value, total) + ' of all' +
      (zoom ? ', ' + pct(d.value, value[zoom]) + ' of zoomed' : '') + ')');
    line('self', (timed ? fmtTime(d.self) : fmtNum(d.self)) + ' (' + pct(d.self, total) + ')');
    if (timed) {
      line('on-CPU', fmtTime(d.on));
      line('off-CPU (blocked)', fmtTime(d.off));
    }
    tip.hidden = false;
    var tx = ev.clientX + 14, ty = ev.clientY + 14;
    var tw = tip.offsetWidth, th = tip.offsetHeight;
    if (tx + tw > window.innerWidth - 4) tx = Math.max(4, ev.clientX - tw - 10);
    if (ty + th > window.innerHeight - 4) ty = Math.max(4, ev.clientY - th - 10);
    tip.style.left = tx + 'px';
    tip.style.top = ty + 'px';
    details.textContent = d.name + (d.dso ? '  (' + d.dso + ')' : '') + '  \u2014  ' +
      fmtVal(d.value) + ', ' + pct(d.value, total) + ' of total, self ' + pct(d.self, total);
  }

  function setZoom(i) {
    if (!ready || i < 0 || i >= N) return;
    zoom = i;
    hover = -1;
    tip.hidden = true;
    render();
    updateMatched();
  }

  /* Share of the samples under matching frames: a match inside another
   * match's subtree is not counted twice. */
  function matchedValue(root) {
    if (!funcMatch) return 0;
    var sum = 0, cover = -1, i;
    for (i = root; i < end[root]; i++) {
      if (i < cover) continue;
      if (func[i] >= 0 && funcMatch[func[i]]) { sum += value[i]; cover = end[i]; }
    }
    return sum;
  }

  function updateMatched() {
    if (!funcMatch) { matchedEl.textContent = ''; return; }
    var all = matchedValue(0), z = zoom ? matchedValue(zoom) : all;
    matchedEl.textContent = 'Matched: ' + pct(all, total) + ' (' + fmtVal(all) + ')' +
      (zoom ? '; ' + pct(z, value[zoom]) + ' of zoomed' : '');
  }

  function setSearch(text) {
    if (!ready) return;   /* finish() takes what the box holds then */
    matchRe = null;
    funcMatch = null;
    if (text) {
      try { matchRe = new RegExp(text); }
      catch (e) { matchRe = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')); }
      funcMatch = new Uint8Array(names.length);
      for (var f = 0; f < names.length; f++) funcMatch[f] = matchRe.test(names[f]) ? 1 : 0;
    }
    render();
    updateMatched();
  }

  /* Switch between on-CPU, off-CPU and both: same tree, other widths.  A
   * zoomed frame without time in the new view gives way to the root. */
  function setView(v) {
    if (!ready || !timed || !/^(on|off|both)$/.test(v)) return false;
    layout(v);
    colourCache.clear();
    var r = document.querySelector('#views input[value="' + v + '"]');
    if (r) r.checked = true;
    if (!value[zoom]) zoom = 0;
    hover = -1;
    tip.hidden = true;
    render();
    updateMatched();
    return true;
  }

  /* --- events ----------------------------------------------------------- */
  function local(ev) {
    var r = canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top };
  }
  /* (until the whole tree is in, the preview on the canvas is a picture
   * only: its frames are not the page's) */
  canvas.addEventListener('mousemove', function (ev) {
    if (!ready) return;
    var p = local(ev), i = hit(p.x, p.y);
    if (i !== hover) { hover = i; render(); }
    showTip(i, ev);
  });
  canvas.addEventListener('mouseleave', function () {
    if (!ready) return;
    tip.hidden = true;
    if (hover >= 0) { hover = -1; render(); }
  });
  canvas.addEventListener('click', function (ev) {
    if (!ready) return;
    var p = local(ev), i = hit(p.x, p.y);
    if (i >= 0) setZoom(i);
  });
  $('reset').addEventListener('click', function () { setZoom(0); });
  $('clear').addEventListener('click', function () { searchBox.value = ''; setSearch(''); });
  $('invert').addEventListener('change', function (ev) { inverted = ev.target.checked; if (ready) render(); });
  var searchTimer = 0;
  searchBox.addEventListener('input', function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { setSearch(searchBox.value); }, 150);
  });
  searchBox.addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter') { clearTimeout(searchTimer); setSearch(searchBox.value); }
  });
  document.addEventListener('keydown', function (ev) {
    if (ev.key === 'Escape') {
      if (document.activeElement === searchBox) searchBox.blur();
      setZoom(0);
    } else if ((ev.key === '/' || (ev.key === 'f' && (ev.ctrlKey || ev.metaKey))) &&
               document.activeElement !== searchBox) {
      ev.preventDefault();
      searchBox.focus();
    }
  });
  var resizeTimer = 0;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { if (ready) render(); }, 100);
  });

  /* --- start -------------------------------------------------------------- */
  $('title').textContent = D.title || 'Flame graph';
  $('sub').textContent = D.sub || '';
  if (timed) {
    $('views').hidden = false;
    $('unitnote').hidden = false;
    $('unitnote').textContent = D.unitNote || 'Widths are time (ns).';
    $('legend').hidden = true;
    $('legend-time').hidden = false;
    Array.prototype.forEach.call(document.querySelectorAll('#views input'), function (r) {
      r.checked = r.value === view;
      r.addEventListener('change', function () { if (r.checked) setView(r.value); });
    });
  }

  /*
   * The first picture from the preview, if the page has one wide enough
   * for this canvas (every frame of at least half a pixel in it), drawn
   * while the browser still reads the whole tree below this script.
   */
  var firstDrawAt = 0, previewed = false;
  if (D.previewNodes > 0) {
    use(unpack('sfp-preview', D.previewNodes, true));
    if (D.previewMin * 2 * Math.max(canvas.parentNode.clientWidth - 20, 100) <= total) {
      render();
      firstDrawAt = performance.now();
      previewed = true;
    }
  }

  /* The whole tree: the page becomes what it shows. */
  function finish() {
    use(unpack('sfp-tree', D.nodes || 0, false));
    ready = true;
    /* what was clicked or typed while the page was loading */
    inverted = $('invert').checked;
    var r = document.querySelector('#views input:checked');
    if (timed && r && r.value !== view) layout(r.value);
    if (!N || !total) details.textContent = 'This profile has no samples.';
    if (searchBox.value) setSearch(searchBox.value);
    else if (N) render();
    if (!firstDrawAt) firstDrawAt = performance.now();
    publish();
  }
  if ($('sfp-tree')) finish();
  else document.addEventListener('DOMContentLoaded', finish);

  /* A small scripting interface (used by sfprof's browser tests). */
  function publish() {
    window.sfpFlame = {
      nodes: N,
      get total() { return total; },
      timed: timed,
      view: function () { return view; },
      setView: setView,
      /* the fill colour node i is drawn with now ('' if not drawn) */
      colourOf: function (i) { return this.rect(i) ? colour(i) : ''; },
      /* this script's start to the whole tree drawn, ms */
      loadMs: performance.now() - t0,
      /* the first picture (the preview's, if it had one), ms from the
       * start of the navigation */
      firstDrawMs: firstDrawAt,
      previewed: previewed,
      find: function (name) {
        var out = [];
        for (var i = 1; i < N; i++) if (names[func[i]] === name) out.push(i);
        return out;
      },
      info: function (i) { return describe(i); },
      /* where node i is drawn, in page (CSS) pixels, or null if not drawn */
      rect: function (i) {
        var lv = depth[i], r = drawn[lv];
        if (!r) return null;
        var k = r.ids.indexOf(i);
        if (k < 0) return null;
        var b = canvas.getBoundingClientRect();
        return { x: b.left + r.x0[k], y: b.top + rowY(lv), w: r.x1[k] - r.x0[k], h: ROW - 1,
                 canvasWidth: cssW };
      },
      parent: function (i) { return parent[i]; },
      zoomed: function () { return zoom; },
      zoom: setZoom,
      search: function (t) { searchBox.value = t; setSearch(t); },
      matched: function () { return { value: matchedValue(0), share: total ? matchedValue(0) / total : 0 }; },
      /* frames currently drawn in the match colour */
      highlighted: function () {
        var n = 0;
        if (!funcMatch) return 0;
        drawn.forEach(function (r) { r.ids.forEach(function (id) { if (func[id] >= 0 && funcMatch[func[id]]) n++; }); });
        return n;
      },
      drawnCount: function () { var n = 0; drawn.forEach(function (r) { n += r.ids.length; }); return n; }
    };
  }
})();
