// Designs for the solver tests: zoo networks on a device, with τ chosen
// uniformly (every decomposable layer the same type at a middle rank) or at
// random from the candidate generator, and random legal ψ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Candidates.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::search::testing {

inline arch::Design zoo_design(const std::string& spec, const std::string& device) {
  return arch::make_design(net::build_zoo(spec), spec, arch::load_device(device), device);
}

// Every decomposable layer as `type` with (g1, g2) (where legal, else
// ungrouped) at the middle rank candidate.
inline arch::Design uniform_tau(arch::Design d, td::TdType type, std::int64_t g1 = 1, std::int64_t g2 = 1) {
  for (const auto& l : d.network.layers) {
    if (!td::is_decomposable(l)) continue;
    const bool grouped_ok = l.conv.out_channels % g1 == 0 && l.in_shape.c % g2 == 0;
    const std::int64_t a = grouped_ok ? g1 : 1, b = grouped_ok ? g2 : 1;
    auto ranks = td::rank_candidates(l, type, a, b);
    if (ranks.empty()) continue;
    arch::LayerMapping& m = d.layers.at(l.name);
    m.tau = ranks[ranks.size() / 2];
    m.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
  }
  return d;
}

// τ drawn from every candidate (all groupings up to 8 chunks), per layer.
inline arch::Design random_tau(arch::Design d, std::uint64_t seed) {
  Rng rng(seed);
  td::CandidateOptions o;
  o.groups = td::GroupPolicy::All;
  o.max_chunks = 8;
  for (const auto& l : d.network.layers) {
    if (l.kind != net::LayerKind::Conv2d) continue;
    const auto cands = td::layer_candidates(l, o);
    arch::LayerMapping& m = d.layers.at(l.name);
    m.tau = cands[rng.below(cands.size())];
    m.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
  }
  return d;
}

template <typename T>
T pick(const std::vector<T>& v, Rng& rng) {
  return v[rng.below(v.size())];
}

// A random weight memory kind legal on the design's device.
inline arch::WeightMemory random_weight_memory(const arch::Design& d, Rng& rng) {
  if (d.device.capacity.uram <= 0) return rng.below(2) ? arch::WeightMemory::Bram : arch::WeightMemory::Auto;
  return pick(
      std::vector<arch::WeightMemory>{arch::WeightMemory::Auto, arch::WeightMemory::Bram, arch::WeightMemory::Uram},
      rng);
}

// Random legal ψ for every stage, weight memory kind included.
inline void random_psi(arch::Design& d, Rng& rng) {
  for (const auto& l : d.network.layers) {
    auto it = d.layers.find(l.name);
    if (it == d.layers.end()) continue;
    const auto geo = d.geometry(l);
    for (std::size_t k = 0; k < geo.stages.size(); ++k) {
      const auto& s = geo.stages[k];
      arch::Psi& p = it->second.stages[k];
      p.p_in = pick(arch::divisors(s.depthwise ? s.in_ch : s.in_per_group()), rng);
      p.p_out = s.depthwise ? p.p_in : pick(arch::divisors(s.out_ch / s.groups), rng);
      p.fine = pick(arch::divisors(s.kh * s.kw), rng);
      p.weight_memory = random_weight_memory(d, rng);
    }
  }
}

}  // namespace mixtd::search::testing
