// The search's fitness (issue 39): agreement with the teacher, the
// statistics correction folded into the factors, distillation.
#include <gtest/gtest.h>

#include <cmath>

#include "RandomData.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/nn/Model.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

using namespace mixtd;

namespace {

nn::Taus tiny_taus() {
  using td::TdType;
  return {{"conv2", {TdType::SvdFilter, 2, 2, 3}},
          {"conv3", {TdType::Cpd, 1, 2, 4}},
          {"conv4", {TdType::SvdSpatial, 4, 1, 5}}};
}

using mixtd::test_data::random_dataset;

// The zoo's `tiny` with seeded weights, BatchNorm folded, as the oracle takes it.
net::Network tiny_folded() {
  net::Network n = net::build_zoo("tiny", true);
  n.fold_batchnorm();
  return n;
}

numerics::FloatTensor logits(std::int64_t n, std::int64_t k, std::vector<float> v) {
  numerics::FloatTensor t(n, k, 1, 1);
  t.data = std::move(v);
  return t;
}

}  // namespace

TEST(TeacherAgreement, OneForTheTeacherItselfAndTheKlOtherwise) {
  const auto t = logits(2, 3, {1, 2, 3, 0, 0, 5});
  EXPECT_DOUBLE_EQ(nn::teacher_agreement(t, t), 1.0);
  // Shifting a row's logits changes no probability.
  EXPECT_NEAR(nn::teacher_agreement(logits(2, 3, {11, 12, 13, -4, -4, 1}), t), 1.0, 1e-12);
  // Two classes, one image: KL(p ‖ q) with p = softmax(0, 0) = ½, q = softmax(0, ln 3) = (¼, ¾).
  const double kl = 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75);
  EXPECT_NEAR(nn::teacher_agreement(logits(1, 2, {0, std::log(3.0f)}), logits(1, 2, {0, 0})), std::exp(-kl), 1e-6);
  EXPECT_THROW(nn::teacher_agreement(logits(1, 2, {0, 0}), t), Error);
}

TEST(Correction, FoldsIntoTheLastStageRowsAndTheBias) {
  const net::Network n = tiny_folded();
  nn::DecompositionCache cache(n);
  auto d = cache.decompose(tiny_taus());
  const auto before = d.at("conv2");
  const std::int64_t channels = before.geometry.n;
  nn::Corrections c;
  for (std::int64_t ch = 0; ch < channels; ++ch) {
    c["conv2"].scale.push_back(1.0 + 0.1 * static_cast<double>(ch));
    c["conv2"].shift.push_back(-0.5 * static_cast<double>(ch));
  }
  nn::apply_corrections(d, c);
  // The layer the factors stand for: every output channel's filter scaled, the bias moved.
  const auto w0 = before.reconstruct(), w1 = d.at("conv2").reconstruct();
  const std::size_t per = w0.size() / static_cast<std::size_t>(channels);
  for (std::int64_t ch = 0; ch < channels; ++ch) {
    const auto s = static_cast<std::size_t>(ch);
    for (std::size_t k = 0; k < per; ++k) EXPECT_NEAR(w1[s * per + k], c["conv2"].scale[s] * w0[s * per + k], 1e-5);
    const double b0 = before.bias.empty() ? 0.0 : before.bias[s];
    EXPECT_NEAR(d.at("conv2").bias[s], c["conv2"].scale[s] * b0 + c["conv2"].shift[s], 1e-5);
  }
  EXPECT_EQ(d.at("conv3").reconstruct(), cache.decompose(tiny_taus()).at("conv3").reconstruct());  // untouched
  nn::Corrections wrong;
  wrong["conv2"] = {{1.0}, {0.0}};
  EXPECT_THROW(nn::apply_corrections(d, wrong), Error);
  wrong.clear();
  wrong["conv1"] = c["conv2"];
  EXPECT_THROW(nn::apply_corrections(d, wrong), Error);  // not decomposed
}

TEST(Correction, MatchesTheUndecomposedStatisticsLayerByLayer) {
  const net::Network n = tiny_folded();
  Rng rng(3);
  const nn::Dataset ds = random_dataset(32, 3, 16, rng);
  const auto x = ds.batch(0, 32);
  const nn::LayerStats target = nn::Model(n).channel_stats(x);
  nn::DecompositionCache cache(n);
  for (const auto mode : {nn::StatsCorrection::Bias, nn::StatsCorrection::Scale}) {
    auto d = cache.decompose(tiny_taus());
    const nn::LayerStats raw = nn::Model(n, &d).channel_stats(x);
    nn::apply_corrections(d, nn::Model(n, &d).statistics_corrections(x, target, mode));
    const nn::LayerStats now = nn::Model(n, &d).channel_stats(x);
    double moved = 0;
    for (const auto& [layer, tau] : tiny_taus()) {
      const auto& t = target.at(layer);
      for (std::size_t ch = 0; ch < t.mean.size(); ++ch) {
        EXPECT_NEAR(now.at(layer).mean[ch], t.mean[ch], 1e-4 * (1 + std::fabs(t.mean[ch]))) << layer << " " << ch;
        if (mode == nn::StatsCorrection::Scale && now.at(layer).std[ch] > 0) {
          EXPECT_NEAR(now.at(layer).std[ch], t.std[ch], 1e-3 * (1 + t.std[ch])) << layer << " " << ch;
        }
        moved += std::fabs(raw.at(layer).mean[ch] - t.mean[ch]);
      }
    }
    EXPECT_GT(moved, 1e-3);  // there was something to correct
  }
}

TEST(Oracle, TeacherFitnessIsOneUndecomposedInFloatAndBelowOneDecomposed) {
  const net::Network n = tiny_folded();
  Rng rng(5);
  const nn::Dataset ds = random_dataset(300, 3, 16, rng);
  nn::OracleOptions o;
  o.batch = 128;
  o.calibration = 32;
  o.quantize = false;
  o.fitness = nn::Fitness::Teacher;
  nn::AccuracyOracle oracle(n, ds, o);
  EXPECT_NEAR(oracle.query({}, 0), 1.0, 1e-6);
  const auto s = oracle.score(tiny_taus(), 0);
  EXPECT_LT(s.fitness, 1.0);
  EXPECT_GT(s.fitness, 0.0);
  EXPECT_GE(s.top1, 0.0);
  // With the correction, the decomposed layers the oracle runs are the corrected ones.
  o.correction = nn::StatsCorrection::Bias;
  o.correction_images = 64;
  nn::AccuracyOracle corrected(n, ds, o);
  const auto d = corrected.decompose(tiny_taus());
  EXPECT_NE(d.at("conv2").bias, oracle.decompose(tiny_taus()).at("conv2").bias);
  o.correction_images = 301;
  EXPECT_THROW(nn::AccuracyOracle(n, ds, o), Error);
}

TEST(Distillation, PullsTheStudentTowardsTheTeacher) {
  const net::Network n = tiny_folded();
  Rng rng(7);
  const nn::Dataset ds = random_dataset(256, 3, 16, rng);
  nn::OracleOptions o;
  o.batch = 256;
  o.quantize = false;
  o.fitness = nn::Fitness::Teacher;
  nn::AccuracyOracle oracle(n, ds, o);
  nn::Model student = oracle.build(tiny_taus()), teacher = oracle.teacher();
  const auto x = ds.batch(0, 256);
  const auto t = teacher.forward(x);
  const double before = nn::teacher_agreement(student.forward(x), t);
  nn::TrainOptions to;
  to.epochs = 3;
  to.batch = 32;
  to.optimizer = "adam";
  to.lr = 1e-3;
  to.weight_decay = 0;
  to.flip = false;
  to.progress_every = 0;
  to.distill = {&teacher, 1.0, 1.0};  // the teacher's soft outputs only: labels here are noise
  student.train(ds, to);
  EXPECT_GT(nn::teacher_agreement(student.forward(x), t), before);
  to.distill.alpha = 2;
  EXPECT_THROW(student.train(ds, to), Error);
}

// What the hardware must carry to compute what a query scored: the oracle's
// (corrected) factors with the activation exponents it quantised at, kept
// through training, and used again when a design hands them back.
TEST(Oracle, FactorsCarryTheExponentsTheQueryRanAtThroughTraining) {
  const net::Network n = tiny_folded();
  Rng rng(9);
  const nn::Dataset ds = random_dataset(256, 3, 16, rng);
  nn::OracleOptions o;
  o.batch = 128;
  o.calibration = 16;
  o.correction = nn::StatsCorrection::Scale;
  o.correction_images = 64;
  o.fitness = nn::Fitness::Teacher;  // smooth: moves with any change of the logits
  nn::AccuracyOracle oracle(n, ds, o);
  const td::Factors f = oracle.factors(tiny_taus());
  ASSERT_FALSE(f.exponents.empty());
  EXPECT_EQ(numerics::activation_exponents(n, oracle.quantize(tiny_taus())), f.exponents);
  nn::Model m = oracle.build(tiny_taus());
  EXPECT_EQ(m.activation_exponents(), f.exponents);
  nn::TrainOptions to;
  to.batch = 64;
  to.optimizer = "adam";
  to.lr = 1e-3;
  to.progress_every = 0;
  m.train(ds, to);
  EXPECT_EQ(m.activation_exponents(), f.exponents);  // the weights moved, the exponents did not
  EXPECT_TRUE(oracle.teacher().activation_exponents().empty());

  // Handed back with other exponents, the oracle quantises and scores at those.
  auto shifted = f.exponents;
  for (auto& [key, e] : shifted) e -= 1;
  nn::AccuracyOracle carried(n, ds, o);
  carried.set_factors(f.layers, shifted);
  EXPECT_EQ(numerics::activation_exponents(n, carried.quantize(tiny_taus())), shifted);
  EXPECT_EQ(carried.build(tiny_taus()).activation_exponents(), shifted);
  EXPECT_NE(carried.score(tiny_taus(), 0).fitness, oracle.score(tiny_taus(), 0).fitness);
  carried.set_factors(f.layers, f.exponents);
  EXPECT_EQ(carried.score(tiny_taus(), 0).fitness, oracle.score(tiny_taus(), 0).fitness);
}
