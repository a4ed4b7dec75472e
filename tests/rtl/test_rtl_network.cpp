// The top rungs of the RTL ladder (issue 8): generated network RTL,
// Verilated and co-simulated (rtl::cosimulate) against the golden executor
// and the SystemC model — every output word, every FIFO's words, every
// block's cycles — plus the generator's contract (deterministic, refuses
// what it cannot build before writing) and a deliberately broken RTL that
// the checks must catch.
//
// Verilated models are cached in the build tree (tests/rtl/cosim-cache):
// the first run builds them (minutes, label slow), later runs reuse them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/rtl/Cosim.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

const fs::path kCache = fs::path(MIXTD_BINARY_DIR) / "tests" / "rtl" / "cosim-cache";

arch::Design solved(arch::Design d) {
  search::SolverOptions o;
  d = search::solve(d, o).design;
  arch::size_fifos(d);
  return d;
}

// tiny with random τ: grouped SVD/CPD engines and regrouping, on a network
// that builds in about a minute. The first seed from 7 on whose design has
// every streaming block kind (a round-robin FIFO array included).
arch::Design tiny_random() {
  using K = arch::ModuleKind;
  for (std::uint64_t seed = 7;; ++seed) {
    arch::Design d = search::testing::random_tau(search::testing::zoo_design("tiny:width=2", "zc706"), seed);
    std::set<K> kinds;
    for (const auto& m : arch::build_graph(d).modules) kinds.insert(m.kind);
    if (!kinds.count(K::RoundRobin) || !kinds.count(K::Split) || !kinds.count(K::GroupAdd) || !kinds.count(K::Fork))
      continue;
    d = solved(d);
    d.name = "tiny random tau #" + std::to_string(seed);
    return d;
  }
}

rtl::CosimOptions options() {
  rtl::CosimOptions o;
  o.cache = kCache;
  o.frames = 2;
  return o;
}

void expect_agreement(const rtl::CosimResult& r) {
  EXPECT_TRUE(r.outputs_match) << r.mismatch;
  ASSERT_TRUE(r.systemc);
  EXPECT_TRUE(r.sc_outputs_match);
  EXPECT_EQ(r.first_bad_stream, "") << r.block_mismatch;
  EXPECT_GT(r.streams_compared, 0);
  EXPECT_EQ(r.blocks_outside_tolerance, 0)
      << "worst block " << r.worst_block << ": " << r.worst_block_diff << " cycles vs " << r.worst_block_cycles;
  ASSERT_FALSE(r.latency.empty());
  ASSERT_FALSE(r.sc_latency.empty());
  // Issue 8: network interval within 2% of SystemC, latency within ±1% + 20.
  EXPECT_LE(std::abs(static_cast<double>(r.interval - r.sc_interval)), 0.02 * static_cast<double>(r.sc_interval));
  EXPECT_LE(std::abs(static_cast<double>(r.latency.front() - r.sc_latency.front())),
            0.01 * static_cast<double>(r.sc_latency.front()) + 20);
}

TEST(RtlGenerator, SameDesignGivesTheSameBytes) {
  const arch::Design d = tiny_random();
  const rtl::GeneratedRtl a = rtl::generate(d), b = rtl::generate(d);
  ASSERT_EQ(a.files.size(), b.files.size());
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].path, b.files[i].path);
    EXPECT_EQ(a.files[i].text, b.files[i].text) << a.files[i].path;
  }
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_NE(rtl::generate(d, 2).hash, a.hash) << "another calibration seed gives other requantisers";
}

TEST(RtlGenerator, IllegalParallelismIsRefusedBeforeAnythingIsWritten) {
  arch::Design d = tiny_random();
  // p_in = 1000003 (a prime) cannot divide the first layer's input channels.
  for (auto& [name, m] : d.layers)
    if (!m.stages.empty()) {
      m.stages.front().p_in = 1000003;
      break;
    }
  const fs::path dir = fs::temp_directory_path() / ("mixtd-gen-rtl-refused-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  try {
    const rtl::GeneratedRtl g = rtl::generate(d);
    rtl::write(g, dir);
    FAIL() << "an illegal p_in was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p_in"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(RtlGenerator, GeneratedTopPassesVerilatorLint) {
  const fs::path dir = fs::temp_directory_path() / ("mixtd-gen-rtl-lint-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const rtl::GeneratedRtl g = rtl::generate(tiny_random());
  rtl::write(g, dir);
  const std::string cmd =
      "cd '" + dir.string() + "' && verilator --lint-only -Wall -f files.f --top-module " + g.top + " > lint.log 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "see " << (dir / "lint.log");
}

TEST(RtlNetwork, TinyRandomTauMatchesGoldenAndSystemC) {
  rtl::CosimOptions o = options();
  const rtl::CosimResult r = rtl::cosimulate(tiny_random(), o);
  expect_agreement(r);
  // The same design again: the cached model, not a rebuild.
  o.stall_probability = 0.2;
  const rtl::CosimResult again = rtl::cosimulate(tiny_random(), o);
  EXPECT_FALSE(again.built);
  EXPECT_EQ(again.build_dir, r.build_dir);
  EXPECT_TRUE(again.outputs_match) << "under random input gaps and back-pressure: " << again.mismatch;
  EXPECT_EQ(again.first_bad_stream, "") << again.block_mismatch;
}

TEST(RtlNetwork, BrokenRequantiserShiftIsCaughtNamingTheBlockAndWord) {
  rtl::CosimOptions o = options();
  o.fault = "requant-shift";
  const rtl::CosimResult r = rtl::cosimulate(tiny_random(), o);
  EXPECT_FALSE(r.outputs_match);
  ASSERT_NE(r.first_bad_stream, "");
  // The first wrong stream is the broken stage's output, with the word.
  EXPECT_NE(r.block_mismatch.find("stage0"), std::string::npos) << r.block_mismatch;
  EXPECT_NE(r.block_mismatch.find("frame 0, row "), std::string::npos) << r.block_mismatch;
  EXPECT_NE(r.mismatch.find("first differing word"), std::string::npos) << r.mismatch;
}

// The line buffer's frame counters wrap (8 bits): 300 frames through tiny
// cross the wrap, and cross the 16 frames at which a 4-bit counter compared
// without wrapping once deadlocked every design.
TEST(RtlNetwork, ManyFramesCrossTheFrameCounterWrap) {
  rtl::CosimOptions o = options();
  o.frames = 300;
  const rtl::CosimResult r = rtl::cosimulate(solved(search::testing::zoo_design("tiny", "zc706")), o);
  expect_agreement(r);
  EXPECT_EQ(r.words, 300 * 10);
}

bool has_grouped_stage(const arch::Design& d) {
  for (const auto& m : arch::build_graph(d).modules)
    if (m.kind == arch::ModuleKind::Stage && !m.shape.depthwise && m.shape.groups > 1) return true;
  return false;
}

// tiny-dw, undecomposed: a depthwise, a 2-group 3×3 conv (gconv3, one
// grouped mixtd_conv_stage) and a 5×5 depthwise, solved for ZCU102 (issue
// 20). gconv3 gets ψ = (8, 8, 9): one channel chunk and one block per group.
TEST(RtlNetwork, TinyDwGroupedConvMatchesGoldenAndSystemC) {
  const arch::Design d = solved(search::testing::zoo_design("tiny-dw", "zcu102"));
  ASSERT_TRUE(has_grouped_stage(d));
  const rtl::CosimResult r = rtl::cosimulate(d, options());
  expect_agreement(r);
  RecordProperty("interval_rtl_systemc", std::to_string(r.interval) + "/" + std::to_string(r.sc_interval));
  RecordProperty("latency_rtl_systemc", std::to_string(r.latency.front()) + "/" + std::to_string(r.sc_latency.front()));
}

// The same with gconv3 at ψ = (2, 4, 3): 4 channel chunks and 2 blocks per
// group, every word of every FIFO as SystemC's, latency and interval within
// issue 8's bounds (both equal). gconv3 is then the bottleneck (12× the
// others' interval) and the blocks upstream of it run up to 609 cycles
// ahead of SystemC (host_in, on 3,895): the back-pressure look-ahead of
// docs/rtl.md, not the grouped stage — a dense bottleneck instead (`mixtd
// cosim` of the solved design with pw2 at ψ = (1, 1, 1)) shows the same
// (host_in 884 cycles ahead on 12,112). So the per-block ±1% + 20 rule
// is not asserted here, only recorded.
TEST(RtlNetwork, TinyDwNarrowGroupedConvMatchesGoldenAndSystemCWords) {
  arch::Design d = solved(search::testing::zoo_design("tiny-dw", "zcu102"));
  d.layers.at("gconv3").stages.at(0) = arch::Psi{2, 4, 3};
  d.name += " gconv3 psi (2, 4, 3)";
  arch::size_fifos(d);
  ASSERT_TRUE(has_grouped_stage(d));
  const rtl::CosimResult r = rtl::cosimulate(d, options());
  EXPECT_TRUE(r.outputs_match) << r.mismatch;
  ASSERT_TRUE(r.systemc);
  EXPECT_TRUE(r.sc_outputs_match);
  EXPECT_EQ(r.first_bad_stream, "") << r.block_mismatch;
  EXPECT_GT(r.streams_compared, 0);
  ASSERT_FALSE(r.latency.empty());
  ASSERT_FALSE(r.sc_latency.empty());
  EXPECT_LE(std::abs(static_cast<double>(r.interval - r.sc_interval)), 0.02 * static_cast<double>(r.sc_interval));
  EXPECT_LE(std::abs(static_cast<double>(r.latency.front() - r.sc_latency.front())),
            0.01 * static_cast<double>(r.sc_latency.front()) + 20);
  RecordProperty("interval_rtl_systemc", std::to_string(r.interval) + "/" + std::to_string(r.sc_interval));
  RecordProperty("latency_rtl_systemc", std::to_string(r.latency.front()) + "/" + std::to_string(r.sc_latency.front()));
  RecordProperty("blocks_outside_tolerance", std::to_string(r.blocks_outside_tolerance) + " of " +
                                                 std::to_string(r.blocks_compared) + ", worst " + r.worst_block + " " +
                                                 std::to_string(r.worst_block_diff) + " on " +
                                                 std::to_string(r.worst_block_cycles));
}

// Issue 8's network: resnet18-fmnist (width 0.25) with the CPD flow of
// docs/accuracy.md (CPD engines, grouped SVD layers) on ZC706.
TEST(RtlNetwork, Resnet18FmnistCpdMatchesGoldenAndSystemC) {
  arch::Design d = arch::load_design(std::string(MIXTD_SOURCE_DIR) + "/configs/designs/fmnist-cpd.yaml");
  d.device_spec = "zc706";
  d.device = arch::load_device("zc706");
  d.clock_mhz = d.device.clock_mhz;
  d = solved(d);
  const rtl::CosimResult r = rtl::cosimulate(d, options());
  expect_agreement(r);
  RecordProperty("interval_rtl_systemc", std::to_string(r.interval) + "/" + std::to_string(r.sc_interval));
  RecordProperty("latency_rtl_systemc", std::to_string(r.latency.front()) + "/" + std::to_string(r.sc_latency.front()));
}

}  // namespace
