// Simulator speed (issue #5 goals): a whole solver-allocated decomposed
// ResNet-18 frame on the U250 in timing-only mode (goal ≤ 10 s wall on one
// core) and a resnet18-fmnist:width=0.25 frame on the ZC706 with data,
// checked against the golden executor (goal ≤ 2 s). Each iteration runs one
// simulation in a child process (sim::simulate_isolated: SystemC elaborates
// once per process). Reported: the simulation's own wall time (the
// benchmark time), the whole child's wall time including graph build and
// elaboration (`command_s`), simulated cycles per second and beats moved per
// second. Run: build/bench/bench_sim
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "mixtd/arch/Design.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/search/Solver.h"
#include "mixtd/sim/Simulate.h"

// libsystemc.so defines main() and calls sc_main(); BENCHMARK_MAIN's main()
// takes precedence, and sim::simulate() starts SystemC itself.
extern "C" int sc_main(int, char**) { return 0; }

namespace {

namespace arch = mixtd::arch;
namespace sim = mixtd::sim;

arch::Design solved(arch::Design d) { return mixtd::search::solve(d).design; }

void run(benchmark::State& state, const arch::Design& d, bool functional) {
  sim::SimOptions o;
  o.frames = 1;
  o.functional = functional;
  sim::SimResult r;
  double command = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    r = sim::simulate_isolated(d, o, 600);
    command = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.completed) {
      state.SkipWithError(r.error.c_str());
      return;
    }
    if (functional && !r.outputs_match) {
      state.SkipWithError(("outputs differ from the golden executor: " + r.mismatch).c_str());
      return;
    }
    state.SetIterationTime(r.wall_seconds);
  }
  state.counters["command_s"] = command;
  state.counters["cycles"] = static_cast<double>(r.cycles);
  state.counters["cycles_per_s"] = static_cast<double>(r.cycles) / r.wall_seconds;
  state.counters["beats_per_s"] = static_cast<double>(r.beats) / r.wall_seconds;
}

void BM_SimulateResnet18SvdU250TimingOnly(benchmark::State& state) {
  static const arch::Design d = solved(arch::load_design(MIXTD_SOURCE_DIR "/configs/designs/resnet18-u250-svd.yaml"));
  run(state, d, false);
}

void BM_SimulateResnet18FmnistZc706Functional(benchmark::State& state) {
  static const arch::Design d =
      solved(arch::make_design(mixtd::net::build_zoo("resnet18-fmnist:width=0.25"), "resnet18-fmnist:width=0.25",
                               arch::load_device("zc706"), "zc706"));
  run(state, d, true);
}

BENCHMARK(BM_SimulateResnet18SvdU250TimingOnly)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SimulateResnet18FmnistZc706Functional)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
