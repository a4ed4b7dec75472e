// A predicted-vs-simulated scatter plot as SVG (no plotting package
// needed): log-log axes, the y = x diagonal and the ±10% band, one colour
// per series.
#pragma once

#include <string>
#include <vector>

namespace mixtd::report {

struct ScatterSeries {
  std::string name, colour;
  std::vector<double> x, y;  // x simulated, y predicted; all > 0
};

std::string scatter_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                        const std::vector<ScatterSeries>& series);

}  // namespace mixtd::report
