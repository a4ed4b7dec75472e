// Helpers shared by the mixtd::td tests: a one-conv network's layer, norms,
// and a naive direct convolution (the reference the decomposed stages are
// run against — deliberately the simplest loops, nothing shared with td).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::td::testing {

struct ConvSpec {
  std::string name = "conv";
  std::int64_t c = 8, n = 12, kh = 3, kw = 3, s = 1, p = 1, h = 6, w = 6;
  bool bias = true;
  std::uint64_t seed = 1;
};

// The conv layer of a one-layer network, shapes inferred, seeded weights.
inline net::Layer make_conv(const ConvSpec& spec) {
  net::Network net;
  net.input_shape = {spec.c, spec.h, spec.w};
  net::Layer l;
  l.name = spec.name;
  l.kind = net::LayerKind::Conv2d;
  l.inputs = {net.input_name};
  l.conv.out_channels = spec.n;
  l.conv.kh = spec.kh;
  l.conv.kw = spec.kw;
  l.conv.sh = l.conv.sw = spec.s;
  l.conv.ph = l.conv.pw = spec.p;
  l.conv.bias = spec.bias;
  net.add(l);
  net.infer_shapes();
  net::init_random_weights(net, spec.seed);
  return net.layers.at(0);
}

inline double norm(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += static_cast<double>(v) * v;
  return std::sqrt(s);
}

// ||a - b|| / ||b||
inline double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    s += d * d;
  }
  const double nb = norm(b);
  return std::sqrt(s) / (nb > 0 ? nb : 1.0);
}

inline std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p) {
  return (in + 2 * p - k) / s + 1;
}

// Direct convolution of x [in_ch, h, w] by the weight [out, depthwise ? 1 : in, kh, kw]
// of stage s (its stride, zero padding and depthwise flag), no bias.
inline std::vector<float> conv2d(const std::vector<float>& x, std::int64_t h, std::int64_t w, const StageShape& s,
                                 const std::vector<float>& weight, std::int64_t* oh_out = nullptr,
                                 std::int64_t* ow_out = nullptr) {
  const std::int64_t oh = out_size(h, s.kh, s.sh, s.ph), ow = out_size(w, s.kw, s.sw, s.pw);
  const std::int64_t per_out_in = s.depthwise ? 1 : s.in_ch;
  std::vector<float> y(static_cast<std::size_t>(s.out_ch * oh * ow));
  for (std::int64_t o = 0; o < s.out_ch; ++o)
    for (std::int64_t yi = 0; yi < oh; ++yi)
      for (std::int64_t xi = 0; xi < ow; ++xi) {
        double acc = 0;
        for (std::int64_t ci = 0; ci < per_out_in; ++ci) {
          const std::int64_t c = s.depthwise ? o : ci;
          for (std::int64_t i = 0; i < s.kh; ++i)
            for (std::int64_t j = 0; j < s.kw; ++j) {
              const std::int64_t hy = yi * s.sh + i - s.ph, wx = xi * s.sw + j - s.pw;
              if (hy < 0 || hy >= h || wx < 0 || wx >= w) continue;
              acc +=
                  static_cast<double>(weight[((o * per_out_in + ci) * s.kh + i) * s.kw + j]) * x[(c * h + hy) * w + wx];
            }
        }
        y[(o * oh + yi) * ow + xi] = static_cast<float>(acc);
      }
  if (oh_out) *oh_out = oh;
  if (ow_out) *ow_out = ow;
  return y;
}

}  // namespace mixtd::td::testing
