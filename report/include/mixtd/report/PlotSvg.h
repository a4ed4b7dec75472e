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
  // Dots only: a text beside each point (empty: none), nudged down where it
  // would overlap an earlier one; `outlined` draws the dot opaque with a
  // dark ring, so a labelled point stands out of a cloud.
  std::vector<std::string> labels{};
  bool outlined = false;
};

struct PlotLine {
  std::string name, colour;
  double value = 0;
  bool vertical = true;
};

// A labelled design drawn over a plot (the search's baselines and answer).
struct PlotMarker {
  std::string name;  // its label and legend entry
  double x = 0, y = 0;
};

// One outlined, labelled series per marker (draw them after the cloud), in
// one colour per name, the same in every plot: uniform, greedy, alds and
// answer have their own.
std::vector<PlotSeries> marker_series(const std::vector<PlotMarker>& markers);
// The markers' y as horizontal reference lines, for a plot against time or
// generation (the convergence), in the colours of marker_series().
std::vector<PlotLine> marker_levels(const std::vector<PlotMarker>& markers);

std::string plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                     const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines = {});

}  // namespace mixtd::report
