// td::load_factors on a file (it takes a path). The corpus holds one-layer
// files (CPD, SVD filter and spatial) cut from tests/td/test_factors.cpp's
// sample, an empty one and a version 2 file carrying activation exponents.
#include "FuzzInput.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Factors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = mixtd::fuzz::write_input(data, size, "fuzz.factors");
  try {
    mixtd::td::ActivationExponents exponents;
    (void)mixtd::td::load_factors(path, &exponents);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
