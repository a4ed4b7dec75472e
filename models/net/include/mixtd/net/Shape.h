// The shape of one activation tensor, per image (NCHW without N: the batch
// is a run-time quantity, never part of the network).
#pragma once

#include <cstdint>
#include <string>

namespace mixtd::net {

struct Shape {
  std::int64_t c = 0;
  std::int64_t h = 0;
  std::int64_t w = 0;

  std::int64_t numel() const { return c * h * w; }
  bool operator==(const Shape&) const = default;
  // "64x56x56"
  std::string str() const { return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w); }
};

}  // namespace mixtd::net
