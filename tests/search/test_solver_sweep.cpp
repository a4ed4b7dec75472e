// Budget sweeps (640 solves, a few seconds). The solver is a greedy, so a
// larger budget is not guaranteed to give a higher FPS; this bounds how far
// it may fall back: never more than 1% below the best FPS of any smaller
// budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "SearchTestUtil.h"
#include "mixtd/search/Solver.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;

// Solves `d` at budgets 1/40 .. 40/40: every fit is within budget, no budget
// fails after a smaller one worked, and none loses more than 1% against the
// best smaller budget. Returns the best FPS.
double sweep(const std::string& name, const arch::Design& d, search::Objective o) {
  const char* objective = o == search::Objective::Latency ? " latency" : " throughput";
  double best = 0;
  for (int k = 1; k <= 40; ++k) {
    search::SolverOptions opt;
    opt.objective = o;
    opt.budget = k / 40.0;
    double fps = 0;
    try {
      const auto r = search::solve(d, opt);
      EXPECT_TRUE(r.report.fits()) << name;
      fps = r.objective_fps;
    } catch (const Error&) {
      EXPECT_EQ(best, 0) << name << ": budget " << opt.budget << " fails after a smaller one worked";
    }
    EXPECT_GE(fps, 0.99 * best) << name << objective << " budget " << opt.budget;
    best = std::max(best, fps);
  }
  return best;
}

TEST(SolverSweep, LargerBudgetNeverLosesMoreThanOnePercent) {
  const std::vector<std::pair<std::string, arch::Design>> designs = {
      {"tiny:width=2/zc706", zoo_design("tiny:width=2", "zc706")},
      {"tiny-dw/zcu102", zoo_design("tiny-dw", "zcu102")},
      {"resnet18-fmnist:width=0.25/zc706", zoo_design("resnet18-fmnist:width=0.25", "zc706")},
      {"resnet18-fmnist:width=0.25 svd/zc706",
       uniform_tau(zoo_design("resnet18-fmnist:width=0.25", "zc706"), td::TdType::SvdFilter)},
      {"resnet18 svd/u250", uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter)},
      {"resnet18 cpd/u250", uniform_tau(zoo_design("resnet18", "u250"), td::TdType::Cpd)},
      {"repvgg-a0/u250", zoo_design("repvgg-a0", "u250")},
  };
  for (const auto& [name, d] : designs)
    for (search::Objective o : {search::Objective::Latency, search::Objective::Throughput}) sweep(name, d, o);
}

// Undecomposed ResNet-18 on the U250, whose weights fill BRAM18 and URAM
// both: the case where putting ties in URAM by rule lost up to 23% at a
// larger budget, and where the weight-memory choice must hold the same bound.
TEST(SolverSweep, UndecomposedResnet18WithUramNeverLosesMoreThanOnePercent) {
  const arch::Design d = zoo_design("resnet18", "u250");
  for (search::Objective o : {search::Objective::Latency, search::Objective::Throughput})
    EXPECT_GT(sweep("resnet18/u250", d, o), 0);
}

}  // namespace
