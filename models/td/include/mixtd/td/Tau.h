// τ_j: the decomposition choice for one conv layer (SPEC "Decomposition").
//
//   type   none | svd-filter | svd-spatial | cpd
//   g1     output-channel groups (g1 | N); channel n is in group n mod g1
//   g2     input-channel groups  (g2 | C); channel c is in group c mod g2
//   rank   r, per chunk; 0 for none
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mixtd::td {

enum class TdType { None, SvdFilter, SvdSpatial, Cpd };

std::string_view to_string(TdType t);  // "none", "svd-filter", ...
std::optional<TdType> parse_td_type(std::string_view s);
inline constexpr std::string_view kTdTypeNames = "none, svd-filter, svd-spatial, cpd";

struct Tau {
  TdType type = TdType::None;
  std::int64_t g1 = 1;
  std::int64_t g2 = 1;
  std::int64_t rank = 0;

  bool decomposed() const { return type != TdType::None; }
  bool operator==(const Tau&) const = default;
  // "svd-filter g1=1 g2=4 r=32", "none"
  std::string str() const;
};

}  // namespace mixtd::td
