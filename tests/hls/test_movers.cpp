// C simulation of the U250 package's data movers (hls/movers, issue 22) on the
// shim of Vitis's headers: seeded random bytes through mm2s -> AXI4-Stream ->
// s2mm at every width the kernel may have, checking each beat against
// mm2s's contract (TKEEP, TSTRB, TLAST, zero padding), the bytes that come
// back, and that s2mm leaves the memory past `bytes` as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_config.h"
#include "mixtd_movers.h"

extern "C" void mixtd_mm2s(const ap_uint<512>* mem, hls::stream<ap_axiu<MIXTD_IN_TDATA_BITS, 0, 0, 0>>& out,
                           unsigned int bytes, unsigned int frame_bytes);
extern "C" void mixtd_s2mm(ap_uint<512>* mem, hls::stream<ap_axiu<MIXTD_OUT_TDATA_BITS, 0, 0, 0>>& in,
                           unsigned int bytes);

namespace {

using Bytes = std::vector<std::uint8_t>;
using Words = std::vector<ap_uint<512>>;
template <int W>
using Beat = ap_axiu<W, 0, 0, 0>;

Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Memory holds a whole number of words: b.size() is a multiple of 64.
Words to_words(const Bytes& b) {
  Words w(b.size() / 64);
  for (std::size_t i = 0; i < b.size(); ++i) w[i / 64].range(8 * (i % 64) + 7, 8 * (i % 64)) = b[i];
  return w;
}

Bytes from_words(const Words& w) {
  Bytes b(w.size() * 64);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<std::uint8_t>(w[i / 64].range(8 * (i % 64) + 7, 8 * (i % 64)).to_uint64());
  return b;
}

// "" or where the first difference is, instead of two long byte dumps.
std::string first_difference(const Bytes& got, const Bytes& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  const auto d = std::mismatch(got.begin(), got.end(), want.begin());
  if (d.first == got.end()) return "";
  return "byte " + std::to_string(d.first - got.begin()) + ": " + std::to_string(*d.first) +
         " != " + std::to_string(*d.second);
}

// Checks the beats mm2s<W> wrote for memory `src` against mm2s's contract and
// leaves them in `s` as they were. "" or the first violation.
template <int W>
std::string check_beats(hls::stream<Beat<W>>& s, const Bytes& src, unsigned bytes, unsigned frame_bytes) {
  const unsigned B = W / 8;
  const unsigned beats = bytes / B + (bytes % B != 0 ? 1 : 0);
  const unsigned frame_beats = frame_bytes / B;
  if (s.size() != beats) return std::to_string(s.size()) + " beats, not " + std::to_string(beats);
  std::vector<Beat<W>> all;
  while (!s.empty()) all.push_back(s.read());
  std::string error;
  for (unsigned i = 0; i < beats && error.empty(); ++i) {
    const Beat<W>& b = all[i];
    const unsigned valid = std::min(B, bytes - i * B);
    const bool last = i + 1 == beats || (frame_beats != 0 && (i + 1) % frame_beats == 0);
    if (static_cast<bool>(b.last) != last) error = "TLAST";
    for (unsigned k = 0; k < B && error.empty(); ++k) {
      const bool keep = k < valid;
      const std::uint64_t byte = b.data.range(8 * k + 7, 8 * k).to_uint64();
      if (b.keep[k] != keep || b.strb[k] != keep)
        error = "TKEEP/TSTRB lane " + std::to_string(k);
      else if (byte != (keep ? src[i * B + k] : 0u))
        error = "TDATA lane " + std::to_string(k);
    }
    if (!error.empty()) error = "beat " + std::to_string(i) + ": " + error;
  }
  for (const auto& b : all) s.write(b);
  return error;
}

// mm2s then s2mm of `bytes` random bytes; the memory on both sides is random
// up to a whole word past the data, what s2mm must leave alone.
template <int W>
void round_trip(unsigned bytes, unsigned frame_bytes, std::uint32_t seed) {
  SCOPED_TRACE("W " + std::to_string(W) + ", bytes " + std::to_string(bytes) + ", frame_bytes " +
               std::to_string(frame_bytes));
  const std::size_t size = (bytes / 64 + 2) * 64;
  const Bytes src = random_bytes(size, seed);
  const Bytes old = random_bytes(size, seed ^ 0x5eed);
  const Words mem = to_words(src);
  hls::stream<Beat<W>> axis("axis");
  mixtd::movers::mm2s<W>(mem.data(), axis, bytes, frame_bytes);
  ASSERT_EQ(check_beats<W>(axis, src, bytes, frame_bytes), "");

  Words dst = to_words(old);
  mixtd::movers::s2mm<W>(dst.data(), axis, bytes);
  EXPECT_TRUE(axis.empty());
  Bytes want = old;
  std::copy(src.begin(), src.begin() + bytes, want.begin());
  EXPECT_EQ(first_difference(from_words(dst), want), "");
}

// Lengths around words and beats: 1 byte, within a word, on and next to word
// boundaries, several words, primes.
const unsigned kLengths[] = {1, 2, 3, 5, 7, 63, 64, 65, 127, 128, 129, 191, 200, 1000, 4096, 4097, 10007};

template <int W>
void every_length() {
  for (unsigned bytes : kLengths) round_trip<W>(bytes, 0, bytes * 31 + W);
}

// Batches of frames of 1, 3 and 17 beats: whole batches, one whose last frame
// is short (not a multiple of the beat either), and a frame of 0 bytes (the
// batch is one frame).
template <int W>
void frames() {
  const unsigned B = W / 8;
  for (unsigned frame_beats : {1u, 3u, 17u}) {
    for (unsigned count : {1u, 2u, 5u}) {
      const unsigned frame = frame_beats * B;
      round_trip<W>(count * frame, frame, count * 7 + frame_beats + W);
      if (count * frame > 1) round_trip<W>(count * frame - 1, frame, count * 11 + frame_beats + W);
    }
  }
  round_trip<W>(5 * B + 3, 0, W);
}

}  // namespace

TEST(HlsMovers, RoundTripsEveryLengthAtEveryWidth) {
  every_length<8>();
  every_length<16>();
  every_length<24>();
  every_length<32>();
  every_length<64>();
  every_length<128>();
  every_length<512>();
  every_length<1024>();
}

TEST(HlsMovers, TlastClosesEveryFrameOfABatch) {
  frames<8>();
  frames<16>();
  frames<24>();
  frames<32>();
  frames<64>();
  frames<128>();
  frames<512>();
  frames<1024>();
}

TEST(HlsMovers, ZeroBytesMoveNothing) {
  const Bytes old = random_bytes(128, 1);
  Words mem = to_words(old);
  hls::stream<Beat<32>> axis("axis");
  mixtd::movers::mm2s<32>(mem.data(), axis, 0, 0);
  EXPECT_TRUE(axis.empty());
  axis.write(Beat<32>());
  mixtd::movers::s2mm<32>(mem.data(), axis, 0);
  EXPECT_EQ(axis.size(), 1u);
  EXPECT_EQ(first_difference(from_words(mem), old), "");
}

// A kernel may end each frame on a short beat: s2mm packs the valid lanes (the
// low run of TKEEP) densely, skips a beat with no lane, and ignores lanes past
// TKEEP's first 0.
TEST(HlsMovers, S2mmPacksShortBeats) {
  const Bytes data = random_bytes(64, 2);
  hls::stream<Beat<64>> axis("axis");
  Bytes want;
  auto beat = [&](unsigned from, unsigned keep, unsigned valid) {
    Beat<64> b;
    for (unsigned k = 0; k < 8; ++k) b.data.range(8 * k + 7, 8 * k) = data[from + k];
    b.keep = keep;
    b.strb = keep;
    b.last = 0;
    axis.write(b);
    want.insert(want.end(), data.begin() + from, data.begin() + from + valid);
  };
  for (unsigned frame = 0; frame < 3; ++frame) {  // 10-byte frames: 8 + 2 bytes
    beat(16 * frame, 0xff, 8);
    beat(16 * frame + 8, 0x03, 2);
  }
  beat(48, 0x00, 0);
  beat(48, 0x0d, 1);  // 0b1101: lane 0 only
  beat(56, 0x7f, 7);
  const Bytes old = random_bytes(128, 3);
  Words mem = to_words(old);
  mixtd::movers::s2mm<64>(mem.data(), axis, static_cast<unsigned>(want.size()));
  EXPECT_TRUE(axis.empty());
  Bytes expect = old;
  std::copy(want.begin(), want.end(), expect.begin());
  EXPECT_EQ(first_difference(from_words(mem), expect), "");
}

// The beat that completes `bytes` gives only the bytes still due; the beats
// after it stay in the stream.
TEST(HlsMovers, S2mmStopsAtBytes) {
  const Bytes src = random_bytes(128, 4);
  const Words mem = to_words(src);
  hls::stream<Beat<32>> axis("axis");
  mixtd::movers::mm2s<32>(mem.data(), axis, 16, 0);  // 4 full beats
  const Bytes old = random_bytes(128, 5);
  Words dst = to_words(old);
  mixtd::movers::s2mm<32>(dst.data(), axis, 10);
  EXPECT_EQ(axis.size(), 1u);
  Bytes want = old;
  std::copy(src.begin(), src.begin() + 10, want.begin());
  EXPECT_EQ(first_difference(from_words(dst), want), "");
}

// Too few beats would hang the hardware; the C simulation says so instead.
TEST(HlsMovers, ShortStreamFailsLoudly) {
  const Bytes src = random_bytes(64, 6);
  const Words mem = to_words(src);
  hls::stream<Beat<32>> axis("axis");
  mixtd::movers::mm2s<32>(mem.data(), axis, 20, 0);
  Words dst(2);
  EXPECT_THROW(mixtd::movers::s2mm<32>(dst.data(), axis, 100), std::runtime_error);
}

// The Vitis top functions, built as the package builds them but against
// tests/hls/kernel_config.h: a batch of 5 frames of 37 input beats in, and 5
// results of 13 bytes (short last beats at 80 bits) out.
TEST(HlsMovers, TopFunctionsMoveABatch) {
  const unsigned frame = 37 * MIXTD_IN_TDATA_BITS / 8, batch = 5 * frame;
  const Bytes src = random_bytes((batch / 64 + 2) * 64, 7);
  const Words mem = to_words(src);
  hls::stream<Beat<MIXTD_IN_TDATA_BITS>> to_kernel("s_axis");
  mixtd_mm2s(mem.data(), to_kernel, batch, frame);
  ASSERT_EQ(check_beats<MIXTD_IN_TDATA_BITS>(to_kernel, src, batch, frame), "");
  Words back(mem.size());
  mixtd::movers::s2mm<MIXTD_IN_TDATA_BITS>(back.data(), to_kernel, batch);
  const Bytes got = from_words(back);
  EXPECT_EQ(first_difference(Bytes(got.begin(), got.begin() + batch), Bytes(src.begin(), src.begin() + batch)), "");

  // The kernel's results, one frame of 13 bytes a time (2 beats of 80 bits).
  const Bytes results = random_bytes(128, 8);
  const Words results_mem = to_words(results);
  hls::stream<Beat<MIXTD_OUT_TDATA_BITS>> from_kernel("m_axis");
  for (unsigned f = 0; f < 5; ++f) {
    hls::stream<Beat<MIXTD_OUT_TDATA_BITS>> one("frame");
    Words frame_mem = to_words(Bytes(results.begin() + 13 * f, results.begin() + 13 * f + 64));
    mixtd::movers::mm2s<MIXTD_OUT_TDATA_BITS>(frame_mem.data(), one, 13, 13);
    while (!one.empty()) from_kernel.write(one.read());
  }
  const Bytes old = random_bytes(128, 9);
  Words out = to_words(old);
  mixtd_s2mm(out.data(), from_kernel, 5 * 13);
  EXPECT_TRUE(from_kernel.empty());
  Bytes want = old;
  std::copy(results.begin(), results.begin() + 5 * 13, want.begin());
  EXPECT_EQ(first_difference(from_words(out), want), "");
}

// The shim's ap_uint across 64-bit limbs, against plain integers.
TEST(HlsShim, ApUintMatchesTheRealSemantics) {
  ap_uint<100> x = -1;
  EXPECT_EQ(x.range(99, 36).to_uint64(), ~std::uint64_t{0});
  EXPECT_EQ((x >> 99).to_uint64(), 1u);
  EXPECT_EQ((x >> 100).to_uint64(), 0u);
  EXPECT_EQ((x << 100).to_uint64(), 0u);
  ap_uint<200> y = 0;
  y.range(131, 60) = ap_uint<200>(0xabcdef0123456789ull) << 8;  // 72 bits: the top 8 bits are 0x00
  EXPECT_EQ(y.range(67, 60).to_uint64(), 0u);
  EXPECT_EQ(y.range(131, 68).to_uint64(), 0xabcdef0123456789ull);
  EXPECT_EQ((y >> 68).to_uint64(), 0xabcdef0123456789ull);
  EXPECT_EQ(ap_uint<32>(y >> 100).to_uint64(), 0xabcdef01ull);
  EXPECT_EQ((ap_uint<200>(1) << 199 >> 199).to_uint64(), 1u);
  y[199] = true;
  EXPECT_TRUE(y[199]);
  EXPECT_EQ((~y).range(199, 136).to_uint64(), ~std::uint64_t{0} >> 1);  // bit 199 clear, 198..136 set
  EXPECT_EQ(ap_uint<8>(0x1ff).to_uint64(), 0xffu);
  EXPECT_THROW(y.range(200, 0), std::out_of_range);
  EXPECT_THROW(y.range(3, 4), std::out_of_range);
}
