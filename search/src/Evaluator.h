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
//   up to the next stages; then the fills (one pass over int arrays) and the
//   skip FIFOs of every residual add, whose depths depend on fills and on
//   their producer's interval.
//
// The result agrees exactly with arch::analyse() (tests/search/
// test_evaluator.cpp). Every resource figure of the rules is a whole number,
// so totals kept by adding and subtracting deltas stay exact in doubles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"
#include "mixtd/arch/Graph.h"
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
  void set_all(const std::vector<arch::Psi>& psis);

  // Trials: begin_trial() starts recording what set_psi() changes;
  // rollback() restores the design as it was at that begin_trial() (without
  // re-evaluating anything), commit() keeps the changes (an enclosing trial
  // can still roll them back). Trials nest; set_all() may not run in one.
  void begin_trial();
  void rollback();
  void commit();

  std::int64_t interval() const { return interval_; }
  // As arch::Report: latency(1) is the last output word (Timing.h arrival).
  std::int64_t fill() const { return fill_.empty() ? 0 : fill_.back().fill; }
  std::int64_t latency_cycles() const { return fill() + interval_; }
  int bottleneck() const { return bottleneck_; }  // first module with the largest interval
  const arch::Resources& total() const { return total_; }
  const arch::Resources& budget() const { return budget_; }
  bool fits() const { return total_.fits(budget_); }
  double clock_mhz() const { return clock_mhz_; }
  const net::Bits& bits() const { return bits_; }
  bool device_has_uram() const { return device_has_uram_; }

  // Graph queries.
  int module_count() const { return static_cast<int>(mods_.size()); }
  std::int64_t module_interval(int m) const { return hot_[static_cast<std::size_t>(m)].interval; }
  std::int64_t module_fill(int m) const { return fill_[static_cast<std::size_t>(m)].fill; }  // longest fill at its output
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
    arch::Resources res;  // all `count` FIFOs
  };

  // Recomputes a module (a stage from its ψ, any other from its input
  // widths); returns whether its output width changed.
  bool recompute_module(int m);
  void recompute_stage(int m);
  void set_module_resources(int m, const arch::Resources& per_instance);
  void set_stream(int s, std::int64_t width, std::int64_t depth);
  void propagate_from(int m);  // widths downstream of m, then fills, skips, interval
  void recompute_fills(int from_module);
  void size_skip_fifos(int from_module);
  void recompute_interval();
  void update_interval();
  int slower(int a, int b) const;
  void read_top();
  void tree_update(int m);

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
  std::vector<int> adds_;        // EltwiseAdd modules with ≥ 2 inputs
  std::vector<char> feeds_add_;  // per module: it produces an input of one of adds_
  std::vector<int> tree_;        // tournament tree of module intervals, see recompute_interval()
  std::vector<arch::Arrival> fill_;
  std::vector<arch::Arrival> inputs_scratch_;
  // Each module's own fill and interval, packed: the passes that run on
  // every change read only these.
  struct Hot {
    arch::Cycles cycles;
    std::int64_t interval = 0;
  };
  std::vector<Hot> hot_;
  bool fill_moved_ = false;  // some module's own fill changed in this propagation
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
    std::int64_t width, depth;
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
