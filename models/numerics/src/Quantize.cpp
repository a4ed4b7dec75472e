#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "mixtd/numerics/Quantized.h"
#include "mixtd/support/Error.h"

namespace mixtd::numerics {

namespace {

int clamp_shift(int s) { return std::clamp(s, -kMaxShift, kMaxShift); }

// The float stages of a conv that is not decomposed: the layer itself.
td::DecomposedLayer as_is(const net::Layer& l) {
  td::DecomposedLayer d;
  d.geometry = td::geometry(l, td::Tau{});
  td::ChunkFactors c;
  c.stages.push_back({d.geometry.stages[0], l.weight});
  d.chunks.push_back(std::move(c));
  d.bias = l.bias;
  return d;
}

// A linear layer as one 1x1 stage over its flattened input.
td::DecomposedLayer linear_as_stage(const net::Layer& l) {
  td::DecomposedLayer d;
  d.geometry = td::linear_geometry(l);
  td::ChunkFactors c;
  c.stages.push_back({d.geometry.stages[0], l.weight});
  d.chunks.push_back(std::move(c));
  d.bias = l.bias;
  return d;
}

QStage quantize_stage(const td::StageWeights& sw, int in_exp, int out_exp) {
  QStage q;
  q.shape = sw.shape;
  q.in_exp = in_exp;
  q.out_exp = out_exp;
  quantize_weights(sw.weight, sw.shape.out_ch, q.weight, q.weight_exp);
  q.requant.resize(static_cast<std::size_t>(sw.shape.out_ch));
  for (std::size_t o = 0; o < q.requant.size(); ++o)
    q.requant[o].shift = clamp_shift(out_exp - (q.weight_exp[o] + in_exp));
  return q;
}

}  // namespace

void quantize_weights(const std::vector<float>& w, std::int64_t out_ch, std::vector<std::int8_t>& q,
                      std::vector<int>& exps) {
  const std::size_t per = w.size() / static_cast<std::size_t>(out_ch);
  q.resize(w.size());
  exps.resize(static_cast<std::size_t>(out_ch));
  for (std::size_t o = 0; o < exps.size(); ++o) {
    double amax = 0;
    for (std::size_t k = 0; k < per; ++k) amax = std::max(amax, static_cast<double>(std::fabs(w[o * per + k])));
    exps[o] = block_exponent(amax);
    for (std::size_t k = 0; k < per; ++k) q[o * per + k] = quantize(w[o * per + k], exps[o]);
  }
}

Int8Tensor quantize_tensor(const FloatTensor& x, int e) {
  Int8Tensor y(x.n, x.c, x.h, x.w);
  for (std::size_t i = 0; i < x.data.size(); ++i) y.data[i] = quantize(x.data[i], e);
  return y;
}

FloatTensor dequantize_tensor(const Int8Tensor& x, int e) {
  FloatTensor y(x.n, x.c, x.h, x.w);
  for (std::size_t i = 0; i < x.data.size(); ++i) y.data[i] = dequantize(x.data[i], e);
  return y;
}

QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const FloatTensor& calibration,
                          const QuantizeOptions& options) {
  for (const auto& l : net.layers)
    require(l.kind != net::LayerKind::BatchNorm,
            "layer '" + l.name + "': fold BatchNorm into its conv before quantising (Network::fold_batchnorm)");
  AbsMax stats;
  run_float(net, calibration, &decomps, &stats);
  return quantize_network(net, decomps, stats, options);
}

namespace {

// The one quantiser: `exp_of_stat(key)` gives the activation exponent of
// the tensor under an AbsMax key (calibrated, or carried by a factors file).
QNetwork quantize_at(const net::Network& net, const Decompositions& decomps,
                     const std::function<int(const std::string&)>& exp_of_stat, const QuantizeOptions& options) {
  for (const auto& l : net.layers)
    require(l.kind != net::LayerKind::BatchNorm,
            "layer '" + l.name + "': fold BatchNorm into its conv before quantising (Network::fold_batchnorm)");

  // ReLUs fused into their producer's requantiser (the one rule, net::fused_relus).
  std::set<std::string> fused;                    // names of fused ReLU layers
  std::map<std::string, std::string> fused_into;  // producer -> its ReLU
  if (options.fuse_relu) {
    fused_into = net::fused_relus(net);
    for (const auto& [producer, relu] : fused_into) fused.insert(relu);
  }

  QNetwork q;
  q.name = net.name;
  q.input_name = net.input_name;
  q.input_shape = net.input_shape;
  std::map<std::string, int> exps;
  q.input_exp = exp_of_stat(net.input_name);
  exps[net.input_name] = q.input_exp;

  for (const auto& l : net.layers) {
    QLayer ql;
    ql.name = l.name;
    ql.inputs = l.inputs;
    ql.in_shape = l.in_shape;
    ql.out_shape = l.out_shape;
    for (const auto& i : l.inputs) ql.in_exps.push_back(exps.at(i));
    const int in_exp = ql.in_exps[0];
    // The exponent of this layer's output tensor: after the fused ReLU if any.
    const auto relu_it = fused_into.find(l.name);
    ql.relu = relu_it != fused_into.end();
    // Asked only of the layers that requantise (pools and the like pass their input's on).
    const std::string out_key = ql.relu ? relu_it->second : l.name;

    switch (l.kind) {
      case net::LayerKind::Conv2d:
      case net::LayerKind::Linear: {
        ql.kind = l.kind == net::LayerKind::Conv2d ? QKind::Conv : QKind::Linear;
        td::DecomposedLayer own;
        const td::DecomposedLayer* d = nullptr;
        if (l.kind == net::LayerKind::Linear) {
          own = linear_as_stage(l);
          d = &own;
        } else if (auto it = decomps.find(l.name); it != decomps.end()) {
          d = &it->second;
        } else {
          own = as_is(l);
          d = &own;
        }
        const auto& g = d->geometry;
        ql.tau = g.tau;
        ql.out_exp = exp_of_stat(out_key);
        const std::int64_t g1 = g.tau.g1, g2 = g.tau.g2;
        const std::size_t nstages = g.stages.size();
        std::vector<int> stage_exp(nstages);
        for (std::size_t k = 0; k + 1 < nstages; ++k) stage_exp[k] = exp_of_stat(l.name + "#stage" + std::to_string(k));
        ql.partial_exp = g2 > 1 ? exp_of_stat(l.name + "#partial") : ql.out_exp;
        stage_exp[nstages - 1] = ql.partial_exp;
        for (std::int64_t a = 0; a < g1; ++a)
          for (std::int64_t b = 0; b < g2; ++b) {
            const auto& chunk = d->chunk(a, b);
            std::vector<QStage> stages;
            for (std::size_t k = 0; k < nstages; ++k)
              stages.push_back(quantize_stage(chunk.stages[k], k == 0 ? in_exp : stage_exp[k - 1], stage_exp[k]));
            if (g2 == 1) {  // the last stage finishes the layer: bias and ReLU
              QStage& last = stages.back();
              for (std::int64_t j = 0; j < last.shape.out_ch; ++j) {
                auto& r = last.requant[static_cast<std::size_t>(j)];
                r.relu = ql.relu;
                if (!d->bias.empty())
                  r.bias = quantize_bias(d->bias[static_cast<std::size_t>(a + j * g1)],
                                         last.weight_exp[static_cast<std::size_t>(j)] + last.in_exp);
              }
            }
            ql.chunks.push_back(std::move(stages));
          }
        if (g2 > 1) {
          ql.group_add.resize(static_cast<std::size_t>(g.n));
          for (std::int64_t n = 0; n < g.n; ++n) {
            auto& r = ql.group_add[static_cast<std::size_t>(n)];
            r.shift = clamp_shift(ql.out_exp - ql.partial_exp);
            r.relu = ql.relu;
            if (!d->bias.empty()) r.bias = quantize_bias(d->bias[static_cast<std::size_t>(n)], ql.partial_exp);
          }
        }
        break;
      }
      case net::LayerKind::Add: {
        ql.kind = QKind::Add;
        ql.out_exp = exp_of_stat(out_key);
        const int e_min = *std::min_element(ql.in_exps.begin(), ql.in_exps.end());
        ql.add_requant = Requant{0, clamp_shift(ql.out_exp - e_min), ql.relu};
        break;
      }
      case net::LayerKind::ReLU:
        ql.kind = fused.count(l.name) ? QKind::Identity : QKind::ReLU;
        ql.out_exp = in_exp;
        break;
      case net::LayerKind::MaxPool:
        ql.kind = QKind::MaxPool;
        ql.pool = l.pool;
        ql.out_exp = in_exp;
        break;
      case net::LayerKind::AvgPool:
        ql.kind = QKind::AvgPool;
        ql.pool = l.pool;
        ql.out_exp = in_exp;
        break;
      case net::LayerKind::GlobalAvgPool:
        ql.kind = QKind::GlobalAvgPool;
        ql.out_exp = in_exp;
        break;
      case net::LayerKind::Flatten:
        ql.kind = QKind::Flatten;
        ql.out_exp = in_exp;
        break;
      case net::LayerKind::BatchNorm:
        break;  // refused above
    }
    exps[l.name] = ql.out_exp;
    q.layers.push_back(std::move(ql));
  }
  q.output = net.outputs().at(0);
  return q;
}

}  // namespace

QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const AbsMax& stats,
                          const QuantizeOptions& options) {
  const auto exp_of_stat = [&](const std::string& key) {
    auto it = stats.find(key);
    return block_exponent(it == stats.end() ? 0.0 : it->second);
  };
  return quantize_at(net, decomps, exp_of_stat, options);
}

QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const ActivationExponents& exponents,
                          const QuantizeOptions& options) {
  std::set<std::string> used;
  const auto exp_of_stat = [&](const std::string& key) {
    auto it = exponents.find(key);
    require(it != exponents.end(), "activation exponents: no entry for tensor '" + key + "' of network '" + net.name +
                                       "': legal one for every tensor the network quantises");
    used.insert(key);
    return it->second;
  };
  QNetwork q = quantize_at(net, decomps, exp_of_stat, options);
  for (const auto& [key, e] : exponents)
    require(used.count(key), "activation exponents: tensor '" + key + "' (exponent " + std::to_string(e) +
                                 ") is not one network '" + net.name + "' quantises: legal only its tensors");
  return q;
}

ActivationExponents activation_exponents(const net::Network& net, const QNetwork& q, const QuantizeOptions& options) {
  require(q.layers.size() == net.layers.size(), "activation exponents: the BFP8 network has " +
                                                    std::to_string(q.layers.size()) + " layers, network '" + net.name +
                                                    "' " + std::to_string(net.layers.size()));
  const std::map<std::string, std::string> fused_into =
      options.fuse_relu ? net::fused_relus(net) : std::map<std::string, std::string>{};
  ActivationExponents e;
  e[net.input_name] = q.input_exp;
  for (std::size_t i = 0; i < q.layers.size(); ++i) {
    const QLayer& ql = q.layers[i];
    if (ql.kind != QKind::Conv && ql.kind != QKind::Linear && ql.kind != QKind::Add) continue;
    const auto relu = fused_into.find(ql.name);
    e[relu == fused_into.end() ? ql.name : relu->second] = ql.out_exp;
    if (ql.kind == QKind::Add) continue;
    const std::vector<QStage>& stages = ql.chunks.at(0);
    for (std::size_t k = 0; k + 1 < stages.size(); ++k) e[ql.name + "#stage" + std::to_string(k)] = stages[k].out_exp;
    if (ql.tau.g2 > 1) e[ql.name + "#partial"] = ql.partial_exp;
  }
  return e;
}

}  // namespace mixtd::numerics
