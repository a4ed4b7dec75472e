#include "mixtd/flow/Runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::flow {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string hex(std::uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string clock_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

// The step's commands, the contents of the user files and earlier
// artefacts it reads and the hash of the step before it.
std::uint64_t step_hash(const Step& s, std::uint64_t before, const fs::path& dir) {
  std::string key = hex(before) + '\0' + s.name;
  for (const auto& c : s.commands) {
    for (const auto& a : c.args) key += '\0' + a;
    key += "\0|" + c.stdout_file + "|" + c.tag;
  }
  for (const auto& in : s.inputs) key += '\0' + hex(hash_string(read_file(in)));
  for (const auto& p : s.products) {
    std::error_code ec;
    key += '\0' + p + '=' + (fs::is_regular_file(dir / p, ec) ? hex(hash_string(read_file(dir / p))) : "absent");
  }
  return hash_string(key);
}

fs::path stamp_path(const fs::path& dir, const std::string& step) { return dir / ".flow" / (step + ".json"); }

struct Stamp {
  bool present = false;
  std::uint64_t hash = 0;
  double seconds = 0;
  std::string summary;
};

Stamp read_stamp(const fs::path& dir, const std::string& step) {
  Stamp s;
  std::ifstream in(stamp_path(dir, step));
  if (!in) return s;
  try {
    const auto j = nlohmann::json::parse(in);
    s.hash = std::stoull(j.at("hash").get<std::string>(), nullptr, 16);
    s.seconds = j.at("seconds").get<double>();
    s.summary = j.at("summary").get<std::string>();
    s.present = true;
  } catch (const std::exception&) {
    s.present = false;  // a damaged stamp is no stamp: the step reruns
  }
  return s;
}

void write_stamp(const fs::path& dir, const std::string& step, std::uint64_t hash, double seconds,
                 const std::string& summary) {
  fs::create_directories(dir / ".flow");
  const nlohmann::json j = {{"hash", hex(hash)}, {"seconds", seconds}, {"summary", summary}};
  write_file_atomic(stamp_path(dir, step), j.dump(2) + "\n");
}

// The progress line of a running step: the step, a bar where its output
// says "N/M" (a search's generations, an epoch's batches), the time.
class Progress {
 public:
  Progress(std::ostream& out, bool tty, std::string head) : out_(out), tty_(tty), head_(std::move(head)) {}
  void line(const std::string& l) {
    static const std::regex count(R"((?:gen|epoch|batch|pre-filter)\s+(\d+)\s*/\s*(\d+))");
    std::smatch m;
    if (std::regex_search(l, m, count)) {
      done_ = std::stod(m[1]);
      total_ = std::stod(m[2]);
    }
    last_ = l;
    draw(false);
  }
  void draw(bool force) {
    if (!tty_) return;
    const auto now = Clock::now();
    if (!force && now - drawn_ < std::chrono::milliseconds(200)) return;
    drawn_ = now;
    const double t = std::chrono::duration<double>(now - start_).count();
    std::string s = "\r\033[K" + head_ + " ";
    if (total_ > 0) {
      const int w = 20, fill = static_cast<int>(w * std::min(1.0, done_ / total_));
      s += '[';
      s.append(static_cast<std::size_t>(fill), '#');
      s.append(static_cast<std::size_t>(w - fill), '.');
      s += "] ";
      s += std::to_string(static_cast<long>(done_));
      s += '/';
      s += std::to_string(static_cast<long>(total_));
      s += ' ';
      if (done_ > 0 && done_ < total_) {
        s += "ETA ";
        s += clock_text(t * (total_ - done_) / done_);
        s += ' ';
      }
    }
    s += clock_text(t);
    std::string tail = last_;
    if (tail.size() > 50) tail = tail.substr(0, 47) + "...";
    if (!tail.empty()) s += "  " + tail;
    out_ << s << std::flush;
  }
  void clear() {
    if (tty_) out_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& out_;
  bool tty_;
  std::string head_, last_;
  double done_ = 0, total_ = 0;
  Clock::time_point start_ = Clock::now(), drawn_{};
};

// Runs `exe args…` in `cwd`; stdout to `stdout_file` (written to a
// temporary and renamed on success) or, like stderr, to the log. Returns
// the exit status (128 + signal when killed).
int run_child(const std::string& exe, const Command& c, const std::vector<std::string>& extra, const fs::path& cwd,
              std::ofstream& log, Progress& progress) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) throw Error("flow: cannot create a pipe");
  const fs::path out_tmp = c.stdout_file.empty() ? fs::path() : cwd / (c.stdout_file + ".part");
  int out_fd = -1;
  if (!c.stdout_file.empty()) {
    fs::create_directories(out_tmp.parent_path());
    out_fd = ::open(out_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0) throw Error(out_tmp.string() + ": cannot write");
  }
  std::vector<std::string> args = c.args;
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("flow: cannot start a process");
  if (pid == 0) {
    ::dup2(pipe_fd[1], 2);
    ::dup2(out_fd >= 0 ? out_fd : pipe_fd[1], 1);
    ::close(pipe_fd[0]);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  if (out_fd >= 0) ::close(out_fd);
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    log.write(buf, n);
    log.flush();
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n' || buf[i] == '\r') {
        if (!pending.empty()) progress.line(pending);
        pending.clear();
      } else {
        pending += buf[i];
      }
    }
  }
  if (!pending.empty()) progress.line(pending);
  ::close(pipe_fd[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (!c.stdout_file.empty()) {
    if (rc == 0)
      fs::rename(out_tmp, cwd / c.stdout_file);
    else
      fs::remove(out_tmp);
  }
  return rc;
}

// The last line of the log that says what went wrong.
std::string last_error(const fs::path& log) {
  std::ifstream in(log);
  std::string line, err, last;
  while (std::getline(in, line)) {
    const auto cr = line.find_last_of('\r');
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (line.empty()) continue;
    last = line;
    if (line.find("error") != std::string::npos) err = line;
  }
  std::string l = err.empty() ? last : err;
  for (const std::string prefix : {"mixtd: error: ", "error: "})
    if (l.rfind(prefix, 0) == 0) l = l.substr(prefix.size());
  return l;
}

std::size_t index_of(const std::vector<Step>& steps, const std::string& name, const std::string& option) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].name == name) return i;
  std::string legal;
  for (const auto& s : steps) legal += (legal.empty() ? "" : ", ") + s.name;
  throw Error(option + " '" + name + "': no such step (legal: " + legal + ")");
}

}  // namespace

std::vector<StepOutcome> run_steps(const std::vector<Step>& steps, const RunOptions& o, std::ostream& out) {
  const std::size_t from = o.from.empty() ? 0 : index_of(steps, o.from, "--from");
  const std::size_t until = o.until.empty() ? steps.size() - 1 : index_of(steps, o.until, "--until");
  if (from > until) throw Error("--from " + o.from + " comes after --until " + o.until);
  for (const auto& f : o.force) index_of(steps, f, "--force");
  fs::create_directories(o.dir / ".flow");
  std::vector<StepOutcome> outcomes;
  std::uint64_t before = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    StepOutcome r;
    r.name = s.name;
    r.hash = step_hash(s, before, o.dir);
    before = r.hash;
    std::string head = "[";
    head += std::to_string(i + 1);
    head += '/';
    head += std::to_string(steps.size() + 1);
    head += "] ";
    head += s.name;
    const Stamp stamp = read_stamp(o.dir, s.name);
    const bool fresh = stamp.present && stamp.hash == r.hash;
    if (i > until) {
      r.status = fresh ? report::StepStatus::skipped_unchanged : report::StepStatus::not_run;
      if (fresh) r.summary = stamp.summary, r.seconds = stamp.seconds;
      outcomes.push_back(r);
      continue;
    }
    if (s.skipped) {
      r.summary = "skipped: " + s.skip_reason;
      out << head << ": " << r.summary << "\n";
      outcomes.push_back(r);
      continue;
    }
    if (i < from && !fresh)
      throw Error("step '" + s.name + "' " +
                  (stamp.present ? "is out of date (its inputs or settings changed)" : "has not run") +
                  "; run the flow without --from, or --from " + s.name);
    // Before --from: kept; from it on: rerun; without --from: kept when
    // unchanged unless forced.
    if (fresh && (i < from || (o.from.empty() && !o.force.count(s.name)))) {
      r.status = report::StepStatus::skipped_unchanged;
      r.summary = stamp.summary;
      r.seconds = stamp.seconds;
      out << head << ": unchanged, " << r.summary << "\n";
      outcomes.push_back(r);
      continue;
    }
    // Run it. A resumable step continues its own interrupted attempt (same
    // hash); anything else starts from an empty folder.
    fs::remove(stamp_path(o.dir, s.name));
    const fs::path attempt = o.dir / ".flow" / (s.name + ".attempt");
    bool resume = false;
    if (s.resumable) {
      std::ifstream in(attempt);
      std::string h;
      resume = (in >> h) && h == hex(r.hash) && !o.force.count(s.name);
    }
    if (!resume) fs::remove_all(o.dir / s.name);
    fs::create_directories(o.dir / s.name);
    write_file_atomic(attempt, hex(r.hash) + "\n");
    const fs::path log_path = o.dir / s.name / "log.txt";
    std::ofstream log(log_path, std::ios::app);
    const auto t0 = Clock::now();
    Progress progress(out, o.tty, head);
    progress.draw(true);
    for (const Command& c : s.commands) {
      if (c.in_process) {
        log << "$ (in mixtd flow) " << c.tag << "\n" << std::flush;
        try {
          c.in_process(o.dir);
        } catch (const std::exception& e) {
          progress.clear();
          throw Error("step '" + s.name + "': " + e.what());
        }
        continue;
      }
      std::vector<std::string> extra;
      if (resume && !c.resume_args.empty() && (c.resume_when.empty() || fs::exists(o.dir / c.resume_when)))
        extra = c.resume_args;
      log << "$ mixtd";
      for (const auto& a : c.args) log << " " << a;
      for (const auto& a : extra) log << " " << a;
      if (!c.stdout_file.empty()) log << " > " << c.stdout_file;
      log << "\n" << std::flush;
      const int rc = run_child(o.executable, c, extra, o.dir, log, progress);
      if (rc != 0) {
        progress.clear();
        log.close();
        throw Error("step '" + s.name + "' failed (exit " + std::to_string(rc) + "): " + last_error(log_path) +
                    " (log: " + log_path.string() + ")");
      }
    }
    progress.clear();
    try {
      if (s.check) s.check(o.dir);
      for (const auto& f : s.outputs)
        if (!fs::exists(o.dir / f)) throw Error("it did not write " + f);
      r.summary = s.summarise ? s.summarise(o.dir) : "done";
    } catch (const std::exception& e) {
      throw Error("step '" + s.name + "': " + e.what() + " (log: " + log_path.string() + ")");
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.status = report::StepStatus::ran;
    write_stamp(o.dir, s.name, r.hash, r.seconds, r.summary);
    fs::remove(attempt);
    out << head << ": " << r.summary << " (" << clock_text(r.seconds) << ")\n" << std::flush;
    outcomes.push_back(r);
  }
  return outcomes;
}

std::vector<StepOutcome> recorded_steps(const fs::path& dir) {
  std::vector<StepOutcome> out;
  for (const auto& n : step_names()) {
    const Stamp s = read_stamp(dir, n);
    StepOutcome r;
    r.name = n;
    if (s.present) {
      r.status = report::StepStatus::skipped_unchanged;
      r.seconds = s.seconds;
      r.summary = s.summary;
      r.hash = s.hash;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace mixtd::flow
