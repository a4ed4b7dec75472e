// ONNX import and export of a Network with its weights (libonnx protobuf).
//
// Import accepts what PyTorch's exporter writes (opset 9..17): Conv,
// BatchNormalization (folded into the conv it follows), Relu, MaxPool,
// AveragePool, GlobalAveragePool, Add, Gemm, MatMul (+ Add as bias),
// Flatten, Reshape to [N, -1], and the Identity / Dropout / Constant nodes
// exporters leave around. Anything else is an error naming the op and node.
#pragma once

#include <filesystem>

#include "mixtd/net/Network.h"

namespace mixtd::net {

// Reads an ONNX model; the result has weights, shapes inferred and
// BatchNorm folded. Throws mixtd::Error naming the file and node.
Network load_onnx(const std::filesystem::path& path);

// Writes `net` (which must carry weights) as an ONNX model, atomically.
void save_onnx(const Network& net, const std::filesystem::path& path);

}  // namespace mixtd::net
