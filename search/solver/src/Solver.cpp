// The public entry points: prepare the design, check that the smallest ψ
// fits, run the default solver (Balancer.h) or the annealer
// (Annealer.cpp) on an incremental evaluator (Evaluator.h), and analyse()
// the answer once.
#include "mixtd/search/Solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "Annealer.h"
#include "Balancer.h"
#include "Common.h"
#include "Evaluator.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Resources.h"
#include "mixtd/support/Error.h"

namespace mixtd::search {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Evaluator;

// The design to search: the budget the caller asked for, ψ = 1 everywhere.
arch::Design prepare(const arch::Design& design, const SolverOptions& options) {
  arch::Design d = design;
  if (options.budget >= 0) d.budget = options.budget;
  for (auto& [name, m] : d.layers) std::fill(m.stages.begin(), m.stages.end(), arch::Psi{});
  arch::validate(d);
  return d;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// v rounded up to 4 significant digits: a budget printed this way is enough.
double round_up(double v) {
  if (v <= 0) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(v)));
  return std::ceil(v * scale * (1 - 1e-12)) / scale;
}

double component(const arch::Resources& r, const std::string& name) {
  if (name == "DSP") return r.dsp;
  if (name == "BRAM18") return r.bram18;
  if (name == "URAM") return r.uram;
  if (name == "LUT") return r.lut;
  return r.ff;
}

// ψ = 1 with every weight memory where Auto puts it is the smallest design
// there is but for where the weights live: a device with little URAM (or
// little BRAM18) for its size can be over budget in one kind with room in
// the other. Then move weight memories over, those that take least of the
// other kind per unit freed first, while it has room; if that does not
// make the design fit, leave it as it was (require_minimum_fits() reports
// it).
void place_weights_to_fit(Evaluator& ev) {
  const arch::Resources& total = ev.total();
  const arch::Resources& budget = ev.budget();
  const bool uram_over = total.uram > budget.uram, bram_over = total.bram18 > budget.bram18;
  if (ev.fits() || !ev.device_has_uram() || uram_over == bram_over) return;
  const arch::WeightMemory from = uram_over ? arch::WeightMemory::Uram : arch::WeightMemory::Bram;
  const arch::WeightMemory to = uram_over ? arch::WeightMemory::Bram : arch::WeightMemory::Uram;
  auto used = [](const arch::Resources& r, arch::WeightMemory kind) {
    return kind == arch::WeightMemory::Uram ? r.uram : r.bram18;
  };
  struct Move {
    int stage;
    double cost_per_freed;
  };
  std::vector<Move> moves;
  for (int s = 0; s < ev.stage_count(); ++s) {
    const detail::StageSlot& slot = ev.slot(s);
    arch::Psi p = ev.psi(s);
    if (arch::auto_weight_memory(slot.shape, p, ev.bits(), true) != from) continue;
    p.weight_memory = from;
    const arch::Resources now = arch::stage_resources(slot.shape, p, ev.bits(), true).total;
    p.weight_memory = to;
    const arch::Resources then = arch::stage_resources(slot.shape, p, ev.bits(), true).total;
    const double freed = used(now, from) - used(then, from);
    if (freed > 0) moves.push_back({s, (used(then, to) - used(now, to)) / freed});
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& a, const Move& b) { return a.cost_per_freed < b.cost_per_freed; });
  ev.begin_trial();
  for (const Move& m : moves) {
    if (used(ev.total(), from) <= used(budget, from)) break;
    arch::Psi p = ev.psi(m.stage);
    p.weight_memory = to;
    ev.begin_trial();
    ev.set_psi(m.stage, p);
    if (used(ev.total(), to) <= used(budget, to)) {
      ev.commit();
    } else {
      ev.rollback();
    }
  }
  if (ev.fits()) {
    ev.commit();
  } else {
    ev.rollback();
  }
}

// Whether ψ = 1 fits `d` at `budget` with its weights placed by
// place_weights_to_fit().
bool minimum_fits_at(const arch::Design& d, double budget) {
  arch::Design at = d;
  at.budget = budget;
  Evaluator ev(at);
  place_weights_to_fit(ev);
  return ev.fits();
}

// The smallest budget, rounded up to 4 digits, at which ψ = 1 fits, or a
// negative number if the whole device does not do. `auto_fraction` is what
// the weights placed as Auto puts them need (a budget that works if ≤ 1);
// with URAM, moving weights between the kinds may do with less, or make a
// design fit that Auto places over the device.
double smallest_fitting_budget(const arch::Design& d, double auto_fraction) {
  if (d.device.capacity.uram <= 0) return auto_fraction <= 1.0 ? std::min(1.0, round_up(auto_fraction)) : -1.0;
  double hi = std::min(1.0, auto_fraction);
  if (auto_fraction > 1.0 && !minimum_fits_at(d, 1.0)) return -1.0;
  double lo = d.budget;
  for (int k = 0; k < 24; ++k) {
    const double mid = 0.5 * (lo + hi);
    (minimum_fits_at(d, mid) ? hi : lo) = mid;
  }
  const double rounded = std::min(1.0, round_up(hi));
  if (minimum_fits_at(d, rounded)) return rounded;
  return auto_fraction <= 1.0 ? std::min(1.0, round_up(auto_fraction)) : 1.0;  // these fit
}

// ψ = 1 is the smallest design there is; if it does not fit (with its
// weights placed as well as they go), nothing does.
void require_minimum_fits(const Evaluator& ev, const arch::Design& d) {
  if (ev.fits()) return;
  const arch::Resources& need = ev.total();
  const std::string what = need.binding(ev.budget());
  const double needed_fraction = need.max_utilisation(d.device.capacity);
  std::string msg = "design '" + d.name + "' does not fit " + d.device.name + " at budget " + fmt(d.budget) +
                    ": even with psi = 1 (p_in = p_out = fine = 1) everywhere it needs " + fmt(component(need, what)) +
                    " " + what;
  if (ev.device_has_uram())
    msg += " (its weights where they take the fewest bits; moving them between BRAM18 and URAM does not make it fit)";
  msg += ", but the budget allows " + fmt(component(ev.budget(), what)) + " (" + fmt(d.budget) + " x " +
         fmt(component(d.device.capacity, what)) + ")";
  const double budget = smallest_fitting_budget(d, needed_fraction);
  if (budget > 0) {
    msg += "; it needs a budget of at least " + fmt(budget);
  } else {
    msg += "; that is " + fmt(std::round(100.0 * needed_fraction)) + "% of the device's " + what +
           ", so no budget fits: decompose more layers or use a larger device";
  }
  throw Error(msg);
}

// The searches leave Auto on the stages they never moved; the design gets
// the kind Auto gives there (the same resources), so that it states where
// every block-RAM weight memory lives.
void make_weight_memories_explicit(const Evaluator& ev, arch::Design& d) {
  for (int s = 0; s < ev.stage_count(); ++s) {
    const detail::StageSlot& slot = ev.slot(s);
    arch::Psi& p = d.layers.at(slot.layer).stages.at(static_cast<std::size_t>(slot.index));
    if (p.weight_memory == arch::WeightMemory::Auto)
      p.weight_memory = arch::auto_weight_memory(slot.shape, p, d.bits, ev.device_has_uram());
  }
}

template <typename Search>
SolveResult run(const arch::Design& design, const SolverOptions& options, Search search) {
  const auto t0 = Clock::now();
  const arch::Design start = prepare(design, options);
  arch::Design d = start;
  SolveResult r;
  std::int64_t answer_cycles = 0;
  // FIFO sizing follows the search (FINN's order): the FIFOs behind
  // fan-outs are sized for the chosen ψ (arch::size_fifos, from the report
  // the answer needs anyway). If they push the design over its budget,
  // search again with their depths in the design, where the evaluator
  // prices them; depths only grow, so this ends.
  for (int pass = 0;; ++pass) {
    Evaluator ev(d);
    place_weights_to_fit(ev);
    require_minimum_fits(ev, d);
    search(ev);
    ev.apply(d);
    make_weight_memories_explicit(ev, d);
    r.evaluations += ev.evaluations();
    r.row_updates += ev.row_updates();
    // FIFO depths and explicit weight memory kinds change no cycle: the
    // evaluator's figures are the answer's.
    answer_cycles = detail::objective_cycles(ev, options.objective);
    r.report = arch::analyse(d);
    if (pass == 3 || arch::size_fifos(d, r.report) == 0) break;  // (r.report kept up to date)
    if (r.report.fits()) break;
    const auto depths = d.fifo_depths;
    d = start;
    d.fifo_depths = depths;
  }
  r.objective_fps = d.clock_mhz * 1e6 / static_cast<double>(answer_cycles);
  // Every state the searches keep fits; this guards the promise.
  if (!r.report.fits())
    throw Error("internal: the search left design '" + d.name + "' over its budget (" +
                r.report.total.binding(r.report.budget) + ")");
  r.design = std::move(d);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace

SolveResult solve(const arch::Design& design, const SolverOptions& options) {
  std::vector<SolveStart> starts;
  SolveResult r = run(design, options, [&](Evaluator& ev) {
    starts.clear();
    detail::balance(ev, options.objective, &starts);
  });
  r.starts = std::move(starts);
  return r;
}

SolveResult anneal(const arch::Design& design, const SolverOptions& options, const AnnealOptions& anneal) {
  require(anneal.t_start > 0 && anneal.t_end > 0, "anneal: temperatures must be positive, got t_start = " +
                                                      fmt(anneal.t_start) + ", t_end = " + fmt(anneal.t_end));
  require(anneal.moves >= 0, "anneal: moves must be at least 0, got " + std::to_string(anneal.moves));
  return run(design, options, [&](Evaluator& ev) { detail::anneal(ev, options.objective, anneal); });
}

}  // namespace mixtd::search
