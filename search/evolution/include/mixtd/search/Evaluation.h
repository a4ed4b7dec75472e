// The feasibility gates of the search, cheapest first (docs/search.md):
//
//   1. MACs bound   a design cannot run faster than all its DSPs multiplying
//                   every cycle: FPS ≤ f_clk · 2·DSP·budget / MACs (two int8
//                   multiplies per DSP48E2). Needs no solve.
//   2. solver       ψ for every stage with every resource ≤ budget
//                   (search::solve, batch-1 latency objective), and the
//                   analytical FPS of the answer.
//   3. throughput   the selected oracle's FPS ≥ target: MACs (k / MACs),
//                   the analytical model, the random forest (a correction
//                   of the analytical FPS learnt from SystemC labels) or
//                   SystemC itself.
//   4. accuracy     top-1 (or fidelity) on the generation's search batch ≥
//                   the floor.
//
// Hardware figures depend only on the genome, so they are computed once
// per genome (HardwareCache) and kept in the checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mixtd/arch/Analytical.h"
#include "mixtd/search/SearchSpace.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search {

enum class ThroughputOracle { Macs, Analytical, Forest, SystemC };
ThroughputOracle parse_oracle(const std::string& s);  // "macs" | "analytical" | "forest" | "systemc"
std::string to_string(ThroughputOracle o);

// What the hardware side knows of one genome.
struct HardwareEval {
  double macs = 0, params = 0, weight_bits = 0;
  bool macs_ok = true;                      // gate 1
  bool solved = false;                      // gate 2 ran (it does not when gate 1 rejects)
  bool fits = false;                        // gate 2: the solver found ψ within the budget
  std::string reason;                       // when !fits: which resource, from the solver
  double utilisation = 0;                   // the largest used/budget ratio (at ψ = 1 when it does not fit)
  double fps_analytical = 0, fps_peak = 0;  // batch-1 and peak, f / latency(1) and f / interval
  double dsp = 0, bram18 = 0, uram = 0, lut = 0, ff = 0;
  double solve_seconds = 0;  // not part of any reproducible output
};

// A SystemC label of one design: its simulated figures (sim::SimResult).
struct SimLabel {
  bool ok = false;
  std::string error;
  double interval = 0, latency = 0, fps_batch1 = 0, fps_peak = 0;
};

class HardwareCache {
 public:
  // `space` must outlive the cache.
  HardwareCache(const SearchSpace& space, SolverOptions solver);

  // Gates 1 and 2 for g (cached by its key). target_fps ≤ 0: no MACs bound,
  // so the solver runs whatever the MACs (for reports on rejected designs).
  const HardwareEval& evaluate(const Genome& g, double target_fps);
  // The design with ψ solved (recomputed when not in the in-memory cache;
  // the solver is deterministic). Only for genomes that fit.
  const arch::Design& design(const Genome& g);
  // The forest's inputs (search::features of the solved design and its report).
  const std::vector<double>& features(const Genome& g);
  const std::vector<std::string>& feature_names() const { return feature_names_; }

  // The MACs bound of gate 1: the largest MACs that can reach target_fps.
  double macs_bound(double target_fps) const;

  const std::map<std::string, HardwareEval>& entries() const { return evals_; }
  void restore(std::map<std::string, HardwareEval> evals) { evals_ = std::move(evals); }
  const SolverOptions& solver() const { return solver_; }

 private:
  struct Solved {
    arch::Design design;
    std::vector<double> features;
  };
  Solved& solved(const Genome& g);
  Solved& remember(const Genome& g, const SolveResult& res);

  const SearchSpace& space_;
  SolverOptions solver_;
  std::vector<std::string> feature_names_;
  std::map<std::string, HardwareEval> evals_;
  std::map<std::string, Solved> solved_;  // bounded: cleared when it grows past a few thousand
};

}  // namespace mixtd::search
