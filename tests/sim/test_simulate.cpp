// The SystemC pipeline (models/sc, sim/): bit-exact against the golden
// executor, deadlocks reported with the FIFO that caused them, bad designs
// refused, and the analytical model's agreement on random designs. Each
// design runs in its own child process (simulate_many), so one test binary
// can simulate many.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "SearchTestUtil.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/search/Solver.h"
#include "mixtd/sim/Simulate.h"
#include "mixtd/sim/WorkerPool.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;

arch::Design solved(arch::Design d, search::Objective o = search::Objective::Latency) {
  search::SolverOptions opt;
  opt.objective = o;
  return search::solve(d, opt).design;
}

arch::Design named(arch::Design d, const std::string& name) {
  d.name = name;
  return d;
}

// Every kind of block: plain convs, residual add with skip FIFO, pooling,
// global pool, FC (tiny); depthwise (tiny-dw); SVD/CPD engines, grouped
// layers with split/fork/group add/merge and round-robin regroups (random
// τ with up to 8 chunks); random ψ as well as solved ψ.
std::vector<arch::Design> functional_designs() {
  std::vector<arch::Design> v;
  v.push_back(named(solved(zoo_design("tiny:width=2", "zc706")), "tiny solved"));
  v.push_back(named(solved(zoo_design("tiny-dw", "zcu102")), "tiny-dw solved"));
  v.push_back(named(solved(uniform_tau(zoo_design("tiny:width=2", "zc706"), td::TdType::Cpd)), "tiny cpd"));
  v.push_back(named(solved(uniform_tau(zoo_design("tiny:width=2", "zc706"), td::TdType::SvdFilter, 2, 2)),
                    "tiny svd g1=2 g2=2"));
  for (std::uint64_t seed : {3, 7, 11}) {
    arch::Design d = random_tau(zoo_design("tiny:width=2", "zc706"), seed);
    Rng rng(seed);
    random_psi(d, rng);
    v.push_back(named(d, "tiny random tau+psi " + std::to_string(seed)));
  }
  v.push_back(
      named(solved(random_tau(zoo_design("resnet18-fmnist:width=0.25", "u250"), 5)), "resnet18-fmnist random tau"));
  return v;
}

TEST(Simulate, OutputsEqualTheGoldenExecutorBitForBitWithHostStalls) {
  sim::SimOptions o;
  o.functional = true;
  o.frames = 2;
  o.stall_probability = 0.2;
  const auto designs = functional_designs();
  const auto results = sim::simulate_many(designs, o, 0, 120);
  ASSERT_EQ(results.size(), designs.size());
  for (std::size_t i = 0; i < designs.size(); ++i) {
    const auto& r = results[i];
    EXPECT_TRUE(r.completed) << designs[i].name << ": " << r.error;
    EXPECT_TRUE(r.outputs_match) << designs[i].name << ": " << r.mismatch;
  }
}

TEST(Simulate, TooShallowSkipFifoIsReportedAsADeadlockNamingIt) {
  arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  d.fifo_depths["conv1/stage0->add1"] = 1;
  sim::SimOptions o;
  o.frames = 1;
  const auto r = sim::simulate_isolated(d, o, 60);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.error.find("deadlock"), std::string::npos) << r.error;
  bool named_skip = false;
  for (const auto& b : r.blocked)
    named_skip = named_skip || b.find("skip FIFO 'conv1/stage0->add1'") != std::string::npos;
  EXPECT_TRUE(named_skip);
}

TEST(Simulate, CycleLimitStopsTheRunWithAClearMessage) {
  arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  sim::SimOptions o;
  o.cycle_limit = 100;
  const auto r = sim::simulate_isolated(d, o, 60);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.error.find("cycle limit of 100"), std::string::npos) << r.error;
}

TEST(Simulate, FifoDepthZeroIsRefused) {
  arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  d.fifo_depth = 0;
  const auto r = sim::simulate_isolated(d, {}, 60);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.error.find("depth"), std::string::npos) << r.error;
}

// --trace: a VCD with every stream's occupancy, valid, ready and running
// beat counts; every stream moves all its beats, and the last handshake
// falls in the last simulated cycle (the weight preload comes first).
TEST(Simulate, TraceRecordsEveryHandshakeOfEveryStream) {
  const arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  const std::string path = ::testing::TempDir() + "mixtd_trace_test.vcd";
  std::remove(path.c_str());
  sim::SimOptions o;
  o.frames = 2;
  o.trace_path = path;
  const auto r = sim::simulate_isolated(d, o, 60);
  ASSERT_TRUE(r.completed) << r.error;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::map<std::string, std::string> id_of;  // "<stream>.pushed" → VCD id
  std::map<std::string, long long> value;    // VCD id → last value
  std::map<std::string, long long> first;    // VCD id → time of its first change
  std::string line, scope;
  long long t = -1, last_change = -1;
  bool timescale = false;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string a, b, c, e, f;
    ls >> a;
    if (a == "$timescale") timescale = true;
    if (a == "$scope") ls >> b >> scope;
    if (a == "$var") {
      ls >> b >> c >> e >> f;
      id_of[scope + "." + f] = e;
    }
    if (!a.empty() && a[0] == '#') {
      const long long next = std::stoll(a.substr(1));
      EXPECT_GT(next, t) << "time stamps must increase";
      t = next;
    }
    if (!a.empty() && a[0] == 'b') {
      ls >> b;
      value[b] = std::stoll(a.substr(1), nullptr, 2);
      if (t > 0) {
        last_change = t;
        if (!first.count(b)) first[b] = t;
      }
    }
  }
  EXPECT_TRUE(timescale);
  const arch::Graph g = arch::build_graph(d);
  for (const auto& st : g.streams) {
    ASSERT_EQ(st.count, 1) << st.name;
    for (const char* field : {".occupancy", ".valid", ".ready", ".pushed", ".popped"})
      EXPECT_TRUE(id_of.count(st.name + field)) << st.name << field;
    const long long beats = o.frames * (st.words / st.width);
    EXPECT_EQ(value[id_of[st.name + ".pushed"]], beats) << st.name;
    EXPECT_EQ(value[id_of[st.name + ".popped"]], beats) << st.name;
  }
  // 1 ns units at 200 MHz: 5 per cycle. From the first beat into the
  // pipeline to the last handshake: the simulated cycles.
  const long long period = 5;
  const long long start = first[id_of["host_in->conv1/stage0.pushed"]];
  EXPECT_GE(start / period, r.preload_cycles);
  EXPECT_NEAR(static_cast<double>((last_change - start) / period), static_cast<double>(r.cycles), 3.0);
  std::remove(path.c_str());
}

// SystemC's own reports come back as one mixtd::Error line (issue 24), here
// the VCD writer's, which cannot open a trace file in a folder that does not
// exist: not an escaping sc_report, not SystemC's multi-line report on
// stderr. simulate() runs in a child (SystemC elaborates once per process),
// which reports what it caught and what it wrote to stderr.
TEST(Simulate, SystemCReportsBecomeOneErrorLineNamingThePath) {
  const arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  const std::string path = ::testing::TempDir() + "mixtd-no-such-folder/t.vcd";
  sim::SimOptions o;
  o.frames = 1;
  o.trace_path = path;
  const auto r = sim::run_pool(1, [&](std::size_t) {
    const std::string err = ::testing::TempDir() + "mixtd-sc-report-" + std::to_string(::getpid()) + ".txt";
    std::fflush(stderr);
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
    std::string caught = "no error";
    try {
      sim::simulate(d, o);
    } catch (const Error& e) {
      caught = std::string("mixtd::Error: ") + e.what();
    }
    std::cerr.flush();
    std::fflush(stderr);
    std::ifstream in(err);
    const std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(err.c_str());
    return caught + "\nstderr: " + printed;
  });
  // Anything but a mixtd::Error escaping simulate() fails the job.
  ASSERT_TRUE(r.at(0).ok()) << r.at(0).error;
  const std::string out = r.at(0).output;
  const std::string caught = out.substr(0, out.find('\n')), printed = out.substr(out.find('\n') + 9);
  // SystemC's message, the path, and its code to look it up by.
  EXPECT_EQ(caught, "mixtd::Error: simulate: SystemC: cannot open trace file for writing: " + path + " (E701)");
  // Nor did SystemC print its own report ("Error: (E701) … In file: …").
  // Not "stderr is empty": under ASan the runtime warns there about
  // SystemC's coroutine stacks.
  EXPECT_EQ(printed.find("E701"), std::string::npos) << out;
  EXPECT_EQ(printed.find(path), std::string::npos) << out;
}

TEST(Simulate, ASecondSimulationInOneProcessIsRefused) {
  arch::Design d = solved(zoo_design("tiny:width=2", "zc706"));
  sim::SimOptions o;
  o.frames = 1;
  EXPECT_TRUE(sim::simulate(d, o).completed);
  EXPECT_THROW(sim::simulate(d, o), Error);
}

}  // namespace
