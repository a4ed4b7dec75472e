#include "Table.h"

#include <algorithm>
#include <cstdio>

namespace mixtd::cli {

namespace {
// Columns a terminal shows for UTF-8 text (τ, ±, ρ are one column, two bytes).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

void Table::add_column(std::string title, Align align) { columns_.push_back({std::move(title), align}); }

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void Table::add_rule() { rows_.emplace_back(); }

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = display_width(columns_[c].title);
    for (const auto& r : rows_)
      if (!r.empty()) width[c] = std::max(width[c], display_width(r[c]));
  }
  auto cell = [&](const std::string& s, std::size_t c) {
    const std::string pad(width[c] - display_width(s), ' ');
    return columns_[c].align == Align::Right ? pad + s : s + pad;
  };
  auto rule = [&] {
    for (std::size_t c = 0; c < columns_.size(); ++c) out << (c ? "  " : "") << std::string(width[c], '-');
    out << '\n';
  };
  std::string header;
  for (std::size_t c = 0; c < columns_.size(); ++c) header += (c ? "  " : "") + cell(columns_[c].title, c);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out << header << '\n';
  rule();
  for (const auto& r : rows_) {
    if (r.empty()) {
      rule();
      continue;
    }
    std::string line;
    for (std::size_t c = 0; c < columns_.size(); ++c) line += (c ? "  " : "") + cell(r[c], c);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

std::string with_commas(std::int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace mixtd::cli
