// Decomposer: one conv layer's weights, the per-(reshape, g1, g2) SVD cache
// and the per-(g1, g2, rank) CP cache; DecomposedLayer::reconstruct.
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "TdInternal.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::td {

namespace {

struct Kernel {
  std::int64_t kh = 1, kw = 1;
};

// The original kernel, read back from the stage chain of its type.
Kernel kernel_of(const LayerGeometry& g) {
  const auto& s = g.stages;
  require(!s.empty(), "decomposed layer has no stages");
  switch (g.tau.type) {
    case TdType::None:
    case TdType::SvdFilter:
      return {s.at(0).kh, s.at(0).kw};
    case TdType::SvdSpatial:
      return {s.at(1).kh, s.at(0).kw};
    case TdType::Cpd:
      return {s.at(1).kh, s.at(2).kw};
  }
  return {};
}

std::string who(const net::Layer& l) { return "layer '" + l.name + "'"; }

}  // namespace

std::vector<float> DecomposedLayer::reconstruct() const {
  const LayerGeometry& g = geometry;
  if (g.tau.type == TdType::None) {
    require(chunks.size() == 1 && chunks[0].stages.size() == 1, "an undecomposed layer has one chunk of one stage");
    return chunks[0].stages[0].weight;
  }
  require(static_cast<std::int64_t>(chunks.size()) == g.chunks(),
          "decomposed layer has " + std::to_string(chunks.size()) + " chunks, τ = " + g.tau.str() + " gives " +
              std::to_string(g.chunks()));
  const Kernel k = kernel_of(g);
  std::vector<float> w(static_cast<std::size_t>(g.n * g.c * k.kh * k.kw), 0.0f);
  for (const ChunkFactors& ch : chunks) {
    const std::vector<float> dense = g.tau.type == TdType::Cpd ? detail::cpd_chunk_weight(g, ch, k.kh, k.kw)
                                                               : detail::svd_chunk_weight(g, ch, k.kh, k.kw);
    scatter_chunk(dense, w, g.n, g.c, k.kh, k.kw, g.tau.g1, g.tau.g2, ch.a, ch.b);
  }
  return w;
}

struct Decomposer::Impl {
  struct CachedCp {
    CpdResult result;
    double norm2 = 0.0;  // ||chunk||², to turn its relative error into the layer's
  };
  using SvdKey = std::tuple<TdType, std::int64_t, std::int64_t>;       // (reshape, g1, g2)
  using CpKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // (g1, g2, rank)

  net::Layer layer;  // a copy, weights included: the caches outlive the caller's network
  CpdOptions cpd;
  double norm2 = 0.0;
  std::int64_t svds_computed = 0;
  std::map<SvdKey, std::vector<detail::ChunkSvd>> svds;
  std::map<CpKey, std::vector<CachedCp>> cps;

  std::int64_t n() const { return layer.conv.out_channels; }
  std::int64_t c() const { return layer.in_shape.c; }

  std::vector<float> chunk(const Tau& t, std::int64_t a, std::int64_t b) const {
    return extract_chunk(layer.weight, n(), c(), layer.conv.kh, layer.conv.kw, t.g1, t.g2, a, b);
  }

  // Every chunk's full thin SVD for τ's (reshape, g1, g2), computed once.
  const std::vector<detail::ChunkSvd>& svd_of(const Tau& t) {
    auto [it, fresh] = svds.try_emplace(SvdKey{t.type, t.g1, t.g2});
    if (fresh) {
      for (std::int64_t a = 0; a < t.g1; ++a)
        for (std::int64_t b = 0; b < t.g2; ++b) {
          try {
            it->second.push_back(
                detail::chunk_svd(chunk(t, a, b), t.type, n() / t.g1, c() / t.g2, layer.conv.kh, layer.conv.kw));
          } catch (const Error& e) {
            svds.erase(it);  // not a half-filled cache entry
            throw Error(who(layer) + ", τ = " + t.str() + ", chunk (" + std::to_string(a) + ", " + std::to_string(b) +
                        "): " + e.what());
          }
          ++svds_computed;
        }
    }
    return it->second;
  }

  // Every chunk's CP factors at τ's (g1, g2, rank), computed once.
  const std::vector<CachedCp>& cp_of(const Tau& t) {
    auto [it, fresh] = cps.try_emplace(CpKey{t.g1, t.g2, t.rank});
    if (fresh) {
      const std::array<std::int64_t, 4> dims{n() / t.g1, c() / t.g2, layer.conv.kh, layer.conv.kw};
      for (std::int64_t a = 0; a < t.g1; ++a)
        for (std::int64_t b = 0; b < t.g2; ++b) {
          const std::vector<float> x = chunk(t, a, b);
          CpdOptions o = cpd;
          std::uint64_t s = cpd.seed + static_cast<std::uint64_t>(a * t.g2 + b);
          o.seed = splitmix64(s);  // independent random fill per chunk, reproducible
          it->second.push_back({cp_als(x, dims, t.rank, o), detail::sum_squares(x)});
        }
    }
    return it->second;
  }
};

Decomposer::Decomposer(const net::Layer& conv, CpdOptions cpd) : impl_(std::make_unique<Impl>()) {
  require(conv.kind == net::LayerKind::Conv2d,
          who(conv) + " is a " + std::string(net::to_string(conv.kind)) + "; only conv2d layers can be decomposed");
  require(conv.conv.groups == 1, who(conv) + " is a grouped conv (groups = " + std::to_string(conv.conv.groups) +
                                     "); the decomposer takes dense convs only");
  require(conv.in_shape.c > 0, who(conv) + ": shapes not inferred");
  require(!conv.weight.empty(),
          who(conv) +
              " has no weights: its network was loaded without them (a network .yaml names its weights "
              "file on a 'weights:' line, e.g. written by `mixtd convert NET -o net.yaml`; an .onnx "
              "model carries them; a zoo network generates them)");
  require(static_cast<std::int64_t>(conv.weight.size()) == conv.expected_weight_size(),
          who(conv) + " has " + std::to_string(conv.weight.size()) + " weights, expected " +
              std::to_string(conv.expected_weight_size()));
  for (std::size_t k = 0; k < conv.weight.size(); ++k)
    require(std::isfinite(conv.weight[k]), who(conv) + ": weight at flat index " + std::to_string(k) + " is " +
                                               std::to_string(conv.weight[k]) + "; decomposition needs finite weights");
  require(conv.bias.empty() || static_cast<std::int64_t>(conv.bias.size()) == conv.conv.out_channels,
          who(conv) + " has " + std::to_string(conv.bias.size()) + " biases, expected " +
              std::to_string(conv.conv.out_channels));
  impl_->layer = conv;
  impl_->cpd = cpd;
  impl_->norm2 = detail::sum_squares(conv.weight);
}

Decomposer::~Decomposer() = default;

DecomposedLayer Decomposer::decompose(const Tau& tau) {
  const net::Layer& l = impl_->layer;
  DecomposedLayer out;
  out.geometry = geometry(l, tau);  // checks τ first
  out.bias = l.bias;
  const LayerGeometry& g = out.geometry;
  if (tau.type == TdType::None) {
    out.chunks.push_back({0, 0, {{g.stages.at(0), l.weight}}});
    return out;
  }
  for (std::int64_t a = 0; a < tau.g1; ++a)
    for (std::int64_t b = 0; b < tau.g2; ++b) out.chunks.push_back({a, b, {}});
  if (tau.type == TdType::Cpd) {
    const auto& cps = impl_->cp_of(tau);
    for (std::size_t i = 0; i < cps.size(); ++i) out.chunks[i].stages = detail::cpd_stages(cps[i].result, g);
  } else {
    const auto& svds = impl_->svd_of(tau);
    for (std::size_t i = 0; i < svds.size(); ++i) out.chunks[i].stages = detail::svd_stages(svds[i], g, l.conv.kh);
  }
  return out;
}

double Decomposer::relative_error(const Tau& tau) {
  const net::Layer& l = impl_->layer;
  check_tau(l, tau);
  if (tau.type == TdType::None || impl_->norm2 == 0.0) return 0.0;
  // The chunks partition W, so squared errors add up over chunks.
  double err2 = 0.0;
  if (tau.type == TdType::Cpd) {
    for (const auto& cp : impl_->cp_of(tau)) err2 += cp.result.relative_error * cp.result.relative_error * cp.norm2;
  } else {
    // Eckart-Young: the truncation error is exactly the discarded energy.
    for (const auto& svd : impl_->svd_of(tau)) err2 += svd.tail_energy(tau.rank);
  }
  return std::sqrt(err2 / impl_->norm2);
}

std::int64_t Decomposer::svds_computed() const { return impl_->svds_computed; }

}  // namespace mixtd::td
