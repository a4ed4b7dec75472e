// The U250 kernel's protocol (issue 22): the generated Vitis RTL kernel top
// (hls/src/KernelInterface.cpp) driven by a test bench that behaves as XRT
// and the data movers do (hls/src/KernelSim.cpp). Every ap_ctrl_hs check
// must pass, the outputs of all runs equal the golden executor, and with no
// stalls each frame's latency equals `mixtd cosim`'s on the bare top.
//
// Verilated models are cached in the build tree (tests/hls/kernel-cache).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"
#include "mixtd/hls/Floorplan.h"
#include "mixtd/hls/KernelInterface.h"
#include "mixtd/hls/KernelSim.h"
#include "mixtd/net/Load.h"
#include "mixtd/rtl/Cosim.h"
#include "mixtd/rtl/WeightStream.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

const fs::path kCache = fs::path(MIXTD_BINARY_DIR) / "tests" / "hls" / "kernel-cache";
const fs::path kCosimCache = fs::path(MIXTD_BINARY_DIR) / "tests" / "rtl" / "cosim-cache";

arch::Design solved(arch::Design d) {
  d = search::solve(d).design;
  arch::size_fifos(d);
  return d;
}

// The kernel's latency per frame; `slr` as hls::KernelSimOptions's.
std::vector<std::int64_t> expect_kernel_ok(const arch::Design& d, double stall,
                                           const std::map<std::string, int>& slr = {}) {
  hls::KernelSimOptions o;
  o.cache = kCache;
  o.stall_probability = stall;
  o.slr = slr;
  const hls::KernelSimResult r = hls::simulate_kernel(d, o);
  EXPECT_EQ(r.checks.size(), 17u);
  for (const auto& c : r.checks) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_TRUE(r.outputs_match) << r.mismatch;
  EXPECT_EQ(r.latency.size(), static_cast<std::size_t>(r.frames));
  if (stall > 0 || !slr.empty() || r.latency.size() < 2) return r.latency;
  // Without stalls the first run's frames enter back to back, as
  // `mixtd cosim` feeds them: the kernel adds no cycle to the top's.
  rtl::CosimOptions c;
  c.cache = kCosimCache;
  c.frames = 2;
  c.compare_systemc = false;
  const rtl::CosimResult cr = rtl::cosimulate(d, c);
  EXPECT_TRUE(cr.outputs_match) << cr.mismatch;
  EXPECT_EQ(r.latency[0], cr.latency[0]);
  EXPECT_EQ(r.latency[1], cr.latency[1]);
  return r.latency;
}

TEST(KernelInterface, TheWrapperNamesTheRegisterMapAndStreams) {
  const arch::Design d = solved(search::testing::zoo_design("tiny", "zc706"));
  const rtl::GeneratedRtl g = rtl::generate(d, 1, {}, {rtl::WeightLoad::Stream, {}});
  const hls::KernelInterface k = hls::kernel_interface(g);
  EXPECT_EQ(k.in.words_per_beat * k.in.beats_per_frame, g.in_words);
  EXPECT_EQ(k.out.tdata_bits(), 8 * g.out_width);
  const std::string sv = hls::kernel_top_sv(k);
  for (const char* port : {"s_axi_control_awaddr", "s_axis_tdata", "s_axis_tready", "m_axis_tlast", "interrupt",
                           "s_axis_weights_tdata", "s_axis_weights_tready"})
    EXPECT_NE(sv.find(port), std::string::npos) << port;
  const auto regs = k.registers();
  ASSERT_EQ(regs.size(), 6u);
  EXPECT_EQ(regs[4].name, "frames");
  EXPECT_EQ(regs[4].offset, 0x10u);
  EXPECT_EQ(regs[5].offset, hls::kRegWeightStatus);
  EXPECT_EQ(regs[5].access, "read-only");
  // The stream the kernel takes: one segment per stage memory, the beats
  // the images need.
  EXPECT_EQ(k.weight_segments, static_cast<std::int64_t>(rtl::weight_segments(g.weight_stream).size()));
  EXPECT_EQ(k.weight_beats * 8, static_cast<std::int64_t>(g.weight_stream.size()));
  EXPECT_GT(k.weight_segments, 0);
  // A ROM-initialised top is not a kernel: its memories would be lost in URAM.
  EXPECT_THROW(hls::kernel_interface(rtl::generate(d)), Error);
}

TEST(Kernel, TinyProtocolAndCyclesAsCosim) {
  expect_kernel_ok(solved(search::testing::zoo_design("tiny", "zc706")), 0);
}

TEST(Kernel, TinyWithGapsAndBackPressure) {
  expect_kernel_ok(solved(search::testing::zoo_design("tiny", "zc706")), 0.3);
}

// A floorplan over several SLRs (tiny against a share of 1/1.8 of it):
// each stream that crosses gets a register slice on each side. The outputs
// stay the golden executor's, and a frame takes at most two cycles more per
// crossing than the unsliced kernel.
TEST(Kernel, RegisterSlicesOnSlrCrossings) {
  const arch::Design d = solved(search::testing::zoo_design("tiny", "zc706"));
  const arch::Resources total = arch::analyse(d).total;
  arch::Resources share;
  share.dsp = total.dsp / 1.8 + 1;
  share.bram18 = total.bram18 / 1.8 + 1;
  share.uram = total.uram + 1;
  share.lut = total.lut / 1.8 + 1;
  share.ff = total.ff / 1.8 + 1;
  const hls::Floorplan fp = hls::plan_slrs(d, share, 4);
  ASSERT_GE(fp.slrs_used(), 2);
  const auto slr = hls::instance_slrs(fp);
  const rtl::GeneratedRtl g = rtl::generate(d, 1, {}, {rtl::WeightLoad::Stream, slr});
  EXPECT_EQ(g.slices, 2 * static_cast<std::int64_t>(fp.crossing_streams.size()));
  EXPECT_EQ(g.slice_slr.size(), static_cast<std::size_t>(g.slices));
  const auto plain = expect_kernel_ok(d, 0);
  const auto sliced = expect_kernel_ok(d, 0, slr);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(sliced.empty());
  const auto crossings = static_cast<std::int64_t>(fp.crossing_streams.size());
  std::printf("tiny over %d SLRs: %lld crossings, frame latency %lld cycles unsliced, %lld sliced\n", fp.slrs_used(),
              static_cast<long long>(crossings), static_cast<long long>(plain[0]), static_cast<long long>(sliced[0]));
  EXPECT_GE(sliced[0], plain[0]);
  EXPECT_LE(sliced[0], plain[0] + 2 * crossings);
  expect_kernel_ok(d, 0.3, slr);  // and under gaps and back-pressure
}

// The shipped trained network, undecomposed, solved for the ZC706.
TEST(Kernel, ShippedResnet18Fmnist) {
  const std::string onnx = std::string(MIXTD_SOURCE_DIR) + "/configs/networks/resnet18-fmnist-w0.25.onnx";
  arch::Design d = arch::make_design(net::load_network(onnx, false), onnx, arch::load_device("zc706"), "zc706");
  expect_kernel_ok(solved(d), 0.2);
}

// CPD engines and grouped SVD layers (configs/designs/fmnist-cpd.yaml).
TEST(Kernel, GroupedCpdDesign) {
  arch::Design d = arch::load_design(std::string(MIXTD_SOURCE_DIR) + "/configs/designs/fmnist-cpd.yaml");
  d.device_spec = "zc706";
  d.device = arch::load_device("zc706");
  d.clock_mhz = d.device.clock_mhz;
  expect_kernel_ok(solved(d), 0.2);
}

}  // namespace
