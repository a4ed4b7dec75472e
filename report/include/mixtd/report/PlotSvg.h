// A plain x-y plot as SVG with linear axes (no plotting package needed):
// series drawn as points or lines, optional vertical and horizontal
// reference lines (a target), a legend. Used for the search's convergence
// and accuracy-vs-FPS plots.
#pragma once

#include <string>
#include <vector>

namespace mixtd::report {

struct PlotSeries {
  std::string name, colour;
  std::vector<double> x, y;
  bool line = false;    // connect the points in order (else: dots)
  double radius = 2.5;  // dots
};

struct PlotLine {
  std::string name, colour;
  double value = 0;
  bool vertical = true;
};

std::string plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                     const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines = {});

}  // namespace mixtd::report
