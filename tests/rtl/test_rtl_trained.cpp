// A user's trained network through every model that carries data (issue
// 20, part 0): the shipped configs/networks/resnet18-fmnist-w0.25.onnx
// with the mild flow's SVD layers (docs/accuracy.md), its BFP8 exponents
// calibrated on Fashion-MNIST as `mixtd accuracy` calibrates them, 100 test
// images streamed through the Verilated RTL and the SystemC model: every
// output word equals the golden executor's, and the RTL's top-1 per image
// equals the golden executor's and the LibTorch fake-quant prediction of
// `mixtd accuracy` (nn::AccuracyOracle) on the same images.
//
// The Verilated model is cached in the build tree (tests/rtl/cosim-cache):
// the first run builds it (minutes, label slow).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Fidelity.h"
#include "mixtd/nn/Model.h"
#include "mixtd/rtl/Cosim.h"
#include "mixtd/search/Solver.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

const fs::path kCache = fs::path(MIXTD_BINARY_DIR) / "tests" / "rtl" / "cosim-cache";
const std::string kOnnx = std::string(MIXTD_SOURCE_DIR) + "/configs/networks/resnet18-fmnist-w0.25.onnx";
constexpr std::int64_t kImages = 100;
constexpr std::int64_t kCalibration = 16;  // `mixtd accuracy --calib`'s default

// The mild flow's τ on the trained network, solved for the ZC706.
arch::Design trained_design() {
  arch::Design flow = arch::load_design(std::string(MIXTD_SOURCE_DIR) + "/configs/designs/fmnist-mild.yaml");
  arch::Design d = arch::make_design(net::load_network(kOnnx, false), kOnnx, arch::load_device("zc706"), "zc706");
  for (const auto& [name, m] : flow.layers) d.layers.at(name).tau = m.tau;
  for (auto& [name, m] : d.layers) m.stages.assign(d.geometry(*d.network.find(name)).stages.size(), arch::Psi{});
  d.name = "resnet18-fmnist-w0.25.onnx mild";
  d = search::solve(d).design;
  arch::size_fifos(d);
  return d;
}

TEST(RtlTrained, UsersOnnxTop1EqualsGoldenAndAccuracyOracle) {
  const arch::Design d = trained_design();
  const nn::FmnistSplit split = nn::load_fmnist();

  rtl::CosimOptions o;
  o.cache = kCache;
  o.frames = kImages;
  o.data.calibration = split.search.batch(split.search.size() - kCalibration, kCalibration);
  o.data.inputs = split.test.batch(0, kImages);
  o.data.labels = split.test.batch_labels(0, kImages);
  const rtl::CosimResult r = rtl::cosimulate(d, o);
  EXPECT_TRUE(r.outputs_match) << r.mismatch;
  ASSERT_TRUE(r.systemc);
  EXPECT_TRUE(r.sc_outputs_match);
  EXPECT_EQ(r.first_bad_stream, "") << r.block_mismatch;
  ASSERT_EQ(r.top1.size(), static_cast<std::size_t>(kImages));
  EXPECT_EQ(r.top1, r.golden_top1);

  // `mixtd accuracy d.yaml`'s BFP8 model on the same images.
  net::Network n = net::load_network(kOnnx, true);
  n.fold_batchnorm();
  nn::Taus taus;
  for (const auto& [name, m] : d.layers)
    if (m.tau.decomposed()) taus[name] = m.tau;
  nn::OracleOptions oo;
  oo.calibration = kCalibration;
  nn::AccuracyOracle oracle(n, split.search, oo);
  nn::Model m = oracle.build(taus);
  const std::vector<std::int64_t> fake_quant = nn::argmax(m.forward(o.data.inputs));
  EXPECT_EQ(r.top1, fake_quant);

  // A trained network, not noise (10% by chance): the mild flow before
  // fine-tuning has 74.96% test top-1 (docs/accuracy.md); 75 of these 100.
  std::int64_t right = 0;
  for (std::size_t i = 0; i < r.top1.size(); ++i) right += r.top1[i] == r.labels.at(i);
  EXPECT_GE(right, 60) << "RTL top-1 on " << kImages << " Fashion-MNIST test images";
  RecordProperty("rtl_top1_correct", std::to_string(right) + "/" + std::to_string(kImages));
}

}  // namespace
