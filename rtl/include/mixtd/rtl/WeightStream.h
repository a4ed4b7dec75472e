// The kernel's weight stream (docs/rtl.md "Weight load"): every loaded
// memory's image as one segment of 64-bit beats, the format
// rtl/lib/mixtd_weight_loader.sv parses and mixtd_load_port.sv writes into
// its memory. The one description of that format on the C++ side: the RTL
// generator, `mixtd package` (data/weights.bin) and the kernel test bench
// all use it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixtd::rtl {

inline constexpr int kLoadBusBits = 82;                // {valid, first, id[15:0], data[63:0]}
inline constexpr int kWeightBeatBytes = 8;             // the stream's TDATA: 64 bits
inline constexpr std::uint16_t kWeightMagic = 0x4D57;  // "MW", header bits [63:48]
inline constexpr std::int64_t kMaxLoadIds = 65535;     // IDs 1 … 65535 (0: not loaded)

// One segment: memory `id`'s image, given as $readmemh text (one word per
// line, most significant hex digit first, `width_bits` a multiple of 8).
// Appends the header beat {magic, id, beats} and ⌈width/64⌉ beats per word,
// least significant first, zero above the word; every beat little-endian.
void append_weight_segment(std::vector<std::uint8_t>& stream, std::int64_t id, const std::string& hex_image,
                           std::int64_t width_bits);

// The segments of a stream (id, beats), checking its framing: a clear
// mixtd::Error for a bad magic, a truncated segment or a length that is not
// whole beats.
struct WeightSegment {
  std::int64_t id = 0, beats = 0;
};
std::vector<WeightSegment> weight_segments(const std::vector<std::uint8_t>& stream);

}  // namespace mixtd::rtl
