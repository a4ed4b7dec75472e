#include "mixtd/net/Counts.h"

#include <charconv>

#include "mixtd/support/Error.h"

namespace mixtd::net {

LayerCounts counts(const Layer& l) {
  LayerCounts c;
  switch (l.kind) {
    case LayerKind::Conv2d:
      c.weights = l.expected_weight_size();
      c.biases = l.expected_bias_size();
      c.macs = l.out_shape.h * l.out_shape.w * c.weights;
      break;
    case LayerKind::Linear:
      c.weights = l.expected_weight_size();
      c.biases = l.expected_bias_size();
      c.macs = c.weights;
      break;
    default:
      // BatchNorm is folded before counting in every flow; ReLU, pooling,
      // Add and Flatten have no parameters and no multiplies.
      break;
  }
  return c;
}

NetworkCounts counts(const Network& net) {
  NetworkCounts t;
  for (const auto& l : net.layers) {
    const LayerCounts c = counts(l);
    t.params += c.params();
    t.macs += c.macs;
    if (l.kind == LayerKind::Conv2d) ++t.conv_layers;
    if (l.kind == LayerKind::Linear) ++t.linear_layers;
  }
  return t;
}

Bits parse_bits(const std::string& text) {
  const auto comma = text.find(',');
  auto bad = [&]() { return Error("--bits '" + text + "': expected W,A with widths 1..32 (e.g. 8,8 or 32,32)"); };
  if (comma == std::string::npos) throw bad();
  Bits b;
  auto parse = [&](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || p != s.data() + s.size() || out < 1 || out > 32) throw bad();
  };
  parse(std::string_view(text).substr(0, comma), b.weight);
  parse(std::string_view(text).substr(comma + 1), b.activation);
  return b;
}

}  // namespace mixtd::net
