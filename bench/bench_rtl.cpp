// Verilator speed of the RTL blocks (issue 8: goal >= 1 M cycles/s per
// engine): one Verilated conv stage / depthwise stage / pool, streaming
// frames in free flow (input always offered, output always taken). One
// benchmark iteration is one clock cycle, so items_per_second = cycles/s.
// The network figure comes from `mixtd cosim` (docs/rtl.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "Vbench_conv3x3.h"
#include "Vbench_dw3x3.h"
#include "Vbench_pool.h"
#include "mixtd/arch/Timing.h"
#include "verilated.h"

namespace {

template <typename Model>
void run(benchmark::State& state, std::int64_t cap, std::int64_t kh, std::int64_t ph, std::int64_t h) {
  if (cap != mixtd::arch::line_buffer_capacity(kh, kh, 1, 1, ph, ph, h, h)) {
    state.SkipWithError("CAP in bench/CMakeLists.txt differs from arch::line_buffer_capacity");
    return;
  }
  auto ctx = std::make_unique<VerilatedContext>();
  Model m(ctx.get());
  m.rst_n = 0;
  for (int i = 0; i < 4; ++i) {
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  }
  m.rst_n = 1;
  std::uint64_t x = 0x0123456789abcdefULL, beats_out = 0;
  for (auto _ : state) {
    m.clk = 0;
    m.in_valid = 1;
    m.in_data = x;
    m.out_ready = 1;
    m.eval();
    if (m.in_ready) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    beats_out += m.out_valid;
    m.clk = 1;
    m.eval();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["beats_out"] = static_cast<double>(beats_out);
}

// 3x3 dense, 32 -> 32 channels, 14x14, p_in = p_out = 4, fine = 3.
void BM_ConvStage3x3(benchmark::State& s) { run<Vbench_conv3x3>(s, 42, 3, 1, 14); }
// 3x3 depthwise, 32 channels, 14x14, p_in = 4, fine = 9.
void BM_DepthwiseStage3x3(benchmark::State& s) { run<Vbench_dw3x3>(s, 42, 3, 1, 14); }
// 3x3 max pool, stride 1, 32 channels, 14x14, p = 4.
void BM_MaxPool3x3(benchmark::State& s) { run<Vbench_pool>(s, 42, 3, 1, 14); }

BENCHMARK(BM_ConvStage3x3)->Iterations(2000000);
BENCHMARK(BM_DepthwiseStage3x3)->Iterations(2000000);
BENCHMARK(BM_MaxPool3x3)->Iterations(2000000);

}  // namespace

BENCHMARK_MAIN();
