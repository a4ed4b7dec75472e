// From a labelled CSV (Dataset.h) to what a predictor trains and is judged
// on: the feature matrix, the target, and the figures it is compared with
// (docs/predictor.md).
#pragma once

#include <string>
#include <vector>

#include "mixtd/search/Dataset.h"

namespace mixtd::search {

// What the forest learns: the simulated batch-1 FPS itself, or its ratio to
// the analytical estimate (a correction of the model; predicted FPS =
// ratio × analytical FPS).
enum class Target { Fps, Ratio };
Target parse_target(const std::string& s);  // "fps" | "ratio"; throws naming the legal values
std::string to_string(Target t);

struct LabelledSet {
  std::vector<std::string> features;
  std::vector<double> x;                            // rows × features, row-major
  std::vector<double> y;                            // the target
  std::vector<double> simulated, analytical, macs;  // batch-1 FPS, FPS, MACs per row
  std::size_t rows() const { return y.size(); }
};

// Every column but index, seed and the simulated targets is a feature,
// unless `features` names them (a trained model's, in its order); a
// missing one is one line naming the data file, `model_source` (the model's
// file, if given) and the first feature where the two differ.
LabelledSet labelled_set(const Dataset& d, Target target, const std::vector<std::string>& features = {},
                         const std::string& model_source = "");

// The predicted batch-1 FPS of row i from a predicted target value.
double predicted_fps(const LabelledSet& s, Target target, std::size_t row, double value);

// The paper's MACs-only baseline: FPS ≈ k / MACs with k fitted on the
// training rows (the median of FPS·MACs: robust to outliers).
double fit_macs_constant(const LabelledSet& s);

}  // namespace mixtd::search
