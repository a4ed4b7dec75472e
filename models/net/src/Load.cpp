#include "mixtd/net/Load.h"

#include <filesystem>

#include "mixtd/net/Onnx.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

namespace mixtd::net {

Network load_network(const std::string& spec, bool with_weights) {
  const std::filesystem::path p(spec);
  const std::string ext = p.extension().string();
  if (ext == ".yaml" || ext == ".yml") return load_yaml(p, with_weights);
  if (ext == ".onnx") {
    Network net = load_onnx(p);
    if (!with_weights) net.clear_weights();
    return net;
  }
  if (is_zoo_spec(spec)) return build_zoo(spec, with_weights);
  std::error_code ec;  // a name too long for the file system: not a file, so the zoo's message
  if (std::filesystem::exists(p, ec))
    throw Error("'" + spec + "': unknown network file type '" + ext + "' (expected .yaml, .yml or .onnx)");
  return build_zoo(spec, with_weights);  // throws, listing the zoo
}

}  // namespace mixtd::net
