#include "mixtd/support/OutputPath.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "mixtd/support/Error.h"

namespace mixtd {

namespace fs = std::filesystem;

namespace {

std::string quote(const fs::path& p) { return p.empty() ? std::string("''") : p.string(); }

// The nearest ancestor of `path` (itself excluded) that exists; "." for a
// relative path with none.
fs::path existing_ancestor(const fs::path& path) {
  fs::path p = path.parent_path();
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

// Whether `dir` takes new entries: a probe folder is made and removed.
// access(2) is not enough: root passes it on /proc and read-only mounts.
std::string probe(const fs::path& dir) {
  std::string tmpl = (dir / ".mixtd-probe-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return std::strerror(errno);
  ::rmdir(tmpl.c_str());
  return {};
}

void check_parent(const fs::path& path, const std::string& what, const std::string& kind) {
  const fs::path anc = existing_ancestor(path);
  std::error_code ec;
  if (!fs::is_directory(anc, ec))
    throw Error(what + " " + quote(path) + ": " + anc.string() + " is a file, so no " + kind + " can be made under it");
  if (const std::string why = probe(anc); !why.empty())
    throw Error(what + " " + quote(path) + ": cannot create a " + kind + " in " + anc.string() + " (" + why + ")");
}

}  // namespace

void check_output_file(const fs::path& path, const std::string& what) {
  if (path.empty()) throw Error(what + ": an empty path; give a file to write");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // a name too long, a loop of links, ...
    throw Error(what + " " + quote(path) + ": " + ec.message());
  if (fs::is_directory(st))
    throw Error(what + " " + quote(path) + ": is a folder; a file name is needed (e.g. " + (path / "out").string() +
                ")");
  if (fs::exists(st)) {
    if (::access(path.c_str(), W_OK) != 0)
      throw Error(what + " " + quote(path) + ": exists and is not writable (" + std::strerror(errno) + ")");
    // It is replaced by a rename from a temporary beside it: the folder must take entries.
    if (fs::is_regular_file(st)) {
      const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
      if (const std::string why = probe(dir); !why.empty())
        throw Error(what + " " + quote(path) + ": cannot write in " + dir.string() + " (" + why + ")");
    }
    return;
  }
  // Writers of single files do not create folders: the parent must exist.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) {
    const fs::path anc = existing_ancestor(dir);
    if (!fs::is_directory(anc, ec))
      throw Error(what + " " + quote(path) + ": " + anc.string() + " is a file, so no file can be made under it");
    throw Error(what + " " + quote(path) + ": no such folder " + dir.string() + " (create it first)");
  }
  check_parent(path, what, "file");
}

void check_output_dir(const fs::path& path, const std::string& what) {
  if (path.empty()) throw Error(what + ": an empty path; give a folder to write");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // a name too long, a loop of links, ...
    throw Error(what + " " + quote(path) + ": " + ec.message());
  if (fs::exists(st) && !fs::is_directory(st))
    throw Error(what + " " + quote(path) + ": is a file; a folder is needed");
  if (fs::is_directory(st)) {
    if (const std::string why = probe(path); !why.empty())
      throw Error(what + " " + quote(path) + ": cannot write in this folder (" + why + ")");
    return;
  }
  check_parent(path, what, "folder");
}

}  // namespace mixtd
