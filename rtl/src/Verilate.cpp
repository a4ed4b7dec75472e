#include "mixtd/rtl/Verilate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "mixtd/rtl/Cosim.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::rtl {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

std::string tail_lines(const fs::path& p, std::size_t lines) {
  std::ifstream in(p);
  std::vector<std::string> all;
  std::string l;
  while (std::getline(in, l)) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "  " + all[i] + "\n";
  return out;
}

fs::path cache_root(const fs::path& given, const std::string& name) {
  if (!given.empty()) return given;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "mixtd" / name;
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "mixtd" / name;
  return fs::temp_directory_path() / ("mixtd-" + name);
}

std::string pack_port_code(const std::string& port, std::int64_t words, const std::string& src) {
  if (words * 8 <= 64)
    return "{ std::uint64_t v = 0; for (int l = 0; l < " + std::to_string(words) +
           "; ++l) v |= std::uint64_t(std::uint8_t(" + src + "[l])) << (8 * l); m." + port + " = v; }";
  return "for (int j = 0; j < " + std::to_string((words + 3) / 4) +
         "; ++j) { std::uint32_t v = 0; for (int l = 0; l < 4 && 4 * j + l < " + std::to_string(words) +
         "; ++l) v |= std::uint32_t(std::uint8_t(" + src + "[4 * j + l])) << (8 * l); m." + port + "[j] = v; }";
}

std::string unpack_port_code(const std::string& port, std::int64_t words, const std::string& dst) {
  if (words * 8 <= 64)
    return "{ const std::uint64_t v = m." + port + "; for (int l = 0; l < " + std::to_string(words) + "; ++l) " + dst +
           ".push_back(std::int8_t((v >> (8 * l)) & 0xff)); }";
  return "for (int l = 0; l < " + std::to_string(words) + "; ++l) " + dst + ".push_back(std::int8_t((m." + port +
         "[l / 4] >> (8 * (l % 4))) & 0xff));";
}

VerilatedModel verilate(const std::vector<GeneratedFile>& files, const std::string& top, const std::string& driver,
                        const std::string& program, const fs::path& root, int jobs, bool trace,
                        const std::string& what) {
  // The key covers the RTL and the driver (so a newer mixtd with another
  // driver does not reuse an old model).
  std::ostringstream key;
  key << std::hex << hash_string(std::to_string(hash_files(files)) + driver);
  const std::string name = key.str() + (trace ? "-trace" : "");
  VerilatedModel m;
  m.dir = root / name;
  if (fs::exists(m.dir / "obj" / program)) return m;
  require_tool("verilator", "verilator");
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path tmp = root / (key.str() + ".tmp" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  GeneratedRtl g;
  g.files = files;
  write(g, tmp);
  std::ofstream(tmp / "driver.cpp") << driver;
  // -O1 for the model's code (Verilator's default is -Os): on the demo's
  // network the C++ compile took 32 s instead of 52 s and 20 frames ran in
  // 3.7 s instead of 4.0 s; -O0 compiled in 24 s but ran 28x slower
  // (docs/rtl.md, "Building the model"). The run-once constructors stay at -O0.
  const int rc = run_shell("cd " + shell_quote(tmp.string()) + " && verilator --cc --exe --build -j " +
                           std::to_string(std::max(1, jobs)) + " -Wno-fatal -Wno-lint -Wno-style" +
                           (trace ? " --trace" : "") + " --top-module " + top + " -f files.f driver.cpp -o " + program +
                           " --Mdir obj -MAKEFLAGS 'OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O1' > build.log 2>&1");
  if (rc != 0)
    throw Error(what + ": building the Verilated model failed (exit " + std::to_string(rc) + "); " +
                (tmp / "build.log").string() + " ends:\n" + tail_lines(tmp / "build.log", 25));
  std::error_code ec;
  fs::rename(tmp, m.dir, ec);
  if (ec) fs::remove_all(tmp);  // another process built it meanwhile
  m.built = true;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

}  // namespace mixtd::rtl
