// mixtd::nn: the Fashion-MNIST loader, LibTorch networks against the float
// reference, decomposed networks, BFP8 fake-quant against the golden executor.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "RandomData.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Fidelity.h"
#include "mixtd/nn/Model.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Candidates.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;

fs::path tmp_dir() {
  const auto d = fs::temp_directory_path() / ("mixtd_nn_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void write_gz(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

// n images of rows x cols (pixel i = i mod 256) and labels i mod 10.
void write_idx(const fs::path& img, const fs::path& lab, std::uint32_t n, std::uint32_t rows, std::uint32_t cols,
               std::uint32_t img_magic = 2051, std::uint32_t lab_magic = 2049) {
  std::vector<std::uint8_t> a, b;
  put32(a, img_magic);
  put32(a, n);
  put32(a, rows);
  put32(a, cols);
  for (std::uint32_t i = 0; i < n * rows * cols; ++i) a.push_back(static_cast<std::uint8_t>(i % 256));
  put32(b, lab_magic);
  put32(b, n);
  for (std::uint32_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(i % 10));
  write_gz(img, a);
  write_gz(lab, b);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Idx, ReadsAndNormalises) {
  const auto d = tmp_dir();
  write_idx(d / "i.gz", d / "l.gz", 3, 4, 5);
  const auto ds = nn::load_idx(d / "i.gz", d / "l.gz");
  EXPECT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.h, 4);
  EXPECT_EQ(ds.w, 5);
  EXPECT_EQ(ds.labels[2], 2);
  EXPECT_NEAR(ds.images[7], (7 / 255.0 - nn::kFmnistMean) / nn::kFmnistStd, 1e-5);
  const auto b = ds.batch(1, 5);
  EXPECT_EQ(b.n, 2);
  EXPECT_EQ(b.data[0], ds.images[20]);
}

TEST(Idx, WrongMagicAndMissingFileAreClearErrors) {
  const auto d = tmp_dir();
  write_idx(d / "bi.gz", d / "bl.gz", 2, 2, 2, 2049, 2049);
  EXPECT_NE(error_of([&] { nn::load_idx(d / "bi.gz", d / "bl.gz"); }).find("wrong magic number 2049"),
            std::string::npos);
  write_idx(d / "ci.gz", d / "cl.gz", 2, 2, 2, 2051, 7);
  EXPECT_NE(error_of([&] { nn::load_idx(d / "ci.gz", d / "cl.gz"); }).find("cl.gz: wrong magic number 7"),
            std::string::npos);
  const auto msg = error_of([&] { nn::load_idx(d / "nope.gz", d / "cl.gz"); });
  EXPECT_NE(msg.find("nope.gz: cannot open"), std::string::npos) << msg;
  // Truncated pixel data.
  std::vector<std::uint8_t> a;
  put32(a, 2051);
  put32(a, 10);
  put32(a, 28);
  put32(a, 28);
  write_gz(d / "ti.gz", a);
  write_idx(d / "x.gz", d / "tl.gz", 10, 1, 1);
  EXPECT_NE(error_of([&] { nn::load_idx(d / "ti.gz", d / "tl.gz"); }).find("truncated"), std::string::npos);
  fs::remove_all(d);
}

TEST(Fmnist, FixedSeededSplit) {
  if (!fs::exists(fs::path(nn::kFmnistDir) / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const auto s = nn::load_fmnist(nn::kFmnistDir, 5000, 0);
  EXPECT_EQ(s.train.size(), 50000);
  EXPECT_EQ(s.search.size(), 5000);
  EXPECT_EQ(s.validation.size(), 5000);
  EXPECT_EQ(s.test.size(), 10000);
  EXPECT_EQ(nn::permutation(100, 3), nn::permutation(100, 3));
  EXPECT_NE(nn::permutation(100, 3), nn::permutation(100, 4));
}

numerics::FloatTensor random_input(const net::Network& n, std::int64_t count, std::uint64_t seed) {
  Rng rng(seed);
  numerics::FloatTensor x(count, n.input_shape);
  for (auto& v : x.data) v = static_cast<float>(rng.normal());
  return x;
}

double max_rel(const numerics::FloatTensor& ref, const numerics::FloatTensor& got) {
  EXPECT_EQ(ref.data.size(), got.data.size());
  double amax = 0, d = 0;
  for (std::size_t i = 0; i < ref.data.size(); ++i) {
    amax = std::max(amax, std::fabs(static_cast<double>(ref.data[i])));
    d = std::max(d, std::fabs(static_cast<double>(ref.data[i]) - got.data[i]));
  }
  return d / std::max(amax, 1e-30);
}

class FloatNets : public ::testing::TestWithParam<const char*> {};

TEST_P(FloatNets, EqualsReferenceExecutor) {
  net::Network n = net::build_zoo(GetParam(), true);
  const auto x = random_input(n, 4, 1);
  nn::Model m(n);
  EXPECT_LT(max_rel(numerics::run_float(n, x), m.forward(x)), 1e-4);
  // to_network gives the same weights back.
  EXPECT_TRUE(m.to_network().same_weights(n));
}

INSTANTIATE_TEST_SUITE_P(Zoo, FloatNets, ::testing::Values("tiny", "tiny-dw", "resnet18-fmnist:width=0.25"));

nn::Taus tiny_taus() {
  using td::TdType;
  return {{"conv2", {TdType::SvdFilter, 2, 2, 3}},
          {"conv3", {TdType::Cpd, 1, 2, 4}},
          {"conv4", {TdType::SvdSpatial, 4, 1, 5}},
          {"conv5", {TdType::None, 1, 1, 0}}};
}

TEST(Decomposed, EqualsReferenceExecutor) {
  net::Network n = net::build_zoo("tiny", true);
  nn::DecompositionCache cache(n);
  const auto d = cache.decompose(tiny_taus());
  EXPECT_EQ(d.size(), 3u);
  const auto x = random_input(n, 4, 2);
  nn::Model m(n, &d);
  EXPECT_LT(max_rel(numerics::run_float(n, x, &d), m.forward(x)), 1e-4);
  // The factors come back unchanged; the dense network is their reconstruction.
  const auto back = m.decompositions();
  EXPECT_EQ(back.at("conv2").chunk(1, 0).stages[1].weight, d.at("conv2").chunk(1, 0).stages[1].weight);
  EXPECT_EQ(m.to_network().find("conv4")->weight, d.at("conv4").reconstruct());
}

TEST(Decomposed, BadTauIsAClearError) {
  net::Network n = net::build_zoo("tiny", true);
  nn::DecompositionCache cache(n);
  EXPECT_NE(error_of([&] {
              cache.decompose({{"nope", {td::TdType::SvdFilter, 1, 1, 2}}});
            }).find("'nope'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              cache.decompose({{"conv2", {td::TdType::SvdFilter, 3, 1, 2}}});
            }).find("conv2"),
            std::string::npos);
}

TEST(Decomposed, NewTauReusesCachedFactors) {
  net::Network n = net::build_zoo("resnet18-fmnist:width=0.25", true);
  nn::DecompositionCache cache(n);
  nn::Taus t;
  for (const auto& l : n.layers)
    if (td::is_decomposable(l)) t[l.name] = {td::TdType::SvdFilter, 1, 2, 4};
  cache.decompose(t);  // computes the SVDs
  for (auto& [k, v] : t) v.rank = 6;
  const auto t0 = std::chrono::steady_clock::now();
  const auto d = cache.decompose(t);
  nn::Model m(n, &d);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ms, 2000.0);  // the speed goal (≤ 20 ms) is measured in bench_nn, not here
}

// Agreement of the fake-quant path and the golden executor.
void expect_matches_golden(const net::Network& n, const numerics::Decompositions& d, const numerics::FloatTensor& x,
                           const numerics::FloatTensor& calib) {
  const auto q = numerics::quantize_network(n, d, calib);
  nn::Model m(n, &d, &q);
  const auto fq = m.forward(x);
  const auto gold = numerics::golden::run_network(q, numerics::quantize_tensor(x, q.input_exp));
  int out_exp = 0;
  for (const auto& l : q.layers)
    if (l.name == q.output) out_exp = l.out_exp;
  const auto g = numerics::dequantize_tensor(gold, out_exp);
  const double step = std::ldexp(1.0, out_exp);
  ASSERT_EQ(g.data.size(), fq.data.size());
  std::int64_t within = 0;
  double worst = 0;
  for (std::size_t i = 0; i < g.data.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(g.data[i]) - fq.data[i]);
    worst = std::max(worst, diff);
    within += diff <= step * 1.0001;
  }
  const auto pg = nn::argmax(g), pf = nn::argmax(fq);
  std::int64_t same = 0;
  for (std::size_t i = 0; i < pg.size(); ++i) same += pg[i] == pf[i];
  EXPECT_GE(static_cast<double>(same), 0.99 * static_cast<double>(pg.size())) << same << " of " << pg.size();
  EXPECT_GE(static_cast<double>(within), 0.99 * static_cast<double>(g.data.size()))
      << "worst " << worst << " step " << step;
}

TEST(FakeQuant, MatchesGoldenTiny) {
  net::Network n = net::build_zoo("tiny", true);
  nn::DecompositionCache cache(n);
  const auto x = random_input(n, 64, 5), calib = random_input(n, 16, 6);
  expect_matches_golden(n, {}, x, calib);
  expect_matches_golden(n, cache.decompose(tiny_taus()), x, calib);
}

TEST(FakeQuant, MatchesGoldenTinyDw) {
  net::Network n = net::build_zoo("tiny-dw", true);
  expect_matches_golden(n, {}, random_input(n, 64, 7), random_input(n, 16, 8));
}

TEST(FakeQuant, MatchesGoldenResnet18Fmnist) {
  const fs::path shipped = fs::path(MIXTD_SOURCE_DIR) / "configs/networks/resnet18-fmnist-w0.25.onnx";
  const bool real = fs::exists(shipped) && fs::exists(fs::path(nn::kFmnistDir) / "t10k-labels-idx1-ubyte.gz");
  net::Network n = real ? net::load_onnx(shipped) : net::build_zoo("resnet18-fmnist:width=0.25", true);
  nn::DecompositionCache cache(n);
  nn::Taus t;
  for (const auto& l : n.layers)
    if (td::is_decomposable(l)) t[l.name] = {td::TdType::SvdFilter, 1, 2, 6};
  if (!real) {
    expect_matches_golden(n, cache.decompose(t), random_input(n, 8, 9), random_input(n, 8, 10));
    return;
  }
  // The shipped network on 24 test images, undecomposed and decomposed.
  const auto split = nn::load_fmnist();
  const auto x = split.test.batch(0, 24), calib = split.search.batch(4984, 16);
  expect_matches_golden(n, {}, x, calib);
  expect_matches_golden(n, cache.decompose(t), x, calib);
}

using mixtd::test_data::random_dataset;

TEST(Oracle, QueryIsATop1Fraction) {
  net::Network n = net::build_zoo("tiny", true);
  Rng rng(1);
  const nn::Dataset ds = random_dataset(300, 3, 16, rng);
  nn::AccuracyOracle o(n, ds, {128, 32, true});
  const double a = o.query(tiny_taus(), 1);
  EXPECT_GE(a, 0.0);
  EXPECT_LE(a, 1.0);
  EXPECT_NE(error_of([&] { o.query({}, 2); }).find("batch index 2"), std::string::npos);
}

// The oracle's calibration runs in LibTorch; its exponents, and so every
// query's top-1, must be the reference executor's, for random τ of every
// type and grouping on the network the search uses.
void expect_same_exponents(const numerics::QNetwork& a, const numerics::QNetwork& b) {
  ASSERT_EQ(a.layers.size(), b.layers.size());
  EXPECT_EQ(a.input_exp, b.input_exp);
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const auto &x = a.layers[i], &y = b.layers[i];
    EXPECT_EQ(x.out_exp, y.out_exp) << x.name;
    EXPECT_EQ(x.partial_exp, y.partial_exp) << x.name;
    ASSERT_EQ(x.chunks.size(), y.chunks.size()) << x.name;
    for (std::size_t c = 0; c < x.chunks.size(); ++c)
      for (std::size_t k = 0; k < x.chunks[c].size(); ++k) {
        EXPECT_EQ(x.chunks[c][k].in_exp, y.chunks[c][k].in_exp) << x.name;
        EXPECT_EQ(x.chunks[c][k].out_exp, y.chunks[c][k].out_exp) << x.name;
      }
  }
}

TEST(Oracle, FastCalibrationGivesTheReferenceExponentsAndTop1) {
  const fs::path shipped = fs::path(MIXTD_SOURCE_DIR) / "configs/networks/resnet18-fmnist-w0.25.onnx";
  net::Network n = fs::exists(shipped) ? net::load_onnx(shipped) : net::build_zoo("resnet18-fmnist:width=0.25", true);
  Rng rng(11);
  const nn::Dataset ds = random_dataset(96, 1, 28, rng);
  nn::AccuracyOracle oracle(n, ds, {64, 16, true});
  const auto calib = ds.batch(ds.size() - 16, 16);
  for (int trial = 0; trial < 6; ++trial) {
    nn::Taus t;
    for (const auto& l : n.layers) {
      const auto cands = td::layer_candidates(l);
      if (cands.size() > 1) t[l.name] = cands[rng.below(cands.size())];
    }
    const auto d = oracle.cache().decompose(t);
    const auto ref = numerics::quantize_network(n, d, calib);
    expect_same_exponents(oracle.quantize(t), ref);
    nn::Model m(n, &d, &ref);
    EXPECT_EQ(oracle.query(t, 0), m.accuracy(ds, 0, 64, 64)) << "trial " << trial;
  }
  // A maximum on an exponent boundary (the input's 127·2^-3) is measured by
  // the reference executor, and the answer is still the reference's.
  auto edge = calib;
  edge.data[5] = 127.0f / 8.0f;
  EXPECT_EQ(numerics::exponent_boundary_distance(127.0 / 8.0), 0.0);
  EXPECT_NEAR(numerics::exponent_boundary_distance(127.0 / 8.0 * (1 + 3e-5)), 3e-5, 1e-9);
  bool fell_back = false;
  const auto q = nn::quantize(n, {}, edge, &fell_back);
  EXPECT_TRUE(fell_back);
  expect_same_exponents(q, numerics::quantize_network(n, {}, edge));
  nn::quantize(n, {}, calib, &fell_back);
  EXPECT_FALSE(fell_back);
}

// The query's top-1 is the reference executor's (issue 19 made it faster:
// calibration in LibTorch, fused rounding and group sums, channels-last
// convolutions, the QNetwork's weights, the prefix cache): seeded genomes
// over every candidate type and grouping, on the shipped network and two
// search batches, against numerics::quantize_network's exponents run by a
// plain Model on the same images. The reference is computed here, on this
// machine: float sums depend on OpenBLAS's kernel for the CPU (values pinned
// on one CPU differ by an image on another: OPENBLAS_CORETYPE=SkylakeX vs
// Cooperlake moves 14 of these 24 figures by 1/128). Needs the data.
TEST(Oracle, FastQueryKeepsTheReferenceTop1) {
  const fs::path shipped = fs::path(MIXTD_SOURCE_DIR) / "configs/networks/resnet18-fmnist-w0.25.onnx";
  if (!fs::exists(shipped) || !fs::exists(fs::path(nn::kFmnistDir) / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "needs Fashion-MNIST in " << nn::kFmnistDir;
  const net::Network n = net::load_onnx(shipped);
  const nn::Dataset search = nn::load_fmnist().search;
  nn::AccuracyOracle o(n, search, {128, 16, true});
  const auto calib = search.batch(search.size() - 16, 16);
  Rng rng(3);
  for (int g = 0; g < 12; ++g) {
    nn::Taus t;
    for (const auto& l : n.layers) {
      const auto c = td::layer_candidates(l);
      if (c.size() > 1 && rng.uniform() < 0.5) t[l.name] = c[rng.below(c.size())];
    }
    const auto d = o.cache().decompose(t);
    const auto ref = numerics::quantize_network(n, d, calib);
    nn::Model m(n, &d, &ref);
    for (std::int64_t b = 0; b < 2; ++b)
      EXPECT_EQ(o.query(t, b), m.accuracy(search, b * 128, 128, 128)) << "genome " << g << " batch " << b;
  }
}

// The prefix cache changes nothing but the time: queries that share their
// first layers' τ (the pre-filter's one-layer changes, a mutation's
// unchanged head) give what an oracle without the cache gives, and do hit.
TEST(Oracle, PrefixCacheGivesTheSameAnswers) {
  net::Network n = net::build_zoo("resnet18-fmnist:width=0.25", true);
  Rng rng(5);
  const nn::Dataset ds = random_dataset(80, 1, 28, rng);
  nn::OracleOptions with{32, 16, true}, without{32, 16, true};
  without.prefix_cache_mb = 0;
  nn::AccuracyOracle cached(n, ds, with), plain(n, ds, without);
  std::vector<std::string> convs;
  for (const auto& l : n.layers)
    if (td::is_decomposable(l)) convs.push_back(l.name);
  nn::Taus parent;
  for (const auto& c : convs) parent[c] = td::layer_candidates(*n.find(c)).front();
  std::vector<nn::Taus> queries = {{}, parent};
  for (std::size_t i : {std::size_t{3}, convs.size() - 1, std::size_t{8}}) {  // one layer changed
    nn::Taus t;
    t[convs[i]] = td::layer_candidates(*n.find(convs[i]))[1];
    queries.push_back(t);
    nn::Taus child = parent;  // a child differing from its parent late
    child[convs[i]] = td::layer_candidates(*n.find(convs[i])).back();
    queries.push_back(child);
  }
  for (std::size_t k = 0; k < queries.size(); ++k)
    for (std::int64_t b : {0, 1}) EXPECT_EQ(cached.query(queries[k], b), plain.query(queries[k], b)) << k << " " << b;
  EXPECT_GT(cached.prefix_hits(), 6);
  EXPECT_EQ(plain.prefix_hits(), 0);
}

// The fidelity proxy: 1 for τ that changes nothing, lower the more the
// logits move, the same answer for the same (τ, batch), and reproducible.
TEST(Fidelity, ScoresTheLogitErrorOnSeededInputs) {
  net::Network n = net::build_zoo("tiny", true);
  nn::FidelityOracle o(n, {8, 3, false, 4});
  const nn::FidelityMeasure same = o.measure({}, 0);
  EXPECT_NEAR(same.score, 1.0, 1e-9);
  EXPECT_NEAR(same.relative_error, 0.0, 1e-6);
  EXPECT_DOUBLE_EQ(same.top1_agreement, 1.0);
  // conv2 is 8 -> 8 channels, 3x3 (full rank 8): rank 1 loses more than rank 4.
  const nn::FidelityMeasure r1 = o.measure({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, 0);
  const nn::FidelityMeasure r4 = o.measure({{"conv2", {td::TdType::SvdFilter, 1, 1, 4}}}, 0);
  EXPECT_LT(r1.score, r4.score);
  EXPECT_LT(r4.score, 1.0);
  EXPECT_GT(r1.relative_error, r4.relative_error);
  EXPECT_NEAR(r1.score, 1.0 / (1.0 + r1.relative_error * r1.relative_error), 1e-12);
  EXPECT_EQ(o.measure({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, 0).score, r1.score);
  // Another batch is other inputs; another oracle with the seed is the same.
  EXPECT_NE(o.inputs(1, 8).data, o.inputs(0, 8).data);
  nn::FidelityOracle again(n, {8, 3, false, 4});
  EXPECT_EQ(again.query({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, 0), r1.score);
  // Quantised: below 1 even undecomposed (BFP8 rounding), still ordered.
  nn::FidelityOracle q(n, {8, 3, true, 4});
  const double q0 = q.query({}, 0);
  EXPECT_LT(q0, 1.0);
  EXPECT_GT(q0, q.query({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, 0));
  // The prefix cache changes nothing: an oracle without it agrees.
  nn::FidelityOracle no_cache(n, {8, 3, false, 4, 0});
  for (std::int64_t b : {0, 1})
    EXPECT_EQ(no_cache.query({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, b),
              o.query({{"conv2", {td::TdType::SvdFilter, 1, 1, 1}}}, b));
  EXPECT_NE(error_of([&] { o.query({}, -1); }).find("batch index -1"), std::string::npos);
  EXPECT_NE(error_of([&] { nn::FidelityOracle(n, {0, 0, false, 4}); }).find("fidelity batch 0"), std::string::npos);
}

}  // namespace
