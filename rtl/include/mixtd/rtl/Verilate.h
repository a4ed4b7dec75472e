// What co-simulating generated RTL needs whatever the test bench: building
// a Verilated model of generated files plus a generated C++ driver, cached
// by their hash, and the driver code that moves int8 words in and out of a
// Verilated port. rtl::cosimulate (the bare top) and hls::simulate_kernel
// (the Vitis kernel around it) both use it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mixtd/rtl/Generator.h"

namespace mixtd::rtl {

// `s` quoted for /bin/sh.
std::string shell_quote(const std::string& s);
// Runs `cmd` with /bin/sh; its exit status (-1 if it could not run).
int run_shell(const std::string& cmd);
// The last `lines` lines of a text file, each indented by two spaces.
std::string tail_lines(const std::filesystem::path& p, std::size_t lines);

// `given`, else $XDG_CACHE_HOME/mixtd/<name>, ~/.cache/mixtd/<name> or
// the temporary folder's mixtd-<name>.
std::filesystem::path cache_root(const std::filesystem::path& given, const std::string& name);

// A C++ statement that puts `words` int8 words from `src[0..]` (lane 0 low)
// into the Verilated port `m.<port>` of words·8 bits (a plain integer up to
// 64 bits, a VlWide beyond), and one that appends them from the port to the
// vector `dst`.
std::string pack_port_code(const std::string& port, std::int64_t words, const std::string& src);
std::string unpack_port_code(const std::string& port, std::int64_t words, const std::string& dst);

struct VerilatedModel {
  std::filesystem::path dir;  // the model's folder; the program is dir/obj/<program>
  bool built = false;         // false: found in the cache
  double seconds = 0;         // building it
};

// Builds (or finds under `root`) the Verilated model of `files` with top
// module `top` and `driver` (its main()) as the program `program`. Built in
// a private folder and renamed into place, so an interrupted or concurrent
// build never leaves a half-built model under the hash. `what` prefixes the
// error messages ("cosim").
VerilatedModel verilate(const std::vector<GeneratedFile>& files, const std::string& top, const std::string& driver,
                        const std::string& program, const std::filesystem::path& root, int jobs, bool trace,
                        const std::string& what);

}  // namespace mixtd::rtl
