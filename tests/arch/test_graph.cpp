// The dataflow graph and the analytical model on small designs: SVD and CPD
// engines, a grouped layer with regrouping, a residual block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../search/SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

using namespace mixtd::arch;
using mixtd::td::Tau;
using mixtd::td::TdType;

namespace {

Design tiny_design(const std::string& spec = "tiny:width=2") {
  return make_design(mixtd::net::build_zoo(spec), spec, load_device("zcu102"), "zcu102");
}

const Module& module(const Report& r, const std::string& name) {
  const int i = r.graph.find(name);
  EXPECT_GE(i, 0) << name;
  return r.graph.modules.at(static_cast<std::size_t>(i));
}

TEST(Graph, UndecomposedTinyHasOneStagePerConvAndFusedRelus) {
  const Report r = analyse(tiny_design());
  int stages = 0;
  for (const auto& m : r.graph.modules) {
    stages += m.kind == ModuleKind::Stage;
    EXPECT_NE(m.kind, ModuleKind::ReLU) << m.name;  // all fused
  }
  EXPECT_EQ(stages, 6);  // 5 convs + fc
  EXPECT_TRUE(module(r, "conv1/stage0").relu);
  EXPECT_FALSE(module(r, "conv3/stage0").relu);
  EXPECT_TRUE(module(r, "add1").relu);
  // Interval is the largest module interval; latency = fill + B * interval.
  std::int64_t worst = 0;
  for (const auto& m : r.graph.modules) worst = std::max(worst, m.cycles.interval());
  EXPECT_EQ(r.interval, worst);
  EXPECT_EQ(r.latency_cycles(4), r.fill_cycles + 4 * r.interval);
  EXPECT_NEAR(r.fps_peak(), 200e6 / static_cast<double>(r.interval), 1e-6);
}

TEST(Graph, SvdEngineIsTwoStagesInAChain) {
  Design d = tiny_design();
  d.layers["conv2"] = LayerMapping{Tau{TdType::SvdFilter, 1, 1, 8}, {Psi{4, 2, 3}, Psi{2, 4, 1}}};
  const Report r = analyse(d);
  const Module& s0 = module(r, "conv2/stage0");
  const Module& s1 = module(r, "conv2/stage1");
  EXPECT_EQ(s0.shape.out_ch, 8);
  EXPECT_EQ(s1.shape.in_ch, 8);
  EXPECT_EQ(s1.shape.kh, 1);
  // stage0: 16x16 pixels, C=16 -> r=8 with (4, 2, 3): 256 * 4 * 4 * 3.
  EXPECT_EQ(s0.cycles.compute, 256 * 4 * 4 * 3);
  // stage1: 1x1, 8 -> 16 with (2, 4, 1): 256 * 4 * 4.
  EXPECT_EQ(s1.cycles.compute, 256 * 4 * 4);
  ASSERT_EQ(s1.inputs.size(), 1u);
  EXPECT_EQ(r.graph.streams[static_cast<std::size_t>(s1.inputs[0])].from, r.graph.find("conv2/stage0"));
}

TEST(Graph, CpdEngineIsFourStagesWithDepthwiseMiddle) {
  Design d = tiny_design();
  d.layers["conv4"] =
      LayerMapping{Tau{TdType::Cpd, 1, 1, 12}, {Psi{2, 4, 1}, Psi{4, 4, 3}, Psi{4, 4, 1}, Psi{4, 4, 1}}};
  const Report r = analyse(d);
  EXPECT_TRUE(module(r, "conv4/stage1").shape.depthwise);
  EXPECT_TRUE(module(r, "conv4/stage2").shape.depthwise);
  EXPECT_EQ(module(r, "conv4/stage1").shape.sh, 2);  // stride on the vertical stage
  EXPECT_EQ(module(r, "conv4/stage2").shape.sw, 2);
  EXPECT_EQ(module(r, "conv4/stage3").shape.out.c, 32);
  // A depthwise stage with p_out != p_in is illegal.
  d.layers["conv4"].stages[1] = Psi{4, 2, 3};
  EXPECT_THROW(analyse(d), mixtd::Error);
}

TEST(Graph, GroupedLayerWithRegrouping) {
  Design d = tiny_design();
  // conv2: 16 -> 16, g1 = 2, g2 = 4: split 1 -> 4, fork x4 to 2 engines,
  // 8 engines, group add x2 of 4 partials. conv3 reads 2 groups as 4 ->
  // a round-robin array of lcm(2, 4) = 4 FIFOs.
  d.layers["conv2"] = LayerMapping{Tau{TdType::SvdFilter, 2, 4, 8}, {Psi{1, 2, 1}, Psi{2, 2, 1}}};
  d.layers["conv3"] = LayerMapping{Tau{TdType::SvdFilter, 1, 4, 4}, {Psi{1, 1, 1}, Psi{1, 4, 1}}};
  const Report r = analyse(d);
  const Module& split = module(r, "conv2/split");
  EXPECT_EQ(split.kind, ModuleKind::Split);
  EXPECT_EQ(split.ports_out, 4);
  EXPECT_EQ(module(r, "conv2/fork").count, 4);
  EXPECT_EQ(module(r, "conv2/fork").ports_out, 2);
  EXPECT_EQ(module(r, "conv2/stage0").count, 8);
  EXPECT_EQ(module(r, "conv2/stage0").shape.in_ch, 4);   // C / g2
  EXPECT_EQ(module(r, "conv2/stage1").shape.out_ch, 8);  // N / g1
  EXPECT_EQ(module(r, "conv2/group_add").count, 2);
  EXPECT_EQ(module(r, "conv2/group_add").ports_in, 4);
  EXPECT_TRUE(module(r, "conv2/group_add").relu);  // relu2 fused after the sum
  EXPECT_FALSE(module(r, "conv2/stage1").relu);
  const Module& rr = module(r, "conv3/regroup");
  EXPECT_EQ(rr.kind, ModuleKind::RoundRobin);
  EXPECT_EQ(rr.fifos, 4);
  EXPECT_EQ(rr.ports_in, 2);
  EXPECT_EQ(rr.ports_out, 4);
  // conv3 has g1 = 1, so the add after it reads one stream: no merge needed
  // before add1, but conv3's 4 partials are summed by its group add.
  EXPECT_EQ(module(r, "conv3/group_add").count, 1);
  // Resources count every instance: 8 engines of conv2 stage0.
  const Module& s = module(r, "conv2/stage0");
  double dsp = 0;
  for (const auto& l : r.layers)
    if (l.layer == "conv2") dsp = l.resources.dsp;
  EXPECT_GE(dsp, 8 * s.resources.dsp);
}

TEST(Graph, ResidualSkipFifoAbsorbsTheMainPathFill) {
  const Report r = analyse(tiny_design());
  const Module& add = module(r, "add1");
  ASSERT_EQ(add.inputs.size(), 2u);
  const Stream& main = r.graph.streams[static_cast<std::size_t>(add.inputs[0])];
  const Stream& skip = r.graph.streams[static_cast<std::size_t>(add.inputs[1])];
  EXPECT_FALSE(main.skip);
  EXPECT_TRUE(skip.skip);
  EXPECT_EQ(skip.from, r.graph.find("conv1/stage0"));
  // The residual waits for conv2 -> conv3 (Timing.h skip_fifo_depth): its
  // FIFO holds what conv1 has emitted when the main path's first word
  // arrives (conv1's frame spread evenly over its first..last), or what is
  // left unconsumed when conv1's last word leaves, and at least the main
  // path's look-ahead plus a row and two pixels; plus the default depth.
  const std::vector<Arrival> arr = arrivals(r.graph);
  const Arrival& p = arr[static_cast<std::size_t>(skip.from)];
  const Arrival& m = arr[static_cast<std::size_t>(main.from)];
  ASSERT_GT(m.first, p.first);
  auto up = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  const std::int64_t beats = skip.words / skip.width;
  const Module& conv1 = module(r, "conv1/stage0");
  const std::int64_t pixels = conv1.out_shape.h * conv1.out_shape.w;
  const std::int64_t at_first = up((m.first - p.first) * beats, p.last - p.first);
  const std::int64_t at_last = m.last > p.last ? up((m.last - p.last) * beats, m.last - m.first) : 0;
  const auto ahead = static_cast<std::int64_t>(std::ceil((m.lead - p.lead) * static_cast<double>(beats)));
  const std::int64_t floor = ahead + (conv1.out_shape.w + 2) * up(beats, pixels);
  EXPECT_EQ(skip.depth, std::min(beats, std::max({at_first, at_last, floor})) + 4);
  EXPECT_GT(skip.depth, main.depth);
}

TEST(Graph, FcIsOneStageOverTheFlattenedInput) {
  const Report r = analyse(tiny_design());
  const Module& fc = module(r, "fc/stage0");
  EXPECT_EQ(fc.shape.in_ch, 32);
  EXPECT_EQ(fc.shape.out_ch, 10);
}

TEST(Graph, ResNet18AtPsiOneFitsU250AndIsBoundByTheStem) {
  const Design d = make_design(mixtd::net::build_zoo("resnet18"), "resnet18", load_device("u250"), "u250");
  const Report r = analyse(d);
  EXPECT_TRUE(r.fits());
  EXPECT_EQ(r.graph.modules.at(static_cast<std::size_t>(r.bottleneck)).name, "conv1/stage0");
  EXPECT_EQ(r.interval, 112LL * 112 * 3 * 64 * 49);  // one multiplier
  EXPECT_NEAR(r.weight_mbit, 93.4, 0.1);
}

void expect_same(const Resources& a, const Resources& b, const std::string& what) {
  EXPECT_EQ(a.dsp, b.dsp) << what;
  EXPECT_EQ(a.bram18, b.bram18) << what;
  EXPECT_EQ(a.uram, b.uram) << what;
  EXPECT_EQ(a.lut, b.lut) << what;
  EXPECT_EQ(a.ff, b.ff) << what;
}

// size_fifos(d, r) brings r up to date instead of a second analyse(): the
// report it leaves is analyse() of the sized design, to the last bit.
TEST(Graph, SizingFifosFromAReportLeavesTheReportOfTheSizedDesign) {
  int raised = 0;
  for (const std::string spec : {"tiny:width=2", "resnet18-fmnist:width=0.25"}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      Design d = make_design(mixtd::net::build_zoo(spec), spec, load_device("zcu102"), "zcu102");
      // Random legal ψ: stages of many speeds, so that fan-outs need depth.
      mixtd::Rng rng(seed);
      mixtd::search::testing::random_psi(d, rng);
      Report r = analyse(d);
      const int n = size_fifos(d, r);
      raised += n;
      const Report fresh = analyse(d);
      const std::string what = spec + " seed " + std::to_string(seed);
      expect_same(r.total, fresh.total, what);
      EXPECT_EQ(r.warnings, fresh.warnings) << what;
      EXPECT_EQ(r.fifo_need, fresh.fifo_need) << what;
      EXPECT_EQ(r.fill_cycles, fresh.fill_cycles) << what;
      EXPECT_EQ(r.interval, fresh.interval) << what;
      ASSERT_EQ(r.layers.size(), fresh.layers.size()) << what;
      for (std::size_t l = 0; l < r.layers.size(); ++l)
        expect_same(r.layers[l].resources, fresh.layers[l].resources, what + " " + r.layers[l].layer);
      ASSERT_EQ(r.graph.streams.size(), fresh.graph.streams.size()) << what;
      for (std::size_t s = 0; s < r.graph.streams.size(); ++s) {
        EXPECT_EQ(r.graph.streams[s].depth, fresh.graph.streams[s].depth) << what << " " << r.graph.streams[s].name;
        expect_same(r.graph.streams[s].resources, fresh.graph.streams[s].resources, what);
      }
      EXPECT_EQ(size_fifos(d, r), 0) << what;  // nothing left to raise
    }
  }
  EXPECT_GT(raised, 0);  // some FIFOs were raised
}

}  // namespace
