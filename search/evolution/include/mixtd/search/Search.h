// The search for τ (SPEC "The search", paper §V, Algorithm 1): the most
// accurate design whose FPS meets a target within a resource budget, or
// (NSGA-II) the feasible Pareto set of accuracy, FPS and weight memory.
//
//   strategies   evolution  Mixed-TD's (μ+λ): |P| parents, M mutation and X
//                           uniform-crossover children a generation, all
//                           validated, parents ∪ children ranked by accuracy
//                           on a fresh search batch, the top |P| survive
//                random     the same loop with every child a fresh prior sample
//                greedy     per-layer sensitivity order: compress the layer
//                           whose next step costs least accuracy until the
//                           target is met
//                uniform    one type and MAC ratio for every layer, the best
//                           that meets the target
//                alds       analytic: the smallest largest reconstruction
//                           error ‖W − Ŵ‖/‖W‖ across layers that meets the
//                           target (after ALDS, Liebenwein et al. 2021); no
//                           accuracy query but the answer's
//   --pareto     NSGA-II with Deb's constrained domination
//
// The search sees accuracy and SystemC only through the two interfaces
// below, so it links neither LibTorch nor SystemC: `mixtd search` binds them
// to nn::AccuracyOracle / nn::FidelityOracle and sim::simulate_many. Each
// candidate's reconstruction error comes through a third
// (ReconstructionErrors.h; td::Decomposer in `mixtd search`).
//
// Reproducible and crash-safe: every random choice derives from (seed,
// generation, slot); the output folder gets a checkpoint after every
// generation, written atomically, and run_search on a folder with a
// checkpoint continues from it to byte-identical outputs (docs/search.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mixtd/search/Evaluation.h"
#include "mixtd/search/RandomForest.h"
#include "mixtd/search/ReconstructionErrors.h"
#include "mixtd/search/SearchSpace.h"
#include "mixtd/td/Factors.h"

namespace mixtd::search {

// Accuracy of a decomposed network on search batch `batch` (a number the
// search may memoise: the same τ and batch always give the same value).
class AccuracySource {
 public:
  virtual ~AccuracySource() = default;
  virtual double query(const Taus& taus, std::int64_t batch) = 0;
  virtual std::int64_t batches() const = 0;  // distinct batch indices
  // The pre-filter's score of `taus` (none or one layer decomposed). It
  // only drops candidates far below the undecomposed network, so a source
  // may score it on fewer images than query() (`mixtd search
  // --prefilter-images`); by default the same as query(taus, 0).
  virtual double prefilter_query(const Taus& taus) { return query(taus, 0); }
  // The decomposed layers a query of `taus` runs (the statistics
  // correction changes td's) and the BFP8 activation exponents it ran at:
  // every design the search writes carries them (best.factors,
  // `factors:`), so the hardware models compute what was scored. Empty:
  // td's own decomposition, calibrated by the hardware models.
  virtual td::Factors factors(const Taus& /*taus*/) { return {}; }
};

// SystemC simulation of solved designs (batch-1 FPS etc.), in any order and
// in parallel; one label per design, in the designs' order.
class Simulator {
 public:
  virtual ~Simulator() = default;
  virtual std::vector<SimLabel> simulate(const std::vector<arch::Design>& designs) = 0;
};

// The Simulator of `mixtd search`: sim::simulate_many with `jobs` worker
// processes, each design stopped after `timeout_s`; a design that does not
// complete, or completes without an interval, is a label with its error.
class SystemCSimulator : public Simulator {
 public:
  SystemCSimulator(int jobs, double timeout_s) : jobs_(jobs), timeout_s_(timeout_s) {}
  std::vector<SimLabel> simulate(const std::vector<arch::Design>& designs) override;

 private:
  int jobs_;
  double timeout_s_;
};

enum class Strategy { Evolution, Random, Greedy, Uniform, Alds };
Strategy parse_strategy(const std::string& s);  // throws naming the legal values
std::string to_string(Strategy s);

struct SearchOptions {
  Strategy strategy = Strategy::Evolution;
  bool pareto = false;
  ThroughputOracle oracle = ThroughputOracle::Forest;
  double target_fps = 0;                          // > 0; --pareto: ≤ 0 means no FPS constraint
  SolverOptions solver{Objective::Latency, 0.9};  // batch-1 latency within 90% of the device
  std::string pareto_cost = "memory";             // the third NSGA-II objective: memory | dsp

  std::int64_t population = 25, mutations = 50, crossovers = 50;
  double mutation_rate = 0.2;
  PriorOptions prior;
  std::int64_t max_tries = 50;      // draws per child slot before the slot stays empty
  std::int64_t max_initial = 5000;  // prior draws for the first population
  double layer_drop = 1.0;          // pre-filter: candidates losing more top-1 (pp) are dropped; < 0: no pre-filter
  double min_accuracy = 0;          // the accuracy floor (fraction)
  // Evolution: the first population also holds the answers of the uniform
  // and greedy baselines and the alds allocation on the pre-filtered space
  // (each that finds one); false: Mixed-TD's prior draws only.
  bool seeded_start = true;

  // Stopping (not part of the settings a resume must match).
  std::int64_t generations = 500;
  std::int64_t patience = 30;    // generations without a 0.1 pp gain in best verified accuracy
  double time_s = 0;             // wall-clock budget, 0 = none
  std::int64_t max_queries = 0;  // accuracy queries after the pre-filter, 0 = none

  // Active learning (oracle forest).
  std::int64_t warmup = 3;  // generations 0..warmup-1 label every feasible child in SystemC
  std::int64_t verify = 3;  // later: the top `verify` of the ranked population are SystemC-verified
  ForestParams forest;
  // For oracles forest and systemc, children whose analytical FPS is below
  // this fraction of the target are not simulated (the analytical model is
  // within a few percent of SystemC; docs/search.md).
  double sim_pregate = 0.8;

  bool final_verify = true;  // SystemC-verify the answer, trim its budget to the target
  // The answer chosen by fine-tuned accuracy (evolution and random, not
  // --pareto): the top `finalists` of the final population (each
  // SystemC-verified when final_verify) and the seeded start's baseline
  // answers go through successive halving on short fine-tunes
  // (SearchCallbacks::finetune_validation): `finalist_images` training
  // images each in the first round, twice as many in each next, the better
  // half kept every round. 0: the most fit design is the answer.
  std::int64_t finalists = 0;
  std::int64_t finalist_images = 2000;
  std::uint64_t seed = 1;
};

// Settings a resumed run must share with the run that wrote the checkpoint
// (network, weights, data, device, ...): the caller's; the search adds its own.
using Settings = std::map<std::string, std::string>;

struct GenerationStats {
  std::int64_t generation = 0, batch = 0;
  std::int64_t tried = 0, valid = 0, queries = 0;  // queries: cumulative, after the pre-filter
  std::map<std::string, std::int64_t> rejected;    // by reason
  double best_accuracy = 0, best_fps = 0, mean_accuracy = 0;
  double best_verified_accuracy = -1;  // the best design whose throughput SystemC confirmed (-1: none yet)
  std::int64_t labels = 0;
  double forest_mape = -1, forest_false_accept = -1;  // on the designs verified this generation (-1: none)
  double hypervolume = -1;                            // --pareto
  double seconds = 0;                                 // wall time since the start, resumes included
};

struct Member {
  Genome genome;
  double accuracy = 0;  // on the generation's batch
  double fps = 0;       // the oracle's
  double fps_sim = 0;   // SystemC's, 0 if not simulated
};

// A design of the successive halving and its validation top-1 after each
// round's fine-tune (training images, top-1).
struct Finalist {
  std::string name;  // "top-3" (rank by fitness in the final population), "seed-uniform", or both joined by '='
  Member member;
  std::vector<std::pair<std::int64_t, double>> rounds;
  bool winner = false;
};

struct SearchResult {
  std::string stop_reason;
  std::int64_t generations = 0, queries = 0, prefilter_queries = 0, evaluated = 0;
  double log10_space_before = 0, log10_space_after = 0;
  std::vector<Member> population;  // final, ranked
  bool found = false;              // best is valid (and verified when final_verify)
  Member best;
  double best_max_error = -1;  // the largest ‖W − Ŵ‖/‖W‖ over best's layers (-1: not measured)
  arch::Design best_design;    // ψ solved (trimmed to the target when final_verify)
  double best_fps_analytical = 0, best_fps_sim = 0, best_utilisation = 0;
  std::vector<Finalist> finalists;  // empty unless SearchOptions::finalists chose the answer
  std::vector<Member> pareto;       // --pareto: the feasible front, by FPS
  std::vector<arch::Design> pareto_designs;
  std::vector<GenerationStats> history;
  std::vector<std::string> warnings;
  double seconds = 0;
};

struct SearchCallbacks {
  std::function<void(const GenerationStats&, std::int64_t max_generations)> on_generation;
  std::function<void(const std::string&)> log;  // one line of progress
  // Validation top-1 of the design after a short fine-tune on `images`
  // training images (SearchOptions::finalists): it must give the same value
  // for the same arguments, since the search memoises it in its checkpoint.
  // Only the validation split: the test set stays for the final report.
  std::function<double(const Taus&, std::int64_t images)> finetune_validation;
};

// Runs (or resumes, when `out` holds a checkpoint whose settings match, else
// throws naming the first differing setting) the search; writes into `out`
// (created if needed) as it goes: candidates.csv, generations.csv,
// labels.csv, space.csv, timing.csv, checkpoint.json; at the end best.yaml,
// pareto/*.yaml, summary.json. `base` gives network (shapes), device, clock
// and number format; `errors` every candidate's reconstruction error (asked
// once by the runs that use them, alds and the seeded start; kept in the
// checkpoint, a column of space.csv). Throws
// mixtd::Error on bad options, and — after writing the least-violating
// designs to out/infeasible/ — when the first population finds no valid
// design.
SearchResult run_search(const arch::Design& base, const SpaceOptions& space, const SearchOptions& options,
                        AccuracySource& accuracy, Simulator& simulator, ReconstructionErrors& errors,
                        const std::filesystem::path& out, const Settings& settings, bool resume,
                        const SearchCallbacks& callbacks = {});

// Checks every option's bound (one clear line naming the option and the legal range).
void validate(const SearchOptions& o);

}  // namespace mixtd::search
