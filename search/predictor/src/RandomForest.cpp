#include "mixtd/search/RandomForest.h"

#include <algorithm>
#include <armadillo>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <thread>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::search {

namespace {

// The training matrix binned once: bin(x) = number of cuts below x, so a
// split "bin <= b" is exactly "x <= cuts[b]" for training and new rows.
struct BinnedMatrix {
  std::size_t n = 0, p = 0;
  arma::Mat<std::uint8_t> bins;           // n × p, a feature per column
  std::vector<std::vector<double>> cuts;  // per feature: nbins − 1 thresholds
};

std::vector<double> bin_cuts(const double* column, std::size_t n, int max_bins) {
  std::vector<double> sorted(column, column + n);
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> unique;
  std::vector<std::size_t> counts;
  for (double v : sorted) {
    if (unique.empty() || v != unique.back()) {
      unique.push_back(v);
      counts.push_back(0);
    }
    ++counts.back();
  }
  std::vector<double> cuts;
  auto midpoint = [&](std::size_t i) { return unique[i] + (unique[i + 1] - unique[i]) / 2; };
  if (unique.size() <= static_cast<std::size_t>(max_bins)) {
    for (std::size_t i = 0; i + 1 < unique.size(); ++i) cuts.push_back(midpoint(i));
    return cuts;
  }
  // Quantile bins: close a bin once it holds its share of the rows.
  const double per_bin = static_cast<double>(n) / max_bins;
  std::size_t seen = 0;
  for (std::size_t i = 0; i + 1 < unique.size() && cuts.size() + 1 < static_cast<std::size_t>(max_bins); ++i) {
    seen += counts[i];
    if (static_cast<double>(seen) >= per_bin * static_cast<double>(cuts.size() + 1)) cuts.push_back(midpoint(i));
  }
  return cuts;
}

BinnedMatrix bin_matrix(const arma::mat& x, int max_bins) {
  BinnedMatrix b;
  b.n = x.n_rows;
  b.p = x.n_cols;
  b.bins.set_size(b.n, b.p);
  b.cuts.resize(b.p);
  for (std::size_t f = 0; f < b.p; ++f) {
    b.cuts[f] = bin_cuts(x.colptr(f), b.n, max_bins);
    const auto& c = b.cuts[f];
    for (std::size_t i = 0; i < b.n; ++i)
      b.bins(i, f) = static_cast<std::uint8_t>(std::lower_bound(c.begin(), c.end(), x(i, f)) - c.begin());
  }
  return b;
}

struct GrownTree {
  std::vector<ForestNode> nodes;
  std::vector<double> importance;                     // SSE decrease per feature
  std::vector<std::pair<std::uint32_t, double>> oob;  // (row, prediction)
};

double tree_predict(const std::vector<ForestNode>& nodes, const double* row) {
  std::int32_t i = 0;
  while (nodes[i].feature >= 0) {
    const ForestNode& n = nodes[i];
    i = n.left + (row[n.feature] > n.threshold ? 1 : 0);
  }
  return nodes[i].value;
}

// One CART tree on one bootstrap sample. Rows of a node are a range of
// `idx` (distinct drawn rows, weighted by how often they were drawn);
// children partition the range in place.
class TreeGrower {
 public:
  TreeGrower(const BinnedMatrix& b, const arma::vec& y, const ForestParams& params, int mtry)
      : b_(b), y_(y), params_(params), mtry_(mtry) {}

  GrownTree grow(std::uint64_t seed, const arma::mat& x) {
    Rng rng(seed);
    const std::size_t n = b_.n;
    std::vector<std::uint32_t> drawn(n, 0);
    const auto draws = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::llround(params_.sample_fraction * static_cast<double>(n))));
    for (std::size_t d = 0; d < draws; ++d) ++drawn[rng.below(n)];

    w_.assign(n, 0.0);
    wy_.assign(n, 0.0);
    idx_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (drawn[i] == 0) continue;
      idx_.push_back(static_cast<std::uint32_t>(i));
      w_[i] = drawn[i];
      wy_[i] = drawn[i] * y_[i];
    }
    features_.resize(b_.p);
    std::iota(features_.begin(), features_.end(), 0);
    hist_w_.assign(256, 0.0);
    hist_s_.assign(256, 0.0);

    GrownTree tree;
    tree.importance.assign(b_.p, 0.0);
    tree.nodes.emplace_back();
    struct Task {
      std::uint32_t begin, end;
      int depth;
      std::int32_t node;
    };
    std::vector<Task> stack{{0, static_cast<std::uint32_t>(idx_.size()), 0, 0}};
    while (!stack.empty()) {
      const Task t = stack.back();
      stack.pop_back();
      double W = 0, S = 0, SS = 0;
      for (std::uint32_t k = t.begin; k < t.end; ++k) {
        const std::uint32_t r = idx_[k];
        W += w_[r];
        S += wy_[r];
        SS += wy_[r] * y_[r];
      }
      tree.nodes[t.node].value = S / W;
      const double sse = SS - S * S / W;
      if (W < 2.0 * params_.min_leaf || (params_.max_depth > 0 && t.depth >= params_.max_depth) ||
          sse <= 1e-12 * std::max(1.0, SS))
        continue;
      const Split s = best_split(t.begin, t.end, W, S, rng);
      const double gain = s.proxy - S * S / W;
      if (s.feature < 0 || gain <= 1e-12 * std::max(1.0, SS)) continue;

      const std::uint8_t* col = b_.bins.colptr(s.feature);
      const auto mid = static_cast<std::uint32_t>(std::partition(idx_.begin() + t.begin, idx_.begin() + t.end,
                                                                 [&](std::uint32_t r) { return col[r] <= s.bin; }) -
                                                  idx_.begin());
      const auto left = static_cast<std::int32_t>(tree.nodes.size());
      ForestNode& node = tree.nodes[t.node];
      node.feature = s.feature;
      node.threshold = b_.cuts[s.feature][s.bin];
      node.left = left;
      tree.importance[s.feature] += gain;
      tree.nodes.emplace_back();
      tree.nodes.emplace_back();
      stack.push_back({mid, t.end, t.depth + 1, left + 1});
      stack.push_back({t.begin, mid, t.depth + 1, left});
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (drawn[i] != 0) continue;
      tree.oob.emplace_back(static_cast<std::uint32_t>(i), predict_column_major(tree.nodes, x, i));
    }
    return tree;
  }

 private:
  struct Split {
    int feature = -1;
    std::uint8_t bin = 0;
    double proxy = -std::numeric_limits<double>::infinity();  // S_L²/W_L + S_R²/W_R
  };

  static double predict_column_major(const std::vector<ForestNode>& nodes, const arma::mat& x, std::size_t row) {
    std::int32_t i = 0;
    while (nodes[i].feature >= 0) {
      const ForestNode& n = nodes[i];
      i = n.left + (x(row, n.feature) > n.threshold ? 1 : 0);
    }
    return nodes[i].value;
  }

  // Features in a fresh random order until mtry non-constant ones have been
  // tried (a feature constant in the node does not count, as in
  // scikit-learn, so small nodes still find a split when one exists).
  Split best_split(std::uint32_t begin, std::uint32_t end, double W, double S, Rng& rng) {
    Split best;
    int tried = 0;
    const std::size_t p = features_.size();
    for (std::size_t k = 0; k < p && tried < mtry_; ++k) {
      std::swap(features_[k], features_[k + rng.below(p - k)]);
      const int f = features_[k];
      const int nbins = static_cast<int>(b_.cuts[f].size()) + 1;
      if (nbins < 2) continue;
      const std::uint8_t* col = b_.bins.colptr(f);
      const std::uint32_t m = end - begin;
      bool varied;
      if (static_cast<int>(m) * 4 < nbins)
        varied = scan_sorted(col, begin, end, f, W, S, best);
      else
        varied = scan_histogram(col, begin, end, f, nbins, W, S, best);
      if (varied) ++tried;
    }
    return best;
  }

  void consider(double WL, double SL, double W, double S, int f, int bin, Split& best) const {
    const double WR = W - WL;
    if (WL < params_.min_leaf || WR < params_.min_leaf) return;
    const double SR = S - SL;
    const double proxy = SL * SL / WL + SR * SR / WR;
    if (proxy > best.proxy) {
      best.proxy = proxy;
      best.feature = f;
      best.bin = static_cast<std::uint8_t>(bin);
    }
  }

  bool scan_histogram(const std::uint8_t* col, std::uint32_t begin, std::uint32_t end, int f, int nbins, double W,
                      double S, Split& best) {
    std::fill_n(hist_w_.begin(), nbins, 0.0);
    std::fill_n(hist_s_.begin(), nbins, 0.0);
    for (std::uint32_t k = begin; k < end; ++k) {
      const std::uint32_t r = idx_[k];
      hist_w_[col[r]] += w_[r];
      hist_s_[col[r]] += wy_[r];
    }
    double WL = 0, SL = 0;
    int nonempty = 0;
    for (int bin = 0; bin < nbins; ++bin) {
      if (hist_w_[bin] == 0) continue;
      ++nonempty;
      WL += hist_w_[bin];
      SL += hist_s_[bin];
      if (WL >= W) break;  // weights are whole draw counts: exact
      consider(WL, SL, W, S, f, bin, best);
    }
    return nonempty > 1;
  }

  // Few rows, many bins: sort the node's rows by bin instead.
  bool scan_sorted(const std::uint8_t* col, std::uint32_t begin, std::uint32_t end, int f, double W, double S,
                   Split& best) {
    keys_.clear();
    for (std::uint32_t k = begin; k < end; ++k)
      keys_.push_back((static_cast<std::uint64_t>(col[idx_[k]]) << 32) | idx_[k]);
    std::sort(keys_.begin(), keys_.end());
    if ((keys_.front() >> 32) == (keys_.back() >> 32)) return false;
    double WL = 0, SL = 0;
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      const auto r = static_cast<std::uint32_t>(keys_[k]);
      WL += w_[r];
      SL += wy_[r];
      const auto bin = static_cast<int>(keys_[k] >> 32);
      if (k + 1 < keys_.size() && static_cast<int>(keys_[k + 1] >> 32) == bin) continue;
      if (k + 1 == keys_.size()) break;
      consider(WL, SL, W, S, f, bin, best);
    }
    return true;
  }

  const BinnedMatrix& b_;
  const arma::vec& y_;
  const ForestParams& params_;
  const int mtry_;
  std::vector<double> w_, wy_, hist_w_, hist_s_;
  std::vector<std::uint32_t> idx_;
  std::vector<int> features_;
  std::vector<std::uint64_t> keys_;
};

std::uint64_t tree_seed(std::uint64_t seed, std::size_t tree) {
  std::uint64_t s = seed ^ (0x9e3779b97f4a7c15ULL * (tree + 1));
  return splitmix64(s);
}

void check_params(const ForestParams& p, std::size_t features) {
  require(p.trees >= 1, "random forest: trees = " + std::to_string(p.trees) + "; at least 1");
  require(p.mtry >= 0 && static_cast<std::size_t>(p.mtry) <= features,
          "random forest: mtry = " + std::to_string(p.mtry) + "; legal: 0 (= features / 3) to " +
              std::to_string(features) + " (the number of features)");
  require(p.max_depth >= 0, "random forest: max_depth = " + std::to_string(p.max_depth) + "; 0 (unlimited) or more");
  require(p.min_leaf >= 1, "random forest: min_leaf = " + std::to_string(p.min_leaf) + "; at least 1");
  require(p.max_bins >= 2 && p.max_bins <= 256,
          "random forest: max_bins = " + std::to_string(p.max_bins) + "; legal: 2 to 256");
  require(p.sample_fraction > 0 && p.sample_fraction <= 1,
          "random forest: sample_fraction = " + std::to_string(p.sample_fraction) + "; legal: (0, 1]");
  require(p.threads >= 0, "random forest: threads = " + std::to_string(p.threads) + "; 0 (all cores) or more");
}

}  // namespace

RandomForest RandomForest::fit(const FeatureMatrix& x, const std::vector<double>& y, const ForestParams& params,
                               std::vector<std::string> feature_names) {
  require(x.rows >= 2 && x.cols >= 1, "random forest: need at least 2 rows and 1 feature, got " +
                                          std::to_string(x.rows) + " × " + std::to_string(x.cols));
  require(x.values.size() == x.rows * x.cols, "random forest: matrix holds " + std::to_string(x.values.size()) +
                                                  " values, not rows × cols = " + std::to_string(x.rows * x.cols));
  require(y.size() == x.rows,
          "random forest: " + std::to_string(y.size()) + " targets for " + std::to_string(x.rows) + " rows");
  require(x.rows < (1ULL << 31), "random forest: at most 2^31 rows");
  if (feature_names.empty())
    for (std::size_t f = 0; f < x.cols; ++f) feature_names.push_back("x" + std::to_string(f));
  require(feature_names.size() == x.cols, "random forest: " + std::to_string(feature_names.size()) +
                                              " feature names for " + std::to_string(x.cols) + " features");
  check_params(params, x.cols);
  for (std::size_t i = 0; i < x.rows; ++i) {
    require(std::isfinite(y[i]), "random forest: target of row " + std::to_string(i) + " is not a finite number");
    for (std::size_t f = 0; f < x.cols; ++f)
      require(std::isfinite(x.row(i)[f]), "random forest: row " + std::to_string(i) + ", feature '" + feature_names[f] +
                                              "' is not a finite number");
  }

  RandomForest rf;
  rf.params_ = params;
  rf.feature_names_ = std::move(feature_names);
  const int mtry = params.mtry > 0 ? params.mtry : std::max<int>(1, static_cast<int>(x.cols) / 3);
  rf.params_.mtry = mtry;

  // Armadillo is column-major: the transposed row-major buffer is the n × p
  // matrix with a contiguous column per feature.
  const arma::mat xt(const_cast<double*>(x.values.data()), x.cols, x.rows, /*copy_aux_mem=*/false, true);
  const arma::mat xm = xt.t();
  const arma::vec yv(y);
  const BinnedMatrix binned = bin_matrix(xm, params.max_bins);

  std::vector<GrownTree> grown(params.trees);
  const int threads =
      std::max(1, std::min(params.trees, params.threads > 0 ? params.threads
                                                            : static_cast<int>(std::thread::hardware_concurrency())));
  std::atomic<int> next{0};
  auto worker = [&] {
    TreeGrower grower(binned, yv, rf.params_, mtry);
    for (int t = next++; t < params.trees; t = next++) grown[t] = grower.grow(tree_seed(params.seed, t), xm);
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }

  // Gathered in tree order: identical for any thread count.
  std::vector<double> oob_sum(x.rows, 0.0);
  std::vector<int> oob_count(x.rows, 0);
  rf.impurity_.assign(x.cols, 0.0);
  rf.trees_.reserve(grown.size());
  for (auto& g : grown) {
    for (const auto& [row, pred] : g.oob) {
      oob_sum[row] += pred;
      ++oob_count[row];
    }
    const double total = std::accumulate(g.importance.begin(), g.importance.end(), 0.0);
    if (total > 0)
      for (std::size_t f = 0; f < x.cols; ++f) rf.impurity_[f] += g.importance[f] / total;
    rf.trees_.push_back(std::move(g.nodes));
  }
  const double imp_total = std::accumulate(rf.impurity_.begin(), rf.impurity_.end(), 0.0);
  if (imp_total > 0)
    for (double& v : rf.impurity_) v /= imp_total;

  rf.oob_.assign(x.rows, std::numeric_limits<double>::quiet_NaN());
  double se = 0, mean = 0;
  std::size_t counted = 0;
  for (std::size_t i = 0; i < x.rows; ++i) {
    if (oob_count[i] == 0) continue;
    rf.oob_[i] = oob_sum[i] / oob_count[i];
    se += (rf.oob_[i] - y[i]) * (rf.oob_[i] - y[i]);
    mean += y[i];
    ++counted;
  }
  if (counted > 0) {
    mean /= static_cast<double>(counted);
    double ss = 0;
    for (std::size_t i = 0; i < x.rows; ++i)
      if (oob_count[i] > 0) ss += (y[i] - mean) * (y[i] - mean);
    rf.oob_rmse_ = std::sqrt(se / static_cast<double>(counted));
    rf.oob_r2_ = ss > 0 ? 1.0 - se / ss : 0.0;
  } else {
    rf.oob_rmse_ = rf.oob_r2_ = std::numeric_limits<double>::quiet_NaN();
  }
  return rf;
}

void RandomForest::check_row(const double* row) const {
  for (std::size_t f = 0; f < features(); ++f)
    require(std::isfinite(row[f]), "random forest: feature '" + feature_names_[f] + "' is not a finite number");
}

// Eight trees walked in lockstep: the node loads of different trees are
// independent, so their cache misses overlap instead of queueing (the
// forest is megabytes; one path is a chain of dependent loads). The sum
// is still taken in tree order, so the result equals the plain loop's.
double RandomForest::predict_unchecked(const double* row) const {
  constexpr std::size_t kLanes = 8;
  double sum = 0;
  std::size_t t = 0;
  for (; t + kLanes <= trees_.size(); t += kLanes) {
    const ForestNode* node[kLanes];
    for (std::size_t k = 0; k < kLanes; ++k) node[k] = trees_[t + k].data();
    for (bool moving = true; moving;) {
      moving = false;
      for (std::size_t k = 0; k < kLanes; ++k) {
        const ForestNode& n = *node[k];
        if (n.feature < 0) continue;
        node[k] = trees_[t + k].data() + n.left + (row[n.feature] > n.threshold ? 1 : 0);
        moving = true;
      }
    }
    for (std::size_t k = 0; k < kLanes; ++k) sum += node[k]->value;
  }
  for (; t < trees_.size(); ++t) sum += tree_predict(trees_[t], row);
  return sum / static_cast<double>(trees_.size());
}

double RandomForest::predict(const double* row) const {
  check_row(row);
  return predict_unchecked(row);
}

std::vector<double> RandomForest::predict(const FeatureMatrix& x) const {
  require(x.cols == features(), "random forest: rows have " + std::to_string(x.cols) + " features; the model has " +
                                    std::to_string(features()));
  std::vector<double> out(x.rows);
  for (std::size_t i = 0; i < x.rows; ++i) out[i] = predict(x.row(i));
  return out;
}

std::vector<double> RandomForest::tree_predictions(const double* row) const {
  check_row(row);
  std::vector<double> out;
  out.reserve(trees_.size());
  for (const auto& t : trees_) out.push_back(tree_predict(t, row));
  return out;
}

double RandomForest::spread(const double* row) const {
  const auto p = tree_predictions(row);
  const arma::vec v(p);
  return p.size() > 1 ? arma::stddev(v) : 0.0;
}

std::vector<double> RandomForest::permutation_importance(const FeatureMatrix& x, const std::vector<double>& y,
                                                         int repeats, std::uint64_t seed) const {
  require(x.cols == features(), "random forest: rows have " + std::to_string(x.cols) + " features; the model has " +
                                    std::to_string(features()));
  require(y.size() == x.rows && x.rows > 0, "random forest: permutation importance needs one target per row");
  require(repeats >= 1, "random forest: permutation repeats = " + std::to_string(repeats) + "; at least 1");
  auto mse = [&](const FeatureMatrix& m) {
    double s = 0;
    for (std::size_t i = 0; i < m.rows; ++i) {
      const double d = predict(m.row(i)) - y[i];
      s += d * d;
    }
    return s / static_cast<double>(m.rows);
  };
  const double base = mse(x);
  FeatureMatrix shuffled = x;
  std::vector<double> out(x.cols, 0.0);
  Rng rng(seed);
  std::vector<std::size_t> order(x.rows);
  for (std::size_t f = 0; f < x.cols; ++f) {
    for (int r = 0; r < repeats; ++r) {
      std::iota(order.begin(), order.end(), 0);
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      for (std::size_t i = 0; i < x.rows; ++i) shuffled.values[i * x.cols + f] = x.row(order[i])[f];
      out[f] += mse(shuffled) - base;
    }
    out[f] /= repeats;
    for (std::size_t i = 0; i < x.rows; ++i) shuffled.values[i * x.cols + f] = x.row(i)[f];
  }
  return out;
}

// ---- File format ----------------------------------------------------------
//
// A text header a person can read with `head`, then the trees in binary:
//
//   mixtd random forest
//   version 1
//   trees T / features P / rows N        (N: out-of-bag predictions stored)
//   params mtry=.. max_depth=.. min_leaf=.. max_bins=.. sample_fraction=.. seed=..
//   oob_rmse X / oob_r2 X                 (hex floats: exact round trip)
//   feature NAME IMPORTANCE               (P lines)
//   meta KEY VALUE                        (any number)
//   end
//   <per tree: u32 node count, nodes as i32 feature, i32 left, f64 threshold, f64 value>
//   <N f64 out-of-bag predictions> <u64 FNV-1a of everything after "end\n">

namespace {

constexpr const char* kMagic = "mixtd random forest";

std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

struct Reader {
  const std::string& bytes;
  std::size_t pos;
  const std::filesystem::path& path;
  template <typename T>
  T get() {
    require(pos + sizeof(T) <= bytes.size(), path.string() + ": truncated random-forest file (the trees end early)");
    T v;
    std::memcpy(&v, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
};

std::uint64_t fnv(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool has_space_or_newline(const std::string& s) { return s.find_first_of(" \t\r\n") != std::string::npos; }

// A header number: the whole word (from_chars: no sign for an unsigned
// count, no leading space, nothing after it).
template <typename T>
bool whole(const std::string& s, T& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// A real as save() writes it (%a hex float, or nan/inf for an undefined
// out-of-bag figure), the whole word.
bool real(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

}  // namespace

void RandomForest::save(const std::filesystem::path& path) const {
  std::ostringstream h;
  h << kMagic << "\nversion " << kFormatVersion << "\ntrees " << trees_.size() << "\nfeatures " << features()
    << "\nrows " << oob_.size() << "\nparams mtry=" << params_.mtry << " max_depth=" << params_.max_depth
    << " min_leaf=" << params_.min_leaf << " max_bins=" << params_.max_bins
    << " sample_fraction=" << hex(params_.sample_fraction) << " seed=" << params_.seed << "\noob_rmse "
    << hex(oob_rmse_) << "\noob_r2 " << hex(oob_r2_) << "\n";
  for (std::size_t f = 0; f < features(); ++f) {
    require(!feature_names_[f].empty() && !has_space_or_newline(feature_names_[f]),
            "random forest: feature name '" + feature_names_[f] + "' cannot be saved (empty or has white space)");
    h << "feature " << feature_names_[f] << " " << hex(impurity_[f]) << "\n";
  }
  for (const auto& [k, v] : metadata) {
    require(!k.empty() && !has_space_or_newline(k) && v.find('\n') == std::string::npos,
            "random forest: metadata '" + k + "' cannot be saved (key with white space or value with a newline)");
    h << "meta " << k << " " << v << "\n";
  }
  h << "end\n";
  std::string body;
  for (const auto& t : trees_) {
    put<std::uint32_t>(body, static_cast<std::uint32_t>(t.size()));
    for (const auto& n : t) {
      put<std::int32_t>(body, n.feature);
      put<std::int32_t>(body, n.left);
      put<double>(body, n.threshold);
      put<double>(body, n.value);
    }
  }
  for (double v : oob_) put<double>(body, v);
  put<std::uint64_t>(body, fnv(body.data(), body.size()));
  write_file_atomic(path, h.str() + body);
}

RandomForest RandomForest::load(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  const std::string where = path.string();
  std::size_t pos = 0;
  int line_no = 0;
  auto next_line = [&]() -> std::string {
    const std::size_t nl = bytes.find('\n', pos);
    require(nl != std::string::npos,
            where + ": truncated random-forest file (header ends at line " + std::to_string(line_no) + ")");
    std::string line = bytes.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    return line;
  };
  const std::string magic = bytes.substr(0, bytes.find('\n'));
  require(magic == kMagic, where + ": not a mixtd random-forest file (first line '" + magic.substr(0, 40) +
                               "'; expected '" + kMagic + "'; make one with `mixtd predictor train`)");
  next_line();
  const std::string version_line = next_line();
  int version = -1;
  if (version_line.rfind("version ", 0) == 0 && !whole(version_line.substr(8), version)) version = -1;
  require(version == kFormatVersion,
          where + ":2: random-forest file format version " +
              (version < 0 ? "'" + version_line.substr(0, 40) + "'" : std::to_string(version)) +
              "; this mixtd reads version " + std::to_string(kFormatVersion) +
              " — retrain with `mixtd predictor train`");

  RandomForest rf;
  // The counts size the allocations below, so each is checked against the
  // bytes that follow the header before anything is allocated.
  std::size_t trees = 0, features = 0, rows = 0;
  int trees_line = 0, rows_line = 0;
  for (;;) {
    const std::string line = next_line();
    if (line == "end") break;
    std::istringstream in(line);
    std::string key;
    in >> key;
    // Every value is one word that must parse whole: "trees -1" or
    // "rows 3x" would otherwise wrap or be cut silently.
    auto bad = [&] {
      return where + ":" + std::to_string(line_no) + ": malformed header line '" + line.substr(0, 80) + "'";
    };
    auto count = [&](std::size_t& v, int& at) {
      std::string w, extra;
      require(static_cast<bool>(in >> w) && !(in >> extra) && whole(w, v), bad());
      at = line_no;
    };
    if (key == "trees") {
      count(trees, trees_line);
    } else if (key == "features") {
      int unused = 0;
      count(features, unused);
    } else if (key == "rows") {
      count(rows, rows_line);
    } else if (key == "params") {
      std::string kv;
      while (in >> kv) {
        const auto eq = kv.find('=');
        require(eq != std::string::npos, bad());
        const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        bool ok = true;
        if (k == "mtry")
          ok = whole(v, rf.params_.mtry);
        else if (k == "max_depth")
          ok = whole(v, rf.params_.max_depth);
        else if (k == "min_leaf")
          ok = whole(v, rf.params_.min_leaf);
        else if (k == "max_bins")
          ok = whole(v, rf.params_.max_bins);
        else if (k == "sample_fraction")
          ok = real(v, rf.params_.sample_fraction);
        else if (k == "seed")
          ok = whole(v, rf.params_.seed);
        require(ok, bad());
      }
    } else if (key == "oob_rmse" || key == "oob_r2") {
      std::string v, extra;
      require(static_cast<bool>(in >> v) && !(in >> extra) && real(v, key == "oob_rmse" ? rf.oob_rmse_ : rf.oob_r2_),
              bad());
    } else if (key == "feature") {
      std::string name, imp, extra;
      double importance = 0;
      require(static_cast<bool>(in >> name >> imp) && !(in >> extra) && real(imp, importance), bad());
      rf.feature_names_.push_back(name);
      rf.impurity_.push_back(importance);
    } else if (key == "meta") {
      std::string k;
      require(static_cast<bool>(in >> k), bad());
      std::string v;
      std::getline(in, v);
      if (!v.empty() && v[0] == ' ') v.erase(0, 1);
      rf.metadata[k] = v;
    } else {
      throw Error(bad());
    }
  }
  require(trees >= 1 && rf.feature_names_.size() == features,
          where + ": header says " + std::to_string(trees) + " trees and " + std::to_string(features) +
              " features but lists " + std::to_string(rf.feature_names_.size()) + " feature lines");

  const std::size_t body = pos;
  require(bytes.size() >= body + 8, where + ": truncated random-forest file (no trees)");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  require(stored == fnv(bytes.data() + body, bytes.size() - 8 - body),
          where + ": random-forest file is corrupt (checksum mismatch); retrain or copy it again");
  // A tree is at least its node count and one node; an out-of-bag
  // prediction is 8 bytes.
  const std::size_t room = bytes.size() - 8 - body;
  constexpr std::size_t kNodeBytes = 2 * sizeof(std::int32_t) + 2 * sizeof(double);
  require(trees <= room / (sizeof(std::uint32_t) + kNodeBytes),
          where + ":" + std::to_string(trees_line) + ": trees " + std::to_string(trees) + ": the file's " +
              std::to_string(room) + " bytes of trees hold at most " +
              std::to_string(room / (sizeof(std::uint32_t) + kNodeBytes)));
  require(rows <= room / sizeof(double), where + ":" + std::to_string(rows_line) + ": rows " + std::to_string(rows) +
                                             ": the file's " + std::to_string(room) + " bytes of trees hold at most " +
                                             std::to_string(room / sizeof(double)) + " out-of-bag predictions");
  rf.params_.trees = static_cast<int>(trees);
  Reader r{bytes, body, path};
  rf.trees_.resize(trees);
  for (std::size_t ti = 0; ti < trees; ++ti) {
    auto& t = rf.trees_[ti];
    // Messages are built only on failure: a forest has ~10^5 nodes.
    auto tree = [&] { return where + ": tree " + std::to_string(ti); };
    const auto count = r.get<std::uint32_t>();
    const std::size_t most = (bytes.size() - r.pos) / kNodeBytes;
    if (count < 1 || count > most)
      throw Error(tree() + ": node count " + std::to_string(count) + " (legal 1 .. " + std::to_string(most) +
                  ", what the file holds)");
    t.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      ForestNode& n = t[i];
      n.feature = r.get<std::int32_t>();
      n.left = r.get<std::int32_t>();
      n.threshold = r.get<double>();
      n.value = r.get<double>();
      auto node = [&] { return tree() + " node " + std::to_string(i) + ": "; };
      if (n.feature >= static_cast<std::int64_t>(features))
        throw Error(node() + "feature " + std::to_string(n.feature) + " (the model has " + std::to_string(features) +
                    ")");
      // Children come after their parent (prediction walks forwards and
      // ends), both inside the tree; computed in 64 bits so that -1 does
      // not wrap into range.
      const std::int64_t left = n.left, first = std::int64_t{i} + 1, last = std::int64_t{count} - 2;
      if (n.feature >= 0 && (left < first || left > last))
        throw Error(node() + "child " + std::to_string(left) +
                    (first <= last ? " (legal " + std::to_string(first) + " .. " + std::to_string(last) + ")"
                                   : " (a node this late in the tree must be a leaf)"));
      if (!std::isfinite(n.value)) throw Error(node() + "value " + std::to_string(n.value) + " is not a finite number");
      if (n.feature >= 0 && std::isnan(n.threshold)) throw Error(node() + "threshold is not a number");
    }
  }
  rf.oob_.resize(rows);
  for (double& v : rf.oob_) v = r.get<double>();
  require(r.pos + 8 == bytes.size(), where + ": random-forest file has trailing bytes");
  return rf;
}

}  // namespace mixtd::search
