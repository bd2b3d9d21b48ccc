#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

#include "gtap/readers/roofline.h"
#include "gtap/readers/table.h"
#include "markup.h"

namespace gtap::readers {

namespace {

constexpr double kWidth = 760, kHeight = 480;
constexpr double kLeft = 90, kRight = 30, kTop = 50, kBottom = 60;

std::string num(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

std::string px(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", x);
  return text;
}

// 1.5 T, 20 G, ...: a value with an SI prefix.
std::string si(double v) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 1000 && i < 6) {
    a /= 1000;
    v /= 1000;
    ++i;
  }
  char text[40];
  if (std::fabs(v) < 1e-3 && v != 0) std::snprintf(text, sizeof text, "%.3g", v);
  else std::snprintf(text, sizeof text, "%.3g%s%s", v, *prefixes[i] ? " " : "", prefixes[i]);
  return text;
}

struct Axis {
  double lo = 1, hi = 10;  // powers of ten
  void cover(double v) {
    if (!(v > 0) || !std::isfinite(v)) return;
    if (!set_) {
      lo = hi = v;
      set_ = true;
      return;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void round() {
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
  }
  double at(double v, double from, double to) const {
    double f = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return from + f * (to - from);
  }

 private:
  bool set_ = false;
};

}  // namespace

void writeRooflineSvg(const std::vector<RooflinePoint>& points, const std::string& title, std::ostream& out,
                      bool standalone) {
  Axis x, y;
  // The roofs of the devices the kernels ran on, by their peaks.
  std::map<std::pair<double, double>, std::string> roofs;
  for (const auto& p : points) {
    if (p.intensity > 0) {
      x.cover(p.intensity);
      y.cover(p.flopsPerSecond);
    }
    if (p.peakFlopsPerSecond > 0 && p.peakBytesPerSecond > 0) {
      auto& name = roofs[{p.peakFlopsPerSecond, p.peakBytesPerSecond}];
      if (name.empty()) name = p.device;
      x.cover(p.peakFlopsPerSecond / p.peakBytesPerSecond);
      y.cover(p.peakFlopsPerSecond);
    }
  }
  x.cover(x.lo / 10);
  x.cover(x.hi * 10);
  y.cover(y.lo / 10);
  y.cover(y.hi * 2);
  x.round();
  y.round();
  const double left = kLeft, right = kWidth - kRight, top = kTop, bottom = kHeight - kBottom;
  auto X = [&](double v) { return x.at(v, left, right); };
  auto Y = [&](double v) { return y.at(v, bottom, top); };

  if (standalone) out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg" << (standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "") << " class=\"roofline\" width=\""
      << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" fill=\"white\"/>\n";
  out << "<text x=\"" << kWidth / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">" << markupEscaped(title)
      << "</text>\n";
  // Decades on both axes.
  out << "<g class=\"grid\" stroke=\"#ddd\">\n";
  for (double v = x.lo; v <= x.hi * 1.0001; v *= 10)
    out << "<line x1=\"" << px(X(v)) << "\" y1=\"" << px(top) << "\" x2=\"" << px(X(v)) << "\" y2=\"" << px(bottom)
        << "\"/>\n";
  for (double v = y.lo; v <= y.hi * 1.0001; v *= 10)
    out << "<line x1=\"" << px(left) << "\" y1=\"" << px(Y(v)) << "\" x2=\"" << px(right) << "\" y2=\"" << px(Y(v))
        << "\"/>\n";
  out << "</g>\n<g class=\"labels\" fill=\"#333\">\n";
  for (double v = x.lo; v <= x.hi * 1.0001; v *= 10)
    out << "<text x=\"" << px(X(v)) << "\" y=\"" << px(bottom + 16) << "\" text-anchor=\"middle\">" << si(v)
        << "</text>\n";
  for (double v = y.lo; v <= y.hi * 1.0001; v *= 10)
    out << "<text x=\"" << px(left - 6) << "\" y=\"" << px(Y(v) + 4) << "\" text-anchor=\"end\">" << si(v)
        << "</text>\n";
  out << "<text x=\"" << px((left + right) / 2) << "\" y=\"" << px(kHeight - 18)
      << "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n";
  out << "<text transform=\"translate(18 " << px((top + bottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">achieved FLOP/s</text>\n</g>\n";
  out << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(right - left) << "\" height=\""
      << px(bottom - top) << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (const auto& [peaks, device] : roofs) {
    auto [flops, bytes] = peaks;
    double ridge = flops / bytes;
    // The bandwidth slope from the left edge (or the bottom) to the ridge,
    // then flat at the peak.
    double startX = std::max(x.lo, y.lo / bytes);
    out << "<polyline class=\"roof\" data-device=\"" << markupEscaped(device) << "\" data-peak-flops=\"" << num(flops)
        << "\" data-peak-bytes=\"" << num(bytes) << "\" fill=\"none\" stroke=\"#c33\" stroke-width=\"2\" points=\""
        << px(X(startX)) << ',' << px(Y(startX * bytes)) << ' ' << px(X(ridge)) << ',' << px(Y(flops)) << ' '
        << px(right) << ',' << px(Y(flops)) << "\"><title>" << markupEscaped(device) << ": peak " << si(flops)
        << "FLOP/s, " << si(bytes) << "B/s</title></polyline>\n";
    out << "<line class=\"ridge\" data-intensity=\"" << num(ridge) << "\" x1=\"" << px(X(ridge)) << "\" y1=\""
        << px(Y(flops)) << "\" x2=\"" << px(X(ridge)) << "\" y2=\"" << px(bottom)
        << "\" stroke=\"#c33\" stroke-dasharray=\"4 3\"/>\n";
    out << "<text x=\"" << px(std::min(X(ridge) + 4, right - 120)) << "\" y=\"" << px(Y(flops) - 6)
        << "\" fill=\"#c33\">" << markupEscaped(device) << " ridge " << si(ridge) << " FLOP/B</text>\n";
  }
  size_t i = 0;
  for (const auto& p : points) {
    if (!(p.intensity > 0) || !(p.flopsPerSecond > 0)) continue;
    double hue = std::fmod(37.0 * static_cast<double>(i++), 360.0);
    std::string name = p.process.empty() ? p.kernel : p.process + ": " + p.kernel;
    out << "<circle class=\"point\" data-kernel=\"" << markupEscaped(name) << "\" data-intensity=\""
        << num(p.intensity) << "\" data-flops=\"" << num(p.flopsPerSecond) << "\" cx=\"" << px(X(p.intensity))
        << "\" cy=\"" << px(Y(p.flopsPerSecond)) << "\" r=\"5\" fill=\"hsl(" << hue
        << ",65%,45%)\" stroke=\"black\"><title>" << markupEscaped(name) << ": " << si(p.intensity) << " FLOP/B, "
        << si(p.flopsPerSecond) << "FLOP/s";
    if (p.attainable > 0) out << ", " << px(100 * p.ofAttainable) << "% of the roof";
    out << "</title></circle>\n";
    out << "<text x=\"" << px(X(p.intensity) + 7) << "\" y=\"" << px(Y(p.flopsPerSecond) - 7)
        << "\" font-size=\"11\">" << markupEscaped(name) << "</text>\n";
  }
  if (!i)
    out << "<text x=\"" << px((left + right) / 2) << "\" y=\"" << px((top + bottom) / 2)
        << "\" text-anchor=\"middle\" fill=\"#888\">no kernel with both FLOP and byte counters</text>\n";
  out << "</svg>\n";
}

std::string rooflineHtmlSection(const std::vector<RooflinePoint>& points) {
  std::ostringstream out;
  out << "<section id=\"roofline\"><h2 style=\"font-size:16px\">Roofline</h2>\n"
         "<div>Achieved FLOP/s against arithmetic intensity (FLOP per byte) for the kernels whose FLOP and byte "
         "counters were read, under each device's roof (docs/counters.md).</div>\n";
  writeRooflineSvg(points, "Roofline", out, false);
  out << "<table style=\"border-collapse:collapse;font-size:13px\">\n<tr>";
  for (const char* h : {"kernel", "device", "FLOP", "bytes", "time", "FLOP/byte", "FLOP/s", "bytes/s", "of the roof"})
    out << "<th style=\"text-align:left;padding:2px 8px\">" << h << "</th>";
  out << "</tr>\n";
  for (const auto& p : points) {
    std::string name = p.process.empty() ? p.kernel : p.process + ": " + p.kernel;
    out << "<tr class=\"roofline-kernel\"><td>" << markupEscaped(name) << "</td><td>" << markupEscaped(p.device)
        << "</td><td>" << si(p.flops) << "</td><td>" << si(p.bytes) << "</td><td>" << formatNanoseconds(p.timeNs)
        << "</td><td>" << (p.intensity > 0 ? num(p.intensity) : "-") << "</td><td>" << si(p.flopsPerSecond)
        << "</td><td>" << si(p.bytesPerSecond) << "</td><td>"
        << (p.attainable > 0 ? px(100 * p.ofAttainable) + "%" : "-") << "</td></tr>\n";
  }
  out << "</table></section>\n";
  return out.str();
}

}  // namespace gtap::readers
