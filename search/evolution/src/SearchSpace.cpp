#include "mixtd/search/SearchSpace.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "mixtd/support/Error.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::search {

TypeSet parse_type_set(const std::string& s) {
  if (s == "mixed") return TypeSet::Mixed;
  if (s == "svd") return TypeSet::Svd;
  if (s == "cpd") return TypeSet::Cpd;
  throw Error("--types '" + s + "': legal values are mixed, svd, cpd");
}

std::string to_string(TypeSet t) {
  switch (t) {
    case TypeSet::Mixed:
      return "mixed";
    case TypeSet::Svd:
      return "svd";
    case TypeSet::Cpd:
      return "cpd";
  }
  return "?";
}

bool allows(TypeSet set, td::TdType type) {
  if (type == td::TdType::None) return true;
  if (set == TypeSet::Mixed) return true;
  if (set == TypeSet::Cpd) return type == td::TdType::Cpd;
  return type == td::TdType::SvdFilter || type == td::TdType::SvdSpatial;
}

td::GroupPolicy parse_group_policy(const std::string& s) {
  if (s == "paper") return td::GroupPolicy::Paper;
  if (s == "none") return td::GroupPolicy::Ungrouped;
  if (s == "all") return td::GroupPolicy::All;
  throw Error("--groups '" + s + "': legal values are paper, none, all");
}

std::string to_string(td::GroupPolicy g) {
  switch (g) {
    case td::GroupPolicy::Paper:
      return "paper";
    case td::GroupPolicy::Ungrouped:
      return "none";
    case td::GroupPolicy::All:
      return "all";
  }
  return "?";
}

SearchSpace::SearchSpace(const arch::Design& base, const SpaceOptions& options) : base_(base), options_(options) {
  for (const auto& l : base_.network.layers) {
    const auto it = base_.layers.find(l.name);
    if (it == base_.layers.end()) continue;
    // Layers outside the genome keep the base design's τ.
    if (!td::is_decomposable(l)) {
      const auto g = base_.geometry(l);
      fixed_macs_ += static_cast<double>(g.macs());
      fixed_params_ += static_cast<double>(g.params());
      continue;
    }
    LayerChoices lc;
    lc.layer = l.name;
    const auto full = td::geometry(l, td::Tau{});
    lc.macs = static_cast<double>(full.macs());
    lc.params = static_cast<double>(full.params());
    for (const auto& tau : td::layer_candidates(l, options_.candidates)) {
      if (!allows(options_.types, tau.type) || !tau.decomposed()) continue;
      const auto g = td::geometry(l, tau);
      lc.candidates.push_back({tau, static_cast<double>(g.macs()) / lc.macs, static_cast<double>(g.macs()),
                               static_cast<double>(g.params())});
    }
    lc.candidates.push_back({td::Tau{}, 1.0, lc.macs, lc.params});
    layers_.push_back(std::move(lc));
  }
}

double SearchSpace::log10_size() const {
  double s = 0;
  for (const auto& l : layers_) s += std::log10(static_cast<double>(l.candidates.size()));
  return s;
}

void SearchSpace::restrict(const std::vector<std::vector<bool>>& keep) {
  require(keep.size() == layers_.size(), "search space: a keep mask per layer is needed");
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    auto& c = layers_[i].candidates;
    require(keep[i].size() == c.size(), "search space: layer '" + layers_[i].layer + "' mask has the wrong length");
    std::vector<Candidate> kept;
    for (std::size_t k = 0; k + 1 < c.size(); ++k)
      if (keep[i][k]) kept.push_back(c[k]);
    kept.push_back(c.back());
    c = std::move(kept);
  }
}

Genome SearchSpace::undecomposed() const {
  Genome g(layers_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i) g[i] = layers_[i].none();
  return g;
}

void SearchSpace::check(const Genome& g) const {
  require(g.size() == layers_.size(),
          "genome of " + std::to_string(g.size()) + " layers, the space has " + std::to_string(layers_.size()));
  for (std::size_t i = 0; i < g.size(); ++i)
    require(g[i] >= 0 && g[i] < static_cast<std::int32_t>(layers_[i].candidates.size()),
            "genome: layer '" + layers_[i].layer + "' candidate " + std::to_string(g[i]) + ", legal 0.." +
                std::to_string(layers_[i].candidates.size() - 1));
}

Taus SearchSpace::taus(const Genome& g) const {
  Taus t;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto& c = layers_[i].candidates[static_cast<std::size_t>(g[i])];
    if (c.tau.decomposed()) t.emplace(layers_[i].layer, c.tau);
  }
  return t;
}

arch::Design SearchSpace::design(const Genome& g) const {
  arch::Design d = base_;
  for (std::size_t i = 0; i < g.size(); ++i) {
    auto& m = d.layers.at(layers_[i].layer);
    m.tau = layers_[i].candidates[static_cast<std::size_t>(g[i])].tau;
  }
  for (const auto& l : d.network.layers) {
    auto it = d.layers.find(l.name);
    if (it != d.layers.end()) it->second.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
  }
  return d;
}

double SearchSpace::macs(const Genome& g) const {
  double s = fixed_macs_;
  for (std::size_t i = 0; i < g.size(); ++i) s += layers_[i].candidates[static_cast<std::size_t>(g[i])].macs;
  return s;
}

double SearchSpace::params(const Genome& g) const {
  double s = fixed_params_;
  for (std::size_t i = 0; i < g.size(); ++i) s += layers_[i].candidates[static_cast<std::size_t>(g[i])].params;
  return s;
}

double SearchSpace::weight_bits(const Genome& g) const { return params(g) * base_.bits.weight; }

std::string SearchSpace::key(const Genome& g) {
  std::string s;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (i) s += '.';
    s += std::to_string(g[i]);
  }
  return s;
}

Genome SearchSpace::parse_key(const std::string& text) const {
  Genome g;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, '.')) {
    char* end = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    require(!part.empty() && *end == '\0', "genome '" + text + "': '" + part + "' is not a candidate index");
    g.push_back(static_cast<std::int32_t>(v));
  }
  check(g);
  return g;
}

std::string SearchSpace::describe(const Genome& g) const {
  std::string s;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto& t = layers_[i].candidates[static_cast<std::size_t>(g[i])].tau;
    if (!t.decomposed()) continue;
    s += (s.empty() ? "" : "; ") + layers_[i].layer + "=" + t.str();
  }
  return s.empty() ? "undecomposed" : s;
}

Prior::Prior(const SearchSpace& space, const PriorOptions& o) {
  require(o.sigma > 0 && o.bin > 0, "prior: sigma and bin width must be positive");
  for (const auto& l : space.layers()) {
    // Bin index of each candidate; "none" sits in the bin of ratio 1.
    std::map<long, std::vector<std::size_t>> bins;
    for (std::size_t k = 0; k < l.candidates.size(); ++k)
      bins[std::lround(l.candidates[k].mac_ratio / o.bin)].push_back(k);
    std::vector<double> w(l.candidates.size(), 0.0);
    double total = 0;
    for (const auto& [b, members] : bins) {
      const double centre = static_cast<double>(b) * o.bin;
      const double z = (centre - o.mac_ratio) / o.sigma;
      const double weight = std::exp(-0.5 * z * z);
      for (std::size_t k : members) w[k] = weight / static_cast<double>(members.size());
      total += weight;
    }
    // Far in the tail every weight can underflow: fall back to uniform.
    for (auto& x : w) x = total > 0 ? x / total : 1.0 / static_cast<double>(w.size());
    weights_.push_back(std::move(w));
  }
}

std::int32_t Prior::sample_layer(std::size_t layer, Rng& rng) const {
  const auto& w = weights_[layer];
  double u = rng.uniform();
  for (std::size_t k = 0; k < w.size(); ++k) {
    u -= w[k];
    if (u < 0) return static_cast<std::int32_t>(k);
  }
  return static_cast<std::int32_t>(w.size()) - 1;
}

Genome Prior::sample(Rng& rng) const {
  Genome g(weights_.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = sample_layer(i, rng);
  return g;
}

Genome mutate(const Genome& parent, const Prior& prior, double rate, Rng& rng) {
  Genome g = parent;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (rng.uniform() < rate) g[i] = prior.sample_layer(i, rng);
  return g;
}

Genome crossover(const Genome& a, const Genome& b, Rng& rng) {
  Genome g = a;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (rng.uniform() < 0.5) g[i] = b[i];
  return g;
}

}  // namespace mixtd::search
