// CP-ALS on synthetic 4-way tensors: exact recovery of a low-rank tensor,
// ranks far above the tensor's, determinism, and the returned contract
// (unit columns, λ, the reported error equal to the true one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "TdTestUtil.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::td {
namespace {

using Dims = std::array<std::int64_t, 4>;
using testing::rel_diff;

// Σ_ρ λ_ρ a0[:,ρ] ∘ a1[:,ρ] ∘ a2[:,ρ] ∘ a3[:,ρ] from row-major [I_k, r] factors.
std::vector<float> compose(const std::array<std::vector<float>, 4>& f, const std::vector<float>& lambda,
                           const Dims& d) {
  const auto r = static_cast<std::int64_t>(lambda.size());
  std::vector<float> x(static_cast<std::size_t>(d[0] * d[1] * d[2] * d[3]));
  std::size_t o = 0;
  for (std::int64_t i = 0; i < d[0]; ++i)
    for (std::int64_t j = 0; j < d[1]; ++j)
      for (std::int64_t k = 0; k < d[2]; ++k)
        for (std::int64_t l = 0; l < d[3]; ++l) {
          double s = 0;
          for (std::int64_t p = 0; p < r; ++p)
            s += double(lambda[p]) * f[0][i * r + p] * f[1][j * r + p] * f[2][k * r + p] * f[3][l * r + p];
          x[o++] = static_cast<float>(s);
        }
  return x;
}

// A random rank-r tensor with component weights spread over a decade.
std::vector<float> random_low_rank(const Dims& d, std::int64_t r, std::uint64_t seed) {
  Rng rng(seed);
  std::array<std::vector<float>, 4> f;
  for (int k = 0; k < 4; ++k)
    for (std::int64_t i = 0; i < d[k] * r; ++i) f[k].push_back(static_cast<float>(rng.normal()));
  std::vector<float> lambda;
  for (std::int64_t p = 0; p < r; ++p)
    lambda.push_back(static_cast<float>(1.0 + 9.0 * p / std::max<std::int64_t>(1, r - 1)));
  return compose(f, lambda, d);
}

void expect_unit_columns(const CpdResult& res, const Dims& d, std::int64_t r) {
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(static_cast<std::int64_t>(res.factors[k].size()), d[k] * r);
    for (std::int64_t p = 0; p < r; ++p) {
      double n = 0;
      for (std::int64_t i = 0; i < d[k]; ++i) n += double(res.factors[k][i * r + p]) * res.factors[k][i * r + p];
      EXPECT_NEAR(n, 1.0, 1e-5) << "mode " << k << " column " << p;
    }
  }
}

bool all_finite(const CpdResult& res) {
  for (const auto& f : res.factors)
    for (float v : f)
      if (!std::isfinite(v)) return false;
  for (float v : res.lambda)
    if (!std::isfinite(v)) return false;
  return std::isfinite(res.relative_error);
}

TEST(CpAls, RecoversALowRankTensor) {
  const Dims d{16, 12, 3, 3};
  const auto x = random_low_rank(d, 5, 11);
  const CpdResult res = cp_als(x, d, 5, {.max_sweeps = 500, .tolerance = 1e-10});
  EXPECT_LT(res.relative_error, 1e-5);
  EXPECT_LT(rel_diff(compose(res.factors, res.lambda, d), x), 1e-5);
  EXPECT_NEAR(res.relative_error, rel_diff(compose(res.factors, res.lambda, d), x), 1e-6);
  expect_unit_columns(res, d, 5);
  for (float l : res.lambda) EXPECT_GT(l, 0.0f);
}

TEST(CpAls, LeadingModeNeedNotBeFirst) {
  // The largest mode is mode 2; the solver permutes internally and back.
  const Dims d{3, 5, 14, 2};
  const auto x = random_low_rank(d, 3, 5);
  const CpdResult res = cp_als(x, d, 3, {.max_sweeps = 500, .tolerance = 1e-10});
  EXPECT_LT(rel_diff(compose(res.factors, res.lambda, d), x), 1e-5);
  expect_unit_columns(res, d, 3);
}

TEST(CpAls, RankFarAboveTheTensorsStaysFinite) {
  const Dims d{10, 8, 3, 3};
  const auto x = random_low_rank(d, 3, 2);
  const CpdResult res = cp_als(x, d, 40, {.max_sweeps = 100});
  ASSERT_TRUE(all_finite(res));
  EXPECT_LT(res.relative_error, 1e-3);
  EXPECT_NEAR(res.relative_error, rel_diff(compose(res.factors, res.lambda, d), x), 1e-5);
  expect_unit_columns(res, d, 40);
}

// From r = 256 the normal equations go to float first (see CpAls.cpp): the
// same contract must hold there, including far above the tensor's rank.
TEST(CpAls, LargeRankFloatPathRecoversAndStaysFinite) {
  const Dims d{40, 36, 3, 3};
  const auto x = random_low_rank(d, 3, 8);
  const CpdResult res = cp_als(x, d, 300, {.max_sweeps = 10});
  ASSERT_TRUE(all_finite(res));
  EXPECT_LT(res.relative_error, 1e-3);
  EXPECT_NEAR(res.relative_error, rel_diff(compose(res.factors, res.lambda, d), x), 1e-5);
  expect_unit_columns(res, d, 300);
  const CpdResult again = cp_als(x, d, 300, {.max_sweeps = 10});
  EXPECT_EQ(res.factors, again.factors);
}

TEST(CpAls, LargeRankOnFullRankData) {
  const Dims d{64, 48, 3, 3};
  Rng rng(12);
  std::vector<float> x(64 * 48 * 9);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  const CpdResult low = cp_als(x, d, 64, {.max_sweeps = 15});
  const CpdResult high = cp_als(x, d, 256, {.max_sweeps = 15});
  ASSERT_TRUE(all_finite(high));
  EXPECT_LT(high.relative_error, low.relative_error);
  EXPECT_NEAR(high.relative_error, rel_diff(compose(high.factors, high.lambda, d), x), 1e-5);
}

TEST(CpAls, ReportedErrorIsTheTrueErrorOnAHardTensor) {
  // Random (full-rank) data at a low rank: the error is large and must be the real one.
  const Dims d{12, 10, 3, 3};
  Rng rng(9);
  std::vector<float> x(12 * 10 * 9);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  const CpdResult res = cp_als(x, d, 6, {.max_sweeps = 60});
  ASSERT_TRUE(all_finite(res));
  EXPECT_GT(res.relative_error, 0.1);
  EXPECT_LT(res.relative_error, 1.0);
  EXPECT_NEAR(res.relative_error, rel_diff(compose(res.factors, res.lambda, d), x), 1e-5);
}

TEST(CpAls, SeededAndDeterministic) {
  // r = 6 exceeds kh = kw = 3, so modes 2 and 3 get a random fill.
  const Dims d{9, 7, 3, 3};
  const auto x = random_low_rank(d, 4, 3);
  const CpdOptions o{.max_sweeps = 20, .seed = 42};
  const CpdResult a = cp_als(x, d, 6, o), b = cp_als(x, d, 6, o);
  EXPECT_EQ(a.factors, b.factors);
  EXPECT_EQ(a.lambda, b.lambda);
  EXPECT_EQ(a.sweeps, b.sweeps);
  const CpdResult c = cp_als(x, d, 6, {.max_sweeps = 20, .seed = 43});
  EXPECT_NE(a.factors, c.factors);
}

TEST(CpAls, StopsOnToleranceOrSweeps) {
  const Dims d{8, 8, 3, 3};
  const auto x = random_low_rank(d, 2, 4);
  const CpdResult easy = cp_als(x, d, 2, {.max_sweeps = 500, .tolerance = 1e-6});
  EXPECT_TRUE(easy.converged);
  EXPECT_LT(easy.sweeps, 500);
  const CpdResult capped = cp_als(x, d, 2, {.max_sweeps = 3, .tolerance = 0.0});
  EXPECT_FALSE(capped.converged);
  EXPECT_EQ(capped.sweeps, 3);
}

TEST(CpAls, ZeroTensorGivesZeroWeights) {
  const Dims d{4, 3, 3, 3};
  const CpdResult res = cp_als(std::vector<float>(4 * 27, 0.0f), d, 5);
  ASSERT_TRUE(all_finite(res));
  EXPECT_EQ(res.relative_error, 0.0);
  EXPECT_THAT(res.lambda, ::testing::Each(0.0f));
  expect_unit_columns(res, d, 5);
}

TEST(CpAls, RejectsBadInput) {
  const Dims d{2, 2, 2, 2};
  EXPECT_THROW(cp_als(std::vector<float>(15), d, 1), Error);
  EXPECT_THROW(cp_als(std::vector<float>(16), d, 0), Error);
  EXPECT_THROW(cp_als(std::vector<float>(0), Dims{0, 2, 2, 2}, 1), Error);
  std::vector<float> nan(16, 1.0f);
  nan[3] = std::nanf("");
  EXPECT_THROW(cp_als(nan, d, 1), Error);
}

}  // namespace
}  // namespace mixtd::td
