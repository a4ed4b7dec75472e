#include "OutputFiles.h"

#include <fcntl.h>
#include <unistd.h>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

namespace {

void append_synced(const std::filesystem::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw Error(path.string() + ": cannot open for appending");
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      ::close(fd);
      throw Error(path.string() + ": write failed");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) throw Error(path.string() + ": fsync failed");
}

}  // namespace

void OutputFiles::open(const std::filesystem::path& dir, const std::map<std::string, std::string>& headers, bool resume,
                       const std::map<std::string, std::uint64_t>& sizes) {
  dir_ = dir;
  pending_.clear();
  sizes_.clear();
  for (const auto& [name, header] : headers) {
    const auto path = dir / name;
    if (!resume) {
      write_file_atomic(path, header);
      sizes_[name] = header.size();
      continue;
    }
    const auto it = sizes.find(name);
    require(it != sizes.end(), (dir / "checkpoint.json").string() + ": records no size for " + name);
    require(std::filesystem::exists(path), path.string() + ": missing; the checkpoint expects " +
                                               std::to_string(it->second) + " bytes (start afresh in another folder)");
    const auto have = std::filesystem::file_size(path);
    require(have >= it->second, path.string() + ": " + std::to_string(have) + " bytes, shorter than the " +
                                    std::to_string(it->second) + " the checkpoint recorded");
    // Rows written after the last checkpoint belong to the generation that
    // is about to be redone.
    std::filesystem::resize_file(path, it->second);
    sizes_[name] = it->second;
  }
}

void OutputFiles::append(const std::string& file, const std::string& text) { pending_[file] += text; }

void OutputFiles::flush() {
  for (auto& [name, text] : pending_) {
    if (text.empty()) continue;
    append_synced(dir_ / name, text);
    sizes_[name] += text.size();
    text.clear();
  }
}

}  // namespace mixtd::search::detail
