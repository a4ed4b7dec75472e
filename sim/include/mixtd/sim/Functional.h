// What every model that carries data needs from a Design (the SystemC
// pipeline, the RTL generator, co-simulation): the network in BFP8 and the
// weight image of each stage instance, so that all of them compute with the
// very same numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/numerics/Quantized.h"

namespace mixtd::sim {

// The design's network in BFP8: its decomposed layers, calibrated on a
// seeded batch of normal images (bit-exactness needs no real data).
numerics::QNetwork quantise(const arch::Design& design, std::uint64_t seed);

// The weights of stage `m` (one chunk's QStage) in the order the hardware
// reads them: [out, in, kh, kw] with a linear layer's columns permuted from
// (channel, row, col) to the stream's (row, col, channel).
std::vector<std::int8_t> stage_image(const arch::Design& d, const arch::Module& m, const numerics::QStage& st);

// The input frames of a functional run: seeded normal images in BFP8 at
// the network's input exponent (the SystemC model and co-simulation feed
// the same ones).
numerics::Int8Tensor input_frames(const numerics::QNetwork& q, const net::Shape& shape, std::int64_t frames,
                                  std::uint64_t seed);

// A tensor's frames in stream order (frame, row, col, channel).
std::vector<std::int8_t> stream_order(const numerics::Int8Tensor& x);

}  // namespace mixtd::sim
