// The default unroll-factor solver (private to mixtd::search; the algorithm
// is described in docs/solver.md): bottleneck balancing for peak FPS; for
// batch-1 latency a lazy greedy over interval and fill moves from two
// starts, once to the budget and once to 0.97 of it; then repack /
// exchange / rebalance rounds.
#pragma once

#include "Evaluator.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search::detail {

// `ev` holds a design that fits (normally ψ = 1 everywhere); leaves it at
// the best ψ found. Every state it keeps fits the budget.
void balance(Evaluator& ev, Objective objective);

}  // namespace mixtd::search::detail
