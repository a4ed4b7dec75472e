// Shared by the Verilated block tests of tests/rtl: the check that a
// committed grid file is what its seeded generator writes, random stall
// schedules and a cycle-by-cycle driver for a block between a source
// and a sink that follow schedules (the RTL side of sim/BlockHarness.h).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mixtd/support/Rng.h"

namespace mixtd::rtl_test {

// The grid file at `path` must hold `want` (the Verilated models are built
// from the file at configure time); MIXTD_WRITE_GRID=1 rewrites it first.
inline void expect_grid_file(const std::string& path, const std::string& want) {
  if (const char* w = std::getenv("MIXTD_WRITE_GRID"); w && std::string(w) == "1") std::ofstream(path) << want;
  std::ifstream in(path);
  std::stringstream have;
  have << in.rdbuf();
  EXPECT_EQ(have.str(), want) << path
                              << " is stale: rerun with MIXTD_WRITE_GRID=1 and re-run cmake (the Verilated "
                                 "models are built from that file)";
}

struct RtlRun {
  std::vector<std::int8_t> output;
  std::vector<std::int64_t> out_cycles;
};

// Instance `i` of a grid model (tests/rtl/CMakeLists.txt mixtd_rtl_grid):
// resets the model, then streams `input` (p_in words per beat) into the
// instance and takes `out_beats` beats of `out_width` words, following the
// schedules (sim/BlockHarness.h; empty = as early as possible), until
// `cycle_limit`. Cycle 0 is the first cycle after reset. The other
// instances see no input.
template <typename Model>
RtlRun run_rtl(Model& m, int i, const std::vector<std::int8_t>& input, std::int64_t p_in,
               const std::vector<std::int64_t>& offer_at, const std::vector<std::int64_t>& take_at,
               std::int64_t out_width, std::int64_t out_beats, std::int64_t cycle_limit) {
  const auto in_beats = static_cast<std::int64_t>(input.size()) / p_in;
  RtlRun r;
  m.rst_n = 0;
  m.in_valid[i] = 0;
  m.out_ready[i] = 0;
  for (int k = 0; k < 3; ++k) {
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  }
  m.rst_n = 1;
  std::int64_t k_in = 0, k_out = 0;
  for (std::int64_t cyc = 0; k_out < out_beats && cyc < cycle_limit; ++cyc) {
    m.clk = 0;
    const bool offer = k_in < in_beats && cyc >= (offer_at.empty() ? 0 : offer_at[static_cast<std::size_t>(k_in)]);
    m.in_valid[i] = offer;
    std::uint64_t word = 0;
    if (offer)
      for (std::int64_t l = 0; l < p_in; ++l)
        word |= std::uint64_t{static_cast<std::uint8_t>(input[static_cast<std::size_t>(k_in * p_in + l)])} << (8 * l);
    m.in_data[i] = word;
    m.out_ready[i] = k_out < out_beats && cyc >= (take_at.empty() ? 0 : take_at[static_cast<std::size_t>(k_out)]);
    m.eval();
    const bool in_fire = m.in_valid[i] && m.in_ready[i], out_fire = m.out_valid[i] && m.out_ready[i];
    if (out_fire) {
      for (std::int64_t l = 0; l < out_width; ++l)
        r.output.push_back(static_cast<std::int8_t>((static_cast<std::uint64_t>(m.out_data[i]) >> (8 * l)) & 0xff));
      r.out_cycles.push_back(cyc);
      ++k_out;
    }
    if (in_fire) ++k_in;
    m.clk = 1;
    m.eval();
  }
  return r;
}

// A schedule of `n` beats with a random gap of 1–8 cycles before about a
// quarter of them.
inline std::vector<std::int64_t> stalls(mixtd::Rng& rng, std::int64_t n) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  std::int64_t at = 0;
  for (auto& x : t) {
    if (rng.below(4) == 0) at += 1 + static_cast<std::int64_t>(rng.below(8));
    x = at++;
  }
  return t;
}

}  // namespace mixtd::rtl_test
