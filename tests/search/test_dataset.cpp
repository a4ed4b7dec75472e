// Labelled-data generation (search/Dataset.h): a run killed at a random
// moment and rerun loses and duplicates nothing — the file ends up byte for
// byte equal to an uninterrupted run — and foreign or broken files are
// refused with the file and line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "SearchTestUtil.h"
#include "mixtd/search/Dataset.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::int64_t lines(const fs::path& p) {
  const std::string t = slurp(p);
  return static_cast<std::int64_t>(std::count(t.begin(), t.end(), '\n'));
}

fs::path temp(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / name;
  fs::remove(p);
  return p;
}

search::DatasetOptions options() {
  search::DatasetOptions o;
  o.designs = 24;
  o.seed = 7;
  o.jobs = 2;
  return o;
}

TEST(Dataset, KilledAndRerunLosesAndDuplicatesNothing) {
  const arch::Design base = zoo_design("tiny", "zc706");
  const fs::path ref = temp("mixtd_dataset_ref.csv"), cut = temp("mixtd_dataset_cut.csv");
  search::generate_dataset(base, "tiny", "zc706", ref, options());
  ASSERT_EQ(lines(ref), 2 + 24);

  // Kill a run once it has written a few rows (SIGKILL: no clean-up at all).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      search::generate_dataset(base, "tiny", "zc706", cut, options());
    } catch (...) {
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && (!fs::exists(cut) || lines(cut) < 2 + 5))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::int64_t before = lines(cut) - 2;
  EXPECT_GE(before, 4);
  // A torn last line, as a kill in mid-write would leave.
  { std::ofstream(cut, std::ios::app) << "999,123,ok,1,2"; }

  const std::int64_t written = search::generate_dataset(base, "tiny", "zc706", cut, options());
  EXPECT_EQ(written, 24 - before);
  EXPECT_EQ(slurp(cut), slurp(ref));
  // Complete: a rerun has nothing to do.
  EXPECT_EQ(search::generate_dataset(base, "tiny", "zc706", cut, options()), 0);
  const auto ds = search::read_dataset(cut);
  EXPECT_EQ(static_cast<std::int64_t>(ds.rows.size()) + ds.skipped, 24);
  EXPECT_GE(ds.column("sim_fps_peak"), 0);
  EXPECT_GE(ds.column("conv2.t"), 0);
}

TEST(Dataset, ResumingWithOtherSettingsIsRefusedNamingTheFile) {
  const arch::Design base = zoo_design("tiny", "zc706");
  const fs::path p = temp("mixtd_dataset_other.csv");
  auto o = options();
  o.designs = 2;
  search::generate_dataset(base, "tiny", "zc706", p, o);
  o.seed = 8;
  try {
    search::generate_dataset(base, "tiny", "zc706", p, o);
    FAIL() << "a different seed was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string() + ":1:"), std::string::npos) << e.what();
  }
}

TEST(Dataset, BrokenFilesAreRefusedWithTheLine) {
  const fs::path p = temp("mixtd_dataset_bad.csv");
  auto write = [&](const std::string& text) { std::ofstream(p) << text; };
  const std::string head =
      "# mixtd dataset v1 network=x\nindex,seed,status,a,sim_interval,sim_latency,sim_fps_batch1,sim_fps_peak\n";
  write(head + "0,1,ok,1,2,3,4,5\n1,1,ok,nan,2,3,4,5\n");
  try {
    search::read_dataset(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":4: column 'a'"), std::string::npos) << e.what();
  }
  write(head + "0,1,ok,1,2,3,4\n");
  EXPECT_THROW(search::read_dataset(p), Error);
  write("# mixtd dataset v1 network=x\nindex,seed,status,a,sim_interval\n");
  try {
    search::read_dataset(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing column 'sim_latency'"), std::string::npos) << e.what();
  }
  write("a,b\n1,2\n");
  EXPECT_THROW(search::read_dataset(p), Error);
  // Failed simulations are rows too, skipped and counted.
  write(head + "0,1,ok,1,2,3,4,5\n1,1,failed: deadlock,,,,,\n");
  const auto ds = search::read_dataset(p);
  EXPECT_EQ(ds.rows.size(), 1u);
  EXPECT_EQ(ds.skipped, 1);
}

}  // namespace
