// Streams: bounded FIFOs of beats with valid/ready semantics (SPEC "The
// accelerator": p words per beat, b-row-col-channel order), and the two
// port adaptors every block uses.
//
// A beat pushed at cycle t may be popped at cycle t (the FIFO is
// fall-through) or later; a slot freed by a pop at cycle t takes the next
// push at cycle t + 1 (ready is registered). A FIFO of depth d therefore
// sustains one beat per cycle for any d ≥ 1, and back-pressure reaches the
// producer exactly when d beats are waiting.
//
// The kernel is only involved when a FIFO is really full or empty: then the
// calling SC_THREAD waits on the FIFO's event (see Kernel.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "mixtd/sc/Kernel.h"

namespace mixtd::sc {

class BeatFifo {
 public:
  BeatFifo(std::string name, std::int64_t depth, std::int64_t width, SimContext& ctx);
  ~BeatFifo();

  const std::string& name() const { return name_; }
  std::int64_t depth() const { return depth_; }
  std::int64_t width() const { return width_; }

  // Producer side. wait_slot() blocks until a slot is free and returns the
  // earliest cycle the next beat may be written (0, or one after the cycle
  // its slot's previous beat was popped); push() writes it at t ≥ that.
  Cycle wait_slot();
  void push(Cycle t, const std::int8_t* words);  // words: width() of them, or null (timing only)

  // Consumer side. wait_beats(n) blocks until n beats are present; the i-th
  // from the front is then readable; pop() removes the front one at cycle t.
  void wait_beats(std::int64_t n);
  Cycle time_at(std::int64_t i) const { return push_time_[slot(head_ + i)]; }
  const std::int8_t* data_at(std::int64_t i) const;
  void pop(Cycle t);

  // Statistics. The high-water mark is exact in simulated time: the largest
  // number of beats present at the end of any cycle (of those simulated so
  // far, when the run has ended: not while threads still run).
  std::int64_t pushed() const { return tail_; }
  std::int64_t popped() const { return head_; }
  std::int64_t size() const { return tail_ - head_; }
  std::int64_t high_water() const;
  bool writer_waiting() const { return writer_waiting_; }
  bool reader_waiting() const { return reader_waiting_; }

  // Names of the blocks at either end (for deadlock reports).
  std::string producer, consumer;
  // When set, every pushed beat's words and cycle are kept (co-simulation
  // compares them stream by stream with the RTL's).
  bool record = false;
  std::vector<std::int8_t> recorded;
  std::vector<Cycle> recorded_at;

  // VCD: occupancy, valid (not empty) and ready (not full), written at each
  // handshake. Only meaningful with a quantum of 0.
  void trace(sc_core::sc_trace_file* tf);

 private:
  std::size_t slot(std::int64_t k) const { return static_cast<std::size_t>(k % depth_); }
  void update_trace();
  // Beats present at the end of the cycle beat k was pushed, by the pops
  // made so far (k not yet popped, every pop up to its cycle made).
  std::int64_t occupancy_at_push(std::int64_t k) const;

  std::string name_;
  std::int64_t depth_, width_;
  SimContext& ctx_;
  std::vector<Cycle> push_time_, pop_time_;  // per slot
  std::vector<std::int8_t> data_;
  std::int64_t head_ = 0, tail_ = 0;  // beats popped / pushed so far
  std::int64_t first_pending_ = 0;    // pushes whose occupancy is not yet known
  std::int64_t high_water_ = 0;
  bool writer_waiting_ = false, reader_waiting_ = false;
  sc_core::sc_event pushed_, popped_;
  struct Trace;
  std::unique_ptr<Trace> trace_;
};

// Where a block's time goes, per thread (docs/simulation.md).
struct ThreadStats {
  Cycle busy = 0;               // cycles doing work
  Cycle stall_in = 0;           // waiting for input data
  Cycle stall_out = 0;          // waiting for a downstream slot (back-pressure)
  Cycle first = -1, last = -1;  // first and last cycle of activity
  void active(Cycle t) {
    if (first < 0) first = t;
    last = std::max(last, t);
  }
  // Adds the wait [from, to) to `counter`, less what an earlier wait of this
  // thread already covered: a block waiting on several ports at once (an
  // add, a merge) stalls once, not once per port.
  void stall(Cycle& counter, Cycle from, Cycle to) {
    from = std::max(from, covered);
    if (to > from) counter += to - from;
    covered = std::max(covered, to);
  }
  Cycle covered = -1;
};

// A block's input: reads `width` words per beat from a FIFO of any width
// (re-packing at no cost, Timing.h).
class InPort {
 public:
  InPort() = default;
  InPort(BeatFifo* fifo, std::int64_t width, ThreadStats* stats) : fifo_(fifo), width_(width), stats_(stats) {}

  // The next beat, at cycle max(earliest, last + 1, arrival of its words);
  // copies its words to `out` when `out` is not null.
  Cycle read(Cycle earliest, std::int8_t* out);
  std::int64_t width() const { return width_; }
  Cycle last() const { return last_; }
  BeatFifo* fifo() const { return fifo_; }

 private:
  BeatFifo* fifo_ = nullptr;
  std::int64_t width_ = 1, offset_ = 0;  // words already taken from the front beat
  Cycle last_ = -1, last_pop_ = -1;
  ThreadStats* stats_ = nullptr;
};

// A block's output: one beat to each of its FIFOs (a fan-out waits until all
// have a slot, like a valid that needs every ready).
class OutPort {
 public:
  OutPort() = default;
  OutPort(std::vector<BeatFifo*> fifos, std::int64_t width, ThreadStats* stats, SimContext* ctx)
      : fifos_(std::move(fifos)), width_(width), stats_(stats), ctx_(ctx) {}

  // Writes at cycle max(ready, last + 1, every FIFO's free slot); returns it.
  Cycle write(Cycle ready, const std::int8_t* words);
  std::int64_t width() const { return width_; }
  Cycle last() const { return last_; }
  const std::vector<BeatFifo*>& fifos() const { return fifos_; }

 private:
  std::vector<BeatFifo*> fifos_;
  std::int64_t width_ = 1;
  Cycle last_ = -1;
  ThreadStats* stats_ = nullptr;
  SimContext* ctx_ = nullptr;
};

}  // namespace mixtd::sc
