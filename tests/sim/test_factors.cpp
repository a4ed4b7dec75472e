// sim::quantise with a design that names a factors file (design.yaml
// `factors:`): the factors td::Decomposer gives make the very QNetwork that
// decomposing makes, other factors change the golden outputs (so they are
// the ones used), and a file that does not fit the design's τ is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "SearchTestUtil.h"
#include "mixtd/net/Load.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/numerics/Quantized.h"
#include "mixtd/sim/Functional.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Factors.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("mixtd_sim_factors_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

// CPD everywhere it is legal, but one layer SVD with both groupings.
arch::Design mixed_design() {
  arch::Design d = uniform_tau(zoo_design("tiny:width=2", "zc706"), td::TdType::Cpd);
  d.name = "mixed";
  for (const auto& l : d.network.layers)
    if (td::is_decomposable(l)) {
      const auto ranks = td::rank_candidates(l, td::TdType::SvdFilter, 2, 2);
      arch::LayerMapping& m = d.layers.at(l.name);
      m.tau = ranks.at(ranks.size() / 2);
      m.stages.assign(d.geometry(l).stages.size(), arch::Psi{});
      break;
    }
  return d;
}

// The network with the weights sim::quantise computes with (a zoo
// network's seeded ones).
net::Network weighted(const arch::Design& d) {
  net::Network n = net::load_network(d.network_path(), true);
  n.fold_batchnorm();
  return n;
}

// What sim::quantise decomposes without a factors file.
td::FactorsMap decomposed(const arch::Design& d) {
  td::FactorsMap f;
  for (const auto& l : weighted(d).layers)
    if (l.kind == net::LayerKind::Conv2d && d.mapping(l.name).tau.decomposed())
      f[l.name] = td::Decomposer(l).decompose(d.mapping(l.name).tau);
  return f;
}

arch::Design naming(arch::Design d, const td::FactorsMap& f, const std::string& file) {
  td::save_factors(scratch(file), f);
  d.factors_spec = scratch(file).string();
  return d;
}

// Every number of a QNetwork, in a fixed order.
std::vector<std::int64_t> numbers(const numerics::QNetwork& q) {
  std::vector<std::int64_t> v{q.input_exp};
  auto requant = [&](const numerics::Requant& r) { v.insert(v.end(), {r.bias, r.shift, r.relu}); };
  for (const auto& l : q.layers) {
    v.insert(v.end(), l.in_exps.begin(), l.in_exps.end());
    v.insert(v.end(), {l.out_exp, l.relu, l.partial_exp, l.tau.g1, l.tau.g2, l.tau.rank});
    for (const auto& r : l.group_add) requant(r);
    requant(l.add_requant);
    for (const auto& chunk : l.chunks)
      for (const auto& st : chunk) {
        v.insert(v.end(), st.weight.begin(), st.weight.end());
        v.insert(v.end(), st.weight_exp.begin(), st.weight_exp.end());
        v.insert(v.end(), {st.in_exp, st.out_exp});
        for (const auto& r : st.requant) requant(r);
      }
  }
  return v;
}

std::string quantise_error(const arch::Design& d) {
  try {
    (void)sim::quantise(d, 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(QuantiseFactors, TheDecomposersFactorsGiveTheSameQNetwork) {
  const arch::Design d = mixed_design();
  const arch::Design with = naming(d, decomposed(d), "same.factors");
  const auto want = numbers(sim::quantise(d, 1));
  EXPECT_EQ(numbers(sim::quantise(with, 1)), want);
  // And through design.yaml, the path relative to it, the network loaded
  // without weights as design.yaml loads it.
  arch::Design rel = d;
  rel.factors_spec = "same.factors";
  arch::save_design(rel, scratch("same.yaml"));
  const arch::Design loaded = arch::load_design(scratch("same.yaml"));
  ASSERT_EQ(loaded.factors_path(), scratch("same.factors").string());
  EXPECT_EQ(numbers(sim::quantise(loaded, 1)), want);
}

TEST(QuantiseFactors, OtherFactorsChangeTheGoldenOutputs) {
  const arch::Design d = mixed_design();
  td::FactorsMap f = decomposed(d);
  ASSERT_FALSE(f.empty());
  // Flip the sign of one layer's last stage in every chunk: its output
  // changes sign, so the ReLU after it lets other values through.
  for (auto& ch : f.begin()->second.chunks)
    for (float& w : ch.stages.back().weight) w = -w;
  const arch::Design with = naming(d, f, "flipped.factors");
  const auto plain = sim::golden_frames(d, 4, 1), flipped = sim::golden_frames(with, 4, 1);
  EXPECT_EQ(plain.x.data, flipped.x.data);      // the same input frames...
  EXPECT_NE(plain.expected, flipped.expected);  // ...other outputs
}

// A factors file that carries activation exponents (what a fine-tune
// trained at) is quantised at them, whatever the calibration data; one
// whose exponents do not fit the network is refused, naming the file.
TEST(QuantiseFactors, CarriedExponentsAreTheOnesUsed) {
  const arch::Design d = mixed_design();
  const td::FactorsMap f = decomposed(d);
  const numerics::QNetwork calibrated = sim::quantise(d, 1);
  numerics::ActivationExponents e = numerics::activation_exponents(weighted(d), calibrated);
  // Carried as calibrated: the same network.
  td::save_factors(scratch("exps.factors"), f, e);
  arch::Design with = d;
  with.factors_spec = scratch("exps.factors").string();
  EXPECT_EQ(numbers(sim::quantise(with, 1)), numbers(calibrated));
  // Another calibration seed would move them; the carried ones stay.
  EXPECT_EQ(numbers(sim::quantise(with, 99)), numbers(calibrated));
  // Every exponent one higher: that is what the hardware computes at.
  for (auto& [key, v] : e) ++v;
  td::save_factors(scratch("exps.factors"), f, e);
  const numerics::QNetwork moved = sim::quantise(with, 1);
  EXPECT_EQ(moved.input_exp, calibrated.input_exp + 1);
  EXPECT_EQ(numerics::activation_exponents(weighted(d), moved), e);
  // A tensor the network does not have.
  e["no-such-tensor"] = 0;
  td::save_factors(scratch("exps.factors"), f, e);
  EXPECT_THAT(quantise_error(with), AllOf(HasSubstr("factors file '" + scratch("exps.factors").string() + "'"),
                                          HasSubstr("tensor 'no-such-tensor'")));
}

TEST(QuantiseFactors, FactorsThatDoNotFitTheDesignAreRefused) {
  const arch::Design d = mixed_design();
  const td::FactorsMap good = decomposed(d);
  const std::string layer = good.begin()->first;
  const td::Tau tau = d.mapping(layer).tau;

  td::FactorsMap f = good;
  td::Tau other = tau;
  other.rank -= 1;
  f[layer] = td::Decomposer(*weighted(d).find(layer)).decompose(other);
  EXPECT_THAT(
      quantise_error(naming(d, f, "rank.factors")),
      AllOf(HasSubstr("factors file '" + scratch("rank.factors").string() + "'"), HasSubstr("layer '" + layer + "'"),
            HasSubstr("factors for τ " + other.str()), HasSubstr("the design's τ is " + tau.str())));

  f = good;
  f.erase(layer);
  EXPECT_THAT(quantise_error(naming(d, f, "missing.factors")),
              AllOf(HasSubstr("layer '" + layer + "': no factors"), HasSubstr(tau.str())));

  // An entry for a layer the design leaves undecomposed.
  arch::Design fewer = d;
  fewer.layers.at(layer).tau = td::Tau{};
  fewer.layers.at(layer).stages.assign(1, arch::Psi{});
  EXPECT_THAT(
      quantise_error(naming(fewer, good, "extra.factors")),
      AllOf(HasSubstr("layer '" + layer + "': has factors for τ " + tau.str()), HasSubstr("the design's τ is none")));

  // The same τ for another input size (a layer of another network).
  f = good;
  f[layer].geometry.stages[0].in.h += 2;
  for (auto& ch : f[layer].chunks) ch.stages[0].shape = f[layer].geometry.stages[0];
  EXPECT_THAT(quantise_error(naming(d, f, "shape.factors")),
              AllOf(HasSubstr("layer '" + layer + "': factors for τ " + tau.str() + " shaped"),
                    HasSubstr("; the layer under τ " + tau.str() + " is")));

  f = good;
  f["no-such-layer"] = good.begin()->second;
  EXPECT_THAT(quantise_error(naming(d, f, "stranger.factors")),
              HasSubstr("layer 'no-such-layer' is not a conv layer of network"));
}

}  // namespace
