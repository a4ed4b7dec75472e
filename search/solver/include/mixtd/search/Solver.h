// The unroll-factor solver (SPEC "The search", solver part): given τ for
// every layer, choose ψ = {p_in, p_out, fine} for every stage — and where
// its weights are in block RAM on a device with URAM, BRAM18 or URAM
// (Psi::weight_memory) — to maximise FPS under the resource budget. Legal
// values only (divisors).
//
//   solve()   fast default: bottleneck balancing — raise the slowest
//             module's parallelism to its next legal value while the budget
//             allows — then a local repair/refinement pass.
//   anneal()  slow reference: simulated annealing over ψ, seeded, used to
//             measure the default against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"

namespace mixtd::search {

enum class Objective {
  Latency,     // maximise FPS at batch 1 (f / latency(1))
  Throughput,  // maximise peak FPS (f / interval)
};

struct SolverOptions {
  Objective objective = Objective::Latency;
  double budget = -1;  // fraction of the device; < 0: the design's own
};

// One start of the default batch-1 solver: the greedy from where it began,
// at the budget it was given, and what it reached at the design's full
// budget (docs/solver.md, "Where a batch-1 solve's time goes: the starts").
struct SolveStart {
  std::string name;                 // "budget" (interval balanced first), "early", "narrow 0.97", ...
  std::int64_t latency_cycles = 0;  // 0: it did not run (ψ = 1 exceeds its budget)
  std::int64_t evaluations = 0, row_updates = 0;
  double seconds = 0;
  bool kept = false;  // the answer is this start's (the first of the lowest latency)
};

struct SolveResult {
  arch::Design design;  // the input design with ψ (and budget) replaced
  arch::Report report;  // analyse(design)
  // The FPS the search maximised: f_clk / interval (throughput), or f_clk /
  // batch-1 latency (latency), the row timeline's latency that
  // report.fps_batch1() gives too (the evaluator keeps that timeline up to
  // date, search/solver/src/Evaluator.h), so the two are the same number.
  double objective_fps = 0;
  std::int64_t evaluations = 0;
  // Module row computations of the row timeline over all evaluations (a
  // module that only shifted costs none): where the latency objective's
  // time goes.
  std::int64_t row_updates = 0;
  double seconds = 0;
  // solve() for batch-1 latency: its starts in the order it ran them (of
  // its last pass, when sized FIFOs made it search again), one of them
  // kept. Empty otherwise.
  std::vector<SolveStart> starts;
};

// Throws mixtd::Error if even ψ = 1 everywhere exceeds the budget, saying
// which resource and what the minimum would be.
SolveResult solve(const arch::Design& design, const SolverOptions& options = {});

struct AnnealOptions {
  std::uint64_t seed = 0;
  std::int64_t moves = 20000;
  double t_start = 0.05;  // relative objective change accepted with probability 1/e at the start
  double t_end = 1e-4;
};

SolveResult anneal(const arch::Design& design, const SolverOptions& options = {}, const AnnealOptions& anneal = {});

}  // namespace mixtd::search
