// Where a command will write, checked before it does any work (issue 24).
//
// A command calls these for every output path it was given, first thing, so a
// path that cannot be written is one `mixtd: error:` line naming the flag and
// the path, and nothing has been written or computed yet. They create nothing
// (a probe file or folder is made and removed at once to learn whether the
// folder that would hold the output takes new entries).
#pragma once

#include <filesystem>
#include <string>

namespace mixtd {

// `path` will be written as a file: it is not a folder, and either exists
// writable or can be created — its parent is an existing folder that takes
// new entries (file writers do not create folders).
// `what` names it in the message, e.g. "-o" or "--trace". Throws mixtd::Error.
void check_output_file(const std::filesystem::path& path, const std::string& what);

// `path` will be written as a folder (created, or written into / replaced if
// it exists): it is not a file, and it or its nearest existing ancestor takes
// new entries. Throws mixtd::Error.
void check_output_dir(const std::filesystem::path& path, const std::string& what);

}  // namespace mixtd
