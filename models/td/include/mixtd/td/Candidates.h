// Rank candidates per (layer, type, g1, g2) and the size of a network's
// design space (SPEC "Decomposition", Mixed-TD §V).
//
// For each target ratio ρ in 30%, 35%, ..., 70% of the layer's original MACs
// the rank r(ρ) = ⌊ρ·MACs / MACs-per-rank⌋ is nudged to the rank with most
// divisors within half a step either side (it folds onto more unroll
// factors); ties go to the rank nearest r(ρ). Ranks are deduplicated and
// kept within 1..rank_bound and at most the original MACs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/td/Tau.h"

namespace mixtd::td {

enum class GroupPolicy {
  // Mixed-TD's code: svd-filter grouped along inputs (g1 = 1, g2 | C) or
  // along outputs (g1 | N, g2 = 1); svd-spatial and cpd ungrouped.
  Paper,
  // Only g1 = g2 = 1.
  Ungrouped,
  // Every g1 | N and g2 | C for every type, g1·g2 ≤ max_chunks.
  All,
};

struct CandidateOptions {
  double min_ratio = 0.30;
  double max_ratio = 0.70;
  double step = 0.05;
  GroupPolicy groups = GroupPolicy::Paper;
  std::int64_t max_chunks = 64;  // GroupPolicy::All only
};

// The (g1, g2) pairs offered for `type` under the policy.
std::vector<std::pair<std::int64_t, std::int64_t>> group_options(const net::Layer& conv, TdType type,
                                                                 const CandidateOptions& options = {});

// Candidate ranks (as τ) for one (layer, type, g1, g2), largest rank first.
std::vector<Tau> rank_candidates(const net::Layer& conv, TdType type, std::int64_t g1, std::int64_t g2,
                                 const CandidateOptions& options = {});

// Every τ offered to a layer; "none" is always the last entry. Layers that
// are not decomposable (is_decomposable) get only "none".
std::vector<Tau> layer_candidates(const net::Layer& layer, const CandidateOptions& options = {});

struct LayerSpace {
  std::string layer;
  std::int64_t svd_filter = 0, svd_spatial = 0, cpd = 0;  // candidates per type
  std::int64_t total() const { return svd_filter + svd_spatial + cpd + 1; }
};

struct DesignSpace {
  std::vector<LayerSpace> layers;  // the decomposable conv layers
  double log10_size = 0.0;         // log10 of the product of per-layer totals
  std::string size_str() const;    // "5.7e29"
};

DesignSpace design_space(const net::Network& net, const CandidateOptions& options = {});

}  // namespace mixtd::td
