#include "mixtd/support/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "mixtd/support/Error.h"

namespace mixtd {
namespace fs = std::filesystem;

namespace {

fs::path temp_path_for(const fs::path& path) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  return tmp;
}

void fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, const std::function<void(std::ostream&)>& writer) {
  const fs::path tmp = temp_path_for(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error("cannot write '" + path.string() + "': " + std::strerror(errno));
    }
    try {
      writer(out);
      out.flush();
      if (!out) throw Error("write to '" + path.string() + "' failed (disk full?)");
    } catch (...) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
  }
  fsync_path(tmp);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    // The reason first: removing the temporary reuses (and clears) `ec`.
    std::error_code isdir;
    const std::string why =
        fs::is_directory(path, isdir) ? "it is a directory (remove it or write elsewhere)" : ec.message();
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error("cannot replace '" + path.string() + "': " + why);
  }
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  write_file_atomic(path,
                    [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error("cannot read '" + path.string() + "': it is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path.string() + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mixtd
