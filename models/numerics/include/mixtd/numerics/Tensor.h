// A dense NCHW tensor: the batch of activations every executor passes around.
#pragma once

#include <cstdint>
#include <vector>

#include "mixtd/net/Shape.h"

namespace mixtd::numerics {

template <typename T>
struct Tensor {
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  std::vector<T> data;

  Tensor() = default;
  Tensor(std::int64_t n_, std::int64_t c_, std::int64_t h_, std::int64_t w_, T fill = T{})
      : n(n_), c(c_), h(h_), w(w_), data(static_cast<std::size_t>(n_ * c_ * h_ * w_), fill) {}
  Tensor(std::int64_t n_, net::Shape s, T fill = T{}) : Tensor(n_, s.c, s.h, s.w, fill) {}

  std::size_t index(std::int64_t in, std::int64_t ic, std::int64_t ih, std::int64_t iw) const {
    return static_cast<std::size_t>(((in * c + ic) * h + ih) * w + iw);
  }
  T& at(std::int64_t in, std::int64_t ic, std::int64_t ih, std::int64_t iw) { return data[index(in, ic, ih, iw)]; }
  const T& at(std::int64_t in, std::int64_t ic, std::int64_t ih, std::int64_t iw) const {
    return data[index(in, ic, ih, iw)];
  }
  net::Shape shape() const { return {c, h, w}; }
  std::int64_t per_image() const { return c * h * w; }
  bool operator==(const Tensor&) const = default;
};

using FloatTensor = Tensor<float>;
using Int8Tensor = Tensor<std::int8_t>;

// Channels c ≡ group (mod groups) of x, in natural order (SPEC: strided groups).
template <typename T>
Tensor<T> channel_group(const Tensor<T>& x, std::int64_t groups, std::int64_t group) {
  Tensor<T> out(x.n, x.c / groups, x.h, x.w);
  for (std::int64_t i = 0; i < x.n; ++i)
    for (std::int64_t j = 0; j < out.c; ++j)
      for (std::int64_t y = 0; y < x.h; ++y)
        for (std::int64_t z = 0; z < x.w; ++z) out.at(i, j, y, z) = x.at(i, group + j * groups, y, z);
  return out;
}

}  // namespace mixtd::numerics
