#include "mixtd/report/PlotSvg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "Axis.h"
#include "mixtd/report/SvgText.h"

namespace mixtd::report {

using axis::nice_step;
using axis::tick_label;
using svg::escape;
using svg::num;

std::string plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                     const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines) {
  double x0 = std::numeric_limits<double>::max(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  for (const auto& l : lines) {
    if (l.vertical)
      x0 = std::min(x0, l.value), x1 = std::max(x1, l.value);
    else
      y0 = std::min(y0, l.value), y1 = std::max(y1, l.value);
  }
  if (x0 > x1) x0 = 0, x1 = 1;
  if (y0 > y1) y0 = 0, y1 = 1;
  if (x1 - x0 < 1e-12) x0 -= 0.5, x1 += 0.5;
  if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
  const double xs = nice_step(x1 - x0), ys = nice_step(y1 - y0);
  x0 = std::floor(x0 / xs) * xs, x1 = std::ceil(x1 / xs) * xs;
  y0 = std::floor(y0 / ys) * ys, y1 = std::ceil(y1 / ys) * ys;
  constexpr double W = 720, H = 480, L = 80, R = 170, T = 50, B = 60;
  auto px = [&](double v) { return L + (v - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double v) { return H - B - (v - y0) / (y1 - y0) * (H - T - B); };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
                  "fill=\"white\"/>\n";
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"25\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) +
       "</text>\n";
  for (double v = x0; v <= x1 + xs / 2; v += xs) {
    s += "<line x1=\"" + num(px(v)) + "\" y1=\"" + num(T) + "\" x2=\"" + num(px(v)) + "\" y2=\"" + num(H - B) +
         "\" stroke=\"#eee\"/>\n";
    s += "<text x=\"" + num(px(v)) + "\" y=\"" + num(H - B + 16) + "\" text-anchor=\"middle\">" + tick_label(v, xs) +
         "</text>\n";
  }
  for (double v = y0; v <= y1 + ys / 2; v += ys) {
    s += "<line x1=\"" + num(L) + "\" y1=\"" + num(py(v)) + "\" x2=\"" + num(W - R) + "\" y2=\"" + num(py(v)) +
         "\" stroke=\"#eee\"/>\n";
    s += "<text x=\"" + num(L - 6) + "\" y=\"" + num(py(v) + 4) + "\" text-anchor=\"end\">" + tick_label(v, ys) +
         "</text>\n";
  }
  s += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"none\" stroke=\"#333\"/>\n";
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 18) + "\" text-anchor=\"middle\">" + escape(x_label) +
       "</text>\n";
  s += "<text transform=\"translate(20," + num((T + H - B) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(y_label) + "</text>\n";
  int legend = 0;
  auto add_legend = [&](const std::string& name, const std::string& colour) {
    const double y = T + 10 + 18 * legend++;
    s += "<rect x=\"" + num(W - R + 12) + "\" y=\"" + num(y - 8) + "\" width=\"10\" height=\"10\" fill=\"" +
         svg::attr(colour) + "\"/>\n<text x=\"" + num(W - R + 28) + "\" y=\"" + num(y + 1) + "\">" + escape(name) +
         "</text>\n";
  };
  for (const auto& l : lines) {
    const bool v = l.vertical;
    const double a = v ? px(l.value) : py(l.value);
    s += "<line x1=\"" + num(v ? a : L) + "\" y1=\"" + num(v ? T : a) + "\" x2=\"" + num(v ? a : W - R) + "\" y2=\"" +
         num(v ? H - B : a) + "\" stroke=\"" + svg::attr(l.colour) + "\" stroke-dasharray=\"6,4\"/>\n";
    add_legend(l.name, l.colour);
  }
  for (const auto& se : series) {
    if (se.line) {
      std::string pts;
      for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
        if (std::isfinite(se.x[i]) && std::isfinite(se.y[i])) pts += num(px(se.x[i])) + "," + num(py(se.y[i])) + " ";
      s += "<polyline fill=\"none\" stroke=\"" + svg::attr(se.colour) + "\" stroke-width=\"2\" points=\"" + pts +
           "\"/>\n";
    } else {
      for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
        if (std::isfinite(se.x[i]) && std::isfinite(se.y[i]))
          s += "<circle cx=\"" + num(px(se.x[i])) + "\" cy=\"" + num(py(se.y[i])) + "\" r=\"" + num(se.radius) +
               "\" fill=\"" + svg::attr(se.colour) + "\" fill-opacity=\"0.6\"/>\n";
    }
    add_legend(se.name, se.colour);
  }
  return s + "</svg>\n";
}

}  // namespace mixtd::report
