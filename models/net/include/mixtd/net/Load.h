// One entry point for "a network the user named": a zoo spec, a .yaml/.yml
// description or an .onnx model.
#pragma once

#include <string>

#include "mixtd/net/Network.h"

namespace mixtd::net {

// Shapes are always inferred. Weights: ONNX always has them; YAML loads its
// sidecar and the zoo generates seeded ones only when `with_weights`.
Network load_network(const std::string& spec, bool with_weights = false);

}  // namespace mixtd::net
