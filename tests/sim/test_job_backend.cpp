// simulate_many sends its jobs through the process's job back end
// (sim/JobBackend.h) as self-contained payloads, and the payload path gives
// the same result as simulating the design object directly — including a
// design read from a file elsewhere whose network path is relative to it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "SearchTestUtil.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/search/Solver.h"
#include "mixtd/sim/JobBackend.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/support/Error.h"

using namespace mixtd;
using namespace mixtd::search::testing;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

arch::Design solved(arch::Design d) {
  search::SolverOptions opt;
  opt.objective = search::Objective::Latency;
  return search::solve(d, opt).design;
}

// Records what it is asked to run, then runs it on the local pool.
class RecordingBackend : public sim::JobBackend {
 public:
  std::string describe(int) const override { return "recording"; }
  int slots(int) const override { return 2; }
  std::vector<sim::JobResult> run(const std::string& kind, const std::vector<std::string>& payloads,
                                  const sim::PoolOptions& options) override {
    kinds.push_back(kind);
    count += payloads.size();
    return sim::LocalBackend().run(kind, payloads, options);
  }
  std::vector<std::string> kinds;
  std::size_t count = 0;
};

struct Installed {
  explicit Installed(std::shared_ptr<sim::JobBackend> b) { sim::set_job_backend(std::move(b)); }
  ~Installed() { sim::set_job_backend(nullptr); }
};

// Performance fields only: wall time differs between any two runs.
void expect_same(const sim::SimResult& a, const sim::SimResult& b) {
  EXPECT_EQ(a.design, b.design);
  EXPECT_EQ(a.completed, b.completed) << a.error << " / " << b.error;
  EXPECT_EQ(a.interval, b.interval);
  EXPECT_EQ(a.latency, b.latency);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.bottleneck, b.bottleneck);
}

}  // namespace

TEST(JobBackend, UnknownKindNamesTheKnownOnes) {
  try {
    sim::run_job("frobnicate", "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown job kind 'frobnicate'"));
    EXPECT_THAT(e.what(), HasSubstr("simulate"));
  }
  EXPECT_THROW(sim::register_job_kind("simulate", [](const std::string&) { return std::string(); }), Error);
}

TEST(JobBackend, SimulateManyGoesThroughTheInstalledBackendWithTheSameResults) {
  std::vector<arch::Design> designs = {solved(zoo_design("tiny:width=2", "zc706")),
                                       solved(uniform_tau(zoo_design("tiny:width=2", "zc706"), td::TdType::Cpd))};
  // The closure path (a portable run made non-portable by a progress callback).
  sim::SimOptions closure;
  closure.progress = [](std::int64_t, std::int64_t) {};
  const auto direct = sim::simulate_many(designs, closure, 2, 120);

  auto rec = std::make_shared<RecordingBackend>();
  {
    Installed with(rec);
    const auto via = sim::simulate_many(designs, {}, 2, 120);
    ASSERT_EQ(via.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) expect_same(direct[i], via[i]);
    // A functional run needs the caller's memory: it stays a local child.
    sim::SimOptions functional;
    functional.functional = true;
    functional.frames = 1;
    EXPECT_TRUE(sim::simulate_many({designs[0]}, functional, 1, 120).front().completed);
  }
  EXPECT_EQ(rec->kinds, std::vector<std::string>{"simulate"});
  EXPECT_EQ(rec->count, 2u);
  EXPECT_EQ(&sim::job_backend(), &sim::job_backend());  // back to the local pool
}

TEST(JobBackend, DesignFileElsewhereWithARelativeNetworkPathTravels) {
  // A design in one folder naming a network file beside it, simulated from
  // another working folder: the payload must carry where the network is.
  const fs::path dir = fs::path(MIXTD_BINARY_DIR) / "tests" / "sim" / "scratch" / "job-backend";
  fs::remove_all(dir);
  fs::create_directories(dir / "net");
  arch::Design d = solved(zoo_design("tiny", "zc706"));
  { std::ofstream(dir / "net" / "tiny.yaml") << net::to_yaml(d.network); }
  d.network_spec = "net/tiny.yaml";
  arch::save_design(d, dir / "d.yaml");
  const arch::Design loaded = arch::load_design(dir / "d.yaml");
  const auto via = sim::simulate_many({loaded}, {}, 1, 120);  // the local back end's payload path
  ASSERT_TRUE(via.front().completed) << via.front().error;
  sim::SimOptions closure;
  closure.progress = [](std::int64_t, std::int64_t) {};
  expect_same(sim::simulate_many({loaded}, closure, 1, 120).front(), via.front());
}
