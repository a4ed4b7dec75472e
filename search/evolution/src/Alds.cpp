// The analytic allocation, after ALDS (Liebenwein et al., NeurIPS 2021):
// per layer one candidate so that the largest relative reconstruction error
// ‖W − Ŵ‖_F/‖W‖_F across layers is as small as the hardware allows. It asks
// no accuracy: a threshold ε gives each layer its cheapest candidate within
// ε, the design gets faster as ε grows, and ε is bisected over the distinct
// candidate errors for the smallest whose design is fast enough, then taken
// up to the first that also fits (gates 1–3: the same hardware gates and
// throughput oracle as every search candidate). A refinement pass then
// spends what FPS is left on the layers' errors, largest first
// (docs/search.md).
#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "Engine.h"
#include "Records.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

namespace {

bool passes(const Outcome& probe, double need) {
  return probe.status == "feasible" && probe.violation <= 0 && probe.fps_oracle >= need;
}

// Short of the FPS asked: MACs bound, throughput oracle, or (after a
// SystemC check raised `need`) below that. Not: resources, SystemC failing.
bool too_slow(const Outcome& probe, double need) {
  return probe.status == "rejected: macs" || probe.status == "rejected: fps" ||
         (probe.status == "feasible" && !passes(probe, need));
}

}  // namespace

Genome Engine::alds_design(double eps) const {
  Genome g = space_.undecomposed();
  for (std::size_t i = 0; i < space_.size(); ++i) {
    const auto& c = space_.layers()[i].candidates;
    // Cheapest: fewest MACs, then fewest parameters, then the lower index.
    auto cost = [&](std::size_t k) { return std::make_tuple(c[k].macs, c[k].params, k); };
    for (std::size_t k = 0; k < c.size(); ++k)
      if (errors_[i][k] <= eps && cost(k) < cost(static_cast<std::size_t>(g[i]))) g[i] = static_cast<std::int32_t>(k);
  }
  return g;
}

void Engine::alds_probe(const std::vector<Genome>& genomes, std::int64_t g, AldsProbes& seen) {
  // One wave (SystemC, when the oracle needs it, runs the probes in
  // parallel); each design is checked and logged once per run.
  std::vector<Outcome> draws;
  std::set<std::string> queued;
  for (const Genome& x : genomes) {
    const std::string key = SearchSpace::key(x);
    if (seen.count(key) || !queued.insert(key).second) continue;
    Outcome d;
    d.genome = x;
    d.kind = "alds-probe";
    d.slot = static_cast<std::int64_t>(seen.size() + draws.size());
    draws.push_back(std::move(d));
  }
  for (Outcome& d : hardware_gates(std::move(draws), g)) {
    if (d.status.empty()) d.status = d.violation > 0 ? "rejected: fps" : "feasible";
    if (d.status != "feasible") note_violation(d);
    log_outcome(d, g, batch_of(g));
    seen[SearchSpace::key(d.genome)] = d;
  }
}

std::optional<Genome> Engine::alds_allocation(std::int64_t g, double need, AldsProbes& seen, std::string* why_not) {
  std::vector<double> eps;  // the distinct candidate errors, ascending (0: every layer undecomposed)
  for (const auto& layer : errors_) eps.insert(eps.end(), layer.begin(), layer.end());
  std::sort(eps.begin(), eps.end());
  eps.erase(std::unique(eps.begin(), eps.end()), eps.end());
  auto probe = [&](std::size_t j) -> const Outcome& {
    const Genome x = alds_design(eps[j]);
    alds_probe({x}, g, seen);
    return seen.at(SearchSpace::key(x));
  };
  const Outcome most = probe(eps.size() - 1);
  if (too_slow(most, need)) {
    if (why_not) *why_not = alds_too_slow(most, need);
    return std::nullopt;
  }
  // The smallest ε whose design is not too slow: FPS falls as ε falls (the
  // solver's discrete ψ make that not strictly so; the refinement makes up
  // for what the bisection steps over).
  std::size_t lo = 0, hi = eps.size() - 1;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (!too_slow(probe(mid), need))
      hi = mid;
    else
      lo = mid + 1;
  }
  std::optional<Genome> best = alds_first_passing(eps, hi, g, need, seen);
  if (!best) {
    if (why_not) *why_not = alds_unfit(most, seen);
    return std::nullopt;
  }
  alds_refine(*best, g, need, seen);
  return best;
}

std::optional<Genome> Engine::alds_first_passing(const std::vector<double>& eps, std::size_t from, std::int64_t g,
                                                 double need, AldsProbes& seen) {
  // Resources do not follow ε as FPS does: the fewest-MAC candidates (many
  // channel groups, CPD) can need more LUTs than the budget, where slower
  // designs fit. From the boundary up, the first design that passes; in
  // waves so SystemC runs them in parallel.
  constexpr std::size_t kWave = 8;
  std::size_t size = 1;  // the boundary alone first: it usually passes
  for (std::size_t j = from; j < eps.size(); j += size, size = kWave) {
    std::vector<Genome> wave;
    for (std::size_t k = j; k < std::min(eps.size(), j + size); ++k) wave.push_back(alds_design(eps[k]));
    alds_probe(wave, g, seen);
    for (const Genome& x : wave)
      if (passes(seen.at(SearchSpace::key(x)), need)) return x;
  }
  return std::nullopt;
}

void Engine::alds_refine(Genome& best, std::int64_t g, double need, AldsProbes& seen) {
  // Layers from the largest error down (ties by position): each takes its
  // most accurate candidate that keeps the design passing. The largest
  // error never grows and the others shrink where the FPS allows.
  const auto err = [&](std::size_t i, std::int32_t k) { return errors_[i][static_cast<std::size_t>(k)]; };
  std::vector<std::size_t> order(space_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return err(a, best[a]) > err(b, best[b]); });
  for (std::size_t i : order) {
    const auto& c = space_.layers()[i].candidates;
    std::vector<std::int32_t> better;
    for (std::size_t k = 0; k < c.size(); ++k)
      if (errors_[i][k] < err(i, best[i])) better.push_back(static_cast<std::int32_t>(k));
    auto rank = [&](std::int32_t k) {
      const auto& x = c[static_cast<std::size_t>(k)];
      return std::make_tuple(err(i, k), x.macs, x.params, k);
    };
    std::sort(better.begin(), better.end(), [&](std::int32_t a, std::int32_t b) { return rank(a) < rank(b); });
    std::vector<Genome> trials;
    for (std::int32_t k : better) {
      trials.push_back(best);
      trials.back()[i] = k;
    }
    alds_probe(trials, g, seen);
    for (const Genome& t : trials)
      if (passes(seen.at(SearchSpace::key(t)), need)) {
        best = t;
        break;
      }
  }
}

std::string Engine::alds_fps(const Outcome& probe) {
  const HardwareEval& e = hw_->evaluate(probe.genome, 0);  // solved even when the MACs bound stopped it
  const bool oracle_fps = probe.fps_oracle > 0 && o_.oracle != ThroughputOracle::Analytical;
  return fixed_str(oracle_fps ? probe.fps_oracle : e.fps_analytical, 1) + " " +
         (oracle_fps ? to_string(o_.oracle) + "-oracle" : std::string("analytical")) + " FPS";
}

std::string Engine::alds_too_slow(const Outcome& most, double need) {
  std::string msg = "alds: even the most compressed candidate of every layer reaches only " + alds_fps(most) +
                    " (target " + fixed_str(o_.target_fps, 1);
  if (need > o_.target_fps) msg += ", raised to " + fixed_str(need, 1) + " where SystemC fell short";
  return msg + ")";
}

std::string Engine::alds_unfit(const Outcome& most, const AldsProbes& seen) {
  // Every design fast enough fails a resource (or SystemC): name the
  // fastest one that fits and what the most compressed one needs.
  const Outcome* fastest = nullptr;
  for (const auto& [key, p] : seen)
    if (p.fps_oracle > 0 && (p.status == "feasible" || p.status == "rejected: fps") &&
        (!fastest || p.fps_oracle > fastest->fps_oracle))
      fastest = &p;
  const HardwareEval& e = hw_->evaluate(most.genome, 0);
  const std::string budget = number(100 * o_.solver.budget) + "% of " + base_.device.name;
  const std::string why_most = "the most compressed candidate of every layer: " + (e.fits ? most.status : e.reason);
  if (!fastest) return "alds: no threshold gives a design that fits " + budget + " (" + why_most + ")";
  return "alds: the designs that fit " + budget + " reach at most " + alds_fps(*fastest) + " (target " +
         fixed_str(o_.target_fps, 1) + "); the faster ones do not fit (" + why_most + ")";
}

void Engine::run_alds() {
  if (st_.generation >= 0) return;  // one step: done if checkpointed
  if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  // One design and no population to fall back on (as greedy): with an
  // oracle that is not SystemC, the allocation is checked in SystemC and,
  // when the oracle was optimistic, made again asking that much more FPS.
  const bool check = o_.final_verify && o_.oracle != ThroughputOracle::SystemC;
  constexpr int kRounds = 5;
  AldsProbes seen;
  double need = o_.target_fps;
  std::optional<Genome> best;
  for (int round = 0; round <= kRounds; ++round) {
    std::string why;
    const std::optional<Genome> found = alds_allocation(0, need, seen, &why);
    if (!found && !best) {
      write_infeasible();
      files_.flush();
      throw Error(why + "; the least-violating designs are in " + (out_ / "infeasible").string() + "/");
    }
    if (!found) break;  // keep the last one; the final SystemC check will say it misses
    best = found;
    if (!check) break;
    simulate({*best});
    const SimLabel& l = st_.labels.at(SearchSpace::key(*best));
    if (l.ok && l.fps_batch1 >= o_.target_fps) break;
    const double oracle_fps = seen.at(SearchSpace::key(*best)).fps_oracle;
    need = l.ok ? std::max(need * 1.001, o_.target_fps * oracle_fps / l.fps_batch1) : need * 1.02;
  }
  Outcome d;
  d.genome = *best;
  d.kind = "alds";
  auto outcomes = evaluate_wave({d}, 0, 0);  // the one accuracy query: the answer's, for the report
  log_outcome(outcomes[0], 0, 0);
  const Outcome& o = outcomes[0];
  st_.population = {{o.genome, o.accuracy, o.fps_oracle, o.fps_sim}};
  st_.stop_reason = "alds: the smallest largest reconstruction error that meets the target";
  if (cb_.log)
    cb_.log("alds: largest reconstruction error " + fixed_str(max_error(o.genome), 4) + " after " +
            std::to_string(seen.size()) + " hardware probes (candidates.csv, kind alds-probe)");
  GenerationStats s = stats(0, outcomes, st_.population);
  s.batch = 0;
  end_generation(s);
}

}  // namespace mixtd::search::detail
