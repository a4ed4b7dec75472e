// Unroll-factor solver speed and quality, single core:
//   build-solver/bench/bench_solver
//
//   BM_Solve/<net>/<tau>/<device>   time per solve() (batch-1 latency objective,
//                                   the design's budget 0.9), median and min of 9
//                                   repetitions; counters:
//     fps        solve()'s batch-1 FPS
//     anneal     the annealer's best over restarts: anneal() from ψ = 1 with
//                the default 20000 moves for seeds 1..6, and with 200000
//                moves for seeds 7 and 8
//     ratio      fps / anneal (goal ≥ 0.99)
//     evals      incremental evaluations per solve()
//     rows       row-timeline module computations per solve()
//     util       the largest used/budget ratio of the answer
//   BM_SolveThroughput/...          the same for the peak-FPS objective
//
// τ variants: none; every decomposable layer svd-filter at its middle rank
// candidate; the same grouped g2 = 4 (svd-filter, g1 = 1); cpd at the middle
// rank. The annealer runs once per case (outside the timed loop).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Candidates.h"
#include "mixtd/td/Geometry.h"

namespace {

namespace arch = mixtd::arch;
namespace search = mixtd::search;
namespace td = mixtd::td;

struct Case {
  std::string net, tau, device;
  std::string name() const { return net + "/" + tau + "/" + device; }
};

// Every decomposable layer as `type` with (1, g2) at its middle rank candidate.
arch::Design with_tau(arch::Design d, const std::string& tau) {
  if (tau == "none") return d;
  const td::TdType type = tau == "cpd" ? td::TdType::Cpd : td::TdType::SvdFilter;
  const std::int64_t g2 = tau == "svd-g4" ? 4 : 1;
  for (const auto& l : d.network.layers) {
    if (!td::is_decomposable(l) || l.in_shape.c % g2 != 0) continue;
    const auto ranks = td::rank_candidates(l, type, 1, g2);
    if (ranks.empty()) continue;
    arch::LayerMapping& m = d.layers.at(l.name);
    m.tau = ranks[ranks.size() / 2];
    m.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
  }
  return d;
}

arch::Design design_of(const Case& c) {
  arch::Design d = arch::make_design(mixtd::net::build_zoo(c.net), c.net, arch::load_device(c.device), c.device);
  return with_tau(std::move(d), c.tau);
}

// Solver quality is measured on the figure the searches maximise
// (SolveResult::objective_fps).
double fps_of(const search::SolveResult& r) { return r.objective_fps; }

// The annealer's best FPS (see the top), computed once per case.
double anneal_fps(const Case& c, search::Objective objective) {
  static std::map<std::string, double> cache;
  const std::string key = c.name() + (objective == search::Objective::Latency ? "/lat" : "/thr");
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const arch::Design d = design_of(c);
  search::SolverOptions o;
  o.objective = objective;
  double best = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    search::AnnealOptions a;
    a.seed = seed;
    if (seed >= 7) a.moves = 200000;
    best = std::max(best, fps_of(search::anneal(d, o, a)));
  }
  return cache[key] = best;
}

void run_solve(benchmark::State& state, const Case& c, search::Objective objective) {
  const arch::Design d = design_of(c);
  search::SolverOptions o;
  o.objective = objective;
  search::SolveResult r;
  try {
    r = search::solve(d, o);
  } catch (const mixtd::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    r = search::solve(d, o);
    benchmark::DoNotOptimize(r.report.interval);
  }
  const double fps = fps_of(r);
  const double ref = anneal_fps(c, objective);
  state.counters["fps"] = fps;
  state.counters["anneal"] = ref;
  state.counters["ratio"] = fps / ref;
  state.counters["evals"] = static_cast<double>(r.evaluations);
  state.counters["rows"] = static_cast<double>(r.row_updates);
  state.counters["util"] = r.report.total.max_utilisation(r.report.budget);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    for (const std::string net : {"resnet18", "repvgg-a0"})
      for (const std::string tau : {"none", "svd", "svd-g4", "cpd"}) v.push_back({net, tau, "u250"});
    for (const std::string net : {"resnet18-fmnist:width=0.25", "tiny:width=2"})
      for (const std::string tau : {"none", "svd", "svd-g4", "cpd"}) v.push_back({net, tau, "zc706"});
    return v;
  }();
  return all;
}

// The fastest repetition: on this shared machine the closest to an
// uncontended figure (the median is the one quoted).
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

[[maybe_unused]] const bool registered = [] {
  for (const auto& c : cases()) {
    benchmark::RegisterBenchmark(("BM_Solve/" + c.name()).c_str(),
                                 [c](benchmark::State& s) { run_solve(s, c, search::Objective::Latency); })
        ->Unit(benchmark::kMillisecond)
        ->Repetitions(9)
        ->ComputeStatistics("min", min_of)
        ->ReportAggregatesOnly(true);
  }
  for (const auto& c : cases()) {
    if (c.tau == "svd-g4") continue;
    benchmark::RegisterBenchmark(("BM_SolveThroughput/" + c.name()).c_str(),
                                 [c](benchmark::State& s) { run_solve(s, c, search::Objective::Throughput); })
        ->Unit(benchmark::kMillisecond)
        ->Repetitions(9)
        ->ComputeStatistics("min", min_of)
        ->ReportAggregatesOnly(true);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
