// mixtd::nn speeds: the accuracy oracle's one-batch query and building a
// decomposed network for a new τ with factors cached (issue 7's goals:
// ≤ 150 ms and ≤ 20 ms on one core). LibTorch runs on one thread here.
//
//   build/bench_nn --benchmark_filter=Query
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include "mixtd/net/Onnx.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Model.h"
#include "mixtd/support/Process.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Candidates.h"

namespace {

using namespace mixtd;

net::Network network() {
  const std::filesystem::path shipped =
      std::filesystem::path(__FILE__).parent_path().parent_path() / "configs/networks/resnet18-fmnist-w0.25.onnx";
  if (std::filesystem::exists(shipped)) return net::load_onnx(shipped);
  return net::build_zoo("resnet18-fmnist:width=0.25", true);
}

nn::Dataset search_set() {
  if (std::filesystem::exists(std::filesystem::path(nn::kFmnistDir) / "train-images-idx3-ubyte.gz"))
    return nn::load_fmnist().search;
  nn::Dataset d;
  Rng rng(0);
  for (int i = 0; i < 512; ++i) {
    for (int k = 0; k < 28 * 28; ++k) d.images.push_back(static_cast<float>(rng.normal()));
    d.labels.push_back(i % 10);
  }
  return d;
}

// The aggressive τ set of docs/accuracy.md (configs/designs/fmnist-aggressive.yaml) at rank multiplier `k` (so that
// each iteration can ask for a τ not built before).
nn::Taus taus(const net::Network& n, std::int64_t k) {
  nn::Taus t;
  for (const auto& l : n.layers)
    if (td::is_decomposable(l)) {
      const std::int64_t N = l.conv.out_channels;
      t[l.name] = l.name < "layer3" ? td::Tau{td::TdType::SvdSpatial, 1, 1, N / 2 - k}
                                    : td::Tau{td::TdType::SvdFilter, 1, 2, N / 4 - k};
    }
  return t;
}

struct Fixture {
  net::Network net = network();
  // No prefix cache: every iteration does a query's whole work (the τ repeat).
  nn::AccuracyOracle oracle{net, search_set(), {128, 16, true, 0}};
  Fixture() {
    nn::set_threads(1);
    for (std::int64_t k = 0; k < 4; ++k) oracle.cache().decompose(taus(net, k));  // SVDs computed once
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_BuildDecomposed(benchmark::State& state) {
  auto& f = fixture();
  std::int64_t k = 0;
  for (auto _ : state) {
    const auto d = f.oracle.cache().decompose(taus(f.net, k++ % 4));
    nn::Model m(f.net, &d);
    benchmark::DoNotOptimize(m.parameter_count());
  }
}
BENCHMARK(BM_BuildDecomposed)->Unit(benchmark::kMillisecond);

void BM_Quantize(benchmark::State& state) {
  auto& f = fixture();
  std::int64_t k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f.oracle.quantize(taus(f.net, k++ % 4)).layers.size());
}
BENCHMARK(BM_Quantize)->Unit(benchmark::kMillisecond);

void BM_Forward128(benchmark::State& state) {
  auto& f = fixture();
  const bool quant = state.range(0) != 0;
  const auto t = taus(f.net, 0);
  const auto d = f.oracle.cache().decompose(t);
  const auto q = f.oracle.quantize(t);
  nn::Model m(f.net, &d, quant ? &q : nullptr);
  const auto x = f.oracle.search().batch(0, 128);
  for (auto _ : state) benchmark::DoNotOptimize(m.predict(x));
}
BENCHMARK(BM_Forward128)->ArgName("bfp8")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The whole one-batch query: decompose (cached), calibrate, build, run 128 images.
void BM_Query(benchmark::State& state) {
  auto& f = fixture();
  std::int64_t k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f.oracle.query(taus(f.net, k++ % 4), 0));
}
BENCHMARK(BM_Query)->Unit(benchmark::kMillisecond);

// The same on the τ a search asks for: each layer's τ drawn (seeded) from
// td::layer_candidates, whose ranks are nudged to many divisors. Ranks such
// as BM_Query's N/2 − 3 fall off oneDNN's blocked kernels and cost more.
std::vector<nn::Taus> candidate_taus(const net::Network& n, int type) {
  Rng rng(7);
  std::vector<nn::Taus> out(8);
  for (auto& t : out)
    for (const auto& l : n.layers) {
      std::vector<td::Tau> c;
      for (const auto& tau : td::layer_candidates(l))
        if (tau.decomposed() && (type < 0 || static_cast<int>(tau.type) == type)) c.push_back(tau);
      if (!c.empty()) t[l.name] = c[rng.below(c.size())];
    }
  return out;
}

// Arg: the td::TdType drawn from (−1: every type).
void BM_QueryCandidateTaus(benchmark::State& state) {
  auto& f = fixture();
  const auto genomes = candidate_taus(f.net, static_cast<int>(state.range(0)));
  for (const auto& t : genomes) f.oracle.cache().decompose(t);  // factors (SVD, CP-ALS) computed once
  std::size_t k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(f.oracle.query(genomes[k++ % genomes.size()], 0));
}
BENCHMARK(BM_QueryCandidateTaus)
    ->ArgName("type")
    ->Arg(-1)
    ->Arg(static_cast<int>(td::TdType::SvdFilter))
    ->Arg(static_cast<int>(td::TdType::SvdSpatial))
    ->Arg(static_cast<int>(td::TdType::Cpd))
    ->Unit(benchmark::kMillisecond);

// The pre-filter's queries (up to six SVD candidates of each layer alone, in
// layer order) with the prefix cache off (0) and on (1): a one-layer change
// reruns only the network from that layer's block on. One iteration is the
// whole sweep from an empty cache, so the figure does not depend on how many
// iterations run; `per_query` (seconds) divides it by the sweep's queries.
void BM_PrefilterQueries(benchmark::State& state) {
  auto& f = fixture();
  nn::OracleOptions o{128, 16, true, state.range(0) ? 1024 : 0};
  static std::unique_ptr<nn::AccuracyOracle> oracles[2];  // one per setting: the SVDs are computed once
  auto& oracle = oracles[state.range(0)];
  if (!oracle) oracle = std::make_unique<nn::AccuracyOracle>(f.net, f.oracle.search(), o);
  std::vector<nn::Taus> genomes;
  for (const auto& l : f.net.layers) {
    const auto c = td::layer_candidates(l);
    for (std::size_t k = 0; k + 1 < c.size() && k < 6; ++k)
      if (c[k].type != td::TdType::Cpd) genomes.push_back({{l.name, c[k]}});
  }
  for (const auto& t : genomes) oracle->cache().decompose(t);
  for (auto _ : state) {
    state.PauseTiming();
    oracle->prefix_cache().clear();
    state.ResumeTiming();
    for (const auto& t : genomes) benchmark::DoNotOptimize(oracle->query(t, 0));
  }
  state.counters["queries"] = static_cast<double>(genomes.size());
  state.counters["per_query"] =
      benchmark::Counter(static_cast<double>(genomes.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);  // seconds
}
BENCHMARK(BM_PrefilterQueries)->ArgName("cache")->Arg(0)->Arg(1)->Unit(benchmark::kSecond);

// The fine-tune's cost (the search's finalists and its answer, `mixtd
// finetune`): one epoch of the short fine-tune over 512 images (4 steps of
// 128: forward with BFP8 fake-quant, the teacher's forward for the
// distillation, backward, Adam), on the aggressive τ (arg 0) and on
// configs/designs/fmnist-cpd's CPD layers (arg 1). `images/s` is what a
// fine-tune of N images costs: N / images/s seconds, one thread.
void BM_FinetuneEpoch512(benchmark::State& state) {
  auto& f = fixture();
  nn::Taus t = taus(f.net, 0);
  if (state.range(0))
    for (auto& [name, tau] : t)
      if (name < "layer4") tau = td::Tau{td::TdType::Cpd, 1, 1, f.net.find(name)->conv.out_channels / 2};
  f.oracle.cache().decompose(t);
  nn::Dataset train = f.oracle.search().subset([] {
    std::vector<std::int64_t> idx(512);
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>(i);
    return idx;
  }());
  nn::Model teacher = f.oracle.teacher();
  nn::ShortFinetune ft;
  ft.threads = 1;
  for (auto _ : state) {
    state.PauseTiming();
    nn::Model m = f.oracle.build(t);
    state.ResumeTiming();
    benchmark::DoNotOptimize(nn::short_finetune(m, teacher, train, ft).last_loss);
  }
  state.counters["images/s"] =
      benchmark::Counter(512.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FinetuneEpoch512)->ArgName("cpd")->Arg(0)->Arg(1)->Unit(benchmark::kSecond);

// One 128-image query of the ImageNet ResNet-18 at 224x224 on one core
// (issue 21; the paper's queries ran on a GPU): calibration on 16 images and
// the batch, undecomposed (0) and with every 3x3 conv but the stem an SVD at
// a quarter of its filters (1), BFP8, no prefix cache. Seeded weights and
// images: the time does not depend on the values.
void BM_Resnet18Query224(benchmark::State& state) {
  nn::set_threads(1);
  static const net::Network net = [] {
    net::Network n = net::build_zoo("resnet18", true);
    n.fold_batchnorm();
    return n;
  }();
  nn::Dataset d;
  d.c = 3;
  d.h = d.w = 224;
  Rng rng(1);
  for (int i = 0; i < 144; ++i) {
    for (int k = 0; k < 3 * 224 * 224; ++k) d.images.push_back(static_cast<float>(rng.normal()));
    d.labels.push_back(i % 1000);
  }
  nn::AccuracyOracle oracle(net, d, {128, 16, true, 0});
  nn::Taus t;
  if (state.range(0))
    for (const auto& l : net.layers)
      if (td::is_decomposable(l) && l.conv.kh == 3 && l.name != "conv1")
        t[l.name] = td::Tau{td::TdType::SvdFilter, 1, 1, l.conv.out_channels / 4};
  oracle.cache().decompose(t);  // the SVDs are computed once per τ in a search, not per query
  for (auto _ : state) benchmark::DoNotOptimize(oracle.query(t, 0));
  state.counters["images/s"] =
      benchmark::Counter(128.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Resnet18Query224)->ArgName("svd")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

int main(int argc, char** argv) {
  mixtd::keep_freed_memory();  // as mixtd does: no page faults from re-allocating each forward's tensors
  // The kernels mixtd runs (MIXTD_NATIVE_KERNELS=1: the CPU's own, for the
  // speed cost of pinning them; docs/search.md, "Same seed, same answer").
  benchmark::AddCustomContext("cpu_kernels", mixtd::pin_cpu_kernels());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
