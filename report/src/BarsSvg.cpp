#include "mixtd/report/BarsSvg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "Axis.h"
#include "mixtd/report/Format.h"
#include "mixtd/report/SvgText.h"

namespace mixtd::report {

using svg::attr;
using svg::escape;
using svg::num;

namespace {

// Where each UTF-8 code point of s starts.
std::vector<std::size_t> code_points(const std::string& s) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  return at;
}

struct ValueAxis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  std::vector<std::string> labels;
  double pos(double v) const {  // 0 at lo, 1 at hi
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
  }
};

ValueAxis make_axis(const std::vector<BarSeries>& series, const std::vector<BarLine>& lines, Scale scale) {
  ValueAxis a;
  a.log = scale == Scale::log;
  double lo = std::numeric_limits<double>::max(), hi = -lo;
  auto see = [&](double v) {
    if (std::isfinite(v) && (!a.log || v > 0)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  for (const auto& s : series)
    for (double v : s.values) see(v);
  for (const auto& l : lines) see(l.value);
  if (a.log) {
    if (lo > hi) lo = 1, hi = 10;
    // From the 1-2-5 step below the smallest value (so that its bar shows)
    // to the one at or above the largest; ticks finer the fewer decades.
    std::vector<double> grid;
    const int e0 = static_cast<int>(std::floor(std::log10(lo))), e1 = static_cast<int>(std::ceil(std::log10(hi)));
    for (int e = e0 - 1; e <= e1 + 1; ++e)
      for (double m : {1.0, 2.0, 5.0}) grid.push_back(m * std::pow(10.0, e));
    std::size_t i0 = 0, i1 = grid.size() - 1;
    while (i0 + 1 < grid.size() && grid[i0 + 1] < lo * (1 - 1e-9)) ++i0;
    while (i1 > i0 + 1 && grid[i1 - 1] >= hi * (1 - 1e-9)) --i1;
    a.lo = grid[i0], a.hi = grid[i1];
    const int decades = static_cast<int>(std::ceil(std::log10(a.hi / a.lo) - 1e-9));
    const std::vector<double> mantissas = decades <= 1   ? std::vector<double>{1, 1.5, 2, 3, 4, 5, 6, 8}
                                          : decades <= 3 ? std::vector<double>{1, 2, 5}
                                                         : std::vector<double>{1};
    for (int e = e0 - 1; e <= e1 + 1; ++e)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v < a.lo * (1 - 1e-9) || v > a.hi * (1 + 1e-9)) continue;
        a.ticks.push_back(v);
        a.labels.push_back(axis::tick_label(v, v));
      }
    return a;
  }
  if (lo > hi) lo = 0, hi = 1;
  lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (hi - lo < 1e-12) hi = lo + 1;
  const double step = axis::nice_step(hi - lo, 5);
  const long i0 = std::lround(std::floor(lo / step)), i1 = std::lround(std::ceil(hi / step));
  a.lo = static_cast<double>(i0) * step, a.hi = static_cast<double>(i1) * step;
  for (long i = i0; i <= i1; ++i) {
    a.ticks.push_back(static_cast<double>(i) * step);
    a.labels.push_back(axis::tick_label(static_cast<double>(i) * step, step));
  }
  return a;
}

}  // namespace

std::string abbreviate(const std::string& label, std::size_t max_chars) {
  const auto at = code_points(label);
  if (at.size() <= max_chars) return label;
  if (max_chars < 3) return label.substr(0, at[max_chars]);
  const std::size_t tail = (max_chars - 1) / 2, head = max_chars - 1 - tail;
  return label.substr(0, at[head]) + "…" + label.substr(at[at.size() - tail]);
}

std::string bars_svg(const std::string& title, const std::vector<std::string>& categories,
                     const std::vector<BarSeries>& series, const std::vector<BarLine>& lines,
                     const std::string& value_label, Scale scale) {
  const ValueAxis ax = make_axis(series, lines, scale);
  const std::size_t n = categories.size(), ns = std::max<std::size_t>(1, series.size());
  const double bar = ns == 1 ? 12 : ns == 2 ? 8 : 6, row = static_cast<double>(ns) * bar + 6;
  std::size_t chars = 4;
  for (const auto& c : categories) chars = std::max(chars, code_points(abbreviate(c)).size());
  constexpr double W = 800, R = 190, T = 64, B = 50;
  const double L = 16 + 6.8 * static_cast<double>(chars);
  const double H = T + (n == 0 ? 40 : row * static_cast<double>(n)) + B;
  auto px = [&](double v) { return L + std::clamp(ax.pos(v), 0.0, 1.0) * (W - L - R); };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
                  "fill=\"white\"/>\n";
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) +
       "</text>\n";
  for (std::size_t i = 1; i < n; i += 2)
    s += "<rect x=\"" + num(L) + "\" y=\"" + num(T + row * static_cast<double>(i)) + "\" width=\"" + num(W - L - R) +
         "\" height=\"" + num(row) + "\" fill=\"#f4f4f4\"/>\n";
  for (std::size_t i = 0; i < ax.ticks.size(); ++i) {
    const std::string x = num(px(ax.ticks[i]));
    s += "<line x1=\"" + x + "\" y1=\"" + num(T) + "\" x2=\"" + x + "\" y2=\"" + num(H - B) + "\" stroke=\"#ddd\"/>\n";
    for (double y : {T - 6, H - B + 14})
      s += "<text x=\"" + x + "\" y=\"" + num(y) + "\" text-anchor=\"middle\">" + ax.labels[i] + "</text>\n";
  }
  if (n == 0)
    s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(T + 24) +
         "\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n";
  const double base = px(ax.log ? ax.lo : 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double y = T + row * static_cast<double>(i);
    const std::string short_name = abbreviate(categories[i]);
    s += "<text x=\"" + num(L - 6) + "\" y=\"" + num(y + row / 2 + 4) + "\" text-anchor=\"end\">" +
         (short_name != categories[i] ? "<title>" + escape(categories[i]) + "</title>" : "") + escape(short_name) +
         "</text>\n";
    for (std::size_t k = 0; k < series.size(); ++k) {
      if (i >= series[k].values.size()) continue;
      const double v = series[k].values[i];
      if (!std::isfinite(v) || (ax.log && v <= 0)) continue;
      const double x = px(v), x0 = std::min(base, x), w = std::max(std::fabs(x - base), 0.5);
      const auto& cs = series[k].colours;
      const std::string& colour = i < cs.size() && !cs[i].empty() ? cs[i] : series[k].colour;
      s += "<rect x=\"" + num(x0) + "\" y=\"" + num(y + 3 + bar * static_cast<double>(k)) + "\" width=\"" + num(w) +
           "\" height=\"" + num(bar - 1) + "\" fill=\"" + attr(colour) + "\"><title>" + escape(categories[i]) + ": " +
           escape(series[k].name) + " = " + format_number(v) + "</title></rect>\n";
    }
  }
  s += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (!ax.log)
    s += "<line x1=\"" + num(base) + "\" y1=\"" + num(T) + "\" x2=\"" + num(base) + "\" y2=\"" + num(H - B) +
         "\" stroke=\"#333\"/>\n";
  int legend = 0;
  auto add_legend = [&](const std::string& name, const std::string& colour) {
    const double y = T + 10 + 18 * legend++;
    s += "<rect x=\"" + num(W - R + 12) + "\" y=\"" + num(y - 8) + "\" width=\"10\" height=\"10\" fill=\"" +
         attr(colour) + "\"/>\n<text x=\"" + num(W - R + 28) + "\" y=\"" + num(y + 1) + "\">" + escape(name) +
         "</text>\n";
  };
  for (const auto& se : series) add_legend(se.name, se.colour);
  for (const auto& l : lines) {
    if (!std::isfinite(l.value) || (ax.log && l.value <= 0)) continue;
    const std::string x = num(px(l.value));
    s += "<line x1=\"" + x + "\" y1=\"" + num(T) + "\" x2=\"" + x + "\" y2=\"" + num(H - B) + "\" stroke=\"" +
         attr(l.colour) + "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
    add_legend(l.name + " = " + format_number(l.value), l.colour);
  }
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 14) + "\" text-anchor=\"middle\">" +
       escape(value_label) + "</text>\n";
  return s + "</svg>\n";
}

}  // namespace mixtd::report
