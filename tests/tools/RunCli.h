// Runs the real `mixtd` binary (MIXTD_EXE) as a user would and returns what
// they see: the exit code and stdout + stderr together.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

namespace mixtd::testing_cli {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

// `env` (VAR=value ..., may be empty) is added to the environment.
inline Result run_with_env(const std::string& env, const std::string& args) {
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(MIXTD_EXE) + " " + args + " 2>&1";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline Result run(const std::string& args) { return run_with_env("", args); }

inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace mixtd::testing_cli
