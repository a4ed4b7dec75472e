// net::load_weights: a .weights sidecar read into the zoo's `tiny` network
// (the corpus holds tiny's own sidecar and variations of it).
#include "FuzzInput.h"
#include "mixtd/net/WeightsFile.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mixtd::net::Network tiny = mixtd::net::build_zoo("tiny", false);
  const auto path = mixtd::fuzz::write_input(data, size, "fuzz.weights");
  mixtd::net::Network net = tiny;
  try {
    mixtd::net::load_weights(net, path);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
