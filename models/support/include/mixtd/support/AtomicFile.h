// Atomic file output: nothing the user had is lost if we die mid-write.
//
// Data goes to a temporary file in the same directory, is flushed and fsync'd,
// and then renamed over the target (rename(2) is atomic within a filesystem).
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace mixtd {

// Writes `bytes` to `path` atomically. Throws mixtd::Error naming the path.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Streams into `path` atomically: `writer` fills the stream; if it throws,
// the temporary is removed and `path` is untouched.
void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);

// Whole file as bytes; throws mixtd::Error naming the path if unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace mixtd
