// The MPI back end under a real mpirun (label mpi): the same seed gives the
// same files as the local pool, a killed rank loses nothing that a rerun of
// the same command does not complete, and misuse is one clear line.
//
// mpirun runs with --oversubscribe (3 ranks on a 2-core machine: rank 0
// mostly sleeps while it waits) and, as CI runs as root, with Open MPI's
// two root variables set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "RunCli.h"

namespace fs = std::filesystem;
using mixtd::testing_cli::count_lines;
using mixtd::testing_cli::Result;
using ::testing::HasSubstr;

namespace {

const std::string kMixtd = MIXTD_EXE;

std::string mpirun(int ranks) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return std::string(MIXTD_MPIRUN) + " --oversubscribe -n " + std::to_string(ranks) + " ";
}

Result shell(const std::string& cmd) {
  Result r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(MIXTD_BINARY_DIR) / "tests" / "cluster" / "scratch" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int lines_of(const fs::path& p) { return count_lines(slurp(p)); }

// The pid of the mpirun rank `rank` whose command line mentions `marker`.
pid_t find_rank(int rank, const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = slurp(e.path() / "cmdline"), environ = slurp(e.path() / "environ");
    if (cmdline.find(marker) == std::string::npos || cmdline.find("mpirun") != std::string::npos) continue;
    if (environ.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') != std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

}  // namespace

TEST(Mpi, DatasetIsByteIdenticalToTheLocalPool) {
  const fs::path d = scratch("dataset");
  const std::string net = " dataset generate --network resnet18-fmnist:width=0.25 --device u250 --seed 5 ";
  const std::string args = net + "-n 24 ";
  const Result local = shell(kMixtd + args + "--jobs 2 -o " + (d / "local.csv").string());
  ASSERT_EQ(local.code, 0) << local.out;
  const Result mpi = shell(mpirun(3) + kMixtd + args + "--mpi -o " + (d / "mpi.csv").string());
  ASSERT_EQ(mpi.code, 0) << mpi.out;
  EXPECT_THAT(mpi.out, HasSubstr("mpi: 2 workers on 1 host"));
  EXPECT_EQ(lines_of(d / "mpi.csv"), 2 + 24);
  EXPECT_EQ(slurp(d / "local.csv"), slurp(d / "mpi.csv"));

  // Failed simulations (here: every one times out) are failed rows on both
  // back ends, not dead workers, and read the same.
  const std::string slow = net + "-n 4 --timeout 0.001 ";
  ASSERT_EQ(shell(kMixtd + slow + "--jobs 2 -o " + (d / "local-fail.csv").string()).code, 0);
  const Result mpi_fail = shell(mpirun(3) + kMixtd + slow + "--mpi -o " + (d / "mpi-fail.csv").string());
  ASSERT_EQ(mpi_fail.code, 0) << mpi_fail.out;
  EXPECT_THAT(slurp(d / "mpi-fail.csv"), HasSubstr("failed: simulation timed out"));
  EXPECT_EQ(slurp(d / "local-fail.csv"), slurp(d / "mpi-fail.csv"));
}

TEST(Mpi, SearchGivesTheLocalPoolsResult) {
  const fs::path d = scratch("search");
  const std::string args =
      " search tiny --device zc706 --accuracy fidelity --oracle systemc --target-fps 30000 --budget 0.3 "
      "--generations 3 --population 4 --mutations 4 --crossovers 2 --finetune-epochs 0 --layer-drop -1 --seed 3 ";
  const Result local = shell(kMixtd + args + "--jobs 2 -o " + (d / "local").string());
  ASSERT_EQ(local.code, 0) << local.out;
  const Result mpi = shell(mpirun(3) + kMixtd + args + "--mpi -o " + (d / "mpi").string());
  ASSERT_EQ(mpi.code, 0) << mpi.out;
  // Every output but the wall-clock ones (timing.csv, wall.csv, the time
  // axes of checkpoint.json, final.json and convergence-time.svg, which
  // differ between any two runs).
  for (const char* f : {"best.yaml", "summary.json", "candidates.csv", "generations.csv", "labels.csv",
                        "convergence.svg", "accuracy-fps.svg"}) {
    ASSERT_TRUE(fs::exists(d / "mpi" / f)) << f;
    EXPECT_EQ(slurp(d / "local" / f), slurp(d / "mpi" / f)) << f;
  }
  // SystemC labelled designs on the workers: the labels file has rows.
  EXPECT_GT(lines_of(d / "mpi" / "labels.csv"), 5);
}

TEST(Mpi, KilledRankEndsTheRunAndTheSameCommandCompletesTheFile) {
  const fs::path d = scratch("kill");
  const fs::path csv = d / "killed.csv";
  const std::string args = " dataset generate --network resnet18 --device u250 -n 10 --seed 7 ";
  const std::string cmd = mpirun(3) + kMixtd + args + "--mpi -o " + csv.string();
  const pid_t sh = ::fork();
  ASSERT_GE(sh, 0);
  if (sh == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", (cmd + " > " + (d / "first.log").string() + " 2>&1").c_str(), nullptr);
    ::_exit(127);
  }
  // After the first batch (2 header lines + 4 rows), while the next runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((!fs::exists(csv) || lines_of(csv) < 6) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int before = lines_of(csv);
  const pid_t rank1 = find_rank(1, csv.string());
  ASSERT_GT(rank1, 0) << "rank 1 not found; " << before << " lines";
  ASSERT_EQ(::kill(rank1, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(sh, &status, 0), sh);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_THAT(slurp(d / "first.log"), HasSubstr("exited on signal 9"));
  const int after_kill = lines_of(csv);
  EXPECT_GE(after_kill, 6);
  EXPECT_LT(after_kill, 2 + 10) << "the run finished before the kill: nothing was tested";

  const Result rerun = shell(cmd);
  ASSERT_EQ(rerun.code, 0) << rerun.out;
  EXPECT_THAT(rerun.out, HasSubstr("resuming at row " + std::to_string(after_kill - 2)));
  const Result local = shell(kMixtd + args + "--jobs 2 -o " + (d / "local.csv").string());
  ASSERT_EQ(local.code, 0) << local.out;
  EXPECT_EQ(slurp(csv), slurp(d / "local.csv"));  // nothing lost, nothing twice
}

TEST(Mpi, WithoutMpirunOrWithOneRankIsOneClearLine) {
  const fs::path d = scratch("misuse");
  const std::string args = " dataset generate --network tiny --device zc706 -n 2 --mpi -o ";
  // Not under mpirun (the test itself is not: no launcher variables).
  ASSERT_EQ(std::getenv("OMPI_COMM_WORLD_SIZE"), nullptr);
  const Result alone = shell(kMixtd + args + (d / "a.csv").string());
  EXPECT_EQ(alone.code, 1);
  EXPECT_EQ(count_lines(alone.out), 1) << alone.out;
  EXPECT_THAT(alone.out, HasSubstr("mixtd: error: --mpi: this process was not started by mpirun"));
  EXPECT_FALSE(fs::exists(d / "a.csv"));

  const Result one = shell(mpirun(1) + kMixtd + args + (d / "b.csv").string());
  EXPECT_NE(one.code, 0);
  EXPECT_THAT(one.out, HasSubstr("mixtd: error: --mpi: mpirun started 1 rank"));
  EXPECT_FALSE(fs::exists(d / "b.csv"));

  // Bad input on rank 0 stops the workers too: the job ends, nothing hangs.
  const Result bad = shell(mpirun(3) + kMixtd + " dataset generate --network nosuchnet --device zc706 -n 2 --mpi -o " +
                           (d / "c.csv").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.out, HasSubstr("mixtd: error:"));
  EXPECT_THAT(bad.out, HasSubstr("nosuchnet"));
  EXPECT_FALSE(fs::exists(d / "c.csv"));
}
