// Simulating a Design: the SystemC pipeline of models/sc assembled from
// arch::build_graph(), weights preloaded over TLM-2.0, B frames streamed
// through it (docs/simulation.md).
//
// SystemC elaborates once per process: simulate() may be called once per
// process; simulate_isolated() runs it in a child process (sim/WorkerPool.h)
// and may be called any number of times, from a process that has not
// elaborated SystemC itself.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/sim/Functional.h"

namespace mixtd::sim {

// Bounds on what a user may ask of one simulation (issue 24): frames streamed
// through and cycles simulated. Memory is bounded separately, from the design
// (simulate() refuses a run whose estimated memory exceeds half the RAM).
inline constexpr std::int64_t kMaxFrames = 1000000;
inline constexpr std::int64_t kMaxCycles = 1000000000000;  // 10^12: days of simulator time

struct SimOptions {
  std::int64_t frames = 3;        // B
  bool functional = false;        // carry int8 data and compare with the golden executor
  std::string trace_path;         // VCD of every stream's occupancy/valid/ready ("" = none)
  std::int64_t cycle_limit = -1;  // < 0: 50 × the analytical latency of B frames + 10^6
  std::int64_t quantum = 20000;   // temporal decoupling, cycles (0 with a trace)
  double stall_probability = 0;   // random host-side gaps / back-pressure per beat
  std::uint64_t seed = 1;         // input frames, calibration batch, stalls
  bool record_streams = false;    // keep every FIFO's beats (SimResult::streams)
  FunctionalData data;            // functional: calibration and input images (empty: seeded)
  // Called every few seconds of wall time during a long run (frames out so
  // far, the furthest cycle reached); empty = silent.
  std::function<void(std::int64_t frames_done, std::int64_t cycle)> progress;
};

// Every beat pushed into one physical FIFO: its words (functional runs) and
// cycle. Named as the FIFO ("<stream>" or "<stream>[e]").
struct StreamRecord {
  std::string name;
  std::int64_t width = 1;
  std::vector<std::int8_t> words;
  std::vector<std::int64_t> cycles;
};

struct ModuleStats {
  std::string name, kind, layer;
  std::int64_t count = 1;  // instances; the figures are the busiest instance's
  std::int64_t busy = 0, stall_in = 0, stall_out = 0, idle = 0;
  std::int64_t analytical_interval = 0;  // per frame, from the timing rules
};

struct FifoStats {
  std::string name;
  std::int64_t count = 1, depth = 0, width = 0;
  std::int64_t high_water = 0;  // largest over its `count` FIFOs
  bool skip = false;
};

struct SimResult {
  std::string design;
  bool completed = false;
  std::string error;                 // deadlock or cycle-limit message when !completed
  std::vector<std::string> blocked;  // the blocks and FIFOs a deadlock left waiting
  std::int64_t frames = 0;
  std::vector<std::int64_t> latency;  // per frame: first word in → last word out, cycles
  std::int64_t interval = 0;          // steady state: between the last two frames' last words
  double clock_mhz = 200;
  std::int64_t preload_cycles = 0;
  std::int64_t cycles = 0;             // simulated, preload excluded
  std::int64_t first_input_cycle = 0;  // the first input beat (after the preload)
  std::vector<StreamRecord> streams;   // record_streams: per physical FIFO, in graph order
  double fps_batch1() const;
  double fps_peak() const;
  // The analytical model on the same design.
  std::int64_t analytical_interval = 0, analytical_latency = 0;
  std::vector<ModuleStats> modules;
  std::vector<FifoStats> fifos;
  std::string bottleneck;  // the busiest module
  // --functional
  bool functional = false, outputs_match = false;
  std::string mismatch;  // the first differing word
  // Per frame, the top-1 class of the simulated and of the golden outputs
  // (a network with a vector output), and the data set's labels if given.
  std::vector<std::int64_t> top1, golden_top1, labels;
  // Simulator speed.
  double wall_seconds = 0;
  std::int64_t beats = 0;  // beats moved through all streams
};

SimResult simulate(const arch::Design& d, const SimOptions& options = {});
// Each design in its own child process, `jobs` at once (0 = cores). A
// design whose child fails, crashes or times out comes back with
// completed = false and the reason in `error`; the others are unaffected.
std::vector<SimResult> simulate_many(const std::vector<arch::Design>& designs, const SimOptions& options = {},
                                     int jobs = 0, double timeout_s = 0);
SimResult simulate_isolated(const arch::Design& d, const SimOptions& options = {}, double timeout_s = 0);

nlohmann::json to_json(const SimResult& r);

// A design as a job's payload for another process (sim/JobBackend.h): its
// design.yaml with the network and device files as absolute paths, and the
// names the receiver checks it read. design_from_job rebuilds it (throws
// mixtd::Error if the files it finds name another network or device).
nlohmann::json design_to_job(const arch::Design& d);
arch::Design design_from_job(const nlohmann::json& j);
SimResult result_from_json(const nlohmann::json& j);

}  // namespace mixtd::sim
