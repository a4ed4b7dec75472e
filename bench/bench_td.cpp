// Decomposition speeds, single core:
//   build-td/bench/bench_td
//
//   BM_Sgemm            this machine's single-core SGEMM (2048³, same BLAS) — the yardstick
//   BM_CpAlsSweep/r     one CP-ALS sweep of a 512x512x3x3 tensor (ResNet-18's 512-channel
//                       3x3 conv) at rank r; time per sweep, GFLOP/s of its GEMM work
//                       and that as a percentage of BM_Sgemm
//   BM_SvdOption/t/g1/g2  the SVDs of every chunk of that layer for one (reshape, g1, g2)
//                       option (t: 0 = svd-filter, 1 = svd-spatial)
//
// OpenBLAS is forced to one thread before the first BLAS call, so the
// numbers compare like with like whatever the machine's core count.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <armadillo>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/td/Decompose.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace td = mixtd::td;

// openblas_set_num_threads, looked up at run time: the BLAS is only linked
// indirectly (through Armadillo), and another BLAS simply lacks the symbol.
void force_single_thread_blas() {
  using SetThreads = void (*)(int);
  if (auto* f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// C = A·B, n x n x n, through Armadillo's sgemm call (the path CP-ALS uses).
double sgemm_seconds(std::int64_t n, int reps) {
  arma::arma_rng::set_seed(1);
  const arma::fmat a(n, n, arma::fill::randn), b(n, n, arma::fill::randn);
  arma::fmat c = a * b;  // warm-up: pages, OpenBLAS buffers
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    c = a * b;
    best = std::min(best, seconds_since(t0));
  }
  benchmark::DoNotOptimize(c.memptr());
  return best;
}

// Measured once per process, for the CP benchmarks' "% of SGEMM".
double sgemm_gflops() {
  static const double g = 2.0 * 2048.0 * 2048.0 * 2048.0 / sgemm_seconds(2048, 3) * 1e-9;
  return g;
}

void BM_Sgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  arma::arma_rng::set_seed(1);
  const arma::fmat a(n, n, arma::fill::randn), b(n, n, arma::fill::randn);
  arma::fmat c = a * b;
  for (auto _ : state) {
    c = a * b;
    benchmark::DoNotOptimize(c.memptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Sgemm)->Arg(2048)->Unit(benchmark::kMillisecond);

// ResNet-18's 512 -> 512 3x3 conv (layer4), seeded Kaiming weights.
const mixtd::net::Layer& resnet18_layer4_conv() {
  static const mixtd::net::Layer layer = [] {
    mixtd::net::Network net;
    net.input_shape = {512, 7, 7};
    mixtd::net::Layer l;
    l.name = "layer4.conv";
    l.kind = mixtd::net::LayerKind::Conv2d;
    l.inputs = {net.input_name};
    l.conv.out_channels = 512;
    l.conv.kh = l.conv.kw = 3;
    l.conv.ph = l.conv.pw = 1;
    net.add(l);
    net.infer_shapes();
    mixtd::net::init_random_weights(net, 1);
    return net.layers.at(0);
  }();
  return layer;
}

// The useful flops of one sweep on dims (I0..I3) at rank r:
//   gemm   the two MTTKRP GEMMs, 2 x 2·P·r (P = I0·I1·I2·I3)
//   other  Grams Σ I_k·r², Cholesky 4·r³/3, triangular solves Σ 2·I_k·r²
struct SweepFlops {
  double gemm = 0, other = 0;
};
SweepFlops sweep_flops(const std::array<std::int64_t, 4>& d, double r) {
  const double p = static_cast<double>(d[0] * d[1] * d[2] * d[3]);
  double dims = 0;
  for (auto i : d) dims += static_cast<double>(i);
  return {4.0 * p * r, dims * r * r + 4.0 * r * r * r / 3.0 + 2.0 * dims * r * r};
}

// Time per sweep = (time of 1 + S sweeps - time of 1 sweep) / S: the
// initialisation (SVDs of the unfoldings) and the final exact error cancel.
void BM_CpAlsSweep(benchmark::State& state) {
  const std::int64_t r = state.range(0);
  constexpr int kSweeps = 3;
  const auto& w = resnet18_layer4_conv().weight;
  const std::array<std::int64_t, 4> dims{512, 512, 3, 3};
  const td::CpdOptions one{.max_sweeps = 1, .tolerance = 0.0};
  const td::CpdOptions more{.max_sweeps = 1 + kSweeps, .tolerance = 0.0};
  double error = 0.0, setup = 0.0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    benchmark::DoNotOptimize(td::cp_als(w, dims, r, one));
    const double t_one = seconds_since(t0);
    t0 = Clock::now();
    const td::CpdResult res = td::cp_als(w, dims, r, more);
    const double t_more = seconds_since(t0);
    const double per_sweep = (t_more - t_one) / kSweeps;
    state.SetIterationTime(per_sweep);
    setup = t_one - per_sweep;
    error = res.relative_error;
  }
  const SweepFlops f = sweep_flops(dims, static_cast<double>(r));
  using C = benchmark::Counter;
  state.counters["gemm_GFLOP/s"] = C(f.gemm * 1e-9, C::kIsIterationInvariantRate);
  state.counters["all_GFLOP/s"] = C((f.gemm + f.other) * 1e-9, C::kIsIterationInvariantRate);
  state.counters["gemm_GFLOP/sweep"] = f.gemm * 1e-9;
  state.counters["setup_s"] = setup;
  state.counters["rel_error_4sweeps"] = error;
  state.counters["sgemm_GFLOP/s"] = sgemm_gflops();
}
BENCHMARK(BM_CpAlsSweep)
    ->ArgName("r")
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// All chunk SVDs of one option (a fresh Decomposer, so nothing is cached;
// rank 1 so that forming the stages costs nothing).
void BM_SvdOption(benchmark::State& state) {
  const td::TdType type = state.range(0) == 0 ? td::TdType::SvdFilter : td::TdType::SvdSpatial;
  const td::Tau tau{type, state.range(1), state.range(2), 1};
  std::int64_t svds = 0;
  for (auto _ : state) {
    td::Decomposer dec(resnet18_layer4_conv());
    benchmark::DoNotOptimize(dec.decompose(tau));
    svds = dec.svds_computed();
  }
  state.counters["chunks"] = static_cast<double>(svds);
  state.SetLabel(tau.str());
}

void svd_options(benchmark::internal::Benchmark* b) {
  b->ArgNames({"spatial", "g1", "g2"});
  for (std::int64_t g = 1; g <= 512; g *= 2) b->Args({0, 1, g});
  for (std::int64_t g = 2; g <= 512; g *= 2) b->Args({0, g, 1});
  b->Args({1, 1, 1});
}
BENCHMARK(BM_SvdOption)->Apply(svd_options)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  force_single_thread_blas();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
