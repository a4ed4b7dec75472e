// mixtd — map compressed CNNs onto dataflow FPGA accelerators.
#include <iostream>
#include <map>
#include <string>

#include "CliChecks.h"
#include "Commands.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Process.h"

// libsystemc.so (linked for `mixtd simulate`) defines its own main(), which
// would call sc_main(); this executable's main() takes precedence, and
// SystemC is started by sim::simulate() instead. sc_main must still exist
// for the library to link.
extern "C" int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  mixtd::keep_freed_memory();
  // Before anything computes: the same seed, the same answer on any CPU
  // with AVX2 (docs/search.md). --version names what was pinned.
  const std::string kernels = mixtd::pin_cpu_kernels();
  CLI::App app{
      "mixtd: layer-specific tensor decomposition (SVD/CPD) of CNNs mapped onto dataflow\n"
      "FPGA accelerators, modelled analytically, in SystemC and in RTL.\n\n"
      "A network (NET) is a zoo name (see `mixtd zoo`), a .yaml description or an .onnx model.\n"
      "Run `mixtd SUBCOMMAND --help` for each subcommand's options.",
      "mixtd"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "mixtd 0.1.0 (kernels: " + kernels + ")");

  std::map<CLI::App*, mixtd::cli::Run> runs;
  auto reg = [&](mixtd::cli::Run (*add)(CLI::App&)) {
    const std::size_t before = app.get_subcommands({}).size();
    mixtd::cli::Run r = add(app);
    runs[app.get_subcommands({}).at(before)] = std::move(r);
  };
  reg(mixtd::cli::add_info);
  reg(mixtd::cli::add_zoo);
  reg(mixtd::cli::add_convert);
  reg(mixtd::cli::add_candidates);
  reg(mixtd::cli::add_decompose);
  reg(mixtd::cli::add_report);
  reg(mixtd::cli::add_solve);
  reg(mixtd::cli::add_train);
  reg(mixtd::cli::add_accuracy);
  reg(mixtd::cli::add_finetune);
  reg(mixtd::cli::add_simulate);
  reg(mixtd::cli::add_gen_rtl);
  reg(mixtd::cli::add_cosim);
  reg(mixtd::cli::add_package);
  reg(mixtd::cli::add_resources);
  reg(mixtd::cli::add_dataset);
  reg(mixtd::cli::add_predictor);
  reg(mixtd::cli::add_search);
  reg(mixtd::cli::add_fitness_study);
  reg(mixtd::cli::add_flow);
  mixtd::cli::refuse_non_finite(app);
  mixtd::cli::refuse_negative_unsigned(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print as CLI11 does (exit 0); anything else is a
    // usage error: one line naming the subcommand, the flag and what is legal.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "mixtd: error: " << mixtd::cli::format_parse_error(app, e) << '\n';
    return 2;
  }
  try {
    for (auto& [sub, run] : runs)
      if (sub->parsed()) return run();
  } catch (const mixtd::Error& e) {
    std::cerr << "mixtd: error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mixtd: internal error: " << e.what() << '\n';
    return 3;
  }
  return 0;
}
