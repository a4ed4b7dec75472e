#include "mixtd/net/Layer.h"

#include <array>
#include <utility>

namespace mixtd::net {

namespace {
constexpr std::array<std::pair<LayerKind, std::string_view>, 9> kKindNames{{
    {LayerKind::Conv2d, "conv2d"},
    {LayerKind::BatchNorm, "batchnorm"},
    {LayerKind::ReLU, "relu"},
    {LayerKind::MaxPool, "maxpool"},
    {LayerKind::AvgPool, "avgpool"},
    {LayerKind::GlobalAvgPool, "globalavgpool"},
    {LayerKind::Add, "add"},
    {LayerKind::Linear, "linear"},
    {LayerKind::Flatten, "flatten"},
}};
}  // namespace

std::string_view to_string(LayerKind kind) {
  for (const auto& [k, n] : kKindNames)
    if (k == kind) return n;
  return "?";
}

std::optional<LayerKind> parse_layer_kind(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string layer_kind_names() {
  std::string out;
  for (const auto& [k, n] : kKindNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::int64_t Layer::expected_weight_size() const {
  switch (kind) {
    case LayerKind::Conv2d:
      return conv.out_channels * (in_shape.c / conv.groups) * conv.kh * conv.kw;
    case LayerKind::Linear:
      return linear.out_features * in_shape.numel();
    case LayerKind::BatchNorm:
      return in_shape.c;
    default:
      return 0;
  }
}

std::int64_t Layer::expected_bias_size() const {
  switch (kind) {
    case LayerKind::Conv2d:
      return conv.bias ? conv.out_channels : 0;
    case LayerKind::Linear:
      return linear.bias ? linear.out_features : 0;
    case LayerKind::BatchNorm:
      return in_shape.c;
    default:
      return 0;
  }
}

bool Layer::same_structure(const Layer& o) const {
  if (name != o.name || kind != o.kind || inputs != o.inputs) return false;
  switch (kind) {
    case LayerKind::Conv2d:
      return conv == o.conv;
    case LayerKind::MaxPool:
      return pool.kh == o.pool.kh && pool.kw == o.pool.kw && pool.sh == o.pool.sh && pool.sw == o.pool.sw &&
             pool.ph == o.pool.ph && pool.pw == o.pool.pw;
    case LayerKind::AvgPool:
      return pool == o.pool;
    case LayerKind::Linear:
      return linear == o.linear;
    case LayerKind::BatchNorm:
      return bn == o.bn;
    default:
      return true;
  }
}

}  // namespace mixtd::net
