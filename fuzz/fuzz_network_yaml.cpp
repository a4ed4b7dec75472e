// net::parse_yaml on a network description (the .yaml `mixtd convert`
// writes). Its `weights:` sidecar is fuzzed by fuzz_weights, so it is not
// followed here.
#include "FuzzInput.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)mixtd::net::parse_yaml(mixtd::fuzz::as_text(data, size), "fuzz.yaml", mixtd::fuzz::scratch_dir(), false);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
