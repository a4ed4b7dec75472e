// One SystemC block on its own, for the RTL ladder's per-block rung
// (docs/rtl.md): the block between a source and a sink that follow given
// schedules, with the same stream FIFOs (depth 2) on either side as the RTL
// test bench. The RTL of the block, driven by the same schedules, must give
// the same words and (within the stated tolerance) the same cycles.
//
// Schedules: input beat k is offered from cycle offer[k] on (and held until
// taken); output beat k may be taken from cycle take[k] on. An empty
// schedule means "as early as possible".
//
// Each run is a SystemC elaboration, so it runs in a child process
// (sim/WorkerPool.h): call it from a process that has not elaborated SystemC.
#pragma once

#include <cstdint>
#include <vector>

#include "mixtd/numerics/Bfp8.h"

namespace mixtd::sim {

struct WindowBlockSpec {
  // Input tensor per frame and window (as sc::WindowShape).
  std::int64_t c = 1, h = 1, w = 1, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  enum class Kind { Dense, Depthwise, MaxPool, AvgPool } kind = Kind::Dense;
  std::int64_t out_ch = 1, p_in = 1, p_out = 1, fine = 1;  // pooling: p = p_in
  std::int64_t groups = 1;  // dense: conv groups (p_in | c/groups, p_out | out_ch/groups)
  bool count_include_pad = false;
  std::vector<std::int8_t> weight;         // [out, in/groups (1 depthwise), kh, kw]
  std::vector<numerics::Requant> requant;  // per output channel
  std::int64_t frames = 1;
  std::vector<std::int8_t> input;  // frames × h × w × c, stream order
  std::vector<std::int64_t> offer, take;
  std::int64_t fifo_depth = 2;
};

struct BlockRun {
  std::vector<std::int8_t> output;       // stream order
  std::vector<std::int64_t> out_cycles;  // per output beat: the cycle it was taken
  std::vector<std::int64_t> in_cycles;   // per input beat: the cycle it was taken
  std::int64_t out_width = 1;
};

// The SystemC Stage (or Pool) on `spec`, in a child process.
BlockRun run_window_block(const WindowBlockSpec& spec);

// The capacity (pixels) the line buffer of `spec` has (arch::line_buffer_pixels
// with the SystemC LineBuffer's bounds): what the RTL's CAP must be.
std::int64_t line_buffer_capacity(const WindowBlockSpec& spec);

// ---- streaming blocks ---------------------------------------------------------

// One sc::StreamBlock (or sc::GlobalAvgPool) with a source per input port
// and a sink per output port, depth-`fifo_depth` BeatFifos between. The
// parameters are those sim/Pipeline.cpp gives the block (channels: of the
// whole tensor, all groups; latency: arch::kStreamLatency, plus
// arch::kRequantPipeline for the adders — set here from `kind`).
// GlobalAvgPool: one port each side, width_in = width_out.
struct StreamBlockSpec {
  enum class Kind { Split, Merge, Regroup, Fork, GroupAdd, EltwiseAdd, Relu, GlobalAvgPool } kind = Kind::Fork;
  std::int64_t channels = 1, pixels = 1;  // pixels per frame
  std::int64_t groups_in = 1, groups_out = 1, ports_in = 1, ports_out = 1;
  std::int64_t width_in = 1, width_out = 1;  // words per beat the block reads / writes per port
  // Words per beat of the input FIFOs (0: width_in). Another width makes the
  // block's sc::InPort re-pack (what mixtd_repack does in the RTL).
  std::int64_t fifo_width_in = 0;
  std::vector<numerics::Requant> requant;  // GroupAdd: per output word of a pixel
  std::vector<int> in_exps;                // EltwiseAdd: per input port
  numerics::Requant add_requant;           // EltwiseAdd
  std::int64_t frames = 1;
  std::vector<std::vector<std::int8_t>> input;  // per input port, the whole run in stream order
  // Per port (an empty outer or inner vector: as early as possible): input
  // port q's FIFO beat k is offered from offer[q][k] on; output port k's beat
  // n may be taken from take[k][n] on.
  std::vector<std::vector<std::int64_t>> offer, take;
  std::int64_t fifo_depth = 2;
};

struct StreamBlockRun {
  std::vector<std::vector<std::int8_t>> output;       // per output port, stream order
  std::vector<std::vector<std::int64_t>> out_cycles;  // per output port and beat: the cycle it was taken
  std::vector<std::vector<std::int64_t>> in_cycles;   // per input port and FIFO beat: the cycle it was pushed
};

// The SystemC block on `spec`, in a child process.
StreamBlockRun run_stream_block(const StreamBlockSpec& spec);

}  // namespace mixtd::sim
