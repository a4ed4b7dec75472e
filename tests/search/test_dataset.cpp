// Labelled-data generation (search/Dataset.h): a run killed at a random
// moment and rerun loses and duplicates nothing — the file ends up byte for
// byte equal to an uninterrupted run — and foreign or broken files are
// refused with the file and line.
#include <gmock/gmock.h>
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
#include "mixtd/search/Predictor.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;
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

// Found by fuzz_dataset (fuzz/corpus/fuzz_dataset/regress-name-too-long): a
// `network=` longer than the file system allows made the network lookup
// throw std::filesystem::filesystem_error. Such a network is not found, so
// the columns are not checked against it; the rows still are.
TEST(Dataset, ANetworkNameTooLongForTheFileSystemIsNotFound) {
  const fs::path p = temp("mixtd_dataset_long_name.csv");
  const std::string name(300, 'n');
  const std::string head = "# mixtd dataset v1 network=" + name +
                           "\nindex,seed,status,a,sim_interval,sim_latency,sim_fps_batch1,sim_fps_peak\n";
  std::ofstream(p) << head << "0,1,ok,1,2,3,4,5\n";
  const auto ds = search::read_dataset(p);
  EXPECT_EQ(ds.network, name);
  EXPECT_EQ(ds.rows.size(), 1u);
  std::ofstream(p) << head << "0,1,ok,1,2,3,4,5\n1,1,ok,1,2,3,-4,5\n";
  EXPECT_THAT([&] { search::read_dataset(p); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr(p.string() + ":4:"), HasSubstr("sim_fps_batch1"))));
}

// Issue 24: a file whose first line names one network but whose columns are
// another's, and "ok" rows with a rate of 0 or below, are refused naming the
// file and line; a model evaluated on another network's data names both
// files and the first differing feature in one line.
TEST(Dataset, ForeignColumnsAndNonPositiveRatesAreRefused) {
  const fs::path p = temp("mixtd_dataset_foreign.csv");
  auto write = [&](const std::string& text) { std::ofstream(p) << text; };
  const std::string targets = "sim_interval,sim_latency,sim_fps_batch1,sim_fps_peak";
  // tiny's convs are conv1..conv5; these columns are of another network.
  write(
      "# mixtd dataset v1 network=tiny device=zc706\nindex,seed,status,conv1.t,conv1.g1,conv1.g2,conv1.r,"
      "layer1.0.conv1.t,macs,fps_batch1," +
      targets + "\n");
  EXPECT_THAT(
      [&] { search::read_dataset(p); },
      testing::ThrowsMessage<Error>(AllOf(HasSubstr(p.string() + ":2: the first line says network=tiny"),
                                          HasSubstr("column 8 is 'layer1.0.conv1.t' where tiny has 'conv2.t'"))));

  // The right columns, then rows with bad rates.
  const arch::Design base = zoo_design("tiny", "zc706");
  std::string header = "index,seed,status";
  for (const auto& n : search::feature_names(base)) header += "," + n;
  header += "," + targets;
  const std::size_t features = search::feature_names(base).size();
  auto row = [&](int index, const std::string& fps) {
    std::string r = std::to_string(index) + ",1,ok";
    for (std::size_t k = 0; k < features; ++k) r += ",1";
    return r + ",10,10," + fps + ",10\n";
  };
  const std::string head = "# mixtd dataset v1 network=tiny device=zc706\n" + header + "\n";
  write(head + row(0, "5"));
  EXPECT_EQ(search::read_dataset(p).rows.size(), 1u);
  for (const char* bad : {"0", "-5"}) {
    write(head + row(0, "5") + row(1, bad));
    EXPECT_THAT([&] { search::read_dataset(p); },
                testing::ThrowsMessage<Error>(AllOf(HasSubstr(p.string() + ":4: column 'sim_fps_batch1' = " + bad),
                                                    HasSubstr("(index 1): it must be above 0"))));
  }

  // A model trained on other features: one line, both files, first difference.
  const auto ds = search::read_dataset([&] {
    write(head + row(0, "5"));
    return p;
  }());
  std::vector<std::string> model = search::feature_names(base);
  model[4] = "layer1.0.conv1.t";
  try {
    search::labelled_set(ds, search::Target::Fps, model, "rf.bin");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, AllOf(HasSubstr(p.string() + " (network=tiny)"), HasSubstr("rf.bin"),
                         HasSubstr("feature 5 is 'layer1.0.conv1.t' in the model, 'conv2.t' in the data")));
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_LT(m.size(), 400u) << m;
  }
}

}  // namespace
