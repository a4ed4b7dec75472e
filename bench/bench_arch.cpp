// The analytical model's cost: arch::analyse() on a whole network and the
// row-level timeline (arch::row_timeline) it uses for latency and FIFO
// sizing. Run: build/bench/bench_arch
#include <benchmark/benchmark.h>

#include <string>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"
#include "mixtd/arch/RowTimeline.h"
#include "mixtd/net/Zoo.h"

namespace {

namespace arch = mixtd::arch;

arch::Design design_of(const std::string& net, const std::string& device) {
  return arch::make_design(mixtd::net::build_zoo(net), net, arch::load_device(device), device);
}

void BM_Analyse(benchmark::State& state, const std::string& net, const std::string& device) {
  const arch::Design d = design_of(net, device);
  for (auto _ : state) benchmark::DoNotOptimize(arch::analyse(d).interval);
}

void BM_RowTimeline(benchmark::State& state, const std::string& net, const std::string& device) {
  const arch::Design d = design_of(net, device);
  const arch::Graph g = arch::build_graph(d);
  const int frames = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(arch::row_timeline(g, frames).latency);
}

BENCHMARK_CAPTURE(BM_Analyse, resnet18_u250, "resnet18", "u250")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RowTimeline, resnet18_u250, "resnet18", "u250")->Arg(1)->Arg(3)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RowTimeline, fmnist_zc706, "resnet18-fmnist:width=0.25", "zc706")
    ->Arg(1)
    ->Arg(3)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
