// arch::parse_device on a device .yaml (configs/devices).
#include "FuzzInput.h"
#include "mixtd/arch/Device.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)mixtd::arch::parse_device(mixtd::fuzz::as_text(data, size), "fuzz.yaml");
  } catch (const mixtd::Error&) {
  }
  return 0;
}
