// Edge cases of the BFP8 rules (Bfp8.h): rounding ties, saturation,
// negative shifts, exponent choice, average pooling, exponent alignment.
#include <gtest/gtest.h>

#include "mixtd/numerics/Bfp8.h"

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
  EXPECT_EQ(round_shift(1, 1), 1);    // 0.5 -> 1
  EXPECT_EQ(round_shift(-1, 1), 0);   // -0.5 -> 0
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
  EXPECT_EQ(requantize(10, Requant{6, 2, false}), 4);    // (10 + 6) / 4 = 4
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

}  // namespace
