// The Decomposer end to end: CPD with grouping chunk by chunk, the decomposed
// stage chains run as convolutions against the dense conv of the
// reconstructed weights, type none, and τ checking.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "TdTestUtil.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::td {
namespace {

using ::testing::AllOf;
using testing::conv2d;
using testing::ConvSpec;
using ::testing::HasSubstr;
using testing::make_conv;
using testing::rel_diff;

// The dense chunk [N', C', kh, kw] of the four CPD stages, by their documented
// layouts: cpd.1 [r, C', 1, 1], cpd.2 [r, 1, kh, 1], cpd.3 [r, 1, 1, kw], cpd.4 [N', r, 1, 1].
std::vector<float> chunk_from_cpd(const ChunkFactors& f, std::int64_t n, std::int64_t c, std::int64_t kh,
                                  std::int64_t kw, std::int64_t r) {
  const auto &s1 = f.stages.at(0).weight, &s2 = f.stages.at(1).weight, &s3 = f.stages.at(2).weight,
             &s4 = f.stages.at(3).weight;
  std::vector<float> w;
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) {
          double acc = 0;
          for (std::int64_t p = 0; p < r; ++p)
            acc += double(s4[a * r + p]) * s1[p * c + b] * s2[p * kh + i] * s3[p * kw + j];
          w.push_back(static_cast<float>(acc));
        }
  return w;
}

// A layer whose every (g1, g2) chunk is exactly of CP rank r.
net::Layer layer_with_low_rank_chunks(std::int64_t g1, std::int64_t g2, std::int64_t r) {
  auto layer = make_conv({.name = "lowrank", .c = 8, .n = 6, .kh = 3, .kw = 2});
  const std::int64_t n = 6 / g1, c = 8 / g2, kh = 3, kw = 2;
  Rng rng(17);
  for (std::int64_t a = 0; a < g1; ++a)
    for (std::int64_t b = 0; b < g2; ++b) {
      std::vector<double> f0(n * r), f1(c * r), f2(kh * r), f3(kw * r);
      for (auto* f : {&f0, &f1, &f2, &f3})
        for (auto& v : *f) v = rng.normal();
      std::vector<float> chunk;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < c; ++j)
          for (std::int64_t k = 0; k < kh; ++k)
            for (std::int64_t l = 0; l < kw; ++l) {
              double s = 0;
              for (std::int64_t p = 0; p < r; ++p) s += f0[i * r + p] * f1[j * r + p] * f2[k * r + p] * f3[l * r + p];
              chunk.push_back(static_cast<float>(s));
            }
      scatter_chunk(chunk, layer.weight, 6, 8, kh, kw, g1, g2, a, b);
    }
  return layer;
}

TEST(Decomposer, GroupedCpdReconstructsChunkByChunk) {
  const std::int64_t g1 = 2, g2 = 4, r = 2;
  const auto layer = layer_with_low_rank_chunks(g1, g2, r);
  Decomposer dec(layer, {.max_sweeps = 1000, .tolerance = 1e-12});
  const Tau tau{TdType::Cpd, g1, g2, r};
  const DecomposedLayer d = dec.decompose(tau);
  ASSERT_EQ(d.chunks.size(), 8u);
  for (std::int64_t a = 0; a < g1; ++a)
    for (std::int64_t b = 0; b < g2; ++b) {
      const ChunkFactors& f = d.chunk(a, b);
      ASSERT_EQ(f.stages.size(), 4u);
      for (std::size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(f.stages[s].shape.role, "cpd." + std::to_string(s + 1));
        EXPECT_EQ(static_cast<std::int64_t>(f.stages[s].weight.size()), f.stages[s].shape.weight_count());
      }
      const auto want = extract_chunk(layer.weight, 6, 8, 3, 2, g1, g2, a, b);
      EXPECT_LT(rel_diff(chunk_from_cpd(f, 3, 2, 3, 2, r), want), 1e-4) << a << "," << b;
    }
  EXPECT_LT(rel_diff(d.reconstruct(), layer.weight), 1e-4);
  EXPECT_LT(dec.relative_error(tau), 1e-4);
}

TEST(Decomposer, CpdErrorMatchesReconstructionAndIsCached) {
  const auto layer = make_conv({.c = 8, .n = 8, .kh = 3, .kw = 3});
  Decomposer dec(layer, {.max_sweeps = 50});
  const Tau tau{TdType::Cpd, 1, 2, 6};
  const auto d1 = dec.decompose(tau);
  const double e = dec.relative_error(tau);
  EXPECT_GT(e, 0.05);
  EXPECT_NEAR(e, rel_diff(d1.reconstruct(), layer.weight), 1e-5);
  const auto d2 = dec.decompose(tau);  // from the cache: bit-identical
  for (std::size_t i = 0; i < d1.chunks.size(); ++i)
    for (std::size_t s = 0; s < 4; ++s) EXPECT_EQ(d1.chunks[i].stages[s].weight, d2.chunks[i].stages[s].weight);
}

TEST(Decomposer, CpdSpreadsLambdaEvenlyOverTheStages) {
  // Unit factors times λ^(1/4) each: per component ρ the four stage vectors
  // (rows of cpd.1..3, column of cpd.4) have the same norm.
  const auto layer = make_conv({.c = 8, .n = 10, .kh = 3, .kw = 3});
  Decomposer dec(layer, {.max_sweeps = 30});
  const std::int64_t r = 7;
  const auto d = dec.decompose({TdType::Cpd, 1, 1, r});
  const auto& st = d.chunk(0, 0).stages;
  for (std::int64_t p = 0; p < r; ++p) {
    auto row_norm = [&](const std::vector<float>& w, std::int64_t len) {
      double s = 0;
      for (std::int64_t i = 0; i < len; ++i) s += double(w[p * len + i]) * w[p * len + i];
      return std::sqrt(s);
    };
    double col4 = 0;
    for (std::int64_t i = 0; i < 10; ++i) col4 += double(st[3].weight[i * r + p]) * st[3].weight[i * r + p];
    col4 = std::sqrt(col4);
    EXPECT_NEAR(row_norm(st[0].weight, 8), col4, 1e-4 * col4);
    EXPECT_NEAR(row_norm(st[1].weight, 3), col4, 1e-4 * col4);
    EXPECT_NEAR(row_norm(st[2].weight, 3), col4, 1e-4 * col4);
  }
}

// Runs every chunk's stage chain on its input group and sums the partials of
// each output group, then adds the bias: the dataflow SPEC describes.
std::vector<float> run_decomposed(const DecomposedLayer& d, const std::vector<float>& x, std::int64_t h, std::int64_t w,
                                  std::int64_t* oh, std::int64_t* ow) {
  const LayerGeometry& g = d.geometry;
  std::vector<float> out;
  for (const ChunkFactors& f : d.chunks) {
    std::vector<float> act;  // input group b: channels c ≡ b mod g2, natural order
    for (std::int64_t k = 0; k < g.chunk_in; ++k) {
      const std::int64_t ch = f.b + g.tau.g2 * k;
      act.insert(act.end(), x.begin() + ch * h * w, x.begin() + (ch + 1) * h * w);
    }
    std::int64_t ch_h = h, ch_w = w;
    for (const StageWeights& s : f.stages) {
      EXPECT_EQ(s.shape.in.h, ch_h);
      EXPECT_EQ(s.shape.in.w, ch_w);
      std::int64_t nh = 0, nw = 0;
      act = conv2d(act, ch_h, ch_w, s.shape, s.weight, &nh, &nw);
      EXPECT_EQ(s.shape.out.h, nh);
      EXPECT_EQ(s.shape.out.w, nw);
      ch_h = nh;
      ch_w = nw;
    }
    *oh = ch_h;
    *ow = ch_w;
    out.resize(static_cast<std::size_t>(g.n * ch_h * ch_w), 0.0f);
    for (std::int64_t k = 0; k < g.chunk_out; ++k) {  // output group a: channels n ≡ a mod g1
      const std::int64_t ch = f.a + g.tau.g1 * k;
      for (std::int64_t i = 0; i < ch_h * ch_w; ++i) out[ch * ch_h * ch_w + i] += act[k * ch_h * ch_w + i];
    }
  }
  for (std::size_t c = 0; c < d.bias.size(); ++c)
    for (std::int64_t i = 0; i < *oh * *ow; ++i) out[c * *oh * *ow + i] += d.bias[c];
  return out;
}

class StageChain : public ::testing::TestWithParam<Tau> {};

TEST_P(StageChain, RunsLikeTheDenseConvOfTheReconstructedWeights) {
  const Tau tau = GetParam();
  // kh != kw and odd input sizes, stride 2, padding 1: a swapped axis or an
  // off-by-one in a stage's stride/padding shows.
  const auto layer = make_conv({.c = 8, .n = 6, .kh = 3, .kw = 2, .s = 2, .p = 1, .h = 9, .w = 7});
  Decomposer dec(layer, {.max_sweeps = 20});
  const DecomposedLayer d = dec.decompose(tau);
  Rng rng(5);
  std::vector<float> x(8 * 9 * 7);
  for (auto& v : x) v = static_cast<float>(rng.normal());

  const StageShape dense = geometry(layer, Tau{}).stages.at(0);
  std::int64_t oh = 0, ow = 0;
  std::vector<float> want = conv2d(x, 9, 7, dense, d.reconstruct(), &oh, &ow);
  for (std::int64_t c = 0; c < 6; ++c)
    for (std::int64_t i = 0; i < oh * ow; ++i) want[c * oh * ow + i] += layer.bias[c];
  EXPECT_EQ(oh, layer.out_shape.h);
  EXPECT_EQ(ow, layer.out_shape.w);

  std::int64_t gh = 0, gw = 0;
  const std::vector<float> got = run_decomposed(d, x, 9, 7, &gh, &gw);
  EXPECT_EQ(gh, oh);
  EXPECT_EQ(gw, ow);
  EXPECT_LT(rel_diff(got, want), 1e-5) << tau.str();
}

INSTANTIATE_TEST_SUITE_P(Types, StageChain,
                         ::testing::Values(Tau{TdType::SvdFilter, 2, 4, 2}, Tau{TdType::SvdSpatial, 2, 4, 4},
                                           Tau{TdType::Cpd, 2, 4, 5}, Tau{TdType::SvdFilter, 1, 1, 5},
                                           Tau{TdType::Cpd, 3, 2, 4}, Tau{}));

TEST(Decomposer, NoneIsTheLayerItself) {
  const auto layer = make_conv({.c = 4, .n = 5, .kh = 3, .kw = 3});
  Decomposer dec(layer);
  const auto d = dec.decompose(Tau{});
  ASSERT_EQ(d.chunks.size(), 1u);
  ASSERT_EQ(d.chunks[0].stages.size(), 1u);
  EXPECT_EQ(d.chunks[0].stages[0].shape.role, "conv");
  EXPECT_EQ(d.chunks[0].stages[0].weight, layer.weight);
  EXPECT_EQ(d.reconstruct(), layer.weight);
  EXPECT_EQ(d.bias, layer.bias);
  EXPECT_EQ(dec.relative_error(Tau{}), 0.0);
  EXPECT_EQ(dec.svds_computed(), 0);
}

TEST(Decomposer, LayerWithoutBiasGivesNoBias) {
  const auto layer = make_conv({.c = 4, .n = 4, .kh = 3, .kw = 3, .bias = false});
  Decomposer dec(layer);
  EXPECT_TRUE(dec.decompose({TdType::SvdFilter, 1, 1, 2}).bias.empty());
}

template <class F>
void expect_error_naming(F&& f, const std::string& layer_name) {
  try {
    f();
    ADD_FAILURE() << "no mixtd::Error thrown";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'" + layer_name + "'"));
  }
}

TEST(Decomposer, IllegalTauThrowsNamingTheLayer) {
  const auto layer = make_conv({.name = "res3a", .c = 6, .n = 4, .kh = 3, .kw = 3});
  Decomposer dec(layer);
  const std::int64_t bound = rank_bound(layer, TdType::SvdFilter, 1, 1);
  for (const Tau& bad : {Tau{TdType::SvdFilter, 3, 1, 1},          // 3 ∤ 4 outputs
                         Tau{TdType::SvdSpatial, 1, 4, 1},         // 4 ∤ 6 inputs
                         Tau{TdType::SvdFilter, 1, 1, 0},          // rank 0
                         Tau{TdType::SvdFilter, 1, 1, bound + 1},  // above the bound
                         Tau{TdType::Cpd, 1, 1, 1000},             // above the CPD bound
                         Tau{TdType::None, 2, 1, 0}}) {            // grouping without decomposition
    SCOPED_TRACE(bad.str());
    expect_error_naming([&] { dec.decompose(bad); }, "res3a");
    expect_error_naming([&] { dec.relative_error(bad); }, "res3a");
  }
  const auto pointwise = make_conv({.name = "proj", .c = 6, .n = 4, .kh = 1, .kw = 1, .p = 0});
  Decomposer pw(pointwise);
  expect_error_naming([&] { pw.decompose({TdType::Cpd, 1, 1, 1}); }, "proj");
  EXPECT_NO_THROW(pw.decompose({TdType::SvdFilter, 1, 1, 2}));
}

// Issue 24: a layer without weights says how a network gets them; a NaN or
// Inf weight is refused naming the layer and index, not as a failed SVD.
TEST(Decomposer, MissingAndNonFiniteWeightsNameTheLayer) {
  auto bare = make_conv({.name = "conv2"});
  bare.weight.clear();
  EXPECT_THAT(
      [&] { Decomposer d(bare); },
      ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("layer 'conv2' has no weights"), HasSubstr("'weights:' line"))));
  for (const float bad : {NAN, INFINITY}) {
    auto layer = make_conv({.name = "conv3", .c = 4, .n = 4, .kh = 3, .kw = 3});
    layer.weight[7] = bad;
    EXPECT_THAT([&] { Decomposer d(layer); },
                ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("layer 'conv3': weight at flat index 7 is"),
                                                      HasSubstr("decomposition needs finite weights"))));
  }
}

TEST(Decomposer, RejectsLayersItCannotDecompose) {
  auto layer = make_conv({.name = "bare"});
  layer.weight.clear();
  expect_error_naming([&] { Decomposer d(layer); }, "bare");
  net::Layer relu;
  relu.name = "act";
  relu.kind = net::LayerKind::ReLU;
  expect_error_naming([&] { Decomposer d(relu); }, "act");
}

}  // namespace
}  // namespace mixtd::td
