// The stage structure a τ gives a conv layer: shapes, strides, padding,
// parameters and MACs of every stage of every chunk, without weights.
//
// This is the one place that says what an SVD or CPD engine *is*; the
// decomposer fills these stages with weights, the executors run them and
// the hardware models (arch, sc, rtl) build engines from them.
//
//   none         one stage: the conv itself (kh x kw, stride, padding)
//   svd-filter   (N/g1) x (C/g2*kh*kw):  kh x kw conv C/g2 -> r,  1x1 conv r -> N/g1
//   svd-spatial  (N/g1*kh) x (C/g2*kw):  1 x kw conv C/g2 -> r (stride 1,sw; pad 0,pw),
//                                        kh x 1 conv r -> N/g1   (stride sh,1; pad ph,0)
//   cpd          1x1 conv C/g2 -> r, depthwise kh x 1 (stride sh,1; pad ph,0),
//                depthwise 1 x kw (stride 1,sw; pad 0,pw), 1x1 conv r -> N/g1
//
// Chunk (a, b) reads input group b (channels c ≡ b mod g2, in natural
// order) and produces a partial of output group a (channels n ≡ a mod g1).
// The layer bias is added once, after the partials of the g2 input groups
// are summed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Layer.h"
#include "mixtd/td/Tau.h"

namespace mixtd::td {

struct StageShape {
  std::string role;  // "conv", "svd.1", "svd.2", "cpd.1" ... "cpd.4"
  std::int64_t in_ch = 0, out_ch = 0;
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool depthwise = false;   // in_ch == out_ch == groups: one kh x kw filter per channel
  std::int64_t groups = 1;  // conv groups: 1 dense, in_ch depthwise (an undecomposed grouped conv: anything between)
  net::Shape in;            // activation shapes at this stage (per chunk)
  net::Shape out;

  std::int64_t in_per_group() const { return in_ch / groups; }
  std::int64_t weight_count() const { return out_ch * in_per_group() * kh * kw; }
  std::int64_t macs() const { return out.h * out.w * weight_count(); }
  bool operator==(const StageShape&) const = default;
};

struct LayerGeometry {
  Tau tau;
  std::int64_t n = 0, c = 0;                 // the layer's output / input channels
  std::int64_t chunk_out = 0, chunk_in = 0;  // N/g1, C/g2
  bool bias = true;                          // the layer has a bias (added once per output channel)
  std::vector<StageShape> stages;            // the chain of one chunk (all chunks alike)

  std::int64_t chunks() const { return tau.g1 * tau.g2; }
  std::int64_t params_per_chunk() const;  // weights only
  std::int64_t macs_per_chunk() const;
  std::int64_t params() const { return chunks() * params_per_chunk() + (bias ? n : 0); }
  std::int64_t macs() const { return chunks() * macs_per_chunk(); }
  bool operator==(const LayerGeometry&) const = default;
};

// Throws mixtd::Error naming the layer, the offending value and the legal
// ones: not a dense conv2d, g1 ∤ N, g2 ∤ C, rank 0 or above the bound, CPD on
// a 1x1 kernel, grouping without decomposition.
void check_tau(const net::Layer& conv, const Tau& tau);

// Largest legal rank for this (layer, type, g1, g2): min(d1, d2) for SVD;
// for CPD the generic bound min over modes of the product of the other three.
std::int64_t rank_bound(const net::Layer& conv, TdType type, std::int64_t g1, std::int64_t g2);

// Checks τ, then derives the stage chain. The layer's shapes must be inferred.
LayerGeometry geometry(const net::Layer& conv, const Tau& tau);

// A linear layer as hardware sees it: one 1x1 stage ("fc") over its
// flattened C·H·W input, never decomposed.
LayerGeometry linear_geometry(const net::Layer& linear);

// Whether a layer is offered decompositions at all by the candidate
// generator (dense conv2d, kh*kw > 1, more than 3 input channels — the
// paper's rule: the RGB stem and 1x1 projections stay as they are).
bool is_decomposable(const net::Layer& layer);

}  // namespace mixtd::td
