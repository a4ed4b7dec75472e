// Pieces of report.html: cells with numbers by format_number() (the JSON's
// rule), "not run" for a missing section, the sections themselves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mixtd/report/FlowReport.h"
#include "mixtd/report/Format.h"

namespace mixtd::report::html {

// What the page shows for a value the JSON has as null.
inline constexpr const char* kAbsent = "—";

inline std::string num_cell(const Num& v) { return "<td class=\"n\">" + format_or(v, kAbsent) + "</td>"; }
inline std::string num_cell(double v) { return num_cell(Num(v)); }  // exact match: never truncated to int64
inline std::string num_cell(std::int64_t v) { return "<td class=\"n\">" + format_number(v) + "</td>"; }
inline std::string text_cell(const std::string& s) { return "<td>" + html_escape(s) + "</td>"; }
inline std::string head_row(const std::vector<std::string>& names) {
  std::string s = "<tr>";
  for (const auto& n : names) s += "<th>" + html_escape(n) + "</th>";
  return s + "</tr>\n";
}
inline std::string heading(const std::string& id, const std::string& title) {
  return "<h2 id=\"" + id + "\">" + html_escape(title) + "</h2>\n";
}
inline std::string not_run() { return "<p class=\"missing\">not run</p>\n"; }
// (div and p rather than HTML5's figure and nav: libxml2's HTML parser, which
// the tests run, knows HTML4's elements.)
inline std::string figure(const std::string& svg) { return "<div class=\"figure\">\n" + svg + "</div>\n"; }

// The sections after the headline, in the page's order.
std::string layers_section(const FlowReport& r);
std::string search_section(const FlowReport& r);
std::string predictor_section(const FlowReport& r);
std::string agreement_section(const FlowReport& r);
std::string package_section(const FlowReport& r);

}  // namespace mixtd::report::html
