// BFP8: the one definition of mixtd's integer arithmetic (SPEC "Numbers").
//
// Every model follows this header bit for bit: the golden executor, the
// SystemC modules, the LibTorch fake-quant path and the RTL (whose
// requantiser is written from the comments here).
//
// A block-floating-point value is an int8 mantissa m ∈ [-127, 127] (−128 is
// never produced: the format is symmetric) times 2^e, with e shared by a
// block: per output channel for each weight factor, per tensor for
// activations (calibrated on a batch).
//
// One rounding rule everywhere: round half up, i.e. ⌊x + ½⌋ (ties go toward
// +∞: 2.5 → 3, −2.5 → −2). In hardware: add 2^(s−1), arithmetic shift right
// by s. Saturation clamps to [−127, 127].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mixtd::numerics {

inline constexpr int kMantissaMax = 127;
inline constexpr int kMantissaMin = -127;
// Exponent given to an all-zero block (any value works; this one keeps
// shifts small).
inline constexpr int kZeroBlockExponent = -7;
// Largest |shift| a requantiser or exponent aligner supports. Shifts beyond
// are clamped by calibration (quantise.cpp) so that hardware needs no wider
// shifter.
inline constexpr int kMaxShift = 31;

// Saturates to the int8 mantissa range.
constexpr std::int8_t saturate_int8(std::int64_t v) {
  return static_cast<std::int8_t>(std::clamp<std::int64_t>(v, kMantissaMin, kMantissaMax));
}

// ⌊v / 2^s + ½⌋ for s > 0 (arithmetic shift, round half up); v · 2^(−s) for
// s ≤ 0. 64-bit so left shifts of int32 accumulators cannot wrap.
constexpr std::int64_t round_shift(std::int64_t v, int s) {
  if (s > 0) {
    s = std::min(s, 62);
    return (v + (std::int64_t{1} << (s - 1))) >> s;
  }
  if (s < 0) {
    const int l = std::min(-s, 31);
    return v * (std::int64_t{1} << l);
  }
  return v;
}

// The smallest exponent e such that amax / 2^e ≤ 127, i.e. the block's
// largest magnitude fits the mantissa. amax = 0 gives kZeroBlockExponent.
inline int block_exponent(double amax) {
  if (!(amax > 0.0) || !std::isfinite(amax)) return kZeroBlockExponent;
  int e = static_cast<int>(std::ceil(std::log2(amax / kMantissaMax)));
  // log2 rounding can be off by one near powers of two: fix it exactly.
  while (std::ldexp(amax, -e) > kMantissaMax) ++e;
  while (std::ldexp(amax, -(e - 1)) <= kMantissaMax) --e;
  return e;
}

// How far amax is, relatively, from the nearest value at which
// block_exponent changes (kMantissaMax·2^k): an executor whose float sums
// differ in the last bits from run_float's may use its own maximum only
// when this distance is well above its rounding error.
inline double exponent_boundary_distance(double amax) {
  if (!(amax > 0.0) || !std::isfinite(amax)) return 1.0;
  const double k = std::round(std::log2(amax / kMantissaMax));
  return std::fabs(amax / std::ldexp(static_cast<double>(kMantissaMax), static_cast<int>(k)) - 1.0);
}

// x as a mantissa at exponent e: saturate(⌊x / 2^e + ½⌋).
inline std::int8_t quantize(double x, int e) {
  const double scaled = std::floor(std::ldexp(x, -e) + 0.5);
  return saturate_int8(static_cast<std::int64_t>(std::clamp(scaled, -1e18, 1e18)));
}

inline float dequantize(std::int64_t m, int e) { return static_cast<float>(std::ldexp(static_cast<double>(m), e)); }

// The LibTorch fake-quant path's activation rounding, in place of five
// tensor passes: y = clamp(⌊x·2^−e + ½⌋, relu ? 0 : −127, 127)·2^e with the
// + ½ rounded in float32 as torch rounds it (x·2^−e is exact). It differs
// from dequantize(quantize(x, e), e) only where float32 cannot hold x·2^−e
// + ½ (|x·2^−e| within 2^−24 of a tie), as the fake-quant path always has.
void fake_quantize(const float* x, float* y, std::int64_t n, int e, bool relu);

// The group adder's input side in the fake-quant path: at each of
// `positions`, y[j] = Σ_b fake_quantize(x[b·width + j], e) over `groups`
// partials of `width` channels (channels-last), exact in any order because
// the quantised partials are integers times 2^e.
void fake_quantize_group_sum(const float* x, float* y, std::int64_t positions, std::int64_t groups, std::int64_t width,
                             int e);

// A bias in accumulator scale 2^e_acc (e_acc = weight exponent + input
// exponent), as the int32 the requantiser adds: ⌊b / 2^e_acc + ½⌋ clamped to
// int32.
inline std::int32_t quantize_bias(double b, int e_acc) {
  const double scaled = std::floor(std::ldexp(b, -e_acc) + 0.5);
  return static_cast<std::int32_t>(std::clamp(scaled, static_cast<double>(std::numeric_limits<std::int32_t>::min()),
                                              static_cast<double>(std::numeric_limits<std::int32_t>::max())));
}

// The requantiser at the end of every stage, per output channel:
//   acc (int32, scale 2^e_acc)  →  saturate(relu?(round_shift(acc + bias, shift)))
// with shift = e_out − e_acc. The sum acc + bias is formed in 64 bits.
struct Requant {
  std::int32_t bias = 0;
  int shift = 0;
  bool relu = false;
};

constexpr std::int8_t requantize(std::int64_t acc, const Requant& r) {
  std::int64_t v = round_shift(acc + r.bias, r.shift);
  if (r.relu && v < 0) v = 0;
  return saturate_int8(v);
}

// Exponent alignment for Add (and the group add of a grouped layer): input i
// (exponent e_i) is shifted left by e_i − e_min into a common int32 scale
// 2^e_min; the sum then goes through requantize() with shift = e_out − e_min.
constexpr std::int64_t align(std::int8_t m, int e, int e_min) { return round_shift(m, -(e - e_min)); }

// Average pooling keeps the input exponent; the mean of `count` mantissas is
// a fixed-point multiply: ⌊sum · M / 2^24 + ½⌋ with M = ⌊(2^24 + ⌊count/2⌋) / count⌋.
inline constexpr int kAvgShift = 24;
constexpr std::int64_t avg_multiplier(std::int64_t count) {
  return ((std::int64_t{1} << kAvgShift) + count / 2) / count;
}
constexpr std::int8_t average(std::int64_t sum, std::int64_t count) {
  return saturate_int8(round_shift(sum * avg_multiplier(count), kAvgShift));
}

}  // namespace mixtd::numerics
