// The search's state and its steps (private to mixtd::evolution). One
// Engine per run_search(); its checkpointed part is `State`.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "OutputFiles.h"
#include "mixtd/search/Nsga2.h"
#include "mixtd/search/Search.h"

namespace mixtd::search::detail {

// Everything a resumed run needs to continue exactly where the last
// checkpoint left off (serialised by Checkpoint.cpp).
struct State {
  std::int64_t generation = -1;  // the last completed generation (-1: none; the pre-filter may be done)
  bool prefilter_done = false;
  double base_accuracy = 0;                    // undecomposed network, pre-filter batch
  std::vector<std::vector<double>> prefilter;  // per layer, per original candidate: top-1 alone (NaN: not queried)
  std::vector<std::vector<bool>> keep;         // per layer, per original candidate
  std::vector<std::vector<double>> errors;  // per layer, per original candidate: ‖W − Ŵ‖_F/‖W‖_F (none: 0);
                                            // empty when the run does not use them (alds, seeded start do)
  std::vector<Member> population;
  std::map<std::pair<std::string, std::int64_t>, double> memo;  // (genome key, batch) -> accuracy
  std::map<std::string, SimLabel> labels;                       // genome key -> SystemC
  std::vector<std::string> label_order;                         // labels in the order they arrived
  std::int64_t queries = 0, prefilter_queries = 0, evaluated = 0;
  std::int64_t evaluated_rows = 0;  // rows of candidates.csv
  double macs_constant = 0;         // FPS·MACs of the analytical model, for the MACs oracle
  double hv_fps_scale = 0;          // --pareto: FPS normalisation of the hypervolume
  std::vector<GenerationStats> history;
  std::map<std::string, std::uint64_t> file_sizes;    // output file -> bytes at the checkpoint
  double seconds = 0;                                 // wall time of earlier sessions
  std::int64_t stalled = 0;                           // generations without gain (patience)
  double best_seen = -1;                              // best verified accuracy so far
  std::string stop_reason;                            // set when the loop ended
  std::vector<std::pair<std::string, Member>> seeds;  // the seeded start's baseline answers (kind, member)
  std::map<std::pair<std::string, std::int64_t>, double> finetuned;  // (genome key, images) -> validation top-1
};

// One evaluated draw: what the gates said.
struct Outcome {
  Genome genome;
  std::string kind;  // init | mutation | crossover | random | greedy | uniform | alds | alds-probe | verify
  std::int64_t slot = 0, attempt = 0;
  bool valid = false;
  std::string status;  // "valid" or "rejected: ..."
  double accuracy = -1, fps_oracle = 0, fps_sim = 0;
  double violation = 0;  // --pareto: FPS shortfall / target
  double t_hw = 0, t_sim = 0, t_acc = 0;
};

class Engine {
 public:
  Engine(const arch::Design& base, const SpaceOptions& space, const SearchOptions& options, AccuracySource& accuracy,
         Simulator& simulator, ReconstructionErrors& errors, const std::filesystem::path& out, const Settings& settings,
         bool resume, const SearchCallbacks& callbacks);
  SearchResult run();

 private:
  // Steps.
  void measure_errors();                    // st_.errors, for the unrestricted space
  void restrict_space();                    // to st_.keep: the prior and errors_ follow
  double max_error(const Genome& g) const;  // -1 when the errors were not measured
  bool prefilter_on() const { return o_.layer_drop >= 0 && o_.strategy != Strategy::Alds; }  // alds asks no accuracy
  void prefilter();
  void first_population();
  // The seeded start's members (Seeds.cpp): rows of generation 0, the seeds
  // (kind seed-*) in `pool` unless already in `accepted`.
  void seed_population(std::vector<Member>& pool, std::vector<Outcome>& rows, std::set<std::string>& accepted);
  void generation(std::int64_t g);
  void run_greedy();
  void run_uniform();
  // The baselines' pieces, shared with the seeded start.
  double greedy_base();  // undecomposed top-1 the greedy's sensitivities are measured against
  Outcome greedy_gate(const Genome& state, std::int64_t g, bool verify_in_systemc);
  std::optional<Genome> greedy_move(const Genome& state);  // none: every layer at its smallest
  std::vector<Outcome> uniform_wave(std::int64_t g);       // evaluated, not logged
  // The analytic allocation (Alds.cpp): probes are designs checked by gates
  // 1–3 only, each once a run (by genome key), logged as kind alds-probe.
  // `need` is the oracle FPS a design must show (the target, or more when
  // SystemC found the oracle optimistic).
  using AldsProbes = std::map<std::string, Outcome>;
  void run_alds();
  std::optional<Genome> alds_allocation(std::int64_t g, double need, AldsProbes& seen, std::string* why_not);
  Genome alds_design(double eps) const;  // each layer's cheapest candidate with error ≤ eps
  void alds_probe(const std::vector<Genome>& genomes, std::int64_t g, AldsProbes& seen);
  std::optional<Genome> alds_first_passing(const std::vector<double>& eps, std::size_t from, std::int64_t g,
                                           double need, AldsProbes& seen);
  void alds_refine(Genome& best, std::int64_t g, double need, AldsProbes& seen);
  // The one error line when no ε passes: what binds.
  std::string alds_too_slow(const Outcome& most, double need);
  std::string alds_unfit(const Outcome& most, const AldsProbes& seen);
  std::string alds_fps(const Outcome& probe);  // "4501.2 analytical FPS"
  void finish(SearchResult& r);
  // The answer by fine-tuned validation top-1 (Finalists.cpp): successive
  // halving over the verified top of `ranked` and the seeds; fills
  // r.finalists. None when no finalist passes verification.
  bool finalists_on() const {
    return o_.finalists > 0 && !o_.pareto && (o_.strategy == Strategy::Evolution || o_.strategy == Strategy::Random);
  }
  std::optional<Member> successive_halving(std::vector<Member>& ranked, SearchResult& r);
  // Up to `finalists` of `ranked` and every seed, each once, each meeting
  // the target in SystemC when final_verify (ranked's fps_sim filled in).
  std::vector<Finalist> admit_finalists(std::vector<Member>& ranked);
  double finetuned(const Genome& g, std::int64_t images);  // memoised, checkpointed
  // Writes the accuracy source's factors of g (if it has its own) to `file`
  // and names them in d (`factors:`, relative to d's folder).
  void attach_factors(arch::Design& d, const Genome& g, const std::filesystem::path& file);

  // Gates, in waves: every draw of a wave gets gates 1–2, then one parallel
  // SystemC call for those the gate needs simulated, then the throughput gate
  // and accuracy in draw order.
  std::vector<Outcome> evaluate_wave(std::vector<Outcome> draws, std::int64_t batch, std::int64_t g);
  // Gates 1–3 of a wave; a draw that passed them has an empty status (it
  // awaits the accuracy gate). --pareto: the FPS gate only sets the violation.
  std::vector<Outcome> hardware_gates(std::vector<Outcome> draws, std::int64_t g);
  // Gate 4 for the draws with an empty status, in draw order.
  // `capped`: draws past the query budget are rejected unscored.
  void accuracy_gate(std::vector<Outcome>& draws, std::int64_t batch, bool capped = false);
  double accuracy(const Genome& g, std::int64_t batch, double* seconds = nullptr);  // memoised
  bool budget_left() const { return o_.max_queries <= 0 || st_.queries < o_.max_queries; }
  bool sim_gate(std::int64_t g) const;
  bool forest_gate(std::int64_t g) const;
  double forest_fps(const Genome& g);
  void simulate(const std::vector<Genome>& genomes, double* seconds = nullptr);  // labels the unlabelled
  void refit_forest();
  void verify_population(std::vector<Member>& pool, std::int64_t g, GenerationStats& s);
  bool verified(const Member& m) const;
  double violation(double fps) const;
  std::vector<ObjectivePoint> objectives(const std::vector<Member>& pool);
  double hypervolume(const std::vector<Member>& pool);
  void rank(std::vector<Member>& pool) const;  // by accuracy, ties by key
  std::int64_t batch_of(std::int64_t g) const;
  Rng rng(std::int64_t g, std::int64_t slot, std::uint64_t salt = 0) const;

  // Records.
  void log_outcome(const Outcome& o, std::int64_t g, std::int64_t batch);
  void note_violation(const Outcome& o);
  GenerationStats stats(std::int64_t g, const std::vector<Outcome>& outcomes, const std::vector<Member>& pool);
  void end_generation(const GenerationStats& s);
  bool should_stop();
  void checkpoint();
  void load_checkpoint();
  void write_space_csv(const SearchSpace& before);
  void write_infeasible();
  std::string infeasible_message(std::size_t draws);  // writes out/infeasible/ too
  void warn(const std::string& w);
  double elapsed() const;

  arch::Design base_;
  SearchSpace space_;
  SearchOptions o_;
  AccuracySource& acc_;
  Simulator& sim_;
  ReconstructionErrors& errors_source_;
  std::filesystem::path out_;
  Settings settings_;
  SearchCallbacks cb_;
  std::optional<HardwareCache> hw_;
  std::optional<Prior> prior_;
  std::optional<RandomForest> forest_;
  std::size_t forest_labels_ = 0;  // labels the forest was fitted on
  State st_;
  std::vector<std::vector<double>> errors_;  // st_.errors of the current (restricted) space
  OutputFiles files_;
  std::chrono::steady_clock::time_point t0_;
  // The least-violating rejected draws and the highest FPS any draw reached (for the infeasible error).
  std::vector<std::pair<double, std::string>> least_violating_;
  std::vector<std::string> warnings_;
  double log10_before_ = 0;  // the design space before the pre-filter
  std::map<std::string, HardwareEval> restored_hw_;
  double max_fps_seen_ = 0;
  std::string max_fps_genome_;
};

}  // namespace mixtd::search::detail
