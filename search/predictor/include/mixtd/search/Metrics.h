// How well a predictor ranks and estimates designs (docs/predictor.md):
// relative errors against the simulated figure and rank correlations.
#pragma once

#include <vector>

namespace mixtd::search {

struct Accuracy {
  double mape = 0;      // mean |p − a| / a, as a fraction
  double rmspe = 0;     // sqrt(mean ((p − a) / a)²)
  double within5 = 0;   // share of |p − a| / a ≤ 0.05
  double within10 = 0;  // share of |p − a| / a ≤ 0.10
  double kendall = 0;   // Kendall τ-b
  double spearman = 0;  // Spearman ρ (Pearson on average ranks)
};

// `predicted` and `actual` of equal length ≥ 2, actual > 0. Throws
// mixtd::Error otherwise.
Accuracy accuracy(const std::vector<double>& predicted, const std::vector<double>& actual);

}  // namespace mixtd::search
