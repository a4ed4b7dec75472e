// mixtd search — the evolutionary search for τ (paper §V): the most accurate
// decomposed design whose batch-1 FPS meets a target within a resource
// budget, with the random forest (or the analytical model, MACs, SystemC) as
// the throughput oracle; NSGA-II with --pareto; baselines with --strategy.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "MpiRun.h"
#include "QueryCache.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Fidelity.h"
#include "mixtd/nn/Model.h"
#include "mixtd/report/PlotSvg.h"
#include "mixtd/report/ScatterSvg.h"
#include "mixtd/search/Search.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Csv.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Factors.h"

namespace mixtd::cli {

void load_for_accuracy(const std::string& spec, const std::string& weights, net::Network& net, nn::Taus& taus);

namespace {

// The accuracy oracle behind the search's interface. `fixed`: every query
// scores the same evaluation set (batch 0); else the paper's rotation over
// the search split's batches.
class TopOneSource : public search::AccuracySource {
 public:
  // `prefilter_images` in 1 .. o.batch − 1 (fixed only): the pre-filter
  // scores the first that many images of the evaluation set, by an oracle
  // sharing the decompositions; otherwise the evaluation set itself.
  TopOneSource(net::Network net, nn::Dataset search, nn::OracleOptions o, bool fixed, std::int64_t prefilter_images)
      : oracle_(std::move(net), std::move(search), o), fixed_(fixed) {
    if (!fixed || prefilter_images <= 0 || prefilter_images >= o.batch) return;
    nn::OracleOptions p = o;
    p.batch = prefilter_images;
    prefilter_ = std::make_unique<nn::AccuracyOracle>(oracle_.shared_cache(), oracle_.search(), p);
  }
  double query(const search::Taus& taus, std::int64_t batch) override { return oracle_.query(taus, batch); }
  double prefilter_query(const search::Taus& taus) override {
    return prefilter_ ? prefilter_->query(taus, 0) : oracle_.query(taus, 0);
  }
  std::int64_t batches() const override { return fixed_ ? 1 : oracle_.search().size() / oracle_.options().batch; }
  td::Factors factors(const search::Taus& taus) override {
    const nn::OracleOptions& o = oracle_.options();
    if (o.correction == nn::StatsCorrection::None && !o.quantize) return {};
    return oracle_.factors(taus);
  }
  nn::AccuracyOracle& oracle() { return oracle_; }

 private:
  nn::AccuracyOracle oracle_;
  bool fixed_;
  std::unique_ptr<nn::AccuracyOracle> prefilter_;
};

// The successive halving's designs: a table on stdout, a list in final.json.
void print_finalists(const std::vector<search::Finalist>& finalists, nlohmann::json& final_json) {
  std::size_t rounds = 0;
  for (const auto& f : finalists) rounds = std::max(rounds, f.rounds.size());
  std::cout << "finalists (validation top-1 after each round's fine-tune; half kept each round):\n";
  Table t;
  t.add_column("design", Table::Align::Left);
  t.add_column("fitness");
  t.add_column("FPS");
  for (std::size_t k = 0; k < rounds; ++k)
    t.add_column(std::to_string(finalists.front().rounds.size() > k ? finalists.front().rounds[k].first : 0) +
                 " images");
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : finalists) {
    std::vector<std::string> row = {f.name + (f.winner ? " (answer)" : ""), fixed(100 * f.member.accuracy, 2) + "%",
                                    fixed(f.member.fps_sim > 0 ? f.member.fps_sim : f.member.fps, 0)};
    nlohmann::json rs = nlohmann::json::array();
    for (std::size_t k = 0; k < rounds; ++k) {
      row.push_back(k < f.rounds.size() ? fixed(100 * f.rounds[k].second, 2) + "%" : "-");
      if (k < f.rounds.size()) rs.push_back({{"images", f.rounds[k].first}, {"validation_top1", f.rounds[k].second}});
    }
    t.add_row(row);
    list.push_back({{"name", f.name},
                    {"genome", search::SearchSpace::key(f.member.genome)},
                    {"fitness", f.member.accuracy},
                    {"fps_oracle", f.member.fps},
                    {"fps_systemc", f.member.fps_sim},
                    {"rounds", rs},
                    {"answer", f.winner}});
  }
  t.print(std::cout);
  final_json["finalists"] = list;
}

// --fitness: what a query scores and on which images (docs/search.md).
struct FitnessChoice {
  nn::OracleOptions oracle;
  bool fixed = true;  // one evaluation set for every query
};

FitnessChoice fitness_choice(const std::string& fitness, const std::string& correction, std::int64_t eval_images,
                             std::int64_t batch, std::int64_t calib, std::int64_t prefix_cache_mb) {
  require(fitness == "teacher" || fitness == "top1" || fitness == "paper",
          "--fitness '" + fitness + "': legal values are teacher, top1, paper");
  FitnessChoice c;
  c.fixed = fitness != "paper";
  c.oracle.fitness = fitness == "teacher" ? nn::Fitness::Teacher : nn::Fitness::Top1;
  c.oracle.correction = nn::parse_stats_correction(correction);
  c.oracle.batch = c.fixed ? eval_images : (batch > 0 ? batch : 128);
  c.oracle.calibration = calib;
  c.oracle.prefix_cache_mb = prefix_cache_mb;
  return c;
}

class FidelitySource : public search::AccuracySource {
 public:
  FidelitySource(net::Network net, nn::FidelityOptions o) : oracle_(std::move(net), o) {}
  double query(const search::Taus& taus, std::int64_t batch) override { return oracle_.query(taus, batch); }
  std::int64_t batches() const override { return nn::FidelityOracle::kBatches; }

 private:
  nn::FidelityOracle oracle_;
};

// SystemC in the worker pool: one child process per design.
std::string duration(double s) {
  if (s < 120) return fixed(s, 0) + " s";
  if (s < 7200) return fixed(s / 60, 1) + " min";
  return fixed(s / 3600, 1) + " h";
}

double to_num(const std::string& s) { return s.empty() ? NAN : std::strtod(s.c_str(), nullptr); }

// The plots a person looks at after a search (docs/search.md).
// The forest against SystemC on the designs the search verified (the rows
// of kind "verify" in candidates.csv): the issue's ±10% and false-accept
// figures.
struct ForestCheck {
  std::int64_t designs = 0, within_10pct = 0, false_accepts = 0;
  double mean_abs_error = 0;
};

ForestCheck forest_check(const std::filesystem::path& candidates_csv) {
  ForestCheck c;
  std::ifstream in(candidates_csv);
  std::string line;
  std::getline(in, line);
  double err = 0;
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    if (f.size() < 20 || f[2] != "verify") continue;
    const double pred = to_num(f[10]), sim = to_num(f[11]);
    if (f[19] == "rejected: false accept") ++c.false_accepts;
    if (!std::isfinite(pred) || !std::isfinite(sim) || sim <= 0) continue;
    ++c.designs;
    const double e = std::fabs(pred - sim) / sim;
    err += e;
    c.within_10pct += e <= 0.10;
  }
  if (c.designs > 0) c.mean_abs_error = err / static_cast<double>(c.designs);
  return c;
}

// Where the seeded start's baselines landed (candidates.csv's seed-* rows,
// named without the prefix) and the answer (not with --pareto, which has a
// set): labelled over the scatter and as levels on the convergence.
std::vector<report::PlotMarker> plot_markers(const std::filesystem::path& out, const search::SearchResult& r) {
  std::vector<report::PlotMarker> m;
  std::ifstream in(out / "candidates.csv");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    if (f.size() < 20 || f[2].rfind("seed-", 0) != 0) continue;
    const double fps = to_num(f[10]), acc = to_num(f[18]);
    const std::string name = f[2].substr(5);
    const bool seen = std::any_of(m.begin(), m.end(), [&](const auto& x) { return x.name == name; });
    if (std::isfinite(fps) && std::isfinite(acc) && !seen) m.push_back({name, fps, 100 * acc});
  }
  if (r.found && r.pareto.empty()) m.push_back({"answer", r.best.fps, 100 * r.best.accuracy});
  return m;
}

void write_plots(const std::filesystem::path& out, const search::SearchResult& r, double target) {
  const auto markers = plot_markers(out, r);
  // Convergence: best (verified) accuracy per generation and against wall time.
  report::PlotSeries gen{"best verified", "#1f77b4", {}, {}, true}, mean{"population mean", "#aaaaaa", {}, {}, true};
  report::PlotSeries wall{"best verified", "#1f77b4", {}, {}, true};
  for (const auto& h : r.history) {
    if (h.best_verified_accuracy < 0) continue;
    gen.x.push_back(static_cast<double>(h.generation));
    gen.y.push_back(100 * h.best_verified_accuracy);
    mean.x.push_back(static_cast<double>(h.generation));
    mean.y.push_back(100 * h.mean_accuracy);
    wall.x.push_back(h.seconds / 60);
    wall.y.push_back(100 * h.best_verified_accuracy);
  }
  write_file_atomic(out / "convergence.svg",
                    report::plot_svg("Search convergence (fitness of the best design so far)", "generation",
                                     "fitness (%)", {gen, mean}, report::marker_levels(markers)));
  write_file_atomic(out / "convergence-time.svg",
                    report::plot_svg("Search convergence against wall time", "minutes", "fitness (%)", {wall},
                                     report::marker_levels(markers)));
  // Every evaluated candidate: accuracy against the oracle's FPS, with the
  // front of the valid ones and the target.
  std::ifstream in(out / "candidates.csv");
  std::string line;
  std::getline(in, line);
  report::PlotSeries valid{"valid", "#2ca02c", {}, {}}, rejected{"rejected (FPS, floor)", "#d62728", {}, {}};
  report::PlotSeries pred{"verified designs", "#1f77b4", {}, {}};
  std::vector<std::pair<double, double>> pts;
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    if (f.size() < 20) continue;
    const double fps = to_num(f[10]), acc = to_num(f[18]), sim = to_num(f[11]);
    const std::string& status = f[19];
    if (f[2] == "verify") {
      if (std::isfinite(fps) && std::isfinite(sim)) pred.x.push_back(sim), pred.y.push_back(fps);
      continue;
    }
    if (!std::isfinite(acc) || !std::isfinite(fps)) continue;
    if (status == "valid") {
      valid.x.push_back(fps);
      valid.y.push_back(100 * acc);
      pts.emplace_back(fps, 100 * acc);
    } else {
      rejected.x.push_back(fps);
      rejected.y.push_back(100 * acc);
    }
  }
  std::sort(pts.begin(), pts.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second > b.second; });
  report::PlotSeries front{"front (valid)", "#000000", {}, {}, true};
  double best = -1;
  for (const auto& [x, y] : pts)
    if (y > best) {
      front.x.push_back(x);
      front.y.push_back(y);
      best = y;
    }
  std::vector<report::PlotLine> lines;
  if (target > 0) lines.push_back({"target FPS", "#ff7f0e", target, true});
  std::vector<report::PlotSeries> series{rejected, valid, front};
  for (auto& m : report::marker_series(markers)) series.push_back(std::move(m));
  write_file_atomic(out / "accuracy-fps.svg",
                    report::plot_svg("Every evaluated candidate: fitness against FPS",
                                     "batch-1 FPS (throughput oracle)", "fitness (%)", series, lines));
  if (pred.x.size() >= 2)
    write_file_atomic(out / "forest.svg",
                      report::scatter_svg("Forest-predicted against SystemC batch-1 FPS", "SystemC FPS",
                                          "forest-predicted FPS", {{"verified designs", "#1f77b4", pred.x, pred.y}}));
}

// This session's progress (a resumed search's counters carry on from the
// checkpoint, its rates are this session's).
struct Progress {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool resumed = false;
  std::int64_t reports = 0, tried = 0;
  double t_first = 0;  // at the first report
  std::int64_t gen_first = 0, q_first = 0;
};

// One line per generation: best accuracy and its FPS, valid/tried,
// evaluations per second, and the ETA to whichever limit comes first
// (--generations, --max-queries, --time).
void show_progress(const search::GenerationStats& s, std::int64_t max_gen, const search::SearchOptions& o, Progress& p,
                   bool tty) {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
  if (p.reports++ == 0) p.t_first = t, p.gen_first = s.generation, p.q_first = s.queries;
  p.tried += s.tried;
  const double rate = t > 0 ? static_cast<double>(p.tried) / t : 0;
  // Per generation and per query from the second report on (the first
  // generation also carries the pre-filter), else from the start.
  const double span = t - p.t_first;
  const double per_gen =
      p.reports > 1 && s.generation > p.gen_first ? span / static_cast<double>(s.generation - p.gen_first) : t;
  const double qrate = p.reports > 1 && span > 0 ? static_cast<double>(s.queries - p.q_first) / span
                       : !p.resumed && t > 0     ? static_cast<double>(s.queries) / t
                                                 : 0;
  double eta = per_gen * static_cast<double>(std::max<std::int64_t>(0, max_gen - s.generation - 1));
  if (o.max_queries > 0 && qrate > 0)
    eta = std::min(eta, static_cast<double>(std::max<std::int64_t>(0, o.max_queries - s.queries)) / qrate);
  if (o.time_s > 0) eta = std::min(eta, std::max(0.0, o.time_s - s.seconds));
  std::string l = "gen " + std::to_string(s.generation) + "/" + std::to_string(max_gen) + "  best " +
                  (s.best_accuracy >= 0 ? fixed(100 * s.best_accuracy, 2) + "% @ " + fixed(s.best_fps, 0) + " FPS"
                                        : std::string("-"));
  if (s.best_verified_accuracy >= 0) l += " (verified " + fixed(100 * s.best_verified_accuracy, 2) + "%)";
  l += "  valid " + std::to_string(s.valid) + "/" + std::to_string(s.tried) + "  " + fixed(rate, 1) + " eval/s";
  if (o.max_queries > 0) l += "  queries " + std::to_string(s.queries) + "/" + std::to_string(o.max_queries);
  if (s.hypervolume >= 0) l += "  HV " + fixed(s.hypervolume, 4);
  if (s.forest_mape >= 0) l += "  forest " + fixed(100 * s.forest_mape, 1) + "% err";
  if (p.reports > 1) l += "  ETA ≤ " + duration(eta);  // the first generation also carries the pre-filter
  std::fprintf(stderr, tty ? "\r%s\x1b[K" : "%s\n", l.c_str());
  std::fflush(stderr);
}

std::string file_digest(const std::string& path) {
  if (path.empty()) return "(none)";
  const std::string bytes = read_file(path);
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(hash_string(bytes)));
  return b;
}

}  // namespace

Run add_search(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "search",
      "Evolutionary search for the most accurate τ that meets an FPS target (paper §V); NSGA-II with --pareto");
  struct Args {
    std::string net, weights, query_cache, device, out, accuracy = "top1", oracle = "forest", types = "mixed",
                                                        groups = "paper", strategy = "evolution", fitness = "teacher",
                                                        correction = nn::to_string(nn::kSearchCorrection);
    std::int64_t eval_images = nn::kEvalImages, prefilter_images = 256;
    nn::DataConfig data;
    search::SearchOptions o;
    std::int64_t batch = 0, calib = 16, finetune_epochs = 1, finetune_images = 0, prefix_cache_mb = 1024, finalists = 8;
    double finetune_lr = 5e-4, finetune_alpha = 0.9, finetune_temperature = 4;
    int jobs = 0, threads = 1;
    double sim_timeout = 600;
    bool resume = false, no_final_verify = false, no_seeded_start = false, bench = false, mpi = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("NET", a->net, "a zoo name (`mixtd zoo`), a .yaml description or an .onnx model")->required();
  cmd->add_option("--weights", a->weights, "trained weights (.onnx) for NET (default: NET's own / seeded zoo weights)");
  cmd->add_option("--device", a->device, "device (configs/devices: u250, zcu102, zc706, or a .yaml)")->required();
  cmd->add_option("--target-fps", a->o.target_fps, "batch-1 FPS the design must reach (--pareto: optional)");
  cmd->add_option("-o,--output", a->out, "output folder (created; with --resume, continued)")->required();
  cmd->add_option("--budget", a->o.solver.budget, "fraction of the device the solver may use")
      ->capture_default_str()
      ->check(device_fraction());
  cmd->add_option("--oracle", a->oracle, "throughput oracle: macs | analytical | forest | systemc")
      ->capture_default_str();
  cmd->add_option("--strategy", a->strategy, "evolution | random | greedy | uniform | alds (Strategies below)")
      ->capture_default_str();
  cmd->add_flag("--pareto", a->o.pareto, "NSGA-II: the feasible Pareto set of accuracy, FPS and weight memory");
  cmd->add_option("--pareto-cost", a->o.pareto_cost, "the third objective with --pareto: memory | dsp")
      ->capture_default_str();
  cmd->add_option("--types", a->types, "decomposition types: mixed | svd | cpd")->capture_default_str();
  cmd->add_option("--groups", a->groups, "channel groupings offered: paper | none | all")->capture_default_str();
  cmd->add_option("--accuracy", a->accuracy,
                  "top1 (on --dataset) | fidelity (agreement with the float network on seeded inputs: a proxy "
                  "for networks without data)")
      ->capture_default_str();
  add_dataset_options(cmd, a->data,
                      "data set for --accuracy top1 (it needs a training part: the search set is carved from it)");
  cmd->add_option("--fitness", a->fitness,
                  "what a top1 query scores: teacher (agreement with the undecomposed network's soft outputs on "
                  "one fixed evaluation set) | top1 (top-1 on that set) | paper (Mixed-TD: top-1 on a fresh "
                  "--batch of search images each generation)")
      ->capture_default_str();
  cmd->add_option("--eval-images", a->eval_images,
                  "the fixed evaluation set: the first N images of the search split (teacher, top1)")
      ->capture_default_str()
      ->check(in_range(std::int64_t{16}, std::int64_t{1000000}));
  cmd->add_option("--prefilter-images", a->prefilter_images,
                  "the pre-filter scores each candidate on the first N images of the evaluation set (teacher, "
                  "top1; 0 or --eval-images and more: all of it): it only drops candidates far below the "
                  "undecomposed network")
      ->capture_default_str()
      ->check(in_range(std::int64_t{0}, std::int64_t{1000000}));
  cmd->add_option("--correction", a->correction,
                  "statistics correction of the decomposed layers before scoring: none | bias (re-match each "
                  "channel's mean to the undecomposed layer's) | scale (mean and spread)")
      ->capture_default_str();
  cmd->add_option("--batch", a->batch,
                  "images per accuracy query with --fitness paper (default 128) or --accuracy fidelity (16)");
  cmd->add_option("--calib", a->calib, "images calibrating the BFP8 exponents")->capture_default_str();
  cmd->add_option("--prefix-cache", a->prefix_cache_mb,
                  "MB of earlier queries' values at block boundaries, so that a query sharing its first layers' τ "
                  "starts after them (top1; 0: off; answers unchanged)")
      ->capture_default_str();
  cmd->add_option("--population", a->o.population, "|P|")->capture_default_str();
  cmd->add_option("--mutations", a->o.mutations, "mutation children per generation")->capture_default_str();
  cmd->add_option("--crossovers", a->o.crossovers, "crossover children per generation")->capture_default_str();
  cmd->add_option("--mutation-rate", a->o.mutation_rate, "probability a layer is resampled")->capture_default_str();
  cmd->add_option("--mac-ratio", a->o.prior.mac_ratio, "mean per-layer MAC ratio of the sampling prior")
      ->capture_default_str();
  cmd->add_option("--mac-sigma", a->o.prior.sigma, "its standard deviation")->capture_default_str();
  cmd->add_option("--layer-drop", a->o.layer_drop,
                  "pre-filter: drop candidates losing more top-1 (pp) alone; negative: no pre-filter")
      ->capture_default_str();
  cmd->add_option("--min-accuracy", a->o.min_accuracy, "accuracy floor (fraction)")->capture_default_str();
  cmd->add_option("--generations", a->o.generations, "at most this many generations")->capture_default_str();
  cmd->add_option("--patience", a->o.patience, "stop after this many generations without a 0.1 pp gain (0: never)")
      ->capture_default_str();
  cmd->add_option("--time", a->o.time_s, "stop after this many seconds (0: no limit; not reproducible)")
      ->capture_default_str();
  cmd->add_option("--max-queries", a->o.max_queries,
                  "stop after this many accuracy queries after the pre-filter; the generation that reaches it "
                  "scores no further child (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--max-tries", a->o.max_tries, "draws per child before its slot stays empty")->capture_default_str();
  cmd->add_option("--max-initial", a->o.max_initial, "draws for the first population before giving up")
      ->capture_default_str();
  cmd->add_option("--warmup", a->o.warmup, "forest: generations whose feasible children are all SystemC-labelled")
      ->capture_default_str();
  cmd->add_option("--verify", a->o.verify, "forest: SystemC-verify the top this many each generation")
      ->capture_default_str();
  cmd->add_option("--trees", a->o.forest.trees, "forest: trees")->capture_default_str();
  cmd->add_flag("--no-final-verify", a->no_final_verify, "skip the final SystemC check and budget trim");
  cmd->add_flag("--no-seeded-start", a->no_seeded_start,
                "evolution: the first population is the prior's draws alone (the paper's start), without the "
                "uniform, greedy and alds answers");
  cmd->add_option("--finetune-epochs", a->finetune_epochs, "fine-tune the answer this many epochs (0: skip)")
      ->capture_default_str();
  cmd->add_option("--finetune-images", a->finetune_images, "training images per fine-tune epoch (0: all)")
      ->capture_default_str();
  auto* finalists =
      cmd->add_option("--finalists", a->finalists,
                      "choose the answer among the top N of the final population and the seeded start's baselines by "
                      "successive halving on short fine-tunes judged on the validation split (0: the most fit design; "
                      "evolution and random, --accuracy top1)");
  finalists->capture_default_str()->check(in_range(std::int64_t{0}, std::int64_t{1000}));
  cmd->add_option("--finalist-images", a->o.finalist_images,
                  "training images per finalist fine-tune in the first round (doubled each round)")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("--finetune-lr", a->finetune_lr, "fine-tune learning rate (Adam, cosine)")->capture_default_str();
  cmd->add_option("--finetune-alpha", a->finetune_alpha,
                  "weight of the distillation term (KL to the undecomposed network's soft outputs; 0: plain "
                  "cross-entropy)")
      ->capture_default_str()
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--finetune-temperature", a->finetune_temperature, "distillation temperature")
      ->capture_default_str()
      ->check(in_range(0.1, 100.0));
  cmd->add_option("--jobs,-j", a->jobs, "SystemC simulations at once (0 = one per core); results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "LibTorch threads for accuracy queries")->capture_default_str();
  cmd->add_option("--sim-timeout", a->sim_timeout, "seconds per simulation")->capture_default_str();
  cmd->add_option("--seed", a->o.seed, "every random choice derives from it")->capture_default_str();
  cmd->add_option("--query-cache", a->query_cache,
                  "file of accuracy queries shared by searches on the same network and data (appended; "
                  "outputs unchanged, only faster)");
  cmd->add_flag("--resume", a->resume, "continue the search in -o from its last checkpoint");
  cmd->add_flag("--bench", a->bench, "print candidates per hour and the time per gate at the end");
  add_mpi_flag(cmd, a->mpi);
  cmd->footer(
      "Algorithm (paper §V, docs/search.md): each layer's candidates are first tried alone (on the\n"
      "first --prefilter-images evaluation images) and those losing more than --layer-drop points of\n"
      "fitness are dropped; 25 designs are drawn from a\n"
      "Gaussian prior on each layer's MAC ratio and joined by the uniform, greedy and alds answers\n"
      "(--no-seeded-start: not); every generation adds 50 mutation and 50 crossover children, each\n"
      "checked cheapest gate first (MACs bound, solver within --budget, throughput oracle >= target,\n"
      "accuracy floor), and keeps the best 25. The fitness (--fitness teacher) is the agreement\n"
      "exp(-KL) of the decomposed BFP8 network's class probabilities with the undecomposed\n"
      "network's on one fixed set of --eval-images search images, after a statistics correction of\n"
      "the decomposed layers (--correction); every design is scored on the same set, so the best so\n"
      "far never falls. --fitness paper is Mixed-TD's: top-1 on a fresh 128-image batch each\n"
      "generation, parents re-scored. With\n"
      "--oracle forest the first --warmup generations are labelled in SystemC, the forest is fitted\n"
      "on those labels, and each generation the top --verify are checked in SystemC and added to the\n"
      "labels. The answer is chosen among the top --finalists of the last population and the three\n"
      "baselines' answers by successive halving on short fine-tunes judged on the validation split,\n"
      "verified in SystemC, its budget trimmed to just meet the target, and fine-tuned. A checkpoint\n"
      "is written every generation and after every finalist's fine-tune; --resume continues to\n"
      "identical outputs.\n\n"
      "Strategies:\n"
      "  evolution  Mixed-TD's (mu+lambda) evolution, above (NSGA-II with --pareto)\n"
      "  random     the same loop with every child a fresh prior draw\n"
      "  greedy     from undecomposed, compress the layer that costs least top-1 per FPS gained\n"
      "  uniform    one type and MAC ratio for every layer, the most accurate that meets the target\n"
      "  alds       analytic (after ALDS): the smallest largest reconstruction error ||W-W'||/||W||\n"
      "             across layers that meets the target; no pre-filter, one query (the answer's)\n\n"
      "Outputs in -o: best.yaml, pareto/*.yaml, summary.json, final.json, candidates.csv,\n"
      "generations.csv, labels.csv (`mixtd predictor train` reads it), space.csv, timing.csv,\n"
      "convergence.svg, accuracy-fps.svg, forest.svg.\n\n"
      "Examples:\n"
      "  mixtd search resnet18-fmnist:width=0.25 --weights configs/networks/resnet18-fmnist-w0.25.onnx \\\n"
      "      --device zc706 --target-fps 4000 --generations 5 -o s1\n"
      "  mixtd search resnet18-fmnist:width=0.25 --weights configs/networks/resnet18-fmnist-w0.25.onnx \\\n"
      "      --device zc706 --target-fps 4000 --strategy greedy --oracle analytical -o s2\n"
      "  mixtd search resnet18-fmnist:width=0.25 --weights configs/networks/resnet18-fmnist-w0.25.onnx \\\n"
      "      --device zc706 --target-fps 4000 --strategy alds --oracle analytical -o /tmp/alds\n"
      "  mixtd search resnet18 --device u250 --accuracy fidelity --pareto --oracle analytical \\\n"
      "      --generations 10 -o r18-pareto\n"
      "  mpirun -n 3 mixtd search resnet18-fmnist:width=0.25 --accuracy fidelity --device zc706 \\\n"
      "      --target-fps 4000 --oracle systemc --generations 3 -o s3 --mpi   (SystemC on 2 worker ranks)");
  return [a, finalists] {
    MpiRun mpi(a->mpi, "search");
    if (mpi.worker()) return mpi.serve();
    check_output_dir(a->out, "--output");
    if (!a->query_cache.empty()) check_output_file(a->query_cache, "--query-cache");
    search::SearchOptions o = a->o;
    o.oracle = search::parse_oracle(a->oracle);
    o.strategy = search::parse_strategy(a->strategy);
    o.final_verify = !a->no_final_verify;
    o.seeded_start = !a->no_seeded_start;
    require(a->accuracy == "top1" || finalists->count() == 0 || a->finalists == 0,
            "--finalists " + std::to_string(a->finalists) +
                ": the finalists are fine-tuned on --dataset, --accuracy fidelity has none (legal 0)");
    o.finalists = a->accuracy == "top1" ? a->finalists : 0;
    search::SpaceOptions space;
    space.types = search::parse_type_set(a->types);
    space.candidates.groups = search::parse_group_policy(a->groups);
    require(a->accuracy == "top1" || a->accuracy == "fidelity",
            "--accuracy '" + a->accuracy + "': legal values are top1, fidelity");
    const FitnessChoice fit =
        fitness_choice(a->fitness, a->correction, a->eval_images, a->batch, a->calib, a->prefix_cache_mb);
    require(a->jobs >= 0 && a->jobs <= 256, "--jobs " + std::to_string(a->jobs) + ": legal 0..256");
    require(a->threads >= 1 && a->threads <= 256, "--threads " + std::to_string(a->threads) + ": legal 1..256");
    require(a->batch >= 0 && a->batch <= 4096, "--batch " + std::to_string(a->batch) + ": legal 1..4096");
    require(a->calib >= 1 && a->calib <= 100000, "--calib " + std::to_string(a->calib) + ": legal 1..100000");
    require(a->prefix_cache_mb >= 0 && a->prefix_cache_mb <= 1048576,
            "--prefix-cache " + std::to_string(a->prefix_cache_mb) + ": legal 0..1048576 (MB)");
    require(a->finetune_epochs >= 0 && a->finetune_epochs <= 1000,
            "--finetune-epochs " + std::to_string(a->finetune_epochs) + ": legal 0..1000");
    require(a->sim_timeout > 0, "--sim-timeout must be positive");
    search::validate(o);

    net::Network n;
    nn::Taus none;
    load_for_accuracy(a->net, a->weights, n, none);
    // The designs name the network their weights come from: with --weights
    // an .onnx that is NET (the same layers), that file, so that
    // `simulate --functional`, `gen-rtl` and `cosim` of best.yaml run the
    // trained weights rather than NET's seeded ones.
    std::string spec = a->net;
    if (!a->weights.empty() && std::filesystem::path(a->weights).extension() == ".onnx") {
      const net::Network w = net::load_network(a->weights, false);
      if (w.same_structure(net::load_network(a->net, false))) spec = a->weights;
    }
    arch::Design base =
        arch::make_design(net::load_network(spec, false), spec, arch::load_device(a->device), a->device);
    if (spec == a->weights) {
      // Written into out/*.yaml, read relative to that folder (docs/design-yaml.md).
      base.network_file = std::filesystem::absolute(spec).string();
      base.network_spec =
          std::filesystem::absolute(spec).lexically_relative(std::filesystem::absolute(a->out)).string();
    }
    base.network.fold_batchnorm();
    base.budget = o.solver.budget;
    base.clock_mhz = base.device.clock_mhz;
    nn::set_threads(a->threads);

    search::Settings settings = {
        {"network", a->net},         {"--weights", file_digest(a->weights)}, {"--device", a->device},
        {"--accuracy", a->accuracy}, {"--batch", std::to_string(a->batch)},  {"--calib", std::to_string(a->calib)}};
    std::unique_ptr<search::AccuracySource> source;
    std::unique_ptr<nn::DataSplit> data;
    if (a->accuracy == "top1") {
      settings["--dataset"] = a->data.spec;
      if (data_settings(a->data) != a->data.fmnist_dir) settings["data"] = data_settings(a->data);
      try {
        data = std::make_unique<nn::DataSplit>(load_dataset(a->data, n, true, "search"));
      } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("do not fit") == std::string::npos) throw;
        throw Error(what + " (use --accuracy fidelity for networks without data)");
      }
      const std::int64_t largest = nn::largest_evaluation_set(data->search.size(), fit.oracle);
      require(fit.oracle.batch <= largest, "--eval-images " + std::to_string(fit.oracle.batch) +
                                               ": with the calibration images it must fit the " +
                                               std::to_string(data->search.size()) + "-image search split (legal 16.." +
                                               std::to_string(largest) + ")");
      settings["--batch"] = std::to_string(fit.oracle.batch);
      settings["--fitness"] = a->fitness;
      settings["--correction"] = a->correction;
      // Part of the answer (which candidates survive), so a resume must match it.
      settings["--prefilter-images"] = std::to_string(fit.fixed ? a->prefilter_images : 0);
      source = std::make_unique<TopOneSource>(n, data->search, fit.oracle, fit.fixed, a->prefilter_images);
    } else {
      nn::FidelityOptions fo;
      fo.batch = a->batch > 0 ? a->batch : 16;
      fo.seed = o.seed;
      settings["--batch"] = std::to_string(fo.batch);
      source = std::make_unique<FidelitySource>(n, fo);
    }
    std::unique_ptr<CachedAccuracy> cached;
    if (!a->query_cache.empty()) {
      // What a query's value depends on (not the device, target or strategy).
      // Bump the version whenever a query's value changes for the same
      // inputs (v1 answers came from code before commit 8003914's oracle).
      std::string key = "v2";
      for (const char* s : {"network", "--weights", "--accuracy", "--batch", "--calib", "--dataset", "--fitness",
                            "--correction", "--prefilter-images"})
        key += std::string("|") + s + "=" + (settings.count(s) ? settings.at(s) : "");
      key += "|data=" + (a->accuracy == "top1" ? data_settings(a->data) : "seed " + std::to_string(o.seed));
      cached = std::make_unique<CachedAccuracy>(*source, a->query_cache, key);
    }
    search::AccuracySource& accuracy = cached ? static_cast<search::AccuracySource&>(*cached) : *source;
    search::SystemCSimulator simulator(a->jobs, a->sim_timeout);
    search::DecomposerErrors errors(n);  // the weighted network's ‖W − Ŵ‖/‖W‖ per candidate

    const bool tty = ::isatty(2) != 0;
    Progress progress;
    progress.resumed = a->resume;
    search::SearchCallbacks cb;
    cb.log = [tty](const std::string& l) { std::fprintf(stderr, tty ? "\r%s\x1b[K\n" : "%s\n", l.c_str()); };
    cb.on_generation = [&](const search::GenerationStats& s, std::int64_t max_gen) {
      show_progress(s, max_gen, o, progress, tty);
    };
    // The finalists' judge: the answer's fine-tune recipe, shorter, scored on
    // the validation split (the search split scored the fitness, the test
    // split is left for the report).
    auto finetune_recipe = [&](std::int64_t epochs, std::int64_t images) {
      nn::ShortFinetune f;
      f.epochs = epochs;
      f.images = images;
      f.lr = a->finetune_lr;
      f.alpha = a->finetune_alpha;
      f.temperature = a->finetune_temperature;
      f.seed = o.seed;
      f.threads = std::max(2, a->threads);
      return f;
    };
    std::map<std::string, double> start_validation;  // by τ: a finalist's start is the same every round
    if (auto* top = dynamic_cast<TopOneSource*>(source.get()); top && o.finalists > 0)
      cb.finetune_validation = [&, top](const search::Taus& taus, std::int64_t images) {
        nn::Model m = top->oracle().build(taus), teacher = top->oracle().teacher();
        std::string key;
        for (const auto& [name, tau] : taus) key += name + "=" + tau.str() + ";";
        const auto it = start_validation.try_emplace(key, -1.0).first;
        if (it->second < 0) it->second = m.accuracy(data->validation);
        const double start = it->second;
        nn::short_finetune(m, teacher, data->train, finetune_recipe(1, images));
        // A short fine-tune can end below a start the correction already
        // brought close; the answer's fine-tune then keeps the start (as
        // mixtd finetune does), so the design is worth the better of the two.
        return std::max(start, m.accuracy(data->validation));
      };
    const std::filesystem::path out = a->out;
    const auto t0 = std::chrono::steady_clock::now();
    const search::SearchResult r =
        search::run_search(base, space, o, accuracy, simulator, errors, out, settings, a->resume, cb);
    const double search_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tty) std::fprintf(stderr, "\n");
    write_plots(out, r, o.target_fps);

    std::cout << "search: " << search::to_string(o.strategy) << (o.pareto ? " (NSGA-II)" : "") << ", oracle "
              << search::to_string(o.oracle) << ", stopped: " << r.stop_reason << "\n"
              << "design space: 10^" << fixed(r.log10_space_before, 1) << " before the pre-filter, 10^"
              << fixed(r.log10_space_after, 1) << " after\n"
              << r.generations << " generation(s), " << r.evaluated << " candidates, " << r.queries
              << " accuracy queries (+" << r.prefilter_queries << " in the pre-filter), " << duration(r.seconds)
              << "\n";
    if (cached)
      std::cout << "query cache " << a->query_cache << ": " << cached->hits() << " answered, " << cached->misses()
                << " asked\n";
    for (const auto& w : r.warnings) std::cout << "warning: " << w << "\n";
    nlohmann::json final_json;
    if (o.pareto) {
      std::cout << r.pareto.size() << " design(s) in the feasible Pareto set (pareto/*.yaml):\n";
      Table t;
      t.add_column("file", Table::Align::Left);
      const std::string acc_col = a->accuracy == "fidelity" ? "fidelity (batch)" : "top-1 (batch)";
      for (const std::string& c :
           {acc_col, std::string("FPS"), std::string("SystemC FPS"), std::string("weights (Mb)")})
        t.add_column(c);
      for (std::size_t i = 0; i < r.pareto.size(); ++i) {
        const auto& m = r.pareto[i];
        const auto rep = arch::analyse(r.pareto_designs[i]);
        char name[32];
        std::snprintf(name, sizeof name, "%02zu.yaml", i + 1);
        t.add_row({std::string("pareto/") + name, fixed(100 * m.accuracy, 2) + "%", fixed(m.fps, 0),
                   m.fps_sim > 0 ? fixed(m.fps_sim, 0) : "-", fixed(rep.weight_mbit, 2)});
      }
      t.print(std::cout);
    }
    if (!o.pareto && r.found) {
      const auto rep = arch::analyse(r.best_design);
      std::cout << "best: " << (out / "best.yaml").string() << "\n"
                << "  fitness " << fixed(100 * r.best.accuracy, 2) << "%"
                << (a->accuracy == "top1" ? " (" + a->fitness + ")" : std::string(" (fidelity)")) << "\n"
                << "  batch-1 FPS: SystemC " << fixed(r.best_fps_sim, 1) << ", analytical "
                << fixed(r.best_fps_analytical, 1) << " (target " << fixed(o.target_fps, 1) << ", "
                << (r.best_fps_sim > 0 ? fixed(100 * (r.best_fps_sim / o.target_fps - 1), 2) + "% above" : "-") << ")\n"
                << "  weights " << fixed(rep.weight_mbit, 2) << " Mb, DSP " << fixed(rep.total.dsp, 0) << ", BRAM18 "
                << fixed(rep.total.bram18, 0) << ", URAM " << fixed(rep.total.uram, 0) << ", LUT "
                << fixed(rep.total.lut, 0) << " (" << fixed(100 * r.best_utilisation, 1)
                << "% of the device at most)\n";
      if (r.best_max_error >= 0)
        std::cout << "  largest reconstruction error ||W-W'||/||W|| over its layers " << fixed(r.best_max_error, 4)
                  << "\n";
      if (a->accuracy == "top1" && data) {
        // The answer on the full test set, before and after a short fine-tune.
        nn::OracleOptions oo = fit.oracle;
        oo.prefix_cache_mb = 0;
        nn::AccuracyOracle oracle(n, data->search, oo);
        nn::Taus taus;
        for (const auto& [name, m] : r.best_design.layers)
          if (m.tau.decomposed()) taus[name] = m.tau;
        if (fit.fixed) {
          const auto sc = oracle.score(taus, 0);
          final_json["eval_images"] = oo.batch;
          final_json["eval_fitness"] = sc.fitness;
          final_json["eval_top1"] = sc.top1;
          std::cout << "  on the " << oo.batch << "-image evaluation set: fitness (" << a->fitness << ") "
                    << fixed(100 * sc.fitness, 2) << "%, top-1 " << fixed(100 * sc.top1, 2) << "%\n";
        }
        nn::Model m = oracle.build(taus);
        const double before = m.accuracy(data->test);
        final_json["test_top1_before_finetune"] = before;
        std::cout << "  test top-1 (" << data->test.size() << " images): " << fixed(100 * before, 2)
                  << "% before fine-tuning";
        if (a->finetune_epochs > 0) {
          nn::Model teacher = oracle.teacher();
          const double val_before = m.accuracy(data->validation);
          nn::short_finetune(m, teacher, data->train, finetune_recipe(a->finetune_epochs, a->finetune_images));
          const std::int64_t images =
              a->finetune_images > 0 ? std::min(a->finetune_images, data->train.size()) : data->train.size();
          // Chosen on the validation split, as mixtd finetune chooses: a fine-tune
          // that ends below its start is not kept.
          const double val_after = m.accuracy(data->validation);
          const bool kept_start = val_after < val_before;
          if (kept_start) m = oracle.build(taus);
          const double after = kept_start ? before : m.accuracy(data->test);
          final_json["validation_top1_before_finetune"] = val_before;
          final_json["validation_top1_after_finetune"] = val_after;
          net::save_onnx(m.to_network(), out / "best-finetuned.onnx");
          // The trained factors exactly, and best.yaml on both (sim::quantise uses them).
          td::save_factors(out / "best-finetuned.factors", m.decompositions(), m.activation_exponents());
          arch::save_design_with_weights(r.best_design, out / "best-finetuned.yaml", out / "best-finetuned.onnx",
                                         out / "best-finetuned.factors");
          final_json["test_top1_after_finetune"] = after;
          final_json["finetune"] = {{"epochs", a->finetune_epochs},
                                    {"images", images},
                                    {"lr", a->finetune_lr},
                                    {"distill_alpha", a->finetune_alpha},
                                    {"distill_temperature", a->finetune_temperature},
                                    {"kept_start", kept_start}};
          std::cout << ", " << fixed(100 * after, 2) << "% after " << a->finetune_epochs
                    << " epoch(s) of fine-tuning (best-finetuned.onnx, .factors, .yaml)";
          if (kept_start)
            std::cout << "\n  the fine-tune ended below its start on the validation split ("
                      << fixed(100 * val_after, 2) << "% < " << fixed(100 * val_before, 2)
                      << "%): best-finetuned.* hold the start";
        }
        std::cout << "\n";
      }
    }
    if (!r.finalists.empty()) print_finalists(r.finalists, final_json);
    if (!o.pareto && !r.found) std::cout << "no design met the target in SystemC; see summary.json\n";
    if (o.oracle == search::ThroughputOracle::Forest) {
      const ForestCheck fc = forest_check(out / "candidates.csv");
      final_json["forest_verified"] = {{"designs", fc.designs},
                                       {"within_10pct", fc.within_10pct},
                                       {"false_accepts", fc.false_accepts},
                                       {"mean_abs_error", fc.mean_abs_error}};
      if (fc.designs > 0)
        std::cout << "forest on its " << fc.designs << " SystemC-verified designs: "
                  << fixed(100.0 * static_cast<double>(fc.within_10pct) / static_cast<double>(fc.designs), 1)
                  << "% within ±10% of SystemC (mean error " << fixed(100 * fc.mean_abs_error, 1) << "%), "
                  << fc.false_accepts << " false accept(s) ("
                  << fixed(100.0 * static_cast<double>(fc.false_accepts) / static_cast<double>(fc.designs), 1)
                  << "%)\n";
    }
    final_json["seconds"] = r.seconds;
    write_file_atomic(out / "final.json", final_json.dump(2) + "\n");
    if (a->bench) {
      // Speed from timing.csv: this session's candidates and their gates.
      std::ifstream in(out / "timing.csv");
      std::string line;
      std::getline(in, line);
      double hw = 0, simt = 0, acc = 0;
      std::int64_t rows = 0;
      while (std::getline(in, line)) {
        const auto f = split_csv_line(line);
        if (f.size() < 5) continue;
        hw += to_num(f[2]);
        simt += to_num(f[3]);
        acc += to_num(f[4]);
        ++rows;
      }
      // The search's wall time (pre-filter, generations, final SystemC
      // check and budget trim), not the fine-tune after it.
      std::cout << "speed: " << rows << " candidates in " << fixed(search_wall, 1)
                << " s = " << fixed(3600.0 * static_cast<double>(rows) / search_wall, 0)
                << " candidates/hour (pre-filter included, fine-tune not)\n"
                << "time per candidate: hardware gates " << fixed(1e3 * hw / std::max<std::int64_t>(1, rows), 2)
                << " ms, SystemC " << fixed(1e3 * simt / std::max<std::int64_t>(1, rows), 2) << " ms, accuracy "
                << fixed(1e3 * acc / std::max<std::int64_t>(1, rows), 2) << " ms ("
                << (r.queries > 0 ? fixed(1e3 * acc / static_cast<double>(r.queries), 1) : std::string("-"))
                << " ms per query over " << r.queries << " queries; the pre-filter's " << r.prefilter_queries
                << " are not in this figure)\n";
    }
    std::cout << "outputs in " << out.string() << "/: summary.json, candidates.csv, generations.csv, labels.csv, "
              << "convergence.svg, accuracy-fps.svg" << (o.pareto ? ", pareto/" : ", best.yaml") << "\n";
    return r.found ? 0 : 1;
  };
}

}  // namespace mixtd::cli
