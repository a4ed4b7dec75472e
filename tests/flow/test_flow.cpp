// mixtd flow on the zoo network `tiny` (issue 23): killed in its search and
// again in its co-simulation, then rerun, it ends with the artefacts of an
// uninterrupted run; a changed target reruns the search and what follows
// but not the network step; report.json holds the commands' figures and
// report.html shows them; a target nothing reaches stops at the search with
// one line and leaves no stamp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "mixtd/report/Format.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::HasSubstr;

// One folder per test process: ctest runs each test in its own process, in
// parallel, and each of them makes its own uninterrupted run.
const fs::path kRoot = fs::path(MIXTD_BINARY_DIR) / "tests" / "flow" / ("runs." + std::to_string(::getpid()));

std::string flow_yaml(double target) {
  std::ostringstream s;
  s << "name: tiny-flow\nnetwork: tiny\ndevice: zc706\ntarget_fps: " << target
    << "\nsearch: {oracle: analytical, accuracy: fidelity, population: 4, mutations: 6, crossovers: 6, "
       "generations: 8, patience: 0}\nfinetune: {epochs: 0}\ncosim: {frames: 2}\npackage: {frames: 2}\n";
  return s.str();
}

fs::path write_flow(const std::string& name, double target) {
  fs::create_directories(kRoot);
  const fs::path f = kRoot / (name + ".yaml");
  std::ofstream(f) << flow_yaml(target);
  return f;
}

struct Ran {
  int status = -1;
  std::string out, err;
};

// mixtd flow FLOW -o DIR in its own process group; `kill_when` (polled
// every 5 ms) ends the whole group with SIGKILL, as a user's kill -9 would.
Ran run_flow(const fs::path& flow, const fs::path& dir, const std::function<bool()>& kill_when = {}) {
  const fs::path out = dir.string() + ".out", err = dir.string() + ".err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
    ::execl(MIXTD_EXE, MIXTD_EXE, "flow", flow.c_str(), "-o", dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  int st = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (kill_when && kill_when()) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Ran r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::ifstream o(out), e(err);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t lines(const fs::path& p) {
  const std::string s = read(p);
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A JSON artefact without the figures that are wall times or paths.
json stable(json j) {
  if (j.is_object()) {
    for (const char* k :
         {"wall_seconds", "build_seconds", "run_seconds", "cycles_per_second", "build_dir", "built", "date", "seconds"})
      j.erase(k);
  }
  for (auto& [k, v] : j.items())
    if (v.is_object() || v.is_array()) v = stable(v);
  return j;
}

json report_figures(const fs::path& dir) {
  json j = json::parse(read(dir / "report.json"));
  j.erase("steps");
  return stable(j);
}

int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// An uninterrupted run, made once per process; each test checks that it
// succeeded (a failure in SetUpTestSuite would only skip the tests).
class Flow : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(kRoot);
    clean_ = kRoot / "clean";
    clean_run_ = run_flow(write_flow("clean", 300000), clean_);
  }
  static void TearDownTestSuite() { fs::remove_all(kRoot); }
  void SetUp() override { ASSERT_EQ(clean_run_.status, 0) << clean_run_.out << clean_run_.err; }
  static fs::path clean_;
  static Ran clean_run_;
};
fs::path Flow::clean_;
Ran Flow::clean_run_;

TEST_F(Flow, KilledInTheSearchAndInCosimResumesToTheSameArtefacts) {
  const fs::path flow = write_flow("killed", 300000), dir = kRoot / "killed";
  // In the search, once it has checkpointed a generation.
  const Ran a = run_flow(flow, dir, [&] { return lines(dir / "search/generations.csv") >= 3; });
  EXPECT_EQ(a.status, 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(dir / ".flow/search.json")) << "the search finished before the kill: resume untested";
  // In the co-simulation, once the RTL is stamped.
  const Ran b = run_flow(flow, dir, [&] { return fs::exists(dir / ".flow/rtl.json"); });
  EXPECT_EQ(b.status, 128 + SIGKILL);
  EXPECT_THAT(b.out, HasSubstr("network: unchanged"));
  EXPECT_FALSE(fs::exists(dir / ".flow/cosim.json"));
  const Ran c = run_flow(flow, dir);
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("search: unchanged"));
  EXPECT_THAT(c.out, HasSubstr("rtl: unchanged"));
  for (const char* f : {"search/best.yaml", "search/candidates.csv", "search/generations.csv", "rtl/mixtd_top.sv",
                        "package/data/weights.bin", "package/data/expected.bin", "package/rtl/mixtd_kernel.sv"})
    EXPECT_EQ(read(dir / f), read(clean_ / f)) << f;
  for (const char* f : {"simulate/simulate.json", "simulate/analysis.json", "cosim/cosim.json"})
    EXPECT_EQ(stable(json::parse(read(dir / f))), stable(json::parse(read(clean_ / f)))) << f;
  EXPECT_EQ(report_figures(dir), report_figures(clean_));
}

TEST_F(Flow, ANewTargetRerunsTheSearchAndWhatFollowsOnly) {
  const fs::path dir = kRoot / "retarget";
  fs::copy(clean_, dir, fs::copy_options::recursive);
  const std::string network_stamp = read(dir / ".flow/network.json");
  const Ran r = run_flow(write_flow("retarget", 310000), dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("network: unchanged"));
  for (const char* step : {"search", "finetune", "simulate", "rtl", "cosim", "package"})
    EXPECT_THAT(r.out, Not(HasSubstr(std::string(step) + ": unchanged"))) << step;
  EXPECT_EQ(read(dir / ".flow/network.json"), network_stamp);
  EXPECT_THAT(read(dir / "search/log.txt"), HasSubstr("--target-fps 310000.000"));
}

TEST_F(Flow, TheReportHoldsTheCommandsFigures) {
  const json rep = json::parse(read(clean_ / "report.json"));
  const json sim = json::parse(read(clean_ / "simulate/simulate.json"));
  const json cos = json::parse(read(clean_ / "cosim/cosim.json"));
  const json ana = json::parse(read(clean_ / "simulate/analysis.json"));
  const std::string html = read(clean_ / "report.html");
  const auto same = [&](const json& in_report, double from_command, const char* what) {
    ASSERT_TRUE(in_report.is_number()) << what << ": " << in_report.dump();
    EXPECT_EQ(mixtd::report::format_number(in_report.get<double>()), mixtd::report::format_number(from_command))
        << what;
    EXPECT_THAT(html, HasSubstr(mixtd::report::format_number(from_command))) << what;
  };
  same(rep["headline"]["fps_batch1_systemc"], sim["fps_batch1"].get<double>(), "SystemC FPS");
  same(rep["headline"]["fps_batch1_analytical"], ana["fps_batch1"].get<double>(), "analytical FPS");
  same(rep["headline"]["latency_cycles"], ana["latency_cycles_batch1"].get<double>(), "latency");
  bool rtl_seen = false;
  for (const auto& row : rep["agreement"]["rows"])
    if (row["name"].get<std::string>().find("latency") != std::string::npos) {
      same(row["rtl"], cos["latency"][0].get<double>(), "RTL latency");
      same(row["systemc"], sim["latency_cycles"][0].get<double>(), "SystemC latency");
      rtl_seen = true;
    }
  EXPECT_TRUE(rtl_seen);
  EXPECT_EQ(rep["layers"]["rows"].size(), ana["layers"].size());
  // Against the undecomposed design: the search's figures (summary.json),
  // read, not recomputed; the ratios from them and the final design's.
  const json und = json::parse(read(clean_ / "search/summary.json")).at("undecomposed");
  const json& vs = rep["headline"]["versus_undecomposed"];
  ASSERT_TRUE(und.at("fits").get<bool>()) << und.dump();
  same(vs["undecomposed_fps_batch1_analytical"], und["fps_analytical"].get<double>(), "undecomposed FPS");
  same(vs["undecomposed_fps_batch1_systemc"], und["fps_systemc"].get<double>(), "undecomposed SystemC FPS");
  same(vs["fps_ratio_analytical"], ana["fps_batch1"].get<double>() / und["fps_analytical"].get<double>(), "FPS ×");
  same(vs["fps_ratio_systemc"], sim["fps_batch1"].get<double>() / und["fps_systemc"].get<double>(), "SystemC FPS ×");
  const auto bytes = [](const json& mbit) { return static_cast<double>(std::llround(mbit.get<double>() * 1e6 / 8)); };
  same(vs["weight_ratio"], bytes(und["weight_mbit"]) / bytes(ana["weight_mbit"]), "weights ×");
  EXPECT_THAT(html, HasSubstr("</b> the undecomposed "));
  // The seeded start's baselines and the answer, as candidates.csv and summary.json have them.
  std::vector<std::string> baselines;
  for (const auto& b : rep["search"]["baselines"]) baselines.push_back(b["name"].get<std::string>());
  EXPECT_FALSE(baselines.empty());
  for (const auto& b : baselines) EXPECT_THAT(html, HasSubstr(">" + b + "</text>")) << b;  // labelled in the scatter
  const json best = json::parse(read(clean_ / "search/summary.json")).at("best");
  same(rep["search"]["answer"]["fps"], best["fps_oracle"].get<double>(), "the answer's FPS");
  same(rep["search"]["answer"]["accuracy_pct"], 100 * best["fitness"].get<double>(), "the answer's fitness");
  EXPECT_THAT(read(clean_ / "search/accuracy-fps.svg"), HasSubstr(">answer</text>"));
  for (const auto& s : rep["steps"]) EXPECT_NE(s["status"], "not-run") << s.dump();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  if (sh("command -v xmllint >/dev/null 2>&1") == 0) {
    EXPECT_EQ(sh("xmllint --noout '" + (clean_ / "report.html").string() + "'"), 0);
  }
}

TEST(FlowErrors, ATargetNothingReachesStopsAtTheSearch) {
  const fs::path dir = kRoot / "far";
  fs::remove_all(dir);
  const Ran r = run_flow(write_flow("far", 9e7), dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("mixtd: error: step 'search' failed (exit 1): no valid design among"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(fs::exists(dir / ".flow/network.json"));
  EXPECT_FALSE(fs::exists(dir / ".flow/search.json"));
  const json rep = json::parse(read(dir / "report.json"));  // a report of what ran
  for (const auto& s : rep["steps"])
    if (s["name"] == "search") {
      EXPECT_EQ(s["status"], "not-run");
    }
  fs::remove_all(kRoot);
}

}  // namespace
