// First rung of the RTL ladder (issue 8): single blocks of rtl/lib,
// Verilated, against the C++ definitions they must match.
//   mixtd_requantise  — numerics::requantize bit for bit;
//   mixtd_stream_fifo — the timing rules of sc::BeatFifo (fall-through,
//                       registered ready), cycle for cycle, under random
//                       valid gaps and back-pressure, with a scoreboard.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "Vmixtd_requantise.h"
#include "Vmixtd_stream_fifo_d1.h"
#include "Vmixtd_stream_fifo_d3.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/support/Rng.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;

std::int8_t rtl_requantise(Vmixtd_requantise& m, std::int32_t acc, std::int32_t bias, int shift, bool relu) {
  m.acc = static_cast<std::uint32_t>(acc);
  m.bias = static_cast<std::uint32_t>(bias);
  m.shift = static_cast<std::uint8_t>(shift) & 0x7f;
  m.relu = relu;
  m.eval();
  return static_cast<std::int8_t>(m.q);
}

TEST(RtlRequantise, EqualsNumericsRequantizeBitForBit) {
  auto ctx = std::make_unique<VerilatedContext>();
  Vmixtd_requantise m(ctx.get());
  mixtd::Rng rng(1);
  const std::int32_t extremes[] = {0, 1, -1, 127, -127, 128, -128, 255, -256, INT32_MAX, INT32_MIN, 1 << 30};
  std::int64_t checked = 0;
  for (int shift = -40; shift <= 63; ++shift)
    for (std::int32_t acc : extremes)
      for (std::int32_t bias : extremes)
        for (bool relu : {false, true}) {
          const nm::Requant r{bias, shift, relu};
          ASSERT_EQ(rtl_requantise(m, acc, bias, shift, relu), nm::requantize(acc, r))
              << "acc " << acc << " bias " << bias << " shift " << shift << " relu " << relu;
          ++checked;
        }
  for (int i = 0; i < 200000; ++i) {
    // Accumulators of every magnitude, ties (x.5 after the shift) included.
    const int bits = static_cast<int>(rng.below(32));
    const auto acc = static_cast<std::int32_t>(static_cast<std::int64_t>(rng.next_u64() >> (64 - bits - 1)) -
                                               (std::int64_t{1} << bits));
    const auto bias = static_cast<std::int32_t>(static_cast<std::int64_t>(rng.below(1 << 16)) - (1 << 15));
    const int shift = static_cast<int>(rng.below(2 * nm::kMaxShift + 1)) - nm::kMaxShift;
    const bool relu = rng.below(2) == 1;
    ASSERT_EQ(rtl_requantise(m, acc, bias, shift, relu), nm::requantize(acc, nm::Requant{bias, shift, relu}))
        << "acc " << acc << " bias " << bias << " shift " << shift << " relu " << relu;
    ++checked;
  }
  EXPECT_GT(checked, 200000);
}

// sc::BeatFifo's rules, stepped a cycle at a time.
struct FifoRules {
  int depth;
  std::deque<std::uint32_t> q;
  bool in_ready() const { return static_cast<int>(q.size()) < depth; }
  bool out_valid(bool in_valid) const { return !q.empty() || in_valid; }
  std::uint32_t out_data(std::uint32_t in) const { return q.empty() ? in : q.front(); }
  void step(bool push, bool pop, std::uint32_t in) {
    if (push) q.push_back(in);
    if (pop) q.pop_front();
  }
};

template <typename Model>
void check_fifo(int depth, double in_rate, double out_rate, std::uint64_t seed) {
  auto ctx = std::make_unique<VerilatedContext>();
  Model m(ctx.get());
  FifoRules ref{depth, {}};
  mixtd::Rng rng(seed);
  auto tick = [&] {
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  };
  m.rst_n = 0;
  m.in_valid = 0;
  m.out_ready = 0;
  tick();
  tick();
  m.rst_n = 1;
  std::uint32_t next_in = 1, next_out = 1;
  std::int64_t beats = 0;
  for (int cycle = 0; cycle < 20000; ++cycle) {
    const bool in_valid = rng.uniform() < in_rate, out_ready = rng.uniform() < out_rate;
    m.clk = 0;
    m.in_valid = in_valid;
    m.in_data = next_in;
    m.out_ready = out_ready;
    m.eval();
    ASSERT_EQ(static_cast<bool>(m.in_ready), ref.in_ready()) << "cycle " << cycle << " depth " << depth;
    ASSERT_EQ(static_cast<bool>(m.out_valid), ref.out_valid(in_valid)) << "cycle " << cycle;
    const bool push = in_valid && ref.in_ready(), pop = ref.out_valid(in_valid) && out_ready;
    if (pop) {
      ASSERT_EQ(m.out_data, ref.out_data(next_in)) << "cycle " << cycle;
      ASSERT_EQ(m.out_data, next_out) << "scoreboard: beats out of order at cycle " << cycle;
      ++next_out;
      ++beats;
    }
    ref.step(push, pop, next_in);
    if (push) ++next_in;
    m.clk = 1;
    m.eval();
  }
  EXPECT_GT(beats, 1000);
}

TEST(RtlStreamFifo, FollowsBeatFifoRulesUnderRandomGapsAndBackPressure) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    check_fifo<Vmixtd_stream_fifo_d1>(1, 0.7, 0.6, seed);
    check_fifo<Vmixtd_stream_fifo_d3>(3, 0.7, 0.6, seed);
    check_fifo<Vmixtd_stream_fifo_d3>(3, 0.95, 0.3, seed + 10);  // mostly full
    check_fifo<Vmixtd_stream_fifo_d3>(3, 0.3, 0.95, seed + 20);  // mostly empty: fall-through
  }
}

TEST(RtlStreamFifo, DepthOneSustainsABeatPerCycle) {
  // Always valid, always ready: one beat every cycle for any depth ≥ 1.
  auto ctx = std::make_unique<VerilatedContext>();
  Vmixtd_stream_fifo_d1 m(ctx.get());
  m.rst_n = 0;
  m.clk = 0;
  m.eval();
  m.clk = 1;
  m.eval();
  m.rst_n = 1;
  int beats = 0;
  for (int cycle = 0; cycle < 100; ++cycle) {
    m.clk = 0;
    m.in_valid = 1;
    m.in_data = static_cast<std::uint32_t>(cycle);
    m.out_ready = 1;
    m.eval();
    if (m.out_valid && m.out_ready) {
      EXPECT_EQ(m.out_data, static_cast<std::uint32_t>(cycle));
      ++beats;
    }
    m.clk = 1;
    m.eval();
  }
  EXPECT_EQ(beats, 100);
}

}  // namespace
