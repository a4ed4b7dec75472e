// net::load_onnx on a file (it takes a path).
#include "FuzzInput.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = mixtd::fuzz::write_input(data, size, "fuzz.onnx");
  try {
    (void)mixtd::net::load_onnx(path);
  } catch (const mixtd::Error&) {
  }
  return 0;
}
