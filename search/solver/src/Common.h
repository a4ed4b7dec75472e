// Shared by the solver and the annealer (private to mixtd::search).
#pragma once

#include <algorithm>
#include <cstdint>

#include "Evaluator.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search::detail {

// The cycles the objective divides the clock by.
inline std::int64_t objective_cycles(const Evaluator& ev, Objective o) {
  return o == Objective::Latency ? ev.latency_cycles() : ev.interval();
}

// A stage's own share of batch-1 latency, the estimate the latency moves
// are ranked by before a trial measures them: its first output (the fill)
// plus one output row at its own pace, the lag it adds behind its last
// input row in the row timeline (RowTimeline.h). For a stage with one
// output row (the classifier after the global pool) that is its whole
// computation, which the fill alone misses.
inline std::int64_t own_latency(const arch::Cycles& c, std::int64_t out_rows) {
  return c.fill + std::max(c.compute, c.out) / std::max<std::int64_t>(1, out_rows);
}

inline double fps(const Evaluator& ev, Objective o) {
  return ev.clock_mhz() * 1e6 / static_cast<double>(objective_cycles(ev, o));
}

// Resources as fractions of the budget, summed (a component the budget
// lacks weighs as if it were a whole device).
inline double budget_fractions(const arch::Resources& r, const arch::Resources& budget) {
  auto part = [](double used, double avail) { return avail > 0 ? used / avail : (used > 0 ? 1.0 : 0.0); };
  return part(r.dsp, budget.dsp) + part(r.bram18, budget.bram18) + part(r.uram, budget.uram) + part(r.lut, budget.lut) +
         part(r.ff, budget.ff);
}

}  // namespace mixtd::search::detail
