#include "mixtd/td/Tau.h"

#include <array>
#include <utility>

namespace mixtd::td {

namespace {
constexpr std::array<std::pair<TdType, std::string_view>, 4> kNames{{
    {TdType::None, "none"},
    {TdType::SvdFilter, "svd-filter"},
    {TdType::SvdSpatial, "svd-spatial"},
    {TdType::Cpd, "cpd"},
}};
}  // namespace

std::string_view to_string(TdType t) {
  for (const auto& [k, n] : kNames)
    if (k == t) return n;
  return "?";
}

std::optional<TdType> parse_td_type(std::string_view s) {
  for (const auto& [k, n] : kNames)
    if (n == s) return k;
  return std::nullopt;
}

std::string Tau::str() const {
  if (type == TdType::None) return "none";
  return std::string(to_string(type)) + " g1=" + std::to_string(g1) + " g2=" + std::to_string(g2) +
         " r=" + std::to_string(rank);
}

}  // namespace mixtd::td
