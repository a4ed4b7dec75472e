// BeatFifo's high-water mark against the occupancy worked out from every
// push and pop cycle, when the consumer's thread runs ahead of its
// producer's in the simulator's order (a slow consumer is ahead in time:
// it pops at later cycles before the producer has made its next push) and
// when it runs behind. One elaboration per process (SystemC): both
// scenarios run side by side in one sc_start().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "mixtd/sc/BeatFifo.h"

namespace {

using mixtd::sc::BeatFifo;
using mixtd::sc::Cycle;

// Pushes `beats` beats, one every `every` cycles from cycle 0, as slots
// allow. `yield`: after each push, let the kernel run the other threads
// first (as a producer held back by another of its outputs is), so that its
// consumer pops every beat, at its own later cycles, before the next push.
struct Producer : sc_core::sc_module {
  SC_HAS_PROCESS(Producer);
  Producer(sc_core::sc_module_name n, BeatFifo& f, int beats, Cycle every, bool yield)
      : sc_module(n), fifo(f), beats_(beats), every_(every), yield_(yield) {
    SC_THREAD(run);
  }
  void run() {
    Cycle last = -1;
    for (int k = 0; k < beats_; ++k) {
      const Cycle slot = fifo.wait_slot();
      last = std::max({slot, last + 1, k * every_});
      fifo.push(last, nullptr);
      if (yield_) wait(sc_core::sc_time(1, sc_core::SC_NS));
    }
  }
  BeatFifo& fifo;
  int beats_;
  Cycle every_;
  bool yield_;
};

// Pops every beat, no sooner than `every` cycles after the last pop;
// records the pop cycles.
struct Consumer : sc_core::sc_module {
  SC_HAS_PROCESS(Consumer);
  Consumer(sc_core::sc_module_name n, BeatFifo& f, int beats, Cycle every)
      : sc_module(n), fifo(f), beats_(beats), every_(every) {
    SC_THREAD(run);
  }
  void run() {
    Cycle last = -every_;
    for (int k = 0; k < beats_; ++k) {
      fifo.wait_beats(1);
      last = std::max(fifo.time_at(0), last + every_);
      fifo.pop(last);
      pops.push_back(last);
    }
  }
  BeatFifo& fifo;
  int beats_;
  Cycle every_;
  std::vector<Cycle> pops;
};

// The most beats present at the end of any cycle: pushes up to a push's
// cycle less the pops up to it.
std::int64_t exact_high_water(const std::vector<Cycle>& pushes, const std::vector<Cycle>& pops) {
  std::int64_t best = 0;
  std::size_t popped = 0;
  for (std::size_t k = 0; k < pushes.size(); ++k) {
    if (k + 1 < pushes.size() && pushes[k + 1] == pushes[k]) continue;
    while (popped < pops.size() && pops[popped] <= pushes[k]) ++popped;
    best = std::max(best, static_cast<std::int64_t>(k + 1) - static_cast<std::int64_t>(popped));
  }
  return best;
}

TEST(BeatFifo, HighWaterIsTheOccupancyInSimulatedTimeWhicheverThreadRunsAhead) {
  mixtd::sc::SimContext ctx;
  ctx.data = false;
  constexpr int kBeats = 200;
  // A consumer at one beat per 2 cycles behind a producer at one a cycle:
  // the FIFO fills up in simulated time (8 beats from cycle 15 on), though
  // in the simulator's order the consumer pops each beat (beat k at cycle
  // 2k) before the next is pushed: at most one beat is ever present there.
  BeatFifo slow_fifo("slow", 8, 1, ctx);
  slow_fifo.record = true;
  Producer fast_producer("fast_producer", slow_fifo, kBeats, 1, true);
  Consumer slow_consumer("slow_consumer", slow_fifo, kBeats, 2);
  // A consumer at one a cycle behind a producer at one per 3: at most one
  // beat waits.
  BeatFifo fast_fifo("fast", 8, 1, ctx);
  fast_fifo.record = true;
  Producer slow_producer("slow_producer", fast_fifo, kBeats, 3, false);
  Consumer fast_consumer("fast_consumer", fast_fifo, kBeats, 1);
  // Deeper than the burst: 40 beats at one a cycle into a consumer at one
  // per 3 fill it to 26 of 64 (40 pushed by cycle 39, 14 popped; in the
  // simulator's order, to 1).
  BeatFifo deep_fifo("deep", 64, 1, ctx);
  deep_fifo.record = true;
  Producer burst_producer("burst_producer", deep_fifo, 40, 1, true);
  Consumer slower_consumer("slower_consumer", deep_fifo, 40, 3);
  sc_core::sc_start();

  ASSERT_EQ(slow_consumer.pops.size(), static_cast<std::size_t>(kBeats));
  ASSERT_EQ(fast_consumer.pops.size(), static_cast<std::size_t>(kBeats));
  EXPECT_EQ(exact_high_water(slow_fifo.recorded_at, slow_consumer.pops), 8);
  EXPECT_EQ(slow_fifo.high_water(), 8);
  EXPECT_EQ(exact_high_water(fast_fifo.recorded_at, fast_consumer.pops), 0);  // popped in the cycle it came
  EXPECT_EQ(fast_fifo.high_water(), 0);
  ASSERT_EQ(slower_consumer.pops.size(), 40u);
  EXPECT_EQ(exact_high_water(deep_fifo.recorded_at, slower_consumer.pops), 26);
  EXPECT_EQ(deep_fifo.high_water(), 26);
}

}  // namespace
