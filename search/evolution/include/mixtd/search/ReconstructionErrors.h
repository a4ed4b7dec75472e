// How far a τ moves a layer's weights: ‖W − Ŵ‖_F / ‖W‖_F, the quantity the
// analytic allocation (--strategy alds, docs/search.md) minimises the
// largest of. The search asks it through this interface so its tests can
// give a synthetic one; `mixtd search` gives DecomposerErrors.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "mixtd/net/Network.h"
#include "mixtd/td/Decompose.h"
#include "mixtd/td/Tau.h"

namespace mixtd::search {

class ReconstructionErrors {
 public:
  virtual ~ReconstructionErrors() = default;
  // Deterministic (the search keeps the values in its checkpoint); 0 for τ none.
  virtual double relative_error(const std::string& layer, const td::Tau& tau) = 0;
};

// td::Decomposer::relative_error on a network with weights: one Decomposer
// per layer, kept, so every rank of a (reshape, g1, g2) truncates one SVD
// and CP-ALS runs once per (g1, g2, rank). Same CP-ALS options as the
// accuracy oracle's decompositions (td's defaults).
class DecomposerErrors : public ReconstructionErrors {
 public:
  // `net` must outlive this and carry weights for every layer asked about.
  explicit DecomposerErrors(const net::Network& net);
  ~DecomposerErrors() override;
  double relative_error(const std::string& layer, const td::Tau& tau) override;

 private:
  const net::Network& net_;
  std::map<std::string, std::unique_ptr<td::Decomposer>> decomposers_;
};

}  // namespace mixtd::search
