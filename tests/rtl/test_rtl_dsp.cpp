// The packed MAC array (issue 20, rtl/lib/mixtd_mac_array.sv): two int8
// products per DSP48E2 (WP486), summed down cascades of up to 8 slices, must
// stay exact. Verilated arrays against the integer sums:
//   pair   — P_IN = P_OUT = FINE = 1 (one packed slice): every int8 wa, wb, x,
//            −128 included (2^24 points);
//   chain8 — P_IN = 8, P_OUT = 3: one full chain of 8 packed slices and the
//            unpaired third unit, at the extremes ±127 in every sign pattern,
//            and random mantissas; all −128 breaks the chain's bound (the
//            documented limit: mantissas are −127…127), the pair does not;
//   chain9 — P_IN = 3, P_OUT = 2, FINE = 3: two chains (8 + 1) per unit.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "Vdsp_chain8.h"
#include "Vdsp_chain9.h"
#include "Vdsp_pair.h"
#include "mixtd/support/Rng.h"
#include "verilated.h"

namespace {

template <typename T>
requires std::is_integral_v<T>
void put(T& sig, int i, std::int8_t v) {
  using U = std::make_unsigned_t<T>;
  const U mask = static_cast<U>(U{0xff} << (8 * i));
  sig = static_cast<T>((static_cast<U>(sig) & ~mask) | static_cast<U>(U{static_cast<std::uint8_t>(v)} << (8 * i)));
}
template <std::size_t N>
void put(VlWide<N>& sig, int i, std::int8_t v) {
  std::uint32_t& w = sig[static_cast<std::size_t>(i / 4)];
  const int s = 8 * (i % 4);
  w = (w & ~(0xffu << s)) | (static_cast<std::uint32_t>(static_cast<std::uint8_t>(v)) << s);
}
template <typename T>
requires std::is_integral_v<T> std::int32_t sum_of(const T& sig, int l) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sig) >> (32 * l)));
}
template <std::size_t N>
std::int32_t sum_of(const VlWide<N>& sig, int l) {
  return static_cast<std::int32_t>(sig[static_cast<std::size_t>(l)]);
}

// One array, its lanes as mixtd_mac_array documents them.
template <typename Model>
struct Array {
  int p_in, p_out, fine;
  std::unique_ptr<VerilatedContext> ctx = std::make_unique<VerilatedContext>();
  std::unique_ptr<Model> m = std::make_unique<Model>(ctx.get());

  // x[n·P_IN + m], w[(l·P_IN + m)·FINE + n]; returns the P_OUT sums after
  // the array's one register stage.
  std::vector<std::int32_t> run(const std::vector<std::int8_t>& x, const std::vector<std::int8_t>& w) {
    for (int i = 0; i < p_in * fine; ++i) put(m->x, i, x[static_cast<std::size_t>(i)]);
    for (int i = 0; i < p_out * p_in * fine; ++i) put(m->w, i, w[static_cast<std::size_t>(i)]);
    m->clk = 0;
    m->eval();
    m->clk = 1;
    m->eval();
    std::vector<std::int32_t> s;
    for (int l = 0; l < p_out; ++l) s.push_back(sum_of(m->sum, l));
    return s;
  }
  std::vector<std::int32_t> expected(const std::vector<std::int8_t>& x, const std::vector<std::int8_t>& w) const {
    std::vector<std::int32_t> s(static_cast<std::size_t>(p_out), 0);
    for (int l = 0; l < p_out; ++l)
      for (int mm = 0; mm < p_in; ++mm)
        for (int n = 0; n < fine; ++n)
          s[static_cast<std::size_t>(l)] +=
              x[static_cast<std::size_t>(n * p_in + mm)] * w[static_cast<std::size_t>((l * p_in + mm) * fine + n)];
    return s;
  }
};

TEST(RtlDspPacking, OnePackedSliceIsExactForEveryInt8Pair) {
  Array<Vdsp_pair> a{1, 2, 1};
  for (int wa = -128; wa <= 127; ++wa)
    for (int wb = -128; wb <= 127; ++wb)
      for (int x = -128; x <= 127; ++x) {
        const auto s =
            a.run({static_cast<std::int8_t>(x)}, {static_cast<std::int8_t>(wa), static_cast<std::int8_t>(wb)});
        if (s[0] != wa * x || s[1] != wb * x)
          FAIL() << "wa " << wa << " wb " << wb << " x " << x << ": " << s[0] << ", " << s[1];
      }
}

// Every lane's wa, wb and x at ±e with the given signs (the four sign
// combinations of the two products, each way round for x).
std::pair<std::vector<std::int8_t>, std::vector<std::int8_t>> extremes(int lanes, int p_out, int e, int sa, int sb,
                                                                       int sx) {
  std::vector<std::int8_t> x(static_cast<std::size_t>(lanes), static_cast<std::int8_t>(sx * e));
  std::vector<std::int8_t> w;
  for (int l = 0; l < p_out; ++l)
    for (int i = 0; i < lanes; ++i) w.push_back(static_cast<std::int8_t>((l % 2 == 0 ? sa : sb) * e));
  return {x, w};
}

TEST(RtlDspPacking, ChainOfEightIsExactAtTheMantissaExtremes) {
  Array<Vdsp_chain8> a{8, 3, 1};
  for (int sa : {1, -1})
    for (int sb : {1, -1})
      for (int sx : {1, -1}) {
        const auto [x, w] = extremes(8, 3, 127, sa, sb, sx);
        EXPECT_EQ(a.run(x, w), a.expected(x, w)) << "signs " << sa << ' ' << sb << ' ' << sx;
      }
  // Every sign pattern of the 8 lanes' x under ±127 weights.
  for (int pattern = 0; pattern < 256; ++pattern)
    for (int sa : {1, -1})
      for (int sb : {1, -1}) {
        auto [x, w] = extremes(8, 3, 127, sa, sb, 1);
        for (int i = 0; i < 8; ++i)
          if ((pattern >> i) & 1) x[static_cast<std::size_t>(i)] = -127;
        ASSERT_EQ(a.run(x, w), a.expected(x, w)) << "pattern " << pattern;
      }
}

TEST(RtlDspPacking, MinusOneTwentyEightBreaksOnlyAFullChain) {
  // 8·(−128)·(−128) = 2^17 leaves the packed low field (|Sa| ≤ 2^17 − 1):
  // the packed units are wrong, the unpaired third is not. Mantissas never
  // reach −128 (SPEC: symmetric −127…127), so chains of 8 are safe; a pair
  // alone is exact at −128 (OnePackedSliceIsExactForEveryInt8Pair).
  Array<Vdsp_chain8> a{8, 3, 1};
  const auto [x, w] = extremes(8, 3, 128, -1, -1, -1);
  const auto s = a.run(x, w);
  const auto e = a.expected(x, w);
  EXPECT_EQ(e[0], 131072);
  EXPECT_NE(s[0], e[0]);
  EXPECT_NE(s[1], e[1]);
  EXPECT_EQ(s[2], e[2]);
  // Seven lanes at −128 and one at 127 stay inside the field.
  auto [x7, w7] = extremes(8, 3, 128, -1, -1, -1);
  x7[7] = 127;
  EXPECT_EQ(a.run(x7, w7), a.expected(x7, w7));
}

template <typename Model>
void random_mantissas(Array<Model>& a, std::uint64_t seed) {
  mixtd::Rng rng(seed);
  const auto mantissa = [&] { return static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127); };
  for (int t = 0; t < 100000; ++t) {
    std::vector<std::int8_t> x, w;
    for (int i = 0; i < a.p_in * a.fine; ++i) x.push_back(mantissa());
    for (int i = 0; i < a.p_out * a.p_in * a.fine; ++i) w.push_back(mantissa());
    ASSERT_EQ(a.run(x, w), a.expected(x, w)) << "trial " << t;
  }
}

TEST(RtlDspPacking, RandomMantissasThroughOneAndTwoChains) {
  Array<Vdsp_chain8> a8{8, 3, 1};
  random_mantissas(a8, 20);
  Array<Vdsp_chain9> a9{3, 2, 3};
  random_mantissas(a9, 21);
}

}  // namespace
