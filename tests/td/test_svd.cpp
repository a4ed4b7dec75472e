// SVD decompositions through the Decomposer: exactness at full rank for both
// reshapes and with grouping, Eckart-Young truncation errors, the √Σ split,
// and the one-SVD-per-(reshape, g1, g2) cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <tuple>

#include "TdTestUtil.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::td {
namespace {

using testing::ConvSpec;
using testing::make_conv;
using testing::norm;
using testing::rel_diff;

// The dense chunk two SVD stages stand for, by the layouts Decompose.h
// documents (naive loops, independent of the library's GEMM path):
//   filter   stage 1 [r, C', kh, kw], stage 2 [N', r, 1, 1]
//   spatial  stage 1 [r, C', 1, kw],  stage 2 [N', r, kh, 1]
std::vector<float> chunk_from_stages(const ChunkFactors& f, TdType type, std::int64_t n, std::int64_t c,
                                     std::int64_t kh, std::int64_t kw, std::int64_t r) {
  const auto& s1 = f.stages.at(0).weight;
  const auto& s2 = f.stages.at(1).weight;
  std::vector<float> w(static_cast<std::size_t>(n * c * kh * kw));
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) {
          double acc = 0;
          for (std::int64_t p = 0; p < r; ++p)
            acc += type == TdType::SvdFilter ? static_cast<double>(s2[a * r + p]) * s1[((p * c + b) * kh + i) * kw + j]
                                             : static_cast<double>(s2[(a * r + p) * kh + i]) * s1[(p * c + b) * kw + j];
          w[((a * c + b) * kh + i) * kw + j] = static_cast<float>(acc);
        }
  return w;
}

// Singular values (double, Eigen) of a chunk under a reshape.
Eigen::VectorXd singular_values(const std::vector<float>& chunk, TdType type, std::int64_t n, std::int64_t c,
                                std::int64_t kh, std::int64_t kw) {
  const bool spatial = type == TdType::SvdSpatial;
  Eigen::MatrixXd m(spatial ? n * kh : n, spatial ? c * kw : c * kh * kw);
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) {
          const double v = chunk[((a * c + b) * kh + i) * kw + j];
          if (spatial)
            m(a * kh + i, b * kw + j) = v;
          else
            m(a, (b * kh + i) * kw + j) = v;
        }
  return Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
}

struct Case {
  TdType type;
  std::int64_t g1, g2;
};

class SvdExact : public ::testing::TestWithParam<Case> {};

TEST_P(SvdExact, FullRankReconstructsChunkByChunk) {
  const auto [type, g1, g2] = GetParam();
  const auto layer = make_conv({.c = 8, .n = 12, .kh = 3, .kw = 2});
  Decomposer dec(layer);
  const Tau tau{type, g1, g2, rank_bound(layer, type, g1, g2)};
  const DecomposedLayer d = dec.decompose(tau);
  ASSERT_EQ(static_cast<std::int64_t>(d.chunks.size()), g1 * g2);
  const std::int64_t n = 12 / g1, c = 8 / g2;
  for (std::int64_t a = 0; a < g1; ++a)
    for (std::int64_t b = 0; b < g2; ++b) {
      const ChunkFactors& f = d.chunk(a, b);
      EXPECT_EQ(f.a, a);
      EXPECT_EQ(f.b, b);
      ASSERT_EQ(f.stages.size(), 2u);
      for (std::size_t s = 0; s < 2; ++s) {
        EXPECT_EQ(f.stages[s].shape.role, d.geometry.stages[s].role);
        EXPECT_EQ(static_cast<std::int64_t>(f.stages[s].weight.size()), f.stages[s].shape.weight_count());
      }
      const auto want = extract_chunk(layer.weight, 12, 8, 3, 2, g1, g2, a, b);
      EXPECT_LT(rel_diff(chunk_from_stages(f, type, n, c, 3, 2, tau.rank), want), 1e-5) << a << "," << b;
    }
  EXPECT_LT(rel_diff(d.reconstruct(), layer.weight), 1e-5);
  EXPECT_LT(dec.relative_error(tau), 1e-5);
  EXPECT_EQ(d.bias, layer.bias);
}

INSTANTIATE_TEST_SUITE_P(Reshapes, SvdExact,
                         ::testing::Values(Case{TdType::SvdFilter, 1, 1}, Case{TdType::SvdSpatial, 1, 1},
                                           Case{TdType::SvdFilter, 3, 2}, Case{TdType::SvdSpatial, 2, 4},
                                           Case{TdType::SvdFilter, 12, 8}));

TEST(Svd, TruncationErrorIsTheDiscardedEnergy) {
  const auto layer = make_conv({.c = 8, .n = 6, .kh = 3, .kw = 3, .seed = 7});
  Decomposer dec(layer);
  const double wn = norm(layer.weight);
  for (const TdType type : {TdType::SvdFilter, TdType::SvdSpatial})
    for (const auto& [g1, g2] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {2, 2}}) {
      std::vector<Eigen::VectorXd> sv;
      for (std::int64_t a = 0; a < g1; ++a)
        for (std::int64_t b = 0; b < g2; ++b)
          sv.push_back(
              singular_values(extract_chunk(layer.weight, 6, 8, 3, 3, g1, g2, a, b), type, 6 / g1, 8 / g2, 3, 3));
      const std::int64_t bound = rank_bound(layer, type, g1, g2);
      for (std::int64_t r = 1; r <= bound; ++r) {
        double tail = 0;
        for (const auto& s : sv) tail += s.tail(s.size() - r).squaredNorm();
        const double want = std::sqrt(tail) / wn;
        const Tau tau{type, g1, g2, r};
        EXPECT_NEAR(dec.relative_error(tau), want, 1e-5 + 1e-4 * want) << tau.str();
        EXPECT_NEAR(rel_diff(dec.decompose(tau).reconstruct(), layer.weight), want, 1e-5 + 1e-4 * want) << tau.str();
      }
    }
}

TEST(Svd, SqrtSigmaIsSplitIntoBothStages) {
  // Row ρ of stage 1 is √σ_ρ vᵀ and column ρ of stage 2 is √σ_ρ u: both have norm² σ_ρ.
  const auto layer = make_conv({.c = 6, .n = 10, .kh = 3, .kw = 3, .seed = 3});
  Decomposer dec(layer);
  const std::int64_t r = 4;
  const auto d = dec.decompose({TdType::SvdFilter, 1, 1, r});
  const auto& s1 = d.chunk(0, 0).stages[0].weight;
  const auto& s2 = d.chunk(0, 0).stages[1].weight;
  const auto sv = singular_values(layer.weight, TdType::SvdFilter, 10, 6, 3, 3);
  for (std::int64_t p = 0; p < r; ++p) {
    double n1 = 0, n2 = 0;
    for (std::int64_t q = 0; q < 6 * 9; ++q) n1 += double(s1[p * 54 + q]) * s1[p * 54 + q];
    for (std::int64_t i = 0; i < 10; ++i) n2 += double(s2[i * r + p]) * s2[i * r + p];
    EXPECT_NEAR(n1, sv(p), 1e-4 * sv(0));
    EXPECT_NEAR(n2, sv(p), 1e-4 * sv(0));
  }
}

TEST(Svd, OneSvdPerReshapeAndGroupingServesEveryRank) {
  const auto layer = make_conv({.c = 8, .n = 8, .kh = 3, .kw = 3});
  Decomposer dec(layer);
  EXPECT_EQ(dec.svds_computed(), 0);
  const std::int64_t bound = rank_bound(layer, TdType::SvdFilter, 2, 4);
  for (std::int64_t r = 1; r <= bound; ++r) {
    dec.decompose({TdType::SvdFilter, 2, 4, r});
    dec.relative_error({TdType::SvdFilter, 2, 4, r});
  }
  EXPECT_EQ(dec.svds_computed(), 8);  // the 2 x 4 chunks, once
  for (std::int64_t r = 1; r <= rank_bound(layer, TdType::SvdSpatial, 1, 1); r += 5)
    dec.decompose({TdType::SvdSpatial, 1, 1, r});
  EXPECT_EQ(dec.svds_computed(), 9);
  dec.decompose({TdType::SvdFilter, 2, 4, 1});  // still cached
  dec.relative_error({TdType::SvdSpatial, 1, 1, 3});
  EXPECT_EQ(dec.svds_computed(), 9);
  dec.decompose({TdType::SvdFilter, 4, 2, 1});  // a new grouping: its 8 chunks
  EXPECT_EQ(dec.svds_computed(), 17);
}

TEST(Svd, ErrorFallsWithRank) {
  const auto layer = make_conv({.c = 16, .n = 16, .kh = 3, .kw = 3});
  Decomposer dec(layer);
  double prev = 1.0 + 1e-6;
  for (std::int64_t r = 1; r <= 16; ++r) {
    const double e = dec.relative_error({TdType::SvdFilter, 1, 1, r});
    EXPECT_LT(e, prev);
    prev = e;
  }
  EXPECT_LT(prev, 1e-5);
}

}  // namespace
}  // namespace mixtd::td
