// The float reference executor: im2col + GEMM (Eigen), for measuring
// decomposition error on real activations and for calibrating the BFP8
// exponents. It runs a network with any of its conv layers replaced by
// decomposed stages (td::DecomposedLayer), with the same grouping
// semantics as the hardware: input group b feeds chunks (·, b), output group
// a is the sum over b of chunk (a, b), plus the bias once.
#pragma once

#include <map>
#include <string>

#include "mixtd/net/Network.h"
#include "mixtd/numerics/Tensor.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::numerics {

// Decomposed layers by layer name; a conv not in the map runs as itself.
using Decompositions = std::map<std::string, td::DecomposedLayer>;

// Largest |value| seen per tensor over a run: the calibration statistics.
//   "<input name>"        the network input
//   "<layer>"             a layer's output
//   "<layer>#stage<k>"    stage k of a decomposed layer (max over chunks)
//   "<layer>#partial"     chunk partial sums when g2 > 1 (max over chunks)
using AbsMax = std::map<std::string, double>;

// y = conv(x, w) + bias; w is [out, in/groups, kh, kw]; bias may be null.
FloatTensor conv2d(const FloatTensor& x, const float* w, const float* bias, std::int64_t out_ch, std::int64_t kh,
                   std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph, std::int64_t pw,
                   std::int64_t groups);

// One stage of an engine (no bias).
FloatTensor run_stage(const FloatTensor& x, const td::StageWeights& stage);

// A whole decomposed layer (all chunks, group sum, bias). `stats`, if given,
// records the stage and partial maxima under `name`.
FloatTensor run_decomposed(const FloatTensor& x, const td::DecomposedLayer& d, const std::string& name = "",
                           AbsMax* stats = nullptr);

// Runs `net` on a batch and returns the output of its (single) output layer.
// Needs weights. `stats`, if given, is filled for every tensor.
FloatTensor run_float(const net::Network& net, const FloatTensor& input, const Decompositions* decomps = nullptr,
                      AbsMax* stats = nullptr);

// Runs `net` only as far as needed and returns the tensor called `name` (a
// layer's output or the network input).
FloatTensor run_float_until(const net::Network& net, const FloatTensor& input, const std::string& name,
                            const Decompositions* decomps = nullptr);

}  // namespace mixtd::numerics
