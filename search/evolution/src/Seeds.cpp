// The seeded start: the evolution's first population holds, besides
// Mixed-TD's prior draws, the answers of the baselines on the pre-filtered
// space — uniform's best, the end of greedy's walk and the ALDS allocation
// — so that it starts from designs near the target on the accurate side
// (the prior's draws land far from it; docs/search.md) and, by elitism,
// never ends worse than the best of them. Each costs what it costs as a
// baseline (uniform and greedy their accuracy queries, alds one).
#include <optional>
#include <string>

#include "Engine.h"
#include "Records.h"

namespace mixtd::search::detail {

void Engine::seed_population(std::vector<Member>& pool, std::vector<Outcome>& rows, std::set<std::string>& accepted) {
  const std::int64_t batch = batch_of(0);
  std::string found;
  auto add = [&](Outcome d) {
    const bool seed = d.kind.rfind("seed-", 0) == 0;
    if (seed && d.valid && !accepted.insert(SearchSpace::key(d.genome)).second) {
      d.valid = false;
      d.status = "duplicate";
    }
    if (seed && d.valid) {
      pool.push_back({d.genome, d.accuracy, d.fps_oracle, d.fps_sim});
      st_.seeds.emplace_back(d.kind, pool.back());  // finalists even if the evolution drops them
      found += " " + d.kind + " " + fixed_str(100 * d.accuracy, 2) + "% (largest error " +
               fixed_str(max_error(d.genome), 3) + ")";
    }
    log_outcome(d, 0, batch);
    rows.push_back(std::move(d));
  };
  // --pareto's gates keep designs short of the target (they only measure
  // the shortfall); a seed must meet it.
  auto meets = [](const Outcome& d) { return d.valid && d.violation <= 0; };

  // uniform: the most accurate of its designs (ties by genome, as rank()).
  auto wave = uniform_wave(0);
  Outcome* best = nullptr;
  for (auto& d : wave)
    if (meets(d) && (!best || d.accuracy > best->accuracy || (d.accuracy == best->accuracy && d.genome < best->genome)))
      best = &d;
  if (best) best->kind = "seed-uniform";
  for (auto& d : wave) add(std::move(d));

  // greedy: its walk from the undecomposed design, as the baseline takes it.
  greedy_base();
  for (std::optional<Genome> state = space_.undecomposed(); state; state = greedy_move(*state)) {
    Outcome d = greedy_gate(*state, 0, false);
    const bool done = meets(d);
    if (done) d.kind = "seed-greedy";
    add(std::move(d));
    if (done) break;
  }

  // alds: no accuracy in the choice; the seed's query scores it like any member.
  AldsProbes probes;
  if (const auto g = alds_allocation(0, o_.target_fps, probes, nullptr)) {
    Outcome d;
    d.genome = *g;
    d.kind = "seed-alds";
    auto scored = evaluate_wave({d}, batch, 0);
    add(std::move(scored[0]));
  }
  if (cb_.log) cb_.log("seeded start:" + (found.empty() ? std::string(" no baseline found a design") : found));
}

}  // namespace mixtd::search::detail
