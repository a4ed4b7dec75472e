// The one exception type mixtd's libraries throw for bad input.
//
// Messages are written for the person who made the input: they name the file,
// line or layer, the offending value, and what would be legal. The command
// line prints `mixtd: error: <what()>` and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace mixtd {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error(message) unless `condition` holds.
inline void require(bool condition, const std::string& message) {
  if (!condition) throw Error(message);
}

// "a, b, c" — for listing legal values in messages.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
std::string join_ints(const std::vector<long long>& items, const std::string& sep = ", ");

}  // namespace mixtd
