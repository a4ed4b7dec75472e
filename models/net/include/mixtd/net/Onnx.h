// ONNX import and export of a Network with its weights (libonnx protobuf).
//
// Import accepts what PyTorch's exporter writes (opset 9..17): Conv,
// BatchNormalization (folded into the conv it follows), Relu, MaxPool,
// AveragePool, GlobalAveragePool, Add, Sum, Gemm, MatMul (+ Add as bias),
// Flatten, Reshape to [N, -1] / [-1, C*H*W], a zero Pad before Conv or
// AveragePool (torch writes AvgPool2d(padding=p) as Pad + AveragePool), and
// the Identity / Dropout / Constant nodes exporters leave around. Anything
// else is an error naming the file, the node and the op. Not supported:
// asymmetric pads, dilations other than 1, ceil_mode = 1, non-float32
// weights, weights in external data files.
//
// Layer names: torch's scoped node names become torchvision module paths
// ("/layer2/layer2.0/downsample/downsample.0/Conv" -> "layer2.0.downsample.0";
// an op of a block itself, like a BasicBlock's residual Add, gets the op as a
// suffix: "layer1.0.add"); otherwise the weight's name ("conv1.weight" ->
// "conv1"), the node name, or "<op>_<index>". Files written by save_onnx keep
// their node names (= layer names) verbatim.
#pragma once

#include <filesystem>

#include "mixtd/net/Network.h"

namespace mixtd::net {

// Reads an ONNX model; the result has weights, shapes inferred and
// BatchNorm folded. The network input is the one graph input that is not an
// initializer, [N, C, H, W] with N free. Throws mixtd::Error naming the file
// and node (a truncated or non-ONNX file: "not a valid ONNX model").
Network load_onnx(const std::filesystem::path& path);

// Writes `net` (which must carry weights) as an ONNX model, atomically:
// ir_version 7, opset 13, input `net.input_name` [batch, C, H, W], one
// initializer per weight ("<layer>.weight", "<layer>.bias", BatchNorm also
// "<layer>.running_mean" / ".running_var"), node and output tensor names =
// layer names, one graph output per network output. load_onnx(save_onnx(n))
// is n again, bit for bit (BatchNorm layers come back folded).
void save_onnx(const Network& net, const std::filesystem::path& path);

}  // namespace mixtd::net
