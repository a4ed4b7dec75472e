// Which step of an accuracy query moves with the CPU's kernels (docs/search.md,
// "Same seed, same answer"). For seeded τ on the shipped network, a hash of
// each step's values: td's factors (OpenBLAS), the same after BFP8 rounding,
// the statistics-corrected factors (the float network, oneDNN), those after
// BFP8 rounding, the calibration maxima, the BFP8 network's logits on the
// 1,024-image evaluation set, and the search's fitness and top-1 bit for bit.
// Run it under another CPU's choices (OPENBLAS_CORETYPE=SkylakeX,
// ONEDNN_MAX_CPU_ISA=AVX2, ATEN_CPU_CAPABILITY=default; with
// MIXTD_NATIVE_KERNELS=1, or mixtd pins them) and diff the outputs.
//   probe_kernels [designs]        (default 4; needs Fashion-MNIST)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "mixtd/net/Onnx.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Model.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/support/Process.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Candidates.h"

namespace {

using namespace mixtd;

struct Hash {  // FNV-1a over the values' bytes
  std::uint64_t v = 1469598103934665603ull;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) v = (v ^ b[i]) * 1099511628211ull;
  }
};

std::uint64_t hash_factors(const numerics::Decompositions& d) {
  Hash h;
  for (const auto& [name, l] : d) {
    for (const auto& c : l.chunks)
      for (const auto& s : c.stages) h.add(s.weight.data(), s.weight.size() * sizeof(float));
    h.add(l.bias.data(), l.bias.size() * sizeof(float));
  }
  return h.v;
}

// The factors' BFP8 mantissas and per-row exponents (as the Model rounds them).
std::uint64_t hash_bfp8(const numerics::Decompositions& d) {
  Hash h;
  for (const auto& [name, l] : d)
    for (const auto& c : l.chunks)
      for (const auto& s : c.stages) {
        const std::size_t rows = static_cast<std::size_t>(s.shape.out_ch), per = s.weight.size() / rows;
        for (std::size_t r = 0; r < rows; ++r) {
          double amax = 0;
          for (std::size_t k = 0; k < per; ++k) amax = std::max(amax, double{std::fabs(s.weight[r * per + k])});
          const int e = numerics::block_exponent(amax);
          h.add(&e, sizeof e);
          for (std::size_t k = 0; k < per; ++k) {
            const float m = std::floor(s.weight[r * per + k] / std::ldexp(1.0f, e) + 0.5f);
            h.add(&m, sizeof m);
          }
        }
      }
  return h.v;
}

std::uint64_t hash_tensor(const numerics::FloatTensor& t) {
  Hash h;
  h.add(t.data.data(), t.data.size() * sizeof(float));
  return h.v;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  std::printf("kernels: %s\n", pin_cpu_kernels().c_str());
  const int designs = argc > 1 ? std::atoi(argv[1]) : 4;
  const net::Network n = net::load_onnx(std::string(MIXTD_SOURCE_DIR) + "/configs/networks/resnet18-fmnist-w0.25.onnx");
  const nn::Dataset search = nn::load_fmnist().search;
  nn::OracleOptions o;  // the search's defaults
  o.batch = 1024;
  o.fitness = nn::Fitness::Teacher;
  o.correction = nn::StatsCorrection::Scale;
  nn::AccuracyOracle oracle(n, search, o);
  const auto eval = search.batch(0, o.batch);
  const auto calib = search.batch(search.size() - o.calibration, o.calibration);
  std::printf("teacher logits %016llx\n", static_cast<unsigned long long>(hash_tensor(oracle.teacher().forward(eval))));
  Rng rng(3);
  for (int g = 0; g < designs; ++g) {
    nn::Taus t;
    for (const auto& l : n.layers) {
      const auto c = td::layer_candidates(l);
      if (c.size() > 1 && rng.uniform() < 0.5) t[l.name] = c[rng.below(c.size())];
    }
    const auto raw = oracle.cache().decompose(t);
    const auto corrected = oracle.decompose(t);
    Hash stats;
    for (const auto& [key, amax] : nn::Model(n, &corrected).calibration_stats(calib)) stats.add(&amax, sizeof amax);
    const auto q = nn::quantize(n, corrected, calib);
    const auto logits = nn::Model(n, &corrected, &q).forward(eval);
    const auto s = oracle.score(t, 0);
    std::printf(
        "design %d (%zu layers decomposed): factors %016llx bfp8 %016llx corrected %016llx bfp8 %016llx "
        "maxima %016llx logits %016llx fitness %.10f top-1 %.0f/%lld\n",
        g, t.size(), static_cast<unsigned long long>(hash_factors(raw)),
        static_cast<unsigned long long>(hash_bfp8(raw)), static_cast<unsigned long long>(hash_factors(corrected)),
        static_cast<unsigned long long>(hash_bfp8(corrected)), static_cast<unsigned long long>(stats.v),
        static_cast<unsigned long long>(hash_tensor(logits)), s.fitness, s.top1 * static_cast<double>(o.batch),
        static_cast<long long>(o.batch));
    std::fflush(stdout);
  }
  return 0;
}
