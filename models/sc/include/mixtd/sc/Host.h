// The host side (SPEC "The accelerator"): frames come from DDR and results
// go back over TLM-2.0, with the device's host bandwidth; weights are
// preloaded into every engine's weight memory over b_transport before
// inference starts.
//
//   HostMemory    TLM-2.0 target: DDR holding the input frames and the
//                 results; a transfer of n bytes costs ⌈n / bytes_per_cycle⌉
//                 cycles plus a fixed access latency (annotated delay).
//   HostIn        TLM-2.0 initiator: reads frames in bursts (double-buffered
//                 DMA) and streams them, width words per beat; optional
//                 random gaps (seeded) to test latency insensitivity.
//   HostOut       takes the network's output stream at the host bandwidth,
//                 writes each result frame back to HostMemory; optional
//                 random back-pressure. Records per-frame first/last cycles.
//   WeightLoader  TLM-2.0 initiator bound to every Stage's weights socket.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <tlm>
#include <vector>

#include "mixtd/sc/BeatFifo.h"
#include "mixtd/support/Rng.h"

namespace mixtd::sc {

class HostMemory : public sc_core::sc_module {
 public:
  HostMemory(sc_core::sc_module_name name, std::int64_t bytes, double bytes_per_cycle, std::int64_t latency,
             SimContext& ctx);
  tlm_utils::multi_passthrough_target_socket<HostMemory> socket;  // HostIn and HostOut
  std::vector<std::int8_t> bytes;

 private:
  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  double bytes_per_cycle_;
  std::int64_t latency_;
  SimContext& ctx_;
};

struct HostStalls {
  double probability = 0;  // per beat: chance of a random gap / not-ready
  std::int64_t max_cycles = 8;
  std::uint64_t seed = 1;
};

class WeightLoader : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WeightLoader);
  WeightLoader(sc_core::sc_module_name name, SimContext& ctx);
  tlm_utils::multi_passthrough_initiator_socket<WeightLoader> socket;
  // One image per bound target, in binding order (empty in timing-only mode:
  // the transfers still happen and cost their cycles).
  std::vector<std::vector<std::int8_t>> images;
  std::vector<std::int64_t> sizes;
  Cycle done_cycle = -1;  // when the last weight is in
  sc_core::sc_event done;

 private:
  void run();
  SimContext& ctx_;
};

class HostIn : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(HostIn);
  HostIn(sc_core::sc_module_name name, std::int64_t frame_words, std::int64_t width, std::int64_t frames,
         const HostStalls& stalls, WeightLoader* loader, SimContext& ctx);
  tlm_utils::simple_initiator_socket<HostIn> socket;
  void bind_output(std::vector<BeatFifo*> fifos) { out_ = OutPort(std::move(fifos), width_, nullptr, &ctx_); }
  std::vector<Cycle> first;  // per frame: cycle of its first beat
  ThreadStats stats;
  const OutPort& output() const { return out_; }

 private:
  void run();
  std::int64_t frame_words_, width_, frames_;
  HostStalls stalls_;
  WeightLoader* loader_;
  SimContext& ctx_;
  OutPort out_;
};

class HostOut : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(HostOut);
  HostOut(sc_core::sc_module_name name, std::int64_t frame_words, std::int64_t bus_words, std::int64_t frames,
          std::int64_t result_base, const HostStalls& stalls, SimContext& ctx);
  tlm_utils::simple_initiator_socket<HostOut> socket;
  void bind_input(BeatFifo* fifo) { in_ = InPort(fifo, bus_words_, &stats); }
  std::vector<Cycle> first, last;  // per frame
  std::int64_t frames_done = 0;
  ThreadStats stats;
  const InPort& input() const { return in_; }

 private:
  void run();
  std::int64_t frame_words_, bus_words_, frames_, result_base_;
  HostStalls stalls_;
  SimContext& ctx_;
  InPort in_;
};

}  // namespace mixtd::sc
