// A bar chart as SVG, readable with many categories (a network's ~70
// layers): horizontal bars, one row per category with its (abbreviated)
// label on the left and one bar per series, rows shaded alternately, the
// value axis on top and at the bottom, dashed reference lines (a budget, a
// target interval), a legend. Each bar carries a <title> with its category,
// series and exact value (a tooltip without JavaScript). Used for per-layer
// cycles and per-layer resources against the budget.
#pragma once

#include <string>
#include <vector>

namespace mixtd::report {

struct BarSeries {
  std::string name, colour;
  std::vector<double> values;             // one per category; not finite (or ≤ 0 on a log axis): no bar
  std::vector<std::string> colours = {};  // optional, per category: overrides colour (a bottleneck)
};

struct BarLine {
  std::string name, colour;
  double value = 0;
};

enum class Scale { linear, log };

std::string bars_svg(const std::string& title, const std::vector<std::string>& categories,
                     const std::vector<BarSeries>& series, const std::vector<BarLine>& lines = {},
                     const std::string& value_label = "", Scale scale = Scale::linear);

// A category label cut to at most `max_chars` characters (UTF-8 aware),
// keeping its start and its end around "…":
// "features.denseblock4.denselayer16.conv2" -> "features.den…yer16.conv2".
std::string abbreviate(const std::string& label, std::size_t max_chars = 24);

}  // namespace mixtd::report
