#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "mixtd/net/Counts.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

using mixtd::net::Bits;
using mixtd::net::build_zoo;
using mixtd::net::LayerKind;
using testing::HasSubstr;

namespace {

double mbits(const std::string& spec, Bits b) {
  return mixtd::net::weight_memory_bits(mixtd::net::counts(build_zoo(spec)).params, b) / 1e6;
}
double gbitops(const std::string& spec, Bits b) {
  return mixtd::net::bitops(mixtd::net::counts(build_zoo(spec)).macs, b) / 1e9;
}

// Mixed-TD (FPL 2023) Table II, within 1%.
TEST(Zoo, ResNet18MatchesPaperTable2) {
  EXPECT_NEAR(mbits("resnet18", {8, 8}), 94.0, 0.94);
  EXPECT_NEAR(gbitops("resnet18", {8, 8}), 232.0, 2.32);
  EXPECT_NEAR(mbits("resnet18", {32, 32}), 374.0, 3.74);
  EXPECT_NEAR(gbitops("resnet18", {32, 32}), 3715.0, 37.15);
}

TEST(Zoo, RepVggA0MatchesPaperTable2) {
  EXPECT_NEAR(mbits("repvgg-a0", {8, 8}), 67.0, 0.67);
  EXPECT_NEAR(gbitops("repvgg-a0", {8, 8}), 174.0, 1.74);
  EXPECT_NEAR(mbits("repvgg-a0", {32, 32}), 266.0, 2.66);
  EXPECT_NEAR(gbitops("repvgg-a0", {32, 32}), 2789.0, 27.89);
}

TEST(Zoo, LayerCountsOfEachNetwork) {
  struct Want {
    const char* spec;
    std::int64_t conv, linear;
  };
  for (const Want w :
       {Want{"resnet18", 20, 1}, Want{"repvgg-a0", 22, 1}, Want{"vgg16", 13, 3}, Want{"resnet18-fmnist", 20, 1},
        Want{"repvgg-fmnist", 22, 1}, Want{"tiny", 5, 1}, Want{"tiny-dw", 5, 1}}) {
    const auto c = mixtd::net::counts(build_zoo(w.spec));
    EXPECT_EQ(c.conv_layers, w.conv) << w.spec;
    EXPECT_EQ(c.linear_layers, w.linear) << w.spec;
  }
}

TEST(Zoo, KnownTotals) {
  // torchvision: resnet18 11,689,512 params of which 9,600 are BatchNorm
  // affine; folding turns those into 4,800 conv biases.
  EXPECT_EQ(mixtd::net::counts(build_zoo("resnet18")).params, 11689512 - 9600 + 4800);
  // torchvision vgg16: 138,357,544 params.
  EXPECT_EQ(mixtd::net::counts(build_zoo("vgg16")).params, 138357544);
}

TEST(Zoo, FmnistWidthMultiplierAndShapes) {
  const auto n = build_zoo("resnet18-fmnist:width=0.25");
  EXPECT_EQ(n.input_shape, (mixtd::net::Shape{1, 28, 28}));
  EXPECT_EQ(n.find("conv1")->out_shape, (mixtd::net::Shape{16, 28, 28}));
  EXPECT_EQ(n.find("layer4.1.relu_1")->out_shape, (mixtd::net::Shape{128, 4, 4}));
  EXPECT_EQ(n.find("fc")->out_shape, (mixtd::net::Shape{10, 1, 1}));
  EXPECT_EQ(n.find("maxpool"), nullptr);  // CIFAR-style stem
}

TEST(Zoo, RepVggFmnistKeepsA0LayoutAtStride1Stem) {
  const auto n = build_zoo("repvgg-fmnist:width=0.25");
  EXPECT_EQ(n.input_shape, (mixtd::net::Shape{1, 28, 28}));
  EXPECT_EQ(n.find("stage0.0.rbr_reparam")->out_shape, (mixtd::net::Shape{12, 28, 28}));
  EXPECT_EQ(n.find("stage1.1.nonlinearity")->out_shape, (mixtd::net::Shape{12, 28, 28}));
  EXPECT_EQ(n.find("stage2.0.rbr_reparam")->out_shape, (mixtd::net::Shape{24, 14, 14}));
  EXPECT_EQ(n.find("stage3.13.nonlinearity")->out_shape, (mixtd::net::Shape{48, 7, 7}));
  EXPECT_EQ(n.find("stage4.0.rbr_reparam")->out_shape, (mixtd::net::Shape{320, 4, 4}));
  EXPECT_EQ(n.find("linear")->out_shape, (mixtd::net::Shape{10, 1, 1}));
  // Conv weights + biases stage by stage (12, 12, 24, 48, 320 channels), then
  // the linear layer: 120 + 2,616 + 18,240 + 280,608 + 138,560 + 3,210.
  EXPECT_EQ(mixtd::net::counts(n).params, 443354);
  // Plain: no residual adds, no pooling but the global one.
  for (const auto& l : n.layers) {
    EXPECT_NE(l.kind, LayerKind::Add) << l.name;
    EXPECT_NE(l.kind, LayerKind::MaxPool) << l.name;
  }
  // Same layer names and widths as repvgg-a0 at every width (the ONNX of
  // either imports by those names); only the input and the strides differ.
  for (const char* w : {"0.25", "1"}) {
    const auto fm = build_zoo(std::string("repvgg-fmnist:width=") + w);
    const auto a0 = build_zoo(std::string("repvgg-a0:classes=10,width=") + w);
    ASSERT_EQ(fm.layers.size(), a0.layers.size());
    for (std::size_t i = 0; i < fm.layers.size(); ++i) {
      EXPECT_EQ(fm.layers[i].name, a0.layers[i].name);
      EXPECT_EQ(fm.layers[i].out_shape.c, a0.layers[i].out_shape.c) << fm.layers[i].name;
    }
  }
}

TEST(Zoo, TinyNetsCoverEveryKindButBatchNorm) {
  std::set<LayerKind> kinds;
  for (const char* s : {"tiny", "tiny-dw"})
    for (const auto& l : build_zoo(s).layers) kinds.insert(l.kind);
  for (LayerKind k : {LayerKind::Conv2d, LayerKind::ReLU, LayerKind::MaxPool, LayerKind::AvgPool,
                      LayerKind::GlobalAvgPool, LayerKind::Add, LayerKind::Linear, LayerKind::Flatten})
    EXPECT_TRUE(kinds.count(k)) << mixtd::net::to_string(k);
  const auto dw = build_zoo("tiny-dw");
  EXPECT_EQ(dw.find("dw2")->conv.groups, dw.find("dw2")->in_shape.c);
}

TEST(Zoo, WeightsAreSeededAndOptional) {
  const auto a = build_zoo("tiny");
  EXPECT_FALSE(a.has_weights());
  const auto b = build_zoo("tiny", true), c = build_zoo("tiny", true), d = build_zoo("tiny:seed=1", true);
  EXPECT_TRUE(b.has_weights());
  EXPECT_NO_THROW(b.check_weights());
  EXPECT_TRUE(b.same_weights(c));
  EXPECT_FALSE(b.same_weights(d));
}

TEST(Zoo, BadSpecsListTheLegalOnes) {
  try {
    build_zoo("resnet19");
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("resnet19"));
    EXPECT_THAT(e.what(), HasSubstr("repvgg-a0"));
  }
  EXPECT_THROW(build_zoo("tiny:depth=3"), mixtd::Error);
  EXPECT_THROW(build_zoo("tiny:width=abc"), mixtd::Error);
  EXPECT_THROW(build_zoo("tiny:width=-1"), mixtd::Error);
  EXPECT_THROW(build_zoo("tiny:width"), mixtd::Error);
}

}  // namespace
