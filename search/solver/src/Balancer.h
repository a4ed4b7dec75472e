// The default unroll-factor solver (private to mixtd::search; the algorithm
// is described in docs/solver.md): bottleneck balancing for peak FPS; for
// batch-1 latency a lazy greedy over interval, row and fill moves from five
// starts (the interval balanced first and an early state of that balancing,
// at the budget; and from ψ = 1 to 0.97, 0.9 and 0.8 of it), each followed
// by repack / exchange / greedy rounds at the full budget.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "Evaluator.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search::detail {

// `ev` holds a design that fits (normally ψ = 1 everywhere); leaves it at
// the best ψ found. Every state it keeps fits the budget.
// Evaluations, row updates and time since it was made (or last recorded).
class StartClock {
 public:
  explicit StartClock(const Evaluator& ev);
  SolveStart record(std::string name, std::int64_t latency_cycles);

 private:
  using Clock = std::chrono::steady_clock;
  const Evaluator& ev_;
  Clock::time_point t0_;
  std::int64_t evaluations_ = 0, rows_ = 0;
};

// `starts` (batch-1 latency only), if given, gets what each start took and
// reached.
void balance(Evaluator& ev, Objective objective, std::vector<SolveStart>* starts = nullptr);

}  // namespace mixtd::search::detail
