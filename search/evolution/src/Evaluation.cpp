#include "mixtd/search/Evaluation.h"

#include <chrono>
#include <cstdio>

#include "mixtd/search/Dataset.h"
#include "mixtd/support/Error.h"

namespace mixtd::search {

ThroughputOracle parse_oracle(const std::string& s) {
  if (s == "macs") return ThroughputOracle::Macs;
  if (s == "analytical") return ThroughputOracle::Analytical;
  if (s == "forest") return ThroughputOracle::Forest;
  if (s == "systemc") return ThroughputOracle::SystemC;
  throw Error("--oracle '" + s + "': legal values are macs, analytical, forest, systemc");
}

std::string to_string(ThroughputOracle o) {
  switch (o) {
    case ThroughputOracle::Macs:
      return "macs";
    case ThroughputOracle::Analytical:
      return "analytical";
    case ThroughputOracle::Forest:
      return "forest";
    case ThroughputOracle::SystemC:
      return "systemc";
  }
  return "?";
}

HardwareCache::HardwareCache(const SearchSpace& space, SolverOptions solver)
    : space_(space), solver_(solver), feature_names_(search::feature_names(space.base())) {}

double HardwareCache::macs_bound(double target_fps) const {
  const arch::Design& b = space_.base();
  const double budget = solver_.budget > 0 ? solver_.budget : b.budget;
  const double per_dsp = b.bits.weight <= 8 && b.bits.activation <= 8 ? 2.0 : 1.0;
  return b.clock_mhz * 1e6 * per_dsp * b.device.capacity.dsp * budget / target_fps;
}

const HardwareEval& HardwareCache::evaluate(const Genome& g, double target_fps) {
  const std::string key = SearchSpace::key(g);
  auto it = evals_.find(key);
  if (it != evals_.end() && (it->second.solved || target_fps > 0)) return it->second;
  HardwareEval e;
  e.macs = space_.macs(g);
  e.params = space_.params(g);
  e.weight_bits = space_.weight_bits(g);
  e.macs_ok = target_fps <= 0 || e.macs <= macs_bound(target_fps);
  if (it != evals_.end()) e.macs_ok = it->second.macs_ok;  // gate 1 as the search saw it
  if (e.macs_ok || target_fps <= 0) {
    e.solved = true;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const SolveResult res = solve(space_.design(g), solver_);
      const arch::Report& r = res.report;
      remember(g, res);
      e.fits = r.fits();
      e.utilisation = r.total.max_utilisation(r.budget);
      e.fps_analytical = r.fps_batch1();
      e.fps_peak = r.fps_peak();
      e.dsp = r.total.dsp;
      e.bram18 = r.total.bram18;
      e.uram = r.total.uram;
      e.lut = r.total.lut;
      e.ff = r.total.ff;
      if (!e.fits) e.reason = r.total.binding(r.budget) + " over budget";
    } catch (const Error&) {
      // Even ψ = 1 everywhere exceeds the budget: say which resource, by how much.
      e.fits = false;
      const arch::Report r = arch::analyse(space_.design(g));
      e.utilisation = r.total.max_utilisation(r.budget);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s %.0f%% of the budget at psi = 1", r.total.binding(r.budget).c_str(),
                    100 * e.utilisation);
      e.reason = buf;
    }
    e.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return evals_.insert_or_assign(key, e).first->second;
}

HardwareCache::Solved& HardwareCache::remember(const Genome& g, const SolveResult& res) {
  if (solved_.size() > 4096) solved_.clear();  // designs are re-solved on demand: bound the memory
  Solved s;
  s.design = res.design;
  s.design.name = SearchSpace::key(g);
  s.features = search::features(res.design, res.report);
  return solved_.insert_or_assign(s.design.name, std::move(s)).first->second;
}

HardwareCache::Solved& HardwareCache::solved(const Genome& g) {
  if (auto it = solved_.find(SearchSpace::key(g)); it != solved_.end()) return it->second;
  return remember(g, solve(space_.design(g), solver_));
}

const arch::Design& HardwareCache::design(const Genome& g) { return solved(g).design; }

const std::vector<double>& HardwareCache::features(const Genome& g) { return solved(g).features; }

}  // namespace mixtd::search
