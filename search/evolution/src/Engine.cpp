// The search loop: pre-filter, first population, generations (evolution,
// random, NSGA-II), the gates in waves, active learning.
#include "Engine.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "Records.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Engine::Engine(const arch::Design& base, const SpaceOptions& space, const SearchOptions& options,
               AccuracySource& accuracy, Simulator& simulator, ReconstructionErrors& errors,
               const std::filesystem::path& out, const Settings& settings, bool resume,
               const SearchCallbacks& callbacks)
    : base_(base),
      space_(base, space),
      o_(options),
      acc_(accuracy),
      sim_(simulator),
      errors_source_(errors),
      out_(out),
      settings_(settings),
      cb_(callbacks),
      t0_(std::chrono::steady_clock::now()) {
  validate(o_);
  require(acc_.batches() >= 1, "search: the accuracy source has no batch");
  require(!space_.layers().empty(), "network '" + base_.network.name + "' has no decomposable conv layer to search");
  for (const auto& [k, v] : search_settings(o_, space)) settings_[k] = v;
  log10_before_ = space_.log10_size();
  std::filesystem::create_directories(out_);
  const bool has_checkpoint = std::filesystem::exists(out_ / "checkpoint.json");
  if (has_checkpoint && !resume)
    throw Error(out_.string() + ": holds a search (checkpoint.json); add --resume to continue it, or use another -o");
  if (has_checkpoint) load_checkpoint();
  hw_.emplace(space_, o_.solver);
  if (has_checkpoint) {
    if (st_.prefilter_done) restrict_space();
    hw_->restore(std::move(restored_hw_));
  }
  files_.open(out_, file_headers(base_, settings_, hw_->feature_names()), has_checkpoint, st_.file_sizes);
}

double Engine::elapsed() const { return st_.seconds + seconds_since(t0_); }

std::int64_t Engine::batch_of(std::int64_t g) const { return g % acc_.batches(); }

Rng Engine::rng(std::int64_t g, std::int64_t slot, std::uint64_t salt) const {
  // Every draw has its own stream: (seed, generation, slot, attempt). Nothing
  // random is carried from one generation to the next, so a resumed run
  // draws what the uninterrupted one would have.
  std::uint64_t s = o_.seed;
  s = splitmix64(s) ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(g + 2));
  s = splitmix64(s) ^ (0xbf58476d1ce4e5b9ULL * static_cast<std::uint64_t>(slot + 1));
  s = splitmix64(s) ^ (0x94d049bb133111ebULL * (salt + 1));
  return Rng(splitmix64(s));
}

double Engine::accuracy(const Genome& g, std::int64_t batch, double* seconds) {
  const auto key = std::make_pair(space_.describe(g), batch);
  if (auto it = st_.memo.find(key); it != st_.memo.end()) return it->second;
  const auto t = std::chrono::steady_clock::now();
  const double a = acc_.query(space_.taus(g), batch);
  if (seconds) *seconds += seconds_since(t);
  ++st_.queries;
  st_.memo.emplace(key, a);
  return a;
}

bool Engine::sim_gate(std::int64_t g) const {
  return o_.oracle == ThroughputOracle::SystemC ||
         (o_.oracle == ThroughputOracle::Forest && (g < o_.warmup || !forest_));
}

bool Engine::forest_gate(std::int64_t g) const { return o_.oracle == ThroughputOracle::Forest && !sim_gate(g); }

bool Engine::verified(const Member& m) const {
  if (o_.oracle == ThroughputOracle::Forest) {
    const auto it = st_.labels.find(SearchSpace::key(m.genome));
    return it != st_.labels.end() && it->second.ok && (o_.target_fps <= 0 || it->second.fps_batch1 >= o_.target_fps);
  }
  return true;
}

double Engine::violation(double fps) const {
  return o_.target_fps > 0 ? std::max(0.0, (o_.target_fps - fps) / o_.target_fps) : 0.0;
}

void Engine::simulate(const std::vector<Genome>& genomes, double* seconds) {
  std::vector<arch::Design> designs;
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& g : genomes) {
    const std::string key = SearchSpace::key(g);
    if (st_.labels.count(key) || !seen.insert(key).second) continue;
    designs.push_back(hw_->design(g));
    keys.push_back(key);
  }
  if (designs.empty()) return;
  const auto t = std::chrono::steady_clock::now();
  const auto labels = sim_.simulate(designs);
  require(labels.size() == designs.size(), "search: the simulator returned " + std::to_string(labels.size()) +
                                               " labels for " + std::to_string(designs.size()) + " designs");
  if (seconds) *seconds += seconds_since(t) / static_cast<double>(designs.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    st_.labels[keys[i]] = labels[i];
    st_.label_order.push_back(keys[i]);
    const Genome g = space_.parse_key(keys[i]);
    files_.append("labels.csv", label_row(st_.label_order.size() - 1, keys[i], labels[i], hw_->features(g)));
  }
}

void Engine::refit_forest() {
  std::vector<double> x, y;
  std::size_t rows = 0;
  for (const auto& key : st_.label_order) {
    const SimLabel& l = st_.labels.at(key);
    const Genome g = space_.parse_key(key);
    const HardwareEval& e = hw_->evaluate(g, o_.pareto ? 0 : o_.target_fps);
    if (!l.ok || e.fps_analytical <= 0) continue;
    const auto& f = hw_->features(g);
    x.insert(x.end(), f.begin(), f.end());
    y.push_back(l.fps_batch1 / e.fps_analytical);
    ++rows;
  }
  if (rows < 2 || rows == forest_labels_) return;
  FeatureMatrix m;
  m.rows = rows;
  m.cols = hw_->feature_names().size();
  m.values = std::move(x);
  ForestParams p = o_.forest;
  p.threads = 1;  // small fits; one thread keeps --jobs for the simulations
  forest_ = RandomForest::fit(m, y, p, hw_->feature_names());
  forest_labels_ = rows;
}

double Engine::forest_fps(const Genome& g) {
  const HardwareEval& e = hw_->evaluate(g, o_.pareto ? 0 : o_.target_fps);
  return forest_->predict(hw_->features(g).data()) * e.fps_analytical;
}

std::vector<Outcome> Engine::evaluate_wave(std::vector<Outcome> draws, std::int64_t batch, std::int64_t g) {
  draws = hardware_gates(std::move(draws), g);
  // --max-queries is a hard cap on the loop's generations (the same budget
  // for every method compared): checked only between generations, a
  // generation's 100 children could overshoot it by 40%. Generation 0 (the
  // first population and the seeds) and the one-answer baselines are not cut.
  const bool capped = g >= 1 && (o_.strategy == Strategy::Evolution || o_.strategy == Strategy::Random);
  accuracy_gate(draws, batch, capped);
  for (const auto& d : draws)
    if (!d.valid) note_violation(d);
  return draws;
}

std::vector<Outcome> Engine::hardware_gates(std::vector<Outcome> draws, std::int64_t g) {
  const double target = o_.target_fps;
  const double macs_target = o_.pareto ? 0 : target;
  std::vector<Genome> to_sim;
  std::vector<bool> open(draws.size(), false);
  for (std::size_t i = 0; i < draws.size(); ++i) {
    Outcome& d = draws[i];
    const auto t = std::chrono::steady_clock::now();
    const HardwareEval& e = hw_->evaluate(d.genome, macs_target);
    d.t_hw = seconds_since(t);
    if (!e.macs_ok) {
      d.status = "rejected: macs";
      d.violation = e.macs / hw_->macs_bound(target) - 1;
    } else if (!e.fits) {
      d.status = "rejected: resources (" + e.reason + ")";
      d.violation = std::max(0.0, e.utilisation - 1) + 1;  // behind every design that fits
    } else {
      open[i] = true;
      if (e.fps_analytical > max_fps_seen_) {
        max_fps_seen_ = e.fps_analytical;
        max_fps_genome_ = SearchSpace::key(d.genome);
      }
      if (sim_gate(g) && (target <= 0 || e.fps_analytical >= o_.sim_pregate * target)) to_sim.push_back(d.genome);
    }
  }
  double sim_seconds = 0;
  simulate(to_sim, &sim_seconds);
  for (std::size_t i = 0; i < draws.size(); ++i) {
    if (!open[i]) continue;
    Outcome& d = draws[i];
    const std::string key = SearchSpace::key(d.genome);
    const HardwareEval& e = hw_->evaluate(d.genome, macs_target);
    const auto label = st_.labels.find(key);
    if (label != st_.labels.end() && label->second.ok) d.fps_sim = label->second.fps_batch1;
    switch (o_.oracle) {
      case ThroughputOracle::Macs:
        d.fps_oracle = st_.macs_constant / e.macs;
        break;
      case ThroughputOracle::Analytical:
        d.fps_oracle = e.fps_analytical;
        break;
      case ThroughputOracle::Forest:
        d.fps_oracle = forest_gate(g) ? forest_fps(d.genome) : (d.fps_sim > 0 ? d.fps_sim : e.fps_analytical);
        break;
      case ThroughputOracle::SystemC:
        d.fps_oracle = d.fps_sim > 0 ? d.fps_sim : e.fps_analytical;
        break;
    }
    if (sim_gate(g) && label != st_.labels.end()) d.t_sim = sim_seconds;
    if (sim_gate(g) && label != st_.labels.end() && !label->second.ok) {
      d.status = "rejected: systemc failed (" + label->second.error.substr(0, label->second.error.find('\n')) + ")";
      d.violation = 1;
      continue;
    }
    d.violation = violation(d.fps_oracle);
    if (!o_.pareto && d.violation > 0) d.status = "rejected: fps";
  }
  return draws;
}

void Engine::accuracy_gate(std::vector<Outcome>& draws, std::int64_t batch, bool capped) {
  for (Outcome& d : draws) {
    if (!d.status.empty()) continue;
    if (capped && !budget_left() && !st_.memo.count({space_.describe(d.genome), batch})) {
      d.status = "rejected: query budget";  // a remembered score costs no query
      continue;
    }
    d.accuracy = accuracy(d.genome, batch, &d.t_acc);
    if (d.accuracy < o_.min_accuracy) {
      d.status = "rejected: accuracy floor";
      continue;
    }
    d.valid = true;
    d.status = "valid";
  }
}

void Engine::note_violation(const Outcome& o) {
  if (o.violation <= 0 || o.status.rfind("rejected", 0) != 0) return;
  least_violating_.emplace_back(o.violation, SearchSpace::key(o.genome));
  std::sort(least_violating_.begin(), least_violating_.end());
  least_violating_.erase(std::unique(least_violating_.begin(), least_violating_.end(),
                                     [](const auto& a, const auto& b) { return a.second == b.second; }),
                         least_violating_.end());
  if (least_violating_.size() > 5) least_violating_.resize(5);
}

void Engine::rank(std::vector<Member>& pool) const {
  std::stable_sort(pool.begin(), pool.end(), [](const Member& a, const Member& b) {
    if (a.accuracy != b.accuracy) return a.accuracy > b.accuracy;
    return a.genome < b.genome;
  });
}

std::vector<ObjectivePoint> Engine::objectives(const std::vector<Member>& pool) {
  std::vector<ObjectivePoint> pts;
  const double mem_ref = space_.weight_bits(space_.undecomposed());
  const double dsp_ref = base_.device.capacity.dsp;
  for (const auto& m : pool) {
    const HardwareEval& e = hw_->evaluate(m.genome, 0);
    const double cost = o_.pareto_cost == "dsp" ? e.dsp / dsp_ref : e.weight_bits / mem_ref;
    pts.push_back({{m.accuracy, m.fps / st_.hv_fps_scale, -cost}, violation(m.fps)});
  }
  return pts;
}

double Engine::hypervolume(const std::vector<Member>& pool) {
  const auto pts = objectives(pool);
  std::vector<std::vector<double>> feasible;
  // Third objective shifted so the reference point is the origin: 1 − cost.
  for (const auto& p : pts)
    if (p.violation == 0) feasible.push_back({p.objectives[0], p.objectives[1], 1 + p.objectives[2]});
  return search::hypervolume(feasible, {0, 0, 0});
}

void Engine::measure_errors() {
  // Before any accuracy query: deterministic, so a run killed here measures
  // them again on resume.
  const auto& layers = space_.layers();
  st_.errors.assign(layers.size(), {});
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& c : layers[i].candidates) {
      const double e = c.tau.decomposed() ? errors_source_.relative_error(layers[i].layer, c.tau) : 0.0;
      require(std::isfinite(e) && e >= 0, "reconstruction error of " + layers[i].layer + " " + c.tau.str() + " is " +
                                              number(e) + "; it must be finite and not negative");
      st_.errors[i].push_back(e);
    }
    if (cb_.log)
      cb_.log("reconstruction errors " + std::to_string(i + 1) + "/" + std::to_string(layers.size()) + ": " +
              layers[i].layer);
  }
}

void Engine::restrict_space() {
  space_.restrict(st_.keep);
  prior_.emplace(space_, o_.prior);
  errors_.assign(st_.errors.size(), {});
  for (std::size_t i = 0; i < st_.errors.size(); ++i)
    for (std::size_t k = 0; k < st_.errors[i].size(); ++k)
      if (st_.keep[i][k]) errors_[i].push_back(st_.errors[i][k]);  // "none" is always kept
}

double Engine::max_error(const Genome& g) const {
  if (errors_.empty()) return -1;  // not measured: this run does not use them
  double m = 0;
  for (std::size_t i = 0; i < g.size(); ++i) m = std::max(m, errors_[i][static_cast<std::size_t>(g[i])]);
  return m;
}

void Engine::prefilter() {
  // CP-ALS at every CPD rank costs (~33 s on resnet18-fmnist w0.25): only
  // the runs that choose by the errors measure them.
  if (o_.strategy == Strategy::Alds || (o_.strategy == Strategy::Evolution && o_.seeded_start)) measure_errors();
  const auto& layers = space_.layers();
  st_.prefilter.assign(layers.size(), {});
  st_.keep.assign(layers.size(), {});
  for (std::size_t i = 0; i < layers.size(); ++i) {
    st_.prefilter[i].assign(layers[i].candidates.size(), -1);
    st_.keep[i].assign(layers[i].candidates.size(), true);
  }
  if (prefilter_on()) {
    const Genome none = space_.undecomposed();
    st_.base_accuracy = acc_.prefilter_query({});
    ++st_.prefilter_queries;
    std::int64_t kept = 0, total = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      for (std::size_t k = 0; k + 1 < layers[i].candidates.size(); ++k) {
        Genome g = none;
        g[i] = static_cast<std::int32_t>(k);
        const double a = acc_.prefilter_query(space_.taus(g));
        ++st_.prefilter_queries;
        st_.prefilter[i][k] = a;
        st_.keep[i][k] = (st_.base_accuracy - a) * 100 <= o_.layer_drop;
        kept += st_.keep[i][k];
        ++total;
      }
      if (cb_.log)
        cb_.log("pre-filter " + std::to_string(i + 1) + "/" + std::to_string(layers.size()) + ": " + layers[i].layer);
    }
  }
  st_.prefilter_done = true;
  const SearchSpace before = space_;
  restrict_space();
  write_space_csv(before);
}

void Engine::first_population() {
  // The MACs oracle's constant: FPS·MACs of the design nearest the prior's mean.
  if (o_.oracle == ThroughputOracle::Macs) st_.macs_constant = macs_constant(space_, *hw_, o_.prior.mac_ratio);
  const std::int64_t slots = o_.population;
  const std::int64_t tries = std::max<std::int64_t>(1, (o_.max_initial + slots - 1) / slots);
  std::vector<std::int64_t> attempts(static_cast<std::size_t>(slots), 0);
  std::vector<bool> filled(static_cast<std::size_t>(slots), false);
  std::set<std::string> accepted;
  std::vector<Member> pool;
  std::vector<Outcome> all;
  if (o_.strategy == Strategy::Evolution && o_.seeded_start) seed_population(pool, all, accepted);
  const std::size_t seeds = pool.size(), seed_rows = all.size();
  for (;;) {
    std::vector<Outcome> draws;
    for (std::int64_t s = 0; s < slots; ++s) {
      const auto su = static_cast<std::size_t>(s);
      if (filled[su] || attempts[su] >= tries) continue;
      Rng r = rng(0, s, static_cast<std::uint64_t>(attempts[su]));
      Outcome d;
      d.genome = prior_->sample(r);
      d.kind = "init";
      d.slot = s;
      d.attempt = attempts[su]++;
      draws.push_back(std::move(d));
    }
    if (draws.empty()) break;
    for (auto& d : evaluate_wave(std::move(draws), batch_of(0), 0)) {
      if (d.valid && !accepted.insert(SearchSpace::key(d.genome)).second) {
        d.valid = false;
        d.status = "duplicate";
      }
      if (d.valid) {
        filled[static_cast<std::size_t>(d.slot)] = true;
        pool.push_back({d.genome, d.accuracy, d.fps_oracle, d.fps_sim});
      }
      log_outcome(d, 0, batch_of(0));
      all.push_back(std::move(d));
    }
  }
  if (pool.empty()) throw Error(infeasible_message(all.size()));
  if (static_cast<std::int64_t>(pool.size() - seeds) < slots)
    warn("first population: " + std::to_string(pool.size() - seeds) + " of " + std::to_string(slots) +
         " valid designs in " + std::to_string(all.size() - seed_rows) + " draws" +
         (seeds ? " besides " + std::to_string(seeds) + " seed(s)" : std::string()) + "; continuing with those");
  if (o_.pareto) st_.hv_fps_scale = hv_scale(pool, o_.target_fps);
  if (o_.oracle == ThroughputOracle::Forest && o_.warmup <= 1) refit_forest();
  if (o_.pareto) {
    st_.population.clear();
    for (std::size_t i : nsga2_select(objectives(pool), pool.size())) st_.population.push_back(pool[i]);
  } else {
    rank(pool);
    st_.population = pool;
  }
  end_generation(stats(0, all, st_.population));
}

void Engine::generation(std::int64_t g) {
  const std::int64_t b = batch_of(g);
  std::vector<Member> parents = st_.population;
  for (auto& p : parents) p.accuracy = accuracy(p.genome, b);  // re-scored on this generation's batch
  std::set<std::string> accepted;
  for (const auto& p : parents) accepted.insert(SearchSpace::key(p.genome));
  RankCrowding rc;
  if (o_.pareto) rc = rank_and_crowding(objectives(parents));
  const std::int64_t n = static_cast<std::int64_t>(parents.size());
  auto pick = [&](Rng& r) -> std::size_t {
    const auto i = static_cast<std::size_t>(r.below(static_cast<std::uint64_t>(n)));
    if (!o_.pareto) return i;
    const auto j = static_cast<std::size_t>(r.below(static_cast<std::uint64_t>(n)));
    return crowded_less(rc, j, i) ? j : i;  // binary tournament
  };
  const std::int64_t slots = o_.mutations + o_.crossovers;
  std::vector<std::int64_t> attempts(static_cast<std::size_t>(slots), 0);
  std::vector<bool> filled(static_cast<std::size_t>(slots), false);
  std::vector<Member> children;
  std::vector<Outcome> all;
  for (;;) {
    std::vector<Outcome> draws, dups;
    for (std::int64_t s = 0; s < slots; ++s) {
      const auto su = static_cast<std::size_t>(s);
      if (filled[su] || attempts[su] >= o_.max_tries) continue;
      Rng r = rng(g, s, static_cast<std::uint64_t>(attempts[su]));
      Outcome d;
      d.slot = s;
      d.attempt = attempts[su]++;
      if (o_.strategy == Strategy::Random) {
        d.kind = "random";
        d.genome = prior_->sample(r);
      } else if (s < o_.mutations) {
        d.kind = "mutation";
        d.genome = mutate(parents[pick(r)].genome, *prior_, o_.mutation_rate, r);
      } else {
        d.kind = "crossover";
        const std::size_t a = pick(r), c = pick(r);
        d.genome = crossover(parents[a].genome, parents[c].genome, r);
      }
      if (accepted.count(SearchSpace::key(d.genome))) {
        d.status = "duplicate";
        dups.push_back(std::move(d));
      } else {
        draws.push_back(std::move(d));
      }
    }
    if (draws.empty() && dups.empty()) break;
    auto outcomes = evaluate_wave(std::move(draws), b, g);
    for (auto& d : dups) outcomes.push_back(std::move(d));
    std::stable_sort(outcomes.begin(), outcomes.end(),
                     [](const Outcome& x, const Outcome& y) { return x.slot < y.slot; });
    for (auto& d : outcomes) {
      if (d.valid && !accepted.insert(SearchSpace::key(d.genome)).second) {
        d.valid = false;
        d.status = "duplicate";
      }
      if (d.valid) {
        filled[static_cast<std::size_t>(d.slot)] = true;
        children.push_back({d.genome, d.accuracy, d.fps_oracle, d.fps_sim});
      }
      log_outcome(d, g, b);
      all.push_back(std::move(d));
    }
    if (!budget_left()) break;  // the rest of the generation would only be rejected unscored
  }
  std::vector<Member> pool = parents;
  pool.insert(pool.end(), children.begin(), children.end());
  GenerationStats extra;
  if (forest_gate(g)) verify_population(pool, g, extra);
  if (o_.oracle == ThroughputOracle::Forest && g + 1 >= o_.warmup) refit_forest();
  if (o_.pareto) {
    const auto keep = nsga2_select(objectives(pool), static_cast<std::size_t>(o_.population));
    st_.population.clear();
    for (std::size_t i : keep) st_.population.push_back(pool[i]);
  } else {
    rank(pool);
    if (static_cast<std::int64_t>(pool.size()) > o_.population) pool.resize(static_cast<std::size_t>(o_.population));
    st_.population = pool;
  }
  GenerationStats s = stats(g, all, st_.population);
  s.forest_mape = extra.forest_mape;
  s.forest_false_accept = extra.forest_false_accept;
  if (!budget_left())
    st_.stop_reason = "query budget";
  else if (children.empty())
    st_.stop_reason =
        "generation " + std::to_string(g) + " found no valid child in " + std::to_string(all.size()) + " draws";
  end_generation(s);
}

void Engine::verify_population(std::vector<Member>& pool, std::int64_t g, GenerationStats& s) {
  // Rank by accuracy; SystemC-verify from the top until the best `verify`
  // have passed. A design the forest accepted but SystemC rejects leaves.
  double err = 0;
  std::int64_t checked = 0, false_accepts = 0;
  for (;;) {
    rank(pool);
    std::vector<Genome> batch;
    std::int64_t counted = 0;
    for (const auto& m : pool) {
      if (counted == o_.verify) break;
      ++counted;
      if (!st_.labels.count(SearchSpace::key(m.genome))) batch.push_back(m.genome);
    }
    if (batch.empty()) break;
    simulate(batch);
    std::vector<Member> kept;
    for (auto& m : pool) {
      const std::string key = SearchSpace::key(m.genome);
      const bool fresh = std::any_of(batch.begin(), batch.end(), [&](const Genome& x) { return x == m.genome; });
      if (!fresh) {
        kept.push_back(m);
        continue;
      }
      const SimLabel& l = st_.labels.at(key);
      ++checked;
      Outcome o;
      o.genome = m.genome;
      o.kind = "verify";
      o.accuracy = m.accuracy;
      o.fps_oracle = m.fps;
      o.fps_sim = l.ok ? l.fps_batch1 : 0;
      const bool pass = l.ok && l.fps_batch1 >= o_.target_fps;
      if (l.ok) err += std::fabs(m.fps - l.fps_batch1) / l.fps_batch1;
      o.status = pass ? "verified" : (l.ok ? "rejected: false accept" : "rejected: systemc failed");
      log_outcome(o, g, batch_of(g));
      if (pass) {
        m.fps_sim = l.fps_batch1;
        kept.push_back(m);
      } else {
        ++false_accepts;
      }
    }
    pool = std::move(kept);
  }
  if (checked > 0) {
    s.forest_mape = err / static_cast<double>(checked);
    s.forest_false_accept = static_cast<double>(false_accepts) / static_cast<double>(checked);
  }
}

GenerationStats Engine::stats(std::int64_t g, const std::vector<Outcome>& outcomes, const std::vector<Member>& pop) {
  GenerationStats s;
  s.generation = g;
  s.batch = batch_of(g);
  for (const auto& o : outcomes) {
    if (o.kind == "verify") continue;
    ++s.tried;
    ++st_.evaluated;
    if (o.valid) {
      ++s.valid;
    } else {
      const std::string reason = o.status.substr(0, o.status.find(" ("));
      ++s.rejected[reason];
    }
  }
  s.queries = st_.queries;
  s.labels = static_cast<std::int64_t>(st_.labels.size());
  double sum = 0;
  std::int64_t counted = 0;
  s.best_accuracy = -1;  // no feasible member yet
  for (const auto& m : pop) {
    const bool feasible = (!o_.pareto || violation(m.fps) == 0) && m.accuracy >= 0;
    if (!feasible) continue;
    sum += m.accuracy;
    ++counted;
    if (m.accuracy > s.best_accuracy) {
      s.best_accuracy = m.accuracy;
      s.best_fps = m.fps;
    }
    if (verified(m)) s.best_verified_accuracy = std::max(s.best_verified_accuracy, m.accuracy);
  }
  s.mean_accuracy = counted ? sum / static_cast<double>(counted) : 0;
  if (o_.pareto) s.hypervolume = hypervolume(pop);
  return s;
}

void Engine::end_generation(const GenerationStats& in) {
  GenerationStats s = in;
  s.seconds = elapsed();
  st_.history.push_back(s);
  st_.generation = s.generation;
  if (s.best_verified_accuracy > st_.best_seen + 0.001) {
    st_.best_seen = s.best_verified_accuracy;
    st_.stalled = 0;
  } else {
    ++st_.stalled;
  }
  files_.append("generations.csv", generation_row(s));
  files_.append("wall.csv", std::to_string(s.generation) + "," + fixed_str(s.seconds, 3) + "\n");
  checkpoint();
  if (cb_.on_generation) cb_.on_generation(s, o_.generations);
}

bool Engine::should_stop() {
  if (!st_.stop_reason.empty()) return true;
  if (st_.generation + 1 >= o_.generations) return (st_.stop_reason = "generations", true);
  if (o_.patience > 0 && st_.stalled >= o_.patience)
    return (st_.stop_reason = "patience: no 0.1 pp gain in " + std::to_string(o_.patience) + " generations", true);
  if (o_.time_s > 0 && elapsed() >= o_.time_s) return (st_.stop_reason = "time budget", true);
  if (o_.max_queries > 0 && st_.queries >= o_.max_queries) return (st_.stop_reason = "query budget", true);
  return false;
}

void Engine::log_outcome(const Outcome& o, std::int64_t g, std::int64_t batch) {
  const HardwareEval* e = nullptr;
  if (auto it = hw_->entries().find(SearchSpace::key(o.genome)); it != hw_->entries().end()) e = &it->second;
  const std::int64_t row = st_.evaluated_rows++;
  files_.append("candidates.csv", candidate_row(row, g, o, e, batch));
  files_.append("timing.csv", std::to_string(row) + "," + std::to_string(g) + "," + fixed_str(o.t_hw, 6) + "," +
                                  fixed_str(o.t_sim, 6) + "," + fixed_str(o.t_acc, 6) + "\n");
}

std::string Engine::infeasible_message(std::size_t draws) {
  // Designs the MACs bound rejected were never solved: solve the least
  // violating now, so the message can name an FPS that was reached.
  for (const auto& [v, key] : least_violating_) {
    const HardwareEval& e = hw_->evaluate(space_.parse_key(key), 0);
    if (e.fits && e.fps_analytical > max_fps_seen_) max_fps_seen_ = e.fps_analytical;
  }
  write_infeasible();
  files_.flush();
  std::string msg = "no valid design among " + std::to_string(draws) + " draws";
  if (max_fps_seen_ > 0)
    msg += ": the highest analytical batch-1 FPS any of them reached is " + fixed_str(max_fps_seen_, 1) + " (target " +
           fixed_str(o_.target_fps, 1) + ")";
  else
    msg += ": none fits the " + fixed_str(100 * o_.solver.budget, 0) + "% budget of " + base_.device.name;
  return msg + "; the least-violating designs are in " + (out_ / "infeasible").string() +
         "/. Lower --target-fps, raise --budget, lower --mac-ratio, or use a larger --device";
}

void Engine::warn(const std::string& w) {
  warnings_.push_back(w);
  if (cb_.log) cb_.log("warning: " + w);
}

SearchResult Engine::run() {
  if (!st_.prefilter_done) {
    if (cb_.log)
      cb_.log(prefilter_on()                  ? "pre-filter: each layer's candidates alone on search batch 0"
              : o_.strategy == Strategy::Alds ? "pre-filter: skipped (--strategy alds asks no accuracy)"
                                              : "pre-filter: off (--layer-drop < 0), every candidate kept");
    prefilter();
    checkpoint();
  }
  if (o_.strategy == Strategy::Greedy) {
    run_greedy();
  } else if (o_.strategy == Strategy::Uniform) {
    run_uniform();
  } else if (o_.strategy == Strategy::Alds) {
    run_alds();
  } else {
    if (st_.generation < 0) first_population();
    while (!should_stop()) generation(st_.generation + 1);
  }
  SearchResult r;
  finish(r);
  return r;
}

}  // namespace mixtd::search::detail
