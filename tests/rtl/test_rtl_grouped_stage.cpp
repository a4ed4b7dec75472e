// Grouped conv stages (issue 20): mixtd_conv_stage with 1 < GROUPS against
// the SystemC Stage (sc::MacArray with groups) and a golden grouped
// convolution, one instance of tb_grouped_conv_stage per configuration of
// tests/rtl/grouped_stage_grid.txt (seeded random, written by grouped_grid()
// below: MIXTD_WRITE_GRID=1 ./test_rtl_grouped_stage rewrites it).
//
// The checks are test_rtl_stage's: two frames of random data through the RTL
// and, in a child process, through the SystemC Stage (sim::run_window_block),
// both between depth-2 FIFOs and driven by the same schedules (free flow;
// random input gaps and back-pressure). Outputs must equal the golden grouped
// convolution word for word; the last output beat must be within 1% + 20
// cycles of SystemC's, and in free flow every beat within 20 cycles.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "RtlBench.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/sim/BlockHarness.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "test_rtl_grouped_stage_models.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;
using mixtd::sim::WindowBlockSpec;

// ---- the grid ---------------------------------------------------------------

struct GroupedConfig {
  std::string name;
  std::int64_t c, h, w, n, kh, kw, sh, sw, ph, pw, p_in, p_out, fine, groups, cap;
};

WindowBlockSpec spec_of(const GroupedConfig& g) {
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
  s.kind = WindowBlockSpec::Kind::Dense;
  s.out_ch = g.n;
  s.groups = g.groups;
  s.p_in = g.p_in;
  s.p_out = g.p_out;
  s.fine = g.fine;
  return s;
}

std::vector<std::int64_t> divisors(std::int64_t x) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= x; ++i)
    if (x % i == 0) d.push_back(i);
  return d;
}

template <typename T>
T pick(mixtd::Rng& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(rng.below(v.size()))];
}

// Seeded random legal grouped stages: 2–8 groups (each count at least
// twice), 1–4 input and output channels per group (one channel per group
// included: a channel multiplier), 1×1 windows every fourth line and 3×3 /
// 1×3 / 3×1 / 5×5 otherwise, strides 1–2, with and without padding, every
// legal p_in (| in/groups), p_out (| out/groups) and fine.
std::vector<GroupedConfig> grouped_grid() {
  mixtd::Rng rng(20);
  std::vector<GroupedConfig> grid;
  const std::vector<std::pair<std::int64_t, std::int64_t>> kernels = {{3, 3}, {3, 3}, {1, 3}, {3, 1}, {5, 5}};
  while (grid.size() < 20) {
    GroupedConfig g;
    g.groups = 2 + static_cast<std::int64_t>(grid.size() % 7);
    std::tie(g.kh, g.kw) = grid.size() % 4 == 0 ? std::pair<std::int64_t, std::int64_t>{1, 1} : pick(rng, kernels);
    g.sh = 1 + static_cast<std::int64_t>(rng.below(2));
    g.sw = rng.below(3) == 0 ? 3 - g.sh : g.sh;
    g.ph = rng.below(3) == 0 ? 0 : g.kh / 2;
    g.pw = rng.below(3) == 0 ? 0 : g.kw / 2;
    g.h = 3 + static_cast<std::int64_t>(rng.below(5));
    g.w = 3 + static_cast<std::int64_t>(rng.below(5));
    if (g.h + 2 * g.ph < g.kh || g.w + 2 * g.pw < g.kw) continue;
    const std::int64_t cpg = pick(rng, std::vector<std::int64_t>{1, 2, 3, 4});
    const std::int64_t npg = pick(rng, std::vector<std::int64_t>{1, 2, 3, 4});
    g.c = g.groups * cpg;
    g.n = g.groups * npg;
    g.p_in = pick(rng, divisors(cpg));
    g.p_out = pick(rng, divisors(npg));
    g.fine = pick(rng, divisors(g.kh * g.kw));
    g.name = "gstage_" + std::string(grid.size() < 10 ? "0" : "") + std::to_string(grid.size());
    g.cap = mixtd::sim::line_buffer_capacity(spec_of(g));
    grid.push_back(g);
  }
  return grid;
}

std::string grid_text(const std::vector<GroupedConfig>& grid) {
  std::ostringstream os;
  os << "# name C H W N KH KW SH SW PH PW P_IN P_OUT FINE GROUPS CAP\n"
     << "# Written by tests/rtl/test_rtl_grouped_stage.cpp (MIXTD_WRITE_GRID=1 "
        "build/tests/rtl/test_rtl_grouped_stage).\n";
  for (const auto& g : grid)
    os << g.name << ' ' << g.c << ' ' << g.h << ' ' << g.w << ' ' << g.n << ' ' << g.kh << ' ' << g.kw << ' ' << g.sh
       << ' ' << g.sw << ' ' << g.ph << ' ' << g.pw << ' ' << g.p_in << ' ' << g.p_out << ' ' << g.fine << ' '
       << g.groups << ' ' << g.cap << '\n';
  return os.str();
}

const std::string kGridPath = std::string(MIXTD_SOURCE_DIR) + "/tests/rtl/grouped_stage_grid.txt";

TEST(RtlGroupedStageGrid, CommittedGridIsWhatTheSeededGeneratorWrites) {
  mixtd::rtl_test::expect_grid_file(kGridPath, grid_text(grouped_grid()));
}

// The weight image order (docs/rtl.md): block b's words are its group's
// channel chunks (in/groups channels), the lanes that group's input channels.
TEST(RtlGroupedStageGrid, WeightImageHoldsEachBlocksGroupChannels) {
  // 4 inputs, 4 outputs, 2 groups, 1×1, p_in = 2, p_out = 1: weight[o][c] = 10·o + c.
  std::vector<std::int8_t> w;
  for (int o = 0; o < 4; ++o)
    for (int c = 0; c < 2; ++c) w.push_back(static_cast<std::int8_t>(10 * o + c));
  EXPECT_EQ(mixtd::rtl::stage_weight_image(w, 4, 4, 1, 1, false, 2, 1, 1, 2), "0100\n0b0a\n1514\n1f1e\n");
  // p_in = 1: one word per (block, channel of its group).
  EXPECT_EQ(mixtd::rtl::stage_weight_image(w, 4, 4, 1, 1, false, 1, 1, 1, 2), "00\n01\n0a\n0b\n14\n15\n1e\n1f\n");
  // p_in must divide a group's channels.
  EXPECT_THROW(mixtd::rtl::stage_weight_image(w, 4, 4, 1, 1, false, 4, 1, 1, 2), mixtd::Error);
}

// ---- one configuration --------------------------------------------------------

template <typename Model>
GroupedConfig config_of(Model& m, int index, const char* name) {
  GroupedConfig g;
  g.name = name;
  const auto v = [&](int i) { return static_cast<std::int64_t>(m.cfg[index][i]); };
  g.c = v(0), g.h = v(1), g.w = v(2), g.n = v(3), g.kh = v(4), g.kw = v(5), g.sh = v(6), g.sw = v(7);
  g.ph = v(8), g.pw = v(9), g.p_in = v(10), g.p_out = v(11), g.fine = v(12), g.groups = v(13), g.cap = v(14);
  return g;
}

// The golden grouped convolution (numerics rules), stream order out: output
// channel o reads the input channels of its group o / (out/groups).
std::vector<std::int8_t> golden(const WindowBlockSpec& s) {
  const std::int64_t ho = (s.h + 2 * s.ph - s.kh) / s.sh + 1, wo = (s.w + 2 * s.pw - s.kw) / s.sw + 1;
  const std::int64_t cin = s.c / s.groups, cout = s.out_ch / s.groups;
  std::vector<std::int8_t> out;
  for (std::int64_t f = 0; f < s.frames; ++f)
    for (std::int64_t i = 0; i < ho; ++i)
      for (std::int64_t j = 0; j < wo; ++j)
        for (std::int64_t o = 0; o < s.out_ch; ++o) {
          std::int64_t acc = 0;
          for (std::int64_t c = 0; c < cin; ++c)
            for (std::int64_t u = 0; u < s.kh; ++u)
              for (std::int64_t v = 0; v < s.kw; ++v) {
                const std::int64_t r = i * s.sh + u - s.ph, q = j * s.sw + v - s.pw;
                if (r < 0 || r >= s.h || q < 0 || q >= s.w) continue;
                acc += std::int64_t{s.weight[static_cast<std::size_t>(((o * cin + c) * s.kh + u) * s.kw + v)]} *
                       s.input[static_cast<std::size_t>(((f * s.h + r) * s.w + q) * s.c + (o / cout) * cin + c)];
              }
          out.push_back(nm::requantize(acc, s.requant[static_cast<std::size_t>(o)]));
        }
  return out;
}

// The memory images, written by the generator's own functions (private file
// renamed over: other test processes may be reading them).
void write_image(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);
}

void write_images(const GroupedConfig& g, const WindowBlockSpec& s, const std::string& wpath,
                  const std::string& rpath) {
  write_image(wpath,
              mixtd::rtl::stage_weight_image(s.weight, g.c, g.n, g.kh, g.kw, false, g.p_in, g.p_out, g.fine, g.groups));
  write_image(rpath, mixtd::rtl::requant_image(s.requant, g.p_out));
}

// A configuration's data, the same on every call: weights [out, in/groups,
// kh, kw], requantisers and two input frames, seeded by its name.
WindowBlockSpec make_spec(const GroupedConfig& g) {
  WindowBlockSpec s = spec_of(g);
  mixtd::Rng rng(mixtd::hash_string(g.name));
  s.frames = 2;
  s.weight.resize(static_cast<std::size_t>(g.n * (g.c / g.groups) * g.kh * g.kw));
  for (auto& x : s.weight) x = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  for (std::int64_t o = 0; o < g.n; ++o)
    s.requant.push_back(
        {static_cast<std::int32_t>(rng.below(2001)) - 1000, 3 + static_cast<int>(rng.below(8)), rng.below(2) == 1});
  s.input.resize(static_cast<std::size_t>(s.frames * g.h * g.w * g.c));
  for (auto& x : s.input) x = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  return s;
}

#ifdef MIXTD_TEST_RTL_GROUPED_STAGE_BUILT
// The grid model initialises every instance's memories at once: write them
// all before the first model is built.
void write_all_images() {
  static bool done = false;
  if (done) return;
  done = true;
#define MIXTD_WRITE_IMAGES(index, model, weights, requant) \
  for (const auto& c : grouped_grid())                     \
    if (c.name == #model) write_images(c, make_spec(c), weights, requant);
  MIXTD_TEST_RTL_GROUPED_STAGE_MODELS(MIXTD_WRITE_IMAGES)
#undef MIXTD_WRITE_IMAGES
}

template <typename Model>
void check_stage(int index, const char* name) {
  SCOPED_TRACE(name);
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->debug(0);
  GroupedConfig g;
  for (const auto& c : grouped_grid())
    if (c.name == name) g = c;
  ASSERT_EQ(g.name, name) << "not in the grid";
  WindowBlockSpec s = spec_of(g);
  ASSERT_EQ(g.cap, mixtd::sim::line_buffer_capacity(s)) << "CAP differs from sc::LineBuffer's capacity";
  s = make_spec(g);
  write_all_images();
  mixtd::Rng rng(mixtd::hash_string(name) + 1);  // the stall schedules
  const std::vector<std::int8_t> want = golden(s);
  const auto in_beats = static_cast<std::int64_t>(s.input.size()) / s.p_in;
  const auto out_beats = static_cast<std::int64_t>(want.size()) / g.p_out;

  for (const bool stalled : {false, true}) {
    SCOPED_TRACE(stalled ? "random stalls" : "free flow");
    if (stalled) {
      s.offer = mixtd::rtl_test::stalls(rng, in_beats);
      s.take = mixtd::rtl_test::stalls(rng, out_beats);
    }
    const mixtd::sim::BlockRun sc = mixtd::sim::run_window_block(s);
    ASSERT_EQ(sc.output, want) << "the SystemC Stage differs from the golden grouped convolution";
    Model m(ctx.get());
    m.eval();
    const GroupedConfig built = config_of(m, index, name);
    ASSERT_EQ(grid_text({built}), grid_text({g})) << "the Verilated model was built from other parameters";
    const std::int64_t last_sc = sc.out_cycles.back();
    const mixtd::rtl_test::RtlRun rtl =
        mixtd::rtl_test::run_rtl(m, index, s.input, s.p_in, s.offer, s.take, g.p_out, out_beats, 2 * last_sc + 1000);
    ASSERT_EQ(rtl.out_cycles.size(), static_cast<std::size_t>(out_beats)) << "the RTL stalled";
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto w = static_cast<std::int64_t>(i);
      const std::int64_t per_window = g.n, o = w % per_window;
      ASSERT_EQ(int{rtl.output[i]}, int{want[i]})
          << "first differing word: block " << name << ", window " << w / per_window << ", output beat " << w / g.p_out
          << ", lane " << w % g.p_out << " (channel " << o << ", group " << o / (g.n / g.groups) << ")";
    }
    const std::int64_t last_rtl = rtl.out_cycles.back();
    const double tol = 0.01 * static_cast<double>(last_sc) + 20;
    EXPECT_LE(std::abs(static_cast<double>(last_rtl - last_sc)), tol)
        << "last output beat: RTL cycle " << last_rtl << ", SystemC " << last_sc;
    std::int64_t worst = 0;
    for (std::size_t k = 0; k < rtl.out_cycles.size(); ++k)
      worst = std::max(worst, std::abs(rtl.out_cycles[k] - sc.out_cycles[k]));
    ::testing::Test::RecordProperty(std::string(stalled ? "stalled" : "free") + "_cycles_rtl_sc",
                                    std::to_string(last_rtl) + "/" + std::to_string(last_sc));
    ::testing::Test::RecordProperty(std::string(stalled ? "stalled" : "free") + "_worst_beat_diff",
                                    std::to_string(worst));
    // Free flow: the same cycle for every beat is what the design aims at.
    if (!stalled) {
      EXPECT_LE(worst, 20) << "largest per-beat cycle difference in free flow";
    }
  }
}

#define MIXTD_GROUPED_STAGE_TEST(index, name, weights, requant) \
  TEST(RtlGroupedStage, name) { check_stage<Vtest_rtl_grouped_stage_grid>(index, #name); }
MIXTD_TEST_RTL_GROUPED_STAGE_MODELS(MIXTD_GROUPED_STAGE_TEST)
#endif

}  // namespace
