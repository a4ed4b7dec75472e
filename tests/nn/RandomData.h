// Random images for the nn tests (test_nn, test_fitness).
#pragma once

#include "mixtd/nn/Data.h"
#include "mixtd/support/Rng.h"

namespace mixtd::test_data {

// `count` standard-normal images c×hw×hw drawn from `rng`, labels i mod 10.
inline nn::Dataset random_dataset(int count, std::int64_t c, std::int64_t hw, Rng& rng) {
  nn::Dataset ds;
  ds.c = c;
  ds.h = ds.w = hw;
  for (int i = 0; i < count; ++i) {
    for (std::int64_t k = 0; k < c * hw * hw; ++k) ds.images.push_back(static_cast<float>(rng.normal()));
    ds.labels.push_back(i % 10);
  }
  return ds;
}

}  // namespace mixtd::test_data
