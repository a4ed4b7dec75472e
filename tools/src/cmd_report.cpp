// mixtd report — the analytical model's figures for a given design.yaml.
#include <iostream>

#include "Commands.h"
#include "DesignReport.h"
#include "mixtd/arch/Analytical.h"

namespace mixtd::cli {

Run add_report(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Analytical performance and resources of a design.yaml");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("DESIGN", *path, "a design.yaml (written by `mixtd solve`)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", *json, "machine-readable output");
  cmd->footer(
      "Per layer: τ, ψ per stage as p_in/p_out/fine, the slowest module's cycles per frame, and\n"
      "resources over all its modules (and their input FIFOs). Interval = the slowest module;\n"
      "latency(B) = fill + B * interval; FPS(batch 1) = f / latency(1), peak = f / interval.\n\n"
      "Example:\n  mixtd solve resnet18 --device u250 -o r18.yaml && mixtd report r18.yaml");
  return [=] {
    const arch::Design d = arch::load_design(*path);
    const arch::Report r = arch::analyse(d);
    if (*json)
      std::cout << design_report_json(d, r).dump(2) << '\n';
    else
      print_design_report(d, r, std::cout);
    return 0;
  };
}

}  // namespace mixtd::cli
