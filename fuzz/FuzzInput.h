// Shared by the libFuzzer targets (docs/reliability.md, "Fuzzing"): the
// input as text, or written to a file for the readers that take a path.
// A mixtd::Error is the right answer to bad input; anything else escaping
// a reader (another exception, a crash, a sanitizer report, a leak, a
// timeout) is a bug that libFuzzer reports.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace mixtd::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A folder of this process's own (libFuzzer's -fork/-jobs run several).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("mixtd-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes the input to scratch_dir()/name (replacing the last one) and
// returns its path.
inline std::filesystem::path write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const auto p = scratch_dir() / name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) __builtin_trap();  // the harness itself failed, not the reader
  return p;
}

}  // namespace mixtd::fuzz
