#include "mixtd/report/PlotSvg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "Axis.h"
#include "mixtd/report/SvgText.h"

namespace mixtd::report {

using axis::nice_step;
using axis::tick_label;
using svg::escape;
using svg::num;

namespace {

std::string marker_colour(const std::string& name, std::size_t index) {
  if (name == "answer") return "#000000";
  if (name == "uniform") return "#9467bd";
  if (name == "greedy") return "#8c564b";
  if (name == "alds") return "#e377c2";
  constexpr const char* kOthers[] = {"#17becf", "#bcbd22", "#7f7f7f"};
  return kOthers[index % 3];
}

}  // namespace

std::vector<PlotSeries> marker_series(const std::vector<PlotMarker>& markers) {
  std::vector<PlotSeries> out;
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const PlotMarker& m = markers[i];
    PlotSeries s{m.name, marker_colour(m.name, i), {m.x}, {m.y}, false, 6};
    s.labels = {m.name};
    s.outlined = true;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PlotLine> marker_levels(const std::vector<PlotMarker>& markers) {
  std::vector<PlotLine> out;
  for (std::size_t i = 0; i < markers.size(); ++i)
    out.push_back({markers[i].name, marker_colour(markers[i].name, i), markers[i].y, false});
  return out;
}

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
  std::vector<std::pair<double, double>> label_at;  // the point labels drawn so far
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
      const std::string look =
          se.outlined ? "\" stroke=\"#222\" stroke-width=\"1.5\"/>\n" : "\" fill-opacity=\"0.6\"/>\n";
      for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
        if (!std::isfinite(se.x[i]) || !std::isfinite(se.y[i])) continue;
        const double cx = px(se.x[i]), cy = py(se.y[i]);
        s += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(se.radius) + "\" fill=\"" +
             svg::attr(se.colour) + look;
        if (i < se.labels.size() && !se.labels[i].empty()) {
          // Two baselines often land on one design (greedy's walk ends where
          // uniform's best is): stack their labels instead of overprinting.
          double ty = cy - se.radius - 3;
          for (bool moved = true; moved;) {
            moved = false;
            for (const auto& [lx, ly] : label_at)
              if (std::fabs(lx - cx) < 70 && std::fabs(ly - ty) < 12) ty = ly + 13, moved = true;
          }
          label_at.emplace_back(cx, ty);
          s += "<text x=\"" + num(cx + se.radius + 2) + "\" y=\"" + num(ty) + "\" font-size=\"11\" fill=\"#222\">" +
               escape(se.labels[i]) + "</text>\n";
        }
      }
    }
    add_legend(se.name, se.colour);
  }
  return s + "</svg>\n";
}

}  // namespace mixtd::report
