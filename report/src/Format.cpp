#include "mixtd/report/Format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace mixtd::report {

std::string format_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";
  char b[64];
  const double a = std::fabs(v);
  const auto r = a >= 1e5 && a < 1e15 ? std::to_chars(b, b + sizeof b, std::round(v), std::chars_format::fixed, 0)
                                      : std::to_chars(b, b + sizeof b, v, std::chars_format::general, 6);
  const std::string s(b, r.ptr);
  return s == "-0" ? "0" : s;
}

std::string format_number(std::int64_t v) { return std::to_string(v); }

std::string format_or(const std::optional<double>& v, std::string_view absent) {
  if (!v || !std::isfinite(*v)) return std::string(absent);
  return format_number(*v);
}

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"')
      o += "\\\"";
    else if (c == '\\')
      o += "\\\\";
    else if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (c == '\r')
      o += "\\r";
    else if (u < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      o += b;
    } else
      o += c;
  }
  return o + "\"";
}

std::string html_escape(std::string_view s) {
  std::string o;
  for (const char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      case '\n':
      case '\t':
      case '\r':
        o += c;
        break;
      default:  // other control characters are not allowed in XML: U+FFFD
        o += static_cast<unsigned char>(c) < 0x20 ? std::string("\xEF\xBF\xBD") : std::string(1, c);
    }
  return o;
}

}  // namespace mixtd::report
