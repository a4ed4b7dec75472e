// mixtd simulate — run a design.yaml's SystemC pipeline: timing, per-module
// statistics and the bottleneck; with --functional also the outputs against
// the integer golden executor.
#include <iostream>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

std::string pct(double a, double b) {
  if (b == 0) return "-";
  const double d = 100.0 * (a - b) / b;
  return (d >= 0 ? "+" : "") + fixed(d, 2) + "%";
}

void print_result(const sim::SimResult& r, std::ostream& out, bool all_modules) {
  out << "design " << r.design << ": " << r.frames << " frame(s), " << (r.functional ? "functional" : "timing only")
      << ", " << fixed(r.clock_mhz, 0) << " MHz\n";
  if (!r.completed) {
    out << "\n" << r.error << "\n";
    for (const auto& b : r.blocked) out << "  " << b << "\n";
  }
  if (!r.latency.empty()) {
    Table t;
    t.add_column("", Table::Align::Left);
    t.add_column("simulated");
    t.add_column("analytical");
    t.add_column("difference");
    t.add_row({"latency, batch 1 (cycles)", with_commas(r.latency.front()), with_commas(r.analytical_latency),
               pct(static_cast<double>(r.analytical_latency), static_cast<double>(r.latency.front()))});
    if (r.interval > 0)
      t.add_row({"interval (cycles)", with_commas(r.interval), with_commas(r.analytical_interval),
                 pct(static_cast<double>(r.analytical_interval), static_cast<double>(r.interval))});
    const double fa1 = r.clock_mhz * 1e6 / static_cast<double>(r.analytical_latency);
    const double fap = r.clock_mhz * 1e6 / static_cast<double>(r.analytical_interval);
    t.add_row({"FPS, batch 1", fixed(r.fps_batch1(), 1), fixed(fa1, 1), pct(fa1, r.fps_batch1())});
    if (r.interval > 0) t.add_row({"FPS, peak", fixed(r.fps_peak(), 1), fixed(fap, 1), pct(fap, r.fps_peak())});
    out << "\n";
    t.print(out);
    if (r.latency.size() > 1) {
      out << "per-frame latency (cycles):";
      for (auto l : r.latency) out << " " << with_commas(l);
      out << "\n";
    }
  }
  out << "weight preload: " << with_commas(r.preload_cycles) << " cycles (before the first frame)\n";

  Table m;
  for (const char* c : {"module", "kind"}) m.add_column(c, Table::Align::Left);
  for (const char* c : {"x", "busy", "stall in", "stall out", "idle", "busy %", "analytical/frame"}) m.add_column(c);
  std::int64_t shown = 0;
  for (const auto& s : r.modules) {
    const double busy = r.cycles > 0 ? 100.0 * static_cast<double>(s.busy) / static_cast<double>(r.cycles) : 0;
    if (!all_modules && s.kind != "stage" && s.name != r.bottleneck && busy < 50) continue;
    ++shown;
    m.add_row({s.name + (s.name == r.bottleneck ? " *" : ""), s.kind, std::to_string(s.count), with_commas(s.busy),
               with_commas(s.stall_in), with_commas(s.stall_out), with_commas(s.idle), fixed(busy, 1),
               with_commas(s.analytical_interval)});
  }
  out << "\nper module (the busiest instance; cycles over " << with_commas(r.cycles) << " simulated, * = bottleneck";
  out << (all_modules ? ")\n" : "; stages and busy blocks, --all-modules for every one)\n");
  m.print(out);

  Table f;
  f.add_column("stream", Table::Align::Left);
  for (const char* c : {"x", "width", "depth", "high water"}) f.add_column(c);
  bool any = false;
  for (const auto& s : r.fifos) {
    if (!all_modules && !s.skip && s.high_water < s.depth) continue;
    any = true;
    f.add_row({s.name + (s.skip ? " (skip)" : ""), std::to_string(s.count), std::to_string(s.width),
               std::to_string(s.depth), std::to_string(s.high_water)});
  }
  if (any) {
    out << "\nFIFOs that filled up, and skip FIFOs:\n";
    f.print(out);
  }
  out << "\nbottleneck: " << r.bottleneck << "\n";
  if (r.functional && r.completed)
    out << (r.outputs_match
                ? "outputs: identical to the integer golden executor (all " + std::to_string(r.frames) + " frames)\n"
                : "outputs: MISMATCH against the golden executor at " + r.mismatch + "\n");
  if (r.functional && r.completed) out << top1_summary("SystemC", r.top1, r.golden_top1, r.labels);
  out << "simulator: " << fixed(r.wall_seconds, 2) << " s wall, "
      << with_commas(static_cast<std::int64_t>(static_cast<double>(r.cycles) / std::max(1e-9, r.wall_seconds)))
      << " cycles/s, "
      << with_commas(static_cast<std::int64_t>(static_cast<double>(r.beats) / std::max(1e-9, r.wall_seconds)))
      << " beats/s\n";
}

}  // namespace

Run add_simulate(CLI::App& app) {
  auto* cmd = app.add_subcommand("simulate", "Cycle-approximate SystemC simulation of a design.yaml");
  struct Args {
    std::string design, trace;
    sim::SimOptions o;
    bool timing_only = false, json = false, all = false;
    DataOptions data;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN", a->design, "a design.yaml (written by `mixtd solve`)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--frames,-B", a->o.frames, "frames to stream through (interval = the last two)")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, sim::kMaxFrames));
  auto* fun = cmd->add_flag("--functional", a->o.functional,
                            "carry int8 data and compare the outputs with the integer golden executor");
  cmd->add_flag("--timing-only", a->timing_only, "move beats without data (the default; fastest)")->excludes(fun);
  cmd->add_option("--trace", a->trace, "write a VCD of every stream's occupancy/valid/ready (small designs)");
  cmd->add_option("--cycle-limit", a->o.cycle_limit,
                  "stop after this many cycles (default: 50x the analytical latency)")
      ->check(in_range(std::int64_t{1}, sim::kMaxCycles));
  cmd->add_option("--stall", a->o.stall_probability, "random host-side gaps and back-pressure, per beat (0..1)")
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--seed", a->o.seed, "input frames, calibration and stalls")->capture_default_str();
  add_data_options(cmd, a->data, true);
  cmd->add_flag("--all-modules", a->all, "list every module and stream, not only stages and busy ones");
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->footer(
      "Every module of the design is a SystemC block (models/sc) with the timing rules of the\n"
      "analytical model plus what only a simulation sees: back-pressure, FIFO depths, fill and\n"
      "drain, regrouping and skip buffering. Latency = first word in to last word out; interval\n"
      "= cycles between the last two frames. A deadlock is reported with the blocked FIFOs and\n"
      "exits with status 1.\n\n"
      "Examples:\n  mixtd solve resnet18-fmnist --device zc706 -o fm.yaml && mixtd simulate fm.yaml --functional\n"
      "  mixtd simulate r18.yaml --frames 1 --json > r18-sim.json\n"
      "  mixtd solve configs/networks/resnet18-fmnist-w0.25.onnx --device zc706 -o trained.yaml\n"
      "  mixtd simulate trained.yaml --functional --dataset fmnist --frames 20   # its test images");
  return [a] {
    // SystemC writes the trace to TRACE, with .vcd added unless it ends so.
    if (!a->trace.empty()) check_output_file(a->trace.ends_with(".vcd") ? a->trace : a->trace + ".vcd", "--trace");
    a->o.trace_path = a->trace;
    const arch::Design d = arch::load_design(a->design);
    if (!a->data.data.spec.empty()) {
      require(a->o.functional, "--dataset needs --functional (a timing-only run carries no data)");
      a->o.data = load_data(a->data, d.network, a->o.frames);
    }
    // A long run says how far it got every few seconds (stderr; stdout stays the result).
    a->o.progress = [frames = a->o.frames](std::int64_t done, std::int64_t cycle) {
      std::cerr << "simulate: " << with_commas(done) << " of " << with_commas(frames) << " frames out, cycle "
                << with_commas(cycle) << std::endl;
    };
    const sim::SimResult r = sim::simulate(d, a->o);
    if (a->json)
      std::cout << sim::to_json(r).dump(2) << '\n';
    else
      print_result(r, std::cout, a->all);
    if (!r.completed) {
      // The listing above shows what was blocked; the last line says why it stopped.
      std::cout.flush();
      std::cerr << "mixtd: error: simulate: " << r.error << '\n';
      return 1;
    }
    if (r.functional && !r.outputs_match) return 1;
    return 0;
  };
}

}  // namespace mixtd::cli
