// The analytical performance and resource model (SPEC "Performance
// semantics"): interval = the largest module interval; latency(B) = fill +
// B·interval, fill the longest first-in-to-first-out path (skip FIFOs are
// sized by the arrival curves of Timing.h, docs/simulation.md); FPS(batch 1) =
// f_clk / latency(1); peak FPS = f_clk / interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Graph.h"

namespace mixtd::arch {

struct LayerReport {
  std::string layer;
  std::string kind;  // conv2d, linear, add, maxpool, ...
  td::Tau tau;
  std::vector<Psi> psi;
  std::int64_t interval = 0;  // the slowest of its modules
  std::string slowest_module;
  bool bottleneck = false;
  Resources resources;  // its modules and their input FIFOs, all instances
  double weight_bits = 0;
};

struct Report {
  Graph graph;
  std::vector<std::int64_t> fill;  // per module: longest fill at its output
  std::int64_t interval = 0;
  std::int64_t fill_cycles = 0;
  int bottleneck = -1;  // module index
  double clock_mhz = 200;
  Resources total;
  Resources available;  // the device
  Resources budget;     // device · budget fraction
  double weight_mbit = 0;
  std::vector<LayerReport> layers;
  // FIFOs behind fan-outs shallower than the design needs to run at its
  // interval (RowTimeline.h): the model's interval assumes them sized.
  std::vector<std::string> warnings;
  // Per stream, the depth its fan-out needs to run at the interval
  // (fan_out_fifo_depths; 0 where that asks nothing): what size_fifos() sets.
  std::vector<std::int64_t> fifo_need;

  std::int64_t latency_cycles(std::int64_t batch) const { return fill_cycles + batch * interval; }
  double latency_ms(std::int64_t batch) const { return static_cast<double>(latency_cycles(batch)) / (clock_mhz * 1e3); }
  double fps_batch1() const { return clock_mhz * 1e6 / static_cast<double>(latency_cycles(1)); }
  double fps_peak() const { return clock_mhz * 1e6 / static_cast<double>(interval); }
  bool fits() const { return total.fits(budget); }
};

// Validates the design and evaluates it.
Report analyse(const Design& d);

// Sizes the FIFOs behind fan-outs (RowTimeline.h fan_out_fifo_depths) into
// d.fifo_depths, never lowering a depth the design already has. Returns how
// many it raised.
int size_fifos(Design& d);
// The same from `r`, which must be analyse(d), and brings r up to date:
// afterwards it is analyse(d) of the sized design, without a second
// evaluation (the depths change resources and warnings, no cycle).
int size_fifos(Design& d, Report& r);

}  // namespace mixtd::arch
