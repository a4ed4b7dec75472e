// search::read_dataset on a predictor data set CSV (it takes a path).
#include "FuzzInput.h"
#include "mixtd/search/Dataset.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = mixtd::fuzz::write_input(data, size, "fuzz.csv");
  try {
    (void)mixtd::search::read_dataset(path);
  } catch (const mixtd::Error&) {
  }
  return 0;
}

// libsystemc (pulled in by mixtd::predictor through the simulator) wants an
// sc_main; libFuzzer's main runs instead and never calls it.
extern "C" int sc_main(int, char**) { return 0; }
