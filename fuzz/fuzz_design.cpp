// arch::parse_design on a design.yaml. Relative network paths resolve
// against configs/designs, as for the shipped designs.
#include "FuzzInput.h"
#include "mixtd/arch/Design.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)mixtd::arch::parse_design(mixtd::fuzz::as_text(data, size), "fuzz.yaml", MIXTD_FUZZ_DESIGNS_DIR);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
