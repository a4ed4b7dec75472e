// The streaming blocks between engines (SPEC "The accelerator"): they move
// words between ports by the strided channel-group convention and, for the
// adders, combine them.
//
//   GroupSplit           1 → g streams: channel c to group c mod g, word c / g
//   GroupMerge           g → 1: the inverse
//   RoundRobinFifoArray  g → g': regroups (lcm(g, g') FIFOs written and read
//                        round-robin; modelled by the same word routing)
//   Fork                 1 → g1 copies (one input group to its g1 engines)
//   GroupAdd             g2 partials → 1: int32 sum + requantiser (per output
//                        channel a + j·g1 of output group a)
//   EltwiseAdd           n inputs → 1: exponent alignment + requantiser
//   Relu                 an unfused ReLU
//
// Timing (arch::stream_cycles): every port moves one beat per cycle, all
// ports in parallel; an output beat leaves kStreamLatency cycles after the
// last input word it needs (plus kRequantPipeline for the adders). The block
// buffers two pixels, so its input runs at most two pixels ahead of its
// output.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "mixtd/numerics/Bfp8.h"
#include "mixtd/sc/BeatFifo.h"

namespace mixtd::sc {

enum class Routing { Split, Merge, Regroup, Fork, GroupAdd, EltwiseAdd, Relu };

struct StreamBlockParams {
  Routing routing = Routing::Fork;
  std::int64_t channels = 1;  // channels of the whole tensor (all groups)
  std::int64_t pixels = 1;    // per frame
  std::int64_t groups_in = 1, groups_out = 1;
  std::int64_t ports_in = 1, ports_out = 1;
  std::int64_t width_in = 1, width_out = 1;  // words per beat per port
  std::int64_t latency = 1;
  // GroupAdd: requantiser per output word of the pixel (channel a + j·g1).
  std::vector<numerics::Requant> requant;
  // EltwiseAdd: input exponents and the requantiser after alignment.
  std::vector<int> in_exps;
  numerics::Requant add_requant;
};

class StreamBlock : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(StreamBlock);
  StreamBlock(sc_core::sc_module_name name, StreamBlockParams params, std::int64_t frames, SimContext& ctx);

  void bind_input(std::int64_t port, BeatFifo* fifo);
  void bind_output(std::int64_t port, std::vector<BeatFifo*> fifos);

  ThreadStats stats;
  const std::vector<InPort>& inputs() const { return in_; }
  const std::vector<OutPort>& outputs() const { return out_; }
  std::int64_t words_in() const;   // per port per pixel
  std::int64_t words_out() const;  // per port per pixel

 private:
  void run();
  StreamBlockParams p_;
  std::int64_t frames_;
  SimContext& ctx_;
  std::vector<InPort> in_;
  std::vector<OutPort> out_;
};

// Global average pooling: reads a whole frame, then emits C/p beats.
class GlobalAvgPool : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(GlobalAvgPool);
  GlobalAvgPool(sc_core::sc_module_name name, std::int64_t channels, std::int64_t pixels, std::int64_t width,
                std::int64_t frames, SimContext& ctx);
  void bind_input(BeatFifo* fifo) { in_ = InPort(fifo, width_, &stats); }
  void bind_output(std::vector<BeatFifo*> fifos) { out_ = OutPort(std::move(fifos), width_, nullptr, &ctx_); }
  ThreadStats stats;
  const InPort& input() const { return in_; }
  const OutPort& output() const { return out_; }

 private:
  void run();
  std::int64_t channels_, pixels_, width_, frames_;
  SimContext& ctx_;
  InPort in_;
  OutPort out_;
};

}  // namespace mixtd::sc
