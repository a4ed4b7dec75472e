// The golden executor against independent references.
#include <gtest/gtest.h>

#include "mixtd/net/Zoo.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/support/Rng.h"

using namespace mixtd::numerics;
using mixtd::Rng;

namespace {

Int8Tensor random_int8(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, Rng& rng) {
  Int8Tensor t(n, c, h, w);
  for (auto& v : t.data) v = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  return t;
}

struct StageCase {
  std::int64_t in_ch, out_ch, kh, kw, sh, sw, ph, pw, groups, h, w;
};

// Random stage with random requantiser parameters.
QStage random_stage(const StageCase& c, Rng& rng) {
  QStage q;
  auto& s = q.shape;
  s.role = "test";
  s.in_ch = c.in_ch;
  s.out_ch = c.out_ch;
  s.kh = c.kh;
  s.kw = c.kw;
  s.sh = c.sh;
  s.sw = c.sw;
  s.ph = c.ph;
  s.pw = c.pw;
  s.groups = c.groups;
  s.depthwise = c.groups == c.in_ch && c.in_ch == c.out_ch && c.groups > 1;
  s.in = {c.in_ch, c.h, c.w};
  s.out = {c.out_ch, (c.h + 2 * c.ph - c.kh) / c.sh + 1, (c.w + 2 * c.pw - c.kw) / c.sw + 1};
  q.weight.resize(static_cast<std::size_t>(s.weight_count()));
  for (auto& v : q.weight) v = static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
  q.requant.resize(static_cast<std::size_t>(c.out_ch));
  for (auto& r : q.requant) {
    r.bias = static_cast<std::int32_t>(rng.below(20001)) - 10000;
    r.shift = static_cast<int>(rng.below(14)) - 2;
    r.relu = rng.below(2) == 1;
  }
  return q;
}

// Independent reference: im2col in double via the float executor's conv2d
// on exact integer values (products and sums are exact in double here only
// if we go through double, so the accumulation is redone in double).
Int8Tensor reference_stage(const Int8Tensor& x, const QStage& q) {
  const auto& s = q.shape;
  FloatTensor xf(x.n, x.c, x.h, x.w);
  for (std::size_t i = 0; i < x.data.size(); ++i) xf.data[i] = x.data[i];
  // Split weights into exact hi/lo float parts would be overkill: accumulators
  // stay below 2^24 for these sizes (checked), so float GEMM is exact.
  std::vector<float> wf(q.weight.begin(), q.weight.end());
  const FloatTensor acc = conv2d(xf, wf.data(), nullptr, s.out_ch, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.groups);
  Int8Tensor y(acc.n, acc.c, acc.h, acc.w);
  for (std::int64_t n = 0; n < acc.n; ++n)
    for (std::int64_t o = 0; o < acc.c; ++o)
      for (std::int64_t p = 0; p < acc.h * acc.w; ++p) {
        const std::size_t e = acc.index(n, o, 0, 0) + static_cast<std::size_t>(p);
        const double a = acc.data[e];
        EXPECT_LT(std::fabs(a), 16777216.0);
        y.data[e] = requantize(static_cast<std::int64_t>(a), q.requant[static_cast<std::size_t>(o)]);
      }
  return y;
}

class GoldenStage : public testing::TestWithParam<StageCase> {};

TEST_P(GoldenStage, MatchesIm2colReference) {
  Rng rng(17);
  for (int rep = 0; rep < 3; ++rep) {
    const QStage q = random_stage(GetParam(), rng);
    const Int8Tensor x = random_int8(2, GetParam().in_ch, GetParam().h, GetParam().w, rng);
    EXPECT_EQ(golden::run_stage(x, q), reference_stage(x, q));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GoldenStage,
                         testing::Values(StageCase{3, 4, 3, 3, 1, 1, 1, 1, 1, 7, 6},    // 3x3 same
                                         StageCase{4, 5, 3, 3, 2, 2, 1, 1, 1, 9, 8},    // stride 2
                                         StageCase{6, 6, 3, 3, 1, 1, 1, 1, 6, 5, 5},    // depthwise
                                         StageCase{4, 6, 3, 3, 1, 2, 0, 1, 2, 6, 7},    // grouped, asym stride
                                         StageCase{5, 3, 1, 1, 1, 1, 0, 0, 1, 4, 4},    // 1x1
                                         StageCase{4, 4, 1, 3, 1, 2, 0, 1, 1, 5, 9},    // 1xk (svd-spatial 1)
                                         StageCase{4, 4, 3, 1, 2, 1, 1, 0, 4, 9, 5},    // kx1 depthwise (cpd 2)
                                         StageCase{2, 3, 5, 5, 1, 1, 2, 2, 1, 6, 6}));  // 5x5

// A quantised network tracks its float twin: calibration and per-layer
// exponents are sane, and the top-1 class mostly agrees.
TEST(GoldenNetwork, TracksFloatOnTinyNets) {
  for (const char* spec : {"tiny", "tiny-dw"}) {
    const auto net = mixtd::net::build_zoo(spec, true);
    Rng rng(3);
    FloatTensor x(32, net.input_shape);
    for (auto& v : x.data) v = static_cast<float>(rng.normal());
    const QNetwork q = quantize_network(net, {}, x);
    const FloatTensor yf = run_float(net, x);
    const Int8Tensor yq = golden::run_network(q, quantize_tensor(x, q.input_exp));
    const FloatTensor yd = dequantize_tensor(yq, q.layers.back().out_exp);
    double err = 0, ref = 0;
    int agree = 0;
    for (std::int64_t n = 0; n < x.n; ++n) {
      std::int64_t af = 0, aq = 0;
      for (std::int64_t c = 0; c < yf.c; ++c) {
        const auto e = yf.index(n, c, 0, 0);
        err += (yf.data[e] - yd.data[e]) * (yf.data[e] - yd.data[e]);
        ref += yf.data[e] * yf.data[e];
        if (yf.data[e] > yf.data[yf.index(n, af, 0, 0)]) af = c;
        if (yd.data[e] > yd.data[yd.index(n, aq, 0, 0)]) aq = c;
      }
      agree += af == aq;
    }
    EXPECT_LT(std::sqrt(err / ref), 0.1) << spec;
    EXPECT_GE(agree, 26) << spec;
  }
}

TEST(GoldenNetwork, ReluIsFusedIntoProducers) {
  const auto net = mixtd::net::build_zoo("tiny", true);
  FloatTensor x(2, net.input_shape, 0.5f);
  const QNetwork q = quantize_network(net, {}, x);
  int identities = 0;
  for (const auto& l : q.layers) {
    if (l.kind == QKind::Identity) ++identities;
    if (l.name == "conv1") {
      EXPECT_TRUE(l.relu);
    }
    if (l.name == "conv3") {
      EXPECT_FALSE(l.relu);  // feeds the add, not a ReLU
    }
    if (l.name == "add1") {
      EXPECT_TRUE(l.relu);
    }
  }
  EXPECT_EQ(identities, 5);  // relu1..relu5 all fused
}

}  // namespace
