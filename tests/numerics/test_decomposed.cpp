// Quantised decomposed networks: the golden executor on SVD / CPD engines,
// grouped layers (g1, g2 > 1, the group add) tracks the float decomposed
// network, and the group add is exactly the documented rule.
#include <gtest/gtest.h>

#include "mixtd/net/Zoo.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"

using namespace mixtd::numerics;
using mixtd::td::Tau;
using mixtd::td::TdType;

namespace {

double rel_err(const FloatTensor& a, const FloatTensor& b) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    e += (a.data[i] - b.data[i]) * (a.data[i] - b.data[i]);
    r += a.data[i] * a.data[i];
  }
  return std::sqrt(e / r);
}

struct Case {
  const char* name;
  Tau conv2, conv4;
};

class Decomposed : public testing::TestWithParam<Case> {};

TEST_P(Decomposed, GoldenTracksFloatDecomposedNetwork) {
  const auto net = mixtd::net::build_zoo("tiny:width=2", true);  // 16 / 32 channels
  Decompositions d;
  mixtd::td::Decomposer dec2(*net.find("conv2")), dec4(*net.find("conv4"));
  d["conv2"] = dec2.decompose(GetParam().conv2);
  d["conv4"] = dec4.decompose(GetParam().conv4);
  mixtd::Rng rng(11);
  FloatTensor calib(16, net.input_shape);
  for (auto& v : calib.data) v = static_cast<float>(rng.normal());
  const QNetwork q = quantize_network(net, d, calib);
  FloatTensor x(16, net.input_shape);
  for (auto& v : x.data) v = static_cast<float>(rng.normal());
  const FloatTensor yf = run_float(net, x, &d);
  const FloatTensor yq =
      dequantize_tensor(golden::run_network(q, quantize_tensor(x, q.input_exp)), q.layers.back().out_exp);
  EXPECT_LT(rel_err(yf, yq), 0.08) << GetParam().name;
  // The quantised layer has the structure of its τ.
  for (const auto& l : q.layers)
    if (l.name == "conv4") {
      EXPECT_EQ(l.tau, GetParam().conv4);
      EXPECT_EQ(static_cast<std::int64_t>(l.chunks.size()), GetParam().conv4.g1 * GetParam().conv4.g2);
      EXPECT_EQ(l.group_add.empty(), GetParam().conv4.g2 == 1);
    }
}

// The exponents a QNetwork computes at, carried (a factors file) and
// quantised at again, give the very same network: every exponent, every
// golden output. Fine-tuned factors reach the hardware at the exponents
// they were trained at this way.
TEST_P(Decomposed, QuantisingAtItsOwnExponentsGivesTheSameNetwork) {
  const auto net = mixtd::net::build_zoo("tiny:width=2", true);
  Decompositions d;
  d["conv2"] = mixtd::td::Decomposer(*net.find("conv2")).decompose(GetParam().conv2);
  d["conv4"] = mixtd::td::Decomposer(*net.find("conv4")).decompose(GetParam().conv4);
  mixtd::Rng rng(12);
  FloatTensor calib(8, net.input_shape);
  for (auto& v : calib.data) v = static_cast<float>(rng.normal());
  const QNetwork q = quantize_network(net, d, calib);
  const ActivationExponents e = activation_exponents(net, q);
  EXPECT_EQ(e.at(net.input_name), q.input_exp);
  EXPECT_EQ(e.count("conv4#partial"), GetParam().conv4.g2 > 1 ? 1u : 0u);
  const QNetwork again = quantize_network(net, d, e);
  EXPECT_EQ(activation_exponents(net, again), e);
  ASSERT_EQ(again.layers.size(), q.layers.size());
  for (std::size_t i = 0; i < q.layers.size(); ++i) {
    EXPECT_EQ(again.layers[i].out_exp, q.layers[i].out_exp) << q.layers[i].name;
    EXPECT_EQ(again.layers[i].in_exps, q.layers[i].in_exps) << q.layers[i].name;
  }
  const Int8Tensor x = quantize_tensor(calib, q.input_exp);
  EXPECT_EQ(golden::run_network(again, x).data, golden::run_network(q, x).data);

  // Other exponents are used as given: one shifted stage changes the outputs.
  ActivationExponents shifted = e;
  shifted.at("conv2#stage0") += 2;
  EXPECT_NE(golden::run_network(quantize_network(net, d, shifted), x).data, golden::run_network(q, x).data);
}

INSTANTIATE_TEST_SUITE_P(
    Taus, Decomposed,
    testing::Values(Case{"svd_filter", {TdType::SvdFilter, 1, 1, 12}, {TdType::SvdFilter, 1, 1, 24}},
                    Case{"svd_spatial", {TdType::SvdSpatial, 1, 1, 30}, {TdType::SvdSpatial, 1, 1, 40}},
                    Case{"cpd", {TdType::Cpd, 1, 1, 60}, {TdType::Cpd, 1, 1, 90}},
                    Case{"grouped_svd", {TdType::SvdFilter, 2, 4, 8}, {TdType::SvdFilter, 4, 2, 8}},
                    Case{"grouped_cpd", {TdType::Cpd, 2, 2, 40}, {TdType::Cpd, 1, 4, 10}}),
    [](const auto& i) { return std::string(i.param.name); });

// The group add by hand: two input groups, partials summed in int32, bias
// at the partial scale, one requantisation.
TEST(Decomposed, GroupAddIsSumThenRequantise) {
  QLayer l;
  l.kind = QKind::Conv;
  l.tau = Tau{TdType::SvdFilter, 1, 2, 1};
  l.in_shape = {2, 1, 1};
  l.out_shape = {1, 1, 1};
  // Two chunks, each a 1x1 stage 1 -> 1 with weight 1 and shift 0: the
  // partials are the input channels themselves.
  for (int b = 0; b < 2; ++b) {
    QStage s;
    s.shape.role = "t";
    s.shape.in_ch = s.shape.out_ch = 1;
    s.shape.in = s.shape.out = {1, 1, 1};
    s.weight = {1};
    s.requant = {Requant{0, 0, false}};
    l.chunks.push_back({s});
  }
  l.group_add = {Requant{4, 1, true}};  // (p0 + p1 + 4) / 2, ReLU
  Int8Tensor x(1, 2, 1, 1);
  x.data = {100, 27};
  EXPECT_EQ(golden::run_layer(l, {&x}).data[0], 66);  // (131 / 2 = 65.5 -> 66)
  x.data = {-100, 27};
  EXPECT_EQ(golden::run_layer(l, {&x}).data[0], 0);  // negative, ReLU
  x.data = {127, 127};
  l.group_add = {Requant{0, 0, false}};
  EXPECT_EQ(golden::run_layer(l, {&x}).data[0], 127);  // saturates after the sum, not before
}

}  // namespace

namespace {

std::string quantise_error(const mixtd::net::Network& net, const Decompositions& d, const ActivationExponents& e) {
  try {
    (void)quantize_network(net, d, e);
  } catch (const mixtd::Error& err) {
    return err.what();
  }
  return "(no error)";
}

}  // namespace

// Exponents for another network (a missing tensor, a stranger) are refused by name.
TEST(ActivationExponents, MissingOrExtraTensorsAreNamed) {
  const auto net = mixtd::net::build_zoo("tiny:width=2", true);
  Decompositions d;
  d["conv2"] = mixtd::td::Decomposer(*net.find("conv2")).decompose({TdType::SvdFilter, 1, 1, 4});
  FloatTensor calib(4, net.input_shape);
  mixtd::Rng rng(13);
  for (auto& v : calib.data) v = static_cast<float>(rng.normal());
  const ActivationExponents e = activation_exponents(net, quantize_network(net, d, calib));
  ActivationExponents missing = e;
  missing.erase("conv2#stage0");
  EXPECT_NE(quantise_error(net, d, missing).find("no entry for tensor 'conv2#stage0'"), std::string::npos);
  ActivationExponents extra = e;
  extra["conv9"] = 3;
  EXPECT_NE(quantise_error(net, d, extra).find("tensor 'conv9' (exponent 3) is not one network"), std::string::npos);
  // Undecomposed, conv2 has no stage tensor: the decomposed network's exponents do not fit.
  EXPECT_NE(quantise_error(net, {}, e).find("'conv2#stage0'"), std::string::npos);
}
