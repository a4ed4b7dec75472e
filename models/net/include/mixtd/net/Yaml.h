// The YAML network description.
//
//   network: tiny
//   input: {name: input, shape: [3, 16, 16]}     # C, H, W
//   weights: tiny.weights                         # optional; relative to this file
//   layers:
//     - {name: conv1, kind: conv2d, input: input, out_channels: 8, kernel: 3, stride: 1, padding: 1}
//     - {name: relu1, kind: relu, input: conv1}
//     - {name: add1, kind: add, inputs: [relu1, input]}
//
// Every key of every kind is documented in docs/network-yaml.md. Errors give
// `file:line:` and the layer, as a compiler would.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "mixtd/net/Network.h"

namespace mixtd::net {

// Parses a description. `source` names it in errors; a relative `weights:`
// path is resolved against `base_dir` and loaded when `with_weights`.
Network parse_yaml(std::string_view text, const std::string& source, const std::filesystem::path& base_dir,
                   bool with_weights = true);
Network load_yaml(const std::filesystem::path& path, bool with_weights = true);

// The description as YAML text; `weights_ref` (may be empty) is written as
// the `weights:` entry.
std::string to_yaml(const Network& net, const std::string& weights_ref = "");

// Writes `path` atomically; if the network carries weights they go to
// `<path without extension>.weights` beside it, referenced by name.
void save_yaml(const Network& net, const std::filesystem::path& path);

}  // namespace mixtd::net
