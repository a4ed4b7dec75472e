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

struct Cycles {
  std::int64_t in = 0, compute = 0, out = 0;
  std::int64_t fill = 0;
  std::int64_t interval() const { return std::max({in, compute, out}); }
};

// Register stages of a MAC unit behind its multipliers (multiply, adder tree
// of `fine` products, accumulate) and of the requantiser.
inline constexpr std::int64_t kMacPipeline = 3;
inline constexpr std::int64_t kRequantPipeline = 2;
// Cycles a simple streaming block (split, fork, merge, add, regroup) holds a beat.
inline constexpr std::int64_t kStreamLatency = 1;

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
// compute-bound stage never waits for its next row. The SystemC LineBuffer
// has exactly this capacity.
std::int64_t line_buffer_pixels(std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t w);

// A conv stage on one frame:
//   in      = H·W·C / p_in
//   compute = Ho·Wo·(C/p_in)·(N/p_out)·(kh·kw/fine)       dense (per conv group, serialised)
//           = Ho·Wo·(C/p_in)·(kh·kw/fine)                 depthwise
//   out     = Ho·Wo·N / p_out
//   fill    = window_fill_words/p_in + (C/p_in)·(kh·kw/fine) + kMacPipeline + kRequantPipeline
//             (depthwise: kh·kw/fine instead of (C/p_in)·(kh·kw/fine))
Cycles stage_cycles(const td::StageShape& s, const Psi& psi);

// Max/avg pooling, p channels per cycle, one window per cycle.
Cycles pool_cycles(const net::Shape& in, const net::Shape& out, std::int64_t kh, std::int64_t kw, std::int64_t ph,
                   std::int64_t pw, std::int64_t p);
// Global average pooling: reads the whole frame before its first output.
Cycles global_pool_cycles(const net::Shape& in, std::int64_t p);
// A streaming block moving `words_in` → `words_out` at `width_in` / `width_out` words per cycle.
Cycles stream_cycles(std::int64_t words_in, std::int64_t width_in, std::int64_t words_out, std::int64_t width_out);

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace mixtd::arch
