// The slow reference: simulated annealing over ψ (private to mixtd::search;
// see docs/solver.md).
#pragma once

#include "Evaluator.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search::detail {

// `ev` holds a design that fits; leaves it at the best ψ seen.
void anneal(Evaluator& ev, Objective objective, const AnnealOptions& options);

}  // namespace mixtd::search::detail
