#include "mixtd/report/ScatterSvg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "mixtd/report/SvgText.h"

namespace mixtd::report {

namespace {

using svg::escape;
using svg::num;

std::string label(double v) {
  if (v >= 1e6) return svg::general(v / 1e6) + "M";
  if (v >= 1e3) return svg::general(v / 1e3) + "k";
  return svg::general(v);
}

}  // namespace

std::string scatter_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                        const std::vector<ScatterSeries>& series) {
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      for (double v : {s.x[i], s.y[i]})
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) lo = 1, hi = 10;
  const double l0 = std::log10(lo) - 0.05, l1 = std::log10(hi) + 0.05;
  constexpr double W = 640, H = 640, L = 80, R = 20, T = 50, B = 70;
  auto px = [&](double v) { return L + (std::log10(v) - l0) / (l1 - l0) * (W - L - R); };
  auto py = [&](double v) { return H - B - (std::log10(v) - l0) / (l1 - l0) * (H - T - B); };
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(W / 2) + "\" y=\"25\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
  // Ticks at 1, 2, 5 × 10^k inside the range; finer steps when the data
  // span less than a decade (FPS of one network's designs often do).
  const std::vector<double> mantissas = l1 - l0 < 1.0
                                            ? std::vector<double>{1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0}
                                            : std::vector<double>{1.0, 2.0, 5.0};
  for (int e = static_cast<int>(std::floor(l0)); e <= static_cast<int>(std::ceil(l1)); ++e)
    for (double m : mantissas) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) < l0 || std::log10(v) > l1) continue;
      s += "<line x1=\"" + num(px(v)) + "\" y1=\"" + num(T) + "\" x2=\"" + num(px(v)) + "\" y2=\"" + num(H - B) +
           "\" stroke=\"#eee\"/>\n<line x1=\"" + num(L) + "\" y1=\"" + num(py(v)) + "\" x2=\"" + num(W - R) +
           "\" y2=\"" + num(py(v)) + "\" stroke=\"#eee\"/>\n";
      s += "<text x=\"" + num(px(v)) + "\" y=\"" + num(H - B + 16) + "\" text-anchor=\"middle\">" + label(v) +
           "</text>\n<text x=\"" + num(L - 6) + "\" y=\"" + num(py(v) + 4) + "\" text-anchor=\"end\">" + label(v) +
           "</text>\n";
    }
  const double a = std::pow(10.0, l0), b = std::pow(10.0, l1);
  s += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"none\" stroke=\"#444\"/>\n";
  s += "<line x1=\"" + num(px(a)) + "\" y1=\"" + num(py(a)) + "\" x2=\"" + num(px(b)) + "\" y2=\"" + num(py(b)) +
       "\" stroke=\"#888\"/>\n";
  for (double f : {0.9, 1.1})
    s += "<line x1=\"" + num(px(a)) + "\" y1=\"" + num(py(a * f)) + "\" x2=\"" + num(px(b)) + "\" y2=\"" +
         num(py(b * f)) + "\" stroke=\"#888\" stroke-dasharray=\"4 4\"/>\n";
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 25) + "\" text-anchor=\"middle\">" + escape(x_label) +
       "</text>\n";
  s += "<text transform=\"translate(20," + num((T + H - B) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(y_label) + "</text>\n";
  double ly = T + 15;
  for (const auto& se : series) {
    for (std::size_t i = 0; i < se.x.size(); ++i)
      if (se.x[i] > 0 && se.y[i] > 0)
        s += "<circle cx=\"" + num(px(se.x[i])) + "\" cy=\"" + num(py(se.y[i])) + "\" r=\"2.5\" fill=\"" +
             svg::attr(se.colour) + "\" fill-opacity=\"0.6\"/>\n";
    s += "<circle cx=\"" + num(L + 15) + "\" cy=\"" + num(ly - 4) + "\" r=\"4\" fill=\"" + svg::attr(se.colour) +
         "\"/>\n<text x=\"" + num(L + 25) + "\" y=\"" + num(ly) + "\">" + escape(se.name) + "</text>\n";
    ly += 16;
  }
  s += "<text x=\"" + num(W - R - 5) + "\" y=\"" + num(H - B - 8) +
       "\" text-anchor=\"end\" fill=\"#666\">dashed: ±10%</text>\n</svg>\n";
  return s;
}

}  // namespace mixtd::report
