#include "mixtd/sim/Functional.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "mixtd/net/Load.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"
#include "mixtd/td/Factors.h"

namespace mixtd::sim {

namespace {

// design.yaml loads its network without weights (the hardware figures do
// not need them); data does: load them from the network's file (.onnx, or
// .yaml with its .weights), or regenerate a zoo network's seeded ones.
// Empty if the design's network has them already.
std::optional<arch::Design> with_weights(const arch::Design& design) {
  if (design.network.has_weights()) return std::nullopt;
  arch::Design with = design;
  with.network = net::load_network(design.network_path(), true);
  require(with.network.has_weights(),
          "network '" + design.network_spec +
              "' carries no weights: name a network with weights in the design (an .onnx, a .yaml with its "
              ".weights file, or a zoo network, whose weights are seeded)");
  require(with.network.same_structure(design.network),
          "network '" + design.network_spec + "' did not load as the design's network");
  with.network.fold_batchnorm();
  return with;
}

// Every decomposed layer of the design, its τ applied to the dense weights.
numerics::Decompositions decompose(const arch::Design& d) {
  numerics::Decompositions decomps;
  for (const auto& l : d.network.layers) {
    if (l.kind != net::LayerKind::Conv2d) continue;
    const td::Tau& tau = d.mapping(l.name).tau;
    if (!tau.decomposed()) continue;
    td::Decomposer dec(l);
    decomps[l.name] = dec.decompose(tau);
  }
  return decomps;
}

// "16->32 channels; svd.1 16->8 3x3 on 16x14x14, svd.2 8->32 1x1 on 8x14x14"
std::string describe(const td::LayerGeometry& g) {
  std::vector<std::string> stages;
  for (const auto& st : g.stages)
    stages.push_back(st.role + " " + std::to_string(st.in_ch) + "->" + std::to_string(st.out_ch) + " " +
                     std::to_string(st.kh) + "x" + std::to_string(st.kw) + " on " + st.in.str());
  return std::to_string(g.c) + "->" + std::to_string(g.n) + " channels; " + join(stages);
}

// One conv layer's entry of the factors file against the design: present
// with the design's τ and the geometry the network gives it if decomposed,
// absent otherwise.
void check_factors_entry(const arch::Design& d, const std::string& file, const net::Layer& l,
                         const numerics::Decompositions& f) {
  const td::Tau& tau = d.mapping(l.name).tau;
  const auto it = f.find(l.name);
  const std::string at = "factors file '" + file + "' of design '" + d.name + "': layer '" + l.name + "': ";
  if (!tau.decomposed()) {
    require(it == f.end(), at + "has factors for τ " + (it == f.end() ? "" : it->second.geometry.tau.str()) +
                               ", the design's τ is none: legal no entry for an undecomposed layer");
    return;
  }
  require(it != f.end(),
          at + "no factors, the design's τ is " + tau.str() + ": legal an entry for every decomposed layer");
  const td::LayerGeometry& g = it->second.geometry;
  require(g.tau == tau,
          at + "factors for τ " + g.tau.str() + ", the design's τ is " + tau.str() + ": legal the same τ");
  const td::LayerGeometry want = td::geometry(l, tau);
  require(g == want, at + "factors for τ " + tau.str() + " shaped " + describe(g) + "; the layer under τ " + tau.str() +
                         " is " + describe(want));
}

// The design's factors file, checked against every conv layer's τ, and the
// activation exponents it carries (none from an older file).
numerics::Decompositions load_design_factors(const arch::Design& d, numerics::ActivationExponents& exponents) {
  const std::string file = d.factors_path();
  numerics::Decompositions f = td::load_factors(file, &exponents);
  for (const auto& [name, entry] : f) {
    const net::Layer* l = d.network.find(name);
    require(l && l->kind == net::LayerKind::Conv2d, "factors file '" + file + "' of design '" + d.name + "': layer '" +
                                                        name + "' is not a conv layer of network '" + d.network.name +
                                                        "': legal only its conv layers");
  }
  for (const auto& l : d.network.layers)
    if (l.kind == net::LayerKind::Conv2d) check_factors_entry(d, file, l, f);
  return f;
}

}  // namespace

numerics::QNetwork quantise(const arch::Design& design, std::uint64_t seed, const FunctionalData& data) {
  const std::optional<arch::Design> loaded = with_weights(design);
  const arch::Design& d = loaded ? *loaded : design;
  // The trained factors when the design names them: decomposing their dense
  // product again gives other factors (CPD) or other signs (SVD).
  numerics::ActivationExponents exponents;
  const numerics::Decompositions decomps = d.factors_spec.empty() ? decompose(d) : load_design_factors(d, exponents);
  // The exponents the factors were trained (or scored) at: calibrating anew
  // on other images gives other exponents, and a network fine-tuned at one
  // set can lose points at another (docs/accuracy.md, "Fine-tuned factors").
  if (!exponents.empty()) {
    try {
      return numerics::quantize_network(d.network, decomps, exponents);
    } catch (const Error& e) {
      throw Error("factors file '" + d.factors_path() + "' of design '" + d.name + "': " + e.what());
    }
  }
  if (data.calibration.n > 0) {
    const net::Shape& s = d.network.input_shape;
    require(data.calibration.c == s.c && data.calibration.h == s.h && data.calibration.w == s.w,
            "calibration images are " + std::to_string(data.calibration.c) + "x" + std::to_string(data.calibration.h) +
                "x" + std::to_string(data.calibration.w) + ", network '" + d.network.name + "' takes " + s.str());
    return numerics::quantize_network(d.network, decomps, data.calibration);
  }
  Rng rng(seed);
  numerics::FloatTensor calib(8, d.network.input_shape);
  for (auto& v : calib.data) v = static_cast<float>(rng.normal());
  return numerics::quantize_network(d.network, decomps, calib);
}

std::vector<std::int8_t> stage_image(const arch::Design& d, const arch::Module& m, const numerics::QStage& st) {
  const net::Layer* l = d.network.find(m.layer);
  if (!l || l->kind != net::LayerKind::Linear) return st.weight;
  const net::Layer* src = d.network.find(l->inputs.at(0));
  const net::Shape sp = src && src->kind == net::LayerKind::Flatten ? src->in_shape : l->in_shape;
  if (sp.h * sp.w == 1) return st.weight;
  const td::Tau& tau = d.mapping(m.layer).tau;
  require(tau.g2 == 1, "simulate --functional: linear layer '" + m.layer + "' reads a " + sp.str() +
                           " tensor in stream order with g2 = " + std::to_string(tau.g2) +
                           "; channel groups of a flattened spatial tensor are not supported (use g2 = 1)");
  std::vector<std::int8_t> w(st.weight.size());
  const std::int64_t in = sp.numel(), out = static_cast<std::int64_t>(st.weight.size()) / in;
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t c = 0; c < sp.c; ++c)
      for (std::int64_t p = 0; p < sp.h * sp.w; ++p)
        w[static_cast<std::size_t>(o * in + p * sp.c + c)] =
            st.weight[static_cast<std::size_t>(o * in + c * sp.h * sp.w + p)];
  return w;
}

numerics::Int8Tensor input_frames(const numerics::QNetwork& q, const net::Shape& shape, std::int64_t frames,
                                  std::uint64_t seed, const FunctionalData& data) {
  if (data.inputs.n > 0) {
    const numerics::FloatTensor& in = data.inputs;
    require(in.c == shape.c && in.h == shape.h && in.w == shape.w,
            "input images are " + std::to_string(in.c) + "x" + std::to_string(in.h) + "x" + std::to_string(in.w) +
                ", the network takes " + shape.str());
    require(in.n >= frames,
            "asked for " + std::to_string(frames) + " frames, the data set gave " + std::to_string(in.n) + " images");
    numerics::FloatTensor x(frames, shape);
    std::copy(in.data.begin(), in.data.begin() + static_cast<std::ptrdiff_t>(x.data.size()), x.data.begin());
    return numerics::quantize_tensor(x, q.input_exp);
  }
  Rng rng(seed + 1);
  numerics::FloatTensor x(frames, shape);
  for (auto& v : x.data) v = static_cast<float>(rng.normal());
  return numerics::quantize_tensor(x, q.input_exp);
}

std::vector<std::int8_t> stream_order(const numerics::Int8Tensor& x) {
  std::vector<std::int8_t> out;
  out.reserve(x.data.size());
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t i = 0; i < x.h; ++i)
      for (std::int64_t j = 0; j < x.w; ++j)
        for (std::int64_t c = 0; c < x.c; ++c) out.push_back(x.at(n, c, i, j));
  return out;
}

std::vector<std::int64_t> top1(const std::vector<std::int8_t>& words, std::int64_t per_frame) {
  std::vector<std::int64_t> out;
  if (per_frame <= 0) return out;
  for (std::size_t f = 0; (f + 1) * static_cast<std::size_t>(per_frame) <= words.size(); ++f) {
    const auto begin = words.begin() + static_cast<std::ptrdiff_t>(f * static_cast<std::size_t>(per_frame));
    out.push_back(std::max_element(begin, begin + per_frame) - begin);
  }
  return out;
}

std::vector<std::int64_t> top1(const numerics::Int8Tensor& y) {
  require(y.h == 1 && y.w == 1, "top-1 needs a vector output, the network gives " + std::to_string(y.c) + "x" +
                                    std::to_string(y.h) + "x" + std::to_string(y.w));
  return top1(stream_order(y), y.c);
}

GoldenFrames golden_frames(const arch::Design& d, std::int64_t frames, std::uint64_t seed, const FunctionalData& data) {
  GoldenFrames g;
  g.q = quantise(d, seed, data);
  g.x = input_frames(g.q, d.network.input_shape, frames, seed, data);
  g.y = numerics::golden::run_network(g.q, g.x);
  g.input = stream_order(g.x);
  g.expected = stream_order(g.y);
  return g;
}

}  // namespace mixtd::sim
