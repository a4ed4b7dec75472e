#include "mixtd/rtl/WeightStream.h"

#include <sstream>

#include "mixtd/support/Error.h"

namespace mixtd::rtl {

namespace {

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void put_beat(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < kWeightBeatBytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

void append_weight_segment(std::vector<std::uint8_t>& stream, std::int64_t id, const std::string& hex_image,
                           std::int64_t width_bits) {
  require(id >= 1 && id <= kMaxLoadIds, "weight stream: memory ID " + std::to_string(id) + " outside 1 … 65535");
  require(width_bits > 0 && width_bits % 8 == 0,
          "weight stream: memory word of " + std::to_string(width_bits) + " bits is not whole bytes");
  const std::int64_t bytes = width_bits / 8, beats_per_word = (bytes + kWeightBeatBytes - 1) / kWeightBeatBytes;
  std::vector<std::uint8_t> payload;
  std::istringstream lines(hex_image);
  std::int64_t words = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    require(static_cast<std::int64_t>(line.size()) == 2 * bytes,
            "weight stream: memory " + std::to_string(id) + " line " + std::to_string(words + 1) + " has " +
                std::to_string(line.size()) + " hex digits, the word is " + std::to_string(2 * bytes));
    std::vector<std::uint8_t> word(static_cast<std::size_t>(beats_per_word * kWeightBeatBytes), 0);
    for (std::int64_t b = 0; b < bytes; ++b) {  // byte b: the two digits b from the right
      const std::size_t at = line.size() - 2 * static_cast<std::size_t>(b) - 2;
      const int hi = nibble(line[at]), lo = nibble(line[at + 1]);
      require(hi >= 0 && lo >= 0, "weight stream: memory " + std::to_string(id) + " line " + std::to_string(words + 1) +
                                      " is not hex: '" + line + "'");
      word[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    payload.insert(payload.end(), word.begin(), word.end());
    ++words;
  }
  const std::int64_t beats = words * beats_per_word;
  require(beats <= 0xFFFFFFFFLL, "weight stream: memory " + std::to_string(id) + " image of " + std::to_string(beats) +
                                     " beats exceeds the header's 32-bit count");
  put_beat(stream, std::uint64_t{kWeightMagic} << 48 | static_cast<std::uint64_t>(id) << 32 |
                       static_cast<std::uint64_t>(beats));
  stream.insert(stream.end(), payload.begin(), payload.end());
}

std::vector<WeightSegment> weight_segments(const std::vector<std::uint8_t>& stream) {
  require(stream.size() % kWeightBeatBytes == 0,
          "weight stream: " + std::to_string(stream.size()) + " bytes are not whole 8-byte beats");
  std::vector<WeightSegment> out;
  const std::size_t beats = stream.size() / kWeightBeatBytes;
  for (std::size_t i = 0; i < beats;) {
    std::uint64_t h = 0;
    for (int b = 0; b < kWeightBeatBytes; ++b)
      h |= std::uint64_t{stream[i * kWeightBeatBytes + static_cast<std::size_t>(b)]} << (8 * b);
    require(h >> 48 == kWeightMagic,
            "weight stream: beat " + std::to_string(i) + " should be a segment header (magic 0x4D57), it is not");
    WeightSegment s{static_cast<std::int64_t>(h >> 32 & 0xFFFF), static_cast<std::int64_t>(h & 0xFFFFFFFF)};
    require(i + 1 + static_cast<std::size_t>(s.beats) <= beats,
            "weight stream: segment of memory " + std::to_string(s.id) + " at beat " + std::to_string(i) + " has " +
                std::to_string(s.beats) + " beats, " + std::to_string(beats - i - 1) + " remain");
    out.push_back(s);
    i += 1 + static_cast<std::size_t>(s.beats);
  }
  return out;
}

}  // namespace mixtd::rtl
