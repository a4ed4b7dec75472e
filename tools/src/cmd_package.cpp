// mixtd package — a design's U250 deployment folder (hls/Package.h,
// docs/deploy.md): the RTL kernel, its packaging Tcl and kernel.xml, the
// HLS data movers, the link config, a Makefile, the XRT host program, and
// frames with the golden outputs to check the card against.
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "DataOptions.h"
#include "mixtd/arch/Design.h"
#include "mixtd/hls/Package.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

Run add_package(CLI::App& app) {
  auto* cmd = app.add_subcommand("package",
                                 "The U250 deployment folder of a design: Vitis RTL kernel, data movers, "
                                 "link config, Makefile, XRT host program");
  struct Args {
    std::string design, out;
    hls::PackageOptions o;
    DataOptions data;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN", a->design, "a design.yaml (written by `mixtd solve` or `mixtd search`)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a->out, "folder to write (replaced as a whole once complete)")->required();
  cmd->add_option("--platform", a->o.platform, "the Vitis platform of the U250 shell")->capture_default_str();
  cmd->add_option("--kernel-mhz", a->o.kernel_mhz, "kernel clock (default: the design's clock_mhz)");
  cmd->add_option("--frames", a->o.frames, "frames in data/ with the golden executor's outputs")->capture_default_str();
  cmd->add_option("--seed", a->o.seed, "calibration and frames seed (as gen-rtl and cosim)")->capture_default_str();
  add_data_options(cmd, a->data, true);
  cmd->footer(
      "Then, on a machine with Vitis 2022.1/2022.2, XRT and a U250: `make xclbin host run` in the folder\n"
      "(DIR/README.md says what is in it, and what could and could not be checked here).\n\n"
      "Examples:\n"
      "  mixtd solve configs/networks/resnet18-fmnist-w0.25.onnx --device zc706 -o fm.yaml\n"
      "  mixtd package fm.yaml -o fm-u250 --dataset fmnist --frames 100\n"
      "  mixtd package fm.yaml -o fm-u250 --kernel-mhz 250");
  return [a] {
    check_output_dir(a->out, "--output");
    const arch::Design d = arch::load_design(a->design);
    if (!a->data.data.spec.empty()) a->o.data = load_data(a->data, d.network, a->o.frames);
    hls::write_package(d, a->o, a->out);
    std::cout << "wrote " << a->out << ": the RTL kernel, kernel.xml, package_kernel.tcl, gen_xo.tcl, hls/, "
              << "link.cfg, Makefile, host/, include/kernel_config.h, " << a->o.frames << " frames in data/\n"
              << "next, on a machine with Vitis and a U250: cd " << a->out << " && make xclbin host run\n";
    return 0;
  };
}

}  // namespace mixtd::cli
