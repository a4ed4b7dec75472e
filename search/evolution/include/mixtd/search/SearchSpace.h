// The search's genome (SPEC "The search", paper §V): one τ per decomposable
// conv layer, each drawn from that layer's candidates (td::layer_candidates,
// "undecomposed" always among them), and the operators the evolutionary
// search applies to it — Mixed-TD's Gaussian prior on the per-layer MAC
// ratio, per-layer mutation and uniform crossover.
//
// A Genome is a vector of candidate indices, one per decomposable layer in
// network order. Everything a genome implies that costs nothing to compute
// (MACs, parameters, weight bits) is a sum of per-candidate figures
// precomputed here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Candidates.h"
#include "mixtd/td/Tau.h"

namespace mixtd::search {

// τ per conv layer (the same type as nn::Taus); undecomposed layers absent.
using Taus = std::map<std::string, td::Tau>;
using Genome = std::vector<std::int32_t>;

// Which decomposition types a search may use (the paper's ablation).
enum class TypeSet { Mixed, Svd, Cpd };
TypeSet parse_type_set(const std::string& s);  // "mixed" | "svd" | "cpd"; throws naming the legal values
std::string to_string(TypeSet t);
bool allows(TypeSet set, td::TdType type);

td::GroupPolicy parse_group_policy(const std::string& s);  // "paper" | "none" | "all"
std::string to_string(td::GroupPolicy g);

struct SpaceOptions {
  TypeSet types = TypeSet::Mixed;
  td::CandidateOptions candidates;  // ratios 30..70% in 5% steps, Mixed-TD's grouping
};

struct Candidate {
  td::Tau tau;
  double mac_ratio = 1;  // layer MACs under τ / undecomposed layer MACs
  double macs = 0, params = 0;
};

struct LayerChoices {
  std::string layer;
  double macs = 0, params = 0;        // undecomposed
  std::vector<Candidate> candidates;  // "none" is always the last
  std::int32_t none() const { return static_cast<std::int32_t>(candidates.size()) - 1; }
};

class SearchSpace {
 public:
  // The decomposable conv layers of base.network (shapes inferred) and their
  // candidates under `options`.
  SearchSpace(const arch::Design& base, const SpaceOptions& options);

  const arch::Design& base() const { return base_; }
  const SpaceOptions& options() const { return options_; }
  const std::vector<LayerChoices>& layers() const { return layers_; }
  std::size_t size() const { return layers_.size(); }
  double log10_size() const;  // log10 of the number of genomes

  // Keeps, per layer, the candidates whose `keep[layer][k]` is true ("none"
  // always stays). Genomes of the old space are not valid in the new one.
  void restrict(const std::vector<std::vector<bool>>& keep);

  Genome undecomposed() const;
  Taus taus(const Genome& g) const;
  // base with every layer's τ as g says and ψ = 1 for every stage.
  arch::Design design(const Genome& g) const;
  double macs(const Genome& g) const;         // whole network, per image
  double params(const Genome& g) const;       // whole network
  double weight_bits(const Genome& g) const;  // params at the design's weight width
  // "3.0.12.7": the indices; the key of every cache and of candidates.csv.
  static std::string key(const Genome& g);
  // key() read back; throws naming the text when it does not fit the space.
  Genome parse_key(const std::string& text) const;
  // "layer1.0.conv1=svd-filter g1=1 g2=4 r=8; layer2.0.conv2=cpd r=12" (decomposed layers only).
  std::string describe(const Genome& g) const;
  // Throws mixtd::Error when g has the wrong length or an index out of range.
  void check(const Genome& g) const;

 private:
  arch::Design base_;
  SpaceOptions options_;
  std::vector<LayerChoices> layers_;
  double fixed_macs_ = 0, fixed_params_ = 0;  // layers outside the genome
};

// Mixed-TD's prior on one layer's candidates: per-layer MAC ratios fall
// into 0.05-wide bins; a bin weighs N(centre; mean, sigma) and its weight is
// split evenly over the candidates in it ("none" is the bin at ratio 1).
struct PriorOptions {
  double mac_ratio = 0.5;  // mean
  double sigma = 0.15;
  double bin = 0.05;
};

class Prior {
 public:
  Prior(const SearchSpace& space, const PriorOptions& options);
  std::int32_t sample_layer(std::size_t layer, Rng& rng) const;
  Genome sample(Rng& rng) const;
  const std::vector<double>& weights(std::size_t layer) const { return weights_[layer]; }

 private:
  std::vector<std::vector<double>> weights_;  // per layer, per candidate; sum 1
};

// Each layer resampled from the prior with probability `rate` (0.2 in the paper).
Genome mutate(const Genome& parent, const Prior& prior, double rate, Rng& rng);
// Each layer from a or b with probability 1/2.
Genome crossover(const Genome& a, const Genome& b, Rng& rng);

}  // namespace mixtd::search
