// mixtd cosim — a design.yaml's generated RTL, Verilated (cached by the hash
// of the generated files), fed the frames of `mixtd simulate --functional`:
// outputs against the golden executor word for word, cycles against the
// SystemC model.
#include <iostream>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/rtl/Cosim.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

std::string pct(std::int64_t a, std::int64_t b) {
  if (b == 0) return "-";
  const double d = 100.0 * static_cast<double>(a - b) / static_cast<double>(b);
  return (d >= 0 ? "+" : "") + fixed(d, 2) + "%";
}

void print(const rtl::CosimResult& r, std::ostream& out) {
  out << "design " << r.design << ": " << r.frames << " frame(s), RTL co-simulation\n"
      << "model: " << r.build_dir << (r.built ? " (built in " + fixed(r.build_seconds, 1) + " s)" : " (cached)")
      << "\n\n";
  Table t;
  t.add_column("", Table::Align::Left);
  t.add_column("RTL");
  t.add_column("SystemC");
  t.add_column("difference");
  if (!r.latency.empty()) {
    const std::int64_t sc = r.sc_latency.empty() ? 0 : r.sc_latency.front();
    t.add_row({"latency, batch 1 (cycles)", with_commas(r.latency.front()), r.systemc ? with_commas(sc) : "-",
               r.systemc ? pct(r.latency.front(), sc) : "-"});
  }
  if (r.interval > 0)
    t.add_row({"interval (cycles)", with_commas(r.interval), r.systemc ? with_commas(r.sc_interval) : "-",
               r.systemc ? pct(r.interval, r.sc_interval) : "-"});
  t.print(out);
  out << "\noutputs: "
      << (r.outputs_match ? "identical to the integer golden executor (" + with_commas(r.words) + " words)"
                          : "MISMATCH: " + r.mismatch)
      << "\n";
  if (r.systemc) {
    out << "SystemC outputs: " << (r.sc_outputs_match ? "identical to the golden executor" : "MISMATCH") << "\n";
    out << "streams: " << r.streams_compared << " FIFOs compared word for word with SystemC: "
        << (r.first_bad_stream.empty() ? "all identical" : "MISMATCH at " + r.block_mismatch) << "\n";
    out << "blocks: " << r.blocks_compared << " compared by the cycle of their last output beat; "
        << r.blocks_outside_tolerance << " outside ±1% + 20 cycles; largest difference " << r.worst_block_diff
        << " cycles (" << r.worst_block << ", " << with_commas(r.worst_block_cycles) << " in SystemC)\n";
  }
  out << top1_summary("RTL", r.top1, r.golden_top1, r.labels);
  if (!r.vcd.empty()) out << "VCD around the mismatch: " << r.vcd << "\n";
  out << "Verilator: " << with_commas(r.cycles) << " cycles in " << fixed(r.run_seconds, 2) << " s ("
      << with_commas(static_cast<std::int64_t>(r.cycles_per_second())) << " cycles/s)\n";
}

}  // namespace

Run add_cosim(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("cosim", "Verilator co-simulation of a design's generated RTL against golden and SystemC");
  struct Args {
    std::string design, cache;
    rtl::CosimOptions o;
    bool json = false, no_systemc = false;
    DataOptions data;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN", a->design, "a design.yaml (written by `mixtd solve`)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--frames,-B", a->o.frames, "frames to stream through (interval = the last two)")
      ->capture_default_str()
      ->check(in_range(1, 100000));
  cmd->add_option("--seed", a->o.seed, "calibration, input frames and stalls (as `mixtd simulate`)")
      ->capture_default_str();
  cmd->add_option("--stall", a->o.stall_probability, "random input gaps and output back-pressure, per beat (0..1)")
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--cache", a->cache, "where Verilated models are kept (default ~/.cache/mixtd/cosim)");
  cmd->add_option("--jobs,-j", a->o.build_jobs, "parallel compiles when building the model")
      ->capture_default_str()
      ->check(in_range(1, 256));
  cmd->add_option("--vcd", a->o.vcd, "on a mismatch, write a VCD of the 2,000 cycles before it to this file");
  cmd->add_option("--inject-fault", a->o.fault,
                  "break the RTL on purpose to see the checks catch it: requant-shift (the first stage's shifts + 1)");
  add_data_options(cmd, a->data, true);
  cmd->add_flag("--no-systemc", a->no_systemc, "skip the SystemC run (outputs are still checked against golden)");
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->footer(
      "Generates the design's RTL (as `mixtd gen-rtl`), Verilates it with a driver that plays the\n"
      "host (input beats back to back, results taken at once, or random gaps with --stall),\n"
      "and compares every output word with the integer golden executor, which the SystemC model\n"
      "also matches. The model is cached under a hash of the generated files: a second run of\n"
      "the same design does not rebuild. Exits with status 1 on any mismatch.\n\n"
      "Needs verilator (Debian package 'verilator') and a C++ compiler.\n\n"
      "Examples:\n  mixtd solve resnet18-fmnist:width=0.25 --device zc706 -o fm.yaml && mixtd cosim fm.yaml\n"
      "  mixtd cosim fm.yaml --frames 3 --stall 0.2 --json\n"
      "  mixtd solve configs/networks/resnet18-fmnist-w0.25.onnx --device zc706 -o trained.yaml\n"
      "  mixtd cosim trained.yaml --dataset fmnist --frames 20    # a trained network on its test images\n\n"
      "With --dataset the BFP8 exponents are calibrated on the images `mixtd accuracy --calib`\n"
      "uses and the frames are test images, so the RTL's top-1 can be read next to the labels\n"
      "and next to `mixtd accuracy`'s BFP8 prediction.");
  return [a] {
    if (!a->o.vcd.empty()) check_output_file(a->o.vcd, "--vcd");
    a->o.cache = a->cache;
    a->o.compare_systemc = !a->no_systemc;
    const arch::Design d = arch::load_design(a->design);
    a->o.data = load_data(a->data, d.network, a->o.frames);
    const rtl::CosimResult r = rtl::cosimulate(d, a->o);
    if (a->json)
      std::cout << rtl::to_json(r).dump(2) << '\n';
    else
      print(r, std::cout);
    return r.outputs_match && r.first_bad_stream.empty() ? 0 : 1;
  };
}

}  // namespace mixtd::cli
