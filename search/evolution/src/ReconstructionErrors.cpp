#include "mixtd/search/ReconstructionErrors.h"

#include "mixtd/support/Error.h"

namespace mixtd::search {

DecomposerErrors::DecomposerErrors(const net::Network& net) : net_(net) {}

DecomposerErrors::~DecomposerErrors() = default;

double DecomposerErrors::relative_error(const std::string& layer, const td::Tau& tau) {
  if (!tau.decomposed()) return 0.0;
  auto& d = decomposers_[layer];
  if (!d) {
    const net::Layer* l = net_.find(layer);
    require(l != nullptr, "reconstruction errors: network '" + net_.name + "' has no layer '" + layer + "'");
    d = std::make_unique<td::Decomposer>(*l);
  }
  return d->relative_error(tau);
}

}  // namespace mixtd::search
