// The fidelity oracle: how closely a decomposed network's logits follow the
// undecomposed network's on seeded inputs. It is the search's accuracy proxy
// for networks without data (the zoo's ImageNet ResNet-18 carries seeded
// weights, and no ImageNet is shipped): a τ that keeps the logits keeps the
// predictions. It is a proxy, not top-1 (docs/search.md says what it can and
// cannot tell).
//
// Inputs are standard normal per element (what a normalised image looks like
// to the first layer, to first order), drawn from (seed, batch index): batch i
// is the same for every τ, so queries on one batch are comparable. The
// reference logits are the float network's, computed once per batch.
//
//   e     = ‖z_τ − z‖ / ‖z‖        relative logit error over the batch
//   score = 1 / (1 + e²)            1 when τ changes nothing, → 0 as e grows
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "mixtd/net/Network.h"
#include "mixtd/nn/Model.h"
#include "mixtd/numerics/Tensor.h"

namespace mixtd::nn {

struct FidelityOptions {
  std::int64_t batch = 16;       // seeded inputs per query
  std::uint64_t seed = 0;        // the inputs derive from it
  bool quantize = false;         // BFP8 fake-quant of the decomposed network (float by default:
                                 // the quantisation error barely depends on τ and costs a calibration per query)
  std::int64_t calibration = 4;  // seeded inputs calibrating the BFP8 exponents (with quantize)
  std::int64_t prefix_cache_mb = 1024;  // PrefixCache (0: off; answers unchanged)
};

struct FidelityMeasure {
  double score = 0;           // 1 / (1 + e²)
  double relative_error = 0;  // e
  double cosine = 0;          // cosine of the logit vectors over the batch
  double top1_agreement = 0;  // fraction of inputs whose arg-max is unchanged
};

class FidelityOracle {
 public:
  // `net` needs weights. Throws mixtd::Error on bad options.
  explicit FidelityOracle(net::Network net, FidelityOptions options = {});
  ~FidelityOracle();

  double query(const Taus& taus, std::int64_t index = 0) { return measure(taus, index).score; }
  FidelityMeasure measure(const Taus& taus, std::int64_t index = 0);
  // Distinct batch indices (inputs are generated, so as many as anyone asks).
  static constexpr std::int64_t kBatches = std::int64_t{1} << 20;
  const FidelityOptions& options() const { return options_; }
  // Batch `index`'s inputs [batch, C, H, W].
  numerics::FloatTensor inputs(std::int64_t index, std::int64_t count) const;

 private:
  const numerics::FloatTensor& reference(std::int64_t index);

  DecompositionCache cache_;
  FidelityOptions options_;
  std::unique_ptr<Model> float_model_;
  std::map<std::int64_t, numerics::FloatTensor> reference_;  // logits per batch index (bounded)
  numerics::FloatTensor calib_;
  std::int64_t last_index_ = -2;  // the batch whose inputs last_inputs_ holds
  numerics::FloatTensor last_inputs_;
  PrefixCache prefix_;
};

}  // namespace mixtd::nn
