// The end of a search (the answer verified in SystemC and trimmed to the
// target, the Pareto set, summary.json), the checkpoint, and run_search().
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "Engine.h"
#include "Records.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Factors.h"

namespace mixtd::search {

Strategy parse_strategy(const std::string& s) {
  if (s == "evolution") return Strategy::Evolution;
  if (s == "random") return Strategy::Random;
  if (s == "greedy") return Strategy::Greedy;
  if (s == "uniform") return Strategy::Uniform;
  if (s == "alds") return Strategy::Alds;
  throw Error("--strategy '" + s + "': legal values are evolution, random, greedy, uniform, alds");
}

std::string to_string(Strategy s) {
  switch (s) {
    case Strategy::Evolution:
      return "evolution";
    case Strategy::Random:
      return "random";
    case Strategy::Greedy:
      return "greedy";
    case Strategy::Uniform:
      return "uniform";
    case Strategy::Alds:
      return "alds";
  }
  return "?";
}

void validate(const SearchOptions& o) {
  auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (!o.pareto)
    require(std::isfinite(o.target_fps) && o.target_fps > 0 && o.target_fps <= 1e9,
            "--target-fps " + detail::number(o.target_fps) + ": must be a frame rate in (0, 1e9]");
  else
    require(std::isfinite(o.target_fps) && o.target_fps >= 0 && o.target_fps <= 1e9,
            "--target-fps " + detail::number(o.target_fps) + ": must be in [0, 1e9] (0: no FPS constraint)");
  require(std::isfinite(o.solver.budget) && o.solver.budget > 0 && o.solver.budget <= 1,
          "--budget " + detail::number(o.solver.budget) + ": must be a fraction of the device in (0, 1]");
  require(o.population >= 2 && o.population <= 10000,
          "--population " + std::to_string(o.population) + ": legal 2..10000");
  require(o.mutations >= 0 && o.mutations <= 100000 && o.crossovers >= 0 && o.crossovers <= 100000 &&
              o.mutations + o.crossovers >= 1,
          "--mutations/--crossovers: each 0..100000, together at least 1");
  require(in(o.mutation_rate, 0, 1) && o.mutation_rate > 0,
          "--mutation-rate " + detail::number(o.mutation_rate) + ": legal (0, 1]");
  require(in(o.prior.mac_ratio, 0.01, 1), "--mac-ratio " + detail::number(o.prior.mac_ratio) + ": legal [0.01, 1]");
  require(in(o.prior.sigma, 1e-3, 10), "--mac-sigma " + detail::number(o.prior.sigma) + ": legal [0.001, 10]");
  require(o.max_tries >= 1 && o.max_tries <= 1000000, "--max-tries " + std::to_string(o.max_tries) + ": legal 1..1e6");
  require(o.max_initial >= 1 && o.max_initial <= 10000000,
          "--max-initial " + std::to_string(o.max_initial) + ": legal 1..1e7");
  require(std::isfinite(o.layer_drop) && o.layer_drop <= 100,
          "--layer-drop " + detail::number(o.layer_drop) + ": legal up to 100 (pp; negative: no pre-filter)");
  require(in(o.min_accuracy, 0, 1), "--min-accuracy " + detail::number(o.min_accuracy) + ": legal [0, 1]");
  require(o.generations >= 1 && o.generations <= 1000000,
          "--generations " + std::to_string(o.generations) + ": legal 1..1e6");
  require(o.patience >= 0 && o.patience <= 1000000, "--patience " + std::to_string(o.patience) + ": legal 0..1e6");
  require(in(o.time_s, 0, 1e8), "--time " + detail::number(o.time_s) + ": legal 0..1e8 seconds");
  require(o.max_queries >= 0, "--max-queries " + std::to_string(o.max_queries) + ": must be at least 0");
  require(o.warmup >= 1 && o.warmup <= 1000, "--warmup " + std::to_string(o.warmup) + ": legal 1..1000");
  require(o.verify >= 1 && o.verify <= 1000, "--verify " + std::to_string(o.verify) + ": legal 1..1000");
  require(o.forest.trees >= 1 && o.forest.trees <= 10000,
          "--trees " + std::to_string(o.forest.trees) + ": legal 1..10000");
  require(in(o.sim_pregate, 0, 1), "--sim-pregate " + detail::number(o.sim_pregate) + ": legal [0, 1]");
  require(o.pareto_cost == "memory" || o.pareto_cost == "dsp",
          "--pareto-cost '" + o.pareto_cost + "': legal values are memory, dsp");
  require(o.strategy != Strategy::Alds || o.min_accuracy == 0,
          "--min-accuracy: --strategy alds chooses without accuracy (its one query only reports the answer's), "
          "so it takes no floor");
  require(o.finalists >= 0 && o.finalists <= 1000, "--finalists " + std::to_string(o.finalists) + ": legal 0..1000");
  require(o.finalist_images >= 1 && o.finalist_images <= 100000000,
          "--finalist-images " + std::to_string(o.finalist_images) + ": legal 1..1e8");
  require(!o.pareto || o.strategy == Strategy::Evolution,
          "--pareto runs NSGA-II; it does not combine with --strategy " + to_string(o.strategy));
}

SearchResult run_search(const arch::Design& base, const SpaceOptions& space, const SearchOptions& options,
                        AccuracySource& accuracy, Simulator& simulator, ReconstructionErrors& errors,
                        const std::filesystem::path& out, const Settings& settings, bool resume,
                        const SearchCallbacks& callbacks) {
  detail::Engine e(base, space, options, accuracy, simulator, errors, out, settings, resume, callbacks);
  return e.run();
}

}  // namespace mixtd::search

namespace mixtd::search::detail {

using nlohmann::json;

void Engine::checkpoint() {
  files_.flush();
  st_.file_sizes = files_.sizes();
  State copy = st_;
  copy.seconds = elapsed();
  write_file_atomic(out_ / "checkpoint.json", checkpoint_json(copy, settings_, hw_->entries()));
}

void Engine::load_checkpoint() { read_checkpoint(out_ / "checkpoint.json", settings_, st_, restored_hw_); }

void Engine::write_space_csv(const SearchSpace& before) {
  std::string t = "layer,original_index,index,tau,mac_ratio,params,prefilter_top1,drop_pp,kept,reconstruction_error\n";
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto& c = before.layers()[i].candidates;
    std::int64_t next = 0;
    for (std::size_t k = 0; k < c.size(); ++k) {
      const bool none = k + 1 == c.size();
      const bool kept = none || st_.keep[i][k];
      const double a = none ? st_.base_accuracy : st_.prefilter[i][k];
      t += before.layers()[i].layer + "," + std::to_string(k) + "," + (kept ? std::to_string(next++) : "") + "," +
           c[k].tau.str() + "," + number(c[k].mac_ratio) + "," + number(c[k].params) + "," + (a >= 0 ? number(a) : "") +
           "," + (a >= 0 ? number(100 * (st_.base_accuracy - a)) : "") + "," + (kept ? "yes" : "no") + "," +
           (st_.errors.empty() ? std::string() : number(st_.errors[i][k])) + "\n";
    }
  }
  write_file_atomic(out_ / "space.csv", t);
}

void Engine::write_infeasible() {
  const auto dir = out_ / "infeasible";
  std::filesystem::create_directories(dir);
  std::string t = "rank,genome,violation,fps_analytical,utilisation,tau\n";
  int n = 0;
  for (const auto& [v, key] : least_violating_) {
    const Genome g = space_.parse_key(key);
    const HardwareEval& e = hw_->evaluate(g, o_.pareto ? 0 : o_.target_fps);
    arch::Design d = e.fits ? hw_->design(g) : space_.design(g);
    d.name = "least-violating-" + std::to_string(++n);
    arch::save_design(d, dir / (std::to_string(n) + ".yaml"));
    t += std::to_string(n) + "," + key + "," + number(v) + "," + number(e.fps_analytical) + "," +
         number(e.utilisation) + ",\"" + space_.describe(g) + "\"\n";
  }
  write_file_atomic(dir / "designs.csv", t);
}

namespace {

json member_summary(const SearchSpace& space, const Member& m, const HardwareEval& e, double max_error) {
  return json{{"genome", SearchSpace::key(m.genome)},
              {"tau", space.describe(m.genome)},
              {"fitness", m.accuracy},
              {"max_reconstruction_error", max_error >= 0 ? json(max_error) : json()},
              {"fps_oracle", m.fps},
              {"fps_analytical", e.fps_analytical},
              {"fps_systemc", m.fps_sim},
              {"macs", e.macs},
              {"params", e.params},
              {"weight_mbit", e.weight_bits / 1e6},
              {"dsp", e.dsp},
              {"bram18", e.bram18},
              {"uram", e.uram},
              {"lut", e.lut},
              {"ff", e.ff}};
}

// The undecomposed network's design at the search's device and budget:
// the figures the flow's report sets the answer beside ("1.37× the
// undecomposed FPS"), evaluated here once, through the same cache, solver
// and analytical model as every candidate, rather than again by each
// reader. SystemC when the search verifies its answer there (one more
// simulation unless the design was labelled already); null figures where
// the design does not fit the budget.
json undecomposed_summary(HardwareCache& hw, const SearchSpace& space, Simulator& sim,
                          const std::map<std::string, SimLabel>& labels, bool simulate) {
  const Genome none = space.undecomposed();
  const HardwareEval& e = hw.evaluate(none, 0);
  const bool fits = e.fits;
  const std::string reason = e.reason;
  const double macs = e.macs, params = e.params;
  const arch::Report rep = arch::analyse(fits ? hw.design(none) : space.design(none));  // weights: any ψ
  json u{{"fits", fits},
         {"reason", fits ? json() : json(reason)},
         {"fps_analytical", json()},
         {"fps_peak_analytical", json()},
         {"fps_systemc", json()},
         {"macs", macs},
         {"params", params},
         {"weight_mbit", rep.weight_mbit}};
  if (!fits) return u;
  u["fps_analytical"] = rep.fps_batch1();
  u["fps_peak_analytical"] = rep.fps_peak();
  u["dsp"] = rep.total.dsp;
  u["bram18"] = rep.total.bram18;
  u["uram"] = rep.total.uram;
  u["lut"] = rep.total.lut;
  u["ff"] = rep.total.ff;
  u["utilisation"] = rep.total.max_utilisation(rep.available);
  if (!simulate) return u;
  const auto it = labels.find(SearchSpace::key(none));
  const SimLabel l = it != labels.end() ? it->second : sim.simulate({hw.design(none)}).at(0);
  if (l.ok) u["fps_systemc"] = l.fps_batch1;
  return u;
}

}  // namespace

void Engine::attach_factors(arch::Design& d, const Genome& g, const std::filesystem::path& file) {
  const td::Factors f = acc_.factors(space_.taus(g));
  if (f.layers.empty() && f.exponents.empty()) return;
  td::save_factors(file, f);
  d.factors_spec = file.filename().string();
  d.factors_file = file.string();
}

void Engine::finish(SearchResult& r) {
  r.stop_reason = st_.stop_reason;
  r.generations = st_.generation + 1;
  r.prefilter_queries = st_.prefilter_queries;
  r.evaluated = st_.evaluated;
  r.log10_space_before = log10_before_;
  r.log10_space_after = space_.log10_size();
  r.history = st_.history;
  r.population = st_.population;
  const double target = o_.target_fps;
  json summary;
  summary["strategy"] = to_string(o_.strategy);
  summary["pareto"] = o_.pareto;
  summary["oracle"] = to_string(o_.oracle);
  summary["target_fps"] = target;
  summary["stop_reason"] = st_.stop_reason;
  summary["generations"] = r.generations;
  summary["design_space_log10"] = {{"before_prefilter", r.log10_space_before}, {"after", r.log10_space_after}};
  summary["base_fitness"] = st_.base_accuracy;  // undecomposed, on the pre-filter's batch

  if (o_.pareto) {
    const auto pts = objectives(st_.population);
    const auto fronts = non_dominated_sort(pts);
    std::vector<Member> front;
    if (!fronts.empty())
      for (std::size_t i : fronts[0])
        if (pts[i].violation == 0) front.push_back(st_.population[i]);
    if (o_.final_verify && o_.oracle != ThroughputOracle::SystemC) {
      std::vector<Genome> gs;
      for (const auto& m : front) gs.push_back(m.genome);
      simulate(gs);
      std::vector<Member> kept;
      for (auto m : front) {
        const SimLabel& l = st_.labels.at(SearchSpace::key(m.genome));
        if (l.ok) m.fps_sim = l.fps_batch1;
        if (l.ok && (target <= 0 || l.fps_batch1 >= target))
          kept.push_back(m);
        else
          warn("Pareto design " + SearchSpace::key(m.genome) + " misses the target in SystemC (" +
               fixed_str(m.fps_sim, 1) + " FPS); left out");
      }
      front = kept;
    }
    std::sort(front.begin(), front.end(),
              [](const Member& a, const Member& b) { return a.fps != b.fps ? a.fps < b.fps : a.genome < b.genome; });
    std::filesystem::create_directories(out_ / "pareto");
    json set = json::array();
    int n = 0;
    for (const auto& m : front) {
      arch::Design d = hw_->design(m.genome);
      d.name = "pareto-" + std::to_string(++n);
      char name[32];
      std::snprintf(name, sizeof name, "%02d.yaml", n);
      attach_factors(d, m.genome, out_ / "pareto" / (std::string(name, 2) + ".factors"));
      arch::save_design(d, out_ / "pareto" / name);
      r.pareto.push_back(m);
      r.pareto_designs.push_back(d);
      json j = member_summary(space_, m, hw_->evaluate(m.genome, 0), max_error(m.genome));
      j["file"] = std::string("pareto/") + name;
      set.push_back(j);
    }
    summary["pareto"] = set;
    r.found = !front.empty();
    if (r.found) {
      r.best = *std::max_element(front.begin(), front.end(),
                                 [](const Member& a, const Member& b) { return a.accuracy < b.accuracy; });
      r.best_max_error = max_error(r.best.genome);
      r.best_design = hw_->design(r.best.genome);
    }
  } else {
    std::vector<Member> ranked = st_.population;
    rank(ranked);
    const Member* best = nullptr;
    std::optional<Member> chosen;
    if (finalists_on()) {
      chosen = successive_halving(ranked, r);
      if (chosen) best = &*chosen;
    } else if (!o_.final_verify) {
      if (!ranked.empty()) best = &ranked.front();
    } else {
      // SystemC-verify in rank order, `verify` at a time, until one passes.
      const std::size_t step = static_cast<std::size_t>(std::max<std::int64_t>(1, o_.verify));
      for (std::size_t i = 0; i < ranked.size() && !best; i += step) {
        std::vector<Genome> gs;
        for (std::size_t k = i; k < std::min(ranked.size(), i + step); ++k) gs.push_back(ranked[k].genome);
        simulate(gs);
        for (std::size_t k = i; k < std::min(ranked.size(), i + step) && !best; ++k) {
          const SimLabel& l = st_.labels.at(SearchSpace::key(ranked[k].genome));
          ranked[k].fps_sim = l.ok ? l.fps_batch1 : 0;
          if (l.ok && l.fps_batch1 >= target) best = &ranked[k];
        }
      }
      if (!best) warn("no design of the final population reaches the target in SystemC");
    }
    r.population = ranked;
    if (best) {
      r.found = true;
      r.best = *best;
      r.best_max_error = max_error(best->genome);
      const HardwareEval& e = hw_->evaluate(best->genome, target);
      arch::Design d = hw_->design(best->genome);
      r.best_fps_analytical = e.fps_analytical;
      r.best_fps_sim = best->fps_sim;
      double used_budget = d.budget;
      if (o_.final_verify && best->fps_sim > 0) {
        // Trim: the solver's designs on a grid of budgets up to the
        // search's, in ascending analytical FPS from a little below the
        // target (scaled by this design's SystemC/analytical ratio; other
        // designs' ratios differ by a few percent), simulated in that order
        // until one meets the target in SystemC: the answer spends no
        // resources on FPS nobody asked for. FPS moves in the solver's
        // discrete ψ steps and is not monotone in the budget, which is why a
        // bisection on the budget, used before, stopped up to 4.6% above.
        const double scaled = target * e.fps_analytical / best->fps_sim;
        constexpr int kBudgets = 96, kMaxSims = 24, kWave = 4;
        std::vector<std::pair<double, SolveResult>> options;  // (budget, result), distinct FPS
        for (int k = 1; k <= kBudgets; ++k) {
          SolverOptions so = o_.solver;
          so.budget = o_.solver.budget * k / kBudgets;
          try {
            SolveResult res = solve(space_.design(best->genome), so);
            const double f = res.report.fps_batch1();
            if (f < 0.97 * scaled) continue;
            const bool seen = std::any_of(options.begin(), options.end(), [&](const auto& o) {
              return o.second.report.fps_batch1() == f;  // the smallest budget giving this FPS
            });
            if (!seen) options.emplace_back(so.budget, std::move(res));
          } catch (const Error&) {
          }
        }
        std::stable_sort(options.begin(), options.end(), [](const auto& x, const auto& y) {
          return x.second.report.fps_batch1() < y.second.report.fps_batch1();
        });
        if (options.size() > static_cast<std::size_t>(kMaxSims)) options.resize(kMaxSims);
        bool trimmed = false;
        for (std::size_t i = 0; i < options.size() && !trimmed; i += kWave) {
          std::vector<arch::Design> wave;
          for (std::size_t k = i; k < std::min(options.size(), i + kWave); ++k)
            wave.push_back(options[k].second.design);
          const auto labels = sim_.simulate(wave);
          for (std::size_t k = 0; k < labels.size() && !trimmed; ++k) {
            if (!labels[k].ok || labels[k].fps_batch1 < target) continue;
            const auto& [budget, res] = options[i + k];
            if (labels[k].fps_batch1 >= best->fps_sim) continue;  // no closer than the answer as found
            d = res.design;
            used_budget = budget;
            r.best_fps_analytical = res.report.fps_batch1();
            r.best_fps_sim = labels[k].fps_batch1;
            r.best_utilisation = res.report.total.max_utilisation(res.report.available);
            trimmed = true;
          }
        }
      }
      d.name = "best";
      r.best_design = d;
      const arch::Report rep = arch::analyse(d);
      if (r.best_utilisation == 0) r.best_utilisation = rep.total.max_utilisation(rep.available);
      attach_factors(d, r.best.genome, out_ / "best.factors");
      arch::save_design(d, out_ / "best.yaml");
      json b = member_summary(space_, r.best, e, r.best_max_error);
      b["file"] = "best.yaml";
      b["budget"] = used_budget;
      b["fps_analytical"] = r.best_fps_analytical;
      b["fps_systemc"] = r.best_fps_sim;
      b["dsp"] = rep.total.dsp;
      b["bram18"] = rep.total.bram18;
      b["uram"] = rep.total.uram;
      b["lut"] = rep.total.lut;
      b["ff"] = rep.total.ff;
      b["utilisation"] = r.best_utilisation;
      summary["best"] = b;
    }
  }
  summary["undecomposed"] = undecomposed_summary(*hw_, space_, sim_, st_.labels, o_.final_verify);
  r.queries = st_.queries;
  summary["queries"] = st_.queries;
  summary["prefilter_queries"] = st_.prefilter_queries;
  summary["evaluated"] = st_.evaluated;
  summary["labels"] = st_.labels.size();
  summary["warnings"] = warnings_;
  r.warnings = warnings_;
  files_.flush();
  write_file_atomic(out_ / "summary.json", summary.dump(2) + "\n");
  r.seconds = elapsed();
}

}  // namespace mixtd::search::detail
