// mixtd's binary weights file (`.weights`): the YAML description's sidecar.
//
// Layout (little-endian): magic "MIXTDW1\n"; u32 tensor count; per tensor
// u32 name length, name, u32 rank, i64 dims[rank], f32 data; u32 CRC-32 of
// everything before it. Tensors are named `<layer>.weight`, `.bias`, `.mean`,
// `.var`. ONNX is the format for exchanging trained weights with other tools;
// this one exists so a YAML network round-trips bit for bit without one.
#pragma once

#include <filesystem>

#include "mixtd/net/Network.h"

namespace mixtd::net {

void save_weights(const Network& net, const std::filesystem::path& path);

// Loads into a network whose shapes are inferred; every tensor must match a
// layer and its expected size. Throws mixtd::Error naming file and tensor.
void load_weights(Network& net, const std::filesystem::path& path);

}  // namespace mixtd::net
