// The search's append-only CSV files (private to mixtd::evolution).
//
// Rows are buffered during a generation and written, with an fsync, just
// before the checkpoint that records every file's size. A resumed run cuts
// each file back to the size its checkpoint recorded, so a kill between the
// two writes loses nothing and duplicates nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace mixtd::search::detail {

class OutputFiles {
 public:
  // `headers`: file name -> its first lines. Fresh run: creates every file
  // with its header. Resume: cuts every file to `sizes` (a file shorter than
  // its recorded size, or missing, is an error naming it).
  void open(const std::filesystem::path& dir, const std::map<std::string, std::string>& headers, bool resume,
            const std::map<std::string, std::uint64_t>& sizes);
  void append(const std::string& file, const std::string& text);
  // Writes the buffered rows (fsync'd).
  void flush();
  std::map<std::string, std::uint64_t> sizes() const { return sizes_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> pending_;
  std::map<std::string, std::uint64_t> sizes_;
};

}  // namespace mixtd::search::detail
