#include "mixtd/numerics/Reference.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "mixtd/support/Error.h"

namespace mixtd::numerics {

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double abs_max(const FloatTensor& t) {
  double m = 0.0;
  for (float v : t.data) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

void record(AbsMax* stats, const std::string& key, double value) {
  if (!stats) return;
  auto& slot = (*stats)[key];
  slot = std::max(slot, value);
}

FloatTensor pool(const FloatTensor& x, const net::PoolAttrs& p, bool is_max) {
  const std::int64_t oh = (x.h + 2 * p.ph - p.kh) / p.sh + 1, ow = (x.w + 2 * p.pw - p.kw) / p.sw + 1;
  FloatTensor y(x.n, x.c, oh, ow);
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t c = 0; c < x.c; ++c)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          std::int64_t count = 0;
          for (std::int64_t u = 0; u < p.kh; ++u)
            for (std::int64_t v = 0; v < p.kw; ++v) {
              const std::int64_t r = i * p.sh + u - p.ph, s = j * p.sw + v - p.pw;
              const bool inside = r >= 0 && r < x.h && s >= 0 && s < x.w;
              if (inside) {
                const double val = x.at(n, c, r, s);
                acc = is_max ? std::max(acc, val) : acc + val;
                ++count;
              } else if (!is_max && p.count_include_pad) {
                ++count;
              }
            }
          y.at(n, c, i, j) = static_cast<float>(is_max ? acc : acc / static_cast<double>(count));
        }
  return y;
}

FloatTensor global_avg(const FloatTensor& x) {
  FloatTensor y(x.n, x.c, 1, 1);
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t c = 0; c < x.c; ++c) {
      double s = 0;
      for (std::int64_t i = 0; i < x.h * x.w; ++i) s += x.data[x.index(n, c, 0, 0) + static_cast<std::size_t>(i)];
      y.at(n, c, 0, 0) = static_cast<float>(s / static_cast<double>(x.h * x.w));
    }
  return y;
}

}  // namespace

FloatTensor conv2d(const FloatTensor& x, const float* w, const float* bias, std::int64_t out_ch, std::int64_t kh,
                   std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph, std::int64_t pw,
                   std::int64_t groups) {
  const std::int64_t oh = (x.h + 2 * ph - kh) / sh + 1, ow = (x.w + 2 * pw - kw) / sw + 1;
  const std::int64_t cin_g = x.c / groups, cout_g = out_ch / groups, k = cin_g * kh * kw, pix = oh * ow;
  FloatTensor y(x.n, out_ch, oh, ow);
  RowMat col(k, pix);
  for (std::int64_t n = 0; n < x.n; ++n) {
    for (std::int64_t g = 0; g < groups; ++g) {
      // im2col: row (c, u, v), column (i, j); zeros where the window is in the padding.
      for (std::int64_t c = 0; c < cin_g; ++c)
        for (std::int64_t u = 0; u < kh; ++u)
          for (std::int64_t v = 0; v < kw; ++v) {
            float* row = col.data() + ((c * kh + u) * kw + v) * pix;
            const float* src = x.data.data() + x.index(n, g * cin_g + c, 0, 0);
            for (std::int64_t i = 0; i < oh; ++i) {
              const std::int64_t r = i * sh + u - ph;
              for (std::int64_t j = 0; j < ow; ++j) {
                const std::int64_t s = j * sw + v - pw;
                row[i * ow + j] = (r >= 0 && r < x.h && s >= 0 && s < x.w) ? src[r * x.w + s] : 0.0f;
              }
            }
          }
      Eigen::Map<const RowMat> wm(w + g * cout_g * k, cout_g, k);
      Eigen::Map<RowMat> ym(y.data.data() + y.index(n, g * cout_g, 0, 0), cout_g, pix);
      ym.noalias() = wm * col;
      if (bias)
        for (std::int64_t o = 0; o < cout_g; ++o) ym.row(o).array() += bias[g * cout_g + o];
    }
  }
  return y;
}

FloatTensor run_stage(const FloatTensor& x, const td::StageWeights& st) {
  const auto& s = st.shape;
  require(x.c == s.in_ch,
          "stage " + s.role + ": input has " + std::to_string(x.c) + " channels, expected " + std::to_string(s.in_ch));
  return conv2d(x, st.weight.data(), nullptr, s.out_ch, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.groups);
}

FloatTensor run_decomposed(const FloatTensor& x, const td::DecomposedLayer& d, const std::string& name, AbsMax* stats) {
  const auto& g = d.geometry;
  const std::int64_t g1 = g.tau.g1, g2 = g.tau.g2;
  const auto& last = g.stages.back();
  FloatTensor y(x.n, g.n, last.out.h, last.out.w);
  for (std::int64_t b = 0; b < g2; ++b) {
    const FloatTensor xb = g2 == 1 ? x : channel_group(x, g2, b);
    for (std::int64_t a = 0; a < g1; ++a) {
      const auto& chunk = d.chunk(a, b);
      FloatTensor t = xb;
      for (std::size_t k = 0; k < chunk.stages.size(); ++k) {
        t = run_stage(t, chunk.stages[k]);
        if (k + 1 < chunk.stages.size()) record(stats, name + "#stage" + std::to_string(k), abs_max(t));
      }
      if (g2 > 1) record(stats, name + "#partial", abs_max(t));
      // Output group a: channels n = a + j * g1.
      for (std::int64_t i = 0; i < x.n; ++i)
        for (std::int64_t j = 0; j < t.c; ++j)
          for (std::int64_t p = 0; p < t.h * t.w; ++p)
            y.data[y.index(i, a + j * g1, 0, 0) + static_cast<std::size_t>(p)] +=
                t.data[t.index(i, j, 0, 0) + static_cast<std::size_t>(p)];
    }
  }
  if (!d.bias.empty())
    for (std::int64_t i = 0; i < x.n; ++i)
      for (std::int64_t c = 0; c < g.n; ++c)
        for (std::int64_t p = 0; p < y.h * y.w; ++p)
          y.data[y.index(i, c, 0, 0) + static_cast<std::size_t>(p)] += d.bias[static_cast<std::size_t>(c)];
  return y;
}

namespace {

// Runs the layers in order; stops after `stop_at` when it is not empty.
FloatTensor run(const net::Network& net, const FloatTensor& input, const Decompositions* decomps, AbsMax* stats,
                const std::string& stop_at) {
  require(input.shape() == net.input_shape, "network '" + net.name + "' expects input " + net.input_shape.str() +
                                                " per image, got " + input.shape().str());
  require(net.has_weights(), "network '" + net.name + "' carries no weights; the float executor needs them");
  std::map<std::string, FloatTensor> values;
  values[net.input_name] = input;
  record(stats, net.input_name, abs_max(input));
  // Free a tensor once its last reader has run.
  std::map<std::string, std::size_t> last_use;
  for (std::size_t i = 0; i < net.layers.size(); ++i)
    for (const auto& in : net.layers[i].inputs) last_use[in] = i;

  if (stop_at == net.input_name) return input;
  const auto outputs = net.outputs();
  require(!stop_at.empty() || outputs.size() == 1, "network '" + net.name + "' has " + std::to_string(outputs.size()) +
                                                       " outputs; the executors support exactly one");
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    const FloatTensor& x = values.at(l.inputs[0]);
    FloatTensor y;
    switch (l.kind) {
      case net::LayerKind::Conv2d: {
        const td::DecomposedLayer* d = nullptr;
        if (decomps) {
          auto it = decomps->find(l.name);
          if (it != decomps->end()) d = &it->second;
        }
        if (d)
          y = run_decomposed(x, *d, l.name, stats);
        else
          y = conv2d(x, l.weight.data(), l.bias.empty() ? nullptr : l.bias.data(), l.conv.out_channels, l.conv.kh,
                     l.conv.kw, l.conv.sh, l.conv.sw, l.conv.ph, l.conv.pw, l.conv.groups);
        break;
      }
      case net::LayerKind::Linear: {
        FloatTensor flat = x;
        flat.c = x.per_image();
        flat.h = flat.w = 1;
        y = conv2d(flat, l.weight.data(), l.bias.empty() ? nullptr : l.bias.data(), l.linear.out_features, 1, 1, 1, 1,
                   0, 0, 1);
        break;
      }
      case net::LayerKind::BatchNorm: {
        y = x;
        for (std::int64_t n = 0; n < x.n; ++n)
          for (std::int64_t c = 0; c < x.c; ++c) {
            const auto ci = static_cast<std::size_t>(c);
            const double scale = l.weight[ci] / std::sqrt(static_cast<double>(l.var[ci]) + l.bn.eps);
            for (std::int64_t p = 0; p < x.h * x.w; ++p) {
              float& v = y.data[y.index(n, c, 0, 0) + static_cast<std::size_t>(p)];
              v = static_cast<float>((v - l.mean[ci]) * scale + l.bias[ci]);
            }
          }
        break;
      }
      case net::LayerKind::ReLU:
        y = x;
        for (float& v : y.data) v = std::max(v, 0.0f);
        break;
      case net::LayerKind::MaxPool:
        y = pool(x, l.pool, true);
        break;
      case net::LayerKind::AvgPool:
        y = pool(x, l.pool, false);
        break;
      case net::LayerKind::GlobalAvgPool:
        y = global_avg(x);
        break;
      case net::LayerKind::Add:
        y = x;
        for (std::size_t k = 1; k < l.inputs.size(); ++k) {
          const FloatTensor& z = values.at(l.inputs[k]);
          for (std::size_t e = 0; e < y.data.size(); ++e) y.data[e] += z.data[e];
        }
        break;
      case net::LayerKind::Flatten:
        y = x;
        y.c = x.per_image();
        y.h = y.w = 1;
        break;
    }
    record(stats, l.name, abs_max(y));
    if (l.name == stop_at) return y;
    values[l.name] = std::move(y);
    for (const auto& in : l.inputs)
      if (last_use[in] == i) values.erase(in);
  }
  require(stop_at.empty(), "no tensor '" + stop_at + "' in network '" + net.name + "'");
  return values.at(outputs[0]);
}

}  // namespace

FloatTensor run_float(const net::Network& net, const FloatTensor& input, const Decompositions* decomps, AbsMax* stats) {
  return run(net, input, decomps, stats, "");
}

FloatTensor run_float_until(const net::Network& net, const FloatTensor& input, const std::string& name,
                            const Decompositions* decomps) {
  require(!name.empty(), "run_float_until: empty tensor name");
  return run(net, input, decomps, nullptr, name);
}

}  // namespace mixtd::numerics
