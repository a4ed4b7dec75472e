// The RTL ladder's per-block rung for pooling (issue 8): mixtd_pool against
// the SystemC Pool and golden max / average pooling (numerics::average), one
// Verilated model per configuration of tests/rtl/pool_grid.txt (seeded
// random, written by pool_grid() below: MIXTD_WRITE_GRID=1 ./test_rtl_pool).
// The same two schedules and tolerances as test_rtl_stage.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "RtlBench.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/sim/BlockHarness.h"
#include "mixtd/support/Rng.h"
#include "test_rtl_pool_models.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;
using mixtd::sim::WindowBlockSpec;

struct PoolConfig {
  std::string name;
  std::int64_t c, h, w, kh, kw, sh, sw, ph, pw, p, max, count_pad, cap;
};

WindowBlockSpec spec_of(const PoolConfig& g) {
  WindowBlockSpec s;
  s.c = g.c;
  s.h = g.h;
  s.w = g.w;
  s.kh = g.kh;
  s.kw = g.kw;
  s.sh = g.sh;
  s.sw = g.sw;
  s.ph = g.ph;
  s.pw = g.pw;
  s.kind = g.max ? WindowBlockSpec::Kind::MaxPool : WindowBlockSpec::Kind::AvgPool;
  s.count_include_pad = g.count_pad != 0;
  s.out_ch = g.c;
  s.p_in = s.p_out = g.p;
  return s;
}

// Seeded random legal pools: 2×2/2, 3×3/2 pad 1 (ResNet's), 3×3/1 pad 1,
// 2×1, 5×5 pad 2; max and average with and without counting the padding.
std::vector<PoolConfig> pool_grid() {
  mixtd::Rng rng(9);
  struct Window {
    std::int64_t kh, kw, sh, sw, ph, pw;
  };
  const std::vector<Window> windows = {{2, 2, 2, 2, 0, 0}, {3, 3, 2, 2, 1, 1}, {3, 3, 1, 1, 1, 1},
                                       {2, 1, 2, 1, 0, 0}, {5, 5, 1, 1, 2, 2}, {3, 3, 2, 2, 0, 0}};
  std::vector<PoolConfig> grid;
  while (grid.size() < 20) {
    PoolConfig g;
    const Window& win = windows[static_cast<std::size_t>(rng.below(windows.size()))];
    g.kh = win.kh, g.kw = win.kw, g.sh = win.sh, g.sw = win.sw, g.ph = win.ph, g.pw = win.pw;
    g.h = 3 + static_cast<std::int64_t>(rng.below(6));
    g.w = 3 + static_cast<std::int64_t>(rng.below(6));
    if (g.h + 2 * g.ph < g.kh || g.w + 2 * g.pw < g.kw) continue;
    const std::vector<std::int64_t> cs = {1, 2, 3, 4, 6, 8};
    g.c = cs[static_cast<std::size_t>(rng.below(cs.size()))];
    std::vector<std::int64_t> ps;
    for (std::int64_t d = 1; d <= g.c; ++d)
      if (g.c % d == 0) ps.push_back(d);
    g.p = ps[static_cast<std::size_t>(rng.below(ps.size()))];
    g.max = grid.size() % 2;
    g.count_pad = g.max ? 0 : static_cast<std::int64_t>(rng.below(2));
    g.name = "pool_" + std::string(grid.size() < 10 ? "0" : "") + std::to_string(grid.size());
    g.cap = mixtd::sim::line_buffer_capacity(spec_of(g));
    grid.push_back(g);
  }
  return grid;
}

std::string grid_text(const std::vector<PoolConfig>& grid) {
  std::ostringstream os;
  os << "# name C H W KH KW SH SW PH PW P MAX COUNT_PAD CAP\n"
     << "# Written by tests/rtl/test_rtl_pool.cpp (MIXTD_WRITE_GRID=1 build/tests/rtl/test_rtl_pool).\n";
  for (const auto& g : grid)
    os << g.name << ' ' << g.c << ' ' << g.h << ' ' << g.w << ' ' << g.kh << ' ' << g.kw << ' ' << g.sh << ' ' << g.sw
       << ' ' << g.ph << ' ' << g.pw << ' ' << g.p << ' ' << g.max << ' ' << g.count_pad << ' ' << g.cap << '\n';
  return os.str();
}

const std::string kGridPath = std::string(MIXTD_SOURCE_DIR) + "/tests/rtl/pool_grid.txt";

TEST(RtlPoolGrid, CommittedGridIsWhatTheSeededGeneratorWrites) {
  mixtd::rtl_test::expect_grid_file(kGridPath, grid_text(pool_grid()));
}

std::vector<std::int8_t> golden(const WindowBlockSpec& s) {
  const std::int64_t ho = (s.h + 2 * s.ph - s.kh) / s.sh + 1, wo = (s.w + 2 * s.pw - s.kw) / s.sw + 1;
  std::vector<std::int8_t> out;
  for (std::int64_t f = 0; f < s.frames; ++f)
    for (std::int64_t i = 0; i < ho; ++i)
      for (std::int64_t j = 0; j < wo; ++j)
        for (std::int64_t c = 0; c < s.c; ++c) {
          std::int64_t best = nm::kMantissaMin, sum = 0, count = 0;
          for (std::int64_t u = 0; u < s.kh; ++u)
            for (std::int64_t v = 0; v < s.kw; ++v) {
              const std::int64_t r = i * s.sh + u - s.ph, q = j * s.sw + v - s.pw;
              if (r < 0 || r >= s.h || q < 0 || q >= s.w) {
                count += s.count_include_pad;
                continue;
              }
              const std::int8_t x = s.input[static_cast<std::size_t>(((f * s.h + r) * s.w + q) * s.c + c)];
              best = std::max<std::int64_t>(best, x);
              sum += x;
              ++count;
            }
          out.push_back(s.kind == WindowBlockSpec::Kind::MaxPool ? static_cast<std::int8_t>(best)
                                                                 : nm::average(sum, count));
        }
  return out;
}

template <typename Model>
void check_pool(int index, const char* name) {
  SCOPED_TRACE(name);
  auto ctx = std::make_unique<VerilatedContext>();
  PoolConfig g;
  for (const auto& c : pool_grid())
    if (c.name == name) g = c;
  ASSERT_EQ(g.name, name) << "not in the grid";
  WindowBlockSpec s = spec_of(g);
  ASSERT_EQ(g.cap, mixtd::sim::line_buffer_capacity(s)) << "CAP differs from sc::LineBuffer's capacity";
  mixtd::Rng rng(mixtd::hash_string(name));
  s.frames = 2;
  s.input.resize(static_cast<std::size_t>(s.frames * g.h * g.w * g.c));
  for (auto& x : s.input) x = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  const std::vector<std::int8_t> want = golden(s);
  const auto in_beats = static_cast<std::int64_t>(s.input.size()) / g.p;
  const auto out_beats = static_cast<std::int64_t>(want.size()) / g.p;
  for (const bool stalled : {false, true}) {
    SCOPED_TRACE(stalled ? "random stalls" : "free flow");
    if (stalled) {
      s.offer = mixtd::rtl_test::stalls(rng, in_beats);
      s.take = mixtd::rtl_test::stalls(rng, out_beats);
    }
    const mixtd::sim::BlockRun sc = mixtd::sim::run_window_block(s);
    ASSERT_EQ(sc.output, want) << "the SystemC Pool differs from the golden pooling";
    Model m(ctx.get());
    m.eval();
    {
      const auto v = [&](int i) { return static_cast<std::int64_t>(m.cfg[index][i]); };
      const PoolConfig built{name, v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12)};
      ASSERT_EQ(grid_text({built}), grid_text({g})) << "the Verilated model was built from other parameters";
    }
    const std::int64_t last_sc = sc.out_cycles.back();
    const mixtd::rtl_test::RtlRun rtl =
        mixtd::rtl_test::run_rtl(m, index, s.input, g.p, s.offer, s.take, g.p, out_beats, 2 * last_sc + 1000);
    ASSERT_EQ(rtl.out_cycles.size(), static_cast<std::size_t>(out_beats)) << "the RTL stalled";
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(int{rtl.output[i]}, int{want[i]})
          << "first differing word: block " << name << ", output beat " << static_cast<std::int64_t>(i) / g.p
          << ", lane " << static_cast<std::int64_t>(i) % g.p;
    const std::int64_t last_rtl = rtl.out_cycles.back();
    EXPECT_LE(std::abs(static_cast<double>(last_rtl - last_sc)), 0.01 * static_cast<double>(last_sc) + 20)
        << "last output beat: RTL cycle " << last_rtl << ", SystemC " << last_sc;
    if (!stalled) {
      std::int64_t worst = 0;
      for (std::size_t k = 0; k < rtl.out_cycles.size(); ++k)
        worst = std::max(worst, std::abs(rtl.out_cycles[k] - sc.out_cycles[k]));
      EXPECT_LE(worst, 20) << "largest per-beat cycle difference in free flow";
    }
  }
}

#define MIXTD_POOL_TEST(index, name) \
  TEST(RtlPool, name) { check_pool<Vtest_rtl_pool_grid>(index, #name); }
MIXTD_TEST_RTL_POOL_MODELS(MIXTD_POOL_TEST)

}  // namespace
