// Derived counts of a network: parameters, MACs, BitOPs, weight memory.
//
// BitOPs follow the paper (Mixed-TD Table II): 2 · W · A · MACs, where W and A
// are the weight and activation widths in bits. Weight memory counts every
// parameter (weights and biases) at W bits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"

namespace mixtd::net {

struct LayerCounts {
  std::int64_t weights = 0;  // weight elements
  std::int64_t biases = 0;   // bias elements
  std::int64_t macs = 0;     // multiply-accumulates per image
  std::int64_t params() const { return weights + biases; }
};

// Counts of one layer; the network's shapes must be inferred.
LayerCounts counts(const Layer& layer);

struct NetworkCounts {
  std::int64_t params = 0;
  std::int64_t macs = 0;
  std::int64_t conv_layers = 0;
  std::int64_t linear_layers = 0;
};

NetworkCounts counts(const Network& net);

struct Bits {
  int weight = 8;
  int activation = 8;
};

inline double bitops(std::int64_t macs, Bits bits) {
  return 2.0 * bits.weight * bits.activation * static_cast<double>(macs);
}
inline double weight_memory_bits(std::int64_t params, Bits bits) { return static_cast<double>(params) * bits.weight; }

// Parses "W,A" (e.g. "8,8"); throws mixtd::Error saying the legal form.
Bits parse_bits(const std::string& text);

}  // namespace mixtd::net
