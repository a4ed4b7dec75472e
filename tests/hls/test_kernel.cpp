// The U250 kernel's protocol (issue 22): the generated Vitis RTL kernel top
// (hls/src/KernelInterface.cpp) driven by a test bench that behaves as XRT
// and the data movers do (hls/src/KernelSim.cpp). Every ap_ctrl_hs check
// must pass, the outputs of all runs equal the golden executor, and with no
// stalls each frame's latency equals `mixtd cosim`'s on the bare top.
//
// Verilated models are cached in the build tree (tests/hls/kernel-cache).
#include <gtest/gtest.h>

#include <filesystem>

#include "SearchTestUtil.h"
#include "mixtd/arch/Design.h"
#include "mixtd/hls/KernelInterface.h"
#include "mixtd/hls/KernelSim.h"
#include "mixtd/net/Load.h"
#include "mixtd/rtl/Cosim.h"
#include "mixtd/search/Solver.h"

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

void expect_kernel_ok(const arch::Design& d, double stall) {
  hls::KernelSimOptions o;
  o.cache = kCache;
  o.stall_probability = stall;
  const hls::KernelSimResult r = hls::simulate_kernel(d, o);
  ASSERT_GE(r.checks.size(), 14u);
  for (const auto& c : r.checks) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_TRUE(r.outputs_match) << r.mismatch;
  ASSERT_EQ(r.latency.size(), static_cast<std::size_t>(r.frames));
  if (stall > 0) return;
  // Without stalls the first run's frames enter back to back, as
  // `mixtd cosim` feeds them: the kernel adds no cycle to the top's.
  rtl::CosimOptions c;
  c.cache = kCosimCache;
  c.frames = 2;
  c.compare_systemc = false;
  const rtl::CosimResult cr = rtl::cosimulate(d, c);
  ASSERT_TRUE(cr.outputs_match) << cr.mismatch;
  EXPECT_EQ(r.latency[0], cr.latency[0]);
  EXPECT_EQ(r.latency[1], cr.latency[1]);
}

TEST(KernelInterface, TheWrapperNamesTheRegisterMapAndStreams) {
  const arch::Design d = solved(search::testing::zoo_design("tiny", "zc706"));
  const rtl::GeneratedRtl g = rtl::generate(d);
  const hls::KernelInterface k = hls::kernel_interface(g);
  EXPECT_EQ(k.in.words_per_beat * k.in.beats_per_frame, g.in_words);
  EXPECT_EQ(k.out.tdata_bits(), 8 * g.out_width);
  const std::string sv = hls::kernel_top_sv(k);
  for (const char* port : {"s_axi_control_awaddr", "s_axis_tdata", "s_axis_tready", "m_axis_tlast", "interrupt"})
    EXPECT_NE(sv.find(port), std::string::npos) << port;
  const auto regs = k.registers();
  ASSERT_EQ(regs.size(), 5u);
  EXPECT_EQ(regs.back().name, "frames");
  EXPECT_EQ(regs.back().offset, 0x10u);
}

TEST(Kernel, TinyProtocolAndCyclesAsCosim) {
  expect_kernel_ok(solved(search::testing::zoo_design("tiny", "zc706")), 0);
}

TEST(Kernel, TinyWithGapsAndBackPressure) {
  expect_kernel_ok(solved(search::testing::zoo_design("tiny", "zc706")), 0.3);
}

// The shipped trained network, undecomposed, solved for the ZC706.
TEST(Kernel, ShippedResnet18Fmnist) {
  const std::string onnx = std::string(MIXTD_SOURCE_DIR) + "/configs/networks/resnet18-fmnist-w0.25.onnx";
  arch::Design d = arch::make_design(net::load_network(onnx, false), onnx, arch::load_device("zc706"), "zc706");
  expect_kernel_ok(solved(d), 0.2);
}

// CPD engines and grouped SVD layers (configs/flows/fmnist-cpd.yaml).
TEST(Kernel, GroupedCpdDesign) {
  arch::Design d = arch::load_design(std::string(MIXTD_SOURCE_DIR) + "/configs/flows/fmnist-cpd.yaml");
  d.device_spec = "zc706";
  d.device = arch::load_device("zc706");
  d.clock_mhz = d.device.clock_mhz;
  expect_kernel_ok(solved(d), 0.2);
}

}  // namespace
