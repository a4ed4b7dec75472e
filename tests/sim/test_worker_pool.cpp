// Tests of the worker-process pool (mixtd::sim_pool). Every test finishes in
// well under a second; a pool that deadlocks on a full pipe shows up as a
// TimedOut job (each such test sets a timeout) rather than a hung test.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mixtd/sim/WorkerPool.h"
#include "mixtd/support/Error.h"

namespace {

using mixtd::sim::JobResult;
using mixtd::sim::PoolOptions;
using mixtd::sim::run_pool;
using Status = JobResult::Status;
using testing::HasSubstr;
using namespace std::chrono_literals;

static_assert(std::atomic<int>::is_always_lock_free, "counters shared between processes need lock-free atomics");

// Memory shared between the test and the children it forks (MAP_SHARED
// survives fork), so children can report what they saw.
template <class T>
class Shared {
 public:
  Shared() {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    value_ = new (p) T();
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  ~Shared() { ::munmap(value_, sizeof(T)); }
  T* operator->() { return value_; }
  T& operator*() { return *value_; }

 private:
  T* value_;
};

struct Pids {
  std::atomic<int> count{0};
  std::atomic<int> pid[16] = {};
  void add(int p) { pid[count.fetch_add(1)] = p; }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// True once `pid` no longer runs (gone, or a zombie nobody has reaped yet).
bool process_gone(int pid, std::chrono::milliseconds patience = 2000ms) {
  const auto t0 = std::chrono::steady_clock::now();
  do {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return true;
    const auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() - t0 < patience);
  return false;
}

// A leftover would keep ctest's output pipe open and stall the run for the
// test's whole timeout, so a failing test kills what it checked for.
void expect_gone(int pid, const char* what, std::chrono::milliseconds patience = 2000ms) {
  if (process_gone(pid, patience)) return;
  ADD_FAILURE() << what << " " << pid << " is still running";
  ::kill(pid, SIGKILL);
}

int open_fd_count() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  while (::readdir(d)) ++n;
  ::closedir(d);
  return n;
}

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

TEST(WorkerPool, FiftyJobsOnThreeWorkersComeBackOrderedAndCorrect) {
  PoolOptions opt;
  opt.jobs = 3;
  const auto results = run_pool(
      50,
      [](std::size_t i) {
        // Uneven durations, so jobs finish out of index order.
        std::this_thread::sleep_for(std::chrono::milliseconds((i * 37) % 7));
        return "job " + std::to_string(i) + " = " + std::to_string(i * i);
      },
      opt);
  ASSERT_EQ(results.size(), 50u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(results[i].index, i);
    EXPECT_EQ(results[i].status, Status::Ok) << results[i].error;
    EXPECT_EQ(results[i].output, "job " + std::to_string(i) + " = " + std::to_string(i * i));
    EXPECT_EQ(results[i].error, "");
    EXPECT_EQ(results[i].exit_code, 0);
    EXPECT_EQ(results[i].signal, 0);
    EXPECT_GT(results[i].seconds, 0.0);
  }
}

struct Concurrency {
  std::atomic<int> now{0};
  std::atomic<int> peak{0};
};

int peak_concurrency(int jobs, std::size_t count) {
  Shared<Concurrency> c;
  PoolOptions opt;
  opt.jobs = jobs;
  opt.timeout_s = 10;
  const auto results = run_pool(
      count,
      [&](std::size_t) {
        const int mine = c->now.fetch_add(1) + 1;
        int seen = c->peak.load();
        while (mine > seen && !c->peak.compare_exchange_weak(seen, mine)) {
        }
        std::this_thread::sleep_for(30ms);
        c->now.fetch_sub(1);
        return std::string();
      },
      opt);
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.error;
  return c->peak.load();
}

TEST(WorkerPool, ConcurrencyNeverExceedsJobs) {
  const int peak3 = peak_concurrency(3, 15);
  EXPECT_LE(peak3, 3);
  EXPECT_GE(peak3, 2) << "children did not run in parallel at all";
  EXPECT_EQ(peak_concurrency(1, 4), 1);
}

std::string pattern(std::size_t size, std::size_t seed) {
  std::string s(size, '\0');
  for (std::size_t k = 0; k < size; ++k) s[k] = static_cast<char>((k * 131 + seed * 7 + (k >> 13)) & 0xFF);
  return s;
}

TEST(WorkerPool, EightMegabyteResultsArriveIntactFromConcurrentChildren) {
  constexpr std::size_t kSize = 8u << 20;
  PoolOptions opt;
  opt.jobs = 3;
  opt.timeout_s = 20;  // a pool that stops reading a full pipe would time out here
  const auto results = run_pool(
      3, [&](std::size_t i) { return pattern(kSize, i); }, opt);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(results[i].status, Status::Ok) << results[i].error;
    ASSERT_EQ(results[i].output.size(), kSize);
    EXPECT_TRUE(results[i].output == pattern(kSize, i)) << "result bytes differ";
  }
}

TEST(WorkerPool, ChattyStderrDoesNotBlockAndOnlyItsTailIsKept) {
  PoolOptions opt;
  opt.jobs = 2;
  opt.timeout_s = 20;
  const auto results = run_pool(
      2,
      [](std::size_t i) -> std::string {
        const std::string line(1023, 'x');
        for (int k = 0; k < 1024; ++k) std::fprintf(stderr, "%s\n", line.c_str());  // 1 MB
        std::fprintf(stderr, "END-MARKER\n");
        if (i == 1) throw mixtd::Error("failed after chatter");
        return "fine";
      },
      opt);
  EXPECT_EQ(results[0].status, Status::Ok);
  EXPECT_EQ(results[0].output, "fine");
  EXPECT_EQ(results[0].error, "") << "an Ok job's stderr is not reported";
  ASSERT_EQ(results[1].status, Status::Failed);
  EXPECT_EQ(results[1].error.rfind("failed after chatter\nstderr:\n", 0), 0u) << results[1].error.substr(0, 200);
  EXPECT_THAT(results[1].error, HasSubstr("END-MARKER"));
  EXPECT_LE(results[1].error.size(), mixtd::sim::kStderrTailBytes + 100);
}

TEST(WorkerPool, ThrowingChildIsFailedWithItsMessage) {
  PoolOptions opt;
  opt.jobs = 2;
  const auto results = run_pool(
      4,
      [](std::size_t i) -> std::string {
        if (i == 1) throw mixtd::Error("layer conv3: rank 0 is not a legal rank");
        if (i == 2) throw std::out_of_range("index 9 of 4");
        if (i == 3) throw 42;
        return "ok";
      },
      opt);
  EXPECT_EQ(results[0].status, Status::Ok);
  EXPECT_EQ(results[1].status, Status::Failed);
  EXPECT_EQ(results[1].error, "layer conv3: rank 0 is not a legal rank");
  EXPECT_EQ(results[1].exit_code, 1);
  EXPECT_EQ(results[1].output, "");
  EXPECT_EQ(results[2].status, Status::Failed);
  EXPECT_EQ(results[2].error, "index 9 of 4");
  EXPECT_EQ(results[3].status, Status::Failed);
  EXPECT_THAT(results[3].error, HasSubstr("not derived from std::exception"));
}

TEST(WorkerPool, AbortIsCrashedWithSigabrtAndItsStderr) {
  PoolOptions opt;
  opt.jobs = 3;
  const auto results = run_pool(
      3,
      [](std::size_t i) -> std::string {
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);  // no core files from the test
        if (i == 0) {
          std::fprintf(stderr, "about to abort\n");
          std::abort();
        }
        if (i == 1) ::kill(::getpid(), SIGKILL);
        return "survivor";
      },
      opt);
  EXPECT_EQ(results[0].status, Status::Crashed);
  EXPECT_EQ(results[0].signal, SIGABRT);
  EXPECT_EQ(results[0].exit_code, -1);
  EXPECT_THAT(results[0].error, HasSubstr(::strsignal(SIGABRT)));
  EXPECT_THAT(results[0].error, HasSubstr("about to abort"));
  // A SIGKILL the pool did not send is a crash, not a timeout.
  EXPECT_EQ(results[1].status, Status::Crashed);
  EXPECT_EQ(results[1].signal, SIGKILL);
  EXPECT_EQ(results[2].status, Status::Ok);
  EXPECT_EQ(results[2].output, "survivor");
}

TEST(WorkerPool, ExitWithoutResultIsFailed) {
  const auto results = run_pool(2, [](std::size_t i) -> std::string { ::_exit(i == 0 ? 0 : 3); });
  EXPECT_EQ(results[0].status, Status::Failed);
  EXPECT_THAT(results[0].error, HasSubstr("without sending a result"));
  EXPECT_EQ(results[1].status, Status::Failed);
  EXPECT_EQ(results[1].exit_code, 3);
  EXPECT_THAT(results[1].error, HasSubstr("exited with status 3"));
}

TEST(WorkerPool, SleeperTimesOutWhileOtherJobsComplete) {
  PoolOptions opt;
  opt.jobs = 2;
  opt.timeout_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = run_pool(
      6,
      [](std::size_t i) -> std::string {
        if (i == 0) sleep_forever();
        std::this_thread::sleep_for(50ms);
        return std::to_string(i);
      },
      opt);
  EXPECT_LT(seconds_since(t0), 3.0);
  EXPECT_EQ(results[0].status, Status::TimedOut);
  EXPECT_EQ(results[0].signal, SIGKILL);
  EXPECT_THAT(results[0].error, HasSubstr("timed out after 0.5 s"));
  EXPECT_GE(results[0].seconds, 0.5);
  EXPECT_LT(results[0].seconds, 2.5);
  for (std::size_t i = 1; i < 6; ++i) {
    EXPECT_EQ(results[i].status, Status::Ok) << i << ": " << results[i].error;
    EXPECT_EQ(results[i].output, std::to_string(i));
  }
}

TEST(WorkerPool, TimeoutKillsEverythingTheJobStarted) {
  Shared<Pids> pids;
  PoolOptions opt;
  opt.timeout_s = 0.3;
  const auto results = run_pool(
      1,
      [&](std::size_t) -> std::string {
        if (::fork() == 0) {
          pids->add(::getpid());
          sleep_forever();
        }
        sleep_forever();
      },
      opt);
  EXPECT_EQ(results[0].status, Status::TimedOut);
  ASSERT_EQ(pids->count.load(), 1);
  expect_gone(pids->pid[0], "grandchild of the timed-out job");
}

TEST(WorkerPool, JobEndsWhenItsProcessExitsEvenIfALeftoverHoldsItsPipes) {
  Shared<Pids> pids;
  PoolOptions opt;
  opt.timeout_s = 10;
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = run_pool(
      1,
      [&](std::size_t) -> std::string {
        if (::fork() == 0) {  // inherits the result and stderr pipes
          pids->add(::getpid());
          sleep_forever();
        }
        while (pids->count.load() == 0) std::this_thread::sleep_for(1ms);
        return "done";
      },
      opt);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_EQ(results[0].status, Status::Ok) << results[0].error;
  EXPECT_EQ(results[0].output, "done");
  ASSERT_EQ(pids->count.load(), 1);
  expect_gone(pids->pid[0], "leftover of the finished job");
}

TEST(WorkerPool, OnDoneIsCalledOncePerJobInTheParent) {
  struct Call {
    std::size_t index, done, total;
    Status status;
  };
  std::vector<Call> calls;
  const int parent = ::getpid();
  bool in_parent = true;
  PoolOptions opt;
  opt.jobs = 3;
  opt.on_done = [&](const JobResult& r, std::size_t done, std::size_t total) {
    in_parent = in_parent && ::getpid() == parent;
    calls.push_back({r.index, done, total, r.status});
  };
  const auto results = run_pool(
      20,
      [](std::size_t i) -> std::string {
        if (i % 5 == 0) throw mixtd::Error("every fifth fails");
        return {};
      },
      opt);
  EXPECT_TRUE(in_parent);
  ASSERT_EQ(calls.size(), 20u);
  std::set<std::size_t> seen;
  for (std::size_t k = 0; k < calls.size(); ++k) {
    EXPECT_EQ(calls[k].done, k + 1);
    EXPECT_EQ(calls[k].total, 20u);
    EXPECT_EQ(calls[k].status, results[calls[k].index].status);
    seen.insert(calls[k].index);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST(WorkerPool, OnDoneThrowingKillsTheRunningChildren) {
  Shared<Pids> pids;
  PoolOptions opt;
  opt.jobs = 3;
  opt.on_done = [](const JobResult&, std::size_t, std::size_t) { throw std::runtime_error("stop the run"); };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run_pool(
                   5,
                   [&](std::size_t i) -> std::string {
                     if (i == 0) {
                       while (pids->count.load() < 2) std::this_thread::sleep_for(1ms);
                       return "first";
                     }
                     pids->add(::getpid());
                     sleep_forever();
                   },
                   opt),
               std::runtime_error);
  EXPECT_LT(seconds_since(t0), 2.0);
  ASSERT_EQ(pids->count.load(), 2);
  for (int k = 0; k < 2; ++k) expect_gone(pids->pid[k], "child", 0ms);
}

TEST(WorkerPool, SigintKillsTheChildrenAndEndsTheProcess) {
  // Each job starts a grandchild: the children die with their parent anyway
  // (PR_SET_PDEATHSIG), but only killing their process groups gets these.
  Shared<Pids> children, grandchildren;
  const pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {  // a process that runs a pool and gets interrupted
    ::signal(SIGINT, SIG_DFL);
    PoolOptions opt;
    opt.jobs = 3;
    run_pool(
        6,
        [&](std::size_t) -> std::string {
          if (::fork() == 0) {
            grandchildren->add(::getpid());
            sleep_forever();
          }
          children->add(::getpid());
          sleep_forever();
        },
        opt);
    ::_exit(0);  // not reached if the interrupt works
  }
  const auto t0 = std::chrono::steady_clock::now();
  while ((children->count.load() < 3 || grandchildren->count.load() < 3) && seconds_since(t0) < 5)
    std::this_thread::sleep_for(5ms);
  ::kill(runner, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(runner, &status, 0), runner);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "runner status " << status;
  EXPECT_EQ(children->count.load(), 3);
  EXPECT_EQ(grandchildren->count.load(), 3);
  for (int k = 0; k < children->count.load(); ++k) expect_gone(children->pid[k], "child");
  for (int k = 0; k < grandchildren->count.load(); ++k) expect_gone(grandchildren->pid[k], "grandchild");
}

TEST(WorkerPool, LeavesNoFileDescriptorsOrSignalHandlersBehind) {
  struct sigaction mine {};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  struct sigaction before {};
  ::sigaction(SIGCHLD, &mine, &before);
  const int fds = open_fd_count();
  const auto results = run_pool(8, [](std::size_t i) { return std::to_string(i); });
  for (const auto& r : results) EXPECT_TRUE(r.ok());
  EXPECT_EQ(open_fd_count(), fds);
  struct sigaction after {};
  ::sigaction(SIGCHLD, &before, &after);
  EXPECT_EQ(after.sa_handler, mine.sa_handler);
}

TEST(WorkerPool, BadOptionsAreClearErrors) {
  const auto work = [](std::size_t) { return std::string(); };
  PoolOptions opt;
  opt.jobs = -2;
  try {
    run_pool(1, work, opt);
    ADD_FAILURE() << "negative jobs accepted";
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("jobs must be >= 0"));
    EXPECT_THAT(e.what(), HasSubstr("-2"));
  }
  opt.jobs = 1;
  opt.timeout_s = -1;
  EXPECT_THROW(run_pool(1, work, opt), mixtd::Error);

  bool called = false;
  opt.timeout_s = 0;
  opt.on_done = [&](const JobResult&, std::size_t, std::size_t) { called = true; };
  EXPECT_TRUE(run_pool(0, work, opt).empty());
  EXPECT_FALSE(called);
}

}  // namespace
