#include <algorithm>
#include <cmath>

#include "mixtd/numerics/Bfp8.h"

namespace mixtd::numerics {

namespace {

// ⌊x·s + ½⌋ clamped to [lo, hi], as a float mantissa. Written so that GCC
// vectorises the loops below (bench_nn BM_Forward128/bfp8:1): ⌊v⌋ by
// truncation after a clamp that keeps the int in range, the clamps as plain
// selects on run-time bounds (std::min/max, std::floor, or bounds GCC
// propagates as constants leave control flow or a libm call in the loop, and
// the scalar loop is 30x slower); lo1 = lo − 1, hi1 = hi + 1.
[[gnu::always_inline]] inline float round_clamp1(float x, float s, float lo, float hi, float lo1, float hi1) {
  float v = x * s + 0.5f;
  v = v < lo1 ? lo1 : v;
  v = v > hi1 ? hi1 : v;
  const auto t = static_cast<std::int32_t>(v);
  const std::int32_t f = t - (static_cast<float>(t) > v);
  float r = static_cast<float>(f);
  r = r < lo ? lo : r;
  return r > hi ? hi : r;
}

// An AVX2 clone, chosen at load time, doubles the width where the CPU has it.
[[gnu::target_clones("avx2", "default")]] void round_clamp(const float* x, float* y, std::int64_t n, float s, float inv,
                                                           float lo, float hi) {
  const float lo1 = lo - 1.0f, hi1 = hi + 1.0f;
  for (std::int64_t i = 0; i < n; ++i) y[i] = round_clamp1(x[i], s, lo, hi, lo1, hi1) * inv;
}

// The same per value, summed over `groups` consecutive runs of `width`
// values at each of `positions`: integers, so the sum is exact in any order.
[[gnu::target_clones("avx2", "default")]] void round_clamp_sum(const float* x, float* y, std::int64_t positions,
                                                               std::int64_t groups, std::int64_t width, float s,
                                                               float inv, float lo, float hi) {
  const float lo1 = lo - 1.0f, hi1 = hi + 1.0f;
  for (std::int64_t p = 0; p < positions; ++p) {
    float* out = y + p * width;
    for (std::int64_t j = 0; j < width; ++j) out[j] = 0.0f;
    for (std::int64_t b = 0; b < groups; ++b) {
      const float* in = x + (p * groups + b) * width;
      for (std::int64_t j = 0; j < width; ++j) out[j] += round_clamp1(in[j], s, lo, hi, lo1, hi1);
    }
    for (std::int64_t j = 0; j < width; ++j) out[j] *= inv;
  }
}

}  // namespace

void fake_quantize_group_sum(const float* x, float* y, std::int64_t positions, std::int64_t groups, std::int64_t width,
                             int e) {
  round_clamp_sum(x, y, positions, groups, width, std::ldexp(1.0f, -e), std::ldexp(1.0f, e),
                  static_cast<float>(kMantissaMin), static_cast<float>(kMantissaMax));
}

void fake_quantize(const float* x, float* y, std::int64_t n, int e, bool relu) {
  round_clamp(x, y, n, std::ldexp(1.0f, -e), std::ldexp(1.0f, e), relu ? 0.0f : static_cast<float>(kMantissaMin),
              static_cast<float>(kMantissaMax));
}

}  // namespace mixtd::numerics
