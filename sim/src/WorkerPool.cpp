#include "mixtd/sim/WorkerPool.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <thread>

#include "mixtd/support/Error.h"

namespace mixtd::sim {

const char* to_string(JobResult::Status status) {
  switch (status) {
    case JobResult::Status::Ok:
      return "ok";
    case JobResult::Status::Failed:
      return "failed";
    case JobResult::Status::Crashed:
      return "crashed";
    case JobResult::Status::TimedOut:
      return "timed out";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

// First byte of the result pipe: did work() return or throw? The payload
// (returned string or what()) follows. A child that dies before writing the
// tag, or mid-payload, is classified by its exit status instead.
constexpr char kTagOk = 'O';
constexpr char kTagThrew = 'E';

// Exit codes of our own children; only the pool's classification reads them.
constexpr int kExitThrew = 1;
constexpr int kExitPipeFailed = 3;  // the parent stopped reading (it was killed)

// Bytes read from one pipe per poll() wake-up, so a child that writes
// without pause cannot starve the timeout checks of the others.
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kMaxReadPerWake = 1024 * 1024;

// The self-pipe trick: signal handlers only set a flag and write a byte to
// this pipe, which poll() watches, so a SIGCHLD or SIGINT arriving just
// before poll() still wakes it (checking a flag and then sleeping would race).
volatile std::sig_atomic_t g_wake_fd = -1;
volatile std::sig_atomic_t g_interrupt = 0;
std::atomic<bool> g_busy{false};

extern "C" void pool_signal_handler(int signo) {
  const int saved_errno = errno;
  if (signo != SIGCHLD) g_interrupt = signo;
  const int fd = g_wake_fd;
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signo);
    // If the pipe is full a wake-up is already pending; losing this byte is fine.
    [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

std::string errno_text() { return std::strerror(errno); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool set_nonblocking_cloexec(int fd) {
  const int fl = ::fcntl(fd, F_GETFL);
  const int fdfl = ::fcntl(fd, F_GETFD);
  return fl >= 0 && fdfl >= 0 && ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 &&
         ::fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) == 0;
}

// Owns the pool's signal handling for the duration of one run_pool call and
// restores what was there before, whichever way the call ends.
class SignalScope {
 public:
  SignalScope() {
    if (::pipe(wake_) != 0) throw Error("run_pool: cannot create the wake-up pipe: " + errno_text());
    set_nonblocking_cloexec(wake_[0]);
    set_nonblocking_cloexec(wake_[1]);
    g_interrupt = 0;
    g_wake_fd = wake_[1];

    struct sigaction sa {};
    sa.sa_handler = pool_signal_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    ::sigaction(SIGCHLD, &sa, &old_chld_);
    chld_installed_ = true;
    // A shell starts background jobs with SIGINT ignored; keep it that way.
    for (auto [signo, old, installed] :
         {std::tuple{SIGINT, &old_int_, &int_installed_}, std::tuple{SIGTERM, &old_term_, &term_installed_}}) {
      ::sigaction(signo, nullptr, old);
      if (old->sa_handler != SIG_IGN) {
        ::sigaction(signo, &sa, nullptr);
        *installed = true;
      }
    }
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
  ~SignalScope() { restore(); }

  void restore() {
    if (chld_installed_) ::sigaction(SIGCHLD, &old_chld_, nullptr);
    if (int_installed_) ::sigaction(SIGINT, &old_int_, nullptr);
    if (term_installed_) ::sigaction(SIGTERM, &old_term_, nullptr);
    chld_installed_ = int_installed_ = term_installed_ = false;
    g_wake_fd = -1;
    close_fd(wake_[0]);
    close_fd(wake_[1]);
  }

  // In a fresh child: back to default dispositions for what we installed, so
  // the child's signals neither wake the parent's pipe nor get swallowed.
  void reset_in_child() {
    if (chld_installed_) ::signal(SIGCHLD, SIG_DFL);
    if (int_installed_) ::signal(SIGINT, SIG_DFL);
    if (term_installed_) ::signal(SIGTERM, SIG_DFL);
    g_wake_fd = -1;
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  void drain() {
    char buf[256];
    while (::read(wake_[0], buf, sizeof buf) > 0) {
    }
  }

  int wake_fd() const { return wake_[0]; }

 private:
  int wake_[2] = {-1, -1};
  struct sigaction old_chld_ {};
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  bool chld_installed_ = false, int_installed_ = false, term_installed_ = false;
};

// Blocks the signals the pool handles across fork(), so neither side runs a
// handler in the window before the child has reset them.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  BlockSignals(const BlockSignals&) = delete;
  BlockSignals& operator=(const BlockSignals&) = delete;
  ~BlockSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  const sigset_t& previous() const { return old_; }

 private:
  sigset_t old_;
};

struct Child {
  std::size_t index = 0;
  pid_t pid = -1;
  int out_fd = -1;  // result pipe, read end
  int err_fd = -1;  // stderr pipe, read end
  Clock::time_point start;
  Clock::time_point deadline = Clock::time_point::max();
  bool timed_out = false;
  std::string out;
  std::string err;
  bool err_truncated = false;
};

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Runs in the child; never returns. Only _exit() leaves it: exit() would run
// the parent's atexit handlers and static destructors a second time.
[[noreturn]] void child_main(std::size_t index, const std::function<std::string(std::size_t)>& work, int out_w,
                             int err_w, pid_t parent, SignalScope& signals, const std::vector<Child>& siblings,
                             const sigset_t& parent_mask) {
  ::setpgid(0, 0);  // lead our own group, so the pool can kill everything the job starts
#ifdef __linux__
  // Die with the parent even if it is SIGKILLed and cannot clean up.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitPipeFailed);
#else
  (void)parent;
#endif
  signals.reset_in_child();
  ::pthread_sigmask(SIG_SETMASK, &parent_mask, nullptr);
  for (const Child& s : siblings) {
    if (s.out_fd >= 0) ::close(s.out_fd);
    if (s.err_fd >= 0) ::close(s.err_fd);
  }
  // A child is not in the terminal's foreground group; reading the terminal
  // would stop it (SIGTTIN) until the timeout.
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    if (null_fd != STDIN_FILENO) ::close(null_fd);
  }
  ::dup2(err_w, STDERR_FILENO);
  if (err_w != STDERR_FILENO) ::close(err_w);

  char tag = kTagOk;
  int code = 0;
  std::string payload;
  try {
    payload = work(index);
  } catch (const std::exception& e) {
    tag = kTagThrew;
    code = kExitThrew;
    payload = e.what();
  } catch (...) {
    tag = kTagThrew;
    code = kExitThrew;
    payload = "threw an exception not derived from std::exception";
  }
  // _exit() does not flush stdio; what work() printed should still appear.
  std::cout.flush();
  std::fflush(nullptr);
  if (!write_all(out_w, &tag, 1) || !write_all(out_w, payload.data(), payload.size())) code = kExitPipeFailed;
  ::_exit(code);
}

// Reads what is available on `fd` into the child's buffers; closes it at EOF.
void read_pipe(Child& c, int& fd, bool is_stderr, std::size_t limit) {
  char buf[kReadChunk];
  std::size_t total = 0;
  while (fd >= 0 && total < limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      if (!is_stderr) {
        c.out.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      c.err.append(buf, static_cast<std::size_t>(n));
      // Keep only the tail, trimming in batches so the copy is amortised.
      if (c.err.size() > 2 * kStderrTailBytes) {
        c.err.erase(0, c.err.size() - kStderrTailBytes);
        c.err_truncated = true;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_fd(fd);  // EOF, or an error that makes the pipe useless
  }
}

std::string format_seconds(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

std::string describe_signal(int signo) {
  const char* name = ::strsignal(signo);
  return "signal " + std::to_string(signo) + " (" + (name ? name : "unknown") + ")";
}

JobResult classify(Child& c, int status, double timeout_s) {
  JobResult r;
  r.index = c.index;
  r.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
  const bool tagged = !c.out.empty() && (c.out[0] == kTagOk || c.out[0] == kTagThrew);

  if (WIFSIGNALED(status)) {
    r.exit_code = -1;
    r.signal = WTERMSIG(status);
    if (c.timed_out) {
      r.status = JobResult::Status::TimedOut;
      r.error = "timed out after " + format_seconds(timeout_s) + " s; the pool killed its process group (SIGKILL)";
    } else {
      r.status = JobResult::Status::Crashed;
      r.error = "killed by " + describe_signal(r.signal);
      if (WCOREDUMP(status)) r.error += ", core dumped";
      if (r.signal == SIGKILL) r.error += " (not sent by the pool: out of memory?)";
    }
  } else {
    r.exit_code = WEXITSTATUS(status);
    if (r.exit_code == 0 && tagged && c.out[0] == kTagOk) {
      r.status = JobResult::Status::Ok;
      c.out.erase(0, 1);
      r.output = std::move(c.out);
      return r;  // an Ok job's stderr is not reported
    }
    r.status = JobResult::Status::Failed;
    if (tagged && c.out[0] == kTagThrew) {
      r.error = c.out.substr(1);
    } else if (r.exit_code == 0) {
      r.error = "exited with status 0 without sending a result (did work() call _exit?)";
    } else {
      r.error = "exited with status " + std::to_string(r.exit_code);
      if (r.exit_code == kExitPipeFailed && tagged) r.error += " (could not send its result to the pool)";
    }
  }
  if (!c.err.empty()) {
    if (c.err.size() > kStderrTailBytes) {
      c.err.erase(0, c.err.size() - kStderrTailBytes);
      c.err_truncated = true;
    }
    r.error += "\nstderr:\n";
    if (c.err_truncated) r.error += "[...]";
    r.error += c.err;
  }
  return r;
}

// Kills and reaps every running child on the way out of run_pool when it
// leaves by an exception (on_done threw, an interrupt, bad_alloc).
class ChildReaper {
 public:
  explicit ChildReaper(std::vector<Child>& running) : running_(running) {}
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;
  ~ChildReaper() { kill_all(); }

  void kill_all() {
    for (Child& c : running_) ::kill(-c.pid, SIGKILL);
    for (Child& c : running_) {
      while (::waitpid(c.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      close_fd(c.out_fd);
      close_fd(c.err_fd);
    }
    running_.clear();
  }

 private:
  std::vector<Child>& running_;
};

class BusyGuard {
 public:
  BusyGuard() {
    if (g_busy.exchange(true))
      throw Error(
          "run_pool: already running (it owns SIGCHLD/SIGINT while it runs; call it from one thread at a time "
          "and not from on_done)");
  }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;
  ~BusyGuard() { g_busy = false; }
};

}  // namespace

std::vector<JobResult> run_pool(std::size_t count, const std::function<std::string(std::size_t)>& work,
                                const PoolOptions& options) {
  require(static_cast<bool>(work), "run_pool: no work function given");
  require(options.jobs >= 0,
          "run_pool: jobs must be >= 0 (0 = one per hardware core), got " + std::to_string(options.jobs));
  require(std::isfinite(options.timeout_s) && options.timeout_s >= 0,
          "run_pool: timeout_s must be >= 0 seconds (0 = no timeout), got " + format_seconds(options.timeout_s));
  std::vector<JobResult> results(count);
  if (count == 0) return results;

  std::size_t jobs =
      options.jobs > 0 ? static_cast<std::size_t>(options.jobs) : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min(jobs, count);
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.timeout_s));

  BusyGuard busy;
  SignalScope signals;
  std::vector<Child> running;
  running.reserve(jobs);
  ChildReaper reaper(running);
  const pid_t self = ::getpid();
  std::size_t next = 0, done = 0;

  auto finish = [&](JobResult r) {
    const std::size_t i = r.index;
    results[i] = std::move(r);
    ++done;
    if (options.on_done) options.on_done(results[i], done, count);
  };

  // A job that cannot even start (out of processes or file descriptors) is
  // reported as Failed like any other, so the rest of a long run survives.
  auto start_failed = [&](std::size_t i, const std::string& what) {
    JobResult r;
    r.index = i;
    r.status = JobResult::Status::Failed;
    r.exit_code = -1;
    r.error = "could not start the child: " + what;
    finish(std::move(r));
  };

  auto start = [&](std::size_t i) {
    int out_p[2], err_p[2];
    if (::pipe(out_p) != 0) return start_failed(i, "pipe: " + errno_text());
    if (::pipe(err_p) != 0) {
      const std::string e = errno_text();
      ::close(out_p[0]);
      ::close(out_p[1]);
      return start_failed(i, "pipe: " + e);
    }
    set_nonblocking_cloexec(out_p[0]);
    set_nonblocking_cloexec(err_p[0]);
    // Output buffered in the parent's stdio would otherwise be copied into
    // the child and printed once more when the child flushes.
    std::cout.flush();
    std::fflush(nullptr);

    pid_t pid;
    {
      BlockSignals blocked;
      pid = ::fork();
      if (pid == 0) {
        ::close(out_p[0]);
        ::close(err_p[0]);
        child_main(i, work, out_p[1], err_p[1], self, signals, running, blocked.previous());
      }
    }
    const std::string fork_error = pid < 0 ? errno_text() : "";
    ::close(out_p[1]);
    ::close(err_p[1]);
    if (pid < 0) {
      ::close(out_p[0]);
      ::close(err_p[0]);
      return start_failed(i, "fork: " + fork_error);
    }
    // Also set in the parent: whichever runs first, the group exists before
    // the parent could need to kill it.
    ::setpgid(pid, pid);
    Child c;
    c.index = i;
    c.pid = pid;
    c.out_fd = out_p[0];
    c.err_fd = err_p[0];
    c.start = Clock::now();
    if (options.timeout_s > 0) c.deadline = c.start + timeout;
    running.push_back(std::move(c));
  };

  std::vector<pollfd> fds;
  while (next < count || !running.empty()) {
    while (running.size() < jobs && next < count) start(next++);
    if (running.empty()) continue;

    fds.clear();
    fds.push_back({signals.wake_fd(), POLLIN, 0});
    for (const Child& c : running) {
      if (c.out_fd >= 0) fds.push_back({c.out_fd, POLLIN, 0});
      if (c.err_fd >= 0) fds.push_back({c.err_fd, POLLIN, 0});
    }
    int wait_ms = -1;
    const auto now = Clock::now();
    for (const Child& c : running) {
      if (c.timed_out || c.deadline == Clock::time_point::max()) continue;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(c.deadline - now).count();
      const int ms = static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
      wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
    }
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR)
      throw Error("run_pool: poll failed: " + errno_text());

    if (const int signo = g_interrupt) {
      const std::size_t killed = running.size();
      reaper.kill_all();
      signals.restore();
      ::raise(signo);  // with the caller's disposition back, this normally ends the process
      throw Error("run_pool: interrupted by " + describe_signal(signo) + "; killed " + std::to_string(killed) +
                  " running jobs, " + std::to_string(count - next) + " not started");
    }
    signals.drain();

    for (Child& c : running) {
      read_pipe(c, c.out_fd, false, kMaxReadPerWake);
      read_pipe(c, c.err_fd, true, kMaxReadPerWake);
    }

    const auto checked = Clock::now();
    for (Child& c : running) {
      if (!c.timed_out && checked >= c.deadline) {
        ::kill(-c.pid, SIGKILL);
        c.timed_out = true;
      }
    }

    // A child has ended when its process has exited, not when its pipes close
    // (something it started may hold them open). WNOWAIT leaves it a zombie,
    // which keeps its process-group id from being reused while we kill the
    // group's stragglers.
    for (std::size_t k = 0; k < running.size();) {
      Child& c = running[k];
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
        ++k;
        continue;
      }
      ::kill(-c.pid, SIGKILL);
      // Everything the child wrote is in the pipes by now; take the rest.
      read_pipe(c, c.out_fd, false, SIZE_MAX);
      read_pipe(c, c.err_fd, true, SIZE_MAX);
      close_fd(c.out_fd);
      close_fd(c.err_fd);
      int status = 0;
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      JobResult r = classify(c, status, options.timeout_s);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      finish(std::move(r));
    }
  }
  return results;
}

}  // namespace mixtd::sim
