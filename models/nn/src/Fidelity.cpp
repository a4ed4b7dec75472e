// The fidelity oracle (Fidelity.h). No LibTorch here: Model does the work.
#include "mixtd/nn/Fidelity.h"

#include <cmath>

#include "mixtd/numerics/Quantized.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::nn {

FidelityOracle::FidelityOracle(net::Network net, FidelityOptions options)
    : cache_(std::move(net)), options_(options), prefix_(options.prefix_cache_mb) {
  require(options_.batch >= 1 && options_.batch <= 4096,
          "fidelity batch " + std::to_string(options_.batch) + ": legal 1..4096");
  require(options_.calibration >= 1 && options_.calibration <= 4096,
          "fidelity calibration " + std::to_string(options_.calibration) + ": legal 1..4096");
  float_model_ = std::make_unique<Model>(cache_.network());
  // Calibration inputs come from an index no query uses (-1).
  if (options_.quantize) calib_ = inputs(-1, options_.calibration);
}

FidelityOracle::~FidelityOracle() = default;

numerics::FloatTensor FidelityOracle::inputs(std::int64_t index, std::int64_t count) const {
  const net::Shape s = cache_.network().input_shape;
  numerics::FloatTensor x(count, s);
  std::uint64_t state = options_.seed ^ 0x66696465u;  // "fide"
  splitmix64(state);
  Rng rng(state ^ static_cast<std::uint64_t>(index) * 0x9e3779b97f4a7c15ULL);
  for (auto& v : x.data) v = static_cast<float>(rng.normal());
  return x;
}

const numerics::FloatTensor& FidelityOracle::reference(std::int64_t index) {
  if (auto it = reference_.find(index); it != reference_.end()) return it->second;
  if (reference_.size() >= 64) reference_.erase(reference_.begin());  // bound the memory
  return reference_.emplace(index, float_model_->forward(inputs(index, options_.batch))).first->second;
}

FidelityMeasure FidelityOracle::measure(const Taus& taus, std::int64_t index) {
  require(index >= 0 && index < kBatches,
          "fidelity batch index " + std::to_string(index) + ": legal 0.." + std::to_string(kBatches - 1));
  const numerics::FloatTensor& z = reference(index);
  if (index != last_index_) {
    last_inputs_ = inputs(index, options_.batch);
    last_index_ = index;
  }
  const numerics::FloatTensor y = prefix_.forward(cache_.network(), cache_.decompose(taus), taus, last_inputs_, index,
                                                  options_.quantize ? &calib_ : nullptr);
  double err = 0, ref = 0, dot = 0, yy = 0;
  for (std::size_t i = 0; i < z.data.size(); ++i) {
    const double a = z.data[i], b = y.data[i];
    err += (b - a) * (b - a);
    ref += a * a;
    dot += a * b;
    yy += b * b;
  }
  FidelityMeasure m;
  m.relative_error = ref > 0 ? std::sqrt(err / ref) : (err > 0 ? INFINITY : 0);
  m.score = std::isfinite(m.relative_error) ? 1.0 / (1.0 + m.relative_error * m.relative_error) : 0.0;
  m.cosine = ref > 0 && yy > 0 ? dot / std::sqrt(ref * yy) : 0;
  const auto pz = argmax(z), py = argmax(y);
  std::int64_t same = 0;
  for (std::size_t i = 0; i < pz.size(); ++i) same += pz[i] == py[i];
  m.top1_agreement = pz.empty() ? 0 : static_cast<double>(same) / static_cast<double>(pz.size());
  return m;
}

}  // namespace mixtd::nn
