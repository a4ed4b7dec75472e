// solve() and anneal(): legal ψ within the budget on several networks,
// devices and τ; better than ψ = 1; monotone in the budget; a clear error
// when even ψ = 1 does not fit; the annealer is reproducible per seed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;
using search::Objective;

struct Case {
  std::string name;
  arch::Design design;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({"tiny/zc706", zoo_design("tiny", "zc706")});
  v.push_back({"tiny-dw/zcu102", zoo_design("tiny-dw", "zcu102")});
  v.push_back({"tiny:width=2 random tau/zc706", random_tau(zoo_design("tiny:width=2", "zc706"), 3)});
  v.push_back({"resnet18-fmnist:width=0.25/zc706", zoo_design("resnet18-fmnist:width=0.25", "zc706")});
  v.push_back({"resnet18-fmnist:width=0.5 cpd/zcu102",
               uniform_tau(zoo_design("resnet18-fmnist:width=0.5", "zcu102"), td::TdType::Cpd)});
  v.push_back({"resnet18/u250", zoo_design("resnet18", "u250")});
  v.push_back({"resnet18 svd g2=4/u250", uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter, 1, 4)});
  v.push_back({"resnet18 random tau/u250", random_tau(zoo_design("resnet18", "u250"), 5)});
  v.push_back({"repvgg-a0 svd/u250", uniform_tau(zoo_design("repvgg-a0", "u250"), td::TdType::SvdFilter)});
  return v;
}

double fps(const arch::Report& r, Objective o) { return o == Objective::Latency ? r.fps_batch1() : r.fps_peak(); }

// Every ψ legal, the total within the budget, the report the design's own.
void expect_sound(const search::SolveResult& r, double budget, const std::string& where) {
  EXPECT_NO_THROW(arch::validate(r.design)) << where;
  EXPECT_DOUBLE_EQ(r.design.budget, budget) << where;
  EXPECT_TRUE(r.report.fits()) << where << ": " << r.report.total.binding(r.report.budget) << " over budget";
  const arch::Report again = arch::analyse(r.design);
  EXPECT_EQ(again.interval, r.report.interval) << where;
  EXPECT_EQ(again.fill_cycles, r.report.fill_cycles) << where;
}

TEST(Solver, LegalWithinBudgetAndBetterThanPsiOne) {
  for (const auto& c : cases()) {
    for (Objective o : {Objective::Latency, Objective::Throughput}) {
      const std::string where = c.name + (o == Objective::Latency ? " latency" : " throughput");
      search::SolverOptions opt;
      opt.objective = o;
      const auto r = search::solve(c.design, opt);
      expect_sound(r, c.design.budget, where);
      EXPECT_GT(fps(r.report, o), 1.5 * fps(arch::analyse(c.design), o)) << where;
      EXPECT_GT(r.evaluations, 0) << where;
    }
  }
}

TEST(Solver, IgnoresTheInputPsi) {
  arch::Design d = zoo_design("tiny", "zc706");
  const auto from_one = search::solve(d);
  Rng rng(1);
  random_psi(d, rng);
  const auto from_random = search::solve(d);
  EXPECT_EQ(from_one.design.layers, from_random.design.layers);
}

TEST(Solver, LowerBudgetGivesNoHigherFps) {
  const std::vector<Case> some = {
      {"tiny:width=2/zc706", zoo_design("tiny:width=2", "zc706")},
      {"resnet18-fmnist:width=0.25/zc706", zoo_design("resnet18-fmnist:width=0.25", "zc706")},
      {"resnet18 svd/u250", uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter)},
  };
  for (const auto& c : some) {
    for (Objective o : {Objective::Latency, Objective::Throughput}) {
      double previous = 0;
      for (double budget : {0.1, 0.2, 0.35, 0.5, 0.7, 0.9, 1.0}) {
        search::SolverOptions opt;
        opt.objective = o;
        opt.budget = budget;
        double f = 0;  // a budget too small for ψ = 1 throws: no design at all
        try {
          const auto r = search::solve(c.design, opt);
          expect_sound(r, budget, c.name);
          f = fps(r.report, o);
        } catch (const Error&) {
          EXPECT_EQ(previous, 0) << c.name << ": budget " << budget << " fails after a smaller one worked";
        }
        EXPECT_GE(f, previous) << c.name << " budget " << budget;
        previous = f;
      }
      EXPECT_GT(previous, 0) << c.name;
    }
  }
}

TEST(Solver, BudgetOptionOverridesTheDesigns) {
  arch::Design d = zoo_design("tiny", "zc706");
  d.budget = 0.5;
  EXPECT_DOUBLE_EQ(search::solve(d).design.budget, 0.5);
  search::SolverOptions opt;
  opt.budget = 0.25;
  const auto r = search::solve(d, opt);
  EXPECT_DOUBLE_EQ(r.design.budget, 0.25);
  EXPECT_TRUE(r.report.fits());
}

std::string solve_error(const arch::Design& d, double budget) {
  search::SolverOptions opt;
  opt.budget = budget;
  try {
    search::solve(d, opt);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Solver, InfeasibleBudgetNamesTheResourceAndTheMinimum) {
  // ResNet-18's 11.7M weights need more BRAM than a ZC706 has at all.
  const std::string all = solve_error(zoo_design("resnet18", "zc706"), 0.001);
  ASSERT_FALSE(all.empty()) << "resnet18 on zc706 at 0.1% should not fit";
  EXPECT_NE(all.find("BRAM18"), std::string::npos) << all;
  EXPECT_NE(all.find("needs"), std::string::npos) << all;
  EXPECT_NE(all.find("0.001"), std::string::npos) << all;
  EXPECT_NE(all.find("larger device"), std::string::npos) << all;

  // A small network that fits the device, but not 0.1% of it: the message
  // gives the budget that would do, and that budget works.
  const arch::Design tiny = zoo_design("tiny", "zc706");
  const std::string some = solve_error(tiny, 0.001);
  ASSERT_FALSE(some.empty());
  const auto at = some.find("at least ");
  ASSERT_NE(at, std::string::npos) << some;
  const double needed = std::stod(some.substr(at + 9));
  EXPECT_GT(needed, 0.001);
  EXPECT_LE(needed, 1.0);
  EXPECT_EQ(solve_error(tiny, needed), "");  // the figure is rounded up
}

TEST(Anneal, DeterministicPerSeedAndSound) {
  for (const auto& c : {Case{"tiny-dw/zcu102", zoo_design("tiny-dw", "zcu102")},
                        Case{"resnet18 svd/u250", uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter)}}) {
    search::AnnealOptions a;
    a.seed = 7;
    a.moves = 3000;
    const auto first = search::anneal(c.design, {}, a);
    const auto second = search::anneal(c.design, {}, a);
    EXPECT_EQ(first.design.layers, second.design.layers) << c.name;
    EXPECT_EQ(first.report.interval, second.report.interval) << c.name;
    expect_sound(first, c.design.budget, c.name);
    EXPECT_GT(first.report.fps_batch1(), arch::analyse(c.design).fps_batch1()) << c.name;
  }
}

TEST(Anneal, InfeasibleBudgetThrows) {
  search::SolverOptions opt;
  opt.budget = 0.001;
  EXPECT_THROW(search::anneal(zoo_design("resnet18", "zc706"), opt), Error);
}

// A coarse quality guard on small nets (the benchmark measures it properly).
TEST(Solver, CloseToTheAnnealerOnSmallNets) {
  for (const auto& c : {Case{"tiny:width=2/zc706", zoo_design("tiny:width=2", "zc706")},
                        Case{"tiny-dw/zcu102", zoo_design("tiny-dw", "zcu102")}}) {
    const double solved = search::solve(c.design).report.fps_batch1();
    search::AnnealOptions a;
    a.seed = 1;
    const double annealed = search::anneal(c.design, {}, a).report.fps_batch1();
    EXPECT_GE(solved, 0.97 * annealed) << c.name;
  }
}

}  // namespace
