// One node of the network DAG.
//
// A Layer is a plain record: its kind, its inputs (by name), the attributes
// of that kind and, optionally, its weights. Shapes are derived by
// Network::infer_shapes(); counts by counts() in Counts.h. Nothing here is
// typed in twice: a conv's input channels come from its input's shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/net/Shape.h"

namespace mixtd::net {

enum class LayerKind {
  Conv2d,
  BatchNorm,
  ReLU,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  Add,
  Linear,
  Flatten,
};

// Lower-case names used in YAML and on the command line: "conv2d", "relu", ...
std::string_view to_string(LayerKind kind);
std::optional<LayerKind> parse_layer_kind(std::string_view name);
// "conv2d, batchnorm, relu, ..." for error messages.
std::string layer_kind_names();

struct Conv2dAttrs {
  std::int64_t out_channels = 0;
  std::int64_t kh = 1, kw = 1;  // kernel
  std::int64_t sh = 1, sw = 1;  // stride
  std::int64_t ph = 0, pw = 0;  // zero padding, symmetric
  std::int64_t groups = 1;      // 1 = dense; == in channels (and out) = depthwise
  bool bias = true;
  bool operator==(const Conv2dAttrs&) const = default;
};

struct PoolAttrs {
  std::int64_t kh = 2, kw = 2;
  std::int64_t sh = 2, sw = 2;
  std::int64_t ph = 0, pw = 0;
  // AvgPool only: whether padded zeros count in the divisor (PyTorch's default).
  bool count_include_pad = true;
  bool operator==(const PoolAttrs&) const = default;
};

struct LinearAttrs {
  std::int64_t out_features = 0;
  bool bias = true;
  bool operator==(const LinearAttrs&) const = default;
};

struct BatchNormAttrs {
  double eps = 1e-5;
  bool operator==(const BatchNormAttrs&) const = default;
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::ReLU;
  // Producers by layer name; the network input is called Network::input_name.
  // Add takes two or more; every other kind exactly one.
  std::vector<std::string> inputs;

  // Only the attributes of `kind` are meaningful.
  Conv2dAttrs conv;
  PoolAttrs pool;
  LinearAttrs linear;
  BatchNormAttrs bn;

  // Weights, row-major, empty when the network carries none:
  //   Conv2d:    weight [out, in/groups, kh, kw], bias [out]
  //   Linear:    weight [out, in],                bias [out]
  //   BatchNorm: weight = gamma, bias = beta, mean, var  (each [channels])
  std::vector<float> weight;
  std::vector<float> bias;
  std::vector<float> mean;
  std::vector<float> var;

  // Derived by Network::infer_shapes(): shape of inputs[0] and of the output.
  Shape in_shape;
  Shape out_shape;

  bool has_weights() const { return !weight.empty(); }
  // Number of input channels per group and number of weight elements,
  // valid after shape inference.
  std::int64_t expected_weight_size() const;
  std::int64_t expected_bias_size() const;

  // Structure and attributes equal (weights and derived shapes not compared).
  bool same_structure(const Layer& other) const;
};

}  // namespace mixtd::net
