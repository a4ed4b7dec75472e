// The public entry points: prepare the design, check that the smallest ψ
// fits, run the default solver (Balancer.cpp) or the annealer
// (Annealer.cpp) on an incremental evaluator (Evaluator.h), and analyse()
// the answer once.
#include "mixtd/search/Solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "Annealer.h"
#include "Balancer.h"
#include "Evaluator.h"
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

// ψ = 1 is the smallest design there is; if it does not fit, nothing does.
void require_minimum_fits(const Evaluator& ev, const arch::Design& d) {
  if (ev.fits()) return;
  const arch::Resources& need = ev.total();
  const std::string what = need.binding(ev.budget());
  const double needed_fraction = need.max_utilisation(d.device.capacity);
  std::string msg = "design '" + d.name + "' does not fit " + d.device.name + " at budget " + fmt(d.budget) +
                    ": even with psi = 1 (p_in = p_out = fine = 1) everywhere it needs " +
                    fmt(component(need, what)) + " " + what + ", but the budget allows " +
                    fmt(component(ev.budget(), what)) + " (" + fmt(d.budget) + " x " +
                    fmt(component(d.device.capacity, what)) + ")";
  if (needed_fraction <= 1.0) {
    msg += "; it needs a budget of at least " + fmt(std::min(1.0, round_up(needed_fraction)));
  } else {
    msg += "; that is " + fmt(std::round(100.0 * needed_fraction)) + "% of the device's " + what +
           ", so no budget fits: decompose more layers or use a larger device";
  }
  throw Error(msg);
}

template <typename Search>
SolveResult run(const arch::Design& design, const SolverOptions& options, Search search) {
  const auto t0 = Clock::now();
  arch::Design d = prepare(design, options);
  Evaluator ev(d);
  require_minimum_fits(ev, d);
  search(ev);
  ev.apply(d);
  SolveResult r;
  r.evaluations = ev.evaluations();
  r.report = arch::analyse(d);
  // Every state the searches keep fits; this guards the promise.
  require(r.report.fits(), "internal: the search left design '" + d.name + "' over its budget (" +
                               r.report.total.binding(r.report.budget) + ")");
  r.design = std::move(d);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace

SolveResult solve(const arch::Design& design, const SolverOptions& options) {
  return run(design, options, [&](Evaluator& ev) { detail::balance(ev, options.objective); });
}

SolveResult anneal(const arch::Design& design, const SolverOptions& options, const AnnealOptions& anneal) {
  require(anneal.t_start > 0 && anneal.t_end > 0,
          "anneal: temperatures must be positive, got t_start = " + fmt(anneal.t_start) + ", t_end = " +
              fmt(anneal.t_end));
  require(anneal.moves >= 0, "anneal: moves must be at least 0, got " + std::to_string(anneal.moves));
  return run(design, options, [&](Evaluator& ev) { detail::anneal(ev, options.objective, anneal); });
}

}  // namespace mixtd::search
