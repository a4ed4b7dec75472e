// The streaming blocks of rtl/lib (issue 8), Verilated, against the
// SystemC StreamBlock / GlobalAvgPool they twin (models/sc/src/
// StreamBlocks.cpp):
//   * data: every output word, bit for bit, against a C++ reference built
//     from the routing formulas of StreamBlock::run() and the numerics
//     functions (requantize, align, average);
//   * timing: every input and output handshake against a mirror of the
//     SystemC run() loop (two buffered pixels, one beat per port per cycle,
//     an output beat `latency` cycles after the last input beat it needs),
//     fed the same input gaps and output back-pressure. The routing blocks
//     match it cycle for cycle under random stalls; the adders and the
//     global pool match it exactly in free flow and closely under stalls
//     (their SystemC rules free the buffer by when beats will leave, which
//     hardware cannot know; see mixtd_group_add.sv, mixtd_global_avg_pool.sv).
//
// The checkers were shown to fail on broken RTL (all three at once, then
// restored):
//   * mixtd_stream_route without the same-cycle slot release (in_ready
//     ignoring `finishing`): every routing block fails the timing check on
//     its first stalled run (group split a: input beat 6 at cycle 7, the
//     SystemC rule says 6);
//   * mixtd_group_add reading requant[sum_beat * W_OUT] for every lane (the
//     lane offset dropped): data check, word 1 of the first beat;
//   * mixtd_eltwise_add without the pre-shift K: data check of config b
//     (exponents 0/28/5, shift 30) at its second beat.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "Vsb_eadd_a.h"
#include "Vsb_eadd_b.h"
#include "Vsb_eadd_c.h"
#include "Vsb_fork_a.h"
#include "Vsb_fork_b.h"
#include "Vsb_gadd_a.h"
#include "Vsb_gadd_b.h"
#include "Vsb_gap_a.h"
#include "Vsb_gap_b.h"
#include "Vsb_gap_c.h"
#include "Vsb_merge_a.h"
#include "Vsb_merge_b.h"
#include "Vsb_regroup_a.h"
#include "Vsb_regroup_b.h"
#include "Vsb_regroup_c.h"
#include "Vsb_relu_a.h"
#include "Vsb_relu_b.h"
#include "Vsb_split_a.h"
#include "Vsb_split_b.h"
#include "Vsb_split_c.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/support/Rng.h"
#include "verilated.h"

namespace {

namespace nm = mixtd::numerics;
using Cycle = std::int64_t;
using Words = std::vector<std::vector<std::int8_t>>;  // per port, the whole run's words in stream order

// Lane `i` (8 bits, lane 0 lowest) of a Verilated port of any width.
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
requires std::is_integral_v<T> std::int8_t get(const T& sig, int i) {
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint64_t>(sig) >> (8 * i)));
}
template <std::size_t N>
std::int8_t get(const VlWide<N>& sig, int i) {
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(sig[static_cast<std::size_t>(i / 4)] >> (8 * (i % 4))));
}

// ---------------------------------------------------------------------------
// The environment: source q offers beat n from (its previous beat's
// handshake + 1 + gap[q][n]) until taken; sink k is ready in cycle t iff
// ready[k][t] (free flow: no gaps, always ready).
struct Env {
  std::vector<std::vector<int>> gap;
  std::vector<std::vector<char>> ready;
  bool ready_at(std::size_t k, Cycle t) const {
    return t >= static_cast<Cycle>(ready[k].size()) || ready[k][static_cast<std::size_t>(t)];
  }
};

Env make_env(std::size_t ports_in, std::size_t beats_in, std::size_t ports_out, double in_rate, double out_rate,
             std::uint64_t seed) {
  mixtd::Rng rng(seed);
  Env e;
  e.gap.assign(ports_in, std::vector<int>(beats_in, 0));
  e.ready.assign(ports_out, std::vector<char>(50 * beats_in + 2000, 1));
  for (auto& g : e.gap)
    for (int& x : g)
      while (rng.uniform() >= in_rate) ++x;
  for (auto& r : e.ready)
    for (char& x : r) x = rng.uniform() < out_rate;
  return e;
}

struct Times {
  std::vector<std::vector<Cycle>> in, out;  // handshake cycle of each beat, per port
  Cycle last() const {
    Cycle t = -1;
    for (const auto& o : out)
      if (!o.empty()) t = std::max(t, o.back());
    return t;
  }
};

// Runs a Verilated block until every expected output beat left: drives the
// sources and sinks by `env`, checks every output word against `expect`,
// returns the handshake cycles (cycle 0: the first after reset).
template <typename M>
Times run_rtl(M& m, int w_in, int w_out, const Words& in, const Words& expect, const Env& env) {
  const std::size_t np = in.size(), nk = expect.size();
  Times t;
  t.in.resize(np);
  t.out.resize(nk);
  auto tick = [&] {
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  };
  m.rst_n = 0;
  m.in_valid = 0;
  m.out_ready = 0;
  tick();
  tick();
  m.rst_n = 1;
  std::vector<std::size_t> next_in(np, 0), next_out(nk, 0);
  std::vector<Cycle> offer(np, 0);
  for (std::size_t q = 0; q < np; ++q) offer[q] = env.gap[q][0];
  const auto beats_in = in[0].size() / static_cast<std::size_t>(w_in);
  const auto beats_out = expect[0].size() / static_cast<std::size_t>(w_out);
  auto finished = [&] {
    return std::all_of(next_out.begin(), next_out.end(), [&](std::size_t n) { return n == beats_out; });
  };
  for (Cycle cycle = 0; !finished(); ++cycle) {
    if (cycle > 100000) {
      ADD_FAILURE() << "no progress: stuck at cycle " << cycle;
      return t;
    }
    m.clk = 0;
    unsigned valid = 0, ready = 0;
    for (std::size_t q = 0; q < np; ++q)
      if (next_in[q] < beats_in && cycle >= offer[q]) {
        valid |= 1u << q;
        for (int l = 0; l < w_in; ++l)
          put(m.in_data, static_cast<int>(q) * w_in + l,
              in[q][next_in[q] * static_cast<std::size_t>(w_in) + static_cast<std::size_t>(l)]);
      }
    for (std::size_t k = 0; k < nk; ++k)
      if (env.ready_at(k, cycle)) ready |= 1u << k;
    m.in_valid = static_cast<std::uint8_t>(valid);
    m.out_ready = static_cast<std::uint8_t>(ready);
    m.eval();
    for (std::size_t q = 0; q < np; ++q)
      if ((valid >> q & 1u) && (m.in_ready >> q & 1u)) {
        t.in[q].push_back(cycle);
        if (++next_in[q] < beats_in) offer[q] = cycle + 1 + env.gap[q][next_in[q]];
      }
    for (std::size_t k = 0; k < nk; ++k)
      if ((m.out_valid >> k & 1u) && (ready >> k & 1u)) {
        if (next_out[k] >= beats_out) {
          ADD_FAILURE() << "port " << k << ": a beat more than expected at cycle " << cycle;
          return t;
        }
        for (int l = 0; l < w_out; ++l) {
          const std::size_t i = next_out[k] * static_cast<std::size_t>(w_out) + static_cast<std::size_t>(l);
          const std::int8_t got = get(m.out_data, static_cast<int>(k) * w_out + l);
          if (got != expect[k][i]) {
            ADD_FAILURE() << "port " << k << " word " << i << " (beat " << next_out[k] << ", cycle " << cycle
                          << "): RTL " << int{got} << ", reference " << int{expect[k][i]};
            return t;
          }
        }
        t.out[k].push_back(cycle);
        ++next_out[k];
      }
    m.clk = 1;
    m.eval();
  }
  return t;
}

// Compares handshake cycles beat by beat; false at the first difference.
::testing::AssertionResult same_times(const Times& rtl, const Times& ref) {
  for (int side = 0; side < 2; ++side) {
    const auto& a = side ? rtl.out : rtl.in;
    const auto& b = side ? ref.out : ref.in;
    for (std::size_t p = 0; p < a.size(); ++p)
      for (std::size_t n = 0; n < std::min(a[p].size(), b[p].size()); ++n)
        if (a[p][n] != b[p][n])
          return ::testing::AssertionFailure() << (side ? "output" : "input") << " port " << p << " beat " << n
                                               << ": RTL cycle " << a[p][n] << ", SystemC rule " << b[p][n];
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// The StreamBlock: its parameters, its data (per pixel, the routing of
// StreamBlock::run()) and its timing (the run() loop).
enum class Kind { Strided, Copy, Relu, GroupAdd, EltwiseAdd };

struct Block {
  Kind kind = Kind::Copy;
  int channels = 1, groups_in = 1, groups_out = 1, ports_in = 1, ports_out = 1, w_in = 1, w_out = 1;
  std::vector<nm::Requant> requant;  // GroupAdd: per output word
  std::vector<int> exps;             // EltwiseAdd: per input
  nm::Requant add;                   // EltwiseAdd

  int words_in() const { return channels / groups_in; }
  int words_out() const { return channels / groups_out; }
  bool adder() const { return kind == Kind::GroupAdd || kind == Kind::EltwiseAdd; }
  Cycle latency() const { return adder() ? 3 : 1; }  // kStreamLatency (+ kRequantPipeline)
  // Output word i of port k: (input port, word) — StreamBlock::run()'s source().
  std::pair<int, int> source(int k, int i) const {
    if (kind != Kind::Strided) return {0, i};
    const int c = k + i * groups_out;
    return {c % groups_in, c / groups_in};
  }
  std::vector<std::vector<std::int8_t>> pixel(const std::vector<std::vector<std::int8_t>>& x) const {
    std::vector<std::vector<std::int8_t>> y(static_cast<std::size_t>(ports_out),
                                            std::vector<std::int8_t>(static_cast<std::size_t>(words_out())));
    const int e_min = exps.empty() ? 0 : *std::min_element(exps.begin(), exps.end());
    for (int k = 0; k < ports_out; ++k)
      for (int i = 0; i < words_out(); ++i) {
        std::int8_t& v = y[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
        if (adder()) {
          std::int64_t sum = 0;
          for (int q = 0; q < ports_in; ++q) {
            const std::int8_t w = x[static_cast<std::size_t>(q)][static_cast<std::size_t>(i)];
            sum += kind == Kind::GroupAdd ? std::int64_t{w} : nm::align(w, exps[static_cast<std::size_t>(q)], e_min);
          }
          v = nm::requantize(sum, kind == Kind::GroupAdd ? requant[static_cast<std::size_t>(i)] : add);
        } else {
          const auto [q, j] = source(k, i);
          v = x[static_cast<std::size_t>(q)][static_cast<std::size_t>(j)];
          if (kind == Kind::Relu) v = std::max<std::int8_t>(v, 0);
        }
      }
    return y;
  }
};

// StreamBlock::run()'s timing with the environment of run_rtl.
Times sc_rule(const Block& b, int pixels, const Env& env) {
  const auto np = static_cast<std::size_t>(b.ports_in), nk = static_cast<std::size_t>(b.ports_out);
  const int bi = b.words_in() / b.w_in, bo = b.words_out() / b.w_out;
  Times t;
  t.in.resize(np);
  t.out.resize(nk);
  std::vector<std::vector<Cycle>> when(np, std::vector<Cycle>(static_cast<std::size_t>(bi)));
  Cycle done[2] = {-1, -1};
  for (int x = 0; x < pixels; ++x) {
    const Cycle free = x >= 2 ? done[x % 2] + 1 - b.latency() : 0;
    for (std::size_t q = 0; q < np; ++q)
      for (int k = 0; k < bi; ++k) {
        auto& in = t.in[q];
        const std::size_t n = in.size();
        const Cycle arrival = n == 0 ? env.gap[q][0] : in.back() + 1 + env.gap[q][n];
        in.push_back(std::max({free, n == 0 ? 0 : in.back() + 1, arrival}));
        when[q][static_cast<std::size_t>(k)] = in.back();
      }
    Cycle finished = -1;
    for (std::size_t k = 0; k < nk; ++k)
      for (int beat = 0; beat < bo; ++beat) {
        Cycle ready = -1;
        for (int l = 0; l < b.w_out; ++l) {
          const int i = beat * b.w_out + l;
          if (b.adder())
            for (std::size_t q = 0; q < np; ++q) ready = std::max(ready, when[q][static_cast<std::size_t>(i / b.w_in)]);
          else {
            const auto [q, j] = b.source(static_cast<int>(k), i);
            ready = std::max(ready, when[static_cast<std::size_t>(q)][static_cast<std::size_t>(j / b.w_in)]);
          }
        }
        auto& out = t.out[k];
        Cycle c = std::max(ready + b.latency(), out.empty() ? 0 : out.back() + 1);
        while (!env.ready_at(k, c)) ++c;
        out.push_back(c);
        finished = std::max(finished, c);
      }
    done[x % 2] = finished;
  }
  return t;
}

// Random pixels through the block; free flow first, then `stalled` runs
// with random gaps and back-pressure. Routing blocks must follow the
// SystemC rule cycle for cycle; the adders exactly in free flow and within
// 1% + 20 cycles under stalls.
template <typename M>
void check_block(const Block& b, int pixels, std::uint64_t seed) {
  auto ctx = std::make_unique<VerilatedContext>();
  mixtd::Rng rng(seed);
  Words in(static_cast<std::size_t>(b.ports_in)), expect(static_cast<std::size_t>(b.ports_out));
  for (int x = 0; x < pixels; ++x) {
    std::vector<std::vector<std::int8_t>> px(static_cast<std::size_t>(b.ports_in));
    for (auto& p : px)
      for (int j = 0; j < b.words_in(); ++j)
        p.push_back(static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127));
    const auto y = b.pixel(px);
    for (std::size_t q = 0; q < px.size(); ++q) in[q].insert(in[q].end(), px[q].begin(), px[q].end());
    for (std::size_t k = 0; k < y.size(); ++k) expect[k].insert(expect[k].end(), y[k].begin(), y[k].end());
  }
  const auto beats_in = in[0].size() / static_cast<std::size_t>(b.w_in);
  struct Run {
    double in_rate, out_rate;
  };
  const Run runs[] = {{1.0, 1.0}, {0.7, 0.6}, {0.95, 0.3}, {0.3, 0.95}, {0.5, 0.5}};
  for (std::size_t r = 0; r < std::size(runs); ++r) {
    SCOPED_TRACE("run " + std::to_string(r) + " (input rate " + std::to_string(runs[r].in_rate) + ", output rate " +
                 std::to_string(runs[r].out_rate) + ")");
    const Env env = make_env(in.size(), beats_in, expect.size(), runs[r].in_rate, runs[r].out_rate, seed * 31 + r);
    M m(ctx.get());
    const Times rtl = run_rtl(m, b.w_in, b.w_out, in, expect, env);
    if (::testing::Test::HasFailure()) return;
    const Times ref = sc_rule(b, pixels, env);
    if (r == 0 || !b.adder()) {
      ASSERT_TRUE(same_times(rtl, ref));
      ASSERT_EQ(rtl.last(), ref.last());
    } else {
      const double tolerance = 0.01 * static_cast<double>(ref.last()) + 20;
      EXPECT_NEAR(static_cast<double>(rtl.last()), static_cast<double>(ref.last()), tolerance);
      std::printf("  stalled run %zu: last output beat at cycle %lld, SystemC rule %lld\n", r,
                  static_cast<long long>(rtl.last()), static_cast<long long>(ref.last()));
    }
  }
}

Block strided(int channels, int groups_in, int groups_out, int w_in, int w_out) {
  Block b;
  b.kind = Kind::Strided;
  b.channels = channels;
  b.groups_in = b.ports_in = groups_in;
  b.groups_out = b.ports_out = groups_out;
  b.w_in = w_in;
  b.w_out = w_out;
  return b;
}

Block copies(Kind kind, int channels, int n, int w_in, int w_out) {
  Block b;
  b.kind = kind;
  b.channels = channels;
  b.ports_out = n;
  b.w_in = w_in;
  b.w_out = w_out;
  return b;
}

// The parameter sets below are those of tests/rtl/CMakeLists.txt.
TEST(RtlStreamBlocks, GroupSplitMatchesSystemCBitForBitAndCycleForCycle) {
  check_block<Vsb_split_a>(strided(12, 1, 3, 4, 2), 24, 1);
  check_block<Vsb_split_b>(strided(16, 1, 2, 2, 8), 20, 2);
  check_block<Vsb_split_c>(strided(8, 1, 4, 8, 1), 30, 3);
}

TEST(RtlStreamBlocks, GroupMergeMatchesSystemCBitForBitAndCycleForCycle) {
  check_block<Vsb_merge_a>(strided(12, 3, 1, 2, 3), 24, 4);
  check_block<Vsb_merge_b>(strided(16, 4, 1, 1, 8), 20, 5);
}

TEST(RtlStreamBlocks, RegroupMatchesSystemCBitForBitAndCycleForCycle) {
  check_block<Vsb_regroup_a>(strided(12, 2, 3, 3, 2), 24, 6);
  check_block<Vsb_regroup_b>(strided(24, 4, 6, 2, 4), 16, 7);
  check_block<Vsb_regroup_c>(strided(8, 2, 4, 4, 1), 30, 8);
}

TEST(RtlStreamBlocks, ForkMatchesSystemCBitForBitAndCycleForCycle) {
  check_block<Vsb_fork_a>(copies(Kind::Copy, 8, 2, 4, 2), 24, 9);
  check_block<Vsb_fork_b>(copies(Kind::Copy, 6, 3, 1, 3), 24, 10);
}

TEST(RtlStreamBlocks, ReluMatchesSystemCBitForBitAndCycleForCycle) {
  check_block<Vsb_relu_a>(copies(Kind::Relu, 8, 1, 4, 2), 24, 11);
  check_block<Vsb_relu_b>(copies(Kind::Relu, 4, 1, 1, 4), 30, 12);
}

// GroupAdd's requantisers come from a memory image, one 40-bit word
// {relu, shift[6:0], bias[31:0]} per output word; written here (seeded)
// before the model reads it.
std::vector<nm::Requant> write_requant_image(const std::string& file, int words, std::uint64_t seed) {
  mixtd::Rng rng(seed);
  std::vector<nm::Requant> r;
  std::string text;
  for (int i = 0; i < words; ++i) {
    const nm::Requant q{static_cast<std::int32_t>(rng.below(601)) - 300, static_cast<int>(rng.below(9)) - 2,
                        rng.below(2) == 1};
    r.push_back(q);
    const std::uint64_t w = (std::uint64_t{q.relu} << 39) | (static_cast<std::uint64_t>(q.shift & 0x7f) << 32) |
                            static_cast<std::uint32_t>(q.bias);
    char line[16];
    std::snprintf(line, sizeof line, "%010llx\n", static_cast<unsigned long long>(w));
    text += line;
  }
  const std::string tmp = file + ".tmp" + std::to_string(seed);
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + tmp);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), file.c_str());
  return r;
}

Block adder(Kind kind, int channels, int n, int w_in, int w_out) {
  Block b;
  b.kind = kind;
  b.channels = channels;
  b.ports_in = n;
  b.w_in = w_in;
  b.w_out = w_out;
  return b;
}

TEST(RtlStreamBlocks, GroupAddMatchesSystemCBitForBit) {
  Block a = adder(Kind::GroupAdd, 8, 2, 2, 4);
  a.requant = write_requant_image(MIXTD_SB_MEM_DIR "/sb_gadd_a.mem", 8, 13);
  check_block<Vsb_gadd_a>(a, 24, 13);
  Block b = adder(Kind::GroupAdd, 12, 3, 4, 1);
  b.requant = write_requant_image(MIXTD_SB_MEM_DIR "/sb_gadd_b.mem", 12, 14);
  check_block<Vsb_gadd_b>(b, 20, 14);
}

TEST(RtlStreamBlocks, EltwiseAddMatchesSystemCBitForBit) {
  Block a = adder(Kind::EltwiseAdd, 8, 2, 4, 4);
  a.exps = {-3, 1};
  a.add = {5, 3, false};
  check_block<Vsb_eadd_a>(a, 24, 15);
  Block b = adder(Kind::EltwiseAdd, 6, 3, 2, 3);  // sums beyond int32: the pre-shift
  b.exps = {0, 28, 5};
  b.add = {-1000, 30, true};
  check_block<Vsb_eadd_b>(b, 30, 16);
  Block c = adder(Kind::EltwiseAdd, 4, 2, 1, 2);
  c.exps = {2, 2};
  c.add = {3, -2, false};
  check_block<Vsb_eadd_c>(c, 30, 17);
}

// ---------------------------------------------------------------------------
// GlobalAvgPool: reads a frame, then C/W beats of average(sum, pixels),
// the first one 1 + kStreamLatency cycles after the frame's last beat.
Times gap_rule(int channels, int pixels, int w, int frames, const Env& env) {
  Times t;
  t.in.resize(1);
  t.out.resize(1);
  const int beats = channels / w;
  for (int f = 0; f < frames; ++f) {
    Cycle last = 0;
    for (int n = 0; n < pixels * beats; ++n) {
      auto& in = t.in[0];
      const Cycle arrival = in.empty() ? env.gap[0][0] : in.back() + 1 + env.gap[0][in.size()];
      in.push_back(std::max(in.empty() ? 0 : in.back() + 1, arrival));
      last = in.back();
    }
    for (int b = 0; b < beats; ++b) {
      auto& out = t.out[0];
      Cycle c = std::max(last + 2, out.empty() ? 0 : out.back() + 1);
      while (!env.ready_at(0, c)) ++c;
      out.push_back(c);
    }
  }
  return t;
}

template <typename M>
void check_gap(int channels, int pixels, int w, std::uint64_t seed) {
  auto ctx = std::make_unique<VerilatedContext>();
  mixtd::Rng rng(seed);
  const int frames = 3;
  Words in(1), expect(1);
  for (int f = 0; f < frames; ++f) {
    std::vector<std::int64_t> sum(static_cast<std::size_t>(channels), 0);
    // Frames of one sign now and then, so that the means saturate too.
    const int lo = f == 1 ? 60 : -127;
    for (int x = 0; x < pixels; ++x)
      for (int c = 0; c < channels; ++c) {
        const auto v = static_cast<std::int8_t>(lo + static_cast<int>(rng.below(static_cast<std::uint64_t>(128 - lo))));
        in[0].push_back(v);
        sum[static_cast<std::size_t>(c)] += v;
      }
    for (int c = 0; c < channels; ++c) expect[0].push_back(nm::average(sum[static_cast<std::size_t>(c)], pixels));
  }
  const std::size_t beats_in = in[0].size() / static_cast<std::size_t>(w);
  const double rates[][2] = {{1.0, 1.0}, {0.7, 0.6}, {0.95, 0.2}, {0.3, 0.95}};
  for (std::size_t r = 0; r < std::size(rates); ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const Env env = make_env(1, beats_in, 1, rates[r][0], rates[r][1], seed * 31 + r);
    M m(ctx.get());
    const Times rtl = run_rtl(m, w, w, in, expect, env);
    if (::testing::Test::HasFailure()) return;
    const Times ref = gap_rule(channels, pixels, w, frames, env);
    if (r == 0) {
      ASSERT_TRUE(same_times(rtl, ref));
    } else {
      EXPECT_NEAR(static_cast<double>(rtl.last()), static_cast<double>(ref.last()),
                  0.01 * static_cast<double>(ref.last()) + 20);
      std::printf("  stalled run %zu: last output beat at cycle %lld, SystemC rule %lld\n", r,
                  static_cast<long long>(rtl.last()), static_cast<long long>(ref.last()));
    }
  }
}

TEST(RtlStreamBlocks, GlobalAvgPoolMatchesSystemCBitForBit) {
  check_gap<Vsb_gap_a>(8, 5, 2, 18);
  check_gap<Vsb_gap_b>(12, 16, 4, 19);
  check_gap<Vsb_gap_c>(4, 1, 4, 20);
}

// Free flow against the closed form of arch::stream_cycles for one case
// the loop mirror above also covers: a fork of C words at W per beat, one
// pixel after another, ends (pixels·C/W − 1) + kStreamLatency cycles after
// the first input beat.
TEST(RtlStreamBlocks, FreeFlowForkMovesABeatPerCycle) {
  auto ctx = std::make_unique<VerilatedContext>();
  Vsb_fork_a m(ctx.get());  // 8 channels, 2 copies, 4 words in, 2 out per beat
  const int pixels = 50;
  Words in(1), expect(2);
  for (int i = 0; i < pixels * 8; ++i) {
    in[0].push_back(static_cast<std::int8_t>(i % 251 - 125));
    expect[0].push_back(in[0].back());
    expect[1].push_back(in[0].back());
  }
  const Env env = make_env(1, in[0].size() / 4, 2, 1.0, 1.0, 0);
  const Times t = run_rtl(m, 4, 2, in, expect, env);
  // Output-bound: 4 beats a pixel at 2 words; the first leaves a cycle after
  // the first input beat.
  EXPECT_EQ(t.last(), Cycle{pixels * 4 - 1 + 1});
}

}  // namespace
