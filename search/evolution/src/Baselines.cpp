// The baselines that share the search's gates and oracles: greedy (per-layer
// sensitivity order) and uniform (one type and MAC ratio everywhere).
#include <algorithm>
#include <cmath>
#include <set>

#include "Engine.h"
#include "Records.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

namespace {

long bin_of(double ratio) { return std::lround(ratio / 0.05); }

}  // namespace

void Engine::run_greedy() {
  // Sensitivity of each candidate: the top-1 it loses alone (the
  // pre-filter's measurement; queried here when the pre-filter was off).
  const auto& layers = space_.layers();
  const Genome none = space_.undecomposed();
  if (st_.generation < 0) {
    st_.population = {{none, 0, 0, 0}};
    if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  }
  const double base = st_.prefilter_done && o_.layer_drop >= 0 ? st_.base_accuracy : accuracy(none, 0);

  // The pre-filter measured every candidate of the unrestricted space; the
  // k-th kept candidate of layer i is the k-th true entry of its keep mask.
  const bool prefiltered = st_.prefilter_done && o_.layer_drop >= 0;
  auto original = [&](std::size_t i, std::size_t k) {
    std::size_t n = 0;
    for (std::size_t o = 0; o + 1 < st_.keep[i].size(); ++o)
      if (st_.keep[i][o] && n++ == k) return o;
    throw Error("greedy: candidate " + std::to_string(k) + " of layer " + layers[i].layer +
                " is not in the pre-filter");
  };
  auto sensitivity = [&](std::size_t i, std::int32_t k) {
    Genome g = none;
    g[i] = k;
    return base - accuracy(g, 0);
  };
  Genome state = st_.population.front().genome;
  while (st_.stop_reason.empty()) {
    const std::int64_t g = st_.generation + 1;
    Outcome d;
    d.genome = state;
    d.kind = "greedy";
    auto outcomes = evaluate_wave({d}, 0, g);
    if (outcomes[0].valid && o_.final_verify && o_.oracle != ThroughputOracle::SystemC) {
      // One design, no population to fall back on: check it in SystemC
      // before stopping, and compress on when the oracle was optimistic.
      simulate({state});
      const SimLabel& l = st_.labels.at(SearchSpace::key(state));
      outcomes[0].fps_sim = l.ok ? l.fps_batch1 : 0;
      if (!l.ok || l.fps_batch1 < o_.target_fps) {
        outcomes[0].valid = false;
        outcomes[0].status = "rejected: systemc below target";
      }
    }
    log_outcome(outcomes[0], g, 0);
    Member m{state, outcomes[0].accuracy, outcomes[0].fps_oracle, outcomes[0].fps_sim};
    st_.population = {m};
    if (outcomes[0].valid) {
      st_.stop_reason = "greedy: target met";
      GenerationStats s = stats(g, outcomes, st_.population);
      s.batch = 0;
      end_generation(s);
      break;
    }
    // The next move: in every layer, the least sensitive candidate of the
    // next MAC-ratio bin below the current one; of those, the least
    // sensitive that fits the budget, or, when none does, the least
    // sensitive of all: a design may have to pass through over-budget ones
    // (a grouped or barely compressed layer can need more on-chip memory
    // than the solver's budget until the next layers shrink). Every move
    // lowers one layer's bin, so the walk ends.
    struct Move {
      double s = 0;
      std::size_t layer = 0;
      std::int32_t k = -1;
    } fitting, any;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& c = layers[i].candidates;
      const long cur = bin_of(c[static_cast<std::size_t>(state[i])].mac_ratio);
      long next = -1;
      for (const auto& x : c)
        if (bin_of(x.mac_ratio) < cur) next = std::max(next, bin_of(x.mac_ratio));
      if (next < 0) continue;
      for (std::size_t k = 0; k + 1 < c.size(); ++k) {
        if (bin_of(c[k].mac_ratio) != next) continue;
        Genome next_state = state;
        next_state[i] = static_cast<std::int32_t>(k);
        const HardwareEval& e = hw_->evaluate(next_state, o_.target_fps);
        const double s =
            prefiltered ? base - st_.prefilter[i][original(i, k)] : sensitivity(i, static_cast<std::int32_t>(k));
        const Move mv{s, i, static_cast<std::int32_t>(k)};
        if (any.k < 0 || s < any.s) any = mv;
        if ((!e.solved || e.fits) && (fitting.k < 0 || s < fitting.s)) fitting = mv;
      }
    }
    const Move& mv = fitting.k >= 0 ? fitting : any;
    if (mv.k < 0)
      st_.stop_reason = "greedy: every layer is at its smallest candidate and the target is not met";
    else
      state[mv.layer] = mv.k;
    st_.population = {{state, 0, 0, 0}};
    GenerationStats s = stats(g, outcomes, {m});
    s.batch = 0;
    end_generation(s);
  }
}

void Engine::run_uniform() {
  if (st_.generation >= 0) return;  // one wave: done if checkpointed
  if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  std::vector<td::TdType> types;
  for (auto t : {td::TdType::SvdFilter, td::TdType::SvdSpatial, td::TdType::Cpd})
    if (allows(space_.options().types, t)) types.push_back(t);
  const auto& co = space_.options().candidates;
  std::vector<Outcome> draws;
  std::set<Genome> seen;
  std::int64_t slot = 0;
  for (auto t : types) {
    for (double rho = co.min_ratio; rho <= co.max_ratio + 1e-9; rho += co.step, ++slot) {
      Genome g = space_.undecomposed();
      for (std::size_t i = 0; i < space_.size(); ++i) {
        const auto& c = space_.layers()[i].candidates;
        // Ungrouped candidates of type t first; grouped ones only where a layer has no ungrouped one.
        for (bool grouped : {false, true}) {
          double best = 1e9;
          for (std::size_t k = 0; k + 1 < c.size(); ++k) {
            const auto& tau = c[k].tau;
            if (tau.type != t || ((tau.g1 * tau.g2 > 1) != grouped)) continue;
            const double dist = std::fabs(c[k].mac_ratio - rho);
            if (dist < best - 1e-12) {
              best = dist;
              g[i] = static_cast<std::int32_t>(k);
            }
          }
          if (best < 1e9) break;
        }
      }
      if (!seen.insert(g).second) continue;
      Outcome d;
      d.genome = g;
      d.kind = "uniform";
      d.slot = slot;
      draws.push_back(std::move(d));
    }
  }
  auto outcomes = evaluate_wave(std::move(draws), 0, 0);
  std::vector<Member> pool;
  for (const auto& d : outcomes) {
    log_outcome(d, 0, 0);
    if (d.valid) pool.push_back({d.genome, d.accuracy, d.fps_oracle, d.fps_sim});
  }
  rank(pool);
  if (pool.empty()) throw Error("--strategy uniform: " + infeasible_message(outcomes.size()));
  st_.population = pool;
  st_.stop_reason = "uniform: every type and ratio tried";
  GenerationStats s = stats(0, outcomes, pool);
  s.batch = 0;
  end_generation(s);
}

}  // namespace mixtd::search::detail
