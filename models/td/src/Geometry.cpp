#include "mixtd/td/Geometry.h"

#include <algorithm>

#include "mixtd/support/Error.h"

namespace mixtd::td {

namespace {

std::vector<long long> divisors(std::int64_t n) {
  std::vector<long long> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

std::string who(const net::Layer& l) { return "layer '" + l.name + "'"; }

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p) {
  return (in + 2 * p - k) / s + 1;
}

StageShape make_stage(std::string role, std::int64_t in_ch, std::int64_t out_ch, std::int64_t kh, std::int64_t kw,
                      std::int64_t sh, std::int64_t sw, std::int64_t ph, std::int64_t pw, bool depthwise,
                      net::Shape in) {
  StageShape s;
  s.role = std::move(role);
  s.in_ch = in_ch;
  s.out_ch = out_ch;
  s.kh = kh;
  s.kw = kw;
  s.sh = sh;
  s.sw = sw;
  s.ph = ph;
  s.pw = pw;
  s.depthwise = depthwise;
  s.groups = depthwise ? in_ch : 1;
  s.in = {in_ch, in.h, in.w};
  s.out = {out_ch, out_size(in.h, kh, sh, ph), out_size(in.w, kw, sw, pw)};
  return s;
}

}  // namespace

std::int64_t LayerGeometry::params_per_chunk() const {
  std::int64_t p = 0;
  for (const auto& s : stages) p += s.weight_count();
  return p;
}

std::int64_t LayerGeometry::macs_per_chunk() const {
  std::int64_t m = 0;
  for (const auto& s : stages) m += s.macs();
  return m;
}

LayerGeometry linear_geometry(const net::Layer& l) {
  LayerGeometry g;
  const std::int64_t in = l.in_shape.numel(), out = l.linear.out_features;
  g.n = g.chunk_out = out;
  g.c = g.chunk_in = in;
  g.bias = l.linear.bias;
  StageShape s;
  s.role = "fc";
  s.in_ch = in;
  s.out_ch = out;
  s.in = {in, 1, 1};
  s.out = {out, 1, 1};
  g.stages.push_back(s);
  return g;
}

bool is_decomposable(const net::Layer& l) {
  return l.kind == net::LayerKind::Conv2d && l.conv.groups == 1 && l.conv.kh * l.conv.kw > 1 && l.in_shape.c > 3;
}

std::int64_t rank_bound(const net::Layer& l, TdType type, std::int64_t g1, std::int64_t g2) {
  const std::int64_t n = l.conv.out_channels / g1, c = l.in_shape.c / g2, kh = l.conv.kh, kw = l.conv.kw;
  switch (type) {
    case TdType::None:
      return 0;
    case TdType::SvdFilter:
      return std::min(n, c * kh * kw);
    case TdType::SvdSpatial:
      return std::min(n * kh, c * kw);
    case TdType::Cpd:
      return std::min({c * kh * kw, n * kh * kw, n * c * kw, n * c * kh});
  }
  return 0;
}

// Messages are built only when a check fails: geometry() (and so this)
// runs for every layer of every graph the analytical model builds.
void check_tau(const net::Layer& l, const Tau& t) {
  if (l.kind != net::LayerKind::Conv2d)
    throw Error(who(l) + " is a " + std::string(net::to_string(l.kind)) + "; only conv2d layers can be decomposed");
  const std::int64_t n = l.conv.out_channels, c = l.in_shape.c;
  if (c <= 0) throw Error(who(l) + ": shapes not inferred");
  if (t.type == TdType::None) {
    if (!(t.g1 == 1 && t.g2 == 1 && t.rank == 0))
      throw Error(who(l) + ": an undecomposed layer takes g1 = g2 = 1 and no rank, got " + t.str() +
                  " g1=" + std::to_string(t.g1) + " g2=" + std::to_string(t.g2) + " r=" + std::to_string(t.rank));
    return;
  }
  if (l.conv.groups != 1)
    throw Error(who(l) + " is a grouped/depthwise conv (groups = " + std::to_string(l.conv.groups) +
                "); only dense convs (groups = 1) can be decomposed, so τ must be none");
  if (!(t.g1 >= 1 && n % t.g1 == 0))
    throw Error(who(l) + ": g1 = " + std::to_string(t.g1) + " does not divide the " + std::to_string(n) +
                " output channels; legal g1: " + join_ints(divisors(n)));
  if (!(t.g2 >= 1 && c % t.g2 == 0))
    throw Error(who(l) + ": g2 = " + std::to_string(t.g2) + " does not divide the " + std::to_string(c) +
                " input channels; legal g2: " + join_ints(divisors(c)));
  if (t.type == TdType::Cpd && l.conv.kh * l.conv.kw == 1)
    throw Error(who(l) + ": CPD needs a spatial kernel (kh*kw > 1) but the kernel is 1x1; use svd-filter or none");
  const std::int64_t bound = rank_bound(l, t.type, t.g1, t.g2);
  if (!(t.rank >= 1 && t.rank <= bound))
    throw Error(who(l) + ": rank " + std::to_string(t.rank) + " is out of range for " + std::string(to_string(t.type)) +
                " with g1=" + std::to_string(t.g1) + " g2=" + std::to_string(t.g2) + "; legal: 1.." +
                std::to_string(bound));
}

LayerGeometry geometry(const net::Layer& l, const Tau& t) {
  check_tau(l, t);
  LayerGeometry g;
  g.tau = t;
  g.n = l.conv.out_channels;
  g.c = l.in_shape.c;
  g.chunk_out = g.n / t.g1;
  g.chunk_in = g.c / t.g2;
  g.bias = l.conv.bias;
  const auto& cv = l.conv;
  const std::int64_t n = g.chunk_out, c = g.chunk_in, r = t.rank;
  const net::Shape in{c, l.in_shape.h, l.in_shape.w};
  switch (t.type) {
    case TdType::None: {
      // The conv as it is, grouped or depthwise included.
      const bool dw = cv.groups > 1 && cv.groups == c && cv.groups == n;
      g.stages.push_back(make_stage("conv", c, n, cv.kh, cv.kw, cv.sh, cv.sw, cv.ph, cv.pw, dw, in));
      g.stages.back().groups = cv.groups;
      break;
    }
    case TdType::SvdFilter: {
      g.stages.push_back(make_stage("svd.1", c, r, cv.kh, cv.kw, cv.sh, cv.sw, cv.ph, cv.pw, false, in));
      g.stages.push_back(make_stage("svd.2", r, n, 1, 1, 1, 1, 0, 0, false, g.stages.back().out));
      break;
    }
    case TdType::SvdSpatial: {
      g.stages.push_back(make_stage("svd.1", c, r, 1, cv.kw, 1, cv.sw, 0, cv.pw, false, in));
      g.stages.push_back(make_stage("svd.2", r, n, cv.kh, 1, cv.sh, 1, cv.ph, 0, false, g.stages.back().out));
      break;
    }
    case TdType::Cpd: {
      g.stages.push_back(make_stage("cpd.1", c, r, 1, 1, 1, 1, 0, 0, false, in));
      g.stages.push_back(make_stage("cpd.2", r, r, cv.kh, 1, cv.sh, 1, cv.ph, 0, true, g.stages.back().out));
      g.stages.push_back(make_stage("cpd.3", r, r, 1, cv.kw, 1, cv.sw, 0, cv.pw, true, g.stages.back().out));
      g.stages.push_back(make_stage("cpd.4", r, n, 1, 1, 1, 1, 0, 0, false, g.stages.back().out));
      break;
    }
  }
  return g;
}

}  // namespace mixtd::td
