// The float reference executor against direct loops.
#include <gtest/gtest.h>

#include "mixtd/numerics/Reference.h"
#include "mixtd/support/Rng.h"

using namespace mixtd::numerics;

namespace {

TEST(Reference, Conv2dMatchesDirectLoops) {
  mixtd::Rng rng(5);
  struct Case {
    std::int64_t c, n, k, s, p, g, h, w;
  };
  for (const Case cs : {Case{3, 4, 3, 1, 1, 1, 6, 7}, Case{4, 6, 3, 2, 1, 2, 9, 8}, Case{5, 5, 3, 1, 0, 5, 5, 5}}) {
    FloatTensor x(2, cs.c, cs.h, cs.w);
    for (auto& v : x.data) v = static_cast<float>(rng.normal());
    std::vector<float> w(static_cast<std::size_t>(cs.n * (cs.c / cs.g) * cs.k * cs.k)),
        b(static_cast<std::size_t>(cs.n));
    for (auto& v : w) v = static_cast<float>(rng.normal());
    for (auto& v : b) v = static_cast<float>(rng.normal());
    const FloatTensor y = conv2d(x, w.data(), b.data(), cs.n, cs.k, cs.k, cs.s, cs.s, cs.p, cs.p, cs.g);
    const std::int64_t cin = cs.c / cs.g, cout = cs.n / cs.g;
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t o = 0; o < cs.n; ++o)
        for (std::int64_t i = 0; i < y.h; ++i)
          for (std::int64_t j = 0; j < y.w; ++j) {
            double acc = b[static_cast<std::size_t>(o)];
            for (std::int64_t c = 0; c < cin; ++c)
              for (std::int64_t u = 0; u < cs.k; ++u)
                for (std::int64_t v = 0; v < cs.k; ++v) {
                  const std::int64_t r = i * cs.s + u - cs.p, q = j * cs.s + v - cs.p;
                  if (r < 0 || r >= cs.h || q < 0 || q >= cs.w) continue;
                  acc += w[static_cast<std::size_t>(((o * cin + c) * cs.k + u) * cs.k + v)] *
                         x.at(n, (o / cout) * cin + c, r, q);
                }
            EXPECT_NEAR(y.at(n, o, i, j), acc, 1e-4);
          }
  }
}

}  // namespace
