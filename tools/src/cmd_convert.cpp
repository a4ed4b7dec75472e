// mixtd convert — between zoo specs, YAML descriptions and ONNX models.
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

Run add_convert(CLI::App& app) {
  auto* cmd = app.add_subcommand("convert", "Write a network as YAML (+ .weights) or ONNX");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto no_weights = std::make_shared<bool>(false);
  cmd->add_option("NET", *in, "zoo name, .yaml or .onnx")->required();
  cmd->add_option("-o,--output", *out, "output file: .yaml/.yml (weights go beside it as .weights) or .onnx")
      ->required();
  cmd->add_flag("--no-weights", *no_weights, "YAML only: write the description without weights");
  cmd->footer(
      "Examples:\n  mixtd convert resnet18-fmnist:width=0.25 -o r18.yaml\n  mixtd convert r18.yaml -o r18.onnx");
  return [=] {
    const std::filesystem::path o(*out);
    const std::string ext = o.extension().string();
    require(ext == ".yaml" || ext == ".yml" || ext == ".onnx",
            "--output '" + *out + "': unknown extension '" + ext + "' (legal: .yaml, .yml, .onnx)");
    require(!(ext == ".onnx" && *no_weights), "--no-weights applies to YAML output only (ONNX carries weights)");
    check_output_file(o, "--output");
    net::Network n = net::load_network(*in, /*with_weights=*/!*no_weights);
    if (ext == ".onnx")
      net::save_onnx(n, o);
    else
      net::save_yaml(n, o);
    std::cout << "wrote " << o.string();
    if (ext != ".onnx" && n.has_weights())
      std::cout << " and " << std::filesystem::path(o).replace_extension(".weights").string();
    std::cout << '\n';
    return 0;
  };
}

}  // namespace mixtd::cli
