// Strided channel grouping (SPEC "Decomposition"): chunk (a, b) of W is
// W[n ≡ a mod g1, c ≡ b mod g2]. Strided rather than contiguous because a
// stream carries channels in natural order and a group is then every g-th word.
#include <string>

#include "mixtd/support/Error.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::td {

namespace {

// The checks both directions share; `what` names the caller in messages.
void check_grouping(const char* what, std::size_t w_size, std::int64_t n, std::int64_t c, std::int64_t kh,
                    std::int64_t kw, std::int64_t g1, std::int64_t g2, std::int64_t a, std::int64_t b) {
  const std::string where = std::string(what) + ": ";
  require(n > 0 && c > 0 && kh > 0 && kw > 0, where + "dimensions must be positive");
  require(static_cast<std::int64_t>(w_size) == n * c * kh * kw,
          where + "weight has " + std::to_string(w_size) +
              " elements, expected N*C*kh*kw = " + std::to_string(n * c * kh * kw));
  require(g1 >= 1 && n % g1 == 0, where + "g1 = " + std::to_string(g1) + " does not divide N = " + std::to_string(n));
  require(g2 >= 1 && c % g2 == 0, where + "g2 = " + std::to_string(g2) + " does not divide C = " + std::to_string(c));
  require(a >= 0 && a < g1 && b >= 0 && b < g2, where + "chunk (" + std::to_string(a) + ", " + std::to_string(b) +
                                                    ") is outside 0.." + std::to_string(g1 - 1) + " x 0.." +
                                                    std::to_string(g2 - 1));
}

// Calls f(chunk offset, W offset) for every element of chunk (a, b); the
// kh*kw kernel of one (n, c) pair is contiguous in both.
template <class F>
void for_each_chunk_kernel(std::int64_t n, std::int64_t c, std::int64_t kk, std::int64_t g1, std::int64_t g2,
                           std::int64_t a, std::int64_t b, F&& f) {
  const std::int64_t cn = n / g1, cc = c / g2;
  for (std::int64_t i = 0; i < cn; ++i)
    for (std::int64_t j = 0; j < cc; ++j) f((i * cc + j) * kk, ((a + g1 * i) * c + (b + g2 * j)) * kk);
}

}  // namespace

std::vector<float> extract_chunk(const std::vector<float>& w, std::int64_t n, std::int64_t c, std::int64_t kh,
                                 std::int64_t kw, std::int64_t g1, std::int64_t g2, std::int64_t a, std::int64_t b) {
  check_grouping("extract_chunk", w.size(), n, c, kh, kw, g1, g2, a, b);
  const std::int64_t kk = kh * kw;
  std::vector<float> chunk(static_cast<std::size_t>(n / g1 * (c / g2) * kk));
  for_each_chunk_kernel(n, c, kk, g1, g2, a, b, [&](std::int64_t to, std::int64_t from) {
    for (std::int64_t k = 0; k < kk; ++k)
      chunk[static_cast<std::size_t>(to + k)] = w[static_cast<std::size_t>(from + k)];
  });
  return chunk;
}

void scatter_chunk(const std::vector<float>& chunk, std::vector<float>& w, std::int64_t n, std::int64_t c,
                   std::int64_t kh, std::int64_t kw, std::int64_t g1, std::int64_t g2, std::int64_t a, std::int64_t b) {
  check_grouping("scatter_chunk", w.size(), n, c, kh, kw, g1, g2, a, b);
  const std::int64_t kk = kh * kw;
  require(static_cast<std::int64_t>(chunk.size()) == n / g1 * (c / g2) * kk,
          "scatter_chunk: chunk has " + std::to_string(chunk.size()) + " elements, expected " +
              std::to_string(n / g1 * (c / g2) * kk));
  for_each_chunk_kernel(n, c, kk, g1, g2, a, b, [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t k = 0; k < kk; ++k)
      w[static_cast<std::size_t>(to + k)] = chunk[static_cast<std::size_t>(from + k)];
  });
}

}  // namespace mixtd::td
