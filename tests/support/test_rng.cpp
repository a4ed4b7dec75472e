#include <gtest/gtest.h>

#include <cmath>

#include "mixtd/support/Rng.h"

namespace {

TEST(Rng, SameSeedSameStream) {
  mixtd::Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

// Pins the stream so a change of generator (which would silently change
// every zoo weight) fails loudly.
TEST(Rng, StreamIsPinned) {
  mixtd::Rng r(0);
  EXPECT_EQ(r.next_u64(), 0x99ec5f36cb75f2b4ULL);
}

TEST(Rng, NormalHasUnitMoments) {
  mixtd::Rng r(7);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.01);
}

TEST(Rng, UniformInRange) {
  mixtd::Rng r(1);
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform(-2.0, 3.0);
    EXPECT_GE(u, -2.0);
    EXPECT_LT(u, 3.0);
    EXPECT_LT(r.below(7), 7u);
  }
}

}  // namespace
