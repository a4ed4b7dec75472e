// The row-level timeline of a design's pipeline: when each row of every
// module's output starts and ends, frame by frame, in max-plus time
// (docs/accelerator.md "Latency").
//
// Arrival curves (Timing.h) summarise a whole frame by its first and last
// word; that misses how a window walks its input row by row (a strided conv
// needs sh new rows per output row, a padded one starts before the last
// rows exist, a global pool needs them all). Here each module maps the
// times of its input rows to the times of its output rows with the same
// Cycles the rest of the model uses:
//
//   output row i needs input row need(i) = min(H−1, i·sh − ph + kh − 1):
//   its first output word leaves fill − window cycles after the first
//   window's last word arrived, its last word `tail` cycles after the last
//   window's last word; rows follow each other at the module's own pace
//   (max(compute, out) / Ho per row, a row's last word one output beat,
//   max(compute, out) / out, before the row's end: a stage emits a pixel's
//   output blocks one after another) and a module takes an input row no
//   faster than in / H.
//
// Back-pressure is not modelled: FIFOs are assumed deep enough (what the
// FIFO sizing rules guarantee), so the timeline is what the simulator
// shows when nothing stalls. It costs O(modules · rows · frames).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mixtd/arch/Graph.h"

namespace mixtd::arch {

struct RowTimes {
  std::vector<double> first, last;  // per output row (frames × rows), cycles
  // Per input row (frames × rows), when the module takes it in: when every
  // producer has it, at no more than the module's own input rate (a row's
  // first and last word). Only from row_timeline(..., with_intake = true).
  std::vector<double> in_first, in_last;
};

struct RowTimeline {
  std::vector<RowTimes> modules;  // per graph module
  // First word into host_in to the last word out of host_out, frame 0.
  std::int64_t latency = 0;
};

// `frames` frames; frame f enters no earlier than f·`period` cycles
// (0: as fast as the host link allows).
RowTimeline row_timeline(const Graph& g, int frames = 1, double period = 0, bool with_intake = false);

// The same timeline, kept up to date while modules' Cycles change (the
// solver's objective is batch-1 latency as analyse() computes it). The
// graph's topology and shapes are fixed at construction; update() takes the
// current Cycles of every module and recomputes only what moved:
//
//   a module whose Cycles changed is recomputed; so is one whose inputs
//   moved other than by a uniform shift. A module whose Cycles stand and
//   whose every input shifted by the same δ shifts by δ itself, in O(1):
//   the rules are max-plus (max, +, and a fraction of a difference of two
//   input times), so shifting all inputs shifts every output row alike.
//
// For that to be exact, not merely close, times are fixed-point integers
// (kRowTimeUnit units per cycle), so an incremental update gives the very
// latency a fresh one does. row_timeline() is one update() of this.
inline constexpr std::int64_t kRowTimeUnit = 1 << 16;

class RowTimelineTracker {
 public:
  // `keep_intake`: also keep each module's input rows as it takes them
  // (RowTimes::in_first / in_last; no trials then).
  RowTimelineTracker(const Graph& g, int frames = 1, double period = 0, bool keep_intake = false);
  // Module m's Cycles (one instance) are now `c`; nothing is computed
  // until latency().
  void set_cycles(int m, const Cycles& c) {
    Mod& x = mods_[static_cast<std::size_t>(m)];
    if (c == x.cycles) return;
    const Key k = key_of(m, c);
    key_ ^= x.key ^ k;
    x.key = k;
    x.cycles = c;
    queue(m);
  }
  // `cycles(m)`: every module's current Cycles. Returns latency().
  template <typename CyclesOf>
  std::int64_t update(CyclesOf&& cycles) {
    for (std::size_t m = 0; m < mods_.size(); ++m) set_cycles(static_cast<int>(m), cycles(static_cast<int>(m)));
    return latency();
  }
  // First word into host_in to the last word out of host_out, frame 0,
  // cycles (rounded up). The latency is a function of the modules' Cycles
  // alone, and a search measures the same Cycles again and again (a move
  // re-measured after others were taken, the same step from another
  // start). Inside a trial, a state seen before is looked up (exactly: the
  // key is every module's Cycles, see Key) and its rows stay pending: a
  // trial is mostly rolled back, which then costs nothing. Outside one, or
  // when a trial so answered is committed to the outermost level, the rows
  // are brought up to date: pending rows there would be recomputed, and
  // rolled back, by every trial that follows.
  std::int64_t latency() {
    if (pending_.empty()) return latency_;
    if (depth_ > 0)
      if (const auto it = memo_.find(key_); it != memo_.end()) {
        answered_ = true;
        return it->second;
      }
    recompute();
    return latency_;
  }
  // Trials, nestable, as the solver's evaluator has them: rollback() puts
  // every row, and what is pending, back as it was at begin_trial(), so
  // that measuring a move costs one update, not two (the update and then
  // the one undoing it). The caller restores the Cycles it changed with
  // set_cycles() before rollback(). commit() keeps the changes.
  void begin_trial();
  void rollback();
  void commit();
  // The rows in cycles (RowTimeline's form), after bringing them up to date.
  RowTimeline timeline();
  // Module row computations so far (a shifted module costs none).
  std::int64_t module_updates() const { return module_updates_; }

 private:
  // Every module's Cycles, hashed: the XOR over modules of two
  // independent 64-bit hashes of (module, Cycles), kept up to date by
  // set_cycles() in O(1) (Zobrist hashing). Two states share a key by
  // chance with probability about n² / 2^129 for n states seen.
  struct Key {
    std::uint64_t a = 0, b = 0;
    Key& operator^=(const Key& o) {
      a ^= o.a, b ^= o.b;
      return *this;
    }
    friend Key operator^(Key x, const Key& y) { return x ^= y; }
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return static_cast<std::size_t>(k.a); }
  };
  static Key key_of(int m, const Cycles& c);
  // Latencies by key (cleared when it holds kMemoLimit: an annealer sees
  // hundreds of thousands of states).
  static constexpr std::size_t kMemoLimit = std::size_t{1} << 18;
  std::unordered_map<Key, std::int64_t, KeyHash> memo_;
  Key key_;

  enum class Moved : char { No, Shifted, Yes };
  // A point that far through an input row.
  struct Fraction {
    double value = 1;
    bool is_zero = false, is_one = true;
    Fraction() = default;
    explicit Fraction(double v) : value(v), is_zero(v == 0), is_one(v == 1) {}
  };
  struct Mod {
    ModuleKind kind = ModuleKind::Stage;
    std::int64_t H = 1, W = 1, Ho = 1, Wo = 1;
    bool whole_frame = false;        // a global pool
    std::vector<std::int64_t> need;  // per output row: the input row it needs last
    Fraction first_at, last_at;      // where in that row its first / last window ends
    std::vector<int> producers, consumers;
    // Every producer has all the rows this module reads (else the rows it
    // lacks read as time 0, which does not shift: no shortcut).
    bool whole_rows = true;
    Cycles cycles;      // the latest set_cycles()
    Key key;            // key_of(its index, cycles)
    Cycles computed;    // those the rows were computed with
    bool ever = false;  // computed at all
    // Rows, fixed point: first[k] + offset, last[k] + offset.
    std::vector<std::int64_t> first, last;
    std::vector<std::int64_t> in_first, in_last;  // keep_intake_ only, + offset too
    std::int64_t offset = 0;
    Moved moved = Moved::No;  // in recompute() pass `moved_pass`
    std::int64_t shift = 0;   // when moved == Shifted
    std::uint64_t moved_pass = 0, queued_pass = 0;
    // The trial that last saved this module's offset / rows (see Saved).
    std::uint64_t offset_saved = 0, rows_saved = 0;
  };
  // What a trial changed, oldest first: a module's offset before its first
  // shift, or its rows (with offset and computed) before its first
  // compute, within the trial. Rollback restores newest to oldest, so the
  // oldest value wins. Entries past `saved_` are spares whose vectors keep
  // their capacity.
  struct Saved {
    int module = -1;
    bool rows = false;
    std::vector<std::int64_t> first, last;
    std::int64_t offset = 0;
    Cycles computed;
    bool ever = false;
  };
  struct Trial {
    std::uint64_t id = 0;
    std::size_t saved = 0;
    std::vector<int> pending;
    std::int64_t latency = 0;
    bool answered = false;
  };
  Saved& save(int m, bool rows);
  // The modules whose Cycles changed, marked (queued_pass) and listed in
  // pending_; recompute() visits them and the consumers of those that
  // moved in index (topological) order, scanning the marks from the first
  // to the last (cheaper than a heap push and pop per module visited).
  void queue(int m) {
    Mod& x = mods_[static_cast<std::size_t>(m)];
    if (x.queued_pass == pass_) return;
    x.queued_pass = pass_;
    pending_.push_back(m);
  }
  void recompute();
  void compute(Mod& m);  // rows anew; sets m.moved / m.shift against the old rows
  std::vector<Mod> mods_;
  std::vector<std::int64_t> in_first_, in_last_, new_first_, new_last_;  // scratch
  int frames_ = 1;
  std::int64_t period_ = 0;  // fixed point
  bool keep_intake_ = false;
  int host_in_ = -1, host_out_ = -1;
  std::vector<int> pending_;
  std::uint64_t pass_ = 1;
  std::int64_t latency_ = 0;
  bool answered_ = false;  // latency() answered from memo_ with rows pending
  std::int64_t module_updates_ = 0;
  std::vector<Trial> trials_;  // open ones, innermost last (capacity reused)
  std::size_t depth_ = 0;
  std::uint64_t next_trial_ = 1;
  std::vector<Saved> log_;
  std::size_t saved_ = 0;
};

// FIFO sizing (FINN's set_fifo_depths step, done analytically). A producer
// whose output fans out to several consumers moves in lockstep: a beat
// leaves when every consumer's FIFO has room. A consumer takes input only
// as its line buffer frees slots (Timing.h line_buffer_pixels; two pixels
// for streaming blocks) and no faster than its own input rate (a buffer
// with room does not absorb a burst it cannot take in), so consumers that
// walk the frame differently (a
// 3×3 stride-2 conv and a 1×1 stride-2 downsample behind one add) hold the
// shared producer back unless the FIFO in front of the one that lags
// absorbs the difference. Per stream: the depth in beats with which its
// consumer never holds the shared producer back while another consumer
// would take those words itself (a fast producer held back by its slowest
// consumer alone loses nothing), from the timelines of three frames
// entering every `interval` cycles (steady state), plus `fifo_depth`. 0 for
// streams from a producer with one output and for skip FIFOs (sized by
// Timing.h's skip_fifo_depth).
std::vector<std::int64_t> fan_out_fifo_depths(const Graph& g, std::int64_t interval, std::int64_t fifo_depth);

}  // namespace mixtd::arch
