// The host program's data handling, apart from XRT so that it can be tested
// against mixtd's own numerics without a board (tests/hls/test_host_frames.cpp).
//
// Header-only C++17 with no mixtd includes: `mixtd package` copies it into
// DIR/host/, which builds on a machine that has XRT but not mixtd.
//
// File formats (what `mixtd package` writes into DIR/data/):
//   frames.bin    int8 words in stream order, frame after frame
//   expected.bin  int8 output words in stream order, frame after frame
//   labels.bin    one int64 (little-endian) class index per frame
//   *.npy         float32 NCHW images as numpy.save writes them
// Every error is a mixtd::host::Error whose message is one line naming the
// file and the offending value.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mixtd::host {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- BFP8 quantisation (models/numerics/include/mixtd/numerics/Bfp8.h) ----

// saturate(⌊x / 2^e + ½⌋) into [−127, 127], computed in double exactly as
// numerics::quantize does (round half up: 2.5 → 3, −2.5 → −2), so that the
// board sees the very frames the golden executor saw. NaN, which numerics
// never receives, gives 0 here; read_npy refuses it before it gets here.
inline std::int8_t quantize(float x, int e) {
  const double scaled = std::floor(std::ldexp(static_cast<double>(x), -e) + 0.5);
  if (std::isnan(scaled)) return 0;
  const auto v = static_cast<std::int64_t>(std::clamp(scaled, -1e18, 1e18));
  return static_cast<std::int8_t>(std::clamp<std::int64_t>(v, -127, 127));
}

inline std::vector<std::int8_t> quantize(const std::vector<float>& x, int e) {
  std::vector<std::int8_t> q(x.size());
  std::transform(x.begin(), x.end(), q.begin(), [e](float v) { return quantize(v, e); });
  return q;
}

// ---- Stream order (SPEC "The accelerator"; sim::stream_order) ----

// n frames of c×h×w words from NCHW to stream order: frame, row, col, channel
// (channel innermost), the order the kernel's input stream carries.
inline std::vector<std::int8_t> to_stream_order(const std::vector<std::int8_t>& nchw, std::int64_t n, std::int64_t c,
                                                std::int64_t h, std::int64_t w) {
  if (n < 0 || c < 1 || h < 1 || w < 1 || static_cast<std::int64_t>(nchw.size()) != n * c * h * w)
    throw Error("to_stream_order: " + std::to_string(nchw.size()) + " words are not " + std::to_string(n) +
                " frames of " + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w));
  std::vector<std::int8_t> out;
  out.reserve(nchw.size());
  for (std::int64_t f = 0; f < n; ++f)
    for (std::int64_t i = 0; i < h; ++i)
      for (std::int64_t j = 0; j < w; ++j)
        for (std::int64_t k = 0; k < c; ++k)
          out.push_back(nchw[static_cast<std::size_t>(((f * c + k) * h + i) * w + j)]);
  return out;
}

// ---- Files ----

inline std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": read error");
  return bytes;
}

// Little-endian decoding byte by byte, so the reader does not depend on the
// host's byte order.
inline std::uint64_t load_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

struct NpyFloat {
  std::vector<std::int64_t> shape;  // C order
  std::vector<float> data;
};

inline std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace detail {

// The value of `key` in numpy's header dict, e.g. "'<f4'", "False", "(2, 3)".
inline std::string npy_field(const std::string& header, const std::string& key, const std::string& path) {
  const std::size_t k = header.find("'" + key + "'");
  const std::size_t colon = k == std::string::npos ? k : header.find(':', k);
  if (colon == std::string::npos) throw Error(path + ": NPY header has no '" + key + "': " + header);
  std::size_t b = header.find_first_not_of(' ', colon + 1), e = b;
  if (b == std::string::npos) throw Error(path + ": NPY header ends after '" + key + "'");
  if (header[b] == '(') {
    e = header.find(')', b);
    if (e == std::string::npos) throw Error(path + ": NPY shape does not close: " + header);
    ++e;
  } else if (header[b] == '\'' || header[b] == '"') {
    e = header.find(header[b], b + 1);
    if (e == std::string::npos) throw Error(path + ": NPY '" + key + "' does not close: " + header);
    ++e;
  } else {
    e = header.find_first_of(",}", b);
  }
  return header.substr(b, e - b);
}

inline std::string dtype_name(const std::string& d) {
  static const char* const names[][2] = {{"f8", "float64"}, {"f2", "float16"}, {"i8", "int64"}, {"i4", "int32"},
                                         {"i2", "int16"},   {"i1", "int8"},    {"u1", "uint8"}, {"b1", "bool"}};
  for (const auto& n : names)
    if (d.size() >= 2 && d.compare(d.size() - 2, 2, n[0]) == 0) return std::string(" (") + n[1] + ")";
  return "";
}

}  // namespace detail

// A float32 array as numpy.save writes it (format 1.0 or 2.0; 3.0 differs
// only in the header's text encoding and is read too). Anything else is
// refused: another dtype, big-endian, Fortran order, truncated data, or a
// value that is not finite (it has no BFP8 mantissa).
inline NpyFloat read_npy(const std::string& path) {
  const std::vector<char> b = read_file(path);
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
    throw Error(path + ": not an NPY file (no \\x93NUMPY magic; write it with numpy.save)");
  const int major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3) throw Error(path + ": NPY format version " + std::to_string(major) + " is not 1, 2 or 3");
  const std::size_t len_bytes = major == 1 ? 2 : 4, start = 8 + len_bytes;
  if (b.size() < start) throw Error(path + ": NPY header is truncated");
  const std::size_t hlen = load_le(b.data() + 8, static_cast<int>(len_bytes));
  if (b.size() < start + hlen) throw Error(path + ": NPY header of " + std::to_string(hlen) + " bytes is truncated");
  std::string header(b.data() + start, hlen);
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.pop_back();

  std::string descr = detail::npy_field(header, "descr", path);
  descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (descr != "<f4")
    throw Error(path + ": dtype '" + descr + "'" + detail::dtype_name(descr) +
                ", the host reads float32 images only ('<f4'): save x.astype(numpy.float32)");
  if (detail::npy_field(header, "fortran_order", path) != "False")
    throw Error(path + ": Fortran-order array, the host reads C order: save numpy.ascontiguousarray(x)");

  NpyFloat a;
  const std::string s = detail::npy_field(header, "shape", path);
  std::size_t count = 1;
  for (std::size_t i = 1; i + 1 < s.size();) {
    const std::size_t j = std::min(s.find(',', i), s.size() - 1);
    const std::string tok = s.substr(i, j - i);
    i = j + 1;
    if (tok.find_first_not_of(' ') == std::string::npos) continue;
    try {
      a.shape.push_back(std::stoll(tok));
    } catch (const std::exception&) {
      throw Error(path + ": NPY shape " + s + " has a bad dimension '" + tok + "'");
    }
    if (a.shape.back() < 0) throw Error(path + ": NPY shape " + s + " has a negative dimension");
    count *= static_cast<std::size_t>(a.shape.back());
    if (count > b.size()) throw Error(path + ": NPY shape " + s + " is larger than the file");
  }
  const std::size_t have = b.size() - start - hlen;
  if (have != count * 4)
    throw Error(path + ": shape " + shape_str(a.shape) + " needs " + std::to_string(count * 4) +
                " bytes of data, the file has " + std::to_string(have));
  a.data.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto bits = static_cast<std::uint32_t>(load_le(b.data() + start + hlen + 4 * i, 4));
    std::memcpy(&a.data[i], &bits, 4);
    if (!std::isfinite(a.data[i]))
      throw Error(path + ": value " + std::to_string(a.data[i]) + " at index " + std::to_string(i) + " is not finite");
  }
  return a;
}

// Checks that `a` holds images of the network's input shape (N×C×H×W, or one
// C×H×W image) and returns how many.
inline std::int64_t npy_images(const NpyFloat& a, const std::string& path, std::int64_t c, std::int64_t h,
                               std::int64_t w) {
  const auto& s = a.shape;
  const bool ok =
      (s.size() == 4 && s[1] == c && s[2] == h && s[3] == w) || (s.size() == 3 && s[0] == c && s[1] == h && s[2] == w);
  if (!ok || a.data.empty())
    throw Error(path + ": shape " + shape_str(s) + ", the network takes (N, " + std::to_string(c) + ", " +
                std::to_string(h) + ", " + std::to_string(w) + ") float32 images with N >= 1");
  return s.size() == 4 ? s[0] : 1;
}

// A raw int8 file of whole frames of `words_per_frame` words.
inline std::vector<std::int8_t> read_int8_frames(const std::string& path, std::int64_t words_per_frame) {
  const std::vector<char> b = read_file(path);
  if (b.empty() || b.size() % static_cast<std::size_t>(words_per_frame) != 0)
    throw Error(path + ": " + std::to_string(b.size()) + " bytes is not a whole number (>= 1) of " +
                std::to_string(words_per_frame) + "-word frames");
  return std::vector<std::int8_t>(b.begin(), b.end());
}

// weights.bin: the kernel's weight stream (mixtd's rtl/WeightStream.h):
// segments of 64-bit little-endian beats, each a header {[63:48] 0x4D57,
// [47:32] memory ID, [31:0] beats} and its beats. Checks the size and the
// framing against what the package was generated with; returns the bytes.
inline std::vector<char> read_weight_stream(const std::string& path, std::int64_t bytes, std::int64_t segments) {
  std::vector<char> b = read_file(path);
  if (static_cast<std::int64_t>(b.size()) != bytes)
    throw Error(path + ": " + std::to_string(b.size()) + " bytes, this package's kernel takes a weight stream of " +
                std::to_string(bytes) + " (was it written for another design?)");
  std::int64_t seen = 0;
  for (std::size_t beat = 0; beat < b.size() / 8;) {
    const std::uint64_t h = load_le(b.data() + 8 * beat, 8);
    if (h >> 48 != 0x4D57)
      throw Error(path + ": beat " + std::to_string(beat) + " should be a segment header (0x4D57 in bits 63:48)");
    beat += 1 + static_cast<std::size_t>(h & 0xFFFFFFFFu);
    if (beat > b.size() / 8)
      throw Error(path + ": segment " + std::to_string(seen + 1) + " runs past the end of the file");
    ++seen;
  }
  if (seen != segments)
    throw Error(path + ": " + std::to_string(seen) + " segments, this package's kernel has " +
                std::to_string(segments) + " memories");
  return b;
}

// labels.bin: `frames` int64 class indices, each in [0, classes).
inline std::vector<std::int64_t> read_labels(const std::string& path, std::int64_t frames, std::int64_t classes) {
  const std::vector<char> b = read_file(path);
  if (b.size() != static_cast<std::size_t>(frames) * 8)
    throw Error(path + ": " + std::to_string(b.size()) + " bytes, expected " + std::to_string(frames) +
                " int64 labels (" + std::to_string(frames * 8) + " bytes)");
  std::vector<std::int64_t> labels(static_cast<std::size_t>(frames));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i] = static_cast<std::int64_t>(load_le(b.data() + 8 * i, 8));
    if (labels[i] < 0 || labels[i] >= classes)
      throw Error(path + ": label " + std::to_string(labels[i]) + " of frame " + std::to_string(i) + " is not in [0, " +
                  std::to_string(classes) + ")");
  }
  return labels;
}

// ---- Outputs ----

// Output words (stream order, frame after frame) as one vector per frame.
inline std::vector<std::vector<std::int8_t>> split_frames(const std::vector<std::int8_t>& words,
                                                          std::int64_t per_frame) {
  std::vector<std::vector<std::int8_t>> frames;
  const auto n = static_cast<std::size_t>(per_frame);
  for (std::size_t f = 0; per_frame > 0 && (f + 1) * n <= words.size(); ++f)
    frames.emplace_back(words.begin() + static_cast<std::ptrdiff_t>(f * n),
                        words.begin() + static_cast<std::ptrdiff_t>((f + 1) * n));
  return frames;
}

// The index of the largest word, the first one on a tie (sim::top1), for an
// output that is a vector of class scores (C×1×1).
inline std::int64_t top1(const std::vector<std::int8_t>& frame) {
  return frame.empty() ? -1 : std::max_element(frame.begin(), frame.end()) - frame.begin();
}

struct Mismatch {
  std::int64_t frame = 0, word = 0;  // word within the frame, in stream order
  int got = 0, want = 0;
};

// The first word where `got` differs from `want`, both whole frames of
// `per_frame` words (a length difference is a mismatch at the shorter end).
inline std::optional<Mismatch> first_mismatch(const std::vector<std::int8_t>& got, const std::vector<std::int8_t>& want,
                                              std::int64_t per_frame) {
  const std::size_t n = std::min(got.size(), want.size());
  std::size_t i = 0;
  while (i < n && got[i] == want[i]) ++i;
  if (i == n && got.size() == want.size()) return std::nullopt;
  Mismatch m;
  m.frame = static_cast<std::int64_t>(i) / per_frame;
  m.word = static_cast<std::int64_t>(i) % per_frame;
  m.got = i < got.size() ? got[i] : 0;
  m.want = i < want.size() ? want[i] : 0;
  return m;
}

}  // namespace mixtd::host
