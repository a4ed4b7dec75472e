// Network IR speeds: building zoo nets, shape inference, YAML parsing.
//   build/bench/bench_net
#include <benchmark/benchmark.h>

#include "mixtd/net/Counts.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/net/Zoo.h"

namespace {

void BM_BuildZooShapeOnly(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(mixtd::net::build_zoo("resnet18"));
}
BENCHMARK(BM_BuildZooShapeOnly);

void BM_InferShapesAndCount(benchmark::State& state) {
  auto net = mixtd::net::build_zoo("resnet18");
  for (auto _ : state) {
    net.infer_shapes();
    benchmark::DoNotOptimize(mixtd::net::counts(net));
  }
}
BENCHMARK(BM_InferShapesAndCount);

void BM_ParseYaml(benchmark::State& state) {
  const std::string text = mixtd::net::to_yaml(mixtd::net::build_zoo("resnet18"));
  for (auto _ : state) benchmark::DoNotOptimize(mixtd::net::parse_yaml(text, "resnet18.yaml", ".", false));
}
BENCHMARK(BM_ParseYaml);

void BM_RandomWeightsResNet18(benchmark::State& state) {
  auto net = mixtd::net::build_zoo("resnet18");
  for (auto _ : state) mixtd::net::init_random_weights(net, 0);
  state.SetItemsProcessed(state.iterations() * mixtd::net::counts(net).params);
}
BENCHMARK(BM_RandomWeightsResNet18)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
