// mixtd gen-rtl — a design.yaml's SystemVerilog: the top level wiring the
// blocks of rtl/lib as the SystemC pipeline does, the weight and
// requantiser memory images, and a file list for Verilator or synthesis.
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

Run add_gen_rtl(CLI::App& app) {
  auto* cmd = app.add_subcommand("gen-rtl", "SystemVerilog of a design.yaml: top level, memory images, file list");
  struct Args {
    std::string design, out;
    std::uint64_t seed = 1;
    DataOptions data;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN", a->design, "a design.yaml (written by `mixtd solve`)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a->out, "directory to write (created)")->required();
  cmd->add_option("--seed", a->seed, "calibration seed of the BFP8 network (as `mixtd simulate --seed`)")
      ->capture_default_str();
  add_data_options(cmd, a->data, false);
  cmd->footer(
      "Writes DIR/mixtd_top.sv (ports clk, rst_n, in_*/out_* valid-ready streams), DIR/lib/*.sv\n"
      "(the block library), DIR/mem/*.hex (weights and requantisers, $readmemh; paths relative\n"
      "to DIR, so simulate or synthesise from DIR) and DIR/files.f. The same design and seed\n"
      "give the same bytes. A design the library cannot build is refused before anything is\n"
      "written.\n\n"
      "Examples:\n  mixtd gen-rtl fm.yaml -o fm-rtl\n"
      "  mixtd gen-rtl trained.yaml --dataset fmnist -o trained-rtl   # exponents from its data\n"
      "  cd fm-rtl && verilator --lint-only -Wall -f files.f --top-module mixtd_top\n"
      "  cd fm-rtl && yosys -p 'read_verilog -sv lib/*.sv mixtd_top.sv; synth_xilinx -family xcup -top mixtd_top'");
  return [a] {
    check_output_dir(a->out, "--output");
    const arch::Design d = arch::load_design(a->design);
    const rtl::GeneratedRtl g = rtl::generate(d, a->seed, load_data(a->data, d.network, 0).calibration);
    rtl::write(g, a->out);
    std::int64_t bytes = 0, images = 0;
    for (const auto& f : g.files) {
      bytes += static_cast<std::int64_t>(f.text.size());
      images += f.path.rfind("mem/", 0) == 0;
    }
    std::cout << "wrote " << g.files.size() << " files (" << with_commas(bytes) << " bytes) to " << a->out << ": "
              << g.top << ".sv with " << g.instances << " block instances, " << images << " memory images\n"
              << "top: in " << g.in_width << " words/beat (" << with_commas(g.in_words) << " per frame), out "
              << g.out_width << " words/beat (" << with_commas(g.out_words) << " per frame)\n";
    return 0;
  };
}

}  // namespace mixtd::cli
