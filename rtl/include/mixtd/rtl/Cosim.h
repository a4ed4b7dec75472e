// Co-simulation of a Design's generated RTL (issue 8, docs/rtl.md): the top
// level from rtl::generate, Verilated with a generated C++ driver, fed the
// frames `mixtd simulate --functional` uses; its outputs compared word for
// word with the golden executor (which the SystemC model matches), its
// cycles with the SystemC model's.
//
// The Verilated model is built once per generated design: the build sits in
// a cache directory named by the hash of the generated files, so a second
// run of the same design (and seed) does not rebuild.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/sim/Functional.h"

namespace mixtd::rtl {

struct CosimOptions {
  std::int64_t frames = 2;
  std::uint64_t seed = 1;        // calibration, input frames, stalls (as sim::SimOptions)
  double stall_probability = 0;  // random input gaps and output back-pressure, per beat
  std::filesystem::path cache;   // "" = $XDG_CACHE_HOME/mixtd/cosim or ~/.cache/mixtd/cosim
  int build_jobs = 2;            // parallel compiles of the Verilated model
  std::string vcd;               // on a mismatch: a VCD of the cycles around it ("" = none)
  bool compare_systemc = true;   // also run the SystemC model for its cycles
  sim::FunctionalData data;      // calibration and input images (empty: seeded, as sim::SimOptions)
  // A deliberate bug, to show the checks catch one: "requant-shift" adds 1
  // to every shift of the first stage's requantiser image ("" = none).
  std::string fault;
};

struct CosimResult {
  std::string design;
  std::string build_dir;
  bool built = false;  // false: the cached model was used
  double build_seconds = 0, run_seconds = 0;
  std::int64_t frames = 0;
  std::int64_t cycles = 0;            // first input beat to last output beat
  std::vector<std::int64_t> latency;  // per frame: first word in → last word out
  std::int64_t interval = 0;          // between the last two frames' last words (0 for one frame)
  std::int64_t words = 0;             // output words compared
  bool outputs_match = false;
  std::string mismatch;  // the first differing word
  // Per frame, the top-1 class of the RTL's and the golden executor's
  // outputs (a network with a vector output), and the labels if given.
  std::vector<std::int64_t> top1, golden_top1, labels;
  std::string vcd;  // written, if asked for and there was a mismatch
  // SystemC on the same design, frames and seed (compare_systemc).
  bool systemc = false;
  std::vector<std::int64_t> sc_latency;
  std::int64_t sc_interval = 0;
  bool sc_outputs_match = false;
  // Stream by stream (every FIFO's words, graph order) and block by block
  // (the cycle of each block's last output beat from the first input beat).
  std::int64_t streams_compared = 0, blocks_compared = 0, blocks_outside_tolerance = 0;
  std::string first_bad_stream;  // "" = every stream carries SystemC's words
  std::string block_mismatch;    // the first wrong block and word
  std::string worst_block;       // largest |RTL − SystemC| cycle difference
  std::int64_t worst_block_diff = 0, worst_block_cycles = 0;
  double cycles_per_second() const { return run_seconds > 0 ? static_cast<double>(cycles) / run_seconds : 0; }
};

CosimResult cosimulate(const arch::Design& d, const CosimOptions& o = {});

nlohmann::json to_json(const CosimResult& r);

// The tools co-simulation needs, or a mixtd::Error naming the Debian package
// that provides the missing one.
void require_tool(const std::string& program, const std::string& package);

}  // namespace mixtd::rtl
