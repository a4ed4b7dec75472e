// mixtd solve — choose the unroll factors ψ of every stage for a network or
// design (τ kept) under a device budget; write design.yaml.
#include <filesystem>
#include <iostream>

#include "CliChecks.h"
#include "Commands.h"
#include "DesignReport.h"
#include "Table.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/net/Load.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

Run add_solve(CLI::App& app) {
  auto* cmd = app.add_subcommand("solve", "Choose the unroll factors of every stage under a device budget");
  struct Args {
    std::string input, device, objective = "latency", output = "design.yaml", method = "balance";
    double budget = -1;
    std::uint64_t seed = 0;
    std::int64_t moves = 20000;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("NET|DESIGN", a->input, "zoo name, network .yaml/.onnx (all layers undecomposed), or a design.yaml")
      ->required();
  cmd->add_option("--device", a->device, "device name (configs/devices) or .yaml; required for a network");
  cmd->add_option("--objective", a->objective, "latency (batch-1 FPS) or throughput (peak FPS)")
      ->capture_default_str()
      ->check(CLI::IsMember({"latency", "throughput"}));
  cmd->add_option("--budget", a->budget, "fraction of the device to use (default: the design's, else 0.9)")
      ->check(device_fraction());
  cmd->add_option("--method", a->method, "balance (fast default) or anneal (slow reference)")
      ->capture_default_str()
      ->check(CLI::IsMember({"balance", "anneal"}));
  cmd->add_option("--seed", a->seed, "anneal: seed")->capture_default_str();
  cmd->add_option("--moves", a->moves, "anneal: moves")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("-o,--output", a->output, "design.yaml to write (atomically)")->capture_default_str();
  cmd->add_flag("--json", a->json, "print the report as JSON");
  cmd->footer(
      "A design.yaml given as input keeps its τ (decompositions) and device; --device overrides.\n"
      "For batch-1 latency the default solver runs five starts (docs/solver.md); the report ends\n"
      "with each one's latency, evaluations and time, and which was kept.\n\n"
      "Examples:\n  mixtd solve resnet18 --device u250 -o r18.yaml\n"
      "  mixtd solve r18.yaml --objective throughput --budget 0.5 -o r18-half.yaml");
  return [a] {
    check_output_file(a->output, "--output");
    const std::filesystem::path in(a->input);
    const bool is_design =
        (in.extension() == ".yaml" || in.extension() == ".yml") && std::filesystem::exists(in) && [&] {
          // A design names a network and a device; a network description has layers.
          const std::string text = read_file(in);
          return text.find("\ndevice:") != std::string::npos || text.rfind("device:", 0) == 0;
        }();
    arch::Design d;
    if (is_design) {
      d = arch::load_design(in);
      if (!a->device.empty()) {
        d.device_spec = a->device;
        d.device = arch::load_device(a->device);
        d.clock_mhz = d.device.clock_mhz;
      }
    } else {
      require(
          !a->device.empty(), "--device is required when solving a network (e.g. --device u250; known: " + [] {
            std::string s;
            for (const auto& n : arch::device_names()) s += (s.empty() ? "" : ", ") + n;
            return s;
          }() + ")");
      d = arch::make_design(net::load_network(a->input, false), a->input, arch::load_device(a->device), a->device);
    }
    search::SolverOptions o;
    o.objective = a->objective == "latency" ? search::Objective::Latency : search::Objective::Throughput;
    o.budget = a->budget;  // (-1 unless given: the design's own)
    search::SolveResult res;
    if (a->method == "balance") {
      res = search::solve(d, o);
    } else {
      search::AnnealOptions an;
      an.seed = a->seed;
      an.moves = a->moves;
      res = search::anneal(d, o, an);
    }
    arch::save_design(res.design, a->output);
    if (a->json) {
      auto j = design_report_json(res.design, res.report);
      j["solver"] = {
          {"method", a->method}, {"evaluations", res.evaluations}, {"seconds", res.seconds}, {"output", a->output}};
      auto starts = nlohmann::json::array();
      for (const search::SolveStart& st : res.starts) {
        starts.push_back({{"name", st.name},
                          {"latency_cycles", st.latency_cycles},
                          {"evaluations", st.evaluations},
                          {"row_updates", st.row_updates},
                          {"seconds", st.seconds},
                          {"kept", st.kept}});
      }
      if (!res.starts.empty()) j["solver"]["starts"] = starts;
      std::cout << j.dump(2) << '\n';
      return 0;
    }
    print_design_report(res.design, res.report, std::cout);
    std::cout << "solver " << a->method << ": " << res.evaluations << " evaluations in " << fixed(res.seconds * 1e3, 1)
              << " ms; wrote " << a->output << '\n';
    if (!res.starts.empty()) {
      // Where the time goes and which start won (docs/solver.md).
      Table t;
      t.add_column("start", Table::Align::Left);
      for (const char* c : {"latency (cycles)", "evaluations", "row updates", "ms"}) t.add_column(c);
      t.add_column("", Table::Align::Left);
      for (const search::SolveStart& st : res.starts) {
        t.add_row({st.name, st.latency_cycles > 0 ? with_commas(st.latency_cycles) : "(does not fit)",
                   with_commas(st.evaluations), with_commas(st.row_updates), fixed(st.seconds * 1e3, 1),
                   st.kept ? "<- kept" : ""});
      }
      std::cout << "\nsolver starts (batch-1 latency at the full budget):\n";
      t.print(std::cout);
    }
    return 0;
  };
}

}  // namespace mixtd::cli
