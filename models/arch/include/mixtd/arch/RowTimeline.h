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
//   (max(compute, out) / Ho per row) and a module takes an input row no
//   faster than in / H.
//
// Back-pressure is not modelled: FIFOs are assumed deep enough (what the
// FIFO sizing rules guarantee), so the timeline is what the simulator
// shows when nothing stalls. It costs O(modules · rows · frames).
#pragma once

#include <cstdint>
#include <vector>

#include "mixtd/arch/Graph.h"

namespace mixtd::arch {

struct RowTimes {
  std::vector<double> first, last;  // per output row (frames × rows), cycles
};

struct RowTimeline {
  std::vector<RowTimes> modules;  // per graph module
  // First word into host_in to the last word out of host_out, frame 0.
  std::int64_t latency = 0;
};

// `frames` frames; frame f enters no earlier than f·`period` cycles
// (0: as fast as the host link allows).
RowTimeline row_timeline(const Graph& g, int frames = 1, double period = 0);

// FIFO sizing (FINN's set_fifo_depths step, done analytically). A producer
// whose output fans out to several consumers moves in lockstep: a beat
// leaves when every consumer's FIFO has room. A consumer takes input only
// as its line buffer frees slots (Timing.h line_buffer_pixels; two pixels
// for streaming blocks), so consumers that walk the frame differently (a
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
