// The streaming blocks of rtl/lib against the real SystemC blocks (issue 8's
// per-block rung): per block a grid of 20 seeded random configurations,
// tests/rtl/<block>_grid.txt (written by the generators below:
// MIXTD_WRITE_GRID=1 build/tests/rtl/test_rtl_stream_grid rewrites them; a
// stale file fails RtlStreamGrid.CommittedGridsAreWhatTheSeededGeneratorsWrite).
// Each grid is one Verilated model of tb_stream_block instances.
//
// Per configuration, two frames (global pool: three) of random words go
// through the RTL block and, in a child process, through the SystemC
// StreamBlock / GlobalAvgPool (sim::run_stream_block) with the parameters
// sim/Pipeline.cpp gives it, both between depth-2 FIFOs and driven by the
// same per-port schedules:
//   free flow — every input beat offered at once, every output taken;
//   stalls    — random gaps before input beats, random back-pressure.
// Checks: SystemC and RTL outputs equal a golden C++ computation word for
// word (the tensor semantics: channel c lives in group c mod g as its word
// c / g; sums through numerics::requantize / align / average); in free flow
// every input and output handshake of the RTL is at SystemC's cycle; under
// stalls the last output beat is within 1% + 20 cycles of SystemC's.
//
// The repack grid is a fork or ReLU whose input FIFO is another width than
// the block reads: sc::InPort's re-packing against mixtd_repack.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "RtlBench.h"
#include "eltwise_add_models.h"
#include "fork_models.h"
#include "global_avg_pool_models.h"
#include "group_add_models.h"
#include "merge_models.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/sim/BlockHarness.h"
#include "mixtd/support/Rng.h"
#include "regroup_models.h"
#include "relu_models.h"
#include "repack_models.h"
#include "split_models.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;
using mixtd::sim::StreamBlockSpec;
using Kind = StreamBlockSpec::Kind;
using Words = std::vector<std::vector<std::int8_t>>;  // per port
using Cycles = std::vector<std::vector<std::int64_t>>;

// ---- the grids ----------------------------------------------------------------

struct Config {
  std::string name;
  std::int64_t kind = 3, channels = 1, pixels = 1, g_in = 1, g_out = 1, p_in = 1, p_out = 1, w_in = 1, w_out = 1,
               fw_in = 1;
  std::int64_t e[4] = {0, 0, 0, 0};
  std::int64_t bias = 0, shift = 0, relu = 0;
};

const char* const kBlocks[] = {"split",     "merge",       "regroup",         "fork",  "relu",
                               "group_add", "eltwise_add", "global_avg_pool", "repack"};

std::vector<std::int64_t> divisors8(std::int64_t x) {  // divisors of x up to 8 (a port is 64 bits)
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= std::min<std::int64_t>(x, 8); ++i)
    if (x % i == 0) d.push_back(i);
  return d;
}

template <typename T>
T pick(mixtd::Rng& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(rng.below(v.size()))];
}

std::int64_t between(mixtd::Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// 20 seeded configurations of `block`, the parameters as sim/Pipeline.cpp
// derives them from an arch::Module (channels: all groups; a port per group).
std::vector<Config> grid(const std::string& block) {
  mixtd::Rng rng(mixtd::hash_string("stream grid " + block));
  std::vector<Config> out;
  while (out.size() < 20) {
    Config g;
    g.pixels = between(rng, 3, 12);
    if (block == "split" || block == "merge" || block == "regroup") {
      g.kind = block == "split" ? 0 : block == "merge" ? 1 : 2;
      g.g_in = block == "split" ? 1 : pick<std::int64_t>(rng, {2, 3, 4});
      g.g_out = block == "merge" ? 1 : pick<std::int64_t>(rng, {2, 3, 4, 6, 8});
      if (block == "regroup" && g.g_in == g.g_out) continue;
      const std::int64_t unit = std::lcm(g.g_in, g.g_out);
      g.channels = unit * between(rng, 1, std::max<std::int64_t>(1, 48 / unit));
      g.p_in = g.g_in;
      g.p_out = g.g_out;
      g.w_in = pick(rng, divisors8(g.channels / g.g_in));
      g.w_out = pick(rng, divisors8(g.channels / g.g_out));
    } else if (block == "fork" || block == "relu" || block == "repack") {
      const bool fork = block == "fork" || (block == "repack" && out.size() % 2 == 0);
      g.kind = fork ? 3 : 6;
      g.channels = between(rng, block == "repack" ? 2 : 1, 16);
      g.p_out = fork ? between(rng, block == "repack" ? 1 : 2, block == "repack" ? 3 : 8) : 1;
      g.w_in = pick(rng, divisors8(g.channels));
      g.w_out = pick(rng, divisors8(g.channels));
    } else if (block == "group_add" || block == "eltwise_add") {
      g.kind = block == "group_add" ? 4 : 5;
      g.channels = between(rng, 1, 16);
      g.p_in = between(rng, 2, 4);
      g.w_in = pick(rng, divisors8(g.channels));
      g.w_out = pick(rng, divisors8(g.channels));
      if (g.kind == 5) {
        std::int64_t lo = 99, hi = -99;
        for (std::int64_t q = 0; q < g.p_in; ++q) {
          // Mostly close exponents, now and then one far off (sums beyond int32).
          g.e[q] = rng.below(5) == 0 ? between(rng, -8, 30) : between(rng, -3, 3);
          lo = std::min(lo, g.e[q]);
          hi = std::max(hi, g.e[q]);
        }
        g.bias = between(rng, -1000, 1000);
        g.shift = std::clamp<std::int64_t>(hi - lo + between(rng, -3, 6), -3, 45);
        g.relu = static_cast<std::int64_t>(rng.below(2));
      }
    } else {  // global_avg_pool
      g.kind = 7;
      g.channels = between(rng, 1, 16);
      g.pixels = between(rng, 1, 20);
      g.w_in = g.w_out = pick(rng, divisors8(g.channels));
    }
    g.fw_in = g.w_in;
    if (block == "repack") {
      std::vector<std::int64_t> other;
      for (const std::int64_t d : divisors8(g.channels))
        if (d != g.w_in) other.push_back(d);
      if (other.empty()) continue;
      g.fw_in = pick(rng, other);
    }
    g.name = block + "_" + (out.size() < 10 ? "0" : "") + std::to_string(out.size());
    out.push_back(g);
  }
  return out;
}

std::string grid_text(const std::string& block, const std::vector<Config>& grid) {
  std::ostringstream os;
  os << "# name KIND CHANNELS PIXELS G_IN G_OUT P_IN P_OUT W_IN W_OUT FW_IN E0 E1 E2 E3 BIAS SHIFT RELU\n"
     << "# " << block << ": written by tests/rtl/test_rtl_stream_grid.cpp (MIXTD_WRITE_GRID=1 "
     << "build/tests/rtl/test_rtl_stream_grid).\n";
  for (const auto& g : grid) {
    os << g.name << ' ' << g.kind << ' ' << g.channels << ' ' << g.pixels << ' ' << g.g_in << ' ' << g.g_out << ' '
       << g.p_in << ' ' << g.p_out << ' ' << g.w_in << ' ' << g.w_out << ' ' << g.fw_in;
    for (const std::int64_t e : g.e) os << ' ' << e;
    os << ' ' << g.bias << ' ' << g.shift << ' ' << g.relu << '\n';
  }
  return os.str();
}

std::string grid_path(const std::string& block) {
  return std::string(MIXTD_SOURCE_DIR) + "/tests/rtl/" + block + "_grid.txt";
}

TEST(RtlStreamGrid, CommittedGridsAreWhatTheSeededGeneratorsWrite) {
  for (const std::string block : kBlocks) {
    mixtd::rtl_test::expect_grid_file(grid_path(block), grid_text(block, grid(block)));
  }
}

// ---- one configuration ----------------------------------------------------------

StreamBlockSpec spec_of(const Config& g) {
  StreamBlockSpec s;
  s.kind = static_cast<Kind>(g.kind);
  s.channels = g.channels;
  s.pixels = g.pixels;
  s.groups_in = g.g_in;
  s.groups_out = g.g_out;
  s.ports_in = g.p_in;
  s.ports_out = g.p_out;
  s.width_in = g.w_in;
  s.width_out = g.w_out;
  s.fifo_width_in = g.fw_in;
  if (s.kind == Kind::EltwiseAdd) {
    for (std::int64_t q = 0; q < g.p_in; ++q) s.in_exps.push_back(static_cast<int>(g.e[q]));
    s.add_requant = {static_cast<std::int32_t>(g.bias), static_cast<int>(g.shift), g.relu != 0};
  }
  return s;
}

std::int64_t words_in(const Config& g) { return g.channels / g.g_in; }

// A configuration's data, the same on every call (seeded by its name).
StreamBlockSpec make_spec(const Config& g) {
  StreamBlockSpec s = spec_of(g);
  mixtd::Rng rng(mixtd::hash_string(g.name));
  s.frames = g.kind == 7 ? 3 : 2;
  if (s.kind == Kind::GroupAdd)
    for (std::int64_t i = 0; i < g.channels; ++i)
      s.requant.push_back({static_cast<std::int32_t>(between(rng, -300, 300)), static_cast<int>(between(rng, -2, 6)),
                           rng.below(2) == 1});
  s.input.resize(static_cast<std::size_t>(g.p_in));
  for (auto& port : s.input)
    for (std::int64_t f = 0; f < s.frames; ++f) {
      // A global pool's second frame is all large positive words: its means
      // saturate.
      const std::int64_t lo = g.kind == 7 && f == 1 ? 60 : -127;
      for (std::int64_t i = 0; i < g.pixels * words_in(g); ++i)
        port.push_back(static_cast<std::int8_t>(between(rng, lo, 127)));
    }
  return s;
}

// The golden block: the tensor semantics, stream order out, per port.
Words golden(const Config& g, const StreamBlockSpec& s) {
  Words out(static_cast<std::size_t>(g.p_out));
  const std::int64_t wi = words_in(g), total = s.frames * g.pixels;
  const auto in = [&](std::int64_t q, std::int64_t x, std::int64_t j) {
    return s.input[static_cast<std::size_t>(q)][static_cast<std::size_t>(x * wi + j)];
  };
  if (s.kind == Kind::GlobalAvgPool) {
    for (std::int64_t f = 0; f < s.frames; ++f)
      for (std::int64_t c = 0; c < g.channels; ++c) {
        std::int64_t sum = 0;
        for (std::int64_t x = 0; x < g.pixels; ++x) sum += in(0, f * g.pixels + x, c);
        out[0].push_back(nm::average(sum, g.pixels));
      }
    return out;
  }
  for (std::int64_t x = 0; x < total; ++x) {
    switch (s.kind) {
      case Kind::Split:
      case Kind::Merge:
      case Kind::Regroup: {
        std::vector<std::int8_t> channel(static_cast<std::size_t>(g.channels));
        for (std::int64_t c = 0; c < g.channels; ++c)
          channel[static_cast<std::size_t>(c)] = in(c % g.g_in, x, c / g.g_in);
        for (std::int64_t c = 0; c < g.channels; ++c)  // channel c is word c / g_out of group c mod g_out
          out[static_cast<std::size_t>(c % g.g_out)].push_back(channel[static_cast<std::size_t>(c)]);
        break;
      }
      case Kind::Fork:
      case Kind::Relu:
        for (auto& port : out)
          for (std::int64_t c = 0; c < g.channels; ++c)
            port.push_back(s.kind == Kind::Relu ? std::max<std::int8_t>(in(0, x, c), 0) : in(0, x, c));
        break;
      case Kind::GroupAdd:
        for (std::int64_t c = 0; c < g.channels; ++c) {
          std::int64_t sum = 0;
          for (std::int64_t q = 0; q < g.p_in; ++q) sum += in(q, x, c);
          out[0].push_back(nm::requantize(sum, s.requant[static_cast<std::size_t>(c)]));
        }
        break;
      default: {  // EltwiseAdd
        const int e_min = *std::min_element(s.in_exps.begin(), s.in_exps.end());
        for (std::int64_t c = 0; c < g.channels; ++c) {
          std::int64_t sum = 0;
          for (std::int64_t q = 0; q < g.p_in; ++q)
            sum += nm::align(in(q, x, c), s.in_exps[static_cast<std::size_t>(q)], e_min);
          out[0].push_back(nm::requantize(sum, s.add_requant));
        }
      }
    }
  }
  return out;
}

// Images are written by every test process while others may read them:
// write a private file and rename it over.
void write_image(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);
}

// The group-add grid model reads every instance's requantisers at once:
// write them all before it is built.
void write_group_add_images() {
  static bool done = false;
  if (done) return;
  done = true;
  const std::vector<Config> configs = grid("group_add");
#define MIXTD_WRITE_IMAGE(index, model, path) \
  for (const auto& c : configs)               \
    if (c.name == #model) write_image(path, mixtd::rtl::requant_image(make_spec(c).requant, 1));
  MIXTD_GROUP_ADD_MODELS(MIXTD_WRITE_IMAGE)
#undef MIXTD_WRITE_IMAGE
}

struct RtlRun {
  Words output;
  Cycles in_cycles, out_cycles;
};

// Instance `i` of a grid model: reset, then input port q offers FIFO beat k
// (fw words) from offer[q][k] on, output port k takes beat n from
// take[k][n] on (empty: at once), until every output port has `out_beats`
// beats or `limit` cycles passed. Cycle 0: the first after reset.
template <typename Model>
RtlRun run_rtl(Model& m, int i, const StreamBlockSpec& s, std::int64_t fw, std::int64_t out_beats, std::int64_t limit) {
  const auto np = static_cast<std::size_t>(s.ports_in), nk = static_cast<std::size_t>(s.ports_out);
  const auto sched = [](const Cycles& c, std::size_t p, std::size_t k) {
    return p < c.size() && k < c[p].size() ? c[p][k] : 0;
  };
  RtlRun r;
  r.output.resize(nk);
  r.in_cycles.resize(np);
  r.out_cycles.resize(nk);
  m.rst_n = 0;
  for (std::size_t q = 0; q < 4; ++q) m.in_valid[i][q] = 0;
  for (std::size_t k = 0; k < 8; ++k) m.out_ready[i][k] = 0;
  for (int k = 0; k < 3; ++k) {
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  }
  m.rst_n = 1;
  std::vector<std::size_t> next_in(np, 0), next_out(nk, 0);
  const auto beats_in = s.input[0].size() / static_cast<std::size_t>(fw);
  const auto finished = [&] {
    return std::all_of(next_out.begin(), next_out.end(),
                       [&](std::size_t n) { return n == static_cast<std::size_t>(out_beats); });
  };
  for (std::int64_t cyc = 0; !finished() && cyc < limit; ++cyc) {
    m.clk = 0;
    std::vector<bool> offered(np), taking(nk);
    for (std::size_t q = 0; q < np; ++q) {
      offered[q] = next_in[q] < beats_in && cyc >= sched(s.offer, q, next_in[q]);
      std::uint64_t word = 0;
      if (offered[q])
        for (std::int64_t l = 0; l < fw; ++l)
          word |= std::uint64_t{static_cast<std::uint8_t>(
                      s.input[q][next_in[q] * static_cast<std::size_t>(fw) + static_cast<std::size_t>(l)])}
                  << (8 * l);
      m.in_valid[i][q] = offered[q];
      m.in_data[i][q] = word;
    }
    for (std::size_t k = 0; k < nk; ++k) {
      taking[k] = next_out[k] < static_cast<std::size_t>(out_beats) && cyc >= sched(s.take, k, next_out[k]);
      m.out_ready[i][k] = taking[k];
    }
    m.eval();
    for (std::size_t q = 0; q < np; ++q)
      if (offered[q] && m.in_ready[i][q]) {
        r.in_cycles[q].push_back(cyc);
        ++next_in[q];
      }
    for (std::size_t k = 0; k < nk; ++k)
      if (taking[k] && m.out_valid[i][k]) {
        for (std::int64_t l = 0; l < s.width_out; ++l)
          r.output[k].push_back(
              static_cast<std::int8_t>((static_cast<std::uint64_t>(m.out_data[i][k]) >> (8 * l)) & 0xff));
        r.out_cycles[k].push_back(cyc);
        ++next_out[k];
      }
    m.clk = 1;
    m.eval();
  }
  return r;
}

template <typename Model>
Config config_of(Model& m, int index, const std::string& name) {
  Config g;
  g.name = name;
  const auto v = [&](int j) { return static_cast<std::int64_t>(static_cast<std::int32_t>(m.cfg[index][j])); };
  g.kind = v(0), g.channels = v(1), g.pixels = v(2), g.g_in = v(3), g.g_out = v(4), g.p_in = v(5), g.p_out = v(6);
  g.w_in = v(7), g.w_out = v(8), g.fw_in = v(9);
  for (int q = 0; q < 4; ++q) g.e[q] = static_cast<std::int8_t>(static_cast<std::uint32_t>(v(10)) >> (8 * q));
  g.bias = v(11), g.shift = v(12), g.relu = v(13);
  return g;
}

// The first differing word of `have` against `want`, or "" when equal.
std::string first_difference(const Words& have, const Words& want, std::int64_t width) {
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (k >= have.size()) return "port " + std::to_string(k) + " missing";
    for (std::size_t i = 0; i < want[k].size(); ++i) {
      if (i >= have[k].size())
        return "port " + std::to_string(k) + ": only " + std::to_string(have[k].size()) + " of " +
               std::to_string(want[k].size()) + " words";
      if (have[k][i] != want[k][i])
        return "port " + std::to_string(k) + " word " + std::to_string(i) + " (beat " +
               std::to_string(static_cast<std::int64_t>(i) / width) + "): " + std::to_string(int{have[k][i]}) +
               ", golden " + std::to_string(int{want[k][i]});
    }
    if (have[k].size() != want[k].size()) return "port " + std::to_string(k) + ": extra words";
  }
  return "";
}

// The first handshake at another cycle than SystemC's, or "".
std::string first_cycle_difference(const Cycles& rtl, const Cycles& sc, const char* side) {
  for (std::size_t p = 0; p < sc.size(); ++p)
    for (std::size_t n = 0; n < sc[p].size(); ++n)
      if (p >= rtl.size() || n >= rtl[p].size() || rtl[p][n] != sc[p][n])
        return std::string(side) + " port " + std::to_string(p) + " beat " + std::to_string(n) + ": RTL cycle " +
               (p < rtl.size() && n < rtl[p].size() ? std::to_string(rtl[p][n]) : "none") + ", SystemC " +
               std::to_string(sc[p][n]);
  return "";
}

std::int64_t last_of(const Cycles& c) {
  std::int64_t t = -1;
  for (const auto& p : c)
    if (!p.empty()) t = std::max(t, p.back());
  return t;
}

template <typename Model>
void check_block(const std::string& block, int index, const char* name) {
  SCOPED_TRACE(name);
  Config g;
  for (const auto& c : grid(block))
    if (c.name == name) g = c;
  ASSERT_EQ(g.name, name) << "not in the grid";
  if (block == "group_add") write_group_add_images();
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->debug(0);
  StreamBlockSpec s = make_spec(g);
  const Words want = golden(g, s);
  const std::int64_t out_beats = static_cast<std::int64_t>(want[0].size()) / g.w_out;
  const std::int64_t in_beats = static_cast<std::int64_t>(s.input[0].size()) / g.fw_in;
  mixtd::Rng rng(mixtd::hash_string(name) + 1);  // the stall schedules
  for (const bool stalled : {false, true}) {
    SCOPED_TRACE(stalled ? "random stalls" : "free flow");
    if (stalled) {
      s.offer.clear();
      s.take.clear();
      for (std::int64_t q = 0; q < g.p_in; ++q) s.offer.push_back(mixtd::rtl_test::stalls(rng, in_beats));
      for (std::int64_t k = 0; k < g.p_out; ++k) s.take.push_back(mixtd::rtl_test::stalls(rng, out_beats));
    }
    const mixtd::sim::StreamBlockRun sc = mixtd::sim::run_stream_block(s);
    ASSERT_EQ(first_difference(sc.output, want, g.w_out), "") << "the SystemC block differs from the golden block";
    Model m(ctx.get());
    m.eval();
    ASSERT_EQ(grid_text(block, {config_of(m, index, name)}), grid_text(block, {g}))
        << "the Verilated model was built from other parameters";
    const std::int64_t last_sc = last_of(sc.out_cycles);
    const RtlRun rtl = run_rtl(m, index, s, g.fw_in, out_beats, 2 * last_sc + 1000);
    ASSERT_EQ(first_difference(rtl.output, want, g.w_out), "") << "the RTL block differs from the golden block";
    const std::int64_t last_rtl = last_of(rtl.out_cycles);
    ::testing::Test::RecordProperty(std::string(stalled ? "stalled" : "free") + "_cycles_rtl_sc",
                                    std::to_string(last_rtl) + "/" + std::to_string(last_sc));
    const std::string in_diff = first_cycle_difference(rtl.in_cycles, sc.in_cycles, "input");
    const std::string out_diff = first_cycle_difference(rtl.out_cycles, sc.out_cycles, "output");
    if (!stalled) {
      EXPECT_EQ(in_diff, "") << "free flow";
      EXPECT_EQ(out_diff, "") << "free flow";
    } else {
      // Not required (issue 8 asks 1% + 20), reported: see docs/rtl.md.
      ::testing::Test::RecordProperty("stalled_handshakes",
                                      in_diff.empty() && out_diff.empty() ? "equal" : in_diff + " " + out_diff);
    }
    EXPECT_LE(std::abs(static_cast<double>(last_rtl - last_sc)), 0.01 * static_cast<double>(last_sc) + 20)
        << "last output beat: RTL cycle " << last_rtl << ", SystemC " << last_sc;
  }
}

#define MIXTD_STREAM_TEST(block, model) \
  [[maybe_unused]] void run_##block(int index, const char* name) { check_block<model>(#block, index, name); }
#ifdef MIXTD_SPLIT_BUILT
MIXTD_STREAM_TEST(split, Vsplit_grid)
#endif
#ifdef MIXTD_MERGE_BUILT
MIXTD_STREAM_TEST(merge, Vmerge_grid)
#endif
#ifdef MIXTD_REGROUP_BUILT
MIXTD_STREAM_TEST(regroup, Vregroup_grid)
#endif
#ifdef MIXTD_FORK_BUILT
MIXTD_STREAM_TEST(fork, Vfork_grid)
#endif
#ifdef MIXTD_RELU_BUILT
MIXTD_STREAM_TEST(relu, Vrelu_grid)
#endif
#ifdef MIXTD_GROUP_ADD_BUILT
MIXTD_STREAM_TEST(group_add, Vgroup_add_grid)
#endif
#ifdef MIXTD_ELTWISE_ADD_BUILT
MIXTD_STREAM_TEST(eltwise_add, Veltwise_add_grid)
#endif
#ifdef MIXTD_GLOBAL_AVG_POOL_BUILT
MIXTD_STREAM_TEST(global_avg_pool, Vglobal_avg_pool_grid)
#endif
#ifdef MIXTD_REPACK_BUILT
MIXTD_STREAM_TEST(repack, Vrepack_grid)
#endif
#undef MIXTD_STREAM_TEST

#define MIXTD_CASE(block, index, name, ...) \
  TEST(RtlStreamGrid, name) { run_##block(index, #name); }
#define MIXTD_SPLIT(index, name) MIXTD_CASE(split, index, name)
#define MIXTD_MERGE(index, name) MIXTD_CASE(merge, index, name)
#define MIXTD_REGROUP(index, name) MIXTD_CASE(regroup, index, name)
#define MIXTD_FORK(index, name) MIXTD_CASE(fork, index, name)
#define MIXTD_RELU(index, name) MIXTD_CASE(relu, index, name)
#define MIXTD_GROUP_ADD(index, name, requant) MIXTD_CASE(group_add, index, name)
#define MIXTD_ELTWISE_ADD(index, name) MIXTD_CASE(eltwise_add, index, name)
#define MIXTD_GAP(index, name) MIXTD_CASE(global_avg_pool, index, name)
#define MIXTD_REPACK(index, name) MIXTD_CASE(repack, index, name)
MIXTD_SPLIT_MODELS(MIXTD_SPLIT)
MIXTD_MERGE_MODELS(MIXTD_MERGE)
MIXTD_REGROUP_MODELS(MIXTD_REGROUP)
MIXTD_FORK_MODELS(MIXTD_FORK)
MIXTD_RELU_MODELS(MIXTD_RELU)
MIXTD_GROUP_ADD_MODELS(MIXTD_GROUP_ADD)
MIXTD_ELTWISE_ADD_MODELS(MIXTD_ELTWISE_ADD)
MIXTD_GLOBAL_AVG_POOL_MODELS(MIXTD_GAP)
MIXTD_REPACK_MODELS(MIXTD_REPACK)

}  // namespace
