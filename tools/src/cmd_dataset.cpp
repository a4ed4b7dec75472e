// mixtd dataset generate — labelled designs for the predictor: random τ,
// ψ from the solver, each design simulated in SystemC (one child process
// per design), one CSV row per design. Resumable: rerun the same command.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "CliChecks.h"
#include "Commands.h"
#include "MpiRun.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/search/Dataset.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

std::string seconds(double s) {
  if (s < 120) return fixed(s, 1) + " s";
  if (s < 7200) return fixed(s / 60, 1) + " min";
  return fixed(s / 3600, 1) + " h";
}

// A bar with ETA on a terminal, a plain line per batch otherwise.
void show(const search::Progress& p, std::int64_t started_at, bool tty) {
  const std::int64_t fresh = p.done - started_at, left = p.total - p.done;
  const double eta = fresh > 0 ? p.elapsed_s / static_cast<double>(fresh) * static_cast<double>(left) : 0;
  const std::string counts = std::to_string(p.done) + "/" + std::to_string(p.total) + " designs" +
                             (p.failed ? " (" + std::to_string(p.failed) + " failed)" : "") + ", " +
                             seconds(p.elapsed_s) + (fresh > 0 && left > 0 ? ", ETA " + seconds(eta) : "");
  if (tty) {
    constexpr int kWidth = 30;
    const int filled = p.total > 0 ? static_cast<int>(kWidth * p.done / p.total) : kWidth;
    std::fprintf(stderr, "\r[%s%s] %s   ", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), counts.c_str());
    if (p.done == p.total) std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "%s\n", counts.c_str());
  }
  std::fflush(stderr);
}

}  // namespace

Run add_dataset(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("dataset", "Labelled designs for the predictor: random τ, solved ψ, SystemC-simulated");
  cmd->require_subcommand(1);
  auto* gen = cmd->add_subcommand("generate", "Sample, solve and simulate designs; append one CSV row per design");
  struct Args {
    std::string network, device, out;
    search::DatasetOptions o;
    double budget = -1;
    bool mpi = false;
  };
  auto a = std::make_shared<Args>();
  gen->add_option("--network", a->network, "a zoo name (see `mixtd zoo`), a .yaml description or an .onnx model")
      ->required();
  gen->add_option("--device", a->device, "device (configs/devices: u250, zcu102, zc706)")->required();
  gen->add_option("-n", a->o.designs, "rows wanted in the file (a rerun continues up to this)")
      ->required()
      ->check(in_range(std::int64_t{0}, std::int64_t{10000000}));
  gen->add_option("-o,--output", a->out, "the CSV (created, or resumed if it exists)")->required();
  gen->add_option("--jobs,-j", a->o.jobs, "simulations at once (0 = one per core)")
      ->capture_default_str()
      ->check(in_range(0, 256));
  gen->add_option("--seed", a->o.seed, "design i is drawn from (seed, i)")->capture_default_str();
  gen->add_option("--frames", a->o.frames, "frames per simulation (interval = the last two)")
      ->capture_default_str()
      ->check(in_range(2, 100));
  gen->add_option("--budget", a->budget, "device fraction for the solver (default: 0.9)")->check(device_fraction());
  gen->add_option("--mac-ratio", a->o.sampler.mac_ratio, "mean of the per-design target MAC ratio")
      ->capture_default_str()
      ->check(in_range(0.05, 1.0));
  gen->add_option("--mac-sigma", a->o.sampler.mac_sigma, "spread of the per-design target MAC ratio")
      ->capture_default_str()
      ->check(in_range(0.0, 1.0));
  gen->add_option("--undecomposed", a->o.sampler.undecomposed, "probability that a layer stays undecomposed")
      ->capture_default_str()
      ->check(in_range(0.0, 1.0));
  gen->add_option("--timeout", a->o.timeout_s, "seconds per simulation before it counts as failed")
      ->capture_default_str()
      ->check(in_range(0.001, 86400.0 * 7));
  add_mpi_flag(gen, a->mpi);
  gen->footer(
      "Per design: a target MAC ratio is drawn from N(mac-ratio, mac-sigma); each decomposable layer\n"
      "stays undecomposed with probability --undecomposed, else takes a τ (all groupings up to 8\n"
      "chunks) near that ratio; `mixtd solve` picks ψ (batch-1 latency, FIFOs sized); the design is\n"
      "simulated in its own process. A row holds the design's features (per layer t, g1, g2, r;\n"
      "totals; the analytical estimates) and the simulated interval, latency and FPS, or the reason\n"
      "it failed. Kill it at any time and rerun the same command: it continues where it stopped,\n"
      "without losing or duplicating rows (docs/predictor.md).\n\n"
      "Examples:\n  mixtd dataset generate --network resnet18 --device u250 -n 400 -o r18-u250.csv --seed 1\n"
      "  mpirun -n 5 mixtd dataset generate --network resnet18 --device u250 -n 400 -o r18-u250.csv --seed 1 --mpi\n"
      "      (the same file, simulated by 4 worker ranks; docs/scale.md)");
  return [a] {
    MpiRun mpi(a->mpi, "dataset generate");
    if (mpi.worker()) return mpi.serve();
    check_output_file(a->out, "--output");
    arch::Design base =
        arch::make_design(net::load_network(a->network, false), a->network, arch::load_device(a->device), a->device);
    if (a->budget > 0) {  // (-1 unless given)
      base.budget = a->budget;
    }
    const bool tty = ::isatty(2) != 0;
    std::int64_t started_at = -1;
    const std::int64_t written =
        search::generate_dataset(base, a->network, a->device, a->out, a->o, [&](const search::Progress& p) {
          if (started_at < 0) {
            started_at = p.done;
            if (p.done > 0) std::fprintf(stderr, "%s: resuming at row %lld\n", a->out.c_str(), (long long)p.done);
          }
          show(p, started_at, tty);
        });
    std::cout << "wrote " << written << " row(s) to " << a->out << "\n";
    return 0;
  };
}

}  // namespace mixtd::cli
