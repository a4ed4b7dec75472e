// The default unroll-factor solver (private to mixtd::search; the algorithm
// is described in docs/solver.md): bottleneck balancing for peak FPS; for
// batch-1 latency a lazy greedy over interval, row and fill moves from five
// starts (the interval balanced first and an early state of that balancing,
// at the budget; and from ψ = 1 to 0.97, 0.9 and 0.8 of it), each followed
// by repack / exchange / greedy rounds at the full budget.
//
// The Balancer's parts: Balancer.cpp (the starts: run(), refine(),
// balance()), BalancerInterval.cpp (bottleneck balancing), BalancerLatency.cpp
// (the batch-1 latency greedy), BalancerExchange.cpp (repack and exchange);
// the options it scans, StageOptions.h; how it prices them, Pricing.h.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "Common.h"
#include "Evaluator.h"
#include "Pricing.h"
#include "StageOptions.h"
#include "mixtd/arch/Resources.h"
#include "mixtd/search/Solver.h"

namespace mixtd::search::detail {

// A set of ψ changes made together.
using Change = std::vector<std::pair<int, arch::Psi>>;

// Evaluations, row updates and time since it was made (or last recorded).
class StartClock {
 public:
  explicit StartClock(const Evaluator& ev);
  SolveStart record(std::string name, std::int64_t latency_cycles);

 private:
  using Clock = std::chrono::steady_clock;
  const Evaluator& ev_;
  Clock::time_point t0_;
  std::int64_t evaluations_ = 0, rows_ = 0;
};

// One start of the search on `ev` (see balance()).
class Balancer {
 public:
  // `early_start`: also run the latency greedy from early in the interval
  // balancing (run()); balance() asks for it at the full budget only.
  // `starts`, if given, gets a record per start run() makes (batch-1
  // latency; a narrow start's is its caller's to make).
  Balancer(Evaluator& ev, Objective objective, bool early_start = true, std::vector<SolveStart>* starts = nullptr)
      : ev_(ev), objective_(objective), early_start_(early_start), starts_(starts), stage_options_(ev) {}

  void run();

  // Refinement: repack every stage into its cheapest ψ that loses nothing
  // (interval within the design's, and for latency its fill no longer),
  // which re-factors p_in / p_out / fine freely; for latency, exchange (pay
  // for a move that does not fit with cheaper ψ elsewhere); then spend what
  // is left. None of these makes the objective worse.
  void refine();

 private:
  static constexpr int kRefineRounds = 4;
  static constexpr int kTriesPerStep = 3;             // alternatives tried before a module counts as saturated
  static constexpr double kLevelReach = 0.2;          // how far one interval move may look ahead
  static constexpr double kEarlyStart = 2.0;          // the latency-first start: interval within this of balanced
  static constexpr double kRefineBehind = 0.01;       // refine that start only if within this of the other
  static constexpr double kBatchStep = 0.8;           // interval balancing: each batch aims this far below
  static constexpr double kBatchUntil = 0.5;          // ... while it takes at most this of the budget
  static constexpr double kTakeWithin = 0.1;          // a re-measured move this close to the best estimate is taken
  static constexpr std::size_t kExchangeGainers = 8;  // moves an exchange tries to pay for
  static constexpr int kRowsSteps = 64;               // steps one Rows measurement may take

  void greedy() {
    if (objective_ == Objective::Throughput) {
      balance_interval();
    } else {
      balance_latency();
    }
  }

  // --- Options and prices ---------------------------------------------------

  // The stages' options (StageOptions.h) and prices (Pricing.h).
  const std::vector<Option>& options(int s) { return stage_options_.options(s); }
  const Table& table(int s) { return stage_options_.table(s); }
  const Option& option(int s, int i) { return stage_options_.option(s, i); }
  arch::Psi psi_of(int s, Pick k) { return stage_options_.psi_of(s, k); }
  arch::Resources res_of(int s, Pick k) { return stage_options_.res_of(s, k); }
  std::size_t first_faster(int s, std::int64_t interval) { return stage_options_.first_faster(s, interval); }
  arch::Resources prices() const { return detail::prices(ev_); }
  arch::Resources held(int s) const { return detail::held(ev_, s); }
  Scan scan(int s, const arch::Resources& price) const { return detail::scan(ev_, s, price); }

  double added_cost(int s, Pick k, const arch::Resources& p) { return scan(s, p).added(option(s, k.option), k.uram); }

  // Stage s's own fill at its ψ (the evaluator holds its cycles).
  // Option::fill and own_fill() are a stage's own_latency() (Common.h).
  std::int64_t own_fill(int s) const {
    return own_latency(ev_.module_cycles(ev_.slot(s).module), ev_.slot(s).shape.out.h);
  }

  // The picks already tried for one step (at most kTriesPerStep).
  struct Tried {
    Pick picks[kTriesPerStep] = {};
    int n = 0;
    bool has(Pick k) const { return std::find(picks, picks + n, k) != picks + n; }
    void add(Pick k) {
      if (n < kTriesPerStep) picks[n++] = k;
    }
  };

  // The cheapest pick of stage s among options [begin, end) (not yet
  // tried, locally fitting) satisfying `ok`; ties go to the shorter fill,
  // then the faster, then BRAM18. none() if there is none.
  template <typename Ok>
  Pick cheapest(int s, const arch::Resources& p, const Tried& tried, Ok ok, std::size_t begin = 0,
                std::size_t end = SIZE_MAX, bool must_fit = true) {
    const Table& tb = table(s);
    const auto& opts = tb.opts;
    const Scan sc = scan(s, p);
    Pick best;
    double best_cost = 0;
    for (std::size_t i = begin; i < std::min(end, opts.size()); ++i) {
      // Nothing from here on can be cheaper (looked at every few options).
      if ((i - begin) % 8 == 0 && !best.none() && costs_more(sc, tb.from[i], best_cost)) break;
      const Option& o = opts[i];
      if (!ok(o)) continue;
      for_each_placement(sc, o, [&](double c, bool uram) {
        const Pick k{static_cast<int>(i), uram};
        const Option* b = best.none() ? nullptr : &opts[static_cast<std::size_t>(best.option)];
        const bool better = !b || c < best_cost ||
                            (c == best_cost && (o.fill < b->fill || (o.fill == b->fill && o.interval < b->interval)));
        // The costlier tests last.
        if (better && !(tried.n > 0 && tried.has(k)) && (!must_fit || sc.fits(o, uram))) {
          best = k;
          best_cost = c;
        }
      });
    }
    return best;
  }

  // --- Applying and undoing -------------------------------------------------

  void apply(const Change& c) { ev_.set_psis(c); }

  // A one-stage change in a buffer kept for it (no allocation per trial).
  const Change& one(int s, const arch::Psi& p) {
    one_.assign(1, {s, p});
    return one_;
  }

  // Applies c; keeps it if the design fits and `accept` holds, else undoes it.
  template <typename Accept>
  bool try_keep(const Change& c, Accept accept) {
    ev_.begin_trial();
    apply(c);
    if (ev_.fits() && accept()) {
      ev_.commit();
      if (journal_) journal_->insert(journal_->end(), c.begin(), c.end());
      return true;
    }
    ev_.rollback();
    return false;
  }

  // --- Bottleneck balancing -------------------------------------------------

  // The slowest module is a stage: move it to its next faster legal ψ — the
  // cheapest one with a lower interval, over all p_in / p_out / fine
  // combinations (so a re-factoring is a step too) — trying the next
  // cheapest while the whole design does not fit.
  bool improve_stage(int s);

  // --- Weight memories ------------------------------------------------------
  //
  // The greedy places each weight memory by the prices of the moment; late
  // in a search BRAM18 and URAM can both be full with memories in the kind
  // that holds them less well (a shallow memory wastes most of a URAM's 4K
  // rows), and a step that needs either does not fit. Re-placed — those
  // that take least URAM per BRAM18 in URAM while it has room, the rest in
  // BRAM18 (the greedy order of the fractional two-bin packing) — the same
  // memories may leave room for it.

  // Applies c and re-places every weight memory for it; kept if the design
  // then fits and `accept` holds.
  template <typename Accept>
  bool replace_weights(const Change& c, Accept accept);

  // The slowest module is a stream block, pool, add or host port, whose
  // width is its producers': widen one producer stage (the cheapest wider
  // ψ that is no slower), or all at once (an add whose inputs are equally
  // narrow).
  bool widen_sources(int m);

  bool improve(int m);

  // Peak FPS: raise the slowest module until it cannot improve. Far from
  // the budget, every stage slower than kBatchStep of the interval moves at
  // once (batch_to()), with single steps for what a batch cannot reach (the
  // stream blocks and pools it leaves behind); once a batch would take any
  // resource past kBatchUntil of the budget, single steps only. The order
  // of the steps matters where the budget binds, and for the latency-first
  // start of run(), a state of this balancing: batching on up to the budget
  // gave the same FPS on every bench design, but lost up to 7% at some
  // budgets of the sweep (resnet18-fmnist SVD on the ZC706) through that
  // start. `steps` gets the journal end and interval after each kept
  // change.
  void balance_interval(std::vector<std::pair<std::size_t, std::int64_t>>* steps = nullptr);

  // Every stage slower than `target` to its cheapest ψ that meets it, at
  // once: 1 if kept (its interval fell), -1 if it would take a resource
  // past kBatchUntil of the budget, 0 otherwise.
  int batch_to(std::int64_t target);

  // --- Batch-1 latency: interval and fill together --------------------------
  //
  // latency = fill + interval (the row timeline). Four kinds of move
  // compete on latency drop per added (priced) resource:
  //   Level   lower the interval: balance step by step (improve()) and take
  //           the prefix of steps worth most (measure_level());
  //   Rows    the same within one resolution (the stages with the same
  //           output rows), whose per-row lag adds up along the network
  //           (measure_rows());
  //   Fill    a stage to the ψ with the best own-fill drop per cost that
  //           keeps the interval (p_in and fine shorten its window and first
  //           output); if that ψ narrows the output, the best one that does
  //           not is weighed too (FillKeepWidth);
  //   Widen   a wider producer for a pool or global pool, whose fill is its
  //           input frame or window over that width.
  // Lazy greedy: each move's ratio is an estimate until it is re-measured
  // on the current design (an epoch ends at every accepted move); a freshly
  // measured move that still tops the queue is taken. Moves are measured
  // exactly (a trial on the evaluator), proposed from estimates.

  enum class Kind { Level, Fill, FillKeepWidth, Widen, Rows };

  struct Entry {
    double ratio = 0;
    std::int64_t epoch = -1;
    Kind kind = Kind::Fill;
    int stage = -1, module = -1;
    Change change;
  };

  static bool width_sets_fill(arch::ModuleKind k) {
    return k == arch::ModuleKind::MaxPool || k == arch::ModuleKind::AvgPool || k == arch::ModuleKind::GlobalAvgPool;
  }

  // The Fill or Widen change an entry proposes on the current design, into
  // `out` (its buffer reused: this runs for every measurement); empty if
  // none.
  void propose(const Entry& e, Change& out);

  // Estimated latency drop if stage s moves to option o to widen pool m:
  // the pool's shorter fill, less any fill the stage itself gains (if it is
  // on the fill path).
  double widen_gain(int m, int s, const Option& o, std::int64_t own, bool on_path);

  // Pool m's fill if stage s's output were w wide, memoised while the
  // design does not change (many options share a width).
  std::int64_t pool_fill_if(int m, int s, std::int64_t w);

  // Which stages are on the longest fill path, recomputed when the design
  // has changed.
  const std::vector<char>& fill_path();

  // Re-measures an entry on the current design: its change and its true
  // latency drop per added resource (0 if it does not fit or gains nothing).
  // A Fill or Widen change worth at least `take_at` (and more than 0) is
  // kept at once, saving its re-evaluation: returns whether it was.
  bool measure(Entry& e, double take_at);

  // Interval moves: balance step by step towards an interval kLevelReach
  // below the current one, and take the prefix of steps with the best
  // latency drop per cost. One step is often worth a cycle or two (modules
  // sit just below one another after balancing) while a few together
  // unlock a real drop, so single steps alone would undervalue them
  // against fill moves.
  //
  // The steps are kept (level_): balancing is a function of the design, so
  // after the greedy takes a prefix of them, the next level measurement
  // starts with the rest, from the state they were measured in. It only
  // re-values them (each step's state is recorded) and balances further if
  // the lower interval now reaches further. Any other move taken starts the
  // chain anew.
  struct LevelStep {
    std::size_t end = 0;  // journal entries up to and including this step
    bool fits = true;
    std::int64_t interval = 0, latency = 0;
    arch::Resources total;
  };
  struct LevelChain {
    bool valid = false;
    bool saturated = false;  // the bottleneck could not improve after the last step
    Change journal;          // every step's changes, in order
    std::vector<LevelStep> steps;
    std::size_t taken = 0;  // journal entries the design has taken (a step's end)
  };

  template <typename RatioOf>
  void measure_level(Entry& e, std::int64_t interval, RatioOf ratio_of);

  // Rows moves: the stages whose output has the same number of rows (one
  // resolution of the network) lag behind their input by about a row at
  // their own pace each, interval / rows, so at batch 1 the late,
  // low-resolution stages are worth more per DSP than the interval
  // balancing gives them; and two stages in a chain at the same pace gain
  // nothing from one of them alone. So: balance the group's slowest stage
  // step by step towards kLevelReach below the group's slowest interval,
  // and take the prefix of steps worth most.
  template <typename RatioOf>
  void measure_rows(Entry& e, RatioOf ratio_of);

  // The queue orders entries (kept in `entries`, so that their changes are
  // not copied about) by ratio, then kind, then stage.
  struct Key {
    double ratio;
    int kind, stage, index;
    bool operator<(const Key& o) const {
      if (ratio != o.ratio) return ratio < o.ratio;
      if (kind != o.kind) return kind > o.kind;
      return stage > o.stage;
    }
  };

  void balance_latency();

  // --- Refinement -----------------------------------------------------------

  // Every stage to its cheapest ψ that keeps the design's interval and (for
  // latency) the stage's fill and output width; kept if the design is no
  // worse.
  void repack();

  // --- Exchange (batch-1 latency) -------------------------------------------
  //
  // When the greedy stops, the moves left are those that do not fit. An
  // exchange pays for one of them by moving other stages to cheaper ψ that
  // keep the interval, losing as little fill as possible: the knapsack
  // 1-swap the greedy cannot make (it spent the budget on small steps first).

  struct Payer {
    int stage = -1;
    Pick pick;
    double score = 0;  // estimated latency lost (per unit of deficit freed, for shares)
  };

  // The stages on the longest fill path.
  std::vector<char> on_fill_path() const;

  struct Gainer {
    double ratio = 0;
    int stage = -1;
    Pick pick;
  };

  // Gainers: for every stage on the fill path and every producer of a pool,
  // the pick with the best estimated latency drop per added cost as if the
  // budget were unlimited; best first.
  std::vector<Gainer> gainers(const std::vector<char>& path);

  // One exchange that lowers the latency, if there is one (kept).
  bool exchange();

  // The pools and global pools whose input width stage s sets.
  const std::vector<int>& pools_fed(int s);

  static bool covers(const arch::Resources& freed, const arch::Resources& deficit) {
    return freed.dsp >= deficit.dsp && freed.bram18 >= deficit.bram18 && freed.uram >= deficit.uram &&
           freed.lut >= deficit.lut && freed.ff >= deficit.ff;
  }

  struct Payers {
    std::vector<Payer> shares;  // per stage, the ψ losing least per deficit freed; best first
    Payer alone;                // the ψ of one stage that frees it all, losing least
  };

  // A cheaper ψ for a stage (interval within the design's): what it frees
  // and the latency it is estimated to lose.
  struct Downgrade {
    int stage = -1;
    Pick pick;
    arch::Resources freed;
    double lost = 0;
    unsigned frees = 0;  // bit per resource (dsp, bram18, uram, lut, ff) it frees some of
  };

  static unsigned positive_parts(const arch::Resources& r) {
    return (r.dsp > 0 ? 1u : 0u) | (r.bram18 > 0 ? 2u : 0u) | (r.uram > 0 ? 4u : 0u) | (r.lut > 0 ? 8u : 0u) |
           (r.ff > 0 ? 16u : 0u);
  }

  std::vector<Downgrade> downgrades(const std::vector<char>& path, std::int64_t interval);

  // The downgrades (of stages other than the gainer) that pay the deficit.
  Payers find_payers(int gainer, const arch::Resources& deficit, const std::vector<Downgrade>& downs) const;

  Evaluator& ev_;
  Objective objective_;
  bool early_start_ = true;
  std::vector<SolveStart>* starts_ = nullptr;
  StageOptions stage_options_;
  std::vector<std::vector<int>> pools_fed_;
  std::vector<char> path_;
  std::int64_t path_stamp_ = -1;
  struct Memo {
    std::uint64_t key = 0;
    std::int64_t stamp = -1, value = 0;
  };
  static constexpr int kMemoBits = 10;
  std::vector<Memo> memo_ = std::vector<Memo>(std::size_t{1} << kMemoBits);  // pool_fill_if()
  Change one_;                                                               // one()'s
  Entry keep_;                                                               // measure()'s FillKeepWidth alternative
  Change* journal_ = nullptr;                 // when set, try_keep() records what it keeps
  LevelChain level_;                          // see measure_level()
  std::vector<std::vector<int>> row_groups_;  // stages by output rows (see measure_rows())
  std::int64_t epoch_ = 0;
};

// `ev` holds a design that fits (normally ψ = 1 everywhere); leaves it at
// the best ψ found. Every state it keeps fits the budget. `starts` (batch-1
// latency only), if given, gets what each start took and reached.
void balance(Evaluator& ev, Objective objective, std::vector<SolveStart>* starts = nullptr);

}  // namespace mixtd::search::detail
