// A pool of forked worker processes: run `count` jobs, each in its own child.
//
// Why processes and not threads: SystemC's kernel state is global and a
// process can elaborate one module hierarchy only once, so every simulation
// must run in a fresh process. Isolation is the other half of the reason: a simulation that
// aborts, segfaults or hangs takes down only its own child, and the pool
// reports it and carries on with the rest of a long dataset run.
//
// How: job i runs `work(i)` in a fork()ed child. The string it returns comes
// back over a pipe; the child's stderr comes back over another. The parent
// reads every running child's pipes concurrently with poll(), so a child
// writing many megabytes never blocks on a full pipe buffer. Each child leads
// its own process group, so a timeout or an interrupt kills whatever the job
// started, too. Children keep the parent's stdout and get /dev/null as stdin.
// This file's translation units do not depend on SystemC.
//
// Caller's obligations:
//   - The parent must not have elaborated SystemC (or started a simulation)
//     before calling: fork() copies the whole address space, so every child
//     would inherit the elaborated hierarchy and could not elaborate its own.
//     Build the pipeline inside `work`, never outside it.
//   - fork() copies only the calling thread. If other threads of the parent
//     hold locks (thread pools of BLAS, OpenMP, LibTorch, a logger), a child
//     that touches the same facility can deadlock; call run_pool before such
//     threads start, or make `work` avoid them. Call run_pool from one thread
//     at a time (it throws if re-entered, e.g. from on_done).
//   - `work` must return or throw; it must not call exit() (that would run
//     the parent's atexit handlers and static destructors in the child). The
//     pool ends children with _exit() for the same reason.
//   - While run_pool runs it owns SIGCHLD, and SIGINT/SIGTERM unless they are
//     ignored; the previous handlers are restored before it returns. On SIGINT
//     or SIGTERM it kills every child's process group, reaps them, restores
//     the handlers and re-raises the signal (so the default action ends the
//     process as it would have); if the signal does not end the process,
//     run_pool throws mixtd::Error.
//   - A process that a job moves out of its process group (setsid, setpgid)
//     escapes the timeout and interrupt kills.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mixtd::sim {

struct JobResult {
  enum class Status {
    Ok,        // work(i) returned; `output` is its string
    Failed,    // work(i) threw (error = what()), or the child exited non-zero or without a result
    Crashed,   // the child died of a signal it did not get from the pool (abort, segfault, OOM killer)
    TimedOut,  // the child ran longer than PoolOptions::timeout_s and was killed (SIGKILL)
  };
  std::size_t index = 0;
  Status status = Status::Ok;
  int exit_code = 0;   // the child's exit status; -1 if it died of a signal
  int signal = 0;      // the signal that ended it (Crashed, TimedOut), else 0
  std::string output;  // what work(i) returned (Ok only)
  // Empty for Ok (an Ok child's stderr is discarded). Otherwise the reason:
  // the exception's what() for a throw, "killed by signal 6 (Aborted)",
  // "timed out after 0.5 s ...", "exited with status 3", followed, if the
  // child wrote any, by "\nstderr:\n" and the last kStderrTailBytes of it.
  std::string error;
  double seconds = 0;  // wall time from fork to the child's end

  bool ok() const { return status == Status::Ok; }
};

// "ok", "failed", "crashed", "timed out".
const char* to_string(JobResult::Status status);

// How much of a child's stderr is kept for `JobResult::error`.
inline constexpr std::size_t kStderrTailBytes = 8192;

struct PoolOptions {
  int jobs = 0;          // children at once; 0 = hardware cores
  double timeout_s = 0;  // per job, wall clock; 0 = none
  // Called in the parent as each job ends (in completion order, not index
  // order): done = jobs finished so far including this one, total = count.
  // If it throws, the pool kills the running children and rethrows.
  std::function<void(const JobResult&, std::size_t done, std::size_t total)> on_done;
};

// Runs work(0) ... work(count - 1), each in its own child process, at most
// options.jobs at a time. Returns one result per job, ordered by index. A
// job's failure, crash or timeout is reported in its result; run_pool itself
// throws mixtd::Error only for bad options or when interrupted (see above).
std::vector<JobResult> run_pool(std::size_t count, const std::function<std::string(std::size_t)>& work,
                                const PoolOptions& options = {});

}  // namespace mixtd::sim
