// Strided channel grouping: chunk (a, b) = W[n ≡ a mod g1, c ≡ b mod g2].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "mixtd/support/Error.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::td {
namespace {

// W[n, c, 0, k] = 100 n + 10 c + k: every element names its own indices.
std::vector<float> labelled(std::int64_t n, std::int64_t c, std::int64_t kk) {
  std::vector<float> w;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t k = 0; k < kk; ++k) w.push_back(static_cast<float>(100 * i + 10 * j + k));
  return w;
}

TEST(Grouping, ChunkIsStridedInNaturalOrder) {
  // W [4, 6, 1, 2], g1 = 2, g2 = 3: chunk (1, 2) holds n ∈ {1, 3}, c ∈ {2, 5}.
  const auto w = labelled(4, 6, 2);
  const auto chunk = extract_chunk(w, 4, 6, 1, 2, 2, 3, 1, 2);
  EXPECT_THAT(chunk, ::testing::ElementsAre(120, 121, 150, 151, 320, 321, 350, 351));
  // Chunk (0, 0): n ∈ {0, 2}, c ∈ {0, 3}.
  EXPECT_THAT(extract_chunk(w, 4, 6, 1, 2, 2, 3, 0, 0), ::testing::ElementsAre(0, 1, 30, 31, 200, 201, 230, 231));
}

TEST(Grouping, NoGroupingIsTheIdentity) {
  const auto w = labelled(3, 5, 4);
  EXPECT_EQ(extract_chunk(w, 3, 5, 2, 2, 1, 1, 0, 0), w);
}

TEST(Grouping, ScatterInvertsExtractAndCoversEveryElementOnce) {
  const std::int64_t n = 6, c = 8, kh = 3, kw = 2, g1 = 3, g2 = 4;
  std::vector<float> w(static_cast<std::size_t>(n * c * kh * kw));
  std::iota(w.begin(), w.end(), 1.0f);
  std::vector<float> back(w.size(), 0.0f), hits(w.size(), 0.0f);
  for (std::int64_t a = 0; a < g1; ++a)
    for (std::int64_t b = 0; b < g2; ++b) {
      const auto chunk = extract_chunk(w, n, c, kh, kw, g1, g2, a, b);
      ASSERT_EQ(static_cast<std::int64_t>(chunk.size()), n / g1 * (c / g2) * kh * kw);
      scatter_chunk(chunk, back, n, c, kh, kw, g1, g2, a, b);
      // Count visits: read this chunk's counters, bump, write back.
      auto count = extract_chunk(hits, n, c, kh, kw, g1, g2, a, b);
      for (auto& v : count) v += 1.0f;
      scatter_chunk(count, hits, n, c, kh, kw, g1, g2, a, b);
    }
  EXPECT_EQ(back, w);
  EXPECT_THAT(hits, ::testing::Each(1.0f));
}

TEST(Grouping, RejectsBadArguments) {
  const auto w = labelled(4, 6, 1);
  EXPECT_THROW(extract_chunk(w, 4, 6, 1, 1, 3, 1, 0, 0), Error);  // 3 ∤ 4
  EXPECT_THROW(extract_chunk(w, 4, 6, 1, 1, 1, 4, 0, 0), Error);  // 4 ∤ 6
  EXPECT_THROW(extract_chunk(w, 4, 6, 1, 1, 2, 3, 2, 0), Error);  // a out of range
  EXPECT_THROW(extract_chunk(w, 4, 6, 1, 2, 1, 1, 0, 0), Error);  // size mismatch
  std::vector<float> out(w.size());
  EXPECT_THROW(scatter_chunk(std::vector<float>(5), out, 4, 6, 1, 1, 2, 3, 0, 0), Error);
}

}  // namespace
}  // namespace mixtd::td
