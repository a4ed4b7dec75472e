// Linear-axis ticks shared by the figures (PlotSvg, BarsSvg).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "mixtd/report/SvgText.h"

namespace mixtd::report::axis {

// A tick's text: M and k suffixes for large values, else as many decimals
// as the step needs.
inline std::string tick_label(double v, double step) {
  const double a = std::fabs(v);
  if (a >= 1e6) return svg::general(v / 1e6) + "M";
  if (a >= 1e4) return svg::general(v / 1e3) + "k";
  if (step >= 1) return svg::fixed(v, 0);
  return svg::fixed(v, std::max(0, static_cast<int>(std::ceil(-std::log10(step)))));
}

// A "nice" tick step (1, 2 or 5 × 10^k) giving about `ticks` ticks over span.
inline double nice_step(double span, double ticks = 6) {
  const double raw = span / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace mixtd::report::axis
