#include <cmath>
// Predictor metrics against values worked out by hand.
#include <gtest/gtest.h>

#include "mixtd/search/Metrics.h"
#include "mixtd/support/Error.h"

namespace {

using mixtd::search::accuracy;

TEST(Metrics, RelativeErrorsAndShares) {
  // errors +10%, −5%, 0%, +20%
  const auto r = accuracy({110, 95, 100, 120}, {100, 100, 100, 100.0});
  EXPECT_NEAR(r.mape, (0.10 + 0.05 + 0 + 0.20) / 4, 1e-12);
  EXPECT_NEAR(r.rmspe, std::sqrt((0.01 + 0.0025 + 0 + 0.04) / 4), 1e-12);
  EXPECT_NEAR(r.within5, 0.5, 1e-12);    // −5% and 0%
  EXPECT_NEAR(r.within10, 0.75, 1e-12);  // and +10%
}

TEST(Metrics, RankCorrelations) {
  const auto same = accuracy({1, 2, 3, 4}, {10, 20, 30, 40.0});
  EXPECT_DOUBLE_EQ(same.kendall, 1.0);
  EXPECT_DOUBLE_EQ(same.spearman, 1.0);
  const auto reversed = accuracy({4, 3, 2, 1}, {10, 20, 30, 40.0});
  EXPECT_DOUBLE_EQ(reversed.kendall, -1.0);
  EXPECT_DOUBLE_EQ(reversed.spearman, -1.0);
  // One swapped pair of six: (6 − 1 − 1) / 6 concordant minus discordant.
  const auto one = accuracy({1, 3, 2, 4}, {10, 20, 30, 40.0});
  EXPECT_NEAR(one.kendall, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(one.spearman, 1 - 6.0 * 2 / (4 * 15), 1e-12);  // 1 − 6Σd²/(n(n²−1))
}

TEST(Metrics, BadInputIsRefused) {
  EXPECT_THROW(accuracy({1, 2}, {1.0}), mixtd::Error);
  EXPECT_THROW(accuracy({1}, {1.0}), mixtd::Error);
  EXPECT_THROW(accuracy({1, 2}, {0, 1.0}), mixtd::Error);
}

}  // namespace
