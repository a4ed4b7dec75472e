// Second rung of the RTL ladder (issue 8): mixtd_conv_stage against the
// SystemC Stage and the golden arithmetic, one Verilated model per
// configuration of tests/rtl/stage_grid.txt (seeded random, written by
// stage_grid() below: MIXTD_WRITE_GRID=1 ./test_rtl_stage rewrites it).
//
// Per configuration, two frames of random data go through the RTL and, in a
// child process, through the SystemC Stage (sim::run_window_block), both
// between depth-2 FIFOs and driven by the same schedules:
//   free flow  — every input beat offered at once, every output taken;
//   stalls     — random gaps before input beats, random back-pressure.
// Outputs must equal the golden convolution word for word; the cycle of the
// last output beat must be within 1% + 20 cycles of SystemC's (issue 8's
// tolerance), and CAP must be what sc::LineBuffer holds.
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
#include <vector>

#include "RtlBench.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/sim/BlockHarness.h"
#include "mixtd/support/Rng.h"
#include "test_rtl_stage_models.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;
using mixtd::sim::WindowBlockSpec;

// ---- the grid ---------------------------------------------------------------

struct StageConfig {
  std::string name;
  std::int64_t c, h, w, n, kh, kw, sh, sw, ph, pw, p_in, p_out, fine, depthwise, cap;
};

WindowBlockSpec spec_of(const StageConfig& g) {
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
  s.kind = g.depthwise ? WindowBlockSpec::Kind::Depthwise : WindowBlockSpec::Kind::Dense;
  s.out_ch = g.depthwise ? g.c : g.n;
  s.p_in = g.p_in;
  s.p_out = g.depthwise ? g.p_in : g.p_out;
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

// Seeded random legal stages: dense and depthwise, 1×1 / 3×3 / 1×3 / 3×1 /
// 5×5 windows, strides 1–2, with and without padding, every legal p_in,
// p_out and fine, frames small enough to co-simulate in a second.
std::vector<StageConfig> stage_grid() {
  mixtd::Rng rng(8);
  std::vector<StageConfig> grid;
  const std::vector<std::pair<std::int64_t, std::int64_t>> kernels = {{1, 1}, {3, 3}, {3, 3}, {1, 3},
                                                                      {3, 1}, {5, 5}, {2, 2}};
  while (grid.size() < 24) {
    StageConfig g;
    g.depthwise = grid.size() % 3 == 2;
    std::tie(g.kh, g.kw) = pick(rng, kernels);
    g.sh = 1 + static_cast<std::int64_t>(rng.below(2));
    g.sw = rng.below(3) == 0 ? 3 - g.sh : g.sh;
    g.ph = rng.below(3) == 0 ? 0 : g.kh / 2;
    g.pw = rng.below(3) == 0 ? 0 : g.kw / 2;
    g.h = 3 + static_cast<std::int64_t>(rng.below(6));
    g.w = 3 + static_cast<std::int64_t>(rng.below(6));
    if (g.h + 2 * g.ph < g.kh || g.w + 2 * g.pw < g.kw) continue;
    g.c = pick(rng, std::vector<std::int64_t>{1, 2, 3, 4, 6, 8});
    g.n = g.depthwise ? g.c : pick(rng, std::vector<std::int64_t>{1, 2, 4, 6, 8});
    g.p_in = pick(rng, divisors(g.c));
    g.p_out = g.depthwise ? 1 : pick(rng, divisors(g.n));
    g.fine = pick(rng, divisors(g.kh * g.kw));
    g.name = "stage_" + std::string(grid.size() < 10 ? "0" : "") + std::to_string(grid.size());
    g.cap = mixtd::sim::line_buffer_capacity(spec_of(g));
    grid.push_back(g);
  }
  // Appended for the packed MAC array (issue 20; the rows above are kept):
  // dense stages with an odd p_out above 1, so that the unpaired last unit
  // runs beside packed pairs, half of them with p_in·fine > 8 (more than one
  // DSP chain per unit).
  while (grid.size() < 30) {
    StageConfig g;
    g.depthwise = 0;
    std::tie(g.kh, g.kw) = pick(rng, kernels);
    g.sh = 1 + static_cast<std::int64_t>(rng.below(2));
    g.sw = g.sh;
    g.ph = g.kh / 2;
    g.pw = g.kw / 2;
    g.h = 3 + static_cast<std::int64_t>(rng.below(4));
    g.w = 3 + static_cast<std::int64_t>(rng.below(4));
    g.c = pick(rng, std::vector<std::int64_t>{2, 4, 6, 8});
    g.n = pick(rng, std::vector<std::int64_t>{3, 5, 9, 15});
    g.p_in = pick(rng, divisors(g.c));
    std::vector<std::int64_t> odd;
    for (std::int64_t d : divisors(g.n))
      if (d > 1 && d <= 8) odd.push_back(d);  // tb_conv_stage: at most 8 output words
    g.p_out = pick(rng, odd);
    g.fine = pick(rng, divisors(g.kh * g.kw));
    if ((g.p_in * g.fine > 8) != (grid.size() % 2 == 0)) continue;
    g.name = "stage_" + std::to_string(grid.size());
    g.cap = mixtd::sim::line_buffer_capacity(spec_of(g));
    grid.push_back(g);
  }
  return grid;
}

std::string grid_text(const std::vector<StageConfig>& grid) {
  std::ostringstream os;
  os << "# name C H W N KH KW SH SW PH PW P_IN P_OUT FINE DEPTHWISE CAP\n"
     << "# Written by tests/rtl/test_rtl_stage.cpp (MIXTD_WRITE_GRID=1 build/tests/rtl/test_rtl_stage).\n";
  for (const auto& g : grid)
    os << g.name << ' ' << g.c << ' ' << g.h << ' ' << g.w << ' ' << g.n << ' ' << g.kh << ' ' << g.kw << ' ' << g.sh
       << ' ' << g.sw << ' ' << g.ph << ' ' << g.pw << ' ' << g.p_in << ' ' << g.p_out << ' ' << g.fine << ' '
       << g.depthwise << ' ' << g.cap << '\n';
  return os.str();
}

const std::string kGridPath = std::string(MIXTD_SOURCE_DIR) + "/tests/rtl/stage_grid.txt";

TEST(RtlStageGrid, CommittedGridIsWhatTheSeededGeneratorWrites) {
  mixtd::rtl_test::expect_grid_file(kGridPath, grid_text(stage_grid()));
}

// ---- one configuration --------------------------------------------------------

template <typename Model>
StageConfig config_of(Model& m, int index, const char* name) {
  StageConfig g;
  g.name = name;
  const auto v = [&](int i) { return static_cast<std::int64_t>(m.cfg[index][i]); };
  g.c = v(0), g.h = v(1), g.w = v(2), g.n = v(3), g.kh = v(4), g.kw = v(5), g.sh = v(6), g.sw = v(7);
  g.ph = v(8), g.pw = v(9), g.p_in = v(10), g.p_out = v(11), g.fine = v(12), g.depthwise = v(13), g.cap = v(14);
  return g;
}

// The golden stage: convolution (numerics rules), stream order out.
std::vector<std::int8_t> golden(const WindowBlockSpec& s) {
  const std::int64_t ho = (s.h + 2 * s.ph - s.kh) / s.sh + 1, wo = (s.w + 2 * s.pw - s.kw) / s.sw + 1;
  const bool dw = s.kind == WindowBlockSpec::Kind::Depthwise;
  const std::int64_t cin = dw ? 1 : s.c;
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
                const std::int64_t ch = dw ? o : c;
                acc += std::int64_t{s.weight[static_cast<std::size_t>(((o * cin + c) * s.kh + u) * s.kw + v)]} *
                       s.input[static_cast<std::size_t>(((f * s.h + r) * s.w + q) * s.c + ch)];
              }
          out.push_back(nm::requantize(acc, s.requant[static_cast<std::size_t>(o)]));
        }
  return out;
}

// The memory images, written by the generator's own functions. Every test
// process writes all of them (the grid model reads them all) while others
// may be reading: write a private file and rename it over, so a reader sees
// a whole image (they are identical anyway).
void write_image(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);
}

void write_images(const StageConfig& g, const WindowBlockSpec& s, const std::string& wpath, const std::string& rpath) {
  const std::int64_t out_p = g.depthwise ? g.p_in : g.p_out;
  write_image(wpath, mixtd::rtl::stage_weight_image(s.weight, g.c, s.out_ch, g.kh, g.kw, g.depthwise != 0, g.p_in,
                                                    g.p_out, g.fine));
  write_image(rpath, mixtd::rtl::requant_image(s.requant, out_p));
}

// A configuration's data, the same on every call: weights, requantisers and
// two input frames, seeded by its name.
WindowBlockSpec make_spec(const StageConfig& g) {
  WindowBlockSpec s = spec_of(g);
  mixtd::Rng rng(mixtd::hash_string(g.name));
  s.frames = 2;
  const std::int64_t cin = g.depthwise ? 1 : g.c;
  s.weight.resize(static_cast<std::size_t>(s.out_ch * cin * g.kh * g.kw));
  for (auto& x : s.weight) x = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  for (std::int64_t o = 0; o < s.out_ch; ++o)
    s.requant.push_back(
        {static_cast<std::int32_t>(rng.below(2001)) - 1000, 3 + static_cast<int>(rng.below(8)), rng.below(2) == 1});
  s.input.resize(static_cast<std::size_t>(s.frames * g.h * g.w * g.c));
  for (auto& x : s.input) x = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  return s;
}

// The grid model initialises every instance's memories at once: write them
// all before the first model is built.
void write_all_images() {
  static bool done = false;
  if (done) return;
  done = true;
#define MIXTD_WRITE_IMAGES(index, model, weights, requant) \
  for (const auto& c : stage_grid())                       \
    if (c.name == #model) write_images(c, make_spec(c), weights, requant);
  MIXTD_TEST_RTL_STAGE_MODELS(MIXTD_WRITE_IMAGES)
#undef MIXTD_WRITE_IMAGES
}

template <typename Model>
void check_stage(int index, const char* name) {
  SCOPED_TRACE(name);
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->debug(0);
  // The configuration from the grid; the model's `cfg` must agree (below).
  StageConfig g;
  for (const auto& c : stage_grid())
    if (c.name == name) g = c;
  ASSERT_EQ(g.name, name) << "not in the grid";
  WindowBlockSpec s = spec_of(g);
  ASSERT_EQ(g.cap, mixtd::sim::line_buffer_capacity(s)) << "CAP differs from sc::LineBuffer's capacity";
  s = make_spec(g);
  write_all_images();
  mixtd::Rng rng(mixtd::hash_string(name) + 1);  // the stall schedules
  const std::vector<std::int8_t> want = golden(s);
  const std::int64_t out_width = g.depthwise ? g.p_in : g.p_out;
  const auto in_beats = static_cast<std::int64_t>(s.input.size()) / s.p_in;
  const auto out_beats = static_cast<std::int64_t>(want.size()) / out_width;

  for (const bool stalled : {false, true}) {
    SCOPED_TRACE(stalled ? "random stalls" : "free flow");
    if (stalled) {
      s.offer = mixtd::rtl_test::stalls(rng, in_beats);
      s.take = mixtd::rtl_test::stalls(rng, out_beats);
    }
    const mixtd::sim::BlockRun sc = mixtd::sim::run_window_block(s);
    ASSERT_EQ(sc.output, want) << "the SystemC Stage differs from the golden convolution";
    Model m(ctx.get());
    m.eval();
    const StageConfig built = config_of(m, index, name);
    ASSERT_EQ(grid_text({built}), grid_text({g})) << "the Verilated model was built from other parameters";
    const std::int64_t last_sc = sc.out_cycles.back();
    const mixtd::rtl_test::RtlRun rtl =
        mixtd::rtl_test::run_rtl(m, index, s.input, s.p_in, s.offer, s.take, out_width, out_beats, 2 * last_sc + 1000);
    ASSERT_EQ(rtl.out_cycles.size(), static_cast<std::size_t>(out_beats)) << "the RTL stalled";
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto w = static_cast<std::int64_t>(i);
      const std::int64_t beat = w / out_width, per_window = s.out_ch;
      ASSERT_EQ(int{rtl.output[i]}, int{want[i]})
          << "first differing word: block " << name << ", frame "
          << w / (per_window * (want.size() / s.frames / per_window)) << ", output beat " << beat << ", lane "
          << w % out_width << " (channel " << w % per_window << ")";
    }
    const std::int64_t last_rtl = rtl.out_cycles.back();
    const double tol = 0.01 * static_cast<double>(last_sc) + 20;
    EXPECT_LE(std::abs(static_cast<double>(last_rtl - last_sc)), tol)
        << "last output beat: RTL cycle " << last_rtl << ", SystemC " << last_sc;
    ::testing::Test::RecordProperty(std::string(stalled ? "stalled" : "free") + "_cycles_rtl_sc",
                                    std::to_string(last_rtl) + "/" + std::to_string(last_sc));
    if (!stalled) {
      // Free flow: the same cycle for every beat is what the design aims at.
      std::int64_t worst = 0;
      for (std::size_t k = 0; k < rtl.out_cycles.size(); ++k)
        worst = std::max(worst, std::abs(rtl.out_cycles[k] - sc.out_cycles[k]));
      EXPECT_LE(worst, 20) << "largest per-beat cycle difference in free flow";
    }
  }
}

#define MIXTD_STAGE_TEST(index, name, weights, requant) \
  TEST(RtlStage, name) { check_stage<Vtest_rtl_stage_grid>(index, #name); }
MIXTD_TEST_RTL_STAGE_MODELS(MIXTD_STAGE_TEST)

}  // namespace
