// mixtd::evolution: the genome and its operators, the search loop's
// guarantees (reproducible, kill + resume = identical outputs, independent of
// --jobs, a capped and explained infeasible target, settings checked on
// resume), the strategies and NSGA-II mode. Accuracy here is a synthetic,
// deterministic function of τ so the tests need neither LibTorch nor data;
// the SystemC side is a fake (deterministic labels near the analytical
// model) except in the --jobs test, which runs real simulations.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "mixtd/arch/Analytical.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/search/Dataset.h"
#include "mixtd/search/Search.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("mixtd_search_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d.parent_path());
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

double unit_hash(const std::string& s) { return static_cast<double>(hash_string(s) % 1000003) / 1000003.0; }

// Top-1 falls with every layer's compression (more for early, narrow
// layers and for CPD), plus a small per-batch wobble: enough structure for
// the search to have something to find.
class FakeAccuracy : public search::AccuracySource {
 public:
  std::int64_t calls = 0, kill_at = 0;
  double query(const search::Taus& taus, std::int64_t batch) override {
    if (++calls == kill_at) ::raise(SIGKILL);
    double a = 0.92;
    for (const auto& [name, t] : taus) {
      const double early = name.rfind("layer1", 0) == 0 ? 2.0 : 1.0;
      const double type = t.type == td::TdType::Cpd ? 1.5 : t.type == td::TdType::SvdSpatial ? 1.2 : 1.0;
      a -= early * type * 0.04 / std::sqrt(static_cast<double>(t.rank)) * (1 + 0.1 * unit_hash(t.str()));
    }
    std::string key = std::to_string(batch);
    for (const auto& [name, t] : taus) key += name + t.str();
    return std::clamp(a + 0.004 * (unit_hash(key) - 0.5), 0.0, 1.0);
  }
  std::int64_t batches() const override { return 8; }
};

// SystemC stand-in: the analytical batch-1 FPS times 0.97–0.99, fixed per design.
class FakeSimulator : public search::Simulator {
 public:
  std::int64_t designs = 0;
  std::vector<search::SimLabel> simulate(const std::vector<arch::Design>& ds) override {
    std::vector<search::SimLabel> out;
    for (const auto& d : ds) {
      ++designs;
      const auto r = arch::analyse(d);
      std::string key = d.name;
      for (const auto& [n, m] : d.layers)
        for (const auto& p : m.stages)
          key += std::to_string(p.p_in) + "," + std::to_string(p.p_out) + "," + std::to_string(p.fine);
      const double k = 0.97 + 0.02 * unit_hash(key);
      search::SimLabel l;
      l.ok = true;
      l.interval = static_cast<double>(r.interval) / k;
      l.latency = static_cast<double>(r.latency_cycles(1)) / k;
      l.fps_batch1 = r.fps_batch1() * k;
      l.fps_peak = r.fps_peak() * k;
      out.push_back(l);
    }
    return out;
  }
};

// ‖W − Ŵ‖/‖W‖ stand-in: falls with the rank, CPD and the spatial SVD a little
// worse, a fixed per-(layer, τ) wobble; deterministic.
class FakeErrors : public search::ReconstructionErrors {
 public:
  std::int64_t calls = 0, kill_at = 0;
  double relative_error(const std::string& layer, const td::Tau& t) override {
    if (++calls == kill_at) ::raise(SIGKILL);
    if (!t.decomposed()) return 0;
    const double type = t.type == td::TdType::Cpd ? 1.4 : t.type == td::TdType::SvdSpatial ? 1.2 : 1.0;
    const double e = type * 0.6 / std::sqrt(static_cast<double>(t.rank)) * (1 + 0.2 * unit_hash(layer + t.str()));
    return std::min(e, 0.99);
  }
};

arch::Design base_design(const std::string& net = "resnet18-fmnist:width=0.25", const std::string& dev = "zc706") {
  arch::Design d = arch::make_design(net::build_zoo(net, false), net, arch::load_device(dev), dev);
  d.clock_mhz = d.device.clock_mhz;
  return d;
}

// The undecomposed design's analytical batch-1 FPS, so targets can be set relative to it.
double undecomposed_fps(const arch::Design& base) { return search::solve(base).report.fps_batch1(); }

search::SearchOptions small_options(double target) {
  search::SearchOptions o;
  o.target_fps = target;
  o.oracle = search::ThroughputOracle::Analytical;
  o.population = 6;
  o.mutations = 6;
  o.crossovers = 6;
  o.generations = 4;
  o.patience = 0;
  o.layer_drop = 3.0;
  o.forest.trees = 20;
  // The loop's tests start from the prior's draws alone; the seeded start
  // (greedy's walk alone solves ~2,000 designs here, ~8 s) has its own.
  o.seeded_start = false;
  return o;
}

// Ungrouped candidates keep the space (and the pre-filter) small enough for a unit test.
search::SearchResult run(const fs::path& out, const search::SearchOptions& o, search::AccuracySource& acc,
                         search::Simulator& sim, bool resume = false,
                         const std::string& net = "resnet18-fmnist:width=0.25",
                         search::ReconstructionErrors* errors = nullptr,
                         td::GroupPolicy groups = td::GroupPolicy::Ungrouped) {
  search::SpaceOptions space;
  space.candidates.groups = groups;
  FakeErrors fake;
  return search::run_search(base_design(net), space, o, acc, sim, errors ? *errors : fake, out, {{"network", net}},
                            resume);
}

const std::vector<std::string> kReproducible = {"candidates.csv", "generations.csv", "labels.csv",
                                                "space.csv",      "best.yaml",       "summary.json"};

void expect_same_outputs(const fs::path& a, const fs::path& b, const std::vector<std::string>& files = kReproducible) {
  for (const auto& f : files) {
    ASSERT_TRUE(fs::exists(a / f)) << a / f;
    ASSERT_TRUE(fs::exists(b / f)) << b / f;
    EXPECT_EQ(read_text(a / f), read_text(b / f)) << f << " differs between " << a << " and " << b;
  }
}

// The largest of g's layers' errors, g a key of the unrestricted ungrouped space (runs with layer_drop < 0).
double max_error_of(const std::string& key, search::ReconstructionErrors& errors) {
  search::SpaceOptions so;
  so.candidates.groups = td::GroupPolicy::Ungrouped;
  const search::SearchSpace space(base_design(), so);
  const search::Genome g = space.parse_key(key);
  double m = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    m = std::max(m, errors.relative_error(space.layers()[i].layer,
                                          space.layers()[i].candidates[static_cast<std::size_t>(g[i])].tau));
  return m;
}

// candidates.csv rows, split on commas (no field of these rows has one).
std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::size_t a = 0;
    for (std::size_t b; (b = line.find(',', a)) != std::string::npos; a = b + 1) f.push_back(line.substr(a, b - a));
    f.push_back(line.substr(a));
    rows.push_back(f);
  }
  return rows;
}

// --- the genome ---------------------------------------------------------------

TEST(SearchSpace, CandidatesFiguresAndKeys) {
  const arch::Design base = base_design();
  const search::SearchSpace s(base, {});
  ASSERT_GT(s.size(), 0u);
  for (const auto& l : s.layers()) {
    ASSERT_GE(l.candidates.size(), 2u) << l.layer;
    EXPECT_FALSE(l.candidates.back().tau.decomposed());
    EXPECT_DOUBLE_EQ(l.candidates.back().mac_ratio, 1.0);
    for (std::size_t k = 0; k + 1 < l.candidates.size(); ++k) {
      // Near 30–70% of the layer's MACs (td's ranks are nudged to ones with many divisors).
      const auto& c = l.candidates[k];
      EXPECT_TRUE(c.mac_ratio > 0.1 && c.mac_ratio <= 0.8) << l.layer << " " << c.tau.str();
    }
  }
  // MACs and params of a genome are those of its design.
  Rng rng(3);
  const search::Prior prior(s, {});
  for (int i = 0; i < 5; ++i) {
    const search::Genome g = prior.sample(rng);
    const arch::Design d = s.design(g);
    double macs = 0, params = 0;
    for (const auto& l : d.network.layers)
      if (d.layers.count(l.name)) {
        macs += static_cast<double>(d.geometry(l).macs());
        params += static_cast<double>(d.geometry(l).params());
      }
    EXPECT_DOUBLE_EQ(s.macs(g), macs);
    EXPECT_DOUBLE_EQ(s.params(g), params);
    EXPECT_EQ(s.parse_key(search::SearchSpace::key(g)), g);
  }
  EXPECT_THROW(s.parse_key("1.2"), Error);
  EXPECT_THROW(s.parse_key("x"), Error);
}

TEST(SearchSpace, TypesRestrictTheCandidates) {
  const arch::Design base = base_design();
  search::SpaceOptions svd, cpd;
  svd.types = search::TypeSet::Svd;
  cpd.types = search::TypeSet::Cpd;
  const search::SearchSpace s_svd(base, svd), s_cpd(base, cpd), s_mixed(base, {});
  std::size_t n_svd = 0, n_cpd = 0, n_mixed = 0;
  for (const auto& l : s_svd.layers()) {
    n_svd += l.candidates.size() - 1;
    for (const auto& c : l.candidates) EXPECT_NE(c.tau.type, td::TdType::Cpd);
  }
  for (const auto& l : s_cpd.layers()) {
    n_cpd += l.candidates.size() - 1;
    for (const auto& c : l.candidates) EXPECT_TRUE(c.tau.type == td::TdType::Cpd || c.tau.type == td::TdType::None);
  }
  for (const auto& l : s_mixed.layers()) n_mixed += l.candidates.size() - 1;
  EXPECT_GT(n_svd, 0u);
  EXPECT_GT(n_cpd, 0u);
  EXPECT_EQ(n_svd + n_cpd, n_mixed);
  EXPECT_THROW(search::parse_type_set("tucker"), Error);
}

TEST(SearchSpace, PriorIsMixedTdsGaussianOverBins) {
  const arch::Design base = base_design();
  const search::SearchSpace s(base, {});
  search::PriorOptions po;
  po.mac_ratio = 0.5;
  const search::Prior prior(s, po);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto& w = prior.weights(i);
    double sum = 0;
    for (double x : w) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-12);
    const auto& c = s.layers()[i].candidates;
    // Candidates in one 0.05 bin share its weight evenly; a bin nearer the mean weighs more.
    for (std::size_t a = 0; a < c.size(); ++a)
      for (std::size_t b = 0; b < c.size(); ++b) {
        const long ba = std::lround(c[a].mac_ratio / 0.05), bb = std::lround(c[b].mac_ratio / 0.05);
        if (ba == bb) {
          EXPECT_DOUBLE_EQ(w[a], w[b]);
        }
      }
  }
  // Sampling follows the weights.
  Rng rng(1);
  std::vector<double> hits(s.layers()[0].candidates.size(), 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) hits[static_cast<std::size_t>(prior.sample_layer(0, rng))] += 1.0 / n;
  for (std::size_t k = 0; k < hits.size(); ++k) EXPECT_NEAR(hits[k], prior.weights(0)[k], 0.02);
}

TEST(SearchSpace, MutationAndCrossover) {
  const arch::Design base = base_design();
  const search::SearchSpace s(base, {});
  const search::Prior prior(s, {});
  Rng rng(7);
  const search::Genome a = prior.sample(rng), b = prior.sample(rng);
  // rate → 0 keeps the parent; rate 1 resamples every layer.
  EXPECT_EQ(search::mutate(a, prior, 1e-12, rng), a);
  const search::Genome c = search::crossover(a, b, rng);
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_TRUE(c[i] == a[i] || c[i] == b[i]);
  int changed = 0;
  for (int t = 0; t < 200; ++t) {
    const auto m = search::mutate(a, prior, 0.2, rng);
    for (std::size_t i = 0; i < m.size(); ++i) changed += m[i] != a[i];
  }
  // About 0.2 of layers resampled (a resample may land on the same candidate).
  const double rate = changed / (200.0 * static_cast<double>(a.size()));
  EXPECT_GT(rate, 0.08);
  EXPECT_LT(rate, 0.22);
}

// --- the search ---------------------------------------------------------------

TEST(Search, MeetsTheTargetAndIsReproducible) {
  const double target = 1.25 * undecomposed_fps(base_design());
  FakeAccuracy acc1, acc2;
  FakeSimulator sim1, sim2;
  const auto o = small_options(target);
  const fs::path d1 = scratch("repro1"), d2 = scratch("repro2");
  const auto r = run(d1, o, acc1, sim1);
  run(d2, o, acc2, sim2);
  expect_same_outputs(d1, d2);
  ASSERT_TRUE(r.found);
  EXPECT_GE(r.best_fps_sim, target);
  // The budget trim brings the answer to just above the target.
  EXPECT_LE(r.best_fps_sim, 1.03 * target);
  EXPECT_EQ(r.generations, 4);
  // Every survivor meets the target by the oracle.
  for (const auto& m : r.population) EXPECT_GE(m.fps, target);
}

// summary.json carries the undecomposed design at the search's device and
// budget (what the flow's report sets the answer beside): the solver's and
// the analytical model's figures, SystemC's only when the search verifies.
TEST(Search, SummaryHoldsTheUndecomposedDesignAtTheSameBudget) {
  const arch::Design base = base_design();
  const double fps = undecomposed_fps(base);
  auto o = small_options(1.25 * fps);
  o.generations = 1;
  for (const bool verify : {true, false}) {
    o.final_verify = verify;
    FakeAccuracy acc;
    FakeSimulator sim;
    const fs::path dir = scratch(verify ? "undecomposed" : "undecomposed-unverified");
    run(dir, o, acc, sim);
    const auto u = nlohmann::json::parse(read_text(dir / "summary.json")).at("undecomposed");
    EXPECT_TRUE(u.at("fits").get<bool>());
    EXPECT_DOUBLE_EQ(u.at("fps_analytical").get<double>(), fps);
    EXPECT_DOUBLE_EQ(u.at("weight_mbit").get<double>(), arch::analyse(base).weight_mbit);
    EXPECT_GT(u.at("dsp").get<double>(), 0);
    if (!verify) {
      EXPECT_TRUE(u.at("fps_systemc").is_null());
      continue;
    }
    const double sc = u.at("fps_systemc").get<double>();  // FakeSimulator: 0.97–0.99 × analytical
    EXPECT_GE(sc, 0.97 * fps);
    EXPECT_LE(sc, 0.99 * fps);
  }
}

// Kills a run of `o` in `dir` at accuracy query `kill_query` or at
// reconstruction error `kill_error` (0: not), resumes it, and expects the
// outputs of the uninterrupted run in `ref`.
void kill_and_resume(const search::SearchOptions& o, const fs::path& ref, const fs::path& dir, std::int64_t kill_query,
                     std::int64_t kill_error) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FakeAccuracy acc;
    acc.kill_at = kill_query;
    FakeErrors errors;
    errors.kill_at = kill_error;
    FakeSimulator sim;
    try {
      run(dir, o, acc, sim, false, "resnet18-fmnist:width=0.25", &errors);
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run was to be killed at query " << kill_query << " / error " << kill_error;
  FakeAccuracy acc;
  FakeSimulator sim;
  run(dir, o, acc, sim, /*resume=*/true);
  expect_same_outputs(ref, dir);
}

TEST(Search, KilledAnywhereAndResumedGivesIdenticalOutputs) {
  const double target = 1.25 * undecomposed_fps(base_design());
  const auto o = small_options(target);
  const fs::path ref = scratch("ref");
  FakeAccuracy counter;
  FakeSimulator s0;
  run(ref, o, counter, s0);
  // Kill points: in the pre-filter, in the first population and at seeded
  // random queries after it.
  Rng rng(11);
  std::vector<std::int64_t> kills = {3, counter.calls / 3};
  for (int i = 0; i < 3; ++i)
    kills.push_back(1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(counter.calls - 1))));
  for (const std::int64_t kill : kills) kill_and_resume(o, ref, scratch("kill" + std::to_string(kill)), kill, 0);
}

TEST(Search, SeededStartKilledAnywhereAndResumedGivesIdenticalOutputs) {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.seeded_start = true;
  o.generations = 2;
  const fs::path ref = scratch("seeded-ref");
  FakeAccuracy counter;
  FakeSimulator sim;
  const auto r = run(ref, o, counter, sim);
  // After the pre-filter: uniform's wave (one query per design that meets
  // the target), greedy's answer, alds's answer, then the prior's draws.
  std::int64_t uniform_queries = 0;
  for (const auto& row : csv_rows(ref / "candidates.csv"))
    uniform_queries += (row[2] == "uniform" || row[2] == "seed-uniform") && !row[18].empty();
  const std::int64_t pf = r.prefilter_queries;
  for (const std::int64_t kill : {pf + 2, pf + uniform_queries + 1, pf + uniform_queries + 2, counter.calls - 2})
    kill_and_resume(o, ref, scratch("seeded-kill" + std::to_string(kill)), kill, 0);
}

TEST(Search, AldsKilledAnywhereAndResumedGivesIdenticalOutputs) {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.strategy = search::Strategy::Alds;
  const fs::path ref = scratch("alds-ref");
  FakeAccuracy acc;
  FakeSimulator sim;
  run(ref, o, acc, sim);
  ASSERT_EQ(acc.calls, 1);
  kill_and_resume(o, ref, scratch("alds-kill-query"), 1, 0);  // the answer's query, after every probe
  kill_and_resume(o, ref, scratch("alds-kill-error"), 0, 25);
}

TEST(Search, ResumeRefusesOtherSettingsAndAFreshRunRefusesACheckpoint) {
  const double target = 1.25 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.generations = 1;
  const fs::path dir = scratch("settings");
  FakeAccuracy acc;
  FakeSimulator sim;
  run(dir, o, acc, sim);
  try {
    run(dir, o, acc, sim, false);
    FAIL() << "a fresh run over a checkpoint must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
  auto seeded = o;
  seeded.seeded_start = true;
  try {
    run(dir, seeded, acc, sim, true);
    FAIL() << "resuming with another start must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--seeded-start"), std::string::npos) << e.what();
  }
  auto other = o;
  other.target_fps = target * 1.1;
  try {
    run(dir, other, acc, sim, true);
    FAIL() << "resuming with another target must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--target-fps"), std::string::npos) << e.what();
  }
  // Stopping criteria may change: a longer run continues.
  auto longer = o;
  longer.generations = 2;
  EXPECT_EQ(run(dir, longer, acc, sim, true).generations, 2);
}

TEST(Search, InfeasibleTargetEndsWithTheHighestFpsAndTheLeastViolatingDesigns) {
  const double fps = undecomposed_fps(base_design());
  auto o = small_options(50 * fps);
  o.max_initial = 60;
  const fs::path dir = scratch("infeasible");
  FakeAccuracy acc;
  FakeSimulator sim;
  try {
    run(dir, o, acc, sim);
    FAIL() << "an unreachable target must end in an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("highest"), std::string::npos) << m;
    EXPECT_NE(m.find("infeasible"), std::string::npos) << m;
  }
  EXPECT_TRUE(fs::exists(dir / "infeasible" / "1.yaml"));
  EXPECT_TRUE(fs::exists(dir / "infeasible" / "designs.csv"));
  EXPECT_NO_THROW(arch::load_design(dir / "infeasible" / "1.yaml"));
}

TEST(Search, BadOptionsAreClearErrors) {
  auto expect_error = [](search::SearchOptions o, const std::string& what) {
    try {
      search::validate(o);
      FAIL() << what << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto o = small_options(100);
  o.target_fps = 0;
  expect_error(o, "--target-fps");
  o = small_options(-5);
  expect_error(o, "--target-fps");
  o = small_options(100);
  o.solver.budget = 1.5;
  expect_error(o, "--budget");
  o.solver.budget = 0;
  expect_error(o, "--budget");
  o = small_options(100);
  o.population = 1;
  expect_error(o, "--population");
  o = small_options(100);
  o.pareto = true;
  o.strategy = search::Strategy::Greedy;
  expect_error(o, "--pareto");
  o = small_options(100);
  o.strategy = search::Strategy::Alds;
  o.min_accuracy = 0.5;
  expect_error(o, "--min-accuracy");
  EXPECT_EQ(search::parse_strategy("alds"), search::Strategy::Alds);
  EXPECT_EQ(search::to_string(search::Strategy::Alds), "alds");
  try {
    search::parse_strategy("hill");
    FAIL() << "an unknown strategy must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("alds"), std::string::npos) << e.what();
  }
}

TEST(Search, StrategiesMeetTheTarget) {
  const double target = 1.2 * undecomposed_fps(base_design());
  for (auto st : {search::Strategy::Random, search::Strategy::Greedy, search::Strategy::Uniform}) {
    auto o = small_options(target);
    o.strategy = st;
    FakeAccuracy acc;
    FakeSimulator sim;
    const auto r = run(scratch("strategy-" + search::to_string(st)), o, acc, sim);
    ASSERT_TRUE(r.found) << search::to_string(st);
    EXPECT_GE(r.best_fps_sim, target) << search::to_string(st);
    EXPECT_LE(r.best_fps_sim, 1.03 * target) << search::to_string(st);  // the trim
  }
}

TEST(Search, EvolutionBeatsRandomOnTheSyntheticProblem) {
  // Same query budget; the synthetic accuracy rewards compressing late
  // layers: selection and variation should find more of it than sampling.
  const double target = 1.25 * undecomposed_fps(base_design());
  double evo = 0, rnd = 0;
  for (std::uint64_t seed : {1, 2, 3}) {
    auto o = small_options(target);
    o.population = 10;
    o.mutations = 10;
    o.crossovers = 10;
    o.generations = 8;
    o.seed = seed;
    FakeAccuracy a1, a2;
    FakeSimulator s1, s2;
    evo += run(scratch("evo" + std::to_string(seed)), o, a1, s1).best.accuracy;
    o.strategy = search::Strategy::Random;
    rnd += run(scratch("rnd" + std::to_string(seed)), o, a2, s2).best.accuracy;
  }
  EXPECT_GT(evo, rnd);
}

TEST(Search, ForestInTheLoopLabelsVerifiesAndWritesADataset) {
  const double target = 1.25 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.oracle = search::ThroughputOracle::Forest;
  o.warmup = 2;
  o.generations = 5;
  const fs::path dir = scratch("forest");
  FakeAccuracy acc;
  FakeSimulator sim;
  const auto r = run(dir, o, acc, sim);
  ASSERT_TRUE(r.found);
  EXPECT_GE(r.best_fps_sim, target);
  // Warm-up generations label every feasible child near the target; later ones verify the top.
  bool verified_after_warmup = false;
  for (const auto& h : r.history)
    if (h.generation >= o.warmup && h.forest_mape >= 0) {
      verified_after_warmup = true;
      EXPECT_LT(h.forest_mape, 0.10);  // the fake SystemC is the model × 0.97–0.99
    }
  EXPECT_TRUE(verified_after_warmup);
  const auto ds = search::read_dataset(dir / "labels.csv");
  EXPECT_GE(ds.rows.size(), static_cast<std::size_t>(o.population));
  EXPECT_GE(ds.column("sim_fps_batch1"), 0);
}

TEST(Search, ParetoModeReturnsAFeasibleNonDominatedSet) {
  const double target = 1.1 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.pareto = true;
  o.generations = 4;
  o.seeded_start = true;  // NSGA-II starts from the baselines' answers too
  const fs::path dir = scratch("pareto");
  FakeAccuracy acc;
  FakeSimulator sim;
  const auto r = run(dir, o, acc, sim);
  ASSERT_FALSE(r.pareto.empty());
  for (std::size_t i = 0; i < r.pareto.size(); ++i) {
    EXPECT_GE(r.pareto[i].fps_sim, target);
    EXPECT_TRUE(fs::exists(dir / "pareto" / (std::string(i + 1 < 10 ? "0" : "") + std::to_string(i + 1) + ".yaml")));
  }
  for (const auto& h : r.history) EXPECT_GE(h.hypervolume, 0);
  std::set<std::string> seeds;
  for (const auto& row : csv_rows(dir / "candidates.csv"))
    if (row[2].rfind("seed-", 0) == 0 && row[19] == "valid") seeds.insert(row[2]);
  EXPECT_EQ(seeds, (std::set<std::string>{"seed-alds", "seed-greedy", "seed-uniform"}));
  // No member of the set dominates another on (accuracy, FPS, weight memory).
  for (const auto& a : r.pareto)
    for (const auto& b : r.pareto) {
      if (&a == &b) continue;
      const double ma = arch::analyse(arch::Design(r.pareto_designs[&a - &r.pareto[0]])).weight_mbit;
      const double mb = arch::analyse(arch::Design(r.pareto_designs[&b - &r.pareto[0]])).weight_mbit;
      const bool dom = a.accuracy >= b.accuracy && a.fps >= b.fps && ma <= mb &&
                       (a.accuracy > b.accuracy || a.fps > b.fps || ma < mb);
      EXPECT_FALSE(dom);
    }
}

TEST(Search, AldsMeetsTheTargetWithTheSmallestLargestErrorOfAnyFeasibleDesignSampled) {
  const double target = 1.2 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.layer_drop = -1;  // genome keys in the unrestricted space, for max_error_of
  o.final_verify = false;
  FakeErrors errors;
  // Every design uniform and random found feasible by the same gates.
  std::vector<std::string> feasible;
  for (auto st : {search::Strategy::Uniform, search::Strategy::Random}) {
    auto ob = o;
    ob.strategy = st;
    FakeAccuracy acc;
    FakeSimulator sim;
    const fs::path dir = scratch("alds-vs-" + search::to_string(st));
    run(dir, ob, acc, sim);
    for (const auto& r : csv_rows(dir / "candidates.csv"))
      if (r[19] == "valid") feasible.push_back(r[5]);
  }
  ASSERT_GT(feasible.size(), 10u);
  o.strategy = search::Strategy::Alds;
  FakeAccuracy acc;
  FakeSimulator sim;
  const fs::path dir = scratch("alds");
  const auto r = run(dir, o, acc, sim);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(acc.calls, 1) << "alds asks one accuracy query, the answer's";
  EXPECT_EQ(r.prefilter_queries, 0);
  EXPECT_GE(r.best.fps, target);
  EXPECT_NEAR(r.best_max_error, max_error_of(search::SearchSpace::key(r.best.genome), errors), 1e-12);
  for (const auto& key : feasible) EXPECT_LE(r.best_max_error, max_error_of(key, errors) + 1e-12) << key;
  // The probes are in candidates.csv, hardware only; the answer is the one row with an accuracy.
  std::int64_t probes = 0, answers = 0;
  for (const auto& row : csv_rows(dir / "candidates.csv")) {
    probes += row[2] == "alds-probe";
    answers += row[2] == "alds";
    if (row[2] == "alds-probe") {
      EXPECT_EQ(row[18], "");
    }
  }
  EXPECT_GT(probes, 5);
  EXPECT_EQ(answers, 1);
}

TEST(Search, AldsFindsADesignWhenTheMostCompressedOneDoesNotFit) {
  // With the paper's groupings the fewest-MAC candidates split layers into
  // many chunks: the most compressed design needs ~11x the LUT budget of a
  // ZC706, slower designs fit. The bisection is on FPS; resources are met
  // from the boundary up.
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.strategy = search::Strategy::Alds;
  o.final_verify = false;
  const fs::path dir = scratch("alds-paper-groups");
  FakeAccuracy acc;
  FakeSimulator sim;
  const auto r = run(dir, o, acc, sim, false, "resnet18-fmnist:width=0.25", nullptr, td::GroupPolicy::Paper);
  const auto rows = csv_rows(dir / "candidates.csv");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0][2], "alds-probe");
  EXPECT_EQ(rows[0][19].rfind("rejected: resources (LUT", 0), 0u) << rows[0][19];
  ASSERT_TRUE(r.found);
  EXPECT_GE(r.best.fps, o.target_fps);
}

TEST(Search, AldsWithFinalVerifyMeetsTheTargetInSystemC) {
  const double target = 1.2 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.strategy = search::Strategy::Alds;
  FakeAccuracy acc;
  FakeSimulator sim;
  const auto r = run(scratch("alds-verified"), o, acc, sim);
  ASSERT_TRUE(r.found);
  EXPECT_GE(r.best_fps_sim, target);
  EXPECT_LE(r.best_fps_sim, 1.03 * target);  // the trim
  EXPECT_EQ(acc.calls, 1);
}

TEST(Search, AldsWithAnUnreachableTargetSaysWhichConstraintBinds) {
  auto o = small_options(50 * undecomposed_fps(base_design()));
  o.strategy = search::Strategy::Alds;
  FakeAccuracy acc;
  FakeSimulator sim;
  try {
    run(scratch("alds-fps"), o, acc, sim);
    FAIL() << "an unreachable target must end in an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("alds: even the most compressed candidate of every layer reaches only"), std::string::npos) << m;
    EXPECT_NE(m.find("analytical FPS (target"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(acc.calls, 0);
  o.target_fps = 100;
  o.solver.budget = 0.005;  // not even ψ = 1 fits
  try {
    run(scratch("alds-budget"), o, acc, sim);
    FAIL() << "a design that fits nowhere must end in an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("alds: no threshold gives a design that fits 0.5% of zc706 (the most compressed"),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(acc.calls, 0);
}

// The genome of the one valid row of `kind` in candidates.csv ("" if none).
std::string seed_genome(const fs::path& dir, const std::string& kind) {
  std::string g;
  for (const auto& row : csv_rows(dir / "candidates.csv"))
    if (row[2] == kind && row[19] == "valid") {
      EXPECT_EQ(g, "") << kind << " twice";
      g = row[5];
    }
  return g;
}

TEST(Search, SeededFirstPopulationHoldsTheBaselinesAnswers) {
  const double target = 1.2 * undecomposed_fps(base_design());
  auto o = small_options(target);
  o.seeded_start = true;
  o.generations = 1;  // the result's population is the first one
  o.layer_drop = -1;  // alds skips the pre-filter: the same space for every run here
  const fs::path dir = scratch("seeded");
  FakeAccuracy acc;
  FakeSimulator sim;
  const auto r = run(dir, o, acc, sim);
  std::set<std::string> members;
  for (const auto& m : r.population) members.insert(search::SearchSpace::key(m.genome));
  std::int64_t drawn = 0;
  for (const auto& row : csv_rows(dir / "candidates.csv")) drawn += row[2] == "init" && row[19] == "valid";
  EXPECT_EQ(static_cast<std::int64_t>(members.size()), drawn + 3);
  // Each is the answer of its baseline run alone on the same (pre-filtered) space.
  auto alone = o;
  alone.final_verify = false;  // the baselines' own answers, before any SystemC check
  for (auto st : {search::Strategy::Uniform, search::Strategy::Greedy, search::Strategy::Alds}) {
    const std::string kind = "seed-" + search::to_string(st);
    const std::string seed = seed_genome(dir, kind);
    ASSERT_NE(seed, "") << kind;
    EXPECT_TRUE(members.count(seed)) << kind;
    alone.strategy = st;
    FakeAccuracy a2;
    FakeSimulator s2;
    const auto b = run(scratch("alone-" + search::to_string(st)), alone, a2, s2);
    EXPECT_EQ(search::SearchSpace::key(b.best.genome), seed) << kind;
  }
  // --no-seeded-start: the prior's draws alone.
  o.seeded_start = false;
  const fs::path plain = scratch("unseeded");
  const auto u = run(plain, o, acc, sim);
  EXPECT_LE(static_cast<std::int64_t>(u.population.size()), o.population);
  for (const auto& row : csv_rows(plain / "candidates.csv")) EXPECT_EQ(row[2].rfind("seed-", 0), std::string::npos);
}

// Accuracy = 1 − the largest reconstruction error (FakeErrors): what alds
// minimises, so the seeds are strong starts that selection must keep.
class MaxErrorAccuracy : public search::AccuracySource {
 public:
  double query(const search::Taus& taus, std::int64_t) override {
    double m = 0;
    for (const auto& [name, t] : taus) m = std::max(m, errors_.relative_error(name, t));
    return 1 - m;
  }
  std::int64_t batches() const override { return 8; }

 private:
  FakeErrors errors_;
};

TEST(Search, EvolutionNeverEndsWorseThanItsBestSeed) {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.seeded_start = true;
  o.layer_drop = -1;  // every candidate alone loses more than 3 pp of this accuracy
  o.generations = 4;
  o.final_verify = false;
  const fs::path dir = scratch("elitism");
  MaxErrorAccuracy acc;
  FakeSimulator sim;
  const auto r = run(dir, o, acc, sim);
  double best_seed = -1;
  std::map<std::string, double> seed_accuracy;
  for (const auto& row : csv_rows(dir / "candidates.csv"))
    if (row[2].rfind("seed-", 0) == 0 && row[19] == "valid") seed_accuracy[row[2]] = std::stod(row[18]);
  ASSERT_EQ(seed_accuracy.size(), 3u);
  for (const auto& [k, a] : seed_accuracy) best_seed = std::max(best_seed, a);
  // alds minimises exactly what this accuracy measures: no seed beats it.
  EXPECT_EQ(best_seed, seed_accuracy.at("seed-alds"));
  const double csv = 1e-9;  // candidates.csv's values have 10 significant digits
  for (const auto& h : r.history) EXPECT_GE(h.best_accuracy, best_seed - csv) << "generation " << h.generation;
  EXPECT_GE(r.best.accuracy, best_seed - csv);
}

TEST(Search, SpaceCsvCarriesTdsReconstructionErrorOfEveryCandidate) {
  const net::Network weighted = net::build_zoo("tiny", true);
  search::DecomposerErrors errors(weighted);
  const arch::Design base = base_design("tiny");
  auto o = small_options(0.9 * undecomposed_fps(base));
  o.strategy = search::Strategy::Alds;  // a run that uses them measures them
  const fs::path dir = scratch("errors");
  FakeAccuracy acc;
  FakeSimulator sim;
  run(dir, o, acc, sim, false, "tiny", &errors);
  // Rows in the unrestricted space's order, layer by layer.
  search::SpaceOptions so;
  so.candidates.groups = td::GroupPolicy::Ungrouped;
  const search::SearchSpace space(base, so);
  std::ifstream in(dir / "space.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.substr(line.rfind(',') + 1), "reconstruction_error");
  std::size_t rows = 0;
  for (const auto& l : space.layers()) {
    td::Decomposer d(*weighted.find(l.layer));
    for (const auto& c : l.candidates) {
      ASSERT_TRUE(std::getline(in, line));
      const double e = std::stod(line.substr(line.rfind(',') + 1));
      EXPECT_NEAR(e, d.relative_error(c.tau), 1e-9 * (1 + e)) << l.layer << " " << c.tau.str();
      EXPECT_EQ(e == 0, !c.tau.decomposed()) << l.layer << " " << c.tau.str();
      ++rows;
    }
  }
  EXPECT_GT(rows, 3u);
  // A run that does not use them leaves the column empty.
  o.strategy = search::Strategy::Uniform;
  const fs::path plain = scratch("no-errors");
  run(plain, o, acc, sim, false, "tiny", &errors);
  std::ifstream p(plain / "space.csv");
  std::getline(p, line);
  while (std::getline(p, line)) EXPECT_EQ(line.back(), ',') << line;
}

TEST(Search, ResultsDoNotDependOnJobsWithRealSystemC) {
  // tiny: a few layers, simulations in well under a second each.
  const arch::Design base = base_design("tiny", "zc706");
  const double target = 0.9 * undecomposed_fps(base);
  auto o = small_options(target);
  o.oracle = search::ThroughputOracle::SystemC;
  o.generations = 2;
  o.population = 4;
  o.mutations = 3;
  o.crossovers = 3;
  o.layer_drop = -1;
  FakeAccuracy a1, a2;
  search::SystemCSimulator s1(1, 300), s2(2, 300);
  const fs::path d1 = scratch("jobs1"), d2 = scratch("jobs2");
  const auto r1 = run(d1, o, a1, s1, false, "tiny");
  const auto r2 = run(d2, o, a2, s2, false, "tiny");
  expect_same_outputs(d1, d2, {"candidates.csv", "generations.csv", "labels.csv", "summary.json"});
  EXPECT_EQ(r1.found, r2.found);
}

}  // namespace

// With one evaluation set (batches() == 1, mixtd search's default fitness)
// a design's score never changes, so (μ+λ) truncation never loses the best:
// the best of every generation is at least the one before (issue 39; with
// the paper's fresh batch per generation it can fall).
class FixedSetAccuracy : public FakeAccuracy {
 public:
  std::int64_t batches() const override { return 1; }
};

TEST(Search, OnOneEvaluationSetTheBestNeverFalls) {
  const double target = 1.25 * undecomposed_fps(base_design());
  FixedSetAccuracy acc;
  FakeSimulator sim;
  auto o = small_options(target);
  o.generations = 6;
  const auto r = run(scratch("elitism"), o, acc, sim);
  ASSERT_TRUE(r.found);
  ASSERT_EQ(r.history.size(), 6u);
  for (std::size_t g = 1; g < r.history.size(); ++g) {
    EXPECT_GE(r.history[g].best_accuracy, r.history[g - 1].best_accuracy) << "generation " << g;
    EXPECT_EQ(r.history[g].batch, 0);
  }
  EXPECT_GT(r.history.back().best_accuracy, r.history.front().best_accuracy);  // and it moved
}

// --- the answer chosen by fine-tuned accuracy -------------------------------

// A fine-tune stand-in that disagrees with the fitness: a fixed value per
// design, a little higher with more images; it counts its calls and can
// kill the process at one.
class FakeJudge {
 public:
  std::int64_t calls = 0, kill_at = 0;
  bool contrary = false;  // the fitness (FakeAccuracy) upside down: the most fit is judged worst
  double operator()(const search::Taus& taus, std::int64_t images) {
    if (++calls == kill_at) ::raise(SIGKILL);
    if (contrary) return 1 - FakeAccuracy().query(taus, 0) + 1e-6 * static_cast<double>(images);
    std::string key;
    for (const auto& [name, t] : taus) key += name + t.str();
    return 0.5 + 0.4 * unit_hash(key) + 1e-6 * static_cast<double>(images);
  }
};

search::SearchResult run_with_judge(const fs::path& out, const search::SearchOptions& o, FakeJudge& judge,
                                    bool resume = false) {
  FakeAccuracy acc;
  FakeSimulator sim;
  FakeErrors errors;
  search::SpaceOptions space;
  space.candidates.groups = td::GroupPolicy::Ungrouped;
  search::SearchCallbacks cb;
  cb.finetune_validation = [&judge](const search::Taus& t, std::int64_t images) { return judge(t, images); };
  return search::run_search(base_design(), space, o, acc, sim, errors, out, {{"network", "r18"}}, resume, cb);
}

search::SearchOptions finalist_options() {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.seeded_start = true;
  o.layer_drop = -1;
  o.generations = 2;
  o.finalists = 3;
  o.finalist_images = 100;
  return o;
}

TEST(Search, FinalistsChooseTheAnswerByFineTunedValidationTopOne) {
  auto o = finalist_options();
  o.final_verify = false;  // the seeds just meet the target by the oracle, most miss it in (fake) SystemC
  FakeJudge judge;
  judge.contrary = true;
  const fs::path dir = scratch("finalists");
  const auto r = run_with_judge(dir, o, judge);
  ASSERT_TRUE(r.found);
  // The top 3 of the final population and the seeds (uniform, greedy, alds), each once.
  ASSERT_GE(r.finalists.size(), 4u);
  ASSERT_LE(r.finalists.size(), 6u);
  std::set<std::string> names, keys;
  for (const auto& f : r.finalists) {
    std::size_t at = 0;
    for (std::size_t next; (next = f.name.find('=', at)) != std::string::npos; at = next + 1)
      names.insert(f.name.substr(at, next - at));
    names.insert(f.name.substr(at));
    EXPECT_TRUE(keys.insert(search::SearchSpace::key(f.member.genome)).second) << f.name << " twice";
  }
  for (const std::string n : {"top-1", "top-2", "top-3", "seed-uniform", "seed-greedy", "seed-alds"})
    EXPECT_TRUE(names.count(n)) << n;
  // Successive halving: everyone in round 1 on 100 images, half (rounded up)
  // of each round in the next on twice the images, the best of the last one wins.
  std::size_t alive = r.finalists.size();
  std::int64_t calls = 0;
  for (std::size_t round = 0; alive > 1; ++round, alive = (alive + 1) / 2) {
    std::size_t here = 0;
    for (const auto& f : r.finalists)
      if (f.rounds.size() > round) {
        ++here;
        EXPECT_EQ(f.rounds[round].first, 100 << round);
      }
    EXPECT_EQ(here, alive) << "round " << round + 1;
    calls += static_cast<std::int64_t>(here);
  }
  EXPECT_EQ(judge.calls, calls);
  const search::Finalist* winner = nullptr;
  for (const auto& f : r.finalists) {
    if (f.winner) {
      EXPECT_EQ(winner, nullptr) << "two winners";
      winner = &f;
    }
  }
  ASSERT_NE(winner, nullptr);
  EXPECT_EQ(search::SearchSpace::key(r.best.genome), search::SearchSpace::key(winner->member.genome));
  for (const auto& f : r.finalists) {
    if (f.rounds.size() == winner->rounds.size() && &f != winner) {
      EXPECT_LT(f.rounds.back().second, winner->rounds.back().second);
    }
  }
  // The judge decides, not the fitness: with this contrary judge the answer is not the most fit design.
  FakeJudge none;
  auto by_fitness = o;
  by_fitness.finalists = 0;
  const auto plain = run_with_judge(scratch("finalists-off"), by_fitness, none);
  EXPECT_EQ(none.calls, 0);
  EXPECT_TRUE(plain.finalists.empty());
  EXPECT_NE(search::SearchSpace::key(plain.best.genome), search::SearchSpace::key(r.best.genome));

  // Resumed after the end: every fine-tune is in the checkpoint, none repeated.
  FakeJudge again;
  again.contrary = true;
  const auto resumed = run_with_judge(dir, o, again, true);
  EXPECT_EQ(again.calls, 0);
  EXPECT_EQ(search::SearchSpace::key(resumed.best.genome), search::SearchSpace::key(r.best.genome));

  // Verified: only designs that meet the target in SystemC are fine-tuned,
  // the population's next ones taking the place of those that miss it.
  o.final_verify = true;
  FakeJudge verified;
  const auto v = run_with_judge(scratch("finalists-verified"), o, verified);
  ASSERT_TRUE(v.found);
  std::int64_t from_top = 0;
  for (const auto& f : v.finalists) {
    EXPECT_GE(f.member.fps_sim, o.target_fps) << f.name;
    from_top += f.name.rfind("top-", 0) == 0;
  }
  EXPECT_EQ(from_top, o.finalists);
  EXPECT_GE(v.best_fps_sim, o.target_fps);
}

TEST(Search, FinalistsKilledMidwayResumeToTheSameAnswer) {
  const auto o = finalist_options();
  FakeJudge judge;
  const fs::path ref = scratch("finalists-ref"), dir = scratch("finalists-kill");
  const auto r = run_with_judge(ref, o, judge);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FakeJudge dying;
    dying.kill_at = 3;
    try {
      run_with_judge(dir, o, dying);
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  FakeJudge rest;
  const auto resumed = run_with_judge(dir, o, rest, true);
  EXPECT_EQ(rest.calls, judge.calls - 2);  // the two before the kill were checkpointed
  expect_same_outputs(ref, dir, {"best.yaml", "summary.json", "candidates.csv"});
  ASSERT_EQ(resumed.finalists.size(), r.finalists.size());
  for (std::size_t i = 0; i < r.finalists.size(); ++i) EXPECT_EQ(resumed.finalists[i].rounds, r.finalists[i].rounds);
}

TEST(Search, FinalistsNeedAJudgeAndBoundedOptions) {
  auto o = finalist_options();
  o.finalists = 1001;
  EXPECT_THROW(search::validate(o), Error);
  o.finalists = 2;
  o.finalist_images = 0;
  EXPECT_THROW(search::validate(o), Error);
  o.finalist_images = 10;
  FakeAccuracy acc;
  FakeSimulator sim;
  FakeErrors errors;
  search::SpaceOptions space;
  space.candidates.groups = td::GroupPolicy::Ungrouped;
  EXPECT_THROW(search::run_search(base_design(), space, o, acc, sim, errors, scratch("no-judge"), {}, false), Error);
}

// The pre-filter asks AccuracySource::prefilter_query (fewer images in
// `mixtd search`), not query(): its values are the ones space.csv shows and
// the ones that drop candidates.
class PrefilterAccuracy : public FakeAccuracy {
 public:
  std::int64_t prefilter_calls = 0, single_layer_queries = 0;
  double query(const search::Taus& taus, std::int64_t batch) override {
    single_layer_queries += taus.size() == 1;
    return FakeAccuracy::query(taus, batch);
  }
  double prefilter_query(const search::Taus& taus) override {
    ++prefilter_calls;
    // layer1.0.conv1 alone loses 50 points here: all its candidates go.
    return taus.count("layer1.0.conv1") ? 0.42 : 0.92;
  }
};

TEST(Search, ThePrefilterScoresWithItsOwnQuery) {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.generations = 1;
  PrefilterAccuracy acc;
  FakeSimulator sim;
  const fs::path dir = scratch("prefilter-query");
  run(dir, o, acc, sim);
  EXPECT_GT(acc.prefilter_calls, 16);
  EXPECT_EQ(acc.single_layer_queries, 0);  // the prior's draws decompose many layers
  std::int64_t conv1 = 0;
  for (const auto& row : csv_rows(dir / "space.csv")) {
    const bool none = row[3] == "none";
    if (row[0] == "layer1.0.conv1" && !none) {
      ++conv1;
      EXPECT_EQ(row[6], "0.42");
      EXPECT_EQ(row[8], "no");
    } else if (!none) {
      EXPECT_EQ(row[6], "0.92") << row[0];
      EXPECT_EQ(row[8], "yes") << row[0];
    }
  }
  EXPECT_GT(conv1, 0);
}

// --max-queries caps the loop's queries exactly (the same budget for every
// method compared): the generation that reaches it rejects its remaining
// children unscored instead of finishing and overshooting.
// (One evaluation set, as the default fitness: the paper's rotating batches
// also re-score the parents each generation, which the cap does not cut.)
TEST(Search, TheQueryBudgetIsAHardCapOnTheLoop) {
  auto o = small_options(1.2 * undecomposed_fps(base_design()));
  o.generations = 1;
  FixedSetAccuracy a0;
  FakeSimulator s0;
  const auto first = run(scratch("budget-gen0"), o, a0, s0);  // generation 0 alone: not cut
  o.generations = 20;
  o.max_queries = first.queries + 5;
  FixedSetAccuracy acc;
  FakeSimulator sim;
  const fs::path dir = scratch("budget");
  const auto r = run(dir, o, acc, sim);
  EXPECT_EQ(r.queries, o.max_queries);
  EXPECT_EQ(r.stop_reason, "query budget");
  EXPECT_EQ(r.generations, 2);  // the budget ran out in generation 1, which stopped the loop
  std::int64_t cut = 0;
  for (const auto& row : csv_rows(dir / "candidates.csv")) cut += row[19] == "rejected: query budget";
  EXPECT_GT(cut, 0);
}
