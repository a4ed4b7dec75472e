// The XRT host program's data handling (hls/host/frames.h) against mixtd's
// own definitions: it ships without mixtd, so these tests are what keeps
// its quantisation, stream order and NPY reading the same as numerics' and
// nn's. And the host binary's --help and error paths, which need no card.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "frames.h"
#include "mixtd/nn/Npy.h"
#include "mixtd/numerics/Quantized.h"
#include "mixtd/rtl/WeightStream.h"

namespace fs = std::filesystem;
namespace host = mixtd::host;
using mixtd::numerics::FloatTensor;
using mixtd::numerics::Int8Tensor;

namespace {

fs::path temp_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("mixtd_host_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const host::Error& e) {
    return e.what();
  }
  return "(no error)";
}

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(HostFrames, QuantiseEqualsNumericsBitForBit) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int e = -12; e <= 6; e += 3) {
    FloatTensor x(3, 4, 5, 6);
    for (std::size_t i = 0; i < x.data.size(); ++i) {
      const float s = std::ldexp(1.0f, e);
      switch (i % 6) {
        case 0:
          x.data[i] = normal(rng) * 40.0f * s;
          break;  // ordinary values
        case 1:
          x.data[i] = (static_cast<float>(rng() % 301) - 150.0f + 0.5f) * s;
          break;  // exact ties, ±
        case 2:
          x.data[i] = std::nextafter((static_cast<float>(rng() % 41) - 20 + 0.5f) * s, 0.0f);
          break;
        case 3:
          x.data[i] = normal(rng) * 1000.0f * s;
          break;  // mostly saturating
        case 4:
          x.data[i] = normal(rng) * 1e-3f * s;
          break;  // around zero
        default:
          x.data[i] = (static_cast<float>(rng() % 2) ? 1.0f : -1.0f) * (127.0f + 0.5f * (rng() % 3)) * s;
      }
    }
    // Extremes a user's data might hold.
    const float extremes[] = {0.0f,
                              -0.0f,
                              std::numeric_limits<float>::max(),
                              -std::numeric_limits<float>::max(),
                              std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
    std::copy(std::begin(extremes), std::end(extremes), x.data.begin());
    const Int8Tensor want = mixtd::numerics::quantize_tensor(x, e);
    EXPECT_EQ(host::quantize(x.data, e), want.data) << "exponent " << e;
  }
  // The rounding rule itself (half up): 2.5 -> 3, -2.5 -> -2, saturation at ±127.
  EXPECT_EQ(host::quantize(2.5f, 0), 3);
  EXPECT_EQ(host::quantize(-2.5f, 0), -2);
  EXPECT_EQ(host::quantize(-0.5f, 0), 0);
  EXPECT_EQ(host::quantize(127.5f, 0), 127);
  EXPECT_EQ(host::quantize(-1000.0f, -3), -127);
}

TEST(HostFrames, StreamOrderIsRowColChannel) {
  std::mt19937 rng(11);
  for (int t = 0; t < 20; ++t) {
    const std::int64_t n = 1 + rng() % 3, c = 1 + rng() % 7, h = 1 + rng() % 5, w = 1 + rng() % 6;
    Int8Tensor x(n, c, h, w);
    for (auto& v : x.data) v = static_cast<std::int8_t>(static_cast<int>(rng() % 255) - 127);
    const auto s = host::to_stream_order(x.data, n, c, h, w);
    ASSERT_EQ(s.size(), x.data.size());
    // SPEC: frame, row, col, channel innermost (what sim::stream_order writes).
    std::size_t k = 0;
    for (std::int64_t f = 0; f < n; ++f)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < w; ++j)
          for (std::int64_t ch = 0; ch < c; ++ch, ++k) ASSERT_EQ(s[k], x.at(f, ch, i, j)) << n << c << h << w;
  }
  // By hand: one 2x1x2 frame, NCHW {a0 a1 | b0 b1} -> a0 b0 a1 b1.
  EXPECT_EQ(host::to_stream_order({1, 2, 3, 4}, 1, 2, 1, 2), (std::vector<std::int8_t>{1, 3, 2, 4}));
  EXPECT_NE(error_of([] { host::to_stream_order({1, 2, 3}, 1, 2, 1, 2); }).find("3 words"), std::string::npos);
}

TEST(HostFrames, Top1TakesTheFirstLargest) {
  EXPECT_EQ(host::top1({3, 9, 9, -4}), 1);
  EXPECT_EQ(host::top1({-127, -127}), 0);
  EXPECT_EQ(host::top1({0, 5, 1, 7}), 3);
  const auto frames = host::split_frames({1, 4, 4, 7, 7, 2, 9}, 3);  // the 7th word is not a whole frame
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(host::top1(frames[0]), 1);
  EXPECT_EQ(host::top1(frames[1]), 0);
}

TEST(HostFrames, FirstMismatchNamesFrameAndWord) {
  EXPECT_FALSE(host::first_mismatch({1, 2, 3, 4}, {1, 2, 3, 4}, 2));
  const auto m = host::first_mismatch({1, 2, 3, 5}, {1, 2, 3, 4}, 2);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->frame, 1);
  EXPECT_EQ(m->word, 1);
  EXPECT_EQ(m->got, 5);
  EXPECT_EQ(m->want, 4);
}

TEST(HostFrames, ReadsWhatWriteNpyWrites) {
  const auto d = temp_dir("npy");
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(2 * 3 * 4 * 5);
  for (auto& v : x) v = normal(rng);
  x[0] = std::numeric_limits<float>::denorm_min();
  x[1] = -0.0f;
  mixtd::nn::write_npy(d / "x.npy", "<f4", {2, 3, 4, 5}, x.data(), x.size() * sizeof(float));
  const host::NpyFloat a = host::read_npy((d / "x.npy").string());
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3, 4, 5}));
  ASSERT_EQ(a.data.size(), x.size());
  EXPECT_EQ(std::memcmp(a.data.data(), x.data(), x.size() * 4), 0);
  EXPECT_EQ(host::npy_images(a, "x.npy", 3, 4, 5), 2);
  EXPECT_NE(error_of([&] { host::npy_images(a, "x.npy", 1, 4, 5); }).find("x.npy: shape (2, 3, 4, 5)"),
            std::string::npos);

  // Format 2.0 (numpy.save's choice for a long header): 4-byte header length.
  std::string v1 = read_bytes(d / "x.npy");
  const std::size_t hlen = static_cast<unsigned char>(v1[8]) | static_cast<unsigned char>(v1[9]) << 8;
  std::string header = v1.substr(10, hlen);
  header.insert(header.size() - 1, 64 - 2, ' ');  // keep the data 64-byte aligned
  std::string v2 = v1.substr(0, 6) + std::string("\x02\x00", 2);
  for (int i = 0; i < 4; ++i) v2 += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  v2 += header + v1.substr(10 + hlen);
  write_bytes(d / "v2.npy", v2);
  const host::NpyFloat b = host::read_npy((d / "v2.npy").string());
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(std::memcmp(b.data.data(), x.data(), x.size() * 4), 0);
}

TEST(HostFrames, BadFilesAreOneLineNamingFileAndValue) {
  const auto d = temp_dir("bad");
  const double f64[4] = {1, 2, 3, 4};
  mixtd::nn::write_npy(d / "f64.npy", "<f8", {1, 1, 2, 2}, f64, sizeof f64);
  const std::string e = error_of([&] { host::read_npy((d / "f64.npy").string()); });
  EXPECT_NE(e.find("f64.npy: dtype '<f8' (float64)"), std::string::npos) << e;
  EXPECT_NE(e.find("astype(numpy.float32)"), std::string::npos) << e;

  const float nan[2] = {1.0f, std::nanf("")};
  mixtd::nn::write_npy(d / "nan.npy", "<f4", {1, 2}, nan, sizeof nan);
  EXPECT_NE(error_of([&] { host::read_npy((d / "nan.npy").string()); }).find("value nan at index 1"),
            std::string::npos);

  write_bytes(d / "cut.npy", read_bytes(d / "nan.npy").substr(0, 130));
  EXPECT_NE(error_of([&] { host::read_npy((d / "cut.npy").string()); }).find("needs 8 bytes of data, the file has 2"),
            std::string::npos);
  write_bytes(d / "text.npy", "hello");
  EXPECT_NE(error_of([&] { host::read_npy((d / "text.npy").string()); }).find("text.npy: not an NPY file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { host::read_npy((d / "missing.npy").string()); }).find("missing.npy: cannot open"),
            std::string::npos);

  write_bytes(d / "frames.bin", std::string(10, '\1'));
  EXPECT_EQ(host::read_int8_frames((d / "frames.bin").string(), 5).size(), 10u);
  EXPECT_NE(error_of([&] {
              host::read_int8_frames((d / "frames.bin").string(), 4);
            }).find("frames.bin: 10 bytes is not a whole number (>= 1) of 4-word frames"),
            std::string::npos);

  const std::int64_t labels[3] = {0, 9, 10};
  write_bytes(d / "labels.bin", std::string(reinterpret_cast<const char*>(labels), sizeof labels));
  EXPECT_NE(error_of([&] {
              host::read_labels((d / "labels.bin").string(), 3, 10);
            }).find("labels.bin: label 10 of frame 2 is not in [0, 10)"),
            std::string::npos);
  EXPECT_EQ(host::read_labels((d / "labels.bin").string(), 3, 11), (std::vector<std::int64_t>{0, 9, 10}));
  for (const char* f : {"f64.npy", "nan.npy", "cut.npy"})
    EXPECT_EQ(error_of([&] { host::read_npy((d / f).string()); }).find('\n'), std::string::npos) << f;
}

// The host reads the stream rtl::append_weight_segment writes (the one
// description of the format) and refuses one of another design or a
// damaged one, naming the file.
TEST(HostFrames, WeightStreamIsTheGeneratorsAndIsChecked) {
  const auto d = temp_dir("weights");
  std::vector<std::uint8_t> s;
  mixtd::rtl::append_weight_segment(s, 1, "0102030405060708090a\n1112131415161718191a\n", 80);
  mixtd::rtl::append_weight_segment(s, 2, "ff\n", 8);
  ASSERT_EQ(s.size(), 8u * (1 + 4 + 1 + 1));
  EXPECT_EQ(s[8], 0x0a);   // word 0, byte 0: the last two hex digits
  EXPECT_EQ(s[16], 0x02);  // word 0's second beat: bytes 8, 9, then zeros
  EXPECT_EQ(s[17], 0x01);
  EXPECT_EQ(s[18], 0x00);
  const std::string bytes(s.begin(), s.end());
  write_bytes(d / "w.bin", bytes);
  EXPECT_EQ(host::read_weight_stream((d / "w.bin").string(), 56, 2).size(), 56u);
  EXPECT_NE(error_of([&] {
              host::read_weight_stream((d / "w.bin").string(), 64, 2);
            }).find("w.bin: 56 bytes, this package's kernel takes a weight stream of 64"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              host::read_weight_stream((d / "w.bin").string(), 56, 3);
            }).find("w.bin: 2 segments, this package's kernel has 3 memories"),
            std::string::npos);
  std::string bad = bytes;
  bad[7] = 0;  // the first header's magic
  write_bytes(d / "bad.bin", bad);
  EXPECT_NE(error_of([&] {
              host::read_weight_stream((d / "bad.bin").string(), 56, 2);
            }).find("bad.bin: beat 0 should be a segment header"),
            std::string::npos);
  bad = bytes;
  bad[40] = 9;  // the second header claims 9 beats
  write_bytes(d / "long.bin", bad);
  EXPECT_NE(error_of([&] {
              host::read_weight_stream((d / "long.bin").string(), 56, 2);
            }).find("long.bin: segment 2 runs past the end"),
            std::string::npos);
  EXPECT_EQ(mixtd::rtl::weight_segments(s).size(), 2u);
}

#ifdef MIXTD_HOST_EXE
struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr
};

Ran run_host(const std::string& args) {
  Ran r;
  FILE* p = ::popen((std::string(MIXTD_HOST_EXE) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(HostCli, HelpPrintsUsageWithoutACard) {
  const Ran r = run_host("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.rfind("Usage: host --xclbin FILE", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("Examples:"), std::string::npos);
  EXPECT_NE(r.output.find("input 3x16x16 (768 words a frame)"), std::string::npos) << r.output;
}

TEST(HostCli, MissingXclbinIsOneLineAndExitOne) {
  const Ran r = run_host("--xclbin /nonexistent.xclbin");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(lines(r.output), 1) << r.output;
  EXPECT_EQ(r.output.rfind("host: error: xclbin '/nonexistent.xclbin'", 0), 0u) << r.output;
}

TEST(HostCli, BadXclbinAndBadOptionsAreOneLine) {
  const auto d = temp_dir("cli");
  write_bytes(d / "junk.xclbin", "not an xclbin\n");
  for (const std::string& args : {"--xclbin " + (d / "junk.xclbin").string(), std::string("--batch 0 --xclbin x"),
                                  std::string("--frobnicate 1"), std::string("")}) {
    const Ran r = run_host(args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.output;
    EXPECT_EQ(lines(r.output), 1) << args << ": " << r.output;
    EXPECT_EQ(r.output.rfind("host: error: ", 0), 0u) << args << ": " << r.output;
  }
}
#endif

}  // namespace
