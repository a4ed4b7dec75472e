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

// The images a functional run computes with. Empty tensors (n = 0): seeded
// normal images (bit-exactness needs no real data). With a data set, the
// calibration images set the BFP8 activation exponents (as `mixtd accuracy`
// does, so the predictions are the same) and the inputs are the frames.
struct FunctionalData {
  numerics::FloatTensor calibration;  // NCHW, normalised as the network expects
  numerics::FloatTensor inputs;       // NCHW, at least as many as the frames run
  std::vector<std::int64_t> labels;   // of `inputs`, if known (for top-1)
  bool empty() const { return calibration.n == 0 && inputs.n == 0; }
};

// The design's network in BFP8: its decomposed layers, its weights (the
// network file's, or a zoo network's seeded ones), calibrated on
// `data.calibration`, or on 8 normal images from `seed` if that is empty.
// The decomposed layers' stage weights and biases are the design's factors
// file's when it names one (each entry's τ and geometry checked against
// the design's), else the dense weights decomposed by τ.
numerics::QNetwork quantise(const arch::Design& design, std::uint64_t seed, const FunctionalData& data = {});

// The weights of stage `m` (one chunk's QStage) in the order the hardware
// reads them: [out, in, kh, kw] with a linear layer's columns permuted from
// (channel, row, col) to the stream's (row, col, channel).
std::vector<std::int8_t> stage_image(const arch::Design& d, const arch::Module& m, const numerics::QStage& st);

// The input frames of a functional run in BFP8 at the network's input
// exponent: the first `frames` of `data.inputs`, or seeded normal images if
// it is empty (the SystemC model and co-simulation feed the same ones).
numerics::Int8Tensor input_frames(const numerics::QNetwork& q, const net::Shape& shape, std::int64_t frames,
                                  std::uint64_t seed, const FunctionalData& data = {});

// Each frame's top-1 class: the largest of its int8 outputs (the first on a
// tie), for a network whose output is a vector (C x 1 x 1).
std::vector<std::int64_t> top1(const numerics::Int8Tensor& y);
std::vector<std::int64_t> top1(const std::vector<std::int8_t>& stream_words, std::int64_t per_frame);

// A tensor's frames in stream order (frame, row, col, channel).
std::vector<std::int8_t> stream_order(const numerics::Int8Tensor& x);

// What a data-carrying run of `d` streams in and must stream out: the BFP8
// network (quantise), the input frames (input_frames) and the golden
// executor's outputs, the tensors and their words in stream order. The
// RTL co-simulation, the kernel test bench and the U250 package use these.
struct GoldenFrames {
  numerics::QNetwork q;
  numerics::Int8Tensor x, y;
  std::vector<std::int8_t> input, expected;
};
GoldenFrames golden_frames(const arch::Design& d, std::int64_t frames, std::uint64_t seed,
                           const FunctionalData& data = {});

}  // namespace mixtd::sim
