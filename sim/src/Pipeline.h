// Assembles the SystemC blocks of a Design: one block per instance of every
// arch::Module, one BeatFifo per physical stream (Graph.h: a Module stands
// for `count` instances, a Stream for `count` FIFOs).
//
// Physical stream e of a stream with `count` FIFOs, from a producer of cp
// instances to a consumer of cc instances:
//   producer instance e mod cp, output port e div cp   (a fork's port a of
//                                                       instance b feeds
//                                                       chunk a·g2 + b)
//   consumer instance e div k, input port base + e mod k, k = count / cc
//                                                      (a group add's port b
//                                                       of instance a reads
//                                                       chunk a·g2 + b)
// which makes stage instance i chunk i of numerics::QLayer::chunks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mixtd/arch/Graph.h"
#include "mixtd/numerics/Quantized.h"
#include "mixtd/sc/Host.h"
#include "mixtd/sc/Stage.h"
#include "mixtd/sc/StreamBlocks.h"

namespace mixtd::sim {

struct BlockInstance {
  sc::Stage* stage = nullptr;
  sc::Pool* pool = nullptr;
  sc::StreamBlock* block = nullptr;
  sc::GlobalAvgPool* gap = nullptr;
  sc::HostIn* host_in = nullptr;
  sc::HostOut* host_out = nullptr;
  const sc::ThreadStats* stats = nullptr;  // the thread whose busy cycles are the block's
};

class Pipeline {
 public:
  // q: the quantised network in functional mode, null for timing only.
  Pipeline(const arch::Design& d, const arch::Graph& g, const numerics::QNetwork* q, std::int64_t frames,
           const sc::HostStalls& stalls, sc::SimContext& ctx);
  ~Pipeline();

  const arch::Graph& graph() const { return g_; }
  std::vector<std::vector<BlockInstance>> blocks;                 // per module, per instance
  std::vector<std::vector<std::unique_ptr<sc::BeatFifo>>> fifos;  // per stream
  sc::HostMemory* memory = nullptr;
  sc::HostIn* host_in = nullptr;
  sc::HostOut* host_out = nullptr;
  sc::WeightLoader* loader = nullptr;
  std::int64_t input_base = 0, result_base = 0;  // byte addresses in HostMemory

  // What a deadlock left waiting: full and empty FIFOs with the blocks at
  // either end, line buffers waiting for room.
  std::vector<std::string> blocked() const;

 private:
  void build_blocks(const numerics::QNetwork* q, std::int64_t frames, const sc::HostStalls& stalls);
  void build_streams();
  const arch::Design& d_;
  const arch::Graph& g_;
  sc::SimContext& ctx_;
  std::vector<std::unique_ptr<sc_core::sc_module>> owned_;
};

}  // namespace mixtd::sim
