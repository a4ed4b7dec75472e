// Incremental evaluation of a design's interval, fill and total resources
// while its ψ changes (private to mixtd::search).
//
// arch::analyse() rebuilds the whole graph (names, maps, strings) on every
// call; the solver and the annealer evaluate thousands of ψ. The Evaluator
// builds the graph once with arch::build_graph(), keeps its topology as
// index arrays, and on a ψ change recomputes only what depends on it, with
// the SAME rule functions the graph builder uses (arch::stage_cycles,
// stage_resources, stream_cycles, fifo_resources, ...):
//
//   the stage itself; the streams and non-stage modules whose width derives
//   from its output width (fork, group add, regroup, add, pool, host out),
//   up to the next stages; then the fills and the skip FIFOs of the
//   residual adds, whose depths depend on fills and on their producer's
//   interval. Downstream of a change most arrivals only shift (see Shift):
//   they are recomputed until the change has become a uniform shift at a
//   cut of the graph, and the rest of the network is shifted in one loop,
//   its skip FIFOs untouched. set_psis() applies several changes in one
//   such pass.
//
// The result agrees exactly with arch::analyse() (tests/search/
// test_evaluator.cpp). Every resource figure of the rules is a whole number,
// so totals kept by adding and subtracting deltas stay exact in doubles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/arch/RowTimeline.h"
#include "mixtd/arch/Timing.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::search::detail {

// One ψ the search chooses: a stage of a conv/linear layer (shared by all
// its g1·g2 chunks) and its legal values.
struct StageSlot {
  int module = -1;  // index in the graph
  std::string layer;
  int index = 0;  // stage index within the layer
  td::StageShape shape;
  std::vector<std::int64_t> p_in, p_out, fine;  // legal values, ascending (p_out empty when depthwise)
  bool depthwise() const { return shape.depthwise; }
};

class Evaluator {
 public:
  // Builds the graph of `d` (which must be valid) once; ψ starts as d's.
  explicit Evaluator(const arch::Design& d);

  int stage_count() const { return static_cast<int>(slots_.size()); }
  const StageSlot& slot(int s) const { return slots_[static_cast<std::size_t>(s)]; }
  const arch::Psi& psi(int s) const { return psi_[static_cast<std::size_t>(s)]; }
  const std::vector<arch::Psi>& psis() const { return psi_; }

  // Changes one stage's ψ (must be legal) and updates everything it affects.
  void set_psi(int s, const arch::Psi& p);
  // Changes several stages' ψ (in order: a stage named twice gets its last)
  // and updates what they affect in one pass, as set_psi() one by one would
  // leave it (every figure is a function of ψ) at the cost of one change.
  void set_psis(const std::vector<std::pair<int, arch::Psi>>& changes);
  void set_all(const std::vector<arch::Psi>& psis);

  // Trials: begin_trial() starts recording what set_psi() changes;
  // rollback() restores the design as it was at that begin_trial() (without
  // re-evaluating anything), commit() keeps the changes (an enclosing trial
  // can still roll them back). Trials nest; set_all() may not run in one.
  void begin_trial();
  void rollback();
  void commit();

  std::int64_t interval() const { return interval_; }
  // The arrival curves' fill (Timing.h arrival): the longest path of module
  // fills, the solver's cheap estimate of what a stage's ψ does to latency.
  std::int64_t fill() const { return fill_.empty() ? 0 : fill_.back().fill; }
  // Batch-1 latency as arch::analyse() and `mixtd report` compute it: the
  // row timeline (RowTimeline.h) of frame 0, first word in to last word out.
  // Computed when asked, for the modules whose cycles moved since the last
  // call and those downstream whose rows moved.
  // Never below the interval (as arch::Report::latency_cycles(1)).
  std::int64_t latency_cycles() const { return std::max(interval_, rows_.latency()); }
  // Module row updates the latency has cost so far (for benchmarks).
  std::int64_t row_updates() const { return rows_.module_updates(); }
  int bottleneck() const { return bottleneck_; }  // first module with the largest interval
  const arch::Resources& total() const { return total_; }
  const arch::Resources& budget() const { return budget_; }
  // A search may work to a smaller budget for a while (Balancer.cpp's
  // narrow start); nothing cached depends on the budget.
  void set_budget(const arch::Resources& b) { budget_ = b; }
  bool fits() const { return total_.fits(budget_); }
  double clock_mhz() const { return clock_mhz_; }
  const net::Bits& bits() const { return bits_; }
  bool device_has_uram() const { return device_has_uram_; }

  // Graph queries.
  int module_count() const { return static_cast<int>(mods_.size()); }
  std::int64_t module_interval(int m) const { return hot_[static_cast<std::size_t>(m)].interval; }
  const arch::Cycles& module_cycles(int m) const { return hot_[static_cast<std::size_t>(m)].cycles; }  // one instance
  // The longest fill at m's output.
  std::int64_t module_fill(int m) const { return fill_[static_cast<std::size_t>(m)].fill; }
  std::int64_t module_instances(int m) const { return mods_[static_cast<std::size_t>(m)].count; }
  const arch::Resources& module_resources(int m) const {
    return mods_[static_cast<std::size_t>(m)].res;
  }  // all instances
  const std::vector<int>& module_outputs(int m) const { return mods_[static_cast<std::size_t>(m)].outputs; }
  std::int64_t stream_count(int s) const { return strs_[static_cast<std::size_t>(s)].count; }
  std::int64_t stream_depth(int s) const { return strs_[static_cast<std::size_t>(s)].depth; }
  const arch::Resources& stream_resources(int s) const { return strs_[static_cast<std::size_t>(s)].res; }  // all FIFOs
  std::int64_t module_width_out(int m) const { return mods_[static_cast<std::size_t>(m)].width_out; }
  arch::ModuleKind module_kind(int m) const { return mods_[static_cast<std::size_t>(m)].kind; }
  const std::string& module_name(int m) const { return graph_.modules[static_cast<std::size_t>(m)].name; }
  int stage_of_module(int m) const { return mods_[static_cast<std::size_t>(m)].slot; }  // -1 if not a stage
  // The stages whose output width sets this module's input width (through
  // forks, adds, regroups, pools...): raising their p_out speeds it up.
  const std::vector<int>& width_sources(int m) const { return mods_[static_cast<std::size_t>(m)].sources; }
  // The producer modules of m's inputs.
  const std::vector<int>& producers(int m) const { return mods_[static_cast<std::size_t>(m)].producers; }
  // The stages on the longest fill path, from the output back: at every
  // module, step to the producer that finishes filling last.
  std::vector<int> fill_path_stages() const {
    std::vector<int> path;
    for (int m = module_count() - 1; m >= 0;) {
      if (const int s = stage_of_module(m); s >= 0) path.push_back(s);
      int next = -1;
      std::int64_t longest = -1;
      for (int p : producers(m))
        if (module_fill(p) > longest) {
          longest = module_fill(p);
          next = p;
        }
      m = next;
    }
    return path;
  }
  std::int64_t module_width_in(int m) const;  // the narrowest input stream's width

  // The (narrowest) input width module `target` would see if stage s's
  // output were w words wide, all else as now; for the solver's estimates.
  std::int64_t width_in_if(int target, int s, std::int64_t w) const;
  // A pool's or global pool's own fill if its input were `width` words wide.
  std::int64_t pool_fill_at(int m, std::int64_t width) const;

  // Writes the current ψ into the design's layer mappings.
  void apply(arch::Design& d) const;

  std::int64_t evaluations() const { return evaluations_; }

 private:
  struct Mod {
    arch::ModuleKind kind = arch::ModuleKind::Stage;
    std::int64_t count = 1;
    int slot = -1;               // stage slot, -1 for other modules
    std::vector<int> inputs;     // stream ids
    std::vector<int> outputs;    // stream ids
    std::vector<int> producers;  // module ids of the inputs' producers
    std::vector<int> sources;    // see width_sources()
    std::int64_t width_out = 1;
    arch::Cycles cycles;
    arch::Resources res;  // all `count` instances
  };
  struct Str {
    int from = -1, to = -1;
    std::int64_t count = 1, words = 0;
    std::int64_t override_depth = 0;  // design.fifo_depths, 0 if none
    std::int64_t width = 1, depth = 1;
    std::int64_t read_width = 0;  // its consumer's (arch::consumer_read_width) when last priced
    arch::Resources res;          // all `count` FIFOs, and their repacks where read_width differs
  };

  // Recomputes a module (a stage from its ψ, any other from its input
  // widths); returns whether its output width changed.
  bool recompute_module(int m);
  void recompute_stage(int m);
  void set_module_resources(int m, const arch::Resources& per_instance);
  // Prices stream s at `width` and `depth` and its consumer's read width now.
  void set_stream(int s, std::int64_t width, std::int64_t depth);
  // The width module m's input ports read (arch::consumer_read_width, as
  // build_graph sets width_in): a stage's p_in, an element-wise add's widest
  // input, the host output any (0), every other module its first input's.
  std::int64_t consumer_read_width(int m) const;
  // Re-prices m's input streams after its read width may have moved.
  void reprice_inputs(int m);
  void store_psi(int s, const arch::Psi& p);  // ψ (logged in a trial), nothing recomputed
  // Widths downstream of the dirty modules in [first, last], then fills,
  // skips, interval.
  void propagate(int first, int last);
  // `all`: every module from from_module on anew (else only those the
  // change reaches other than by a shift, see Shift).
  void recompute_fills(int from_module, bool all = false);
  void size_skip_fifos(int from_module, bool all = false);
  struct Shift;
  void shift_tail(std::size_t m, const Shift& sh);
  void recompute_interval();
  void update_interval();
  int slower(int a, int b) const;
  void read_top();
  // Re-evaluates the tournament tree above `changed` (modules whose
  // interval may have moved, ascending), level by level, each node at most
  // once and only where a child's winner (or its interval) moved.
  void tree_refresh(const std::vector<int>& changed);
  std::vector<std::uint32_t> tree_mark_;  // per module: tree_pass_ if in `changed`
  std::uint32_t tree_pass_ = 0;
  std::vector<int> tree_level_, tree_next_;
  std::vector<int> interval_moved_;  // modules whose interval sync_hot() saw move since the last refresh
  void refresh_moved_intervals();    // tree_refresh() over interval_moved_
  // fifo_resources(depth, width) per FIFO, memoised (direct-mapped): every
  // skip-FIFO depth a change moves would otherwise place a memory anew.
  struct FifoMemo {
    std::int64_t depth = -1, width = -1;
    arch::Resources res;
  };
  static constexpr int kFifoMemoBits = 9;
  std::vector<FifoMemo> fifo_memo_ = std::vector<FifoMemo>(std::size_t{1} << kFifoMemoBits);
  const arch::Resources& fifo_cost(std::int64_t depth, std::int64_t width);

  void save_module(int m);
  void save_stream(int s);
  void sync_hot(int m);

  arch::Graph graph_;  // static attributes (shapes, words, ports); numbers are ours
  net::Bits bits_;
  std::int64_t fifo_depth_ = 4;
  std::int64_t host_words_ = 64;
  bool device_has_uram_ = true;
  double clock_mhz_ = 200;
  arch::Resources budget_;

  std::vector<StageSlot> slots_;
  std::vector<arch::Psi> psi_;
  std::vector<Mod> mods_;
  std::vector<Str> strs_;
  std::vector<int> adds_;  // EltwiseAdd modules with ≥ 2 inputs
  // The inputs of adds_, flat: add k's are [add_in_start_[k], add_in_start_[k + 1]).
  struct AddInput {
    int stream = -1, from = -1;
    std::int64_t pixels = 1, row = 0;  // the producer's output pixels per frame, per row
  };
  std::vector<AddInput> add_inputs_;
  std::vector<int> add_in_start_;
  std::vector<char> feeds_add_;  // per module: it produces an input of one of adds_
  std::vector<int> tree_;        // tournament tree of module intervals, see recompute_interval()
  std::vector<arch::Arrival> fill_;
  // Each module's own fill and interval, packed: the passes that run on
  // every change read only these.
  struct Hot {
    arch::Cycles cycles;
    std::int64_t interval = 0;
  };
  std::vector<Hot> hot_;
  mutable arch::RowTimelineTracker rows_;  // latency_cycles(); a cache, so mutable
  // A stage's cycles and resources (one instance) at a ψ, memoised: the
  // searches set the same few ψ of a stage again and again (a trial, its
  // rollback, the move taken), and the resource rules place memories by
  // tables. Direct-mapped by (stage, ψ).
  struct StageMemo {
    int slot = -1;
    arch::Psi psi;
    arch::Cycles cycles;
    arch::Resources total;
  };
  static constexpr int kStageMemoBits = 10;
  std::vector<StageMemo> stage_memo_ = std::vector<StageMemo>(std::size_t{1} << kStageMemoBits);
  bool fill_moved_ = false;         // some module's own fill changed in this propagation
  std::vector<char> cycles_moved_;  // per module: its own cycles changed in this propagation
  std::vector<int> moved_;          // those modules
  std::vector<char> width_moved_;   // per module: its output width changed in this propagation
  std::vector<int> widened_;        // those modules
  // What the last fills pass did to each module's arrival (modules before
  // shift_from_ it did not reach): first and last moved by `first` and
  // `last` cycles, the fill by `fill`, the lead unchanged or not (and what
  // it was). A module whose own cycles stand and whose merged input (the
  // latest of its inputs, Timing.h) moved by a uniform shift (first and
  // last alike, lead unchanged) moves by that shift too, exactly: arrival()
  // is max-plus in first, last and fill, and its window depends only on
  // last − first. Most of a change's downstream arrivals are shifted, not
  // recomputed (an add whose later input shifted still shifts). An add
  // whose inputs all shifted alike keeps its skip-FIFO depths (they depend
  // on differences of arrivals only).
  struct Shift {
    std::int64_t first = 0, last = 0, fill = 0;
    bool lead = true;
    double old_lead = 0;  // where !lead
    bool uniform() const { return first == last && lead; }
  };
  std::vector<Shift> shift_;
  int shift_from_ = 0;
  // From tail_from_ on every module took the shift tail_: past a cut (a
  // module that all later modules depend on only through it and those after
  // it, such as a residual block's add) whose shift is uniform, with no own
  // cycles moved, the rest of the network shifts alike, in one tight loop.
  int tail_from_ = 0;
  Shift tail_;
  std::vector<char> cut_;  // per module: no later module has a producer before it
  const Shift& shift_of(int m) const {
    static const Shift kNone;
    if (m < shift_from_) return kNone;
    return m >= tail_from_ ? tail_ : shift_[static_cast<std::size_t>(m)];
  }
  std::vector<char> dirty_;
  std::vector<int> touched_;                 // modules recomputed by the last change
  std::vector<int> prod_start_, prod_list_;  // producers, flat (CSR)
  std::int64_t interval_ = 0;
  int bottleneck_ = -1;
  arch::Resources total_;
  std::int64_t evaluations_ = 0;

  // The open trials' record: values before each change, oldest first (a
  // rollback restores newest to oldest, so the oldest value wins).
  struct ModState {
    int m;
    std::int64_t width_out;
    arch::Cycles cycles;
    arch::Resources res;
  };
  struct StrState {
    int s;
    std::int64_t width, depth, read_width;
    arch::Resources res;
  };
  struct Savepoint {
    std::uint32_t id = 0;
    std::size_t mods = 0, strs = 0, psis = 0;  // log sizes at the start
    std::size_t fill_from = 0;                 // fills saved from here on
    std::vector<arch::Arrival> fills;
    std::int64_t interval = 0;
    int bottleneck = -1;
    arch::Resources total;
  };
  std::vector<Savepoint> trials_;  // [0, depth_) are open; the rest keep their buffers for reuse
  std::size_t depth_ = 0;
  std::uint32_t next_trial_ = 1;
  Savepoint* open_trial() { return depth_ ? &trials_[depth_ - 1] : nullptr; }
  std::vector<std::uint32_t> mod_saved_, str_saved_, psi_saved_;  // id of the trial that last saved it
  std::vector<ModState> mod_log_;
  std::vector<StrState> str_log_;
  std::vector<std::pair<int, arch::Psi>> psi_log_;
};

}  // namespace mixtd::search::detail
