// The flame graph in one HTML page that needs nothing else, under a
// sub-second heatmap: the graph's nodes and each leaf's weight per 20 ms
// slice are data in the page; its script draws the heatmap, and the graph of
// whatever cells are selected (the whole run at first).
#include <cstdio>
#include <string>

#include "gtap/readers/flame.h"
#include "markup.h"

namespace gtap::readers {

namespace {

const char* kPage = R"HTML(<style>
body { font-family: sans-serif; margin: 12px; background: #f8f8f4; color: #111; }
h1 { font-size: 18px; margin: 4px 0 8px; }
#controls { margin: 6px 0; font-size: 13px; }
#controls input { width: 260px; }
#heat { border: 1px solid #ccc; background: #fff; cursor: crosshair; display: block; }
#heatinfo, #details, #notes, #selection { font-size: 13px; min-height: 17px; margin: 4px 0; }
#flame { position: relative; width: 1200px; background: #fff; border: 1px solid #ddd; overflow: hidden; }
.f { position: absolute; height: 16px; font: 12px monospace; line-height: 16px; overflow: hidden;
     white-space: nowrap; box-sizing: border-box; border: 1px solid #f8f8f4; border-radius: 2px;
     padding-left: 3px; cursor: pointer; }
.f:hover { border-color: #000; }
.f.parent { opacity: 0.5; }
.f.match { background: rgb(230,0,230) !important; }
#legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
#legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
button { font-size: 12px; }
</style>
)HTML";

const char* kScript = R"JS(
(function () {
  var D = DATA, W = 1200, H = 17;
  var kinds = ['process', 'program', 'runtime library', 'API call', 'IREE HAL dispatch', 'device work',
               'kernel instruction', 'no symbol'];
  function hue(kind, name) {
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) { h ^= name.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    var v = (h % 1000) / 1000;
    switch (kind) {
      case 1: return 'hsl(' + (5 + 30 * v) + ',75%,' + (55 + 10 * v) + '%)';
      case 2: return 'hsl(' + (45 + 12 * v) + ',80%,' + (52 + 8 * v) + '%)';
      case 3: return 'hsl(' + (180 + 15 * v) + ',55%,' + (55 + 8 * v) + '%)';
      case 4: return 'hsl(' + (270 + 20 * v) + ',50%,' + (65 + 8 * v) + '%)';
      case 5: return 'hsl(' + (95 + 40 * v) + ',55%,' + (50 + 10 * v) + '%)';
      case 6: return 'hsl(' + (210 + 20 * v) + ',65%,' + (62 + 8 * v) + '%)';
      case 7: return 'hsl(0,0%,' + (70 + 10 * v) + '%)';
      default: return 'hsl(220,10%,80%)';
    }
  }
  function value(v) {
    if (D.unit === 'count') return v + (v === 1 ? ' operation' : ' operations');
    if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
    if (v >= 1e3) return (v / 1e3).toFixed(2) + ' us';
    return v + ' ns';
  }
  var nodes = D.nodes, frames = D.frames, n = nodes.length;
  // Children by frame name, as the SVG and the folded text order them.
  var children = [];
  for (var i = 0; i < n; i++) children.push([]);
  for (var i = 1; i < n; i++) children[nodes[i][1]].push(i);
  children.forEach(function (c) {
    c.sort(function (a, b) { var x = frames[nodes[a][0]][0], y = frames[nodes[b][0]][0]; return x < y ? -1 : x > y ? 1 : 0; });
  });
  // The heatmap: a column per second, a row per slice within it; a long run
  // gets cells of `per` slices each (a column per `per` seconds), so that it
  // stays a thousand columns or fewer.
  var rows = D.slicesPerSecond, maxSlice = 0, perSlice = {};
  D.slices.forEach(function (s) { maxSlice = Math.max(maxSlice, s[1]); });
  var per = Math.max(1, Math.ceil((Math.floor(maxSlice / rows) + 1) / 1000));
  D.slices.forEach(function (s) { var c = Math.floor(s[1] / per); perSlice[c] = (perSlice[c] || 0) + s[2]; });
  var columns = Math.floor(Math.floor(maxSlice / per) / rows) + 1;
  document.getElementById('heatunit').textContent = per === 1 ? 'a column per second of the run, a row per ' +
    D.sliceNs / 1e6 + ' ms within it' : 'a column per ' + per + ' seconds of the run, a row per ' + per * D.sliceNs / 1e6 +
    ' ms within them';
  var cw = Math.max(4, Math.min(24, Math.floor(1180 / columns))), ch = 6;
  var heat = document.getElementById('heat');
  heat.width = columns * cw; heat.height = rows * ch;
  var peak = 0;
  for (var k in perSlice) peak = Math.max(peak, perSlice[k]);
  var first = null, last = null, dragging = false;
  function drawHeat() {
    var g = heat.getContext('2d');
    g.fillStyle = '#fff'; g.fillRect(0, 0, heat.width, heat.height);
    for (var k in perSlice) {
      var s = +k, c = Math.floor(s / rows), r = s % rows;
      var t = peak ? Math.sqrt(perSlice[k] / peak) : 0;
      g.fillStyle = 'rgb(255,' + Math.round(235 - 200 * t) + ',' + Math.round(220 - 220 * t) + ')';
      g.fillRect(c * cw, r * ch, cw - 1, ch - 1);
    }
    if (first !== null) {
      var a = Math.min(first, last), b = Math.max(first, last);
      g.fillStyle = 'rgba(40,80,200,0.35)';
      for (var s = a; s <= b; s++) g.fillRect(Math.floor(s / rows) * cw, (s % rows) * ch, cw - 1, ch - 1);
    }
  }
  function sliceAt(ev) {
    var r = heat.getBoundingClientRect();
    var c = Math.floor((ev.clientX - r.left) / cw), row = Math.floor((ev.clientY - r.top) / ch);
    c = Math.max(0, Math.min(columns - 1, c)); row = Math.max(0, Math.min(rows - 1, row));
    return c * rows + row;
  }
  function seconds(cell) { return (cell * per * D.sliceNs / 1e9).toFixed(2); }
  heat.addEventListener('mousedown', function (ev) { first = last = sliceAt(ev); dragging = true; drawHeat(); });
  heat.addEventListener('mousemove', function (ev) {
    var s = sliceAt(ev);
    document.getElementById('heatinfo').textContent = seconds(s) + ' s to ' + seconds(s + 1) + ' s: ' +
      value(perSlice[s] || 0);
    if (dragging) { last = s; drawHeat(); }
  });
  window.addEventListener('mouseup', function () {
    if (!dragging) return;
    dragging = false; zoomed = 0; draw();
  });
  document.getElementById('whole').addEventListener('click', function () { first = last = null; zoomed = 0; drawHeat(); draw(); });
  // The graph of the selection.
  var flame = document.getElementById('flame'), details = document.getElementById('details');
  var matched = document.getElementById('matched'), search = document.getElementById('search');
  var reset = document.getElementById('reset');
  var total = new Float64Array(n), zoomed = 0, shown = [];
  function totals() {
    total.fill(0);
    var a = first === null ? -1 : Math.min(first, last) * per;
    var b = first === null ? Infinity : Math.max(first, last) * per + per - 1;
    D.slices.forEach(function (s) { if (s[1] >= a && s[1] <= b) total[s[0]] += s[2]; });
    for (var i = n - 1; i > 0; i--) total[nodes[i][1]] += total[i];  // a parent is made before its children
  }
  function draw() {
    totals();
    var all = total[0], depth = 0, dropped = 0, droppedWeight = 0;
    flame.innerHTML = '';
    shown = [];
    var top = zoomed, scale = total[top] ? W / total[top] : 0;
    // Ancestors of the zoomed frame: full-width bars below it.
    var chain = [];
    for (var a = top; a !== 0; a = nodes[a][1]) chain.unshift(a);
    var rowsUsed = 0, placed = [];
    chain.forEach(function (node, d) { if (node !== top) placed.push([node, d, 0, W, true]); });
    // Children left to right; a run of siblings each too narrow to see is
    // one frame standing for them when together they are wide enough.
    var runs = 0;
    (function walk(node, d, x) {
      if (node !== 0) placed.push([node, d, x, total[node] * scale, false]);
      var cx = x, cd = d + (node === 0 ? 0 : 1), run = 0, runWeight = 0, runX = 0;
      function flush() {
        if (!run) return;
        if (runWeight * scale >= D.minWidth) { placed.push([-run, cd, runX, runWeight * scale, false, runWeight]); runs += run; }
        else { dropped += run; droppedWeight += runWeight; }
        run = 0; runWeight = 0;
      }
      children[node].forEach(function (c) {
        if (total[c] <= 0) return;
        var w = total[c] * scale;
        if (w < D.minWidth) { if (!run) runX = cx; run++; runWeight += total[c]; }
        else { flush(); walk(c, cd, cx); }
        cx += w;
      });
      flush();
    })(top, top === 0 ? 0 : chain.length - 1, 0);
    placed.forEach(function (p) { rowsUsed = Math.max(rowsUsed, p[1] + 1); });
    flame.style.height = (rowsUsed * H + 2) + 'px';
    placed.forEach(function (p) {
      var node = p[0];
      if (node < 0) {  // a run of narrow siblings
        var div = document.createElement('div');
        div.className = 'f';
        div.style.left = p[2] + 'px'; div.style.width = p[3] + 'px';
        div.style.top = ((rowsUsed - 1 - p[1]) * H) + 'px';
        div.style.background = hue(7, '');
        if (p[3] < 4) div.style.borderWidth = '0';
        var name = '[' + (-node) + ' frames narrower than ' + D.minWidth + ' px]';
        div.textContent = p[3] > 20 ? name : '';
        var text = name + ': ' + value(p[5]) + ', ' + (all ? (100 * p[5] / all).toFixed(2) : '0.00') + '%';
        div.title = text;
        div.setAttribute('data-name', name);
        div.addEventListener('mouseover', function () { details.textContent = text; });
        flame.appendChild(div);
        return;
      }
      var f = frames[nodes[node][0]];
      var div = document.createElement('div');
      div.className = 'f' + (p[4] ? ' parent' : '');
      div.style.left = p[2] + 'px'; div.style.width = p[3] + 'px';
      div.style.top = ((rowsUsed - 1 - p[1]) * H) + 'px';
      div.style.background = hue(f[1], f[0]);
      if (p[3] < 4) div.style.borderWidth = '0';  // a border would hide a narrow frame
      div.textContent = p[3] > 20 ? f[0] : '';
      var text = f[0] + ' (' + kinds[f[1]] + (f[2] ? ', ' + f[2] : '') + (f[3] ? ', ' + f[3] : '') + '): ' +
        value(total[node]) + ', ' + (all ? (100 * total[node] / all).toFixed(2) : '0.00') + '%';
      div.title = text;
      div.setAttribute('data-name', f[0]);
      div.setAttribute('data-node', node);
      div.setAttribute('data-value', total[node]);
      div.addEventListener('mouseover', function () { details.textContent = text; });
      div.addEventListener('click', function () { zoomed = (zoomed === node) ? 0 : node; draw(); });
      flame.appendChild(div);
      shown.push([div, node]);
    });
    reset.style.display = zoomed ? '' : 'none';
    var sel = first === null ? 'the whole run' :
      seconds(Math.min(first, last)) + ' s to ' + seconds(Math.max(first, last) + 1) + ' s';
    var selection = document.getElementById('selection');
    selection.textContent = 'Selection: ' + sel + ', ' + value(all);
    selection.setAttribute('data-total', all);
    document.getElementById('notes').textContent = (runs ? runs + ' frame' + (runs === 1 ? '' : 's') +
      ' narrower than ' + D.minWidth + ' px drawn as runs of siblings. ' : '') +
      (dropped ? dropped + ' frame' + (dropped === 1 ? '' : 's') +
      ' narrower than ' + D.minWidth + ' px left out (' + (all ? (100 * droppedWeight / all).toFixed(2) : '0.00') +
      '% of the weight). ' : '') + D.notes;
    find(search.value);
  }
  reset.addEventListener('click', function () { zoomed = 0; draw(); });
  function find(term) {
    var test;
    try { var re = new RegExp(term); test = function (s) { return re.test(s); }; }
    catch (e) { test = function (s) { return s.indexOf(term) >= 0; }; }
    // The share matched: nodes whose frame matches, not counted again below one that does.
    var covered = 0, count = 0, all = total[0];
    (function walk(node, inside) {
      var hit = node !== 0 && term !== '' && test(frames[nodes[node][0]][0]);
      if (hit) count++;
      if (hit && !inside) covered += total[node];
      children[node].forEach(function (c) { if (total[c] > 0) walk(c, inside || hit); });
    })(0, false);
    shown.forEach(function (s) { s[0].classList.toggle('match', term !== '' && test(frames[nodes[s[1]][0]][0])); });
    matched.textContent = term === '' ? '' : 'Matched: ' + (all ? (100 * covered / all).toFixed(2) : '0.00') + '% (' +
      count + ' frame' + (count === 1 ? '' : 's') + ')';
  }
  search.addEventListener('input', function () { find(search.value); });
  var legend = document.getElementById('legend'), present = {};
  frames.forEach(function (f) { present[f[1]] = true; });
  kinds.forEach(function (name, k) {
    if (!present[k]) return;
    var s = document.createElement('span'), i = document.createElement('i');
    i.style.background = hue(k, ''); s.appendChild(i); s.appendChild(document.createTextNode(name)); legend.appendChild(s);
  });
  drawHeat();
  draw();
  document.body.setAttribute('data-ready', '1');
})();
)JS";

}  // namespace

void writeFlameHtml(const FlameGraph& g, const std::string& title, std::ostream& out, double minWidthPixels,
                    std::string_view appendix) {
  std::string data = "{\"frames\":[";
  for (size_t i = 0; i < g.frames.size(); ++i) {
    const FlameFrame& f = g.frames[i];
    if (i) data += ',';
    data += '[';
    appendScriptString(data, f.name);
    data += ',' + std::to_string(static_cast<int>(f.kind)) + ',';
    appendScriptString(data, f.module);
    data += ',';
    appendScriptString(data, f.location);
    data += ']';
  }
  data += "],\"nodes\":[";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (i) data += ',';
    data += '[' + std::to_string(g.nodes[i].frame) + ',' + std::to_string(g.nodes[i].parent) + ']';
  }
  data += "],\"slices\":[";
  for (size_t i = 0; i < g.slices.size(); ++i) {
    const auto& s = g.slices[i];
    if (i) data += ',';
    data += '[' + std::to_string(s.node) + ',' + std::to_string(s.slice) + ',' + std::to_string(s.weight) + ']';
  }
  data += "],\"sliceNs\":" + std::to_string(FlameGraph::kSliceNs) +
          ",\"slicesPerSecond\":" + std::to_string(1'000'000'000 / FlameGraph::kSliceNs) + ",\"unit\":\"" +
          (g.weight == FlameWeight::count ? "count" : "ns") + "\",\"minWidth\":";
  char width[32];
  std::snprintf(width, sizeof width, "%g", minWidthPixels);
  data += width;
  data += ",\"notes\":";
  appendScriptString(data, g.caveats());
  data += '}';
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << markupEscaped(title)
      << "</title>\n"
      << kPage << "</head><body>\n<h1>" << markupEscaped(title) << "</h1>\n"
      << "<div>Weight: " << g.weightName() << ", " << markupEscaped(g.valueText(g.nodes.empty() ? 0 : g.nodes[0].total))
      << " in all. The heatmap: <span id=\"heatunit\"></span>; drag across cells to draw the graph of that time "
         "only.</div>\n"
      << "<canvas id=\"heat\"></canvas>\n<div id=\"heatinfo\"></div>\n"
      << "<div id=\"controls\"><button id=\"whole\">Whole run</button> <button id=\"reset\" style=\"display:none\">"
         "Reset zoom</button> <input id=\"search\" type=\"search\" placeholder=\"Search (regular expression)\"> "
         "<span id=\"matched\"></span></div>\n"
      << "<div id=\"selection\"></div>\n<div id=\"legend\"></div>\n<div id=\"flame\"></div>\n"
      << "<div id=\"details\"></div>\n<div id=\"notes\"></div>\n"
      << appendix << "<script>var DATA = " << data << ";" << kScript << "</script>\n</body></html>\n";
}

}  // namespace gtap::readers
