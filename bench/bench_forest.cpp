// Random-forest speed (issue 6 goal: fit 1000 rows × 66 features × 370
// trees in ≤ 0.5 s on one core; predict one row in ≤ 50 µs):
//   build/bench/bench_forest
//
//   BM_Fit/<data>/<threads>   one fit with the default parameters (370 trees,
//                             mtry = features / 3, grown to min_leaf = 5)
//   BM_PredictRow/<data>      one row through all 370 trees
//
// <data>: `continuous` — Friedman #1 padded with noise to 66 uniform
// features (every feature has 256 quantile bins: the slow case); `codes` —
// shaped like a labelled-design CSV: 60 small-integer per-layer codes
// (t, g1, g2, r) and 6 continuous totals.
#include <benchmark/benchmark.h>

#include <cmath>

#include "mixtd/search/RandomForest.h"
#include "mixtd/support/Rng.h"

// libsystemc.so (linked through mixtd::predictor's simulator) defines main()
// and calls sc_main(); BENCHMARK_MAIN's main() takes precedence.
extern "C" int sc_main(int, char**) { return 0; }

namespace {

using mixtd::search::FeatureMatrix;
using mixtd::search::ForestParams;
using mixtd::search::RandomForest;

struct Data {
  FeatureMatrix x;
  std::vector<double> y;
};

Data make(bool codes, std::size_t rows = 1000, std::size_t cols = 66) {
  mixtd::Rng rng(1);
  Data d;
  d.x.rows = rows;
  d.x.cols = cols;
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<double> v(cols);
    for (std::size_t f = 0; f < cols; ++f) {
      if (codes && f < 60) {
        static const double levels[4][16] = {{0, 1, 2, 3}, {1, 2, 4, 8}, {1, 2, 4, 8}, {0}};
        const std::size_t kind = f % 4;
        v[f] = kind == 3 ? static_cast<double>(8 * (1 + rng.below(16))) : levels[kind][rng.below(4)];
      } else {
        v[f] = rng.uniform();
      }
    }
    const double* u = codes ? v.data() + 60 : v.data();
    double y = 10 * std::sin(M_PI * u[0] * u[1]) + 20 * (u[2] - 0.5) * (u[2] - 0.5) + 10 * u[3] + 5 * u[4];
    if (codes)
      for (std::size_t f = 3; f < 60; f += 4) y += v[f] / 64.0;  // ranks matter a little each
    d.y.push_back(y + rng.normal());
    d.x.values.insert(d.x.values.end(), v.begin(), v.end());
  }
  return d;
}

void BM_Fit(benchmark::State& state, bool codes) {
  const Data d = make(codes);
  ForestParams p;
  p.threads = static_cast<int>(state.range(0));
  std::size_t nodes = 0;
  for (auto _ : state) {
    const RandomForest rf = RandomForest::fit(d.x, d.y, p);
    nodes = 0;
    for (std::size_t t = 0; t < rf.trees(); ++t) nodes += rf.tree(t).size();
    benchmark::DoNotOptimize(nodes);
  }
  state.counters["nodes_per_tree"] = static_cast<double>(nodes) / p.trees;
}

void BM_PredictRow(benchmark::State& state, bool codes) {
  const Data d = make(codes);
  ForestParams p;
  p.threads = 0;
  const RandomForest rf = RandomForest::fit(d.x, d.y, p);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(rf.predict(d.x.row(i)));
    i = (i + 1) % d.x.rows;
  }
}

BENCHMARK_CAPTURE(BM_Fit, continuous, false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Fit, codes, true)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_PredictRow, continuous, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PredictRow, codes, true)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
