// The one translation unit of mixtd that includes LibTorch's headers for the
// network builder, fake-quant, training and the oracle.
#include "mixtd/nn/Model.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <list>
#include <unordered_map>

#include "mixtd/numerics/Bfp8.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::nn {

namespace {

using torch::Tensor;
using I = std::int64_t;

Tensor from_vec(const std::vector<float>& v, std::vector<I> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

std::vector<float> to_vec(const Tensor& t) {
  Tensor c = t.detach().contiguous().to(torch::kFloat32);
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

Tensor to_torch(const numerics::FloatTensor& x) {
  return torch::from_blob(const_cast<float*>(x.data.data()), {x.n, x.c, x.h, x.w}, torch::kFloat32);
}

numerics::FloatTensor from_torch(const Tensor& y) {
  Tensor c = y.detach().contiguous();
  numerics::FloatTensor out(c.size(0), c.dim() > 1 ? c.size(1) : 1, c.dim() > 2 ? c.size(2) : 1,
                            c.dim() > 3 ? c.size(3) : 1);
  std::copy(c.data_ptr<float>(), c.data_ptr<float>() + c.numel(), out.data.begin());
  return out;
}

// Straight-through: the value of q, the gradient of x.
Tensor ste(const Tensor& x, const Tensor& q) {
  if (!torch::GradMode::is_enabled()) return q;
  return x + (q - x).detach();
}

// Activation at exponent e: saturate(⌊x / 2^e + ½⌋) · 2^e (Bfp8.h quantize).
Tensor quant_act(const Tensor& x, int e, bool relu) {
  const double s = std::ldexp(1.0, -e), inv = std::ldexp(1.0, e);
  if (!torch::GradMode::is_enabled() && x.scalar_type() == torch::kFloat32) {
    // Inference: the same float arithmetic as below (x·s exact, +½ rounded
    // in float as torch rounds it), in one pass instead of five.
    Tensor in = x.contiguous(x.suggest_memory_format());  // elementwise: any dense layout
    Tensor q = torch::empty_like(in);
    numerics::fake_quantize(in.data_ptr<float>(), q.data_ptr<float>(), in.numel(), e, relu);
    return q;
  }
  Tensor q = torch::clamp(torch::floor(x.detach() * s + 0.5), numerics::kMantissaMin, numerics::kMantissaMax);
  if (relu) q = torch::clamp_min(q, 0);
  q = q * inv;
  return ste(relu ? torch::relu(x) : x, q);
}

// Σ over the g2 input groups of the partials x [n, g2·m, h, w] (channel
// b·m + j), each quantised at exponent e first: the group adder. In
// inference on a channels-last x, one pass (numerics::fake_quantize_group_sum)
// instead of a quantised copy, a layout copy and a sum over partials that are
// g2 times the layer's output (the grouped svd-filter layers' main cost).
Tensor quantized_group_sum(const Tensor& x, I g2, int e) {
  if (!torch::GradMode::is_enabled() && x.scalar_type() == torch::kFloat32 &&
      x.is_contiguous(torch::MemoryFormat::ChannelsLast)) {
    const I n = x.size(0), h = x.size(2), w = x.size(3), m = x.size(1) / g2;
    Tensor y = torch::empty({n, m, h, w}, x.options().memory_format(torch::MemoryFormat::ChannelsLast));
    numerics::fake_quantize_group_sum(x.data_ptr<float>(), y.data_ptr<float>(), n * h * w, g2, m, e);
    return y;
  }
  Tensor q = quant_act(x, e, false);
  return q.reshape({q.size(0), g2, -1, q.size(2), q.size(3)}).sum(1);
}

// Per-output-channel exponents (numerics::block_exponent, exactly) of w [O, ...].
Tensor weight_exponents(const Tensor& w) {
  torch::NoGradGuard ng;
  Tensor amax = w.detach().abs().reshape({w.size(0), -1}).amax(1);
  Tensor e = torch::ceil(torch::log2(amax / numerics::kMantissaMax));
  e = torch::where(amax * torch::exp2(-e) > numerics::kMantissaMax, e + 1, e);
  e = torch::where(amax * torch::exp2(-(e - 1)) <= numerics::kMantissaMax, e - 1, e);
  e = torch::where(amax > 0, e, torch::full_like(e, numerics::kZeroBlockExponent));
  return e;  // float, integral values
}

std::vector<I> bcast_shape(I n, I dims) {
  std::vector<I> s(static_cast<std::size_t>(dims), 1);
  s[0] = n;
  return s;
}

// w fake-quantised per output channel; also returns the exponents.
Tensor quant_weight(const Tensor& w, Tensor* exps) {
  Tensor e = weight_exponents(w);
  const auto shape = bcast_shape(w.size(0), w.dim());
  Tensor scale = torch::exp2(e).reshape(shape);
  Tensor q =
      torch::clamp(torch::floor(w.detach() / scale + 0.5), numerics::kMantissaMin, numerics::kMantissaMax) * scale;
  if (exps) *exps = e;
  return ste(w, q);
}

// Bias quantised at per-channel accumulator exponents e_acc: ⌊b/2^e + ½⌋·2^e.
Tensor quant_bias(const Tensor& b, const Tensor& e_acc) {
  Tensor scale = torch::exp2(e_acc);
  return ste(b, torch::floor(b.detach() / scale + 0.5) * scale);
}

struct Stage {
  Tensor w;  // stacked over chunks: [K·out, in_per_group, kh, kw]
  // The QNetwork's BFP8 weights of w (mantissa·2^e) and their exponents,
  // for inference until training changes w: quant_weight(w) recomputed
  // on every forward costs ~8 ms a query (BM_Query).
  Tensor wq, wq_exp;
  td::StageShape shape;
  I groups = 1;  // of the stacked conv
  int in_exp = 0, out_exp = 0;
};

struct Op {
  const net::Layer* layer = nullptr;
  net::LayerKind kind{};
  std::vector<int> in_idx;  // value slots
  // conv / linear
  bool decomposed = false;
  td::LayerGeometry geom;
  std::vector<Stage> stages;
  Tensor bias;            // natural order [N] (undefined if none)
  Tensor in_perm;         // g2 > 1
  Tensor st2nat, nat2st;  // g1 > 1
  // batchnorm (training)
  Tensor bn_w, bn_b, bn_mean, bn_var;
  // quant
  const numerics::QLayer* ql = nullptr;
};

}  // namespace

struct Model::Impl : torch::nn::Module {
  net::Network net;  // weights are those given at construction
  std::vector<Op> ops;
  bool quant = false;
  int input_exp = 0;
  numerics::QNetwork q;  // copy, ops point into it
  bool bn = false;
  int output_slot = 0;
  // When set (float inference only): the largest |value| of every tensor,
  // under run_float's AbsMax keys, for calibration.
  numerics::AbsMax* stats = nullptr;
  // When set: sees (and may change) every conv layer's output before the
  // ops after it read it (statistics and their correction).
  std::function<void(const Op&, Tensor&)> conv_hook;

  void record(const std::string& key, const Tensor& t) {
    if (!stats) return;
    const double m = t.numel() ? t.abs().max().item<float>() : 0.0;
    auto& slot = (*stats)[key];
    slot = std::max(slot, m);
  }

  Tensor conv_forward(Op& op, const Tensor& x_in, bool fused_relu) {
    const auto& g = op.geom;
    const I g1 = g.tau.g1, g2 = g.tau.g2, k = g1 * g2;
    (void)k;
    Tensor x = x_in;
    if (op.kind == net::LayerKind::Linear) {
      x = x.flatten(1);
      if (!quant) return torch::linear(x, op.stages[0].w, op.bias);
      Tensor e, w;
      if (op.stages[0].wq.defined() && !torch::GradMode::is_enabled()) {
        w = op.stages[0].wq;
        e = op.stages[0].wq_exp;
      } else {
        w = quant_weight(op.stages[0].w, &e);
      }
      Tensor y = torch::linear(x, w);
      if (op.bias.defined()) y = y + quant_bias(op.bias, e + op.stages[0].in_exp);
      return quant_act(y, op.ql->out_exp, fused_relu).reshape({x.size(0), -1, 1, 1});
    }
    if (g2 > 1) x = x.index_select(1, op.in_perm);
    const std::size_t ns = op.stages.size();
    Tensor last_e;
    for (std::size_t s = 0; s < ns; ++s) {
      const Stage& st = op.stages[s];
      const auto& sh = st.shape;
      Tensor w = st.w;
      if (quant && st.wq.defined() && !torch::GradMode::is_enabled()) {
        w = st.wq;
        if (s + 1 == ns) last_e = st.wq_exp;
      } else if (quant) {
        w = quant_weight(st.w, s + 1 == ns ? &last_e : nullptr);
      }
      const bool plain = !quant && !op.decomposed && !bn;
      x = torch::conv2d(x.contiguous(torch::MemoryFormat::ChannelsLast), w, plain ? op.bias : Tensor{}, {sh.sh, sh.sw},
                        {sh.ph, sh.pw}, {1, 1}, st.groups);
      if (plain) return x;
      if (quant && s + 1 < ns) x = quant_act(x, st.out_exp, false);
      if (s + 1 < ns && op.decomposed) record(op.layer->name + "#stage" + std::to_string(s), x);
    }
    if (g2 > 1) record(op.layer->name + "#partial", x);
    if (bn) {
      if (op.bias.defined()) x = x + op.bias.reshape({1, -1, 1, 1});
      return torch::batch_norm(x, op.bn_w, op.bn_b, op.bn_mean, op.bn_var, is_training(), 0.1, 1e-5, false);
    }
    // x: [n, g2·g1·chunk_out, h, w] in (b, a, j) order.
    if (!quant) {
      if (g2 > 1) x = x.reshape({x.size(0), g2, -1, x.size(2), x.size(3)}).sum(1);
      if (g1 > 1) x = x.index_select(1, op.nat2st);
      if (op.bias.defined()) x = x + op.bias.reshape({1, -1, 1, 1});
      return x;
    }
    const auto* ql = op.ql;
    if (g2 == 1) {
      if (op.bias.defined()) {
        Tensor b = g1 > 1 ? op.bias.index_select(0, op.st2nat) : op.bias;
        x = x + quant_bias(b, last_e + op.stages.back().in_exp).reshape({1, -1, 1, 1});
      }
      x = quant_act(x, ql->out_exp, fused_relu);
      if (g1 > 1) x = x.index_select(1, op.nat2st);
      return x;
    }
    x = quantized_group_sum(x, g2, ql->partial_exp);
    if (op.bias.defined()) {
      Tensor b = g1 > 1 ? op.bias.index_select(0, op.st2nat) : op.bias;
      x = x + quant_bias(b, torch::full_like(b, ql->partial_exp)).reshape({1, -1, 1, 1});
    }
    x = quant_act(x, ql->out_exp, fused_relu);
    if (g1 > 1) x = x.index_select(1, op.nat2st);
    return x;
  }

  // Fixed-point mean (Bfp8.h average): x at exponent e, sums / counts per position.
  static Tensor quant_avg(const Tensor& mean_float, const Tensor& sum_mant, const Tensor& count, int e) {
    Tensor m = torch::floor((count.to(torch::kFloat64).pow(0) * std::ldexp(1.0, numerics::kAvgShift) +
                             torch::floor(count.to(torch::kFloat64) / 2)) /
                            count.to(torch::kFloat64));
    Tensor v = torch::floor(sum_mant.to(torch::kFloat64) * m * std::ldexp(1.0, -numerics::kAvgShift) + 0.5);
    v = torch::clamp(v, numerics::kMantissaMin, numerics::kMantissaMax).to(torch::kFloat32) * std::ldexp(1.0, e);
    return ste(mean_float, v);
  }

  Tensor forward(const Tensor& input) {
    std::vector<Tensor> vals = start(input);
    return run_from(vals, 0, {});
  }

  // The value slots before op 0: the (quantised) input.
  std::vector<Tensor> start(const Tensor& input) {
    std::vector<Tensor> vals(ops.size() + 1);
    vals[0] = quant ? quant_act(input, input_exp, false) : input;
    record(net.input_name, input);
    return vals;
  }

  // Runs ops [first, end) on `vals` (slot 0: the input, slot i + 1: op i's
  // output; the slots live_at[first] must be set) and returns the output.
  // `cut`, if set, sees vals after each op (for the prefix cache).
  using CutHook = std::function<void(std::size_t next_op, const std::vector<Tensor>& vals)>;
  Tensor run_from(std::vector<Tensor>& vals, std::size_t first, const CutHook& cut) {
    for (std::size_t i = first; i < ops.size(); ++i) {
      Op& op = ops[i];
      const Tensor& x = vals[static_cast<std::size_t>(op.in_idx[0])];
      const bool fused = quant && op.ql && op.ql->relu;
      Tensor y;
      switch (op.kind) {
        case net::LayerKind::Conv2d:
        case net::LayerKind::Linear:
          y = conv_forward(op, x, fused);
          if (conv_hook && op.kind == net::LayerKind::Conv2d) conv_hook(op, y);
          break;
        case net::LayerKind::ReLU:
          y = torch::relu(x);  // a fused ReLU is a no-op on the producer's clamped output
          break;
        case net::LayerKind::MaxPool: {
          const auto& p = op.layer->pool;
          y = torch::max_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw});
          break;
        }
        case net::LayerKind::AvgPool: {
          const auto& p = op.layer->pool;
          y = torch::avg_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, false, p.count_include_pad);
          if (quant) {
            const int e = op.ql->out_exp;
            Tensor s = torch::avg_pool2d(x.detach() * std::ldexp(1.0, -e), {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw},
                                         false, true, 1);
            Tensor ones = torch::ones({1, 1, x.size(2), x.size(3)});
            Tensor cnt =
                torch::avg_pool2d(ones, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, false, p.count_include_pad, 1);
            if (p.count_include_pad) cnt = torch::full_like(cnt, static_cast<double>(p.kh * p.kw));
            y = quant_avg(y, torch::round(s), cnt, e);
          }
          break;
        }
        case net::LayerKind::GlobalAvgPool:
          y = x.mean({2, 3}, true);
          if (quant) {
            const int e = op.ql->out_exp;
            Tensor s = torch::round((x.detach() * std::ldexp(1.0, -e)).sum({2, 3}, true));
            y = quant_avg(y, s, torch::full_like(s, static_cast<double>(x.size(2) * x.size(3))), e);
          }
          break;
        case net::LayerKind::Add: {
          y = x;
          for (std::size_t k = 1; k < op.in_idx.size(); ++k) y = y + vals[static_cast<std::size_t>(op.in_idx[k])];
          if (quant) y = quant_act(y, op.ql->out_exp, fused);
          break;
        }
        case net::LayerKind::Flatten:
          y = x.flatten(1).reshape({x.size(0), -1, 1, 1});
          break;
        case net::LayerKind::BatchNorm:
          throw Error("layer '" + op.layer->name + "': BatchNorm must be folded before building a Model");
      }
      record(op.layer->name, y);
      vals[i + 1] = y;
      if (cut) cut(i + 1, vals);
    }
    return vals[static_cast<std::size_t>(output_slot)];
  }

  // live_at[c]: the slots produced before op c that op c or a later one (or
  // the output) reads.
  std::vector<std::vector<int>> live_at;
  void compute_live() {
    std::vector<std::size_t> last(ops.size() + 1, 0);
    for (std::size_t i = 0; i < ops.size(); ++i)
      for (int s : ops[i].in_idx) last[static_cast<std::size_t>(s)] = std::max(last[static_cast<std::size_t>(s)], i);
    last[static_cast<std::size_t>(output_slot)] = ops.size();
    live_at.assign(ops.size() + 1, {});
    for (std::size_t c = 0; c <= ops.size(); ++c)
      for (std::size_t s = 0; s <= c && s < last.size(); ++s)
        if (last[s] >= c) live_at[c].push_back(static_cast<int>(s));
  }

  // The float model (no fake-quant, no BatchNorm) on x, `hook` seeing every
  // conv layer's output; `what` names the caller in the error.
  void run_float_with_conv_hook(const numerics::FloatTensor& x, const std::string& what,
                                std::function<void(const Op&, Tensor&)> hook) {
    require(!quant && !bn, "network '" + net.name + "': " + what + " runs the float model");
    c10::InferenceMode guard;
    eval();
    conv_hook = std::move(hook);
    struct Reset {
      Impl& m;
      ~Reset() { m.conv_hook = nullptr; }
    } reset{*this};
    forward_images(x);
  }

  Tensor forward_images(const numerics::FloatTensor& x) {
    return forward(to_torch(x).contiguous(torch::MemoryFormat::ChannelsLast)).reshape({x.n, -1});
  }

  std::vector<Tensor> state() {
    std::vector<Tensor> s;
    for (auto& p : parameters()) s.push_back(p);
    for (auto& b : buffers()) s.push_back(b);
    return s;
  }
};

namespace {

// Stage weights from the QNetwork's mantissas and exponents, stacked as w.
void set_quantized_weights(Stage& st, const std::vector<const numerics::QStage*>& parts) {
  std::vector<float> w, e;
  w.reserve(static_cast<std::size_t>(st.w.numel()));
  for (const auto* qs : parts) {
    const std::size_t per = qs->weight.size() / qs->weight_exp.size();
    for (std::size_t o = 0; o < qs->weight_exp.size(); ++o) {
      e.push_back(static_cast<float>(qs->weight_exp[o]));
      for (std::size_t k = 0; k < per; ++k)
        w.push_back(numerics::dequantize(qs->weight[o * per + k], qs->weight_exp[o]));
    }
  }
  require(static_cast<I>(w.size()) == st.w.numel(), "stage " + st.shape.role + ": the QNetwork's weights have " +
                                                        std::to_string(w.size()) + " values, the stage " +
                                                        std::to_string(st.w.numel()));
  st.wq = from_vec(w, st.w.sizes().vec());
  st.wq_exp = from_vec(e, {static_cast<I>(e.size())});
}

std::string pname(const std::string& layer, const std::string& what) {
  std::string n = layer + "_" + what;
  for (auto& ch : n)
    if (ch == '.' || ch == '#' || ch == '/') ch = '_';
  return n;
}

}  // namespace

Model::Model(const net::Network& net_in, const numerics::Decompositions* decomps, const numerics::QNetwork* q,
             ModelOptions options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.net = net_in;
  require(m.net.has_weights(), "network '" + m.net.name + "': a Model needs weights");
  for (const auto& l : m.net.layers)
    require(l.kind != net::LayerKind::BatchNorm,
            "layer '" + l.name + "': fold BatchNorm first (Network::fold_batchnorm)");
  m.net.check_weights();
  m.bn = options.batchnorm;
  require(!m.bn || (!q && (!decomps || decomps->empty())),
          "network '" + m.net.name + "': BatchNorm training is for the float, undecomposed network only");
  if (q) {
    m.q = *q;
    m.quant = true;
    m.input_exp = m.q.input_exp;
    require(m.q.layers.size() == m.net.layers.size(), "network '" + m.net.name + "': the QNetwork has " +
                                                          std::to_string(m.q.layers.size()) + " layers, the network " +
                                                          std::to_string(m.net.layers.size()));
  }
  std::map<std::string, int> slot{{m.net.input_name, 0}};
  for (std::size_t i = 0; i < m.net.layers.size(); ++i) {
    const auto& l = m.net.layers[i];
    Op op;
    op.layer = &l;
    op.kind = l.kind;
    for (const auto& in : l.inputs) op.in_idx.push_back(slot.at(in));
    if (m.quant) {
      op.ql = &m.q.layers[i];
      require(op.ql->name == l.name,
              "layer '" + l.name + "': the QNetwork has layer '" + op.ql->name + "' at this position");
    }
    if (l.kind == net::LayerKind::Linear) {
      op.geom = td::linear_geometry(l);
      Stage st;
      st.shape = op.geom.stages[0];
      st.w = m.register_parameter(pname(l.name, "weight"),
                                  from_vec(l.weight, {l.linear.out_features, l.in_shape.numel()}));
      if (op.ql) {
        st.in_exp = op.ql->in_exps.at(0);
        set_quantized_weights(st, {&op.ql->chunks.at(0).at(0)});
      }
      op.stages.push_back(st);
      if (!l.bias.empty())
        op.bias = m.register_parameter(pname(l.name, "bias"), from_vec(l.bias, {l.linear.out_features}));
    } else if (l.kind == net::LayerKind::Conv2d) {
      const td::DecomposedLayer* d = nullptr;
      td::DecomposedLayer own;
      if (decomps)
        if (auto it = decomps->find(l.name); it != decomps->end()) d = &it->second;
      if (!d) {
        own.geometry.tau = td::Tau{};
        own.geometry.n = l.conv.out_channels;
        own.geometry.c = l.in_shape.c;
        own.geometry.chunk_out = own.geometry.n;
        own.geometry.chunk_in = own.geometry.c;
        td::StageShape s;
        s.role = "conv";
        s.in_ch = l.in_shape.c;
        s.out_ch = l.conv.out_channels;
        s.kh = l.conv.kh, s.kw = l.conv.kw, s.sh = l.conv.sh, s.sw = l.conv.sw, s.ph = l.conv.ph, s.pw = l.conv.pw;
        s.groups = l.conv.groups;
        s.depthwise = l.conv.groups > 1 && l.conv.groups == s.in_ch && s.in_ch == s.out_ch;
        s.in = l.in_shape;
        s.out = l.out_shape;
        own.geometry.stages.push_back(s);
        own.chunks.push_back({0, 0, {{s, l.weight}}});
        own.bias = l.bias;
        d = &own;
      } else {
        op.decomposed = d->geometry.tau.decomposed();
        require(d->geometry.n == l.conv.out_channels && d->geometry.c == l.in_shape.c,
                "layer '" + l.name + "': decomposition is for " + std::to_string(d->geometry.c) + "->" +
                    std::to_string(d->geometry.n) + " channels, the layer has " + std::to_string(l.in_shape.c) + "->" +
                    std::to_string(l.conv.out_channels));
      }
      op.geom = d->geometry;
      const I g1 = op.geom.tau.g1, g2 = op.geom.tau.g2;
      require(static_cast<I>(d->chunks.size()) == g1 * g2,
              "layer '" + l.name + "': " + std::to_string(d->chunks.size()) + " chunks for " + op.geom.tau.str());
      for (std::size_t s = 0; s < op.geom.stages.size(); ++s) {
        Stage st;
        st.shape = op.geom.stages[s];
        st.groups = s == 0 ? g2 * st.shape.groups : g1 * g2 * st.shape.groups;
        std::vector<Tensor> parts;
        for (I b = 0; b < g2; ++b)
          for (I a = 0; a < g1; ++a) {
            const auto& sw = d->chunk(a, b).stages.at(s);
            parts.push_back(from_vec(sw.weight, {st.shape.out_ch, st.shape.in_per_group(), st.shape.kh, st.shape.kw}));
          }
        st.w = m.register_parameter(pname(l.name, "stage" + std::to_string(s)), torch::cat(parts, 0));
        if (op.ql) {
          const auto& qs = op.ql->chunks.at(0).at(s);
          st.in_exp = qs.in_exp;
          st.out_exp = qs.out_exp;
          require(
              qs.shape.out_ch == st.shape.out_ch && op.ql->tau == op.geom.tau &&
                  static_cast<I>(op.ql->chunks.size()) == g1 * g2,
              "layer '" + l.name + "': the QNetwork's τ " + op.ql->tau.str() + " differs from " + op.geom.tau.str());
          std::vector<const numerics::QStage*> stacked;  // in w's (b, a) order; QLayer chunks are a·g2 + b
          for (I b = 0; b < g2; ++b)
            for (I a = 0; a < g1; ++a) stacked.push_back(&op.ql->chunks.at(static_cast<std::size_t>(a * g2 + b)).at(s));
          set_quantized_weights(st, stacked);
        }
        op.stages.push_back(st);
      }
      if (!d->bias.empty()) op.bias = m.register_parameter(pname(l.name, "bias"), from_vec(d->bias, {op.geom.n}));
      if (g2 > 1) {
        std::vector<I> perm;
        for (I b = 0; b < g2; ++b)
          for (I c = b; c < op.geom.c; c += g2) perm.push_back(c);
        op.in_perm = torch::tensor(perm, torch::kLong);
      }
      if (g1 > 1) {
        const I co = op.geom.n / g1;
        std::vector<I> st2nat(static_cast<std::size_t>(op.geom.n)), nat2st(static_cast<std::size_t>(op.geom.n));
        for (I a = 0; a < g1; ++a)
          for (I j = 0; j < co; ++j) {
            st2nat[static_cast<std::size_t>(a * co + j)] = a + j * g1;
            nat2st[static_cast<std::size_t>(a + j * g1)] = a * co + j;
          }
        op.st2nat = torch::tensor(st2nat, torch::kLong);
        op.nat2st = torch::tensor(nat2st, torch::kLong);
      }
      if (m.bn) {
        const I n = l.conv.out_channels;
        op.bn_w = m.register_parameter(pname(l.name, "bn_weight"), torch::ones({n}));
        op.bn_b = m.register_parameter(pname(l.name, "bn_bias"), torch::zeros({n}));
        op.bn_mean = m.register_buffer(pname(l.name, "bn_mean"), torch::zeros({n}));
        op.bn_var = m.register_buffer(pname(l.name, "bn_var"), torch::ones({n}));
      }
    }
    m.ops.push_back(std::move(op));
    slot[l.name] = static_cast<int>(i + 1);
  }
  const auto outs = m.net.outputs();
  require(outs.size() == 1,
          "network '" + m.net.name + "': a Model needs exactly one output, got " + std::to_string(outs.size()));
  m.output_slot = slot.at(outs[0]);
  m.compute_live();
  m.eval();
}

struct ModelAccess {
  using Impl = Model::Impl;
  static Impl& impl(Model& m) { return *m.impl_; }
};

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

bool Model::quantized() const { return impl_->quant; }

numerics::AbsMax Model::calibration_stats(const numerics::FloatTensor& x) {
  require(!impl_->quant && !impl_->bn, "network '" + impl_->net.name + "': calibration runs the float model");
  c10::InferenceMode guard;
  impl_->eval();
  numerics::AbsMax stats;
  impl_->stats = &stats;
  try {
    impl_->forward_images(x);
  } catch (...) {
    impl_->stats = nullptr;
    throw;
  }
  impl_->stats = nullptr;
  return stats;
}

numerics::FloatTensor Model::forward(const numerics::FloatTensor& x) {
  c10::InferenceMode guard;
  impl_->eval();
  return from_torch(impl_->forward_images(x).reshape({x.n, -1, 1, 1}));
}

namespace {

// Per-channel mean and standard deviation of y [n, c, h, w] in double.
std::pair<Tensor, Tensor> channel_moments(const Tensor& y) {
  Tensor d = y.detach().to(torch::kFloat64);
  Tensor mean = d.mean({0, 2, 3});
  Tensor var = (d - mean.reshape({1, -1, 1, 1})).pow(2).mean({0, 2, 3});
  return {mean.contiguous(), var.sqrt().contiguous()};
}

std::vector<double> to_doubles(const Tensor& t) {
  Tensor c = t.contiguous().to(torch::kFloat64);
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace

LayerStats Model::channel_stats(const numerics::FloatTensor& x) {
  LayerStats out;
  impl_->run_float_with_conv_hook(x, "channel statistics", [&](const Op& op, Tensor& y) {
    const auto [mean, std] = channel_moments(y);
    out[op.layer->name] = {to_doubles(mean), to_doubles(std)};
  });
  return out;
}

Corrections Model::statistics_corrections(const numerics::FloatTensor& x, const LayerStats& target,
                                          StatsCorrection mode) {
  Corrections out;
  if (mode == StatsCorrection::None) return out;
  impl_->run_float_with_conv_hook(x, "statistics correction", [&](const Op& op, Tensor& y) {
    if (!op.decomposed) return;
    const auto it = target.find(op.layer->name);
    require(it != target.end(), "statistics correction: no target statistics for layer '" + op.layer->name + "'");
    const auto [mean, std] = channel_moments(y);
    const I n = mean.numel();
    require(static_cast<I>(it->second.mean.size()) == n, "statistics correction: layer '" + op.layer->name + "' has " +
                                                             std::to_string(n) + " channels, the target statistics " +
                                                             std::to_string(it->second.mean.size()));
    Tensor t_mean = torch::tensor(it->second.mean, torch::kFloat64),
           t_std = torch::tensor(it->second.std, torch::kFloat64);
    Tensor scale = torch::ones_like(mean);
    if (mode == StatsCorrection::Scale) {
      // A channel the decomposition nearly silenced keeps its scale: a
      // large gain would amplify what little is left (noise, not signal).
      scale = torch::where(std > 1e-3 * t_std + 1e-12, t_std / std, torch::ones_like(std)).clamp(0.25, 4.0);
    }
    Tensor shift = t_mean - scale * mean;
    y = (y.to(torch::kFloat64) * scale.reshape({1, -1, 1, 1}) + shift.reshape({1, -1, 1, 1})).to(y.scalar_type());
    out[op.layer->name] = {to_doubles(scale), to_doubles(shift)};
  });
  return out;
}

std::vector<std::int64_t> Model::predict(const numerics::FloatTensor& x) {
  c10::InferenceMode guard;
  impl_->eval();
  Tensor y = impl_->forward_images(x).argmax(1).contiguous();
  return {y.data_ptr<std::int64_t>(), y.data_ptr<std::int64_t>() + y.numel()};
}

double Model::accuracy(const Dataset& d, std::int64_t begin, std::int64_t count, std::int64_t batch) {
  if (count < 0) count = d.size() - begin;
  count = std::min(count, d.size() - begin);
  require(count > 0, d.name + ": no images in [" + std::to_string(begin) + ", " + std::to_string(begin + count) + ")");
  std::int64_t correct = 0;
  for (std::int64_t s = begin; s < begin + count; s += batch) {
    const std::int64_t k = std::min(batch, begin + count - s);
    const auto p = predict(d.batch(s, k));
    for (std::int64_t i = 0; i < k; ++i)
      correct += p[static_cast<std::size_t>(i)] == d.labels[static_cast<std::size_t>(s + i)];
  }
  return static_cast<double>(correct) / static_cast<double>(count);
}

std::int64_t Model::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : impl_->parameters()) n += p.numel();
  return n;
}

numerics::ActivationExponents Model::activation_exponents() const {
  if (!impl_->quant) return {};
  return numerics::activation_exponents(impl_->net, impl_->q);
}

numerics::Decompositions Model::decompositions() const {
  numerics::Decompositions out;
  for (const auto& op : impl_->ops) {
    if (!op.decomposed) continue;
    td::DecomposedLayer d;
    d.geometry = op.geom;
    const I g1 = op.geom.tau.g1, g2 = op.geom.tau.g2;
    d.chunks.resize(static_cast<std::size_t>(g1 * g2));
    for (I a = 0; a < g1; ++a)
      for (I b = 0; b < g2; ++b) d.chunks[static_cast<std::size_t>(a * g2 + b)] = {a, b, {}};
    for (const auto& st : op.stages) {
      Tensor w = st.w.detach().contiguous();
      const I per = st.shape.out_ch;
      for (I b = 0; b < g2; ++b)
        for (I a = 0; a < g1; ++a) {
          const I k = b * g1 + a;
          d.chunks[static_cast<std::size_t>(a * g2 + b)].stages.push_back(
              {st.shape, to_vec(w.narrow(0, k * per, per))});
        }
    }
    if (op.bias.defined()) d.bias = to_vec(op.bias);
    out[op.layer->name] = std::move(d);
  }
  return out;
}

net::Network Model::to_network() const {
  net::Network n = impl_->net;
  const auto decs = decompositions();
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) {
    const Op& op = impl_->ops[i];
    net::Layer& l = n.layers[i];
    if (l.kind == net::LayerKind::Linear) {
      l.weight = to_vec(op.stages[0].w);
      if (op.bias.defined()) l.bias = to_vec(op.bias);
    } else if (l.kind == net::LayerKind::Conv2d) {
      if (op.decomposed) {
        l.weight = decs.at(l.name).reconstruct();
      } else {
        l.weight = to_vec(op.stages[0].w);
      }
      if (op.bias.defined()) l.bias = to_vec(op.bias);
      if (impl_->bn) {  // fold: w·γ/σ, (b − μ)·γ/σ + β
        const auto g = to_vec(op.bn_w), be = to_vec(op.bn_b), mu = to_vec(op.bn_mean), var = to_vec(op.bn_var);
        const std::size_t per = l.weight.size() / g.size();
        if (l.bias.empty()) l.bias.assign(g.size(), 0.0f);
        for (std::size_t c = 0; c < g.size(); ++c) {
          const double f = g[c] / std::sqrt(static_cast<double>(var[c]) + 1e-5);
          for (std::size_t k = 0; k < per; ++k) l.weight[c * per + k] = static_cast<float>(l.weight[c * per + k] * f);
          l.bias[c] = static_cast<float>((l.bias[c] - mu[c]) * f + be[c]);
        }
        l.conv.bias = true;
      }
    }
  }
  return n;
}

namespace {

// (1 − α)·CE + α·T²·KL(teacher ‖ student) at temperature T (Hinton et al.;
// T² keeps the soft term's gradients at the hard term's scale).
Tensor distillation_loss(Model& teacher, const Distillation& d, const Tensor& x, const Tensor& logits,
                         const Tensor& ce) {
  Tensor t;
  {
    torch::NoGradGuard ng;
    auto& ti = ModelAccess::impl(teacher);
    ti.eval();
    t = ti.forward(x).reshape({x.size(0), -1});
  }
  namespace F = torch::nn::functional;
  const double T = d.temperature;
  Tensor kl = F::kl_div(F::log_softmax(logits / T, 1), F::log_softmax(t / T, 1),
                        F::KLDivFuncOptions().reduction(torch::kBatchMean).log_target(true));
  return (1 - d.alpha) * ce + d.alpha * T * T * kl;
}

}  // namespace

TrainResult Model::train(const Dataset& data, const TrainOptions& o) {
  require(o.epochs >= 1, "--epochs " + std::to_string(o.epochs) + ": must be ≥ 1");
  require(o.batch >= 1, "--batch " + std::to_string(o.batch) + ": must be ≥ 1");
  require(o.optimizer == "sgd" || o.optimizer == "adam", "optimizer '" + o.optimizer + "': legal: sgd, adam");
  require(o.schedule == "cosine" || o.schedule == "step" || o.schedule == "constant",
          "schedule '" + o.schedule + "': legal: cosine, step, constant");
  if (o.distill.teacher) {
    require(o.distill.temperature >= 0.1 && o.distill.temperature <= 100,
            "distillation temperature " + std::to_string(o.distill.temperature) + ": legal 0.1..100");
    require(o.distill.alpha >= 0 && o.distill.alpha <= 1,
            "distillation weight " + std::to_string(o.distill.alpha) + ": legal 0..1");
    require(!o.distill.teacher->quantized(), "the distillation teacher must be the float network");
  }
  require(
      data.c == impl_->net.input_shape.c && data.h == impl_->net.input_shape.h && data.w == impl_->net.input_shape.w,
      data.name + ": images " + std::to_string(data.c) + "x" + std::to_string(data.h) + "x" + std::to_string(data.w) +
          " do not fit network input " + impl_->net.input_shape.str());
  torch::set_num_threads(o.threads);
  torch::manual_seed(o.seed);
  auto& m = *impl_;
  for (auto& op : m.ops)  // training moves w away from the QNetwork's weights
    for (auto& st : op.stages) st.wq = st.wq_exp = Tensor{};
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (o.optimizer == "sgd")
    opt = std::make_unique<torch::optim::SGD>(
        m.parameters(), torch::optim::SGDOptions(o.lr).momentum(0.9).nesterov(true).weight_decay(o.weight_decay));
  else
    opt = std::make_unique<torch::optim::Adam>(m.parameters(),
                                               torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  std::int64_t start = 0;
  if (o.resume) {
    require(!o.checkpoint.empty() && std::filesystem::exists(o.checkpoint),
            "--resume: checkpoint '" + o.checkpoint.string() + "' does not exist");
    torch::serialize::InputArchive ar;
    ar.load_from(o.checkpoint.string());
    auto st = m.state();
    for (std::size_t i = 0; i < st.size(); ++i) {
      Tensor t;
      ar.read("t" + std::to_string(i), t);
      require(t.sizes() == st[i].sizes(),
              o.checkpoint.string() + ": tensor " + std::to_string(i) + " has the wrong shape for this network");
      torch::NoGradGuard ng;
      st[i].copy_(t);
    }
    Tensor ep;
    ar.read("epoch", ep);
    start = ep.item<std::int64_t>();
    torch::serialize::InputArchive oa;
    ar.read("optimizer", oa);
    opt->load(oa);
    std::cerr << "resumed from " << o.checkpoint.string() << " after epoch " << start << "\n";
  }
  const std::int64_t steps = (data.size() + o.batch - 1) / o.batch;
  const std::int64_t total = steps * o.epochs;
  TrainResult r;
  Rng flip_rng(o.seed ^ 0x5eedf11bULL);
  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t done_steps = 0;
  for (std::int64_t ep = start; ep < o.epochs; ++ep) {
    m.train();
    const auto perm = permutation(data.size(), o.seed * 1000003ULL + static_cast<std::uint64_t>(ep));
    double loss_sum = 0;
    std::int64_t correct = 0, seen = 0;
    const auto te = std::chrono::steady_clock::now();
    for (std::int64_t s = 0; s < steps; ++s) {
      const std::int64_t step = ep * steps + s;
      double lr = o.lr;
      const double frac = static_cast<double>(step) / static_cast<double>(total);
      if (o.schedule == "cosine")
        lr = 0.5 * o.lr * (1 + std::cos(M_PI * frac));
      else if (o.schedule == "step")
        lr = o.lr * (frac >= 0.75 ? 0.01 : frac >= 0.5 ? 0.1 : 1.0);
      for (auto& g : opt->param_groups()) g.options().set_lr(lr);
      const std::int64_t b0 = s * o.batch, k = std::min(o.batch, data.size() - b0);
      std::vector<std::int64_t> idx(perm.begin() + b0, perm.begin() + b0 + k);
      Dataset bd = data.subset(idx);
      numerics::FloatTensor bx = bd.batch(0, k);  // decodes streamed sets
      Tensor x = torch::from_blob(bx.data.data(), {k, data.c, data.h, data.w}, torch::kFloat32).clone();
      if (o.flip) {
        std::vector<float> mask(static_cast<std::size_t>(k));
        for (auto& v : mask) v = flip_rng.uniform() < 0.5 ? 1.0f : 0.0f;
        Tensor mk = torch::tensor(mask).reshape({k, 1, 1, 1});
        x = mk * x.flip({3}) + (1 - mk) * x;
      }
      Tensor y = torch::tensor(bd.labels, torch::kLong);
      opt->zero_grad();
      Tensor logits = m.forward(x).reshape({k, -1});
      Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      if (o.distill.teacher) loss = distillation_loss(*o.distill.teacher, o.distill, x, logits, loss);
      loss.backward();
      opt->step();
      loss_sum += loss.item<double>() * static_cast<double>(k);
      correct += logits.argmax(1).eq(y).sum().item<std::int64_t>();
      seen += k;
      ++done_steps;
      if (o.progress_every > 0 && ((s + 1) % o.progress_every == 0 || s + 1 == steps)) {
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double eta = el / static_cast<double>(done_steps) * static_cast<double>(total - step - 1);
        char line[256];
        std::snprintf(line, sizeof line,
                      "epoch %lld/%lld  batch %lld/%lld  loss %.4f  acc %.2f%%  lr %.5f  ETA %dm%02ds",
                      static_cast<long long>(ep + 1), static_cast<long long>(o.epochs), static_cast<long long>(s + 1),
                      static_cast<long long>(steps), loss_sum / static_cast<double>(seen),
                      100.0 * static_cast<double>(correct) / static_cast<double>(seen), lr, static_cast<int>(eta) / 60,
                      static_cast<int>(eta) % 60);
        std::cerr << line << std::endl;
      }
    }
    r.seconds_per_epoch = std::chrono::duration<double>(std::chrono::steady_clock::now() - te).count();
    r.last_loss = loss_sum / static_cast<double>(seen);
    r.last_train_accuracy = static_cast<double>(correct) / static_cast<double>(seen);
    r.epochs_run = ep + 1;
    m.eval();
    if (!o.checkpoint.empty()) {
      torch::serialize::OutputArchive ar;
      auto st = m.state();
      for (std::size_t i = 0; i < st.size(); ++i) ar.write("t" + std::to_string(i), st[i].detach());
      ar.write("epoch", torch::tensor(ep + 1, torch::kLong));
      torch::serialize::OutputArchive oa;
      opt->save(oa);
      ar.write("optimizer", oa);
      const auto tmp = o.checkpoint.string() + ".tmp";
      ar.save_to(tmp);
      std::filesystem::rename(tmp, o.checkpoint);
    }
    if (o.on_epoch) o.on_epoch(ep + 1, r.last_loss, r.last_train_accuracy);
  }
  m.eval();
  return r;
}

// --- the decomposition cache and the oracle ---------------------------------

DecompositionCache::DecompositionCache(net::Network net) : net_(std::move(net)) {}
DecompositionCache::~DecompositionCache() = default;

numerics::Decompositions DecompositionCache::decompose(const Taus& taus) {
  numerics::Decompositions out;
  for (const auto& [name, tau] : taus) {
    if (!tau.decomposed()) continue;
    const net::Layer* l = net_.find(name);
    require(l && l->kind == net::LayerKind::Conv2d,
            "τ for layer '" + name + "': no conv2d of that name in network '" + net_.name + "'");
    auto& d = decomposers_[name];
    if (!d) d = std::make_unique<td::Decomposer>(*l);
    out.emplace(name, d->decompose(tau));
  }
  return out;
}

// Values of a network at a cut between two ops, for the τ of every conv
// before the cut: a query whose τ agree with an earlier one's up to a cut
// starts there (the pre-filter changes one layer; a mutation child keeps
// its parent's first layers). Exact: the ops after the cut run on the very
// tensors they would have computed. Least recently used entries leave
// first once the cache holds more than its budget.
struct PrefixCache::Impl {
  struct Entry {
    std::vector<std::pair<int, Tensor>> live;  // (slot, value)
    numerics::AbsMax stats;                    // calibration entries: the maxima of the ops before the cut
    std::size_t bytes = 0;
    std::list<std::string>::iterator age;
  };
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> ages;  // most recent first
  std::size_t bytes = 0, budget = 0;
  std::int64_t hits = 0, misses = 0;

  const Entry* find(const std::string& key) {
    auto it = entries.find(key);
    if (it == entries.end()) return nullptr;
    ages.splice(ages.begin(), ages, it->second.age);
    return &it->second;
  }
  void put(const std::string& key, Entry e) {
    if (budget == 0 || entries.count(key) || e.bytes > budget) return;
    while (bytes + e.bytes > budget && !ages.empty()) {
      auto it = entries.find(ages.back());
      bytes -= it->second.bytes;
      entries.erase(it);
      ages.pop_back();
    }
    ages.push_front(key);
    e.age = ages.begin();
    bytes += e.bytes;
    entries.emplace(key, std::move(e));
  }
};

AccuracyOracle::AccuracyOracle(net::Network net, Dataset search, OracleOptions options)
    : AccuracyOracle(std::make_shared<DecompositionCache>(std::move(net)), std::move(search), options) {}

AccuracyOracle::AccuracyOracle(std::shared_ptr<DecompositionCache> cache, Dataset search, OracleOptions options)
    : cache_(std::move(cache)), search_(std::move(search)), options_(options), prefix_(options.prefix_cache_mb) {
  require(options_.batch >= 1 && options_.batch <= search_.size(),
          "oracle batch " + std::to_string(options_.batch) + ": legal 1.." + std::to_string(search_.size()));
  require(
      options_.calibration >= 1 && options_.calibration <= search_.size(),
      "oracle calibration " + std::to_string(options_.calibration) + ": legal 1.." + std::to_string(search_.size()));
  calib_ = search_.batch(search_.size() - options_.calibration, options_.calibration);
  if (options_.correction != StatsCorrection::None) {
    require(options_.correction_images >= 1 && options_.correction_images <= search_.size(),
            "oracle correction images " + std::to_string(options_.correction_images) + ": legal 1.." +
                std::to_string(search_.size()));
    correction_images_ = search_.batch(search_.size() - options_.correction_images, options_.correction_images);
  }
}

AccuracyOracle::~AccuracyOracle() = default;

numerics::QNetwork quantize(const net::Network& net, const numerics::Decompositions& decomps,
                            const numerics::FloatTensor& calibration, bool* exact_fallback) {
  numerics::AbsMax stats = Model(net, &decomps).calibration_stats(calibration);
  return quantize_from_stats(net, decomps, calibration, stats, exact_fallback);
}

numerics::QNetwork quantize_from_stats(const net::Network& net, const numerics::Decompositions& decomps,
                                       const numerics::FloatTensor& calibration, const numerics::AbsMax& stats,
                                       bool* exact_fallback) {
  bool near = false;
  for (const auto& [key, amax] : stats) near = near || numerics::exponent_boundary_distance(amax) < kCalibrationMargin;
  if (exact_fallback) *exact_fallback = near;
  if (near) return numerics::quantize_network(net, decomps, calibration);
  return numerics::quantize_network(net, decomps, stats);
}

void AccuracyOracle::set_factors(numerics::Decompositions factors, numerics::ActivationExponents exponents) {
  factors_ = std::move(factors);
  exponents_ = std::move(exponents);
  prefix_.clear();
}

td::Factors AccuracyOracle::factors(const Taus& taus) {
  td::Factors f;
  f.layers = decompose(taus);
  if (options_.quantize) f.exponents = numerics::activation_exponents(cache_->network(), quantize_decomposed(f.layers));
  return f;
}

numerics::QNetwork AccuracyOracle::quantize_decomposed(const numerics::Decompositions& d) {
  if (!exponents_.empty()) return numerics::quantize_network(cache_->network(), d, exponents_);
  return nn::quantize(cache_->network(), d, calib_);
}

numerics::Decompositions AccuracyOracle::decompose(const Taus& taus) {
  if (factors_) {
    numerics::Decompositions d;
    for (const auto& [name, tau] : taus) {
      if (!tau.decomposed()) continue;
      const auto it = factors_->find(name);
      require(it != factors_->end() && it->second.geometry.tau == tau,
              "layer '" + name + "' is " + tau.str() + " here, its factors are " +
                  (it == factors_->end() ? std::string("absent") : it->second.geometry.tau.str()));
      d.emplace(name, it->second);
    }
    return d;
  }
  numerics::Decompositions d = cache_->decompose(taus);
  if (options_.correction == StatsCorrection::None || d.empty()) return d;
  if (teacher_stats_.empty()) teacher_stats_ = Model(cache_->network()).channel_stats(correction_images_);
  Model m(cache_->network(), &d);
  apply_corrections(d, m.statistics_corrections(correction_images_, teacher_stats_, options_.correction));
  return d;
}

numerics::QNetwork AccuracyOracle::quantize(const Taus& taus) { return quantize_decomposed(decompose(taus)); }

Model AccuracyOracle::build(const Taus& taus) {
  const auto d = decompose(taus);
  if (!options_.quantize) return Model(cache_->network(), &d);
  const auto q = quantize_decomposed(d);
  return Model(cache_->network(), &d, &q);
}

Model AccuracyOracle::teacher() { return Model(cache_->network()); }

const numerics::FloatTensor& AccuracyOracle::teacher_logits(std::int64_t index) {
  auto it = teacher_logits_.find(index);
  if (it == teacher_logits_.end()) {
    if (teacher_logits_.size() >= 64) teacher_logits_.clear();  // bounded: the paper's rotation has ~40 batches
    const std::int64_t begin = index * options_.batch;
    it = teacher_logits_.emplace(index, teacher().forward(search_.batch(begin, options_.batch))).first;
  }
  return it->second;
}

PrefixCache::PrefixCache(std::int64_t budget_mb) : impl_(std::make_unique<Impl>()) {
  require(budget_mb >= 0 && budget_mb <= (1 << 20),
          "prefix cache " + std::to_string(budget_mb) + " MB: legal 0..1048576");
  impl_->budget = static_cast<std::size_t>(budget_mb) << 20;
}
PrefixCache::~PrefixCache() = default;
void PrefixCache::clear() {
  impl_->entries.clear();
  impl_->ages.clear();
  impl_->bytes = 0;
}
std::int64_t PrefixCache::hits() const { return impl_->hits; }
std::int64_t PrefixCache::misses() const { return impl_->misses; }

std::vector<std::string> PrefixCache::keys(const net::Network& net, const Taus& taus) {
  std::vector<std::string> keys(net.layers.size() + 1);
  std::string k;
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const auto& l = net.layers[i];
    if (l.kind == net::LayerKind::Conv2d) {
      auto it = taus.find(l.name);
      if (it != taus.end() && it->second.decomposed()) k += l.name + "=" + it->second.str() + ";";
    }
    keys[i + 1] = k;
  }
  return keys;
}

// Runs `m` on `input` from the latest cut whose values the cache holds under
// `tag` + prefix key, storing the cuts after it; with `stats`, the float
// calibration run (the cache keeps each cut's maxima so far too).
numerics::FloatTensor PrefixCache::run(Model& m, const numerics::FloatTensor& x, const std::vector<std::string>& keys,
                                       const std::string& tag, numerics::AbsMax* stats) {
  c10::InferenceMode guard;
  Impl& cache = *impl_;
  auto& im = ModelAccess::impl(m);
  im.eval();
  require(keys.size() == im.ops.size() + 1,
          "prefix cache: " + std::to_string(keys.size()) + " keys for " + std::to_string(im.ops.size()) + " ops");
  const std::size_t n_ops = im.ops.size();
  // Cuts worth keeping: one live tensor (block boundaries), not the ends.
  auto cut_ok = [&](std::size_t c) { return c >= 1 && c < n_ops && im.live_at[c].size() == 1; };
  std::vector<Tensor> vals;
  std::size_t first = 0;
  for (std::size_t c = n_ops; c-- > 1;) {
    if (!cut_ok(c)) continue;
    if (const auto* e = cache.find(tag + std::to_string(c) + "|" + keys[c])) {
      vals.assign(n_ops + 1, Tensor{});
      for (const auto& [slot, t] : e->live) vals[static_cast<std::size_t>(slot)] = t;
      if (stats) *stats = e->stats;
      first = c;
      break;
    }
  }
  (first > 0 ? cache.hits : cache.misses) += 1;
  im.stats = stats;
  struct Reset {
    ModelAccess::Impl& m;
    ~Reset() { m.stats = nullptr; }
  } reset{im};
  if (first == 0) vals = im.start(to_torch(x).contiguous(torch::MemoryFormat::ChannelsLast));
  Tensor y = im.run_from(vals, first, [&](std::size_t c, const std::vector<Tensor>& v) {
    if (!cut_ok(c) || cache.budget == 0) return;
    Impl::Entry e;
    for (int slot : im.live_at[c]) {
      const Tensor& t = v[static_cast<std::size_t>(slot)];
      e.live.emplace_back(slot, t);
      e.bytes += static_cast<std::size_t>(t.numel()) * t.element_size();
    }
    if (stats) e.stats = *stats;
    cache.put(tag + std::to_string(c) + "|" + keys[c], std::move(e));
  });
  return from_torch(y.reshape({x.n, -1, 1, 1}));
}

numerics::FloatTensor PrefixCache::forward(const net::Network& net, const numerics::Decompositions& decomps,
                                           const Taus& taus, const numerics::FloatTensor& x, std::int64_t index,
                                           const numerics::FloatTensor* calibration) {
  const auto keys = PrefixCache::keys(net, taus);
  if (!calibration) {
    Model m(net, &decomps);
    return run(m, x, keys, "f" + std::to_string(index) + "|");
  }
  numerics::AbsMax stats;
  {
    Model fm(net, &decomps);
    run(fm, *calibration, keys, "c|", &stats);
  }
  const auto q = quantize_from_stats(net, decomps, *calibration, stats);
  Model m(net, &decomps, &q);
  return run(m, x, keys, "q" + std::to_string(index) + "|");
}

AccuracyOracle::Score AccuracyOracle::score(const Taus& taus, std::int64_t index) {
  const std::int64_t begin = index * options_.batch;
  require(index >= 0 && begin + options_.batch <= search_.size(),
          "oracle batch index " + std::to_string(index) + ": legal 0.." +
              std::to_string(search_.size() / options_.batch - 1));
  // Carried exponents (a design's factors file): no calibration run to cache.
  const auto logits =
      options_.quantize && !exponents_.empty()
          ? build(taus).forward(search_.batch(begin, options_.batch))
          : prefix_.forward(cache_->network(), decompose(taus), taus, search_.batch(begin, options_.batch), index,
                            options_.quantize ? &calib_ : nullptr);
  Score s;
  s.top1 = top1(logits, std::vector<std::int64_t>(search_.labels.begin() + begin,
                                                  search_.labels.begin() + begin + options_.batch));
  s.fitness = options_.fitness == Fitness::Top1 ? s.top1 : teacher_agreement(logits, teacher_logits(index));
  return s;
}

void set_threads(int threads) { torch::set_num_threads(threads); }

std::vector<std::int64_t> argmax(const numerics::FloatTensor& logits) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(logits.n));
  const std::int64_t k = logits.per_image();
  for (std::int64_t n = 0; n < logits.n; ++n) {
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < k; ++c)
      if (logits.data[static_cast<std::size_t>(n * k + c)] > logits.data[static_cast<std::size_t>(n * k + best)])
        best = c;
    out[static_cast<std::size_t>(n)] = best;
  }
  return out;
}

double top1(const numerics::FloatTensor& logits, const std::vector<std::int64_t>& labels) {
  const auto p = argmax(logits);
  std::int64_t c = 0;
  for (std::size_t i = 0; i < p.size() && i < labels.size(); ++i) c += p[i] == labels[i];
  return p.empty() ? 0.0 : static_cast<double>(c) / static_cast<double>(p.size());
}

}  // namespace mixtd::nn
