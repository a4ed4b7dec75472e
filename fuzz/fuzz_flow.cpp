// flow::load_flow on a FLOW.yaml (it takes a path; relative paths in it
// resolve against the scratch folder, so only zoo networks and named
// devices load).
#include "FuzzInput.h"
#include "mixtd/flow/FlowConfig.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = mixtd::fuzz::write_input(data, size, "FLOW.yaml");
  try {
    (void)mixtd::flow::load_flow(path);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
