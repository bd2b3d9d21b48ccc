// The flame graph as one SVG file that needs nothing else: the frames as
// rectangles laid out here, and a small script for hover, zoom and search.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gtap/readers/flame.h"
#include "markup.h"

namespace gtap::readers {

namespace {

constexpr double kWidth = 1200;   // of the frames, in pixels
constexpr double kMargin = 10;
constexpr double kFrameHeight = 17;
constexpr double kTop = 84;       // title, controls, legend
constexpr double kBottom = 44;    // details line, notes

// A stable colour per frame: the kind picks the hue range, the name the place in it.
std::string colourOf(const FlameFrame& f) {
  uint32_t h = 2166136261u;
  for (unsigned char c : f.name) h = (h ^ c) * 16777619u;
  double v = (h % 1000) / 1000.0;
  double hue = 0, sat = 70, light = 60;
  switch (f.kind) {
    case FrameKind::program: hue = 5 + 30 * v; sat = 75; light = 55 + 10 * v; break;
    case FrameKind::runtime: hue = 45 + 12 * v; sat = 80; light = 52 + 8 * v; break;
    case FrameKind::api: hue = 180 + 15 * v; sat = 55; light = 55 + 8 * v; break;
    case FrameKind::hal: hue = 270 + 20 * v; sat = 50; light = 65 + 8 * v; break;
    case FrameKind::kernel: hue = 95 + 40 * v; sat = 55; light = 50 + 10 * v; break;
    case FrameKind::instruction: hue = 210 + 20 * v; sat = 65; light = 62 + 8 * v; break;
    case FrameKind::missing: hue = 0; sat = 0; light = 70 + 10 * v; break;
    case FrameKind::process: hue = 220; sat = 10; light = 80; break;
  }
  char text[48];
  std::snprintf(text, sizeof text, "hsl(%.0f,%.0f%%,%.0f%%)", hue, sat, light);
  return text;
}

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", x);
  return text;
}

// Fractions of the whole, precise enough to zoom a million times.
std::string fraction(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", x);
  return text;
}

std::string percent(uint64_t part, uint64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

const char* kScript = R"JS(
(function () {
  var svg = document.documentElement;
  var W = +svg.getAttribute('data-width'), M = +svg.getAttribute('data-margin');
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var details = document.getElementById('details'), matched = document.getElementById('matched');
  var reset = document.getElementById('reset'), search = document.getElementById('search');
  var zoomed = null;
  function num(g, a) { return +g.getAttribute(a); }
  var total = +svg.getAttribute('data-total');
  function value(v) {
    if (UNIT === 'count') return v + (v === 1 ? ' operation' : ' operations');
    if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
    if (v >= 1e3) return (v / 1e3).toFixed(2) + ' us';
    return v + ' ns';
  }
  // name (kind, module, file:line): value, share of the whole.
  function describe(g) {
    var f = FRAMES[num(g, 'data-f')] || ['', ''], v = num(g, 'data-value');
    return g.getAttribute('data-name') + ' (' + g.getAttribute('data-kind') + (f[0] ? ', ' + f[0] : '') +
      (f[1] ? ', ' + f[1] : '') + '): ' + value(v) + ', ' + (total ? (100 * v / total).toFixed(2) : '0.00') + '%';
  }
  function label(g, width) {
    var t = g.querySelector('text'), name = g.getAttribute('data-name');
    var fits = Math.floor((width - 6) / 7);
    t.textContent = fits < 3 ? '' : (name.length <= fits ? name : name.slice(0, fits - 2) + '..');
  }
  function place(g, x, w) {
    var r = g.querySelector('rect');
    r.setAttribute('x', (M + x).toFixed(2));
    r.setAttribute('width', Math.max(w, 0).toFixed(2));
    g.querySelector('text').setAttribute('x', (M + x + 3).toFixed(2));
    label(g, w);
  }
  function layout() {
    var x0 = 0, w0 = 1, d0 = -1;
    if (zoomed) { x0 = num(zoomed, 'data-x'); w0 = num(zoomed, 'data-w'); d0 = num(zoomed, 'data-depth'); }
    frames.forEach(function (g) {
      var x = num(g, 'data-x'), w = num(g, 'data-w'), d = num(g, 'data-depth');
      var inside = x >= x0 - 1e-12 && x + w <= x0 + w0 + 1e-12;
      var above = zoomed && d < d0 && x <= x0 + 1e-12 && x + w >= x0 + w0 - 1e-12;
      if (!zoomed || (inside && d >= d0)) {
        g.style.display = ''; g.classList.remove('parent');
        place(g, (x - x0) / w0 * W, w / w0 * W);
      } else if (above) {
        g.style.display = ''; g.classList.add('parent');
        place(g, 0, W);
      } else {
        g.style.display = 'none';
      }
    });
    reset.style.display = zoomed ? '' : 'none';
  }
  frames.forEach(function (g) {
    g.addEventListener('mouseover', function () { details.textContent = describe(g); });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
    g.addEventListener('click', function () { zoomed = (zoomed === g) ? null : g; layout(); });
  });
  reset.addEventListener('click', function () { zoomed = null; layout(); });
  function find(term) {
    var test;
    try { var re = new RegExp(term); test = function (s) { return re.test(s); }; }
    catch (e) { test = function (s) { return s.indexOf(term) >= 0; }; }
    var spans = [];
    frames.forEach(function (g) {
      var hit = term !== '' && test(g.getAttribute('data-name'));
      g.classList.toggle('match', hit);
      if (hit) spans.push([num(g, 'data-x'), num(g, 'data-x') + num(g, 'data-w')]);
    });
    // The share matched: the union of the matching frames' spans, so a
    // match inside another counts once.
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    spans.forEach(function (s) {
      if (s[0] > end) { covered += s[1] - s[0]; end = s[1]; }
      else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
    });
    matched.textContent = term === '' ? ' ' :
      'Matched: ' + (100 * covered).toFixed(2) + '% (' + spans.length + ' frame' + (spans.length === 1 ? '' : 's') + ')';
    svg.setAttribute('data-matched', (100 * covered).toFixed(2));
  }
  search.addEventListener('input', function () { find(search.value); });
  layout();
})();
)JS";

}  // namespace

void writeFlameSvg(const FlameGraph& g, const std::string& title, std::ostream& out, double minWidthPixels) {
  uint64_t total = g.nodes.empty() ? 0 : g.nodes[0].total;
  // Frames laid out depth first: x as a fraction of the whole, children in
  // name order left to right; the narrowest are left out.
  // A frame drawn: a node, or (node kAggregate) a run of `count` siblings,
  // each too narrow to see, drawn as one.
  constexpr uint32_t kAggregate = ~uint32_t{0};
  struct Placed {
    uint32_t node;
    uint32_t depth;
    double x, w;
    uint32_t count;
    uint64_t weight;
  };
  std::vector<Placed> placed;
  uint64_t droppedFrames = 0, droppedWeight = 0, aggregated = 0;
  uint32_t maxDepth = 0;
  if (total) {
    struct Step {
      uint32_t node;
      uint32_t depth;
      double x;
    };
    std::vector<Step> todo;
    // A node's children left to right: each wide enough to see is laid out
    // (later, depth first); a run of narrower ones is one frame standing for
    // them when together they are wide enough, else left out.
    auto children = [&](const std::vector<uint32_t>& list, uint32_t depth, double x) {
      size_t first = todo.size();
      uint32_t run = 0;
      uint64_t runWeight = 0;
      double runX = x;
      auto flush = [&] {
        if (!run) return;
        double w = static_cast<double>(runWeight) / static_cast<double>(total);
        if (w * kWidth >= minWidthPixels) {
          placed.push_back({kAggregate, depth, runX, w, run, runWeight});
          maxDepth = std::max(maxDepth, depth);
          aggregated += run;
        } else {
          droppedFrames += run;
          droppedWeight += runWeight;
        }
        run = 0;
        runWeight = 0;
      };
      for (uint32_t c : list) {
        const FlameGraph::Node& n = g.nodes[c];
        if (n.total == 0) continue;
        double w = static_cast<double>(n.total) / static_cast<double>(total);
        if (w * kWidth < minWidthPixels) {
          if (!run) runX = x;
          ++run;
          runWeight += n.total;
        } else {
          flush();
          todo.push_back({c, depth, x});
        }
        x += w;
      }
      flush();
      std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first), todo.end());
    };
    children(g.nodes[0].children, 0, 0);
    while (!todo.empty()) {
      Step s = todo.back();
      todo.pop_back();
      const FlameGraph::Node& n = g.nodes[s.node];
      placed.push_back({s.node, s.depth, s.x, static_cast<double>(n.total) / static_cast<double>(total), 0, n.total});
      maxDepth = std::max(maxDepth, s.depth);
      children(n.children, s.depth + 1, s.x);
    }
  }
  double height = kTop + (maxDepth + 1) * kFrameHeight + kBottom;
  double imageWidth = kWidth + 2 * kMargin;
  out << "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      << "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(imageWidth)
      << "\" height=\"" << number(height) << "\" viewBox=\"0 0 " << number(imageWidth) << " " << number(height)
      << "\" data-width=\"" << number(kWidth) << "\" data-margin=\"" << number(kMargin)
      << "\" data-total=\"" << total << "\" data-matched=\"0\">\n"
      << "<style>\n"
      << "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
      << "g.f { cursor: pointer; } g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
      << "g.f text { pointer-events: none; } g.parent rect { opacity: 0.5; }\n"
      << "g.match rect { fill: rgb(230,0,230) !important; }\n"
      << "#reset { cursor: pointer; fill: #236; } .title { font-size: 17px; }\n"
      << "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f4\"/>\n"
      << "<text class=\"title\" x=\"" << number(imageWidth / 2) << "\" y=\"22\" text-anchor=\"middle\">"
      << markupEscaped(title) << "</text>\n"
      << "<text x=\"" << number(kMargin) << "\" y=\"42\">Weight: " << g.weightName() << ", "
      << markupEscaped(g.valueText(total)) << " in all. Click a frame to zoom, hover for details.</text>\n"
      << "<text id=\"reset\" x=\"" << number(kMargin) << "\" y=\"62\" style=\"display:none\">[Reset zoom]</text>\n"
      << "<foreignObject x=\"" << number(imageWidth - kMargin - 420) << "\" y=\"48\" width=\"240\" height=\"24\">"
      << "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" placeholder=\"Search (regular expression)\" "
         "style=\"width:230px\"/></foreignObject>\n"
      << "<text id=\"matched\" x=\"" << number(imageWidth - kMargin - 170) << "\" y=\"64\"> </text>\n";
  // The legend: the kinds present.
  {
    bool present[8] = {};
    for (const auto& p : placed)
      present[static_cast<int>(p.node == kAggregate ? FrameKind::missing : g.frames[g.nodes[p.node].frame].kind)] = true;
    double lx = kMargin;
    for (int k = 0; k < 8; ++k) {
      if (!present[k]) continue;
      FlameFrame sample{"", static_cast<FrameKind>(k), "", ""};
      std::string name = frameKindName(static_cast<FrameKind>(k));
      out << "<rect x=\"" << number(lx) << "\" y=\"70\" width=\"10\" height=\"10\" fill=\"" << colourOf(sample)
          << "\"/><text x=\"" << number(lx + 14) << "\" y=\"79\">" << markupEscaped(name) << "</text>\n";
      lx += 14 + 7.5 * static_cast<double>(name.size()) + 16;
    }
  }
  double base = kTop + maxDepth * kFrameHeight;  // the root row's top: the flame grows upwards
  out << "<g id=\"frames\">\n";
  for (const Placed& p : placed) {
    std::string name, kind;
    int frame = -1;
    if (p.node == kAggregate) {
      name = "[" + std::to_string(p.count) + " frames narrower than " + number(minWidthPixels) + " px]";
      kind = "several frames";
    } else {
      frame = static_cast<int>(g.nodes[p.node].frame);
      name = g.frames[frame].name;
      kind = frameKindName(g.frames[frame].kind);
    }
    FlameFrame colour{name, p.node == kAggregate ? FrameKind::missing : g.frames[frame].kind, "", ""};
    double y = base - p.depth * kFrameHeight;
    double w = p.w * kWidth;
    // Details (module, file:line, value and share) are made by the script
    // from the frame's row in FRAMES: names are not repeated per frame.
    out << "<g class=\"f\" data-x=\"" << fraction(p.x) << "\" data-w=\"" << fraction(p.w) << "\" data-depth=\""
        << p.depth << "\" data-f=\"" << frame << "\" data-name=\"" << markupEscaped(name) << "\" data-kind=\"" << kind
        << "\" data-value=\"" << p.weight << "\"><rect x=\"" << number(kMargin + p.x * kWidth) << "\" y=\"" << number(y)
        << "\" width=\"" << number(w) << "\" height=\"" << number(kFrameHeight - 1) << "\" rx=\"2\" fill=\""
        << colourOf(colour) << "\"/><text x=\"" << number(kMargin + p.x * kWidth + 3) << "\" y=\""
        << number(y + kFrameHeight - 5) << "\"></text></g>\n";
  }
  out << "</g>\n";
  double notesY = height - kBottom + 16;
  out << "<text id=\"details\" x=\"" << number(kMargin) << "\" y=\"" << number(notesY) << "\"> </text>\n";
  std::string said;
  if (aggregated)
    said += std::to_string(aggregated) + " frame" + (aggregated == 1 ? "" : "s") + " narrower than " +
            number(minWidthPixels) + " px drawn as runs of siblings, their frames above not drawn. ";
  if (droppedFrames)
    said += std::to_string(droppedFrames) + " frame" + (droppedFrames == 1 ? "" : "s") + " narrower than " +
            number(minWidthPixels) + " px left out (" + percent(droppedWeight, total) + " of the weight). ";
  said += g.caveats();
  if (total == 0) said += "Nothing to show: no weight in the selection. ";
  out << "<text id=\"notes\" x=\"" << number(kMargin) << "\" y=\"" << number(notesY + 18) << "\">"
      << markupEscaped(said) << "</text>\n";
  // Each frame's module and source line, for the details line.
  std::string frames = "var FRAMES = [";
  for (size_t i = 0; i < g.frames.size(); ++i) {
    if (i) frames += ',';
    frames += '[';
    appendScriptString(frames, g.frames[i].module);
    frames += ',';
    appendScriptString(frames, g.frames[i].location);
    frames += ']';
  }
  frames += "];\nvar UNIT = \"";
  frames += g.weight == FlameWeight::count ? "count" : "ns";
  frames += "\";\n";
  out << "<script type=\"text/ecmascript\"><![CDATA[\n" << frames << kScript << "]]></script>\n</svg>\n";
}

}  // namespace gtap::readers
