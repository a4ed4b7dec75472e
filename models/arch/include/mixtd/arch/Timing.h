// The timing rules of every hardware block, in one place (SPEC
// "Performance semantics"). The analytical model calls these; the SystemC
// modules take their per-beat costs from the same functions.
//
// A module's initiation interval per frame is the largest of its input,
// compute and output cycles; `fill` is the cycles from its first input beat
// to its first output beat. Streams carry beats of the producer's width; a
// consumer's input port re-packs beats to its own width at no extra cost, so
// each side's cycles are its words divided by its own width.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mixtd/arch/Design.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::arch {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Cycles {
  std::int64_t in = 0, compute = 0, out = 0;
  std::int64_t fill = 0;
  // Of `fill`, the cycles spent taking in the words of the first window at
  // the module's own input rate (0 for blocks without a window).
  std::int64_t window = 0;
  // Cycles from the last input word to the last output word.
  std::int64_t tail = 0;
  std::int64_t interval() const { return std::max({in, compute, out}); }
  bool operator==(const Cycles&) const = default;
};

// When a module's output of the first frame starts and ends, given its
// inputs' (arrival curves in max-plus time, docs/accelerator.md "Latency"):
//   first = latest input first + fill, with the window taken at the slower
//           of the module's own input rate and the pace its input arrives
//           at (the input frame spread over last − first cycles)
//   last  = max(latest input last + tail, input first + in + tail,
//               first + max(compute, out))
// The SystemC model shows why: a window of W·C words behind a slow producer
// fills at the producer's pace, not at the line buffer's.
// `lead`: the share of a frame that must have entered the network's path
// up to here before the first output (the windows' look-ahead, summed):
// what a skip FIFO must hold however fast the pipeline runs.
// `fill`: the longest path of module fills (each at its own input rate),
// which is what latency(1) − interval still uses (see docs/simulation.md:
// the arrival-based latency is kept for skip FIFOs until the solver's
// latency heuristics follow it).
struct Arrival {
  std::int64_t first = 0, last = 0;
  double lead = 0;
  std::int64_t fill = 0;
};
// The rule on the inputs merged: `in` is their latest first, last, lead and
// fill (component-wise; all 0 without inputs). Inline, with arrival(): the
// solver's evaluator runs it for every module after every change.
inline Arrival arrival_after(const Cycles& own, const Arrival& in) {
  // The input frame arrives over `span` cycles; a window takes its share.
  const std::int64_t span = in.last - in.first;
  std::int64_t window = own.window;
  if (window > 0 && span > own.in && own.in > 0) window = ceil_div(own.window * span, own.in);
  Arrival a;
  a.lead = in.lead + (own.in > 0 ? static_cast<double>(own.window) / static_cast<double>(own.in) : 0.0);
  a.first = in.first + own.fill - own.window + window;
  a.fill = in.fill + own.fill;
  a.last = std::max({in.last + own.tail, in.first + own.in + own.tail, a.first + std::max(own.compute, own.out)});
  return a;
}

// Merges one more input into `in` (as arrival_after() expects it).
inline void merge_arrival(Arrival& in, const Arrival& x) {
  in.first = std::max(in.first, x.first);
  in.last = std::max(in.last, x.last);
  in.lead = std::max(in.lead, x.lead);
  in.fill = std::max(in.fill, x.fill);
}

inline Arrival arrival(const Cycles& own, const Arrival* inputs, std::size_t count) {
  Arrival in;
  for (std::size_t k = 0; k < count; ++k) merge_arrival(in, inputs[k]);
  return arrival_after(own, in);
}

// The depth of an Add's input FIFO fed by `producer` while its other (main)
// input arrives as `main`: 0 if it is not a skip (it arrives last), else
// what the producer has emitted and the Add not yet consumed — at the
// moment the main input's first word arrives, or when the producer's last
// word leaves (frames spread evenly over their arrival), and at least the
// main path's look-ahead plus a row and two pixels (a strided conv on the
// main path and a strided 1x1 on the skip path advance row by row) — plus
// the default FIFO depth. `words` per frame, `width` words per beat,
// `pixels` per frame, `row` pixels per row.
std::int64_t skip_fifo_depth(const Arrival& producer, const Arrival& main, std::int64_t words, std::int64_t width,
                             std::int64_t pixels, std::int64_t fifo_depth, std::int64_t row = 0);

// Register stages of a MAC unit behind its multipliers (multiply, adder tree
// of `fine` products, accumulate) and of the requantiser.
inline constexpr std::int64_t kMacPipeline = 3;
inline constexpr std::int64_t kRequantPipeline = 2;
// Cycles a simple streaming block (split, fork, merge, add, regroup) holds a beat.
inline constexpr std::int64_t kStreamLatency = 1;

// A group add or elementwise add: a requantiser behind the adder.
inline void add_requantiser(Cycles& c) {
  c.fill += kRequantPipeline;
  c.tail += kRequantPipeline;
}

// Multipliers of a stage: p_in·p_out·fine (dense: each window broadcast to
// p_out inner-product units of p_in·fine multipliers), p_in·fine (depthwise:
// p_in channels scattered over the units).
std::int64_t stage_multipliers(const td::StageShape& s, const Psi& psi);

// Input words the line buffer must hold before the first window is complete:
// ((kh − 1 − ph)·W + (kw − pw))·C, at least one pixel (C).
std::int64_t window_fill_words(const td::StageShape& s);

// Pixels a line buffer (conv stage, pooling) holds: two for a 1×1 window
// (one computed while the next fills), kw + sw for a 1×k window, and
// (kh − 1 + sh) lines for kh > 1 — a stride of lines beyond the window, so
// the input keeps streaming while a row of windows is computed and a
// compute-bound stage never waits for its next row. A 1×1 or 1×k window
// with sh > 1 holds one input row more: the rows it drops stream past while
// it computes (with two pixels, a 1×1 stride-2 downsample ran 36% slower
// than its compute in simulation). Pixels no window reads take no slot.
// And at least what the last window of a frame reads plus the next frame's
// first window, so frames follow each other without a bubble (a 5×5 pad-2
// window on a 4×4 frame needs 22 pixels, not 5 lines). The SystemC
// LineBuffer has exactly this capacity.
std::int64_t line_buffer_pixels(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph,
                                std::int64_t pw, std::int64_t h, std::int64_t w);
// The slots a line buffer really has (the SystemC LineBuffer and the RTL's
// CAP): line_buffer_pixels, but never more than two frames and at least two.
std::int64_t line_buffer_capacity(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph,
                                  std::int64_t pw, std::int64_t h, std::int64_t w);

// A conv stage on one frame:
//   in      = H·W·C / p_in
//   compute = Ho·Wo·(C/p_in)·(N/p_out)·(kh·kw/fine)       dense (per conv group, serialised)
//           = Ho·Wo·(C/p_in)·(kh·kw/fine)                 depthwise
//   out     = Ho·Wo·N / p_out
//   fill    = window_fill_words/p_in + (C/p_in)·(kh·kw/fine) + kMacPipeline + kRequantPipeline
//             (depthwise: kh·kw/fine instead of (C/p_in)·(kh·kw/fine))
Cycles stage_cycles(const td::StageShape& s, const Psi& psi);

// The same in parts, for searches that enumerate every ψ of a stage: what
// depends only on p_in, only on p_out, only on fine, each computed once per
// value and combined (stage_cycles() is exactly this combination).
struct StageInTerms {
  std::int64_t in = 0, window = 0;
  std::int64_t per_in = 0;  // ⌈C/p_in⌉ (depthwise: ⌈channels/p_in⌉)
};
struct StageOutTerms {
  std::int64_t out = 0;
  std::int64_t per_out = 0;  // ⌈N/p_out⌉ per conv group (unused when depthwise)
};
StageInTerms stage_in_terms(const td::StageShape& s, std::int64_t p_in);
StageOutTerms stage_out_terms(const td::StageShape& s, std::int64_t p_out);
inline std::int64_t stage_fine_terms(const td::StageShape& s, std::int64_t fine) { return ceil_div(s.kh * s.kw, fine); }
Cycles stage_cycles(const td::StageShape& s, const StageInTerms& in, const StageOutTerms& out, std::int64_t per_fine);

// Max/avg pooling, p channels per cycle, one window per cycle.
Cycles pool_cycles(const net::Shape& in, const net::Shape& out, std::int64_t kh, std::int64_t kw, std::int64_t ph,
                   std::int64_t pw, std::int64_t p);
// Global average pooling: reads the whole frame before its first output.
Cycles global_pool_cycles(const net::Shape& in, std::int64_t p);
// A streaming block moving `words_in` → `words_out` at `width_in` / `width_out` words per cycle.
Cycles stream_cycles(std::int64_t words_in, std::int64_t width_in, std::int64_t words_out, std::int64_t width_out);

}  // namespace mixtd::arch
