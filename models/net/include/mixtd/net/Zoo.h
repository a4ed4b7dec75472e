// Built-in networks.
//
// A zoo spec is `name[:key=value,...]`, e.g. `resnet18`, `resnet18-fmnist:width=0.25`,
// `tiny:seed=7`. Keys: `width` (channel multiplier; every entry takes it, the
// Fashion-MNIST nets resnet18-fmnist and repvgg-fmnist are shipped trained at
// width=0.25), `classes` (classifier outputs), `seed` (weight seed, default 0).
// The spec string is what design.yaml records, so a network is rebuilt
// exactly from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/net/Network.h"

namespace mixtd::net {

struct ZooEntry {
  std::string name;
  std::string description;
};

const std::vector<ZooEntry>& zoo_entries();

// True if the part before ':' names a zoo network.
bool is_zoo_spec(std::string_view spec);

// Builds the network with shapes inferred; with seeded Kaiming weights when
// `with_weights` (ImageNet-size nets are hundreds of MB of floats, so
// shape-only is the default for counting). Throws mixtd::Error on an unknown
// name or key, listing the legal ones.
Network build_zoo(std::string_view spec, bool with_weights = false);

}  // namespace mixtd::net
