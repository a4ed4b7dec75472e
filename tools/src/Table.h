// Plain-text tables for reports a person reads: right-aligned numbers,
// a rule under the header, optional totals row.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace mixtd::cli {

class Table {
 public:
  enum class Align { Left, Right };
  void add_column(std::string title, Align align = Align::Right);
  void add_row(std::vector<std::string> cells);
  void add_rule();  // a separator line before the next row (e.g. totals)
  void print(std::ostream& out) const;

 private:
  struct Column {
    std::string title;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // empty row = rule
};

// 11689512 -> "11,689,512"
std::string with_commas(std::int64_t v);
// Fixed-point with `digits` decimals.
std::string fixed(double v, int digits);

}  // namespace mixtd::cli
