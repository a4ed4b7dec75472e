// The baselines that share the search's gates and oracles: greedy (the
// cheapest accuracy per FPS gained, one layer at a time) and uniform (one
// type and MAC ratio everywhere).
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "Engine.h"
#include "Records.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

double Engine::greedy_base() {
  // Sensitivity of each candidate: the top-1 it loses alone (the
  // pre-filter's measurement; queried here when the pre-filter was off).
  return st_.prefilter_done && prefilter_on() ? st_.base_accuracy : accuracy(space_.undecomposed(), 0);
}

Outcome Engine::greedy_gate(const Genome& state, std::int64_t g, bool verify_in_systemc) {
  Outcome d;
  d.genome = state;
  d.kind = "greedy";
  auto outcomes = hardware_gates({d}, g);
  // The walk goes on until the target is met, --pareto too (whose gate
  // only measures the shortfall): no query before that.
  if (outcomes[0].status.empty() && outcomes[0].violation > 0) outcomes[0].status = "rejected: fps";
  accuracy_gate(outcomes, 0);
  if (!outcomes[0].valid) note_violation(outcomes[0]);
  if (outcomes[0].valid && verify_in_systemc) {
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
  return outcomes[0];
}

std::optional<Genome> Engine::greedy_move(const Genome& state) {
  // The next move: one layer to a candidate of smaller MAC ratio. Of the
  // moves that fit the budget and raise the analytical FPS, the one that
  // costs least accuracy per FPS gained (its pre-filter loss over the
  // layer's current one's, per frame/s); when none raises the FPS, the
  // least sensitive move that fits, and when none fits, the least
  // sensitive of all (a design may have to pass through over-budget or
  // slower ones before later layers shrink). Each move lowers one layer's
  // MAC ratio, so the walk ends.
  const auto& layers = space_.layers();
  const Genome none = space_.undecomposed();
  const double base = greedy_base();
  // The pre-filter measured every candidate of the unrestricted space; the
  // k-th kept candidate of layer i is the k-th true entry of its keep mask.
  const bool prefiltered = st_.prefilter_done && prefilter_on();
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
  auto loss = [&](std::size_t i, std::int32_t k) {
    if (static_cast<std::size_t>(k) + 1 == layers[i].candidates.size()) return 0.0;  // undecomposed
    return prefiltered ? base - st_.prefilter[i][original(i, static_cast<std::size_t>(k))] : sensitivity(i, k);
  };
  const HardwareEval& now = hw_->evaluate(state, o_.target_fps);
  const double fps_now = now.solved && now.fits ? now.fps_analytical : 0;
  struct Move {
    double cost = 0;
    std::size_t layer = 0;
    std::int32_t k = -1;
  } faster, fitting, any;
  auto better = [](const Move& m, double cost) { return m.k < 0 || cost < m.cost; };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& c = layers[i].candidates;
    const double cur_ratio = c[static_cast<std::size_t>(state[i])].mac_ratio;
    const double cur_loss = loss(i, state[i]);
    for (std::size_t k = 0; k + 1 < c.size(); ++k) {
      if (!(c[k].mac_ratio < cur_ratio - 1e-12)) continue;
      Genome next_state = state;
      next_state[i] = static_cast<std::int32_t>(k);
      const HardwareEval& e = hw_->evaluate(next_state, o_.target_fps);
      const double d = loss(i, static_cast<std::int32_t>(k)) - cur_loss;
      const std::int32_t kk = static_cast<std::int32_t>(k);
      if (better(any, d)) any = {d, i, kk};
      if (e.solved && !e.fits) continue;
      if (better(fitting, d)) fitting = {d, i, kk};
      const double gain = e.solved ? e.fps_analytical - fps_now : 0;
      if (gain > 0) {
        const double cost = std::max(d, 1e-4) / gain;
        if (better(faster, cost)) faster = {cost, i, kk};
      }
    }
  }
  const Move& mv = faster.k >= 0 ? faster : fitting.k >= 0 ? fitting : any;
  if (mv.k < 0) return std::nullopt;
  Genome next = state;
  next[mv.layer] = mv.k;
  return next;
}

void Engine::run_greedy() {
  if (st_.generation < 0) {
    st_.population = {{space_.undecomposed(), 0, 0, 0}};
    if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  }
  greedy_base();
  Genome state = st_.population.front().genome;
  while (st_.stop_reason.empty()) {
    const std::int64_t g = st_.generation + 1;
    const Outcome o = greedy_gate(state, g, o_.final_verify && o_.oracle != ThroughputOracle::SystemC);
    log_outcome(o, g, 0);
    Member m{state, o.accuracy, o.fps_oracle, o.fps_sim};
    st_.population = {m};
    if (o.valid) {
      st_.stop_reason = "greedy: target met";
      GenerationStats s = stats(g, {o}, st_.population);
      s.batch = 0;
      end_generation(s);
      break;
    }
    const std::optional<Genome> next = greedy_move(state);
    if (!next)
      st_.stop_reason = "greedy: every layer is at its smallest candidate and the target is not met";
    else
      state = *next;
    st_.population = {{state, 0, 0, 0}};
    GenerationStats s = stats(g, {o}, {m});
    s.batch = 0;
    end_generation(s);
  }
}

std::vector<Outcome> Engine::uniform_wave(std::int64_t g) {
  std::vector<td::TdType> types;
  for (auto t : {td::TdType::SvdFilter, td::TdType::SvdSpatial, td::TdType::Cpd})
    if (allows(space_.options().types, t)) types.push_back(t);
  const auto& co = space_.options().candidates;
  std::vector<Outcome> draws;
  std::set<Genome> seen;
  std::int64_t slot = 0;
  for (auto t : types) {
    for (double rho = co.min_ratio; rho <= co.max_ratio + 1e-9; rho += co.step, ++slot) {
      Genome genome = space_.undecomposed();
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
              genome[i] = static_cast<std::int32_t>(k);
            }
          }
          if (best < 1e9) break;
        }
      }
      if (!seen.insert(genome).second) continue;
      Outcome d;
      d.genome = genome;
      d.kind = "uniform";
      d.slot = slot;
      draws.push_back(std::move(d));
    }
  }
  return evaluate_wave(std::move(draws), 0, g);
}

void Engine::run_uniform() {
  if (st_.generation >= 0) return;  // one wave: done if checkpointed
  if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  const auto outcomes = uniform_wave(0);
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
