// Random-forest regression (Breiman 2001) for the performance predictor
// (SPEC "The search"; docs/predictor.md).
//
// CART regression trees on bootstrap samples, a random subset of `mtry`
// features tried at every split, grown to `max_depth` / `min_leaf`. Features
// are binned once per fit (every distinct value its own bin up to `max_bins`,
// quantiles beyond), so a split search is a histogram scan rather than a
// sort; thresholds are stored as real values half-way between bins, so
// prediction reads raw features. Every tree draws from its own seed
// (seed, tree index): a fit is identical for any number of threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mixtd::search {

struct ForestParams {
  int trees = 370;
  int mtry = 0;       // features tried per split; 0 = max(1, features / 3)
  int max_depth = 0;  // 0 = grow until min_leaf stops it
  // Bootstrap samples per leaf at least; 5 is the regression default of
  // Breiman and Cutler's randomForest, and keeps 370 trees in L2 cache.
  int min_leaf = 5;
  int max_bins = 64;             // 2..256
  double sample_fraction = 1.0;  // bootstrap draws / rows, in (0, 1]
  std::uint64_t seed = 1;
  int threads = 0;  // 0 = hardware threads
};

// Rows × features, row-major (the layout of a CSV).
struct FeatureMatrix {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;
  const double* row(std::size_t i) const { return values.data() + i * cols; }
};

struct ForestNode {
  std::int32_t feature = -1;  // -1: leaf
  std::int32_t left = 0;      // right child = left + 1
  double threshold = 0;       // go left iff x[feature] <= threshold
  double value = 0;           // mean target of the node's bootstrap samples
};

class RandomForest {
 public:
  // Throws mixtd::Error on an empty or ragged matrix, a non-finite value
  // (naming the row and feature), or an illegal parameter.
  static RandomForest fit(const FeatureMatrix& x, const std::vector<double>& y, const ForestParams& params = {},
                          std::vector<std::string> feature_names = {});

  std::size_t features() const { return feature_names_.size(); }
  std::size_t trees() const { return trees_.size(); }
  const ForestParams& params() const { return params_; }
  const std::vector<std::string>& feature_names() const { return feature_names_; }

  // Mean over trees. `row` has features() values; non-finite values throw.
  double predict(const double* row) const;
  std::vector<double> predict(const FeatureMatrix& x) const;
  // Every tree's prediction: their spread is the forest's uncertainty.
  std::vector<double> tree_predictions(const double* row) const;
  double spread(const double* row) const;  // standard deviation over trees

  // Out-of-bag: each training row predicted by the trees that did not draw
  // it (NaN where every tree did). RMSE and R² over rows that have one.
  const std::vector<double>& oob_predictions() const { return oob_; }
  double oob_rmse() const { return oob_rmse_; }
  double oob_r2() const { return oob_r2_; }

  // Mean decrease in squared error per feature, normalised to sum 1.
  const std::vector<double>& impurity_importance() const { return impurity_; }
  // Increase in mean squared error on (x, y) when feature j is shuffled,
  // averaged over `repeats` seeded shuffles.
  std::vector<double> permutation_importance(const FeatureMatrix& x, const std::vector<double>& y, int repeats = 3,
                                             std::uint64_t seed = 1) const;

  // Free-form facts a tool stores with the model (target, constants).
  std::map<std::string, std::string> metadata;

  // Versioned binary file, written atomically. load() refuses another
  // format version, a foreign or truncated file, naming the path.
  static constexpr int kFormatVersion = 1;
  void save(const std::filesystem::path& path) const;
  static RandomForest load(const std::filesystem::path& path);

  const std::vector<ForestNode>& tree(std::size_t t) const { return trees_[t]; }

 private:
  void check_row(const double* row) const;
  double predict_unchecked(const double* row) const;

  ForestParams params_;
  std::vector<std::string> feature_names_;
  std::vector<std::vector<ForestNode>> trees_;
  std::vector<double> oob_, impurity_;
  double oob_rmse_ = 0, oob_r2_ = 0;
};

}  // namespace mixtd::search
