#include "mixtd/td/Candidates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mixtd/td/Geometry.h"

namespace mixtd::td {

namespace {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

std::int64_t divisor_count(std::int64_t n) {
  std::int64_t k = 0;
  for (std::int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) k += (i * i == n) ? 1 : 2;
  return k;
}

// Most divisors in [lo, hi]; ties to the one nearest `centre`, then smaller.
std::int64_t nudge(std::int64_t centre, std::int64_t lo, std::int64_t hi) {
  std::int64_t best = centre, best_div = -1;
  for (std::int64_t r = lo; r <= hi; ++r) {
    const std::int64_t d = divisor_count(r);
    const auto dist = std::llabs(r - centre), best_dist = std::llabs(best - centre);
    if (d > best_div || (d == best_div && dist < best_dist)) {
      best = r;
      best_div = d;
    }
  }
  return best;
}

}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> group_options(const net::Layer& l, TdType type,
                                                                 const CandidateOptions& o) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  const std::int64_t n = l.conv.out_channels, c = l.in_shape.c;
  switch (o.groups) {
    case GroupPolicy::Ungrouped:
      out.emplace_back(1, 1);
      break;
    case GroupPolicy::Paper:
      out.emplace_back(1, 1);
      if (type == TdType::SvdFilter) {
        for (auto g2 : divisors(c))
          if (g2 > 1) out.emplace_back(1, g2);
        for (auto g1 : divisors(n))
          if (g1 > 1) out.emplace_back(g1, 1);
      }
      break;
    case GroupPolicy::All:
      for (auto g1 : divisors(n))
        for (auto g2 : divisors(c))
          if (g1 * g2 <= o.max_chunks) out.emplace_back(g1, g2);
      break;
  }
  return out;
}

std::vector<Tau> rank_candidates(const net::Layer& l, TdType type, std::int64_t g1, std::int64_t g2,
                                 const CandidateOptions& o) {
  std::vector<Tau> out;
  if (type == TdType::None) return out;
  if (type == TdType::Cpd && l.conv.kh * l.conv.kw == 1) return out;
  const std::int64_t bound = rank_bound(l, type, g1, g2);
  if (bound < 1) return out;
  const std::int64_t orig = geometry(l, Tau{}).macs();
  const std::int64_t per_rank = geometry(l, Tau{type, g1, g2, 1}).macs();
  const double step_ranks = o.step * static_cast<double>(orig) / static_cast<double>(per_rank);
  const std::int64_t half = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(step_ranks / 2)));
  const int steps = static_cast<int>(std::lround((o.max_ratio - o.min_ratio) / o.step));
  for (int i = steps; i >= 0; --i) {
    const double ratio = o.min_ratio + i * o.step;
    const auto target = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::floor(ratio * static_cast<double>(orig) / static_cast<double>(per_rank))));
    const std::int64_t lo = std::max<std::int64_t>(1, target - half);
    const std::int64_t hi = std::min(bound, target + half);
    if (lo > hi) continue;
    const std::int64_t r = nudge(std::clamp(target, lo, hi), lo, hi);
    if (r * per_rank > orig) continue;
    const Tau t{type, g1, g2, r};
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  std::sort(out.begin(), out.end(), [](const Tau& a, const Tau& b) { return a.rank > b.rank; });
  return out;
}

std::vector<Tau> layer_candidates(const net::Layer& l, const CandidateOptions& o) {
  std::vector<Tau> out;
  if (is_decomposable(l)) {
    for (TdType t : {TdType::SvdFilter, TdType::SvdSpatial, TdType::Cpd})
      for (const auto& [g1, g2] : group_options(l, t, o)) {
        const auto rs = rank_candidates(l, t, g1, g2, o);
        out.insert(out.end(), rs.begin(), rs.end());
      }
  }
  out.push_back(Tau{});
  return out;
}

std::string DesignSpace::size_str() const {
  const double e = std::floor(log10_size);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1fe%.0f", std::pow(10.0, log10_size - e), e);
  return buf;
}

DesignSpace design_space(const net::Network& net, const CandidateOptions& o) {
  DesignSpace ds;
  for (const auto& l : net.layers) {
    if (!is_decomposable(l)) continue;
    LayerSpace s;
    s.layer = l.name;
    for (const auto& t : layer_candidates(l, o)) {
      if (t.type == TdType::SvdFilter) ++s.svd_filter;
      if (t.type == TdType::SvdSpatial) ++s.svd_spatial;
      if (t.type == TdType::Cpd) ++s.cpd;
    }
    ds.log10_size += std::log10(static_cast<double>(s.total()));
    ds.layers.push_back(s);
  }
  return ds;
}

}  // namespace mixtd::td
