// The U250's SLR floorplan of a design (issue 22): the pipeline's blocks
// cut into at most four contiguous runs, one per SLR, so that no SLR holds
// more than its share, using the analytical model's per-block resources
// (rtl/DesignResources.h). Contiguous along the graph order, so the streams
// that cross SLRs are few: the cut points.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"

namespace mixtd::hls {

// One SLR's share of the U250 for a kernel: what is left of each SLR
// beside the platform's shell (about 345K LUT, 2,877 DSP, 500 BRAM36,
// 320 URAM; issue 22).
arch::Resources u250_slr_share();
inline constexpr int kU250Slrs = 4;

struct SlrBlock {
  std::string name;                    // graph module or stream
  std::vector<std::string> instances;  // as mixtd_top.sv names them
  arch::Resources resources;
  int slr = 0;
};

struct Floorplan {
  std::vector<SlrBlock> blocks;               // graph order
  std::vector<arch::Resources> used;          // per SLR
  std::vector<std::string> crossing_streams;  // streams whose producer and consumer sit in different SLRs
  int slrs_used() const { return static_cast<int>(used.size()); }
};

// The contiguous cut that minimises the fullest SLR's largest fraction of
// its share (a linear partition, solved exactly). Throws mixtd::Error when
// even the best cut puts an SLR over its share, naming the SLR, the
// resource and the figures.
Floorplan plan_slrs(const arch::Design& d, const arch::Resources& share = u250_slr_share(), int slrs = kU250Slrs);

// Each instance of the plan (blocks, FIFOs, repacks) and its SLR: what
// rtl::TopOptions::slr takes to put register slices on the crossings.
std::map<std::string, int> instance_slrs(const Floorplan& f);

// The Vivado Tcl that places each block's instances in its SLR's pblock
// (run before placement: link.cfg's [vivado] prop), with `hierarchy` the
// kernel core's cell path pattern.
std::string floorplan_tcl(const Floorplan& f, const std::string& hierarchy = "*/u_core");

}  // namespace mixtd::hls
