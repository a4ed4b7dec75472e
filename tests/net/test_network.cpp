#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mixtd/net/Counts.h"
#include "mixtd/net/Network.h"
#include "mixtd/support/Error.h"

using mixtd::net::Layer;
using mixtd::net::LayerKind;
using mixtd::net::Network;
using testing::HasSubstr;

namespace {

Layer conv(const std::string& name, const std::string& in, std::int64_t out, std::int64_t k, std::int64_t s = 1,
           std::int64_t p = 0, std::int64_t g = 1) {
  Layer l;
  l.name = name;
  l.kind = LayerKind::Conv2d;
  l.inputs = {in};
  l.conv.out_channels = out;
  l.conv.kh = l.conv.kw = k;
  l.conv.sh = l.conv.sw = s;
  l.conv.ph = l.conv.pw = p;
  l.conv.groups = g;
  return l;
}

Layer simple(const std::string& name, LayerKind kind, std::vector<std::string> in) {
  Layer l;
  l.name = name;
  l.kind = kind;
  l.inputs = std::move(in);
  return l;
}

std::string error_of(Network& n) {
  try {
    n.infer_shapes();
  } catch (const mixtd::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Network, InfersConvPoolShapes) {
  Network n;
  n.input_shape = {3, 224, 224};
  n.add(conv("c1", "input", 64, 7, 2, 3));
  Layer mp = simple("mp", LayerKind::MaxPool, {"c1"});
  mp.pool = {3, 3, 2, 2, 1, 1, true};
  n.add(mp);
  n.add(conv("dw", "mp", 64, 3, 1, 1, 64));
  n.add(simple("gap", LayerKind::GlobalAvgPool, {"dw"}));
  n.add(simple("fl", LayerKind::Flatten, {"gap"}));
  Layer fc = simple("fc", LayerKind::Linear, {"fl"});
  fc.linear.out_features = 10;
  n.add(fc);
  n.infer_shapes();
  EXPECT_EQ(n.find("c1")->out_shape, (mixtd::net::Shape{64, 112, 112}));
  EXPECT_EQ(n.find("mp")->out_shape, (mixtd::net::Shape{64, 56, 56}));
  EXPECT_EQ(n.find("dw")->out_shape, (mixtd::net::Shape{64, 56, 56}));
  EXPECT_EQ(n.find("fc")->out_shape, (mixtd::net::Shape{10, 1, 1}));
  // Hand-computed counts: conv1 = 64*3*7*7 weights + 64 biases; MACs per output pixel.
  EXPECT_EQ(mixtd::net::counts(*n.find("c1")).weights, 64 * 3 * 49);
  EXPECT_EQ(mixtd::net::counts(*n.find("c1")).macs, 112LL * 112 * 64 * 3 * 49);
  EXPECT_EQ(mixtd::net::counts(*n.find("dw")).weights, 64 * 9);
  EXPECT_EQ(mixtd::net::counts(*n.find("dw")).macs, 56LL * 56 * 64 * 9);
  EXPECT_EQ(mixtd::net::counts(*n.find("fc")).params(), 64 * 10 + 10);
  EXPECT_EQ(n.outputs(), std::vector<std::string>{"fc"});
}

TEST(Network, RejectsUnknownInput) {
  Network n;
  n.input_shape = {3, 8, 8};
  try {
    n.add(conv("c1", "nope", 8, 3));
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("layer 'c1'"));
    EXPECT_THAT(e.what(), HasSubstr("'nope'"));
  }
}

TEST(Network, RejectsDuplicateName) {
  Network n;
  n.input_shape = {3, 8, 8};
  n.add(conv("c1", "input", 8, 3));
  EXPECT_THROW(n.add(conv("c1", "c1", 8, 3)), mixtd::Error);
}

TEST(Network, AddShapeMismatchNamesLayerAndShapes) {
  Network n;
  n.input_shape = {3, 8, 8};
  n.add(conv("a", "input", 8, 3, 1, 1));
  n.add(conv("b", "input", 8, 3, 1, 0));
  n.add(simple("sum", LayerKind::Add, {"a", "b"}));
  const std::string e = error_of(n);
  EXPECT_THAT(e, HasSubstr("layer 'sum'"));
  EXPECT_THAT(e, HasSubstr("8x6x6"));
  EXPECT_THAT(e, HasSubstr("8x8x8"));
}

TEST(Network, GroupsMustDivideAndLegalValuesListed) {
  Network n;
  n.input_shape = {6, 8, 8};
  n.add(conv("g", "input", 8, 3, 1, 1, 4));
  const std::string e = error_of(n);
  EXPECT_THAT(e, HasSubstr("layer 'g'"));
  EXPECT_THAT(e, HasSubstr("legal: 1, 2"));
}

TEST(Network, KernelLargerThanInput) {
  Network n;
  n.input_shape = {3, 4, 4};
  n.add(conv("big", "input", 8, 7));
  EXPECT_THAT(error_of(n), HasSubstr("does not fit"));
}

TEST(Network, LinearNeedsFlatInput) {
  Network n;
  n.input_shape = {3, 4, 4};
  Layer fc = simple("fc", LayerKind::Linear, {"input"});
  fc.linear.out_features = 2;
  n.add(fc);
  EXPECT_THAT(error_of(n), HasSubstr("flatten"));
}

TEST(Network, FoldBatchNormMatchesDirectComputation) {
  Network n;
  n.input_shape = {2, 4, 4};
  Layer c = conv("c", "input", 3, 1);
  c.conv.bias = false;
  n.add(c);
  Layer bn = simple("bn", LayerKind::BatchNorm, {"c"});
  n.add(bn);
  n.add(simple("r", LayerKind::ReLU, {"bn"}));
  mixtd::net::init_random_weights(n, 3);
  Layer* b = n.find("bn");
  b->weight = {2.0f, 0.5f, 1.0f};
  b->bias = {0.1f, -0.2f, 0.3f};
  b->mean = {1.0f, 0.0f, -1.0f};
  b->var = {4.0f, 1.0f, 0.25f};
  b->bn.eps = 0.0;
  Layer* cv = n.find("c");
  cv->conv.bias = false;
  cv->bias.clear();
  const std::vector<float> w0 = cv->weight;
  n.fold_batchnorm();
  ASSERT_EQ(n.layers.size(), 2u);
  const Layer& f = n.layers[0];
  EXPECT_TRUE(f.conv.bias);
  EXPECT_EQ(n.layers[1].inputs[0], "c");
  // Channel 0: scale = 2/sqrt(4) = 1, bias = (0 - 1) * 1 + 0.1.
  EXPECT_FLOAT_EQ(f.weight[0], w0[0] * 1.0f);
  EXPECT_FLOAT_EQ(f.bias[0], -0.9f);
  // Channel 2: scale = 1/0.5 = 2, bias = (0 + 1) * 2 + 0.3.
  EXPECT_FLOAT_EQ(f.weight[4], w0[4] * 2.0f);
  EXPECT_FLOAT_EQ(f.bias[2], 2.3f);
}

TEST(Network, FoldBatchNormRefusesNonConvInput) {
  Network n;
  n.input_shape = {2, 4, 4};
  n.add(simple("r", LayerKind::ReLU, {"input"}));
  n.add(simple("bn", LayerKind::BatchNorm, {"r"}));
  EXPECT_THROW(n.fold_batchnorm(), mixtd::Error);
}

TEST(Network, WeightSizeChecked) {
  Network n;
  n.input_shape = {3, 4, 4};
  n.add(conv("c", "input", 2, 3));
  mixtd::net::init_random_weights(n, 0);
  n.find("c")->weight.pop_back();
  try {
    n.check_weights();
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("layer 'c'"));
    EXPECT_THAT(e.what(), HasSubstr("expected 54"));
  }
}

TEST(Network, RandomWeightsAreSeededPerLayer) {
  Network a, b;
  for (Network* n : {&a, &b}) {
    n->input_shape = {3, 4, 4};
    n->add(conv("c", "input", 2, 3));
  }
  b.add(conv("extra", "c", 2, 1));
  mixtd::net::init_random_weights(a, 5);
  mixtd::net::init_random_weights(b, 5);
  EXPECT_EQ(a.layers[0].weight, b.layers[0].weight);
  Network c = a;
  mixtd::net::init_random_weights(c, 6);
  EXPECT_NE(a.layers[0].weight, c.layers[0].weight);
}

TEST(Counts, ParseBits) {
  EXPECT_EQ(mixtd::net::parse_bits("8,8").weight, 8);
  EXPECT_EQ(mixtd::net::parse_bits("4,16").activation, 16);
  EXPECT_THROW(mixtd::net::parse_bits("8"), mixtd::Error);
  EXPECT_THROW(mixtd::net::parse_bits("0,8"), mixtd::Error);
  EXPECT_THROW(mixtd::net::parse_bits("8,x"), mixtd::Error);
}

}  // namespace
