#include "mixtd/support/Error.h"

namespace mixtd {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string join_ints(const std::vector<long long>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(items[i]);
  }
  return out;
}

}  // namespace mixtd
