// The random forest (search/RandomForest.h): it learns a known function,
// its out-of-bag error tells the truth about held-out error, it is
// deterministic, and its file round-trips and refuses what it should.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "mixtd/search/RandomForest.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace {

using mixtd::search::FeatureMatrix;
using mixtd::search::ForestParams;
using mixtd::search::RandomForest;
using testing::AllOf;

// Friedman #1: y = 10 sin(π x0 x1) + 20 (x2 − ½)² + 10 x3 + 5 x4 + N(0, σ²),
// x ~ U[0,1]^10 (five features are noise).
struct Data {
  FeatureMatrix x;
  std::vector<double> y;
};
Data friedman1(std::size_t n, std::uint64_t seed, double noise = 1.0) {
  mixtd::Rng rng(seed);
  Data d;
  d.x.rows = n;
  d.x.cols = 10;
  for (std::size_t i = 0; i < n; ++i) {
    double v[10];
    for (double& e : v) e = rng.uniform();
    d.x.values.insert(d.x.values.end(), v, v + 10);
    d.y.push_back(10 * std::sin(M_PI * v[0] * v[1]) + 20 * (v[2] - 0.5) * (v[2] - 0.5) + 10 * v[3] + 5 * v[4] +
                  noise * rng.normal());
  }
  return d;
}

double r2(const std::vector<double>& pred, const std::vector<double>& y) {
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double se = 0, ss = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    se += (pred[i] - y[i]) * (pred[i] - y[i]);
    ss += (y[i] - mean) * (y[i] - mean);
  }
  return 1 - se / ss;
}

ForestParams small(int trees = 100) {
  ForestParams p;
  p.trees = trees;
  p.seed = 7;
  p.threads = 1;
  return p;
}

std::filesystem::path temp(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("mixtd-rf-" + std::to_string(::getpid()) + "-" + name);
}

TEST(RandomForest, FitsFriedmanOne) {
  const Data train = friedman1(1000, 1), test = friedman1(500, 2);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(200));
  // var(y) ≈ 24 and the noise alone (σ² = 1) caps R² near 0.96; this
  // forest (mtry = 3 of 10, 256 bins) measures 0.84 (MSE ≈ 3.9). A forest
  // that learnt nothing would score about 0.
  const double held_out = r2(rf.predict(test.x), test.y);
  EXPECT_GT(held_out, 0.8);
  EXPECT_LT(held_out, 0.97);
  EXPECT_GT(rf.oob_r2(), 0.8);
  // Averaging is what helps: one tree on all features does clearly worse.
  ForestParams one_tree = small(1);
  one_tree.mtry = 10;
  const double single = r2(RandomForest::fit(train.x, train.y, one_tree).predict(test.x), test.y);
  EXPECT_LT(single, held_out - 0.1);
}

TEST(RandomForest, OutOfBagErrorEstimatesHeldOutError) {
  const Data train = friedman1(1000, 3), test = friedman1(1000, 4);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(200));
  double se = 0;
  const auto pred = rf.predict(test.x);
  for (std::size_t i = 0; i < pred.size(); ++i) se += (pred[i] - test.y[i]) * (pred[i] - test.y[i]);
  const double held_out_rmse = std::sqrt(se / static_cast<double>(pred.size()));
  EXPECT_NEAR(rf.oob_rmse(), held_out_rmse, 0.1 * held_out_rmse);
  // OOB rows see about 37% of the trees, so OOB is a little pessimistic.
  EXPECT_NEAR(rf.oob_r2(), r2(pred, test.y), 0.05);
  // With 200 trees every row is out of bag for some tree.
  for (double v : rf.oob_predictions()) EXPECT_TRUE(std::isfinite(v));
}

TEST(RandomForest, ImportanceFindsTheInformativeFeatures) {
  const Data train = friedman1(1000, 5), test = friedman1(500, 6);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(100));
  const auto& imp = rf.impurity_importance();
  double sum = 0;
  for (double v : imp) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  const auto perm = rf.permutation_importance(test.x, test.y, 2, 1);
  for (int informative = 0; informative < 5; ++informative)
    for (int noise = 5; noise < 10; ++noise) {
      EXPECT_GT(imp[informative], imp[noise]) << informative << " vs " << noise;
      EXPECT_GT(perm[informative], perm[noise]) << informative << " vs " << noise;
    }
  // Shuffling a feature the function ignores costs (almost) nothing.
  for (int noise = 5; noise < 10; ++noise) EXPECT_LT(perm[noise], 0.1);
}

TEST(RandomForest, SameSeedSameForestForAnyThreadCount) {
  const Data train = friedman1(400, 7);
  ForestParams one = small(40), four = small(40);
  four.threads = 4;
  const RandomForest a = RandomForest::fit(train.x, train.y, one), b = RandomForest::fit(train.x, train.y, four);
  ASSERT_EQ(a.trees(), b.trees());
  for (std::size_t t = 0; t < a.trees(); ++t) {
    ASSERT_EQ(a.tree(t).size(), b.tree(t).size());
    for (std::size_t k = 0; k < a.tree(t).size(); ++k) {
      EXPECT_EQ(a.tree(t)[k].feature, b.tree(t)[k].feature);
      EXPECT_EQ(a.tree(t)[k].threshold, b.tree(t)[k].threshold);
      EXPECT_EQ(a.tree(t)[k].value, b.tree(t)[k].value);
    }
  }
  EXPECT_EQ(a.oob_rmse(), b.oob_rmse());
  ForestParams other = small(40);
  other.seed = 8;
  const RandomForest c = RandomForest::fit(train.x, train.y, other);
  EXPECT_NE(a.predict(train.x.row(0)), c.predict(train.x.row(0)));
}

TEST(RandomForest, TreesAgreeOnEasyRowsAndSpreadOnHardOnes) {
  const Data train = friedman1(600, 9);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(60));
  const auto per_tree = rf.tree_predictions(train.x.row(3));
  ASSERT_EQ(per_tree.size(), 60u);
  double mean = 0;
  for (double v : per_tree) mean += v;
  EXPECT_NEAR(mean / 60, rf.predict(train.x.row(3)), 1e-9);
  EXPECT_GT(rf.spread(train.x.row(3)), 0.0);
  // Far outside the training range the trees still answer (a leaf), so the
  // spread is finite.
  std::vector<double> far(10, 5.0);
  EXPECT_TRUE(std::isfinite(rf.spread(far.data())));
}

TEST(RandomForest, DepthAndLeafLimitsHold) {
  const Data train = friedman1(500, 10);
  ForestParams p = small(10);
  p.max_depth = 3;
  const RandomForest shallow = RandomForest::fit(train.x, train.y, p);
  for (std::size_t t = 0; t < shallow.trees(); ++t) EXPECT_LE(shallow.tree(t).size(), 15u);  // 2^4 − 1
  ForestParams q = small(10);
  q.min_leaf = 50;
  const RandomForest coarse = RandomForest::fit(train.x, train.y, q);
  for (std::size_t t = 0; t < coarse.trees(); ++t) EXPECT_LE(coarse.tree(t).size(), 2u * 500 / 50);
}

TEST(RandomForest, DiscreteFeaturesSplitBetweenTheirValues) {
  // A step function of an integer feature: every threshold lies between two
  // of its values, and the forest reproduces the steps exactly.
  FeatureMatrix x;
  x.rows = 200;
  x.cols = 2;
  std::vector<double> y;
  for (std::size_t i = 0; i < 200; ++i) {
    const double code = static_cast<double>(i % 4), noise = static_cast<double>(i % 7);
    x.values.push_back(code);
    x.values.push_back(noise);
    y.push_back(code >= 2 ? 10.0 : 1.0);
  }
  ForestParams p = small(20);
  p.mtry = 2;
  const RandomForest rf = RandomForest::fit(x, y, p);
  const double lo[2] = {1, 3}, hi[2] = {2, 3};
  EXPECT_DOUBLE_EQ(rf.predict(lo), 1.0);
  EXPECT_DOUBLE_EQ(rf.predict(hi), 10.0);
  for (std::size_t t = 0; t < rf.trees(); ++t)
    for (const auto& n : rf.tree(t)) {
      if (n.feature == 0) {
        EXPECT_DOUBLE_EQ(n.threshold, 1.5);
      }
    }
}

TEST(RandomForest, SaveLoadGivesIdenticalPredictions) {
  const Data train = friedman1(300, 11), test = friedman1(50, 12);
  RandomForest rf = RandomForest::fit(train.x, train.y, small(30));
  rf.metadata["target"] = "ratio";
  rf.metadata["macs_constant"] = "1.5e12";
  const auto path = temp("roundtrip.bin");
  rf.save(path);
  const RandomForest back = RandomForest::load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.metadata, rf.metadata);
  EXPECT_EQ(back.feature_names(), rf.feature_names());
  EXPECT_EQ(back.impurity_importance(), rf.impurity_importance());
  EXPECT_EQ(back.oob_rmse(), rf.oob_rmse());
  EXPECT_EQ(back.params().mtry, rf.params().mtry);
  EXPECT_EQ(back.predict(test.x), rf.predict(test.x));  // bit for bit
  ASSERT_EQ(back.oob_predictions().size(), rf.oob_predictions().size());
}

TEST(RandomForest, LoadRefusesOtherVersionsForeignAndDamagedFiles) {
  const Data train = friedman1(100, 13);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(5));
  const auto path = temp("bad.bin");
  rf.save(path);
  std::string bytes = mixtd::read_file(path);

  auto expect_error = [&](const std::string& content, const std::string& needle) {
    mixtd::write_file_atomic(path, content);
    try {
      RandomForest::load(path);
      ADD_FAILURE() << "loaded a bad file; expected an error containing '" << needle << "'";
    } catch (const mixtd::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  };
  std::string v2 = bytes;
  v2.replace(v2.find("version 1"), 9, "version 2");
  expect_error(v2, "version 2; this mixtd reads version 1");
  expect_error("index,seed,status\n1,2,ok\n", "not a mixtd random-forest file");
  expect_error(bytes.substr(0, bytes.size() - 100), "corrupt");
  std::string flipped = bytes;
  flipped[flipped.size() - 20] ^= 0x40;
  expect_error(flipped, "checksum");
  std::filesystem::remove(path);
  EXPECT_THROW(RandomForest::load(path), mixtd::Error);  // missing file
}

// Found by fuzz_forest (fuzz/corpus/fuzz_forest/regress-*): the header's
// counts sized allocations before they were checked ("trees 99999999999":
// a 2 TB allocation; "trees -1" wrapped to 2^64 - 1: std::length_error),
// and a child index of -1 passed the node check (its unsigned +1 wrapped to
// 0), so predict() read before the tree. A leaf value of NaN was loaded and
// predicted silently. Each is now one mixtd::Error naming the file and value.
TEST(RandomForest, LoadRefusesCountsAndNodesTheFileCannotHold) {
  const Data train = friedman1(100, 15);
  const RandomForest rf = RandomForest::fit(train.x, train.y, small(3));
  const auto path = temp("counts.bin");
  rf.save(path);
  const std::string bytes = mixtd::read_file(path);
  auto message = [&](const std::string& content) {
    mixtd::write_file_atomic(path, content);
    try {
      RandomForest::load(path);
    } catch (const mixtd::Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  auto header = [&](const std::string& from, const std::string& to) {
    std::string b = bytes;
    b.replace(b.find(from), from.size(), to);
    return b;
  };
  const std::string p = path.string();
  EXPECT_THAT(message(header("\ntrees 3\n", "\ntrees 99999999999\n")),
              testing::StartsWith(p + ":3: trees 99999999999: the file's "));
  EXPECT_EQ(message(header("\ntrees 3\n", "\ntrees -1\n")), p + ":3: malformed header line 'trees -1'");
  EXPECT_EQ(message(header("\ntrees 3\n", "\ntrees 3x\n")), p + ":3: malformed header line 'trees 3x'");
  EXPECT_THAT(message(header("\nrows 100\n", "\nrows 99999999999\n")),
              testing::StartsWith(p + ":5: rows 99999999999: the file's "));

  // The binary part, with its checksum recomputed as save() does.
  const std::size_t body = bytes.find("\nend\n") + 5;
  auto with_node = [&](std::size_t node, std::size_t field, auto value) {
    std::string b = bytes;
    std::memcpy(b.data() + body + 4 + node * 24 + field, &value, sizeof value);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::size_t i = body; i + 8 < b.size(); ++i) h = (h ^ static_cast<unsigned char>(b[i])) * 0x100000001b3ULL;
    std::memcpy(b.data() + b.size() - 8, &h, 8);
    return b;
  };
  ASSERT_GE(rf.tree(0)[0].feature, 0) << "tree 0's root must be a split";
  EXPECT_THAT(message(with_node(0, 4, std::int32_t{-1})),
              testing::StartsWith(p + ": tree 0 node 0: child -1 (legal 1 .. "));
  std::size_t leaf = 0;
  while (rf.tree(0)[leaf].feature >= 0) ++leaf;
  EXPECT_THAT(message(with_node(leaf, 16, std::numeric_limits<double>::quiet_NaN())),
              AllOf(testing::StartsWith(p + ": tree 0 node " + std::to_string(leaf) + ": value "),
                    testing::EndsWith("is not a finite number")));
  // The unchanged file still loads.
  EXPECT_EQ(message(bytes), "loaded");
  std::filesystem::remove(path);
}

TEST(RandomForest, BadInputIsRefusedWithWhatWouldBeLegal) {
  Data d = friedman1(50, 14);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const mixtd::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Data nan = d;
  nan.x.values[3 * 10 + 4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(message([&] { RandomForest::fit(nan.x, nan.y); }).find("row 3, feature 'x4'"), std::string::npos);
  Data short_y = d;
  short_y.y.pop_back();
  EXPECT_NE(message([&] { RandomForest::fit(short_y.x, short_y.y); }).find("49 targets for 50 rows"),
            std::string::npos);
  ForestParams p;
  p.mtry = 11;
  EXPECT_NE(message([&] { RandomForest::fit(d.x, d.y, p); }).find("legal: 0 (= features / 3) to 10"),
            std::string::npos);
  p = {};
  p.trees = 0;
  EXPECT_NE(message([&] { RandomForest::fit(d.x, d.y, p); }).find("at least 1"), std::string::npos);
  const RandomForest rf = RandomForest::fit(d.x, d.y, small(3));
  FeatureMatrix wrong;
  wrong.rows = 1;
  wrong.cols = 9;
  wrong.values.assign(9, 0.5);
  EXPECT_NE(message([&] { rf.predict(wrong); }).find("rows have 9 features; the model has 10"), std::string::npos);
}

}  // namespace
