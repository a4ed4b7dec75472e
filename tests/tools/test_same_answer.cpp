// Same seed, same answer on any CPU (docs/search.md, "Same seed, same
// answer"): OpenBLAS, oneDNN and ATen each pick kernels for the CPU they run
// on, and mixtd pins them (mixtd::pin_cpu_kernels). Other CPUs' choices are
// emulated here through the libraries' own variables; a small search under
// each must write the files the plain run writes, byte for byte. The same
// emulation with MIXTD_NATIVE_KERNELS=1 (each library's own choice) must
// change them, or this test would check nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "RunCli.h"
#include "mixtd/nn/Data.h"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What a search writes that does not hold times (timing.csv, wall.csv,
// final.json and the plots do).
const std::vector<std::string> kAnswerFiles = {"space.csv", "candidates.csv", "generations.csv", "labels.csv",
                                               "summary.json"};

// A first population and one short generation: each query decomposes its
// layers (SVD, CP-ALS), corrects the factors' statistics, calibrates and
// scores against the float teacher, so each kernel choice shows.
fs::path search(const std::string& env, const std::string& name) {
  const fs::path out = fs::temp_directory_path() / ("mixtd_same_answer_" + std::to_string(::getpid())) / name;
  fs::remove_all(out);
  const mixtd::testing_cli::Result r = mixtd::testing_cli::run_with_env(
      env, "search resnet18-fmnist:width=0.25 --weights " + std::string(MIXTD_SOURCE_DIR) +
               "/configs/networks/resnet18-fmnist-w0.25.onnx --device zc706 --target-fps 3600 --oracle analytical "
               "--groups none --layer-drop -1 --eval-images 64 "
               "--generations 2 --population 2 --mutations 2 --crossovers 2 --no-final-verify --no-seeded-start "
               "--finetune-epochs 0 -o " +
               out.string());
  EXPECT_EQ(r.code, 0) << env << "\n" << r.out;
  return out;
}

TEST(SameAnswer, AnotherCpusKernelsGiveTheSameSearch) {
  if (!fs::exists(fs::path(mixtd::nn::kFmnistDir) / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "needs Fashion-MNIST in " << mixtd::nn::kFmnistDir;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "mixtd pins the kernels on CPUs with AVX2 and FMA only";
  const fs::path plain = search("", "plain");
  // An AVX2-only CPU (oneDNN's and ATen's widest AVX2, OpenBLAS's Zen
  // table), one before AVX2 (OpenBLAS's Sandybridge kernels), Intel's
  // AVX-512 CPUs (OpenBLAS's SkylakeX and Cooperlake kernels) where this one
  // can run them.
  std::vector<std::string> others = {"ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=default OPENBLAS_CORETYPE=Zen",
                                     "OPENBLAS_CORETYPE=Sandybridge"};
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq")) {
    others.push_back("OPENBLAS_CORETYPE=SkylakeX");
    if (__builtin_cpu_supports("avx512bf16")) others.push_back("OPENBLAS_CORETYPE=Cooperlake");
  }
  for (std::size_t i = 0; i < others.size(); ++i) {
    const fs::path o = search(others[i], "other" + std::to_string(i));
    for (const auto& f : kAnswerFiles) EXPECT_EQ(read_file(o / f), read_file(plain / f)) << others[i] << ": " << f;
  }
  const fs::path native = search("MIXTD_NATIVE_KERNELS=1 OPENBLAS_CORETYPE=Sandybridge", "native");
  EXPECT_NE(read_file(native / "candidates.csv"), read_file(plain / "candidates.csv"))
      << "the search's figures do not move with the kernels: this test no longer checks the pinning";
  fs::remove_all(plain.parent_path());
}

}  // namespace
