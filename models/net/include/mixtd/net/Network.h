// A CNN as a DAG of layers on NCHW tensors.
//
// Layers are kept in topological order: every input of layer i is the
// network input or a layer before i. add() enforces that, so every consumer
// can walk `layers` front to back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/net/Layer.h"

namespace mixtd::net {

class Network {
 public:
  std::string name = "network";
  std::string input_name = "input";
  Shape input_shape;
  std::vector<Layer> layers;

  // Appends `layer`, checking that its name is new and its inputs exist.
  // Returns a reference valid until the next add().
  Layer& add(Layer layer);

  // Derives in_shape/out_shape of every layer from input_shape. Throws
  // mixtd::Error naming the layer and the offending shape or attribute.
  void infer_shapes();

  // Checks every layer's weights (if any) have the size its shapes imply.
  void check_weights() const;

  // Folds every BatchNorm into the Conv2d that feeds it (the conv must feed
  // only that BatchNorm), then removes the BatchNorm layers. Requires weights
  // on both or on neither.
  void fold_batchnorm();

  const Layer* find(std::string_view layer_name) const;
  Layer* find(std::string_view layer_name);
  // Index in `layers`; -1 for the network input; throws if unknown.
  int index_of(std::string_view layer_name) const;
  // Shape of the named tensor (a layer's output or the network input).
  Shape shape_of(std::string_view tensor_name) const;
  // Names of the layers that read `tensor_name`.
  std::vector<std::string> consumers(std::string_view tensor_name) const;
  // The layers no other layer reads (the network's outputs).
  std::vector<std::string> outputs() const;

  bool has_weights() const;
  // Drops all weights (shape-only network).
  void clear_weights();

  // Same layers, attributes and input shape (weights not compared).
  bool same_structure(const Network& other) const;
  // Same structure and bit-identical weights.
  bool same_weights(const Network& other) const;
};

// The ReLUs the hardware fuses into their producer's requantiser: a ReLU
// whose producer is a conv2d, linear or add that feeds only it. Maps each
// such producer to its ReLU. The quantiser and the hardware graph both use
// this one rule.
std::map<std::string, std::string> fused_relus(const Network& net);

// Kaiming-normal weights (std = sqrt(2 / fan_in)) and PyTorch-style uniform
// biases (±1/sqrt(fan_in)), seeded per layer from (seed, layer name) so that
// adding a layer does not change the others. BatchNorm gets identity stats.
void init_random_weights(Network& net, std::uint64_t seed);

}  // namespace mixtd::net
