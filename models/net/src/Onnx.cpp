// Placeholder until the ONNX importer lands (same issue).
#include "mixtd/net/Onnx.h"

#include "mixtd/support/Error.h"

namespace mixtd::net {
Network load_onnx(const std::filesystem::path& path) {
  throw Error("ONNX import not built yet: " + path.string());
}
void save_onnx(const Network&, const std::filesystem::path& path) {
  throw Error("ONNX export not built yet: " + path.string());
}
}  // namespace mixtd::net
