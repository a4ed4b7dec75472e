// The U250 kernel's protocol, simulated (issue 22): the generated kernel top
// (KernelInterface.h) Verilated with a test bench that behaves as XRT and
// the data movers do — it writes the argument over AXI4-Lite, sets
// ap_start, streams frames in and takes them out with random gaps and
// back-pressure, polls ap_done — through three kinds of run without a reset
// in between: a run of `frames_a` frames, a run of `frames_b`, and three
// one-frame runs under auto_restart. Every ap_ctrl_hs bit is checked
// against UG1393 along the way, the outputs of all runs against the golden
// executor, TLAST against the frame boundaries.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/sim/Functional.h"

namespace mixtd::hls {

struct KernelSimOptions {
  std::int64_t frames_a = 2, frames_b = 1;  // the first two runs (then 3 auto-restarted one-frame runs)
  std::uint64_t seed = 1;                   // calibration, frames, stalls (as rtl::CosimOptions)
  double stall_probability = 0;             // input gaps and output back-pressure per beat
  std::filesystem::path cache;              // "" = ~/.cache/mixtd/kernel-sim
  int build_jobs = 2;
  sim::FunctionalData data;
  std::map<std::string, int> slr;  // rtl::TopOptions::slr: register slices where streams cross SLRs
};

struct ProtocolCheck {
  std::string name;
  bool ok = false;
  std::string detail;  // what was read, when it failed
};

struct KernelSimResult {
  bool built = false;
  std::int64_t frames = 0;  // frames_a + frames_b + 3
  std::vector<ProtocolCheck> checks;
  bool outputs_match = false;
  std::string mismatch;
  std::vector<std::int64_t> latency;  // per frame, first input beat to last output beat
  std::int64_t cycles = 0;
  bool all_ok() const;
};

KernelSimResult simulate_kernel(const arch::Design& d, const KernelSimOptions& o);

}  // namespace mixtd::hls
