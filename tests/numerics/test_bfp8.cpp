// Edge cases of the BFP8 rules (Bfp8.h): rounding ties, saturation,
// negative shifts, exponent choice, average pooling, exponent alignment.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "mixtd/numerics/Bfp8.h"
#include "mixtd/support/Rng.h"

using namespace mixtd::numerics;

namespace {

TEST(Bfp8, RoundShiftTiesGoUp) {
  EXPECT_EQ(round_shift(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(round_shift(-5, 1), -2);  // -2.5 -> -2
  EXPECT_EQ(round_shift(7, 2), 2);    // 1.75 -> 2
  EXPECT_EQ(round_shift(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(round_shift(-6, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(round_shift(-7, 2), -2);  // -1.75 -> -2
  EXPECT_EQ(round_shift(4, 2), 1);
  EXPECT_EQ(round_shift(-4, 2), -1);
  EXPECT_EQ(round_shift(1, 1), 1);   // 0.5 -> 1
  EXPECT_EQ(round_shift(-1, 1), 0);  // -0.5 -> 0
}

TEST(Bfp8, NegativeAndZeroShifts) {
  EXPECT_EQ(round_shift(3, 0), 3);
  EXPECT_EQ(round_shift(3, -2), 12);
  EXPECT_EQ(round_shift(-3, -4), -48);
  // A left shift of a large accumulator does not wrap in 64 bits.
  EXPECT_EQ(round_shift(std::int64_t{1} << 30, -8), std::int64_t{1} << 38);
}

TEST(Bfp8, SaturationIsSymmetric) {
  EXPECT_EQ(saturate_int8(1000), 127);
  EXPECT_EQ(saturate_int8(-1000), -127);  // never -128
  EXPECT_EQ(saturate_int8(-128), -127);
  EXPECT_EQ(saturate_int8(127), 127);
  EXPECT_EQ(requantize(1 << 20, Requant{0, 2, false}), 127);
  EXPECT_EQ(requantize(-(1 << 20), Requant{0, 2, false}), -127);
}

TEST(Bfp8, RequantiseAddsBiasBeforeShiftAndFusesRelu) {
  EXPECT_EQ(requantize(10, Requant{6, 2, false}), 4);     // (10 + 6) / 4 = 4
  EXPECT_EQ(requantize(10, Requant{-20, 2, false}), -2);  // -10 / 4 = -2.5 -> -2
  EXPECT_EQ(requantize(10, Requant{-20, 2, true}), 0);
  EXPECT_EQ(requantize(3, Requant{0, -3, true}), 24);
}

TEST(Bfp8, BlockExponentIsTheSmallestThatFits) {
  EXPECT_EQ(block_exponent(127.0), 0);
  EXPECT_EQ(block_exponent(127.5), 1);
  EXPECT_EQ(block_exponent(254.0), 1);
  EXPECT_EQ(block_exponent(254.1), 2);
  EXPECT_EQ(block_exponent(0.5), -7);  // 0.5 * 2^7 = 64; 2^8 would give 128 > 127
  EXPECT_EQ(block_exponent(0.0), kZeroBlockExponent);
  for (double a : {1e-6, 0.003, 0.7, 1.0, 3.3, 1e4}) {
    const int e = block_exponent(a);
    EXPECT_LE(std::ldexp(a, -e), 127.0) << a;
    EXPECT_GT(std::ldexp(a, -(e - 1)), 127.0) << a;
  }
}

TEST(Bfp8, QuantiseRoundsHalfUpAndSaturates) {
  EXPECT_EQ(quantize(2.5, 0), 3);
  EXPECT_EQ(quantize(-2.5, 0), -2);
  EXPECT_EQ(quantize(0.75, -1), 2);  // 1.5 -> 2
  EXPECT_EQ(quantize(300.0, 0), 127);
  EXPECT_EQ(quantize(-300.0, 0), -127);
  EXPECT_FLOAT_EQ(dequantize(-3, -2), -0.75f);
  EXPECT_EQ(quantize_bias(10.0, -2), 40);
  EXPECT_EQ(quantize_bias(1e30, 0), std::numeric_limits<std::int32_t>::max());
}

TEST(Bfp8, AverageMatchesRoundedMeanOnPoolSizes) {
  // For every pool size the hardware uses, the fixed-point mean equals the
  // exactly rounded mean (half up) for all reachable sums.
  for (std::int64_t count : {4, 9, 16, 49, 64}) {
    for (std::int64_t sum = -127 * count; sum <= 127 * count; ++sum) {
      const std::int64_t exact = static_cast<std::int64_t>(std::floor(static_cast<double>(sum) / count + 0.5));
      ASSERT_EQ(average(sum, count), saturate_int8(exact)) << "sum " << sum << " count " << count;
    }
  }
}

TEST(Bfp8, AlignShiftsToTheSmallerExponent) {
  EXPECT_EQ(align(3, -2, -5), 24);
  EXPECT_EQ(align(-3, -5, -5), -3);
  // a at 2^-2 plus b at 2^-5, output at 2^-3: (3*8 + 5) = 29 at 2^-5 -> 29/4 = 7.25 -> 7
  const std::int64_t s = align(3, -2, -5) + align(5, -5, -5);
  EXPECT_EQ(requantize(s, Requant{0, -3 - -5, false}), 7);
}

// numerics::fake_quantize and its group sum run an AVX2 clone on CPUs with
// AVX2 and the plain code elsewhere (docs/search.md, "Same seed, same
// answer"). Whichever runs here must give the scalar float rounding written
// out below bit for bit — on ties, a float step either side of them,
// saturation, both signs, with and without ReLU, in a length no vector width
// divides — so that a search's BFP8 values do not depend on the clone.
TEST(Bfp8, FakeQuantizeIsTheScalarRoundingWhicheverCloneRuns) {
  std::vector<float> base;
  for (int m = -140; m <= 140; ++m)
    for (const float frac : {0.0f, 0.25f, 0.5f, 0.75f}) {
      const float v = static_cast<float>(m) + frac;
      base.push_back(v);
      base.push_back(std::nextafter(v, -std::numeric_limits<float>::infinity()));
      base.push_back(std::nextafter(v, std::numeric_limits<float>::infinity()));
    }
  mixtd::Rng rng(11);
  for (int i = 0; i < 1001; ++i) base.push_back(static_cast<float>((rng.uniform() - 0.5) * 600.0));
  const auto n = static_cast<std::int64_t>(base.size());
  auto mantissa = [](float x, int e, bool relu) {
    const float r = std::floor(x * std::ldexp(1.0f, -e) + 0.5f);
    return std::fmin(std::fmax(r, relu ? 0.0f : static_cast<float>(kMantissaMin)), static_cast<float>(kMantissaMax));
  };
  for (const int e : {-7, -3, 0, 2})
    for (const bool relu : {false, true}) {
      std::vector<float> x(base.size()), y(base.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(base[i], e);
      fake_quantize(x.data(), y.data(), n, e, relu);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float want = mantissa(x[i], e, relu) * std::ldexp(1.0f, e);
        ASSERT_EQ(std::memcmp(&y[i], &want, sizeof want), 0) << "x " << x[i] << " e " << e << " relu " << relu;
      }
    }
  // Group sums: 3 groups of width 7 at each of n / 21 positions.
  const std::int64_t groups = 3, width = 7, positions = n / (groups * width);
  std::vector<float> y(static_cast<std::size_t>(positions * width));
  fake_quantize_group_sum(base.data(), y.data(), positions, groups, width, -1);
  for (std::int64_t p = 0; p < positions; ++p)
    for (std::int64_t j = 0; j < width; ++j) {
      float want = 0.0f;
      for (std::int64_t b = 0; b < groups; ++b)
        want += mantissa(base[static_cast<std::size_t>((p * groups + b) * width + j)], -1, false);
      want *= 0.5f;
      const float got = y[static_cast<std::size_t>(p * width + j)];
      ASSERT_EQ(std::memcmp(&got, &want, sizeof want), 0) << "position " << p << " lane " << j;
    }
}

}  // namespace
